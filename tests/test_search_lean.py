"""The static search export of an incremental build without whole-site work (kb/site/search_export.py,
kb/site/search_cache.py): a long article's sections are cut again only when its stored content hash changes
(:class:`SectionCache`), a chunk's documents are made again only when its inputs' key changes (:func:`_inputs_digest`:
the stored content hashes, not the texts), the name shards only when theirs does (:func:`_names_key`). Each key
changes with each part of what it covers; and on real builds — a long article's sections added, removed and
renamed, an article added, one removed — the search files are a full export's with the same document ids (the
vocabulary, which only grows between full builds, aside; the delta merged in, as the browser merges it)."""

from __future__ import annotations

import marshal
import shutil
from pathlib import Path
from urllib.parse import quote

import pytest
from search_files import same_built_file
from test_site_per_page import ARTICLES, write_wiki

from kb.model import ARTICLE, GLOSSARY, RULE, Node
from kb.pipeline import ingest_sources, remove_sources
from kb.search.names import NameTable
from kb.site import build_site
from kb.site.records import Entry, Link, SiteData, StoredHtml
from kb.site.search_cache import SectionCache
from kb.site.search_export import _entry, _inputs_digest, _Item, _items, _names_key, _ordered, search_entries
from kb.store import Store

MANIFEST = Path(".kb-build") / "manifest.marshal"
STAMP = Path(".kb-build") / "stamp.marshal"
FILLER = "この節では呪文を唱える手順と、そのときに支払うマナ・コストの決め方を説明する。"  # 39 characters


def _long_article(title: str, sections: list[tuple[str, str]]) -> str:
    """An MTG Wiki page of ``sections`` (heading, anchor): each with its own words and enough text that the article
    is long (:data:`kb.search.sections.LONG_ARTICLE_CHARS`)."""
    body = "".join(f'<h2><span class="mw-headline" id="{quote(anchor)}">{heading}</span></h2>'
                   f"<p>{heading}の固有語{heading}語。{FILLER * 20}</p>" for heading, anchor in sections)
    return (f"<html><head><title>{title} - MTG Wiki</title></head><body>"
            f'<h1 id="firstHeading" class="firstHeading">{title}</h1><div id="bodyContent"><div id="mw-content-text">'
            f"<p><b>{title}</b>は長い記事。(CR:601.2f)</p>{body}</div></div></body></html>")


# -- the keys ---------------------------------------------------------------------------------------------------------
def _node(text: str = "本文。", **fields) -> Node:
    return Node(fields.pop("id", "wiki:記事"), fields.pop("kind", ARTICLE), fields.pop("lang", "ja"), text=text,
                title=fields.pop("title", "記事"), **fields)


def _long_node(*heads: tuple[str, str], text_end: str = "") -> Node:
    """A long article node cut at ``heads`` (title, anchor), each section 1,000 characters."""
    text, tree = "導入。", []
    for title, anchor in heads:
        tree.append({"title": title, "anchor": anchor, "start": len(text), "blocks": [], "sections": []})
        text += title + "\n" + "節の本文。" * 200
    return _node(text + text_end, meta={"sections": tree})


def test_the_section_cache_cuts_an_article_once_per_content_hash_and_keeps_only_those_asked():
    node = _long_node(("A", "a"), ("B", "b"))
    cache = SectionCache({})
    cuts = cache.of(node, "h1")
    assert cuts == ("a", "b")  # the sections' anchors
    # keyed by the content hash alone: another node under the same hash is not cut again (the store's hash covers
    # the text and meta sections() reads), and a new hash is
    other = _long_node(("C", "c"), ("D", "d"))
    assert cache.of(other, "h1") == cuts
    assert cache.of(other, "h2") == ("c", "d")
    assert SectionCache(cache.state).of(other, "h1") == cuts  # the next build's cache: from this one's state
    kept = SectionCache(cache.state)
    kept.of(other, "h2")
    assert set(kept.state) == {"h2"}  # an article no build asked for is not kept
    short = _node("短い。")
    assert cache.of(short, "h3") == () and "h3" not in cache.state  # never cut: nothing kept
    assert cache.of(node, None) == cuts  # no hash known: cut, not kept
    assert None not in cache.state


