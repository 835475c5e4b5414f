"""A new user-dictionary word costs the documents that hold it (issue 24 item 2): after a wiki article with a new
compound-noun title is ingested, or removed, the index re-analyses exactly the stored nodes whose texts hold the
word, and then holds what a full rebuild holds — every term of every field at the same positions, and the same hits."""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path
from urllib.parse import quote

import pytest
from conftest import DATA

from kb.fold import fold
from kb.pipeline import ingest_sources, remove_sources
from kb.search import Searcher, userdict
from kb.search import index as index_module
from kb.search.index import STATE_FILE, TRANSITION, index_dir, indexed_scopes, open_index, update_index
from kb.splitter import JapaneseSplitter
from kb.store import Store

pytestmark = pytest.mark.slow  # three ingests and two full index builds of data/

WORD = "代替コスト"  # in the texts of a few nodes of data/; Sudachi cuts it in two: a compound noun
QUERIES = [WORD, "代替", "コスト", "唱える", "呪文を唱える", "マナ・コスト", "601.2f", "予示", "状況起因処理"]


def _article(folder: Path, title: str) -> Path:
    """The sample MTG Wiki article retitled ``title`` (every 唱える of it)."""
    page = (DATA / "mtgwiki" / "唱える.html").read_text(encoding="utf-8")
    path = folder / f"{title}.html"
    path.write_text(page.replace("唱える", title).replace(quote("唱える"), quote(title)), encoding="utf-8")
    return path


def _everything(store: Store) -> dict[str, dict[str, dict[str, list[int]]]]:
    """field → node key → term → positions (or [] for a field without positions), read back from every scope."""
    out: dict[str, dict[str, dict[str, list[int]]]] = defaultdict(lambda: defaultdict(dict))
    for version, lang in indexed_scopes(store):
        ix = open_index(store, version, lang)
        schema = ix.schema  # read from the index's table of contents on every access: once per scope
        with ix.searcher() as searcher:
            reader = searcher.reader()
            keys = {docnum: stored["key"] for docnum, stored in reader.iter_docs()}
            for field, term in reader.all_terms():
                if field in ("key", "hash"):
                    continue
                matcher = reader.postings(field, term)
                while matcher.is_active():
                    if matcher.id() in keys:
                        positions = (list(matcher.value_as("positions")) if schema[field].format.supports("positions")
                                     else [])
                        out[field][keys[matcher.id()]][term.decode() if isinstance(term, bytes) else term] = positions
                    matcher.next()
    return {field: dict(by_key) for field, by_key in out.items()}


def _hits(store: Store) -> dict[str, set[str]]:
    """The hits of each query (as a set: scores count deleted documents until Whoosh merges segments)."""
    with Searcher(store) as searcher:
        return {q: {h.id for h in searcher.search(q, limit=300)} for q in QUERIES}


def _holding(store: Store, word: str, *, but: str) -> int:
    """The stored nodes (but the article ``but``) with ``word`` in a text the index analyses."""
    count = 0
    for node in store.nodes():
        texts = [node.title, *node.aliases, node.english, node.text, *node.examples, node.meta.get("reading")]
        if node.id != but and word in fold("\n".join(x for x in texts if x)):
            count += 1
    return count


def _rebuilt(store: Store) -> tuple[dict, dict[str, set[str]]]:
    update_index(store, rebuild=True)
    return _everything(store), _hits(store)


