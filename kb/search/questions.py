"""Questions typed as questions (「対戦相手がモードを選ぶ呪文はどうなる」, "when does a player …"): the words that
ask, not what is asked about, do not have to be in the answer.

Contract: :data:`QUESTION_TERMS` are query terms (as :func:`kb.search.analysis.query_terms` gives them: どう, 成る,
いつ, 出来る, how, doe …); :func:`content_terms` drops them from a query's terms when at least
:data:`MIN_CONTENT_TERMS` others remain (``いつ`` alone is still searched). ``kb search`` words and the static
search (``question`` in :func:`kb.site.search_export.browser_constants`) both apply it. :func:`nearness` ranks
a text that holds two of the words next to each other, as the query has them, above one that holds them apart;
for a question (:func:`is_question`), a rule answers before an MTG Wiki section explaining it (kb.search.query).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import Any, TypeVar

from kb.search.analysis import light_stem

JAPANESE_QUESTION_FORMS = ("どう", "成る", "いつ", "何", "どれ", "どちら", "どこ", "誰", "起こる", "遣る", "出来る", "時",
                           "こと", "場合", "良い")  # Sudachi normalized forms
ENGLISH_QUESTION_WORDS = ("how", "what", "when", "where", "why", "which", "who", "does", "do", "did", "can", "happen",
                          "happens", "will", "would", "should", "could", "there", "if", "while")
QUESTION_TERMS = frozenset([*JAPANESE_QUESTION_FORMS, *map(light_stem, ENGLISH_QUESTION_WORDS)])  # as query terms
MIN_CONTENT_TERMS = 2
NEAR_SLOP = 2  # two query words next to each other in the query, at most this far apart in a text: a closer answer
NEAR_BOOST = 0.2

T = TypeVar("T")


def content_terms(terms: Sequence[T]) -> list[T]:
    """``terms`` without the question terms, when :data:`MIN_CONTENT_TERMS` or more are left; else all of them.
    ``terms`` are strings, or records with a ``text`` attribute (:class:`kb.search.analysis.Term`)."""
    kept = [t for t in terms if (t if isinstance(t, str) else getattr(t, "text", t)) not in QUESTION_TERMS]
    return kept if len(kept) >= MIN_CONTENT_TERMS else list(terms)


def is_question(terms: Sequence[T]) -> bool:
    """Whether a query of these terms asks a question (:func:`content_terms` drops some of them)."""
    return len(content_terms(terms)) < len(terms)


def nearness(terms: Sequence[str]) -> Any:
    """The optional Whoosh query that scores a text higher where each two words adjacent in the query are near each
    other (``body`` within :data:`NEAR_SLOP`): among texts holding every word, the one that says it together, as
    the answer to a question does, first. None for fewer than two words."""
    from whoosh import query as wq

    pairs = [list(p) for p in pairwise(terms) if p[0] != p[1]]
    if not pairs:
        return None
    return wq.Or([wq.Phrase("body", p, slop=NEAR_SLOP, boost=NEAR_BOOST) for p in pairs])
