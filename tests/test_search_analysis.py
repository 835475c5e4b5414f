"""kb.search.analysis: the terms the index and the query share (real Sudachi, no mocks)."""

from __future__ import annotations

import pickle
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from kb.search.analysis import (
    analyze,
    bigram_terms,
    fold_with_offsets,
    index_pairs,
    index_terms,
    light_stem,
    query_terms,
    surface_terms,
    text_analyzer,
)
from kb.splitter import JapaneseSplitter

SPLITTER = JapaneseSplitter()  # the system dictionary alone, as a knowledge base without glossary compounds


def test_inflections_share_the_dictionary_form():
    assert query_terms(SPLITTER, "唱えた") == query_terms(SPLITTER, "唱えられる") == query_terms(SPLITTER, "唱える") == ["唱える"]


def test_width_and_katakana_variants_give_the_same_query_terms():
    assert (query_terms(SPLITTER, "ﾏﾅ･ｺｽﾄ") == query_terms(SPLITTER, "マナ・コスト") == query_terms(SPLITTER, "マナコスト")
            == ["マナコスト"])
    assert query_terms(SPLITTER, "６０１．２ｆ") == query_terms(SPLITTER, "601.2f") == ["601.2f"]
    assert query_terms(SPLITTER, "ＡＢＣ") == query_terms(SPLITTER, "abc")


def test_index_holds_parts_of_compounds_and_of_dotted_katakana_words():
    assert "起因" in index_terms(SPLITTER, "状況起因処理")
    terms = index_terms(SPLITTER, "マナ・コストを支払う")
    assert {"マナコスト", "マナ", "コスト"} <= set(terms)


def test_long_vowel_variants_are_unified():
    assert query_terms(SPLITTER, "コントローラ") == query_terms(SPLITTER, "コントローラー")
    assert query_terms(SPLITTER, "プレイヤー") == query_terms(SPLITTER, "プレーヤー")


def test_english_light_stemming_and_stop_words():
    assert query_terms(SPLITTER, "Casting the spells") == ["cast", "spell"]
    assert light_stem("abilities") == light_stem("ability") == "ability"
    assert light_stem("tapped") == light_stem("taps") == "tap"
    assert light_stem("manifested") == "manifest"


def test_rule_numbers_stay_whole_and_702_6_is_not_702_60():
    assert "702.6" in index_terms(SPLITTER, "See rule 702.6.")
    assert "702.6" not in index_terms(SPLITTER, "See rule 702.60.")
    assert "601.2a" in query_terms(SPLITTER, "rule 601.2a-d")


def test_function_words_are_dropped_but_positions_stay_adjacent():
    terms = analyze(SPLITTER, "呪文を唱える", index=False)
    assert [t.text for t in terms] == ["呪文", "唱える"]
    assert [t.pos for t in terms] == [0, 1]


def test_offsets_point_into_the_original_text_even_for_half_width_kana():
    text = "あなたはﾌﾟﾚｲﾔｰを選ぶ"
    spans = {t.text: text[t.start:t.end] for t in analyze(SPLITTER, text)}
    assert spans[query_terms(SPLITTER, "プレイヤー")[0]] == "ﾌﾟﾚｲﾔｰ"
    folded, starts, ends = fold_with_offsets("ｶﾞ６")
    assert folded == "ガ6" and starts == [0, 2] and ends == [2, 3]


def test_bigram_fallback_covers_japanese_runs_only():
    assert bigram_terms("未知語abc") == ["未知", "知語"]
    assert bigram_terms("マナ・コスト") == bigram_terms("マナコスト")


def test_surface_terms_map_what_was_typed_to_index_terms():
    assert surface_terms(SPLITTER, "唱えた") == [("唱え", "唱える")]
    assert surface_terms(SPLITTER, "ﾏﾅ･ｺｽﾄを") == [("マナ・コスト", "マナコスト")]
    assert surface_terms(SPLITTER, "Casting 601.2f") == [("casting", "cast"), ("601.2f", "601.2f")]


