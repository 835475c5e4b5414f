"""The one ranking of word matches, shared by every search surface: :mod:`kb.search.query` scores with it from the
Whoosh index, :mod:`kb.site.search_export` writes its per-document weights for the browser, and ``site.js`` mirrors
:func:`rank_key` over them (parity: ``tests/test_search_oneview.py``).

A document is one node at the URL the site shows it on. For each looked-up index term a document scores its
:func:`term_weight` (BM25's term-frequency part of the body, plus the title's × :data:`TITLE_BOOST`, against fixed
reference lengths, lengths as the index stores them: :func:`field_length`) times the term's :func:`idf`; a character
bigram of text the index has no term for scores :func:`gram_weight` × idf × ½, and counts 1/(bigrams of its piece)
towards coverage (in units of :data:`COVER_SCALE` per term: :func:`gram_cover`). The words of an English name a
Japanese query stands for count (one unit, and their scores) only in documents holding all of them. Documents are
ordered by coverage (terms found), then score, then document order (:func:`doc_order`); a long article's section
weighs a :func:`section_weight` of that, a glossary entry an :func:`entry_weight`. All arithmetic is on integers, so
Python and JavaScript rank alike to the last place. At most :data:`MAX_LOOKUPS` terms and bigrams are looked up."""

from __future__ import annotations

import math

K1, B = 1.2, 0.75
REF_LEN = 30  # reference body length (terms): fixed, so a document's weights depend on that document only
TITLE_REF_LEN = 3
TITLE_BOOST = 3.0
WEIGHT_SCALE = 10  # weights are stored as round(weight × WEIGHT_SCALE)
IDF_SCALE = 1000  # idf is used as round(idf × IDF_SCALE)
TERM_SHARE, GRAM_SHARE = 2, 1  # a term's score counts twice a bigram's
MAX_LOOKUPS = 96  # terms and bigrams one query looks up
COVER_SCALE = 720720  # the coverage of one term: divisible by every bigram count up to 16
SECTION_DIVISOR = 2  # a long article's section weighs half a whole document: the rule answers, the section explains
ENTRY_SHARE = (2, 3)  # a glossary entry weighs ⅔ of a rule (the rule answers, the entry defines the word and cites
# it), above a long article's section (½: the CR's glossary before the wiki's explanation)


def field_length(length: int) -> int:
    """A field's length as the Whoosh index stores it (one byte, approximate above a few dozen terms)."""
    from whoosh.util.numeric import byte_to_length, length_to_byte

    return int(byte_to_length(length_to_byte(length)))


def _tf(tf: int, length: int, ref_len: int) -> float:
    return tf * (K1 + 1) / (tf + K1 * (1 - B + B * field_length(length) / ref_len)) if tf else 0.0


def term_weight(body_tf: int, body_len: int, title_tf: int, title_len: int) -> int:
    """The stored weight of a term in a document."""
    return round(WEIGHT_SCALE * (_tf(body_tf, body_len, REF_LEN) + TITLE_BOOST * _tf(title_tf, title_len, TITLE_REF_LEN)))


def gram_weight(tf: int, length: int) -> int:
    """The stored weight of a character bigram in a document (``length``: the document's bigrams)."""
    return round(WEIGHT_SCALE * _tf(tf, length, REF_LEN))


def section_weight(weight: int, section: bool) -> int:
    """The stored weight of a term or bigram in a document that is one section of a long article
    (:mod:`kb.search.sections`, ``section``) or not."""
    return weight // SECTION_DIVISOR if section else weight


def entry_weight(weight: int, entry: bool) -> int:
    """The stored weight of a term or bigram in a document that is a glossary entry (``entry``) or not. An entry is a
    line or two that repeats its term, so by length alone it outscored the rule holding the same words (総コストを支払った:
    the entry 総コスト above rule 601.2h); a query that is the whole term still finds the entry and its rule first
    (:mod:`kb.search.query`, glossary terms)."""
    return weight * ENTRY_SHARE[0] // ENTRY_SHARE[1] if entry else weight


def idf(documents: int, df: int) -> int:
    """The scaled inverse document frequency of a term held by ``df`` of ``documents`` documents."""
    return round(IDF_SCALE * math.log(1 + (documents - df + 0.5) / (df + 0.5)))


def gram_cover(grams: int) -> int:
    """The coverage one found bigram of a piece of ``grams`` bigrams adds."""
    return COVER_SCALE // grams


def rank_key(coverage: int, score: int, order: object, behind: bool = False) -> tuple[bool, int, int, object]:
    """Sort key of a scored document (ascending = best first); ``behind``: a long article's section answering a
    question (:mod:`kb.search.questions`), ranked after every other document (the rule answers, the section
    explains it)."""
    return (behind, -coverage, -score, order)


def doc_order(group: int, place: tuple, lang: str) -> tuple:
    """The order documents are numbered in (the tie-break): rules by number, then glossary terms, then the rest
    (``group`` 0, 1, 2), each by ``place``; Japanese before English at one URL."""
    return (group, place, 0 if lang == "ja" else 1)
