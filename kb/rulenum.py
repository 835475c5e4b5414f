"""The one rule-number grammar: the patterns every parser, linker and renderer builds its regular expressions from,
and parse, normalise (any width, any prefix), expand ranges, order.

Forms: chapter ``6``, section ``601``, rule ``601.2``, subrule ``601.2f``. Subrule letters run a–z without ``l``
and ``o`` (:data:`LETTERS`; :data:`LETTER` never matches them, so ``601.2l`` is rule 601.2 followed by a letter).
``normalize('６０１．２ｆ') == normalize('CR:601.2f') == '601.2f'``.

Patterns (regular-expression source, no groups; compose them, never write ``[a-z]`` for a subrule letter again):
:data:`CHAPTER`, :data:`SECTION`, :data:`RULE` (``601.2``), :data:`LETTER`, :data:`SUBRULE` (``601.2f``),
:data:`NUMBER` (any of the four forms), :data:`CITED` (a section, rule or subrule as cited in text: a bare digit is
too ambiguous to be a chapter there, and a letter must not run on into a word); :data:`SUBRULE_CANDIDATE` for line
parsers that check what they read with :func:`parse` and report a bad letter, :data:`NUMBER_CANDIDATE` for the
number-like words they report as numbering no rule.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

from kb.fold import fold

LETTERS = "abcdefghijkmnpqrstuvwxyz"  # no l, no o
LETTER = "[a-km-np-z]"
CHAPTER = "[1-9]"
SECTION = r"[1-9]\d\d"
RULE = rf"{SECTION}\.\d{{1,3}}"
SUBRULE = rf"{RULE}{LETTER}"
NUMBER = rf"{CHAPTER}(?:\d\d(?:\.\d{{1,3}}{LETTER}?)?)?"
CITED = rf"{SECTION}(?:\.\d{{1,3}}(?:{LETTER}(?![a-z]))?)?"
# Where a parser reads a line that should start with a rule number, any letter is read, so that :func:`parse` rejects
# 601.2l and the parser reports it as a bad number instead of misreading the line.
LETTER_CANDIDATE = "[a-z]"
SUBRULE_CANDIDATE = rf"{RULE}{LETTER_CANDIDATE}"
# A word at the start of a record line that reads as a number but may be none (999.99999z, 1000.1a, 601.2 with a
# Cyrillic letter): line parsers match it after every real form, to report the line instead of reading it as text.
NUMBER_CANDIDATE = r"\d{3,}\.\S+"

# a number's parts as groups (chapter digit, the section's two digits, rule, letter): the static search builds its
# query patterns from these two (kb/site/search_export.py puts them in its meta file)
NUMBER_PARTS = r"([1-9])(?:(\d\d)(?:\.(\d{1,3})(" + LETTER + r")?)?)?"
QUERY_PREFIX = r"(?:cr\s*[:：]?|rules?|ルール|総合ルール|section|sections|セクション)"  # what a typed number may start with
RANGE_DASH = "[-–~〜]"  # between the two ends of a typed range: 601.2a-d, 601.2a〜601.2d
RANGE_END = rf"{LETTER}|[0-9][0-9.]*{LETTER}?"  # what a typed range may end with: d, 601.2d, 601.5
MAX_RULE_SPAN = 200  # the most rules a range of rules (601.2-601.5) expands to, less one
MAX_SECTION_SPAN = 100  # the same for a range of sections (601-603)
_FULL = re.compile(rf"^{NUMBER_PARTS}$")
_PREFIX = re.compile(rf"^\s*{QUERY_PREFIX}\s*", re.I)


class RuleNumber(NamedTuple):
    chapter: int
    section: int | None = None  # 601
    rule: int | None = None  # the 2 of 601.2
    letter: str | None = None  # the f of 601.2f

    @property
    def kind(self) -> str:
        if self.letter:
            return "subrule"
        if self.rule is not None:
            return "rule"
        if self.section is not None:
            return "section"
        return "chapter"

    def __str__(self) -> str:
        if self.section is None:
            return str(self.chapter)
        s = str(self.section)
        if self.rule is not None:
            s += f".{self.rule}"
            if self.letter:
                s += self.letter
        return s

    @property
    def parent(self) -> RuleNumber | None:
        if self.letter:
            return RuleNumber(self.chapter, self.section, self.rule)
        if self.rule is not None:
            return RuleNumber(self.chapter, self.section)
        if self.section is not None:
            return RuleNumber(self.chapter)
        return None

    def sort_key(self) -> tuple:
        return (self.chapter, self.section or -1, self.rule if self.rule is not None else -1, self.letter or "")


@lru_cache(maxsize=65536)
def parse(text: str) -> RuleNumber | None:
    """Parse a bare rule number ('601.2f', '601', '6'); None if it is not one (cached: a build asks for the same
    numbers many times)."""
    m = _FULL.match(text)
    if not m:
        return None
    ch, sec, rule, letter = m.groups()
    if sec is None:
        return RuleNumber(int(ch))
    section = int(ch + sec)
    if rule is None:
        return RuleNumber(int(ch), section)
    return RuleNumber(int(ch), section, int(rule), letter)


def normalize(text: str) -> str | None:
    """Canonical rule number for user input in any width or with a prefix, else None.

    A trailing period ('120.4.') is dropped here; callers that care (search: "the rule alone") check it.
    """
    s = _PREFIX.sub("", fold(text).strip()).strip()
    s = s.rstrip(".")
    n = parse(s)
    return str(n) if n else None


def letter_range(first: str, last: str) -> list[str]:
    """Letters from first to last inclusive in subrule order (skipping l and o); [] if reversed/invalid."""
    if first not in LETTERS or last not in LETTERS:
        return []
    i, j = LETTERS.index(first), LETTERS.index(last)
    return list(LETTERS[i : j + 1]) if i <= j else []


def expand_range(first: str, last: str) -> list[str]:
    """Expand '601.2a'..'d' or '601.2a'..'601.2d' (or '601.2'..'601.5') to every rule number between."""
    a = parse(first)
    if a is None:
        return []
    if len(last) == 1 and last.isalpha():
        if not a.letter:
            return []
        return [f"{a.section}.{a.rule}{x}" for x in letter_range(a.letter, last)]
    b = parse(last)
    if b is None or b.kind != a.kind:
        return []
    if a.letter and b.letter:  # the same kind: both have a letter, or both a rule, or both a section
        if (a.section, a.rule) != (b.section, b.rule):
            return []
        return [f"{a.section}.{a.rule}{x}" for x in letter_range(a.letter, b.letter)]
    if a.rule is not None and b.rule is not None:
        if a.section != b.section or b.rule < a.rule or b.rule - a.rule > MAX_RULE_SPAN:
            return []
        return [f"{a.section}.{r}" for r in range(a.rule, b.rule + 1)]
    if a.section is not None and b.section is not None:
        if b.section < a.section or b.section - a.section > MAX_SECTION_SPAN:
            return []
        return [str(s) for s in range(a.section, b.section + 1)]
    return [str(c) for c in range(a.chapter, b.chapter + 1)]


def sort_key(number: str) -> tuple:
    n = parse(number)
    return n.sort_key() if n else (99, 0, 0, number)