def test_the_analyzer_survives_pickling():
    analyzer = pickle.loads(pickle.dumps(text_analyzer(SPLITTER)))
    assert [t.text for t in analyzer("唱えた", mode="query")] == ["唱える"]


def test_the_analyzer_is_a_whoosh_tokenizer_and_filter_chain_picklable_before_and_after_use():
    from whoosh.analysis import CompositeAnalyzer, Filter, Tokenizer

    analyzer = text_analyzer(SPLITTER)
    assert isinstance(analyzer, CompositeAnalyzer)
    assert isinstance(analyzer.items[0], Tokenizer)
    assert len(analyzer.items) > 2 and all(isinstance(f, Filter) for f in analyzer.items[1:])
    before = pickle.loads(pickle.dumps(analyzer))
    used = [t.text for t in analyzer("呪文を唱えた", mode="query")]
    after = pickle.loads(pickle.dumps(analyzer))
    assert before == after == analyzer
    assert [t.text for t in before("呪文を唱えた", mode="query")] == used == ["呪文", "唱える"]
    assert [t.text for t in after("状況起因処理", mode="index")] == index_terms(SPLITTER, "状況起因処理")


FRAGMENTS = ["呪文", "を", "唱えた", "マナ・コスト", "状況起因処理", "プレイヤー", "は", "601.2f", "rule", "Casting",
             "spells", "、", "。", "ﾏﾅ", "ｺｽﾄ", "予示された", "2/2", "クリーチャー・カード", " ", "コントローラ", "の"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=12))
def test_every_query_term_is_an_index_term_of_the_same_text(parts):
    text = "".join(parts)
    assert set(query_terms(SPLITTER, text)) <= set(index_terms(SPLITTER, text))


def _to_full_width(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=12))
def test_terms_do_not_depend_on_character_width(parts):
    text = "".join(parts)
    assert index_terms(SPLITTER, _to_full_width(text)) == index_terms(SPLITTER, text)
    assert index_terms(SPLITTER, unicodedata.normalize("NFKC", text)) == index_terms(SPLITTER, text)


MIXED = st.lists(st.one_of(
    st.sampled_from(FRAGMENTS),
    st.text(alphabet="あいカタナ漢字ｶﾞﾏﾅ・･ーabcXYZ0123456789.／ ,、。", min_size=1, max_size=8),
    st.from_regex(r"[1-9][0-9]{2}\.[0-9]{1,3}[a-f]?", fullmatch=True),
    st.integers(min_value=0, max_value=99999).map(str)), min_size=1, max_size=10)


def _chain_tokens(text, mode, start_pos=0, start_char=0):
    analyzer = text_analyzer(SPLITTER)
    return [(t.text, t.pos, t.startchar, t.endchar)
            for t in analyzer(text, positions=True, chars=True, mode=mode, start_pos=start_pos,
                              start_char=start_char)]


@settings(max_examples=80, deadline=None)
@given(MIXED, st.integers(min_value=0, max_value=5), st.integers(min_value=0, max_value=50))
def test_the_whoosh_chain_gives_exactly_the_terms_of_analyze(parts, start_pos, start_char):
    text = " ".join(parts) if len(parts) % 2 else "".join(parts)
    for mode, index in (("index", True), ("query", False)):
        expected = [(t.text, t.pos, t.start, t.end) for t in analyze(SPLITTER, text, index=index)]
        assert _chain_tokens(text, mode) == expected
        shifted = [(term, pos + start_pos, a + start_char, b + start_char) for term, pos, a, b in expected]
        assert _chain_tokens(text, mode, start_pos, start_char) == shifted
    assert dict(index_pairs(SPLITTER, text)) == _positions_by_term(analyze(SPLITTER, text, index=True))


def _positions_by_term(terms):
    positions: dict[str, list[int]] = {}
    for t in terms:
        positions.setdefault(t.text, []).append(t.pos)
    return positions

