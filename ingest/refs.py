"""Find rule references in rule or article text, in English and Japanese: every reference form of the CR, here only.

Rules and sections (kind ``rule``): ``rule 601.2f``, ``rules 601.2f–h``, ``rule 601.2a-d``, ``rule 601.2a～601.2d``
(ranges expand to each rule), ``rules 508.8 and 509.1``, ``rule 118.8、rule 118.9``, ``rule 702.19c、702.19d``,
``rule 714〔英雄譚・カード〕参照``, ``rule 708「裏向きの呪文やパーマネント」参照``, and the MTG Wiki forms ``CR:601.2f``,
``(CR:601.3)``, ``CR601.2f``, ``CR:708``.
Chapters (kind ``section``, target the chapter digit): ``rule 8〔多人数戦ルール〕参照``, ``rule 9``, ``section 8``,
``sections 8 and 9``, ``セクション8``.
Each found rule gives one :class:`Ref` with the offsets of the number as written (a range's rules share the span
of the range).
"""

from __future__ import annotations

import re

from kb import rulenum
from kb.model import REF_RULE, REF_SECTION, Ref

_NUM = rulenum.CITED
_LETTER = rf"{rulenum.LETTER}(?![a-z])"  # a range's last letter (601.2a-d)
_DASH = r"\s*[-–—~〜～－]\s*"
_ITEM = rf"{_NUM}(?:{_DASH}(?:{_NUM}|{_LETTER}))?"
_SEP = r"(?:\s*[,、]\s*(?:and\s+|or\s+)?|\s+(?:and|or|through)\s+)"
# The words a reference starts with, each written from a literal ("ule", "CR", "ection", "セクション") with the letters
# before it checked behind: a pattern that starts with literals lets the regex engine skip straight to where they occur
# instead of trying every position. Never inside a word: 'overrule 601.2' is no reference.
_RULE_WORD = r"ule(?<=(?<![A-Za-z])[Rr]ule)s?"
_CR = r"CR(?<![A-Za-z]CR)"
_SECTION_WORD = r"ection(?<=(?<![A-Za-z])[Ss]ection)s?"
RULE_LIST_RE = re.compile(rf"(?:{_RULE_WORD}\s*|{_CR}\s*[:：]?\s*)(?P<items>{_ITEM}(?:{_SEP}{_ITEM})*)")
ITEM_RE = re.compile(rf"(?P<first>{_NUM})(?:{_DASH}(?P<last>{_NUM}|{_LETTER}))?")
_CHAPTER = rf"{rulenum.CHAPTER}(?![\d０-９]|\.\d)"
CHAPTER_DIGIT_RE = re.compile(rulenum.CHAPTER)
SECTION_RE = re.compile(
    rf"(?:(?:{_SECTION_WORD}|{_RULE_WORD})\s*|セクション\s*)(?P<items>{_CHAPTER}(?:(?:\s*[,、]\s*(?:and\s+)?|\s+and\s+){_CHAPTER})*)"
)


def find_rule_refs(text: str) -> list[Ref]:
    """Every rule and chapter reference in ``text``, in the order of the forms above (rules, then chapters)."""
    refs: list[Ref] = []
    # Most texts have none of the literals the patterns start with; substring tests skip them faster than a scan can.
    rule_word = "ule" in text
    if rule_word or "CR" in text:
        refs += _rules(text)
    if rule_word or "ection" in text or "セクション" in text:
        refs += _sections(text)
    return refs


def _rules(text: str) -> list[Ref]:
    refs: list[Ref] = []
    for m in RULE_LIST_RE.finditer(text):
        base = m.start("items")
        for item in ITEM_RE.finditer(m.group("items")):
            first, last = item.group("first"), item.group("last")
            start, end = base + item.start(), base + item.end()
            surface = text[start:end]
            targets = rulenum.expand_range(first, last) if last else [first]
            if last and not targets:  # an unreadable range: keep both ends as written
                targets = [first, last] if len(last) > 1 else [first]
            for target in targets:
                refs.append(Ref(REF_RULE, target, surface, start, end))
    return refs


def _sections(text: str) -> list[Ref]:
    refs: list[Ref] = []
    for m in SECTION_RE.finditer(text):
        base = m.start("items")
        for digit in CHAPTER_DIGIT_RE.finditer(m.group("items")):
            refs.append(Ref(REF_SECTION, digit.group(), digit.group(), base + digit.start(), base + digit.end()))
    return refs
