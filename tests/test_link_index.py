"""The link index's name tables (kb.link.index): the loose-fold tables and the stem table find, by one dictionary
lookup, exactly what a scan of every name finds — the first name in table order with the same loose fold, the
shortest name (then the least id) that adds one to three characters of okurigana to a stem."""

from __future__ import annotations

import re

import pytest
from conftest import DATA, FIXTURES

from kb.link.graph import find_named
from kb.link.index import LinkIndex, loose_fold
from kb.model import ARTICLE
from kb.pipeline import ingest_sources
from kb.store import Store

OKURIGANA = re.compile(r"^[ぁ-ゖー]{0,3}$")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("kb")
    with Store.open(folder) as store:
        ingest_sources(store, [str(DATA), str(FIXTURES / "graph"), str(FIXTURES / "mtgwiki" / "deathtouch.html")])
        yield store


def scanned_loose(names: dict, name: str):
    return next((value for folded, value in names.items() if loose_fold(folded) == loose_fold(name)), None)


def scanned_stem(names: dict[str, str], stem: str) -> str | None:
    found = [(len(n), i) for n, i in names.items() if n.startswith(stem) and OKURIGANA.match(n[len(stem):])]
    return min(found)[1] if found and stem else None


def test_loose_tables_find_what_a_scan_finds(store):
    index = LinkIndex(store)
    names = index.names(ARTICLE)
    assert names, "the sample has articles"
    asked = [*names, *(n + "ー" for n in names), *(n.rstrip("ー") for n in names), "パーティ", "パーティー", "無い名前"]
    for name in asked:
        assert index.loose_names(ARTICLE).get(loose_fold(name)) == scanned_loose(names, name), name
    assert find_named(index, ARTICLE, "パーティ", loose=True) == find_named(index, ARTICLE, "パーティー")
    assert find_named(index, ARTICLE, "パーティ") is None  # not without loose
    (version, lang), *_ = [(d.version, d.lang) for d in store.documents() if d.kind == "cr-text"]
    glossary = index.glossary_names(version, lang)
    for name in [*glossary, *(n + "ー" for n in glossary), "無い名前"]:
        assert index.loose_glossary_names(version, lang).get(loose_fold(name)) == scanned_loose(glossary, name), name


def test_the_stem_table_finds_what_a_scan_finds(store):
    index = LinkIndex(store)
    (version, lang), *_ = [(d.version, d.lang) for d in store.documents() if d.kind == "cr-text"]
    glossary = index.glossary_names(version, lang)
    stems = {name[:cut] for name in glossary for cut in range(len(name) + 1)} | {"", "唱え", "戦場に出", "無"}
    found = 0
    for stem in sorted(stems):
        expected = glossary.get(stem) or scanned_stem(glossary, stem)
        assert index.find_glossary(version, lang, stem) == expected, stem
        found += expected is not None and stem not in glossary
    assert index.find_glossary(version, lang, "唱え") == glossary["唱える"]
    assert found >= 2  # the scan found stems (唱え, 唱) that are no name themselves
