"""kb.search over the bundled Japanese sample: query understanding, results, versions, incremental index, CLI."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3

import pytest
from click.testing import CliRunner
from conftest import DATA

from kb.cli import main
from kb.errors import KbError
from kb.pipeline import ingest_sources
from kb.search import Searcher, parse_query, search
from kb.search.analysis import query_terms
from kb.search.index import update_index
from kb.store import Store

SAMPLE = DATA / "JPN_CR_20231117_0.txt"


@pytest.fixture(scope="module")
def kb_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("kb")
    with Store.open(folder) as store:
        report = ingest_sources(store, [str(SAMPLE)])
    assert report.index.added == report.index.total > 0
    return folder


@pytest.fixture(scope="module")
def searcher(kb_dir):
    store = Store.open(kb_dir, create=False)
    with Searcher(store) as s:
        yield s
    store.close()


def ids(hits):
    return [h.id for h in hits]


@pytest.mark.parametrize("query", ["601.2f", "６０１．２ｆ", "CR:601.2f", "rule 601.2f", "ｒｕｌｅ　６０１．２ｆ"])
def test_a_rule_number_in_any_form_goes_straight_to_the_rule(searcher, query):
    hits = searcher.search(query)
    assert ids(hits) == ["cr:601.2f"]
    assert hits[0].match == "number" and hits[0].url == "cr/601.html#601.2f"


def test_a_rule_number_with_subrules_and_alone(searcher):
    assert ids(searcher.search("601.3", limit=50)) == ["cr:601.3"] + [f"cr:601.3{x}" for x in "abcdef"]
    assert ids(searcher.search("601.3.")) == ["cr:601.3"]


def test_a_range_gives_exactly_those_rules(searcher):
    assert ids(searcher.search("601.2a-d")) == ["cr:601.2a", "cr:601.2b", "cr:601.2c", "cr:601.2d"]
    assert ids(searcher.search("601.2f-601.2h")) == ["cr:601.2f", "cr:601.2g", "cr:601.2h"]


def test_a_glossary_term_gives_its_defining_rule_then_its_entry(searcher):
    assert ids(searcher.search("予示"))[:2] == ["cr:701.34", "gl:予示"]


@pytest.mark.parametrize("query, entry", [("Manifest", "gl:予示"), ("Cast", "gl:唱える"), ("mana cost", "gl:マナ・コスト"),
                                          ("state-based actions", "gl:状況起因処理")])
def test_an_english_term_finds_the_japanese_entry(searcher, query, entry):
    assert entry in ids(searcher.search(query))[:2]


@pytest.mark.parametrize("query", ["唱えた", "唱えられる"])
def test_inflected_queries_find_the_dictionary_form(searcher, query):
    hits = searcher.search(query)
    assert "gl:唱える" in ids(hits)[:3]
    words = [h for h in hits if h.match == "words"]
    assert words and all("唱え" in h.snippet for h in words)


@pytest.mark.parametrize("query", ["ﾏﾅ･ｺｽﾄ", "マナ・コスト", "マナコスト"])
def test_katakana_variants_find_the_same_nodes(searcher, query):
    assert ids(searcher.search(query, limit=20)) == ids(searcher.search("マナ・コスト", limit=20))
    assert ids(searcher.search(query))[0] == "gl:マナ・コスト"


def test_pronoun_terms_of_the_rules_are_searchable(searcher):
    assert ids(searcher.search("あなた"))[0] == "gl:あなた"  # its defining rule 109.5 is not in the sample
    assert "cr:701.34b" in ids(searcher.search("あなた 予示", limit=10))


def test_a_compound_is_found_by_its_part(searcher):
    assert ids(searcher.search("起因"))[0] == "gl:状況起因処理"


@pytest.mark.parametrize("query, node", [("イレクシア", "cr:601.2b"), ("況起", "gl:状況起因処理")])
def test_unknown_words_fall_back_to_bigrams_of_what_was_typed(searcher, query, node):
    hits = searcher.search(query)
    assert ids(hits)[0] == node
    assert query in [hits[0].snippet[a:b] for a, b in hits[0].highlights]


def test_snippet_highlights_the_matched_words_at_their_offsets(searcher):
    hit = next(h for h in searcher.search("唱えた", limit=10) if h.id == "cr:601.3")
    marked = [hit.snippet[a:b] for a, b in hit.highlights]
    assert marked and all(m.startswith("唱え") and query_terms(searcher.splitter, m) == ["唱える"] for m in marked)
    hit = searcher.search("ﾏﾅ･ｺｽﾄ kind:rule")[0]
    assert [hit.snippet[a:b] for a, b in hit.highlights][0] == "マナ・コスト"


def test_hits_are_shown_inside_their_section(searcher):
    hit = searcher.search("601.2f")[0]
    assert (hit.parent_number, hit.section) == ("601.2", "601 呪文を唱えること")
    assert hit.version == "20231117.0" and hit.lang == "ja" and hit.kind == "subrule"


def test_quoted_phrases_must_occur_in_order(searcher):
    phrase = ids(searcher.search('"呪文を唱える"', limit=50))
    assert "cr:601.1" in phrase
    reversed_words = ids(searcher.search('"唱える呪文"', limit=50))
    assert set(reversed_words) != set(phrase)
    assert "gl:唱える" in ids(searcher.search("「スタックに積み」"))


def test_kind_and_lang_filters(searcher):
    assert {h.kind for h in searcher.search("kind:glossary 呪文", limit=50)} == {"glossary"}
    assert {h.kind for h in searcher.search("呪文", kind="rule", limit=50)} <= {"chapter", "section", "rule", "subrule"}
    with pytest.raises(KbError, match="nothing to search for"):
        searcher.search("kind:rule")
    assert searcher.search("lang:en 呪文") == []


@pytest.mark.parametrize("query, message", [
    ("", "empty query"), ("   ", "empty query"), ("あ" * 10_000, "10000 characters"),
    ('"呪文を唱える', "unbalanced quotes"), ("「呪文", "unbalanced quotes"), ("呪文\x00", "control character U\\+0000"),
    ("kind:spell 呪文", "unknown kind"), ("lang:fr 呪文", "unknown language")])
def test_bad_queries_give_a_clear_error(query, message):
    with pytest.raises(KbError, match=message):
        parse_query(query)


def test_search_api_takes_a_folder_or_a_store(kb_dir):
    assert ids(search(kb_dir, "601.2f")) == ["cr:601.2f"]
    with Store.open(kb_dir, create=False) as store:
        assert ids(search(store, "601.2f")) == ["cr:601.2f"]


def test_search_without_an_index_says_what_to_run(tmp_path):
    with Store.open(tmp_path) as store, pytest.raises(KbError, match="kb index"):
        search(store, "呪文")


def _second_version(tmp_path, version: str, old: str, new: str):
    text = SAMPLE.read_text(encoding="utf-8-sig").replace("20231117.0", version).replace(old, new)
    path = tmp_path / f"JPN_CR_{version}.txt"
    path.write_text(text, encoding="utf-8")
    return path


def test_newest_version_by_default_and_version_to_choose(tmp_path):
    newer = _second_version(tmp_path, "20240301.0", "マナ能力はコストを支払う前に起動する必要がある。",
                            "マナ能力はコストを支払う前に起動する必要がある。新しい規定の文。")
    with Store.open(tmp_path / "kb") as store:
        ingest_sources(store, [str(SAMPLE), str(newer)])
        with Searcher(store) as s:
            assert {h.version for h in s.search("呪文", limit=50)} == {"20240301.0"}
            assert {h.version for h in s.search("呪文", limit=50, version="20231117")} == {"20231117.0"}
            assert ids(s.search("規定")) == ["cr:601.2g"]
            assert s.search("規定", version="20231117.0") == []
            with pytest.raises(KbError, match="version 19990101: not in the knowledge base"):
                s.search("呪文", version="19990101")


def test_reingest_reindexes_only_changed_nodes(tmp_path):
    source = tmp_path / "JPN_CR_20231117_0.txt"
    shutil.copy(SAMPLE, source)
    with Store.open(tmp_path / "kb") as store:
        first = ingest_sources(store, [str(source)])
        assert first.index.added == first.index.total
        source.write_text(source.read_text(encoding="utf-8-sig").replace(
            "コストを変える呪文を唱えても", "コストを変える呪文を詠唱しても"), encoding="utf-8")
        second = ingest_sources(store, [str(source)])
        assert (second.index.added, second.index.updated, second.index.removed) == (0, 1, 0)
        with Searcher(store) as s:
            assert ids(s.search("詠唱")) == ["cr:601.7"]
        again = ingest_sources(store, [str(source)])
        assert (again.unchanged, again.index) == (1, None)  # same bytes: not parsed, the index is not touched


def test_cli_search_text_and_json(kb_dir):
    runner = CliRunner()
    result = runner.invoke(main, ["--kb-dir", str(kb_dir), "search", "唱えた", "--limit", "3"])
    assert result.exit_code == 0, result.output
    assert "601 呪文を唱えること" in result.output and "glossary/唱える.html" in result.output
    result = runner.invoke(main, ["--kb-dir", str(kb_dir), "search", "６０１．２ｆ", "--json"])
    hits = json.loads(result.output)
    assert [(h["id"], h["kind"], h["number"], h["version"], h["url"]) for h in hits] == [
        ("cr:601.2f", "subrule", "601.2f", "20231117.0", "cr/601.html#601.2f")]
    assert set(hits[0]) >= {"score", "snippet", "highlights", "parent_number", "parent_title", "section", "lang"}


@pytest.mark.parametrize("query", ["", '"abc', "a\x01b", "x" * 10_000])
def test_cli_bad_queries_print_one_line_and_no_traceback(kb_dir, query):
    result = CliRunner().invoke(main, ["--kb-dir", str(kb_dir), "search", query])
    assert result.exit_code == 1
    assert re.fullmatch(r"kb: error: [^\n]+\n", result.output)
    assert "Traceback" not in result.output


def test_cli_index_command_reports_an_up_to_date_index(kb_dir):
    result = CliRunner().invoke(main, ["--kb-dir", str(kb_dir), "index"])
    assert result.exit_code == 0
    assert re.match(r"index: 0 added, 0 updated, 0 removed, \d+ nodes", result.output)


def test_nodes_gone_from_the_store_are_skipped_then_removed_from_the_index(tmp_path):
    with Store.open(tmp_path) as store:
        ingest_sources(store, [str(SAMPLE)])
        with sqlite3.connect(store.path) as db:  # behind the store's back, as a damaged or foreign write would
            db.execute("PRAGMA foreign_keys = ON")
            db.execute("DELETE FROM nodes WHERE id = 'cr:601.7'")
        with Searcher(store) as s:
            assert "cr:601.7" not in ids(s.search("コストを変える呪文", limit=50))
        report = update_index(store)
        assert (report.added, report.updated, report.removed) == (0, 0, 1)


def test_filters_never_change_the_ranking(searcher):
    """A filter keeps the order of the unfiltered results (the ranking is over the whole view, as in the browser)."""
    everything = searcher.search("呪文 唱える", limit=200)
    rules = searcher.search("kind:rule 呪文 唱える", limit=200)
    assert rules and [h.id for h in rules] == [h.id for h in everything if h.kind in ("chapter", "section", "rule", "subrule")]
    glossary = searcher.search("kind:glossary 呪文 唱える", limit=200)
    assert glossary and [h.id for h in glossary] == [h.id for h in everything if h.kind == "glossary"]


def test_a_lone_digit_is_a_chapter_only_with_a_prefix(searcher):
    assert searcher.search("CR:6")[0].match == "number"
    assert all(h.match != "number" for h in searcher.search("6"))


def test_the_ranking_is_integer_arithmetic_on_the_lengths_the_index_stores():
    """Stored lengths are a fixed point of field_length (the live search reads them back from Whoosh, the export
    computes them), weights grow with the term frequency and fall with the length, idf falls with df."""
    from kb.search import ranking

    assert all(ranking.field_length(ranking.field_length(n)) == ranking.field_length(n) for n in range(0, 5000))
    assert ranking.term_weight(2, 10, 0, 0) > ranking.term_weight(1, 10, 0, 0) > ranking.term_weight(1, 200, 0, 0) > 0
    assert ranking.term_weight(0, 10, 1, 2) > ranking.term_weight(1, 10, 0, 0)  # a title hit outweighs a body hit
    assert ranking.idf(1000, 1) > ranking.idf(1000, 100) > ranking.idf(1000, 900) >= 0
    assert all(isinstance(x, int) for x in (ranking.term_weight(3, 40, 1, 2), ranking.gram_weight(2, 50), ranking.idf(9, 2)))
    assert ranking.gram_cover(3) * 3 == ranking.COVER_SCALE
