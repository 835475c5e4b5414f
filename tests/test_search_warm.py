"""kb.search.warm: what a process keeps between searches — made once per store generation, made again when the store
or the index changed, one Searcher per thread — on a real kb folder (the sample CR, then a changed MTG Wiki article)."""

from __future__ import annotations

import shutil
import threading

import pytest
from conftest import DATA

from kb.pipeline import ingest_sources
from kb.search import search
from kb.search.warm import PROCESS, WarmSearch, generation_of
from kb.store import Store
from kb.versions.current import current_view

SAMPLE = DATA / "JPN_CR_20231117_0.txt"
ARTICLE = DATA / "mtgwiki" / "唱える.html"


@pytest.fixture(scope="module")
def sample_kb(tmp_path_factory):
    folder = tmp_path_factory.mktemp("warm") / "kb"
    with Store.open(folder) as store:
        ingest_sources(store, [str(SAMPLE)])
    return folder


@pytest.fixture()
def kb_dir(sample_kb, tmp_path):
    """A kb folder of its own for each test (a copy of the sample's)."""
    return shutil.copytree(sample_kb, tmp_path / "kb")


def _changed_article(tmp_path, word: str):
    """The sample's MTG Wiki article with ``word`` in its text."""
    page = tmp_path / "唱える.html"
    page.write_bytes(ARTICLE.read_bytes().replace("この条件で誘発する能力".encode(),
                                                  f"{word}の夜にこの条件で誘発する能力".encode()))
    return page


def _ids(hits) -> list[str]:
    return [h.id for h in hits]


def _nodes(hits) -> list[str]:
    """The stored nodes' ids (a long article's section hit: the article's; kb.search.sections)."""
    return [h.key.id for h in hits]


def test_one_searcher_answers_call_after_call_until_the_store_changes(kb_dir, tmp_path):
    first = PROCESS.searcher(kb_dir)
    assert _ids(search(kb_dir, "601.2f")) == ["cr:601.2f"]
    assert PROCESS.searcher(kb_dir) is first
    assert search(kb_dir, "灯籠流し") == []
    with Store.open(kb_dir) as store:
        ingest_sources(store, [str(_changed_article(tmp_path, "灯籠流し"))])
    assert "wiki:唱える" in _nodes(search(kb_dir, "灯籠流し"))
    assert PROCESS.searcher(kb_dir) is not first


def test_the_current_view_is_computed_once_per_generation(kb_dir, tmp_path):
    warm = WarmSearch()
    with Store.open(kb_dir, create=False) as reader:
        view = warm.view(reader)
        assert warm.view(reader) is view
        assert view == current_view(reader)
        with Store.open(kb_dir) as writer:
            ingest_sources(writer, [str(ARTICLE)])  # a new document: a new content generation
        assert warm.view(reader) is not view
        assert warm.view(reader) == current_view(reader)


def test_each_thread_has_its_own_searcher_and_the_same_answers(kb_dir):
    warm = WarmSearch()
    found: dict[str, tuple[object, list[str]]] = {}

    def ask(name: str) -> None:
        searcher = warm.searcher(kb_dir)
        found[name] = (searcher, _ids(searcher.search("唱えた", limit=5)))

    threads = [threading.Thread(target=ask, args=(f"t{i}",)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    (one, hits_one), (two, hits_two) = found["t0"], found["t1"]
    assert one is not two and one.store is not two.store
    assert hits_one == hits_two and hits_one


def test_a_kb_folder_made_anew_is_searched_anew(kb_dir, tmp_path):
    warm = WarmSearch()
    before = generation_of(warm.searcher(kb_dir).store)
    assert _ids(warm.searcher(kb_dir).search("灯籠流し")) == []
    shutil.rmtree(kb_dir)
    with Store.open(kb_dir) as store:  # another database in the same place, with the changed article
        ingest_sources(store, [str(SAMPLE), str(_changed_article(tmp_path, "灯籠流し"))])
    searcher = warm.searcher(kb_dir)
    assert generation_of(searcher.store) != before
    assert "wiki:唱える" in _nodes(searcher.search("灯籠流し"))