def test_items_give_the_entries_split_node_gives():
    """search_entries (the items made) is the lead and each section as kb.search.sections.split_node cuts them."""
    from kb.search.sections import split_node

    node = _long_node(("A", "a x"), ("B", "b"))
    entry = Entry(node.id, ARTICLE, "wiki/記事.html", "記事", {"ja": node})
    site = SiteData(others={node.id: entry})
    lead, parts = split_node(node)
    made = search_entries(site)
    assert [e.nodes["ja"] for e in made] == [lead, *(part for _, part in parts)]
    assert [e.url for e in made] == ["wiki/記事.html", "wiki/記事.html#a_x", "wiki/記事.html#b"]
    assert [e.label for e in made] == ["記事", "記事 § A", "記事 § B"]


def _digest_of(item: _Item) -> bytes:
    return _inputs_digest([item, None])


def test_a_chunk_key_changes_with_each_part_of_what_it_covers():
    node = _long_node(("A", "a"), ("B", "b"))
    entry = Entry(node.id, ARTICLE, "wiki/記事.html", "記事", {"ja": node})
    cuts = SectionCache({}).of(node, None)
    assert cuts == ("a", "b")
    hashed = _Item(entry, entry.url, -1, cuts, (("ja", "h1"),))
    plain = _Item(entry, entry.url, -1, cuts, None)  # no stored hash: by the lead's made node
    entry_with = {name: Entry(node.id, **{"kind": ARTICLE, "url": entry.url, "label": "記事", "nodes": {"ja": node},
                                          "number": None, name: value})
                  for name, value in (("label", "別名"), ("kind", GLOSSARY), ("number", "601.2"))}
    variants = [hashed, hashed._replace(url="wiki/別.html"), hashed._replace(part=0),
                hashed._replace(hashes=(("ja", "h2"),)), hashed._replace(hashes=(("en", "h1"),)),
                *(hashed._replace(entry=e) for e in entry_with.values()), plain,
                plain._replace(part=0, url=f"{entry.url}#a"), plain._replace(part=1, url=f"{entry.url}#a")]
    for field, value in (("text", "前" + node.text[1:]), ("title", "題"), ("aliases", ("別名",)), ("english", "Article"),
                         ("examples", ("例。",)), ("lang", "en")):
        changed = Node(**{**node.__dict__, field: value})
        variants.append(plain._replace(entry=Entry(node.id, ARTICLE, entry.url, "記事", {changed.lang: changed})))
    moved = Node(**{**node.__dict__, "meta": {"sections": [{**s, "start": s["start"] + 9} for s in node.meta["sections"]]}})
    variants.append(plain._replace(entry=Entry(node.id, ARTICLE, entry.url, "記事", {"ja": moved})))  # its sections
    digests = [_digest_of(item) for item in variants]
    assert len(set(digests)) == len(digests)
    assert _digest_of(hashed) == _digest_of(hashed._replace(entry=Entry(node.id, ARTICLE, entry.url, "記事",
                                                                         {"ja": _node("全く別の本文。")})))  # by hash


def _names_site(**change) -> tuple[SiteData, dict[str, int]]:
    rule = Node("cr:601.2", RULE, "ja", version="20231117.0", text=change.get("rule_text", "呪文を唱える。"),
                number=change.get("number", "601.2"), title=None)
    term = Node("gl:唱える", GLOSSARY, "ja", version="20231117.0", text="唱えること。", title="唱える",
                english=change.get("english", "Cast"), aliases=change.get("aliases", ()))
    article = Node("wiki:記事", ARTICLE, "ja", text=change.get("article_text", "記事の本文。"), title="記事")
    links = {"ja": [Link(0, 3, change.get("target", "rules/601.html#601.2"), "rule")]}
    rules = {"601.2": Entry(rule.id, RULE, "rules/601.html#601.2", "601.2", {"ja": rule}, number="601.2")}
    terms = {term.id: Entry(term.id, GLOSSARY, "glossary/唱える.html", "唱える", {"ja": term}, links)}
    others = {article.id: Entry(article.id, ARTICLE, "wiki/記事.html", "記事", {"ja": article})}
    site = SiteData(rules=rules, terms=terms, others=others, names=NameTable(),
                    names_record={"key": change.get("table", "t1")},
                    html=StoredHtml({("ja", article.id): change.get("article_hash", "h1")}, lambda key: None))
    ids = {"rules/601.html#601.2": 0, "glossary/唱える.html": 1, "wiki/記事.html": change.get("article_id", 2)}
    if "term_id" in change:
        ids["glossary/唱える.html"] = change["term_id"]
    return site, ids