def test_a_new_compound_title_re_analyses_only_the_nodes_holding_it_and_the_index_is_a_rebuild_s(tmp_path):
    sources = tmp_path / "sources"
    shutil.copytree(DATA, sources)
    with Store.open(tmp_path / "kb") as store:
        ingest_sources(store, [str(sources)])
        before = userdict.prepare(store, JapaneseSplitter()).dictionary_id
        assert WORD not in (userdict.lexicon_words(store, before) or {})
        holding = _holding(store, WORD, but="")
        assert 3 <= holding < sum(1 for _ in store.nodes()) // 5  # a few nodes, far from all

        article = _article(sources / "mtgwiki", WORD)
        report = ingest_sources(store, [str(article)])
        after = userdict.prepare(store, JapaneseSplitter()).dictionary_id
        assert after != before and WORD in (userdict.lexicon_words(store, after) or {})
        assert report.index.notice is None  # not a rebuild
        assert report.index.reanalysed == _holding(store, WORD, but=f"wiki:{WORD}") == holding
        state = json.loads((index_dir(store) / STATE_FILE).read_text(encoding="utf-8"))
        assert state["identity"]["user dictionary"] == after and TRANSITION not in state
        incremental, hits = _everything(store), _hits(store)
        assert f"wiki:{WORD}" in hits[WORD] and len(hits[WORD]) > 1
        assert _rebuilt(store) == (incremental, hits)

        removed = remove_sources(store, [str(article)])
        assert userdict.prepare(store, JapaneseSplitter()).dictionary_id == before
        assert removed.index.notice is None and removed.index.reanalysed == holding
        incremental, hits = _everything(store), _hits(store)
        assert f"wiki:{WORD}" not in hits[WORD]
        assert _rebuilt(store) == (incremental, hits)


def test_a_move_to_another_dictionary_cut_short_or_without_the_old_words_rebuilds_the_index(tmp_path, monkeypatch):
    """The index in the middle of its move (killed after some scopes) is in neither dictionary's analysis, and one
    whose old dictionary's words are gone cannot be diffed: both are rebuilt whole, with a notice."""
    sources = tmp_path / "sources"
    shutil.copytree(DATA, sources)
    with Store.open(tmp_path / "kb") as store:
        ingest_sources(store, [str(sources)])
        expected = _rebuilt(store)
        real = index_module._update_scope
        calls = []

        def killed_after_one(*args, **kwargs):
            if calls:
                raise KeyboardInterrupt
            calls.append(args)
            return real(*args, **kwargs)

        monkeypatch.setattr(index_module, "_update_scope", killed_after_one)
        article = _article(sources / "mtgwiki", WORD)
        with pytest.raises(Exception, match="interrupted while updating the search index"):
            ingest_sources(store, [str(article)])
        monkeypatch.setattr(index_module, "_update_scope", real)
        state = json.loads((index_dir(store) / STATE_FILE).read_text(encoding="utf-8"))
        assert state[TRANSITION] == userdict.prepare(store, JapaneseSplitter()).dictionary_id
        healed = update_index(store)
        assert "did not finish" in healed.notice
        assert (_everything(store), _hits(store)) == _rebuilt(store)

        remove_sources(store, [str(article)])  # back to the first dictionary, diffed (its words are known)
        assert (_everything(store), _hits(store)) == expected
        article = _article(sources / "mtgwiki", WORD)
        for lexicon in (store.kb_dir / userdict.FOLDER).glob(f"*{userdict.LEXICON_SUFFIX}"):
            lexicon.unlink()  # an index of an older kb, or a lexicon lost
        report = ingest_sources(store, [str(article)])
        assert "user dictionary" in report.index.notice and report.index.reanalysed == 0


