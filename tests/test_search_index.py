"""kb.search.index: what the index holds is exactly the analysis of each node, and updates keep it so."""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path

import pytest
from conftest import DATA
from hypothesis import given, settings
from hypothesis import strategies as st
from whoosh import index as whoosh_index
from whoosh.fields import ID, TEXT, Schema

from kb.pipeline import ingest_sources
from kb.search import Searcher, userdict
from kb.search import index as index_module
from kb.search.analysis import analyze, bigram_pairs, bigrams, index_pairs
from kb.search.index import INDEX_NAME, index_dir, indexed_scopes, key_string, open_index, scope_dir, update_index
from kb.splitter import JapaneseSplitter
from kb.store import NodeKey, Store

SPLITTER = JapaneseSplitter()

SAMPLE = DATA / "JPN_CR_20231117_0.txt"


def _postings(store: Store, field: str) -> dict[str, dict[str, list[int]]]:
    """key → term → positions, read back from the index (every scope)."""
    out: dict[str, dict[str, list[int]]] = defaultdict(dict)
    for version, lang in indexed_scopes(store):
        with open_index(store, version, lang).searcher() as searcher:
            reader = searcher.reader()
            keys = {docnum: stored["key"] for docnum, stored in reader.iter_docs()}
            for term in reader.field_terms(field):
                matcher = reader.postings(field, term)
                while matcher.is_active():
                    if matcher.id() in keys:
                        out[keys[matcher.id()]][term] = list(matcher.value_as("positions"))
                    matcher.next()
    return out


def _doc_count(store: Store) -> int:
    return sum(open_index(store, version, lang).doc_count() for version, lang in indexed_scopes(store))


def _expected(terms) -> dict[str, list[int]]:
    out: dict[str, list[int]] = defaultdict(list)
    for term in terms:
        out[term.text].append(term.pos)
    return dict(out)


FRAGMENTS = ["Casting", " the ", "spells", " 601.2f", " rule 702.6.", "—", "“quoted”", " a ", "ｶﾞ", "Æther", "①",
             "呪文を唱えた", "マナ・コスト", "状況起因処理", "。", "\n", " 120.4", "abilities", "ＡＢＣ", "㍻"]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=12))
def test_pre_analysed_values_are_the_analysis(parts):
    text = "".join(parts)
    assert {term: positions for term, positions in index_pairs(SPLITTER, text)} == _expected(analyze(SPLITTER, text))
    assert {term: positions for term, positions in bigram_pairs(text)} == _expected(bigrams(text))


def test_index_holds_each_node_s_analysis_with_positions(tmp_path):
    with Store.open(tmp_path) as store:
        ingest_sources(store, [str(SAMPLE)])
        splitter = userdict.prepare(store, SPLITTER)  # the store's user dictionary, as the index was built with
        assert splitter.dictionary_id
        body, title, grams = (_postings(store, f) for f in ("body", "title", "grams"))
        nodes = list(store.nodes())
        assert len(nodes) > 50
        for node in nodes:
            key = key_string(NodeKey(node.version, node.lang, node.id))
            names = "\n".join(x for x in (node.title, *node.aliases, node.english) if x)
            text = "\n".join([node.text, *node.examples])
            assert body.get(key, {}) == _expected(analyze(splitter, text)), node.id
            assert title.get(key, {}) == _expected(analyze(splitter, names)), node.id
            assert grams.get(key, {}) == _expected(bigrams("\n".join(x for x in (names, text) if x))), node.id


def _hits(store: Store, queries: list[str]) -> dict[str, set[str]]:
    with Searcher(store) as searcher:
        return {q: {h.id for h in searcher.search(q, limit=200)} for q in queries}


