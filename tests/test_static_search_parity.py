"""What the static search exports so that it answers as ``kb search`` does (issue 23, item 1, the browser part):
the reading table and the kana the analysis drops (:mod:`kb.site.search_readings`), the phrase pairs
(:mod:`kb.site.search_phrases`), the rules the Japanese text names (:mod:`kb.site.search_learned`), the range
grammar in ``meta.js``; and the two Python rules the browser now shares (kana runs read by their readings, a
rewrite's hits before the words as typed). The answers in real Chromium are ``tests/test_search_oneview.py``'s."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from conftest import DATA, FIXTURES

from kb import rulenum
from kb.pipeline import ingest_sources
from kb.search import Searcher, analysis
from kb.search.names import NameTable
from kb.site.search_export import browser_constants, fnv1a
from kb.site.search_phrases import BODY, TITLE, PairTable, field_pairs
from kb.site.search_readings import DocumentCounts, dropped_kana, export_readings, reading_table
from kb.site.search_shards import patched_shards
from kb.splitter import JapaneseSplitter
from kb.store import Store


@pytest.fixture(scope="module")
def splitter():
    return JapaneseSplitter()


@pytest.fixture(scope="module")
def searcher(tmp_path_factory):
    """data/ and the MTG Wiki page 接死."""
    folder = tmp_path_factory.mktemp("kb")
    with Store.open(folder) as store:
        ingest_sources(store, [str(DATA), str(FIXTURES / "mtgwiki" / "deathtouch.html")])
    with Store.open(folder, create=False) as store, Searcher(store) as s:
        yield s


# -- readings -----------------------------------------------------------------------------------------------------
def test_a_reading_is_rewritten_to_its_most_frequent_term(splitter):
    known: dict[str, str | None] = {}
    table = reading_table(splitter, None, Counter({"混成": 3, "混声": 1, "予示": 2, "マナ": 5}), known)
    assert table["コンセイ"] == "混成" and table["ヨジ"] == "予示" and table["マナ"] == "マナ"
    assert reading_table(splitter, None, Counter({"混成": 1, "混声": 3}), known)["コンセイ"] == "混声"
    assert known["混声"] == "コンセイ"  # kept for the next build


def test_names_join_the_reading_table(splitter):
    names = NameTable(readings={"マナコスト": ("マナ・コスト",)})
    assert reading_table(splitter, names, Counter({"マナ": 2}), {})["マナコスト"] == "マナ・コスト"


def counted(state: dict, added: list[dict], removed: list[dict]) -> DocumentCounts:
    """The document counts of a previous state (its Japanese terms and dropped kana) with ``added`` counted in and
    ``removed`` out, as ``kb.site.search_export`` keeps them."""
    counts = DocumentCounts(Counter(), Counter(state.get("counts", {})), Counter(state.get("dropped", {})))
    for fields in added:
        counts.add(fields)
    for fields in removed:
        counts.add(fields, -1)
    return counts


def test_the_reading_shards_are_updated_from_the_changed_documents(splitter):
    old = {"t": ["予示"], "b": ["予示", "混成"], "f": ["を", "された"]}
    first, state = export_readings(splitter, None, {}, counted({}, [old, {"t": [], "b": [], "f": ["を"]}], []))
    assert first == {"r/30e8": {"ヨジ": "予示"}, "r/30b3": {"コンセイ": "混成"}}
    assert state["counts"] == {"予示": 2, "混成": 1} and state["dropped"] == {"を": 2, "された": 1}
    changed, state = export_readings(splitter, None, state,
                                     counted(state, [{"t": [], "b": ["混声", "混声"], "f": []}], [old]))
    assert changed == {"r/30e8": {}, "r/30b3": {"コンセイ": "混声"}}  # 予示 gone: its shard empty
    assert state["counts"] == {"混声": 1} and state["dropped"] == {"を": 1}
    unchanged, _ = export_readings(splitter, None, state, counted(state, [{"t": [], "b": [], "f": ["を"]}],
                                                                  [{"t": [], "b": [], "f": ["を"]}]))
    assert unchanged == {}  # as a full build of the same documents: nothing to write


def test_document_counts_count_latin_candidates_japanese_terms_and_dropped_kana_per_document():
    counts = DocumentCounts()
    counts.add({"t": ["cast"], "b": ["cast", "cast", "casting", "唱える", "唱"], "f": ["を", "を"]})
    counts.add({"t": [], "b": ["唱える"], "f": ["を"]})
    assert counts.latin == {"cast": 2} and counts.japanese == {"唱える": 2} and counts.dropped == {"を": 2}
    counts.add({"t": [], "b": ["唱える"], "f": ["を"]}, -1)
    assert counts.japanese == {"唱える": 1} and counts.dropped == {"を": 1}


def test_the_dropped_kana_are_the_stretches_no_term_covers(splitter):
    text = "プレイヤーは呪文を唱えられない。コストがない場合、その呪文は追放される。"
    dropped = dropped_kana(text, analysis.analyze(splitter, text, index=True))
    assert {"は", "を", "られない", "される"} <= dropped
    assert "ない" not in dropped  # コストがない: the adjective 無い, a term


# -- phrases ------------------------------------------------------------------------------------------------------
def test_pairs_keep_the_place_of_their_first_term(splitter):
    title = analysis.analyze(splitter, "Total Cost", index=True)
    body = analysis.analyze(splitter, "the total cost of the spell", index=True)
    pairs = field_pairs([(TITLE, title), (BODY, body)])
    assert pairs["total\tcost"] == [2 * 0 + TITLE, 2 * 0 + BODY]
    assert pairs["cost\tspell"] == [2 * 1 + BODY]  # "of the" dropped: positions count kept terms
    joined = field_pairs([(BODY, analysis.analyze(splitter, "マナ・コストを支払う", index=True))])
    assert {"マナ\t支払う", "コスト\t支払う", "マナコスト\t支払う"} <= set(joined)  # one position, three terms


def pair_table(fields_by_id: dict[int, dict]) -> PairTable:
    table = PairTable()
    for doc_id in sorted(fields_by_id):
        table.add(doc_id, fields_by_id[doc_id]["q"])
    return table


def _decode(coded: list[int]) -> dict[int, list[int]]:
    """A pair's gap-coded list → its places by document."""
    out, i, doc = {}, 0, 0
    while i < len(coded):
        doc += coded[i]
        out[doc] = coded[i + 2:i + 2 + coded[i + 1]]
        i += 2 + coded[i + 1]
    return out


