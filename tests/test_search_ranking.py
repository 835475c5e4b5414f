"""The ranking of word matches (kb/search/ranking.py): a glossary entry weighs ⅔ of a rule
(:func:`kb.search.ranking.entry_weight`), so the rule holding a query's words ranks above the one-line entry that
holds them too, in ``kb search`` and in the static search (the exported weights) alike, while a query that is the
whole term still finds the entry and its rule first. Over a real store of ``data/`` and, for the static search, its
site in real Chromium."""

from __future__ import annotations

import pytest
from conftest import DATA

from kb.pipeline import ingest_sources
from kb.search import Searcher, ranking
from kb.site import build_site
from kb.site.search_export import _Tables
from kb.store import Store

RULE, ENTRY = "cr/601.html#601.2i", "glossary/状況起因処理.html"  # both hold 優先権 and 得る (優先権を得る)


@pytest.fixture(scope="module")
def kb_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ranking")
    with Store.open(folder / "kb") as store:
        ingest_sources(store, [str(DATA)])
    return folder


@pytest.fixture(scope="module")
def searcher(kb_dir):
    with Store.open(kb_dir / "kb", create=False) as store, Searcher(store) as s:
        yield s


def urls(hits, n=5):
    return list(dict.fromkeys(h.url for h in hits))[:n]


def test_an_entry_weighs_two_thirds_of_a_rule_in_integers():
    assert ranking.entry_weight(30, False) == 30
    assert ranking.entry_weight(30, True) == 20
    assert ranking.entry_weight(31, True) == 20  # floored, as the browser reads the stored integer
    assert ranking.section_weight(30, True) < ranking.entry_weight(30, True)  # the CR's glossary above a wiki section


def test_the_rule_holding_the_words_ranks_above_the_entry_holding_them(searcher):
    hits = searcher.search("優先権を得る", limit=10)
    found = urls(hits, 10)
    assert found[0] == RULE, found
    assert ENTRY in found, found
    assert {h.match for h in hits if h.url in (RULE, ENTRY)} == {"words"}  # both hold every word


def test_the_whole_term_still_finds_its_rule_and_entry_first(searcher):
    assert urls(searcher.search("総コスト"), 2) == ["cr/601.html#601.2f", "glossary/総コスト.html"]


def test_the_export_weighs_an_entry_as_kb_search_does():
    fields = {"t": ["総コスト"], "b": ["総コスト", "支払う", "コスト"], "g": ["総コ", "コス"], "v": {}}
    tables = _Tables(set(), {2})  # document 2 a glossary entry
    for doc_id in (0, 2):
        tables.add(doc_id, fields)
    postings, grams = tables.postings, tables.grams
    rule, entry = postings["支払う"][1], postings["支払う"][3]
    assert entry == ranking.entry_weight(rule, True) < rule
    assert grams["総コ"][3] == ranking.entry_weight(grams["総コ"][1], True)


@pytest.mark.slow
@pytest.mark.browser
def test_the_static_search_ranks_the_rule_first_too(browser, kb_dir, searcher):
    with Store.open(kb_dir / "kb", create=False) as store:
        build_site(store, kb_dir / "site")
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto((kb_dir / "site" / "search.html").as_uri())
    for query in ("優先権を得る", "総コストを支払った", "総コスト"):
        found = page.evaluate("(q) => kbSearch(q, 5)", query)["results"]
        assert list(dict.fromkeys(r["url"] for r in found))[:5] == urls(searcher.search(query)), query
    page.close()
    assert errors == []