def test_updated_and_removed_nodes_leave_no_stale_documents(tmp_path):
    source = tmp_path / "JPN_CR_20231117_0.txt"
    shutil.copy(SAMPLE, source)
    queries = ["詠唱", "唱える", "コスト", "呪文を唱える", "マナ能力", "601.2f", "予示"]
    with Store.open(tmp_path / "kb") as store:
        ingest_sources(store, [str(source)])
        total = _doc_count(store)
        lines = source.read_text(encoding="utf-8-sig").replace(
            "コストを変える呪文を唱えても", "コストを変える呪文を詠唱しても").split("\n")
        source.write_text("\n".join(line for line in lines if not line.startswith("601.5.")), encoding="utf-8")
        report = ingest_sources(store, [str(source)])
        assert report.index.removed == 1 and report.index.updated >= 1
        assert _doc_count(store) == total - 1
        incremental = _hits(store, queries)
        assert "cr:601.7" in incremental["詠唱"] and "cr:601.7" not in incremental["唱える"]
        assert "cr:601.5" not in set().union(*incremental.values())
        update_index(store, rebuild=True)
        assert _hits(store, queries) == incremental


def test_an_index_with_other_field_formats_is_rebuilt(tmp_path):
    """An older kb's index (one Whoosh index for everything, other field formats, no state) is rebuilt whole."""
    with Store.open(tmp_path) as store:
        ingest_sources(store, [str(SAMPLE)])
        total = _doc_count(store)
        names = open_index(store, "20231117.0", "ja").schema.names()
        shutil.rmtree(index_dir(store))
        index_dir(store).mkdir()
        older = Schema(**{name: TEXT() if name in ("title", "body", "grams") else ID(stored=True) for name in names})
        whoosh_index.create_in(index_dir(store), older, indexname=INDEX_NAME)
        report = update_index(store)
        assert report.added == report.total == total and "written by an older kb" in report.notice
        with Searcher(store) as searcher:
            assert "cr:601" in {h.id for h in searcher.search("唱えた")}


def test_an_index_built_by_another_analysis_or_dictionary_is_searched_as_it_is_and_rebuilt_by_a_writer(tmp_path):
    """The code and dictionary versions are recorded with the index. A search on an index they no longer match
    answers from it and says so in one line, never rebuilding it (readers never write); the next writer — an ingest
    that stores nothing, or ``kb index`` — rebuilds it, saying why in one line."""
    import json

    from click.testing import CliRunner

    from kb.cli import main

    kb = ["--kb-dir", str(tmp_path)]
    runner = CliRunner()
    assert runner.invoke(main, [*kb, "ingest", "-q", str(SAMPLE)]).exit_code == 0
    state_path = tmp_path / "index" / "state.json"
    state = json.loads(state_path.read_text(encoding="utf-8"))
    assert state["identity"]["dictionary"].startswith("sudachidict-core ") and state["identity"]["analysis"]
    state["identity"]["dictionary"] = "sudachidict-core 20200101, sudachipy 0.6.0"
    state_path.write_text(json.dumps(state), encoding="utf-8")
    searched = runner.invoke(main, [*kb, "search", "唱えた", "--json"])
    assert searched.exit_code == 0 and "cr:601" in searched.stdout
    [notice] = [line for line in searched.stderr.splitlines() if "the search index is stale" in line]
    assert "dictionary sudachidict-core 20200101, sudachipy 0.6.0 → sudachidict-core" in notice
    assert notice.endswith("run 'kb index'")
    assert json.loads(state_path.read_text(encoding="utf-8")) == state  # untouched
    ingested = runner.invoke(main, [*kb, "ingest", str(SAMPLE)])
    assert ingested.exit_code == 0 and "(0 stored, 1 unchanged)" in ingested.stdout
    assert "rebuilding the search index (dictionary sudachidict-core 20200101" in ingested.stderr
    assert json.loads(state_path.read_text(encoding="utf-8"))["identity"] != state["identity"]
    state = json.loads(state_path.read_text(encoding="utf-8"))
    state["identity"]["analysis"] = "0" * 16
    state_path.write_text(json.dumps(state), encoding="utf-8")
    indexed = runner.invoke(main, [*kb, "index"])
    assert indexed.exit_code == 0 and "notice:" in indexed.stderr and "analysis 0000000000000000 →" in indexed.stderr
    again = runner.invoke(main, [*kb, "index"])
    assert again.exit_code == 0 and "notice" not in again.stderr and "0 added, 0 updated, 0 removed" in again.stdout
    searched = runner.invoke(main, [*kb, "search", "唱えた"])
    assert searched.exit_code == 0 and "stale" not in searched.stderr


