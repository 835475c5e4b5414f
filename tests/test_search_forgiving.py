"""Forgiving search (issue 23, items 2 and 3): variant kanji, typos, readings, suggestions, names the Japanese text
gives, long wiki articles by section, questions. Over real stores: ``data/`` with the MTG Wiki page 接死 (quick), and
``bilingual_kb`` (data/ and the three English CRs: slow)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from conftest import DATA, FIXTURES

from ingest.wikititle import element_id
from kb.cli import main
from kb.model import ARTICLE, Node
from kb.pipeline import ingest_sources
from kb.search import Searcher, analysis
from kb.search.fuzzy import edit_distance, is_latin_candidate
from kb.search.questions import content_terms
from kb.search.sections import section_id, section_text, sections, split_node, split_section_id
from kb.search.variants import VARIANTS, normalise
from kb.site.search_export import browser_constants
from kb.splitter import JapaneseSplitter
from kb.store import NodeKey, Store


@pytest.fixture(scope="module")
def kb_dir(tmp_path_factory):
    """data/ and the MTG Wiki page 接死 (whose English name, Deathtouch, no English text of this store holds)."""
    folder = tmp_path_factory.mktemp("kb")
    with Store.open(folder) as store:
        ingest_sources(store, [str(DATA), str(FIXTURES / "mtgwiki" / "deathtouch.html")])
    return folder


@pytest.fixture(scope="module")
def searcher(kb_dir):
    with Store.open(kb_dir, create=False) as store, Searcher(store) as s:
        yield s


@pytest.fixture(scope="module")
def splitter():
    return JapaneseSplitter()


def ids(hits, n=5):
    return [f"{h.lang}:{h.id}" for h in hits[:n]]


# -- variant forms -------------------------------------------------------------------------------------------------
def test_variant_table_is_one_character_to_one():
    assert VARIANTS and all(len(k) == 1 and len(v) == 1 and k != v for k, v in VARIANTS.items())
    assert not set(VARIANTS) & set(VARIANTS.values())  # applying it once is enough
    assert normalise("豫示された總コスト") == "予示された総コスト"
    assert normalise("deathtouch") == "deathtouch"


def test_variants_fold_at_index_and_query_time_keeping_offsets(splitter):
    assert analysis.fold("ＡＢ豫") == "ab予"
    assert analysis.query_terms(splitter, "總コストを支払う") == analysis.query_terms(splitter, "総コストを支払う")
    assert analysis.index_terms(splitter, "豫示する") == analysis.index_terms(splitter, "予示する")
    text = "あなたは豫示されたパーマネント"
    spans = [text[t.start:t.end] for t in analysis.analyze(splitter, text, index=False)]
    assert "豫示" in spans  # highlights land on what the user typed


def test_variants_find_the_standard_form(searcher):
    assert ids(searcher.search("豫示"), 2) == ["ja:cr:701.34", "ja:gl:予示"]
    assert "ja:gl:総コスト" in ids(searcher.search("總コスト"), 2)
    assert "ja:gl:状況起因処理" in ids(searcher.search("狀況起因處理"), 2)


def test_static_search_gets_the_same_tables():
    k = browser_constants()
    assert k["variants"] == VARIANTS
    assert "どう" in k["question"] and k["minContent"] >= 2


# -- typos and readings ------------------------------------------------------------------------------------------
def test_edit_distance_is_bounded():
    assert edit_distance("deathtuch", "deathtouch", 2) == 1
    assert edit_distance("indestructabl", "indestructibl", 2) == 1
    assert edit_distance("abcdef", "uvwxyz", 2) == 3  # gives up past the bound
    assert edit_distance("cast", "casts", 1) == 1


def test_ime_slip_of_the_same_reading(searcher):
    hits = searcher.search("混声マナ")
    assert ids(hits, 1) == ["ja:cr:601.2b"]  # the one rule that says 混成マナ
    assert hits[0].corrected == "混成マナ" and hits[0].match == "words"


def test_kana_spellings_and_conjugated_readings(searcher):
    assert ids(searcher.search("こんせいまな"), 1) == ["ja:cr:601.2b"]
    for query in ("よじする", "よじした", "予時"):
        assert "ja:gl:予示" in ids(searcher.search(query), 2), query
    assert ids(searcher.search("ゆうせんけん"), 1) == ["ja:gl:優先権"]
    assert ids(searcher.search("状況基因処理"), 1) == ["ja:gl:状況起因処理"]


def test_known_words_are_not_rewritten(searcher):
    hits = searcher.search("混成マナ")
    assert hits and all(h.corrected is None for h in hits)
    assert ids(searcher.search("混成マナ"), 1) == ids(searcher.search("混声マナ"), 1)


def test_nonsense_is_not_rewritten_into_something(searcher):
    assert all(h.corrected is None for h in searcher.search("ぜんぜんないことば"))


# -- no result: the closest terms and the English name ---------------------------------------------------------
def test_suggestions_name_the_closest_terms_and_the_english_name(searcher):
    assert searcher.search("lang:en 接死") == []  # no English text here holds Deathtouch
    said = searcher.suggest("接死", lang="en")
    assert said.english == ("Deathtouch",)
    assert "混成" in searcher.suggest("混声").terms


def test_cli_says_what_was_probably_meant(kb_dir):
    result = CliRunner().invoke(main, ["--kb-dir", str(kb_dir), "search", "lang:en 接死"])
    assert result.exit_code == 0
    assert "no results for 'lang:en 接死'; English name: Deathtouch" in result.output
    result = CliRunner().invoke(main, ["--kb-dir", str(kb_dir), "search", "混声マナ"])
    assert result.exit_code == 0 and "also searched as '混成マナ'" in result.output and "601.2b" in result.output


# -- long articles by section, questions -------------------------------------------------------------------------
def test_a_long_article_is_cut_at_its_headings(searcher):
    node = searcher.store.node(NodeKey("", "ja", "wiki:唱える"))
    found = sections(node)
    assert len(found) > 5 and all(s.start < s.end for s in found)
    lead, parts = split_node(node)
    assert lead.text == node.text[:found[0].start] and len(lead.text) < 100 and lead.title == "唱える"
    assert [(p.title, p.text) for _, p in parts] == [(s.title, section_text(node, s)) for s in found]
    assert all(f'id="{element_id(s.anchor)}"' in node.html for s in found)  # the anchors the site's page has
    quoted = next(s for s in found if s.anchor == "参考")
    assert "601.2a" not in section_text(node, quoted)  # the rules it quotes answer for themselves
    short = searcher.store.node(NodeKey("", "ja", "wiki:接死"))
    assert sections(short) == [] and split_node(short) == (short, [])


def test_sections_of_a_made_up_article():
    text = "lead\n" + "a" * 1000 + "\n" + "b" * 1000
    meta = {"sections": [{"title": "A", "anchor": "A x", "start": 5, "blocks": [], "sections": [
        {"title": "B", "anchor": "B", "start": 1006, "blocks": [], "sections": []}]}],
        "quoted_rules": [{"start": 1500, "end": 1600, "rules": ["601"]}]}
    node = Node(id="wiki:T", kind=ARTICLE, lang="ja", text=text, meta=meta)
    a, b = sections(node)
    assert (a.anchor, a.start, a.end, b.start, b.end) == ("A x", 5, 1006, 1006, len(text))
    assert len(section_text(node, b)) == len(text) - 1006 - 100
    assert element_id(a.anchor) == "A_x"
    assert split_section_id(section_id("wiki:T", "A x")) == ("wiki:T", "A x")
    assert split_section_id("cr:601.2f") == ("cr:601.2f", None)


def test_a_hit_is_the_section_at_its_anchor(searcher):
    hit = searcher.search("瞬速を持っているかのように")[0]
    assert hit.id == "wiki:唱える#「瞬速を持っているかのように」の扱い"
    assert hit.url == "wiki/唱える.html#「瞬速を持っているかのように」の扱い"
    assert hit.title == "唱える § 「瞬速を持っているかのように」の扱い" and "瞬速" in hit.snippet


def test_question_words_are_not_required():
    assert content_terms(["対戦", "相手", "モード", "選ぶ", "呪文", "どう", "成る"]) == ["対戦", "相手", "モード", "選ぶ", "呪文"]
    assert content_terms(["いつ"]) == ["いつ"]
    assert content_terms(["how", "total", "cost"]) == ["total", "cost"]


@pytest.mark.parametrize("question, answer", [
    ("対戦相手がモードを選ぶ呪文はどうなる", "ja:cr:601.6"),
    ("行われることになる選択", "ja:cr:601.4"),
    ("呪文の対象の数はいつ決まる", "ja:cr:601.2c"),
    ("コストを変える呪文を唱えたらスタックにある呪文はどうなる", "ja:cr:601.7"),
])
def test_a_question_finds_its_rule_in_the_top_5(searcher, question, answer):
    hits = searcher.search(question)
    assert answer in ids(hits, 5)
    assert hits[0].id != "wiki:唱える"  # not the whole article


def test_a_question_ranks_the_rules_before_the_wiki_sections(searcher):
    """ranking.rank_key: for a question, a long article's sections follow every rule matching words (in every
    surface: site.js sorts with meta.js's section entries)."""
    hits = [h for h in searcher.search("行われることになる選択", limit=30) if h.match in ("words", "some words")]
    sections_at = [split_section_id(h.id)[1] is not None for h in hits]
    assert True in sections_at and False in sections_at and sections_at == sorted(sections_at)
    plain = [h for h in searcher.search("行われる選択", limit=30) if h.match in ("words", "some words")]
    assert any(split_section_id(h.id)[1] is not None for h in plain[:5])  # no question: by score alone


