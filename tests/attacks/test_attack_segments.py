"""Finding 21.1: one new wiki page broke search. After the sample, one more MTG Wiki page ingested on its own (a second
segment in the unversioned scope's index): ``kb search 呪文`` ended in ``internal error: NotImplementedError:
MultiMatcher``, and ``kb index`` did not cure it. The searcher of several scopes was a Whoosh ``MultiReader`` over
each scope's reader, itself a ``MultiReader`` once the scope had two segments: Whoosh's sub-searchers were then not
atomic, and its top-N collector asked their ``MultiMatcher`` to skip blocks by quality, which it cannot. Replayed
with real ``kb`` processes, then incremental ingests through the library compared with one fresh build."""

from __future__ import annotations

import json

import pytest
from conftest import copy_kb
from hostile import DATA, SAMPLE_CR, kb, wiki_page

pytestmark = pytest.mark.slow  # processes, servers or several ingests each: out of the quick suite

QUERIES = ("呪文", "カード", "コスト", "唱えた", "マナ・コスト")


def _search(kb_dir, query: str, limit: int = 10) -> list[str]:
    """The ids ``kb search`` finds; the default limit, as a user searches: Whoosh's top-N collector skips blocks by
    quality only once it holds ``limit`` hits."""
    result = kb(kb_dir, "search", "--json", "--limit", str(limit), query)
    assert result.returncode == 0, result.stderr
    assert "internal error" not in result.stderr
    return sorted(h["id"] for h in json.loads(result.stdout))


def test_a_search_after_one_new_wiki_page_finds_it_and_everything_else(tmp_path, data_kb):
    kb_dir = copy_kb(data_kb, tmp_path / "kb")  # data/ ingested
    before = {q: _search(kb_dir, q, 100) for q in QUERIES}
    page = tmp_path / "new" / "新しい記事.html"
    page.parent.mkdir()
    page.write_bytes(wiki_page("新しい記事", "<p>呪文を唱えるには、カードのコストを支払う。</p>"))
    assert kb(kb_dir, "ingest", "--quiet", str(page.parent)).returncode == 0
    for query in ("呪文", "カード", "コスト"):
        assert len(_search(kb_dir, query)) == 10
        found = _search(kb_dir, query, 100)
        assert "wiki:新しい記事" in found
        assert set(before[query]) <= set(found)  # nothing found before is lost
    assert kb(kb_dir, "index").returncode == 0
    assert "wiki:新しい記事" in _search(kb_dir, "呪文", 100)
    assert len(_search(kb_dir, "呪文")) == 10


@pytest.mark.parametrize("pages", [1, 2])
def test_an_index_of_many_segments_answers_as_one_fresh_build(tmp_path, pages):
    """Each page ingested on its own adds a segment to the unversioned scope; every query then gives the hits (and
    so many of them whatever the limit) of a knowledge base that ingested the same files at once."""
    from kb.pipeline import ingest_sources
    from kb.search import Searcher
    from kb.store import Store

    folder = tmp_path / "pages"
    folder.mkdir()
    for i in range(pages):
        (folder / f"記事{i}.html").write_bytes(wiki_page(f"記事{i}", f"<p>呪文{i}を唱えるには、カードのコストを{i}支払う。</p>"))
    one, many = tmp_path / "one", tmp_path / "many"
    with Store.open(one) as store:
        ingest_sources(store, [str(SAMPLE_CR), str(DATA / "mtgwiki"), str(folder)])
        with Searcher(store) as searcher:
            expected = {(q, n): sorted(h.id for h in searcher.search(q, limit=n)) for q in QUERIES for n in (3, 100)}
    with Store.open(many) as store:
        ingest_sources(store, [str(SAMPLE_CR), str(DATA / "mtgwiki")])
        for page in sorted(folder.iterdir()):
            ingest_sources(store, [str(page)])
        segments = list((many / "index").glob("ja-_/*.seg"))
        assert len(segments) > 1
        with Searcher(store) as searcher:
            found = {(q, n): sorted(h.id for h in searcher.search(q, limit=n)) for q in QUERIES for n in (3, 100)}
    assert {k: v for k, v in found.items() if k[1] == 100} == {k: v for k, v in expected.items() if k[1] == 100}
    assert {k: len(v) for k, v in found.items()} == {k: len(v) for k, v in expected.items()}
    assert all(len(v) == 3 for k, v in expected.items() if k[1] == 3 and k[0] != "マナ・コスト")
