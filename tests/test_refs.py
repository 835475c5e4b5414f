"""Every reference form of the Japanese (and English) CR, one test each: ingest/refs.py is the one place they live."""

from __future__ import annotations

import pytest

from ingest.refs import find_rule_refs


def found(text):
    return [(r.kind, r.target, text[r.start:r.end]) for r in find_rule_refs(text)]


def test_rule():
    assert found("プレイヤーはその値を宣言する(rule 107.3 参照)。") == [("rule", "107.3", "107.3")]


def test_subrule():
    assert found("rule 601.2f 参照") == [("rule", "601.2f", "601.2f")]


def test_subrule_range_with_hyphen():
    assert [t for _, t, _ in found("呪文の提示(rule 601.2a-d)")] == ["601.2a", "601.2b", "601.2c", "601.2d"]


def test_subrule_range_written_in_full_with_a_fullwidth_tilde():
    refs = found("rule 601.2a～601.2c 参照")
    assert [(k, t) for k, t, _ in refs] == [("rule", "601.2a"), ("rule", "601.2b"), ("rule", "601.2c")]
    assert {s for _, _, s in refs} == {"601.2a～601.2c"}


def test_two_rules_each_with_rule():
    assert [t for _, t, _ in found("代替コストや追加コスト(rule 118.8、rule 118.9 参照)")] == ["118.8", "118.9"]


def test_list_joined_by_the_japanese_comma():
    assert [t for _, t, _ in found("rule 702.19c、702.19d 参照")] == ["702.19c", "702.19d"]


def test_section_with_title_in_brackets():
    text = "ゲームは巻き戻される(rule 728〔不正な処理の扱い〕参照)。"
    assert found(text) == [("rule", "728", "728")]


def test_section_with_title_in_quotes():
    assert found("rule 708「裏向きの呪文やパーマネント」参照。") == [("rule", "708", "708")]


def test_chapter_with_title_in_brackets():
    assert found("3人以上で始めるゲームである。rule 8〔多人数戦ルール〕参照。") == [("section", "8", "8")]


def test_chapter_alone():
    assert found("カジュアル変種は rule 9 にある。") == [("section", "9", "9")]


@pytest.mark.parametrize("text", ["See section 8, “Multiplayer Rules.”", "セクション8「多人数戦ルール」参照。"])
def test_chapter_as_section(text):
    assert found(text) == [("section", "8", "8")]


def test_chapters_listed():
    assert [t for _, t, _ in found("See sections 8 and 9.")] == ["8", "9"]


def test_english_rule_forms():
    assert [t for _, t, _ in found("See rules 508.8 and 509.1, and rules 601.2f–h.")] == [
        "508.8", "509.1", "601.2f", "601.2g", "601.2h"]


@pytest.mark.parametrize("text", ["CR:601.2f", "(CR:601.2f)", "CR601.2f", "CR：601.2f"])
def test_wiki_forms(text):
    assert [t for _, t, _ in found(text)] == ["601.2f"]


@pytest.mark.parametrize("text", ["rule 601.2 のコスト", "2人のプレイヤー", "rule 10 点", "rule 8.5", "rules 80 枚"])
def test_a_chapter_is_one_digit_alone(text):
    assert not [r for r in find_rule_refs(text) if r.kind == "section"]