# -- the English CRs (slow) ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def english(bilingual_kb):
    with Store.open(bilingual_kb, create=False) as store, Searcher(store) as s:
        yield s


@pytest.mark.parametrize("typo, rule", [("deathtuch", "702.2"), ("indestructable", "702.12"), ("trampel", "702.19"),
                                        ("sacrafice", "701.21")])
def test_an_english_typo_finds_the_word(english, typo, rule):
    hits = english.search(typo)
    assert ids(hits, 1) == [f"en:cr:{rule}"] and hits[0].corrected


def test_an_exact_word_ranks_above_a_near_one(english):
    hits = english.search("fling")  # a card name in the rules; fly/flying are one edit away
    assert hits and all(h.corrected is None for h in hits)


def test_no_result_names_the_closest_english_term(english, bilingual_kb):
    assert english.search("deathtuchzz") == []  # three edits away: too far to correct, near enough to suggest
    assert english.suggest("deathtuchzz").terms[0] == "deathtouch"
    result = CliRunner().invoke(main, ["--kb-dir", str(bilingual_kb), "search", "deathtuchzz"])
    assert "no results for 'deathtuchzz'; closest terms: deathtouch" in result.output


def test_names_the_japanese_text_gives_reach_the_english_rules(english):
    assert ids(english.search("マナ能力"), 1) == ["en:cr:605"]  # rule 605〔マナ能力〕
    assert ids(english.search("連繋"), 1) == ["en:cr:702.47"]  # 連繋(rule 702.47 参照)
    assert ids(english.search("lang:en 多人数戦ルール"), 1) == ["en:cr:8"]