def _table(text: str) -> dict:
    return json.loads(text[text.index(",") + 1:].rstrip().removesuffix(");"))


def test_pair_shards_are_patched_for_the_changed_documents():
    def export_pairs(new, old, drop, count, shard_of, read_old):  # a compaction's patch of the q/ shards
        return patched_shards("q", new.places, old.places, count, shard_of, True, drop, read_old)

    def shard_of(pair):
        return fnv1a(pair)
    built = export_pairs(pair_table({0: {"q": {"a\tb": [1]}}, 1: {"q": {"a\tb": [3, 5]}}}), PairTable(), [0, 1], 1,
                         shard_of, None)
    assert _table(built["q/0"])["a\tb"] == [0, 1, 1, 1, 2, 3, 5]  # gap-coded: doc 0, 1 place; doc 0 + 1, 2 places
    assert _decode(_table(built["q/0"])["a\tb"]) == {0: [1], 1: [3, 5]}
    patched = export_pairs(pair_table({1: {"q": {"b\tc": [7]}}}), pair_table({1: {"q": {"a\tb": [3, 5]}}}), [1], 1,
                           shard_of, lambda path: built[path[len("search/"):-len(".js")]])
    table = _table(patched["q/0"])
    assert _decode(table["a\tb"]) == {0: [1]} and _decode(table["b\tc"]) == {1: [7]}
    same = export_pairs(pair_table({1: {"q": {"a\tb": [3, 5]}}}), pair_table({1: {"q": {"a\tb": [3, 5]}}}), [1], 1,
                        shard_of, lambda path: built[path[len("search/"):-len(".js")]])
    assert same == {}  # the changed document's pairs are as they were: no shard to write


# -- the range grammar the browser shares ---------------------------------------------------------------------------
def test_the_browser_gets_the_range_grammar_from_python():
    k = browser_constants()
    assert (k["rangeEnd"], k["ruleSpan"], k["sectionSpan"]) == (rulenum.RANGE_END, rulenum.MAX_RULE_SPAN,
                                                                 rulenum.MAX_SECTION_SPAN)
    assert k["maxReading"] >= 2
    assert rulenum.expand_range("601.2", "601.5") == ["601.2", "601.3", "601.4", "601.5"]
    assert rulenum.expand_range("601.1", f"601.{2 + rulenum.MAX_RULE_SPAN}") == []


# -- the Python rules the browser shares ------------------------------------------------------------------------------
def test_a_kana_run_of_known_words_is_read_by_its_readings(searcher):
    """Sudachi reads とくべつなしょり as 特別 alone (しょり dropped), which the browser cannot tell: both read the kana."""
    hits = searcher.search("とくべつなしょり")
    assert hits[0].id == "gl:特別な処理"
    assert any(h.corrected == "特別な処理" for h in hits)


def test_a_rewrite_ranks_before_the_words_as_typed(searcher):
    """ついほう as typed is つい (bigrams) and 方, both in some text by chance; its reading, 追放, first."""
    hits = searcher.search("ついほう", limit=5)
    assert hits and all(h.corrected == "追放" for h in hits)


@pytest.mark.slow
def test_the_name_shards_put_the_named_rules_first(bilingual_site):
    """多人数戦ルール is what the Japanese text calls chapter 8 (Multiplayer Rules): its English rule, first."""
    def shard(name):
        text = (bilingual_site / "search" / f"{name}.js").read_text(encoding="utf-8")
        return json.loads(text[len(f'window.__kbSearch("{name}",'):].rstrip().removesuffix(");"))

    meta = shard("meta")
    first = shard(f"n/{ord('多'):x}")["多人数戦ルール"][0]
    chunk = shard(f"d/{first // meta['c']}")
    assert chunk[first % meta["c"]][0] == "cr/8.html"