def test_the_name_shards_key_changes_with_each_part_of_what_it_covers_and_not_with_an_article():
    base = _names_key(*_names_site())
    assert base is not None
    changes = [{"table": "t2"}, {"rule_text": "別の文。"}, {"number": "601.3"}, {"english": "Casting"},
               {"aliases": ("唱え",)}, {"target": "rules/601.html#601.3"}, {"term_id": 5}]
    keys = [_names_key(*_names_site(**change)) for change in changes]
    assert base not in keys and len(set(keys)) == len(keys)
    for article in ({"article_text": "変わった本文。"}, {"article_hash": "h9"}, {"article_id": 7}):
        assert _names_key(*_names_site(**article)) == base
    site, ids = _names_site()
    site.names_record = {}
    assert _names_key(site, ids) is None  # no record of the table's inputs: no key (made again)


def test_items_are_ordered_as_the_search_numbers_them_and_made_as_search_entries():
    nodes = [_node(id=f"wiki:{t}", title=t) for t in ("b", "a", "c")]
    site = SiteData(others={n.id: Entry(n.id, ARTICLE, f"wiki/{n.title}.html", n.title or "", {"ja": n})
                            for n in nodes})
    assert [i.url for i in _ordered(_items(site, SectionCache({})))] == ["wiki/a.html", "wiki/b.html", "wiki/c.html"]
    assert [_entry(i, {}) for i in _ordered(_items(site, SectionCache({})))] == search_entries(site)


# -- real builds ------------------------------------------------------------------------------------------------------
def _state(site: Path) -> dict:
    return marshal.loads((site / MANIFEST).read_bytes())


def _reference(store: Store, site: Path, ref: Path) -> None:
    """Build into ``ref`` (a copy of ``site``) with a full static search export that numbers the documents as
    ``site`` does (its state's ids alone kept): what the incremental build's search files must be."""
    shutil.rmtree(ref, ignore_errors=True)
    shutil.copytree(site, ref)
    manifest = _state(ref)
    manifest["search"] = {key: manifest["search"][key] for key in ("ids", "identity")}
    (ref / MANIFEST).write_bytes(marshal.dumps(manifest))
    (ref / STAMP).unlink()  # else a build with the same inputs does nothing
    build_site(store, ref)
    assert "keys" in _state(ref)["search"]


def _assert_search_as_full(store: Store, site: Path, ref: Path) -> None:
    _reference(store, site, ref)
    compared = 0
    for path in sorted((ref / "search").rglob("*.js")):
        rel = path.relative_to(ref)
        if rel.parts[1] != "v":  # the vocabulary only grows between full builds (compared in meta.js, as a superset)
            assert same_built_file(path, site / rel, rel), rel
            compared += 1
    assert compared > 10
    state = _state(site)["search"]
    assert state["sections"] and all(isinstance(k, str) for k in state["sections"])