def _shard(path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    return json.loads(text[text.index(",") + 1:].rstrip().removesuffix(");"))


def _static_search(site: Path) -> dict[str, dict]:
    """A site's static search with documents named by (url, language) instead of ids (a full build numbers them in
    rank order, an incremental one gives a new document the next id): documents, postings of terms and bigrams (in
    whatever shards), whole-query names, the typo lexicon, the vocabulary."""
    def merged(prefix: str) -> dict:
        return {k: v for path in (site / "search" / prefix).iterdir() for k, v in _shard(path).items()}

    meta = _shard(site / "search" / "meta.js")
    per_chunk = meta["c"]
    docs = {int(p.stem) * per_chunk + row: tuple(doc) for p in (site / "search" / "d").iterdir()
            for row, doc in enumerate(_shard(p)) if doc}

    def named(coded: list[int]) -> list[tuple]:
        ids, at = [], 0
        for gap in coded[::2]:
            at += gap
            ids.append(at)
        return sorted((docs[i][0], docs[i][4], w) for i, w in zip(ids, coded[1::2], strict=True))

    names = {form: sorted(docs[i][:1] + docs[i][4:] for i in value) for form, value in merged("n").items()}
    postings = {t: named(c) for t, c in merged("p").items()}
    grams = {t: named(c) for t, c in merged("g").items()}
    found = {(url, lang) for table in (postings, grams) for hits in table.values() for url, lang, _ in hits}
    # the documents a search can find (a chunk whose every document went away keeps its file, never read)
    return {"docs": {(d[0], d[4]): d for d in docs.values() if (d[0], d[4]) in found}, "p": postings, "g": grams,
            "n": {f: v for f, v in names.items() if v}, "l": _shard(site / "search" / "l.js"),
            "v": merged("v") if meta["vb"] else meta["v"]}  # the vocabulary: in buckets, or in meta.js when small


def _same_static_search(incremental: Path, full: Path, word: str) -> None:
    """The static search of ``incremental`` is the full build's (:func:`_static_search`) but for its vocabulary, which
    only grows between full builds, and where a surface read as two words in two texts (支払い: 支払い, 支払う) maps
    to the term of the text analysed last: it has every surface of the full build, each surface holding ``word`` maps
    to the same term, and a surface only it has does not hold ``word``."""
    grown, fresh = _static_search(incremental), _static_search(full)
    assert {k: v for k, v in grown.items() if k != "v"} == {k: v for k, v in fresh.items() if k != "v"}
    assert fresh["v"].keys() <= grown["v"].keys()
    assert {s: grown["v"][s] for s in fresh["v"] if word in s} == {s: t for s, t in fresh["v"].items() if word in s}
    assert not [s for s in grown["v"].keys() - fresh["v"].keys() if word in s]


def test_a_new_compound_title_re_exports_only_the_static_search_documents_holding_it(tmp_path, monkeypatch):
    """The site's static search after a new user dictionary (a new compound title, then its removal) analyses again
    only the documents whose texts hold the word — no full export, no notice — and is the full build's."""
    from kb.site import build_site, search_export

    analysed: list[tuple[str, str]] = []
    real = search_export.analyse
    monkeypatch.setattr(search_export, "analyse",
                        lambda splitter, doc: analysed.append((doc.url, doc.lang)) or real(splitter, doc))
    sources = tmp_path / "sources"
    shutil.copytree(DATA, sources)
    site = tmp_path / "site"
    with Store.open(tmp_path / "kb") as store:
        ingest_sources(store, [str(sources)], index=False)
        build_site(store, site)
        holding = {doc for doc, text in _static_texts(store).items() if WORD in fold(text)}
        assert 3 <= len(holding) < len(analysed) // 5  # a few documents, far from all
        article = _article(sources / "mtgwiki", WORD)
        ingest_sources(store, [str(article)], index=False)
        analysed.clear()
        report = build_site(store, site)
        assert report.notices == []
        new = {(url, lang) for url, lang in analysed if quote(WORD) in url or WORD in url}
        assert new and set(analysed) - new == holding and len(analysed) == len(set(analysed))
        build_site(store, tmp_path / "full")
        _same_static_search(site, tmp_path / "full", WORD)

        remove_sources(store, [str(article)])
        analysed.clear()
        report = build_site(store, site)
        assert report.notices == [] and set(analysed) == holding
        shutil.rmtree(tmp_path / "full")
        build_site(store, tmp_path / "full")
        _same_static_search(site, tmp_path / "full", WORD)

        for lexicon in (store.kb_dir / userdict.FOLDER).glob(f"*{userdict.LEXICON_SUFFIX}"):
            lexicon.unlink()  # the words of the dictionary the site was built with are not known: everything again
        ingest_sources(store, [str(_article(sources / "mtgwiki", WORD))], index=False)
        analysed.clear()
        [notice] = build_site(store, site).notices
        assert notice.startswith("static search: exporting every document again (user dictionary ")
        assert len(analysed) > 5 * len(holding)


def _static_texts(store: Store) -> dict[tuple[str, str], str]:
    """(url, language) → title and body of each static search document of the store's site (as the export analyses them)."""
    from kb.search import userdict
    from kb.site import search_export
    from kb.site.gather import gather_site

    site = gather_site(store, userdict.prepare(store, JapaneseSplitter()))
    return {(doc.url, doc.lang): doc.title + "\n" + doc.body for entry in search_export.search_entries(site)
            for doc in search_export.search_doc(entry)}
