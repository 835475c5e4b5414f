"""Issue 21, item 12: in a CR text a record numbered like no rule (``999.99999z``), a BOM mid-file, a zero-width
space, full-width digits or a Cyrillic letter in a rule number made the rule vanish into the previous one without a
warning. Replayed on the bundled Japanese CR (CRLF, ``100.1.`` rules) and a real English CR (LF): full-width and
mixed-width numbers are read as rules, a BOM or zero-width character is noise that never hides a rule, and any other
odd number at the start of a record line is a warning naming its line, never text of the rule above it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hostile import SAMPLE_CR

from ingest.cr_text import INCOMPLETE, parse_cr_text

JA_LINE = "100.1b 多人数戦とは"  # how the line of rule 100.1b begins in the sample
EN_NAME = "MagicCompRules-2025-11-14.txt"
EN_LINE = "100.1b A multiplayer game"


def _edit(data: bytes, old: str, new: str) -> bytes:
    """``data`` with its one line starting with ``old`` starting with ``new`` instead."""
    text = data.decode("utf-8")
    assert text.count("\n" + old) == 1
    return text.replace("\n" + old, "\n" + new).encode("utf-8")


def _rules(data: bytes, name: str) -> dict[str, tuple[str, tuple[str, ...]]]:
    return {n.number: (n.text, n.examples) for n in parse_cr_text(data, name).nodes if n.number}


def _messages(data: bytes, name: str) -> list[str]:
    return [f"{d.source}:{d.where}: {d.message}" for d in parse_cr_text(data, name).diagnostics]


@pytest.fixture(scope="module")
def ja() -> bytes:
    return SAMPLE_CR.read_bytes()


@pytest.fixture(scope="module")
def en(corpus_dir: Path) -> bytes:
    return (corpus_dir / EN_NAME).read_bytes()


@pytest.mark.parametrize("number", ["１００．１ｂ", "1００.1b", "１００.１b", "100．1b", "１００．１ｂ．"])
def test_full_width_digits_are_read_as_the_rule(ja: bytes, number: str) -> None:
    edited = _edit(ja, JA_LINE, JA_LINE.replace("100.1b", number))
    assert _rules(edited, SAMPLE_CR.name) == _rules(ja, SAMPLE_CR.name)
    assert _messages(edited, SAMPLE_CR.name) == _messages(ja, SAMPLE_CR.name)


def test_a_full_width_rule_and_section_number(ja: bytes) -> None:
    edited = _edit(ja, "100.1. ", "１００．１．\u3000")
    edited = _edit(edited, "100. 総則", "１００．\u3000総則")
    assert _rules(edited, SAMPLE_CR.name) == _rules(ja, SAMPLE_CR.name)


@pytest.mark.parametrize("noise", ["\ufeff", "\u200b", "\u200c", "\u200d", "\u2060"])
@pytest.mark.parametrize("where", ["before", "inside", "after"])
def test_bom_and_zero_width_characters_never_hide_a_rule(ja: bytes, en: bytes, noise: str, where: str) -> None:
    number = {"before": noise + "100.1b", "inside": "100." + noise + "1b", "after": "100.1b" + noise}[where]
    for data, name, line in ((ja, SAMPLE_CR.name, JA_LINE), (en, EN_NAME, EN_LINE)):
        edited = _edit(data, line, line.replace("100.1b", number))
        assert _rules(edited, name) == _rules(data, name)
        assert _messages(edited, name) == _messages(data, name)


def test_a_bom_inside_the_text_is_dropped(ja: bytes) -> None:
    edited = _edit(ja, JA_LINE, JA_LINE.replace("多人数戦", "多人\ufeff数\u200b戦"))
    assert _rules(edited, SAMPLE_CR.name) == _rules(ja, SAMPLE_CR.name)


@pytest.mark.parametrize("odd", ["999.99999z", "100.1\u0430", "100.1l", "100.1o", "1000.1a", "100.1bc"])
def test_an_odd_number_is_a_warning_naming_its_line_never_part_of_the_rule_above(ja: bytes, en: bytes, odd: str) -> None:
    for data, name, line in ((ja, SAMPLE_CR.name, JA_LINE), (en, EN_NAME, EN_LINE)):
        before = _rules(data, name)
        lineno = data.decode("utf-8").splitlines().index(next(x for x in data.decode("utf-8").splitlines()
                                                              if x.startswith(line))) + 1
        edited = _edit(data, line, f"{odd} odd record\n{line}")
        after = _rules(edited, name)
        assert after["100.1a"] == before["100.1a"]  # the rule above keeps its text
        assert "odd record" not in "".join(text for text, _ in after.values())
        warnings = [m for m in _messages(edited, name) if m not in _messages(data, name) and INCOMPLETE not in m]
        assert warnings == [f"{name}:line {lineno}: {odd} is not a rule number; the line is skipped"]


def test_a_long_line_of_digits_and_dots_parses_in_linear_time(ja: bytes) -> None:
    line = ("1234567890." * (256 * 1024 // 11)) + " x"
    edited = _edit(ja, JA_LINE, f"{line}\n{JA_LINE}")
    started = time.perf_counter()
    messages = _messages(edited, SAMPLE_CR.name)
    assert time.perf_counter() - started < 2.0
    assert any("is not a rule number" in m for m in messages)
