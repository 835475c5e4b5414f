"""kb.search.coldcache: the current view, name table and document tables a new Searcher reads from the kb folder
instead of computing them — the same values and the same hits, made again when the store, the index or the file
changed (a real kb folder: the sample CR, then a changed MTG Wiki article)."""

from __future__ import annotations

import shutil

import pytest
from conftest import DATA

from kb.pipeline import ingest_sources
from kb.search import coldcache, view
from kb.search.index import update_index
from kb.search.names import name_table
from kb.search.query import Searcher, parse_query
from kb.store import Store
from kb.versions.current import current_view

SAMPLE = DATA / "JPN_CR_20231117_0.txt"
ARTICLE = DATA / "mtgwiki" / "唱える.html"
QUERIES = ("601.2f", "唱えた", "マナ・コスト", "よし", "kind:glossary 予示", "version:20231117 601.2", "cast")


@pytest.fixture(scope="module")
def sample_kb(tmp_path_factory):
    folder = tmp_path_factory.mktemp("coldcache") / "kb"
    with Store.open(folder) as store:
        ingest_sources(store, [str(SAMPLE)])
    shutil.rmtree(folder / coldcache.CACHE_DIR, ignore_errors=True)
    return folder


@pytest.fixture()
def kb_dir(sample_kb, tmp_path):
    return shutil.copytree(sample_kb, tmp_path / "kb")


def _answers(kb_dir) -> list[list[tuple[str, str, str, str]]]:
    """The hits of :data:`QUERIES` by a new Searcher (as a new process makes one)."""
    with Store.open(kb_dir, create=False) as store, Searcher(store) as searcher:
        return [[(h.version, h.lang, h.id, h.url) for h in searcher.search(q)] for q in QUERIES]


def _files(kb_dir) -> dict[str, int]:
    """Each cache file → its inode (a file written again is a new one: renamed over)."""
    return {p.name: p.stat().st_ino for p in (kb_dir / coldcache.CACHE_DIR).glob("*.marshal")}


def test_a_new_searcher_reads_what_the_first_kept_with_the_same_hits(kb_dir):
    first = _answers(kb_dir)
    kept = _files(kb_dir)
    assert {"view.marshal", "names.marshal"} <= set(kept)
    assert any(n.startswith("docs-") for n in kept)
    assert _answers(kb_dir) == first and sum(map(bool, first)) >= 5
    assert _files(kb_dir) == kept  # read, not written again


def test_what_is_read_equals_what_is_computed(kb_dir):
    _answers(kb_dir)
    with Store.open(kb_dir, create=False) as store, Searcher(store) as searcher:
        assert searcher.locator.view == current_view(store)
        assert searcher.names == name_table(store, searcher.splitter)
        assert searcher.search("唱えた")
        scopes = searcher._scopes(parse_query("唱えた"))
        ws = searcher.indexes.searcher(scopes)
        read = searcher._table(ws, scopes, None)
        made = view.doc_table(ws, view.current_shown(searcher.locator.view), searcher.locator.url,
                              view.shown_rule_number(searcher.locator))
        assert read == made and read.size > 0


def test_a_store_change_makes_them_again(kb_dir, tmp_path):
    assert _answers(kb_dir)[1]
    kept = _files(kb_dir)
    page = tmp_path / "唱える.html"
    page.write_bytes(ARTICLE.read_bytes().replace("この条件で誘発する能力".encode(),
                                                  "灯籠流しの夜にこの条件で誘発する能力".encode()))
    with Store.open(kb_dir) as store:
        ingest_sources(store, [str(page)])
    with Store.open(kb_dir, create=False) as store, Searcher(store) as searcher:
        assert "wiki:唱える" in [h.key.id for h in searcher.search("灯籠流し")]
        assert searcher.locator.view == current_view(store)
    again = _files(kb_dir)
    assert again["view.marshal"] != kept["view.marshal"]
    assert {n for n in kept if n.startswith("docs-")} == {n for n in again if n.startswith("docs-")}
    assert all(again[n] != kept[n] for n in kept if n.startswith("docs-"))


def test_an_index_rebuild_makes_the_document_tables_again(kb_dir):
    first = _answers(kb_dir)
    kept = _files(kb_dir)
    with Store.open(kb_dir) as store:
        update_index(store, rebuild=True)
    assert _answers(kb_dir) == first
    again = _files(kb_dir)
    assert all(again[n] != kept[n] for n in kept if n.startswith("docs-"))


def test_a_damaged_cache_file_is_made_again(kb_dir):
    first = _answers(kb_dir)
    for path in (kb_dir / coldcache.CACHE_DIR).glob("*.marshal"):
        path.write_bytes(b"\xff not marshal" if path.name.startswith("docs-") else path.read_bytes()[:40])
    assert _answers(kb_dir) == first
    assert _answers(kb_dir) == first
