"""Rule numbers: parsing, normalisation in any width and prefix, ranges — property-tested."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from ingest.refs import find_rule_refs
from kb import rulenum

chapters = st.integers(1, 9)
letters = st.sampled_from(rulenum.LETTERS)


@st.composite
def rule_numbers(draw):
    chapter = draw(chapters)
    depth = draw(st.integers(0, 3))
    if depth == 0:
        return str(chapter)
    section = f"{chapter}{draw(st.integers(0, 99)):02d}"
    if depth == 1:
        return section
    rule = f"{section}.{draw(st.integers(1, 199))}"
    return rule if depth == 2 else rule + draw(letters)


def to_fullwidth(s: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in s)


@given(rule_numbers())
def test_parse_round_trips(number):
    parsed = rulenum.parse(number)
    assert parsed is not None and str(parsed) == number
    if parsed.parent is not None:
        assert number.startswith(str(parsed.parent))


@given(rule_numbers(), st.sampled_from(["", "CR:", "CR", "cr：", "rule ", "Rule ", "ルール"]), st.booleans())
def test_normalize_any_width_and_prefix(number, prefix, wide):
    typed = prefix + number
    if wide:
        typed = to_fullwidth(typed)
    assert rulenum.normalize(typed) == number


@given(rule_numbers())
def test_normalize_is_idempotent_and_nfkc_stable(number):
    once = rulenum.normalize(unicodedata.normalize("NFKC", to_fullwidth(number)))
    assert once == number and rulenum.normalize(once) == once


def test_not_rule_numbers():
    for text in ["", "0", "1000", "601.2l", "601.2o", "abc", "6011", "601.2ff", "60.1"]:
        assert rulenum.normalize(text) is None, text
    assert rulenum.normalize("120.4.") == "120.4"  # the trailing period of "the rule alone" is the caller's business


@given(rule_numbers().filter(lambda n: rulenum.parse(n).letter is not None), letters)
def test_letter_ranges_skip_l_and_o(first, last_letter):
    expanded = rulenum.expand_range(first, last_letter)
    parsed = rulenum.parse(first)
    if rulenum.LETTERS.index(last_letter) < rulenum.LETTERS.index(parsed.letter):
        assert expanded == []
    else:
        assert expanded[0] == first and expanded[-1].endswith(last_letter)
        assert not any(x[-1] in "lo" for x in expanded)
        assert len(expanded) == rulenum.LETTERS.index(last_letter) - rulenum.LETTERS.index(parsed.letter) + 1


def test_sort_order_is_numeric():
    numbers = ["702.60", "702.6", "702.6a", "702", "7", "702.10", "100.1", "6"]
    assert sorted(numbers, key=rulenum.sort_key) == ["100.1", "6", "7", "702", "702.6", "702.6a", "702.10", "702.60"]


def test_reference_forms():
    cases = {
        "(rule 508.8参照)": ["508.8"],
        "rule 118.8、rule 118.9 参照": ["118.8", "118.9"],
        "rule 714〔英雄譚・カード〕参照": ["714"],
        "rules 601.2f–h": ["601.2f", "601.2g", "601.2h"],
        "rule 601.2a-d": ["601.2a", "601.2b", "601.2c", "601.2d"],
        "rules 508.8 and 509.1": ["508.8", "509.1"],
        "rules 702.19b, 702.19c, and 702.19d": ["702.19b", "702.19c", "702.19d"],
        "CR:601.2f": ["601.2f"], "(CR:601.3)": ["601.3"], "CR:601.2f-h": ["601.2f", "601.2g", "601.2h"],
        "CR601.2f": ["601.2f"], "CR:708": ["708"],
        "see rule 702.6.": ["702.6"],
        "rule 702.19k for the complete list": ["702.19k"],
        "ruler 601.2": [], "601.2 alone": [],
    }
    for text, expected in cases.items():
        assert [r.target for r in find_rule_refs(text)] == expected, text
    assert [(r.kind, r.target) for r in find_rule_refs("See section 4, “Zones.”")] == [("section", "4")]


def test_l_and_o_are_never_subrule_letters_anywhere():
    import re

    from ingest.cr_text import SUBRULE_RE
    from ingest.wisdom_guild import RULE_LINE_RE
    from kb.search.analysis import analyze
    from kb.splitter import JapaneseSplitter

    for letter in "lo":
        number = f"601.2{letter}"
        assert rulenum.parse(number) is None and rulenum.normalize(number) is None
        assert not re.fullmatch(rulenum.NUMBER, number) and not re.fullmatch(rulenum.CITED, number)
        assert [r.target for r in find_rule_refs(f"see rule {number}.")] == ["601.2"]  # the rule, not a subrule
        assert rulenum.expand_range("601.2k", "p") == ["601.2k", "601.2m", "601.2n", "601.2p"]
        assert number not in {t.text for t in analyze(JapaneseSplitter(), f"rule {number}")}
        # line parsers read the candidate whole, so that parse() rejects it and the parser reports it
        assert SUBRULE_RE.match(f"{number} text").group(1) == number and RULE_LINE_RE.match(number).group(1) == number


def test_rule_number_patterns_are_written_only_in_rulenum():
    """The grammar's pieces (a subrule letter class, a section's three digits) appear nowhere else."""
    import re
    from pathlib import Path

    repo = Path(__file__).resolve().parent.parent
    written = re.compile(r"a-km-np-z|\[1-9\]\\d\\d|\[1-9\]\[0-9\]\[0-9\]|\\d\{1,3\}\[a-z\]")
    found = [f"{p.relative_to(repo)}:{m.group()}" for folder in ("kb", "ingest") for p in sorted((repo / folder).rglob("*.py"))
             if p.name != "rulenum.py" for m in written.finditer(p.read_text(encoding="utf-8"))]
    assert found == []