@pytest.mark.slow  # six builds and their references of five short articles, two long ones and the sample CR
def test_the_search_files_are_a_full_exports_through_sections_added_removed_renamed_and_articles_added_removed(
        tmp_path):
    paths = write_wiki(tmp_path / "wiki", ARTICLES)
    long = tmp_path / "wiki" / "long.html"
    long.write_text(_long_article("長い記事", [("定義", "定義"), ("歴史", "歴史"), ("注意点", "注意点")]), encoding="utf-8")
    site, ref = tmp_path / "site", tmp_path / "ref"
    cr = Path(__file__).resolve().parent.parent / "data" / "JPN_CR_20231117_0.txt"
    with Store.open(tmp_path / "kb") as store:
        assert not ingest_sources(store, [str(tmp_path / "wiki"), str(cr)], index=False).failed
        build_site(store, site)
        first = _state(site)["search"]
        assert list(first["sections"].values()) == [("定義", "歴史", "注意点")]

        def change(path: Path, html: str) -> None:
            path.write_text(html, encoding="utf-8")
            assert not ingest_sources(store, [str(path)], index=False).failed
            build_site(store, site)
            _assert_search_as_full(store, site, ref)

        # a section added, one removed, one renamed (title and anchor), one's text changed
        change(long, _long_article("長い記事", [("定義", "定義"), ("新しい節", "新しい節"), ("注意すべき点", "注意すべき点"),
                                               ("関連", "関連")]))
        assert list(_state(site)["search"]["sections"].values()) == [("定義", "新しい節", "注意すべき点", "関連")]
        change(long, _long_article("長い記事", [("定義", "定義"), ("改名した節", "新しい節")]))  # renamed, anchor kept
        change(paths["引用記事"], (tmp_path / "wiki" / "long.html").read_text(encoding="utf-8").replace(
            "長い記事", "引用記事"))  # a short article becomes long
        added = tmp_path / "wiki" / "added.html"
        change(added, _long_article("追加記事", [("概要", "概要"), ("詳細", "詳細")]))
        assert len(_state(site)["search"]["sections"]) == 3
        assert not remove_sources(store, [str(long)]).failed
        build_site(store, site)
        _assert_search_as_full(store, site, ref)
        assert len(_state(site)["search"]["sections"]) == 2  # the removed article's sections are not kept


@pytest.mark.slow  # three builds of five short articles, two long ones and the sample CR
def test_an_incremental_build_cuts_and_makes_only_the_changed_article(tmp_path, monkeypatch):
    """The unchanged long article is not cut again (its anchors come from the state), and only the documents of the
    changed article's chunk are made; the name shards are not made again for an article whose names are the same."""
    from kb.site import search_cache, search_export

    write_wiki(tmp_path / "wiki", ARTICLES)
    pages = {name: tmp_path / "wiki" / f"{name}.html" for name in ("one", "two")}
    for name, title in (("one", "長い記事"), ("two", "別の長い記事")):
        pages[name].write_text(_long_article(title, [("定義", "定義"), ("歴史", "歴史")]), encoding="utf-8")
    site = tmp_path / "site"
    with Store.open(tmp_path / "kb") as store:
        assert not ingest_sources(store, [str(tmp_path / "wiki")], index=False).failed
        build_site(store, site)
        cut, made, named = [], [], []
        real_sections, real_doc, real_names = search_cache.sections, search_export.search_doc, search_export._names
        monkeypatch.setattr(search_cache, "sections", lambda node: cut.append(node.id) or real_sections(node))
        monkeypatch.setattr(search_export, "search_doc", lambda entry: made.append(entry.url) or real_doc(entry))
        monkeypatch.setattr(search_export, "_names", lambda *a: named.append(1) or real_names(*a))
        pages["one"].write_text(_long_article("長い記事", [("定義", "定義"), ("新しい節", "新しい節")]), encoding="utf-8")
        assert not ingest_sources(store, [str(pages["one"])], index=False).failed
        build_site(store, site)
        assert cut == ["wiki:長い記事"]
        state = _state(site)["search"]
        chunks = {state["ids"][url] // search_export.CHUNK for url in made}
        assert any("新しい節" in url for url in made) and len(chunks) <= 2 and len(made) <= 2 * search_export.CHUNK
        assert named == []  # the same names: the name shards as they were
        assert sorted(state["sections"].values()) == [("定義", "新しい節"), ("定義", "歴史")]