def test_the_static_search_has_the_same_sections(kb_dir):
    from kb.site.gather import gather_site
    from kb.site.search_export import search_doc, search_entries

    with Store.open(kb_dir, create=False) as store:
        site = gather_site(store)
    docs = {d.url: d for entry in search_entries(site) for d in search_doc(entry)}
    section = docs["wiki/唱える.html#「瞬速を持っているかのように」の扱い"]
    assert section.label == "唱える § 「瞬速を持っているかのように」の扱い" and "瞬速" in section.body
    assert len(docs["wiki/唱える.html"].body) < 100  # the article itself: its lead
    assert "wiki/接死.html" in docs and not any(url.startswith("wiki/接死.html#") for url in docs)


@pytest.mark.slow
def test_the_static_search_has_the_typo_lexicon(bilingual_site):
    """search/l.js: the Latin terms a typo may become, with their frequencies (site.js corrects as kb.search.fuzzy
    does: the browser's answers are tests/test_search_oneview.py's, kind typo)."""
    text = (bilingual_site / "search" / "l.js").read_text(encoding="utf-8")
    lexicon = json.loads(text[len('window.__kbSearch("l",'):].rstrip().removesuffix(");"))
    assert lexicon["deathtouch"] > 1 and lexicon["indestructibl"] > 1
    assert "deathtuch" not in lexicon and all(is_latin_candidate(t) for t in lexicon)
    assert browser_constants()["minFuzzy"] == 4 and browser_constants()["twoEdits"] == 7


def test_a_section_hit_keys_its_article(searcher):
    hit = next(h for h in searcher.search("瞬速を持っているかのように") if "#" in h.id)
    assert hit.key == NodeKey("", "ja", "wiki:唱える") and searcher.store.node(hit.key) is not None