def test_a_search_on_a_stale_index_does_not_wait_for_the_writer(tmp_path):
    """A search never writes, so it never takes the writer lock: while another process writes the kb folder, a
    search on a stale index answers at once from the index as it is, and the index stays as it was."""
    import json
    import os
    import subprocess
    import sys

    from click.testing import CliRunner

    from kb.cli import main

    kb = ["--kb-dir", str(tmp_path)]
    runner = CliRunner()
    assert runner.invoke(main, [*kb, "ingest", "-q", str(SAMPLE)]).exit_code == 0
    state_path = tmp_path / "index" / "state.json"
    state = json.loads(state_path.read_text(encoding="utf-8"))
    state["identity"]["analysis"] = "0" * 16
    state_path.write_text(json.dumps(state), encoding="utf-8")
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys\nfrom kb.store.lock import writer_lock\n"
         "with writer_lock(sys.argv[1]):\n    print('held', flush=True)\n    sys.stdin.readline()", str(tmp_path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        searched = runner.invoke(main, [*kb, "search", "--json", "唱えた"], env={**os.environ, "KB_WRITER_WAIT": "0.2"})
        assert searched.exit_code == 0 and "cr:601" in searched.stdout
        assert "the search index is stale (analysis 0000000000000000 →" in searched.stderr
        assert json.loads(state_path.read_text(encoding="utf-8"))["identity"]["analysis"] == "0" * 16  # untouched
    finally:
        holder.kill()
        holder.wait()


def test_a_change_to_any_module_of_kb_rebuilds_the_index_once(tmp_path):
    """The index identity is a digest of all of kb's code, not of a list kept by hand: in a copy of the packages,
    one comment added to kb/search/names.py (which feeds the ``names`` field, and was not covered) makes the next
    ingest rebuild the index, with a notice, and the one after it not."""
    import os
    import subprocess
    import sys

    from conftest import REPO

    copy = tmp_path / "code"
    for package in ("kb", "ingest"):
        shutil.copytree(REPO / package, copy / package, ignore=shutil.ignore_patterns("__pycache__"))
    kb_dir = tmp_path / "kb"

    def ingest() -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "kb.cli", "--kb-dir", str(kb_dir), "ingest", str(SAMPLE)],
                              capture_output=True, text=True, cwd=copy, env={**os.environ, "PYTHONPATH": str(copy)})

    assert ingest().returncode == 0
    assert "rebuilding" not in ingest().stderr
    names = copy / "kb" / "search" / "names.py"
    names.write_text(names.read_text(encoding="utf-8") + "# a change\n", encoding="utf-8")
    changed = ingest()
    assert changed.returncode == 0 and "(0 stored, 1 unchanged)" in changed.stdout
    assert "rebuilding the search index (analysis " in changed.stderr
    assert "rebuilding" not in ingest().stderr


def test_each_version_has_its_own_index_and_an_ingest_writes_only_its_own(tmp_path):
    text = SAMPLE.read_text(encoding="utf-8-sig")
    later = tmp_path / "JPN_CR_20240301.txt"
    later.write_text(text.replace("和訳 20231117.0 版", "和訳 20240301.0 版").replace("2023年11月17日", "2024年3月1日"),
                     encoding="utf-8")
    with Store.open(tmp_path / "kb") as store:
        ingest_sources(store, [str(SAMPLE)])
        first = scope_dir(index_dir(store), "20231117.0", "ja")
        files_before = {p.name: p.stat().st_mtime_ns for p in first.iterdir()}
        report = ingest_sources(store, [str(later)])
        assert report.index.added == len(list(store.nodes("20240301.0", "ja"))) and report.index.updated == 0
        assert {p.name: p.stat().st_mtime_ns for p in first.iterdir()} == files_before  # untouched
        assert set(indexed_scopes(store)) == {("20231117.0", "ja"), ("20240301.0", "ja")}
        with Searcher(store) as searcher:
            assert {h.version for h in searcher.search("唱えた", limit=50)} == {"20240301.0"}
            assert {h.version for h in searcher.search("version:20231117 唱えた", limit=50)} == {"20231117.0"}


