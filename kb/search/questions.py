"""Questions typed as questions (「対戦相手がモードを選ぶ呪文はどうなる」, "when does a player …"): the words that
ask, not what is asked about, do not have to be in the answer.

Contract: :data:`QUESTION_TERMS` are query terms (as :func:`kb.search.analysis.query_terms` gives them: どう, 成る,
いつ, 出来る, how, doe …); :func:`content_terms` drops them from a query's terms when at least
:data:`MIN_CONTENT_TERMS` others remain (``いつ`` alone is still searched). ``kb search`` words and the static
search (``question`` in :func:`kb.site.search_export.browser_constants`) both apply it, so it ranks alike in
every surface; that a rule answers before an MTG Wiki section explaining it is the ranking's
(:func:`kb.search.ranking.section_weight`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from kb.search.analysis import light_stem

JAPANESE_QUESTION_FORMS = ("どう", "成る", "いつ", "何", "どれ", "どちら", "どこ", "誰", "起こる", "遣る", "出来る", "時",
                           "こと", "場合", "良い")  # Sudachi normalized forms
ENGLISH_QUESTION_WORDS = ("how", "what", "when", "where", "why", "which", "who", "does", "do", "did", "can", "happen",
                          "happens", "will", "would", "should", "could", "there", "if", "while")
QUESTION_TERMS = frozenset([*JAPANESE_QUESTION_FORMS, *map(light_stem, ENGLISH_QUESTION_WORDS)])  # as query terms
MIN_CONTENT_TERMS = 2

T = TypeVar("T")


def content_terms(terms: Sequence[T]) -> list[T]:
    """``terms`` without the question terms, when :data:`MIN_CONTENT_TERMS` or more are left; else all of them.
    ``terms`` are strings, or records with a ``text`` attribute (:class:`kb.search.analysis.Term`)."""
    kept = [t for t in terms if (t if isinstance(t, str) else getattr(t, "text", t)) not in QUESTION_TERMS]
    return kept if len(kept) >= MIN_CONTENT_TERMS else list(terms)