def test_an_update_reads_only_the_index_files_it_wrote_and_keeps_the_others_checksums(tmp_path, monkeypatch):
    """Whoosh never rewrites a file: what the last update recorded of a file it left is kept, not read again (so a
    file damaged before an update is still found damaged after it)."""
    copy = tmp_path / SAMPLE.name
    shutil.copy(SAMPLE, copy)
    with Store.open(tmp_path / "kb") as store:
        ingest_sources(store, [str(copy)])
        folder = scope_dir(index_dir(store), "20231117.0", "ja")
        recorded = json.loads((folder / index_module.CHECKSUMS).read_text(encoding="utf-8"))
        hashed: list[str] = []
        sha256 = index_module._sha256
        monkeypatch.setattr(index_module, "_sha256", lambda file: hashed.append(file.name) or sha256(file))
        copy.write_bytes(SAMPLE.read_bytes().replace("601.7. コストを変える".encode(), "601.7. コストを変えた".encode()))
        ingest_sources(store, [str(copy)])
        now = json.loads((folder / index_module.CHECKSUMS).read_text(encoding="utf-8"))
        kept = {name for name in recorded.keys() & now.keys() if name != index_module.HASHES}
        assert kept and not kept & set(hashed) and all(now[name] == recorded[name] for name in kept)
        assert set(hashed) == now.keys() - kept
        assert index_module.index_damage(store) is None


def test_segments_with_single_document_terms_merge(tmp_path):
    """Two incremental updates make two segments; merging them reads inlined postings back (regression: Whoosh
    returned "" for an inlined term without values and its merge refused it)."""
    sample = DATA / "JPN_CR_20231117_0.txt"
    store = Store.open(tmp_path / "kb")
    copy = tmp_path / sample.name
    for edit in ("変える0", "変える1"):
        copy.write_bytes(sample.read_bytes().replace("601.7. コストを変える".encode(), f"601.7. コストを{edit}".encode()))
        ingest_sources(store, [str(copy)])
    ix = open_index(store, "20231117.0", "ja")
    ix.optimize()
    assert ix.doc_count() == len(list(store.nodes("20231117.0", "ja")))
    assert [h.number for h in Searcher(store).search("601.7")][:1] == ["601.7"]


@pytest.mark.slow
def test_a_compiled_user_dictionary_is_shared_through_kb_userdict_cache(tmp_path, monkeypatch):
    """$KB_USERDICT_CACHE (set for the whole test run by conftest): a knowledge base takes the compiled dictionary of
    the same words from there, and it is the dictionary a compilation of its own makes (the header's creation time
    aside)."""
    import os
    from importlib.metadata import version

    from kb.search.userdict import SHARED_ENV

    shared = Path(os.environ[SHARED_ENV])
    with Store.open(tmp_path / "a") as store:
        ingest_sources(store, [str(SAMPLE)])
    [taken] = (tmp_path / "a" / "userdict").glob("*.dic")
    assert taken.read_bytes() == (shared / f"{taken.stem}-sudachipy{version('sudachipy')}.dic").read_bytes()
    monkeypatch.delenv(SHARED_ENV)
    with Store.open(tmp_path / "b") as store:
        ingest_sources(store, [str(SAMPLE)])
        with Searcher(store) as searcher:
            hits = {h.id for h in searcher.search("唱えた")}
    [compiled] = (tmp_path / "b" / "userdict").glob("*.dic")
    assert compiled.name == taken.name
    ours, theirs = compiled.read_bytes(), taken.read_bytes()
    assert len(ours) == len(theirs) and ours[:24] == theirs[:24] and ours[32:] == theirs[32:]  # 24-31: creation time
    with Store.open(tmp_path / "a", create=False) as store, Searcher(store) as searcher:
        assert {h.id for h in searcher.search("唱えた")} == hits and "cr:601" in hits
