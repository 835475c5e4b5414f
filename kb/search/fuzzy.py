"""Forgiving queries: what a query that the index does not know was probably meant to say.

Contract: :func:`lexicon` reads the terms of an open Whoosh reader once (the ``title`` and ``body`` fields, and the
readings of their Japanese terms); :func:`corrected` rewrites a query whose words the index does not know into one
it does, or gives None:

- a Latin word of four or more letters the index lacks becomes the indexed term nearest it within edit distance 1
  (2 for a word of seven or more letters; one of its first two letters right), the most frequent on a tie:
  ``deathtuch`` → ``deathtouch``, ``indestructable`` → ``indestructibl`` (the stem of indestructible);
- a Japanese word the index lacks becomes an indexed term of the same reading (an IME slip: ``混声`` → ``混成``);
  an all-kana run (known words or not) is read as a sequence of indexed terms' readings, longest first
  (``こんせいまな`` → ``混成マナ``, ``よじする`` → ``予示する``, ``とくべつなしょり`` → ``特別な処理``), the kana no
  reading covers kept as typed (``する`` is dropped by the analysis).

:func:`closest` names the indexed terms nearest a query for a "no results" message. The readings come from Sudachi
(:func:`kb.search.names.reading_of`) and from the names table (:attr:`kb.search.names.NameTable.readings`: a
glossary term's ruby); nothing here writes. The static search mirrors the Latin part (``site.js``: the nearest
term of ``search/l.js``, the same distance, first letters, tie-break and placing of the rewritten query's hits) and
the kana runs (the readings of ``search/r/``, :mod:`kb.site.search_readings`); not the IME slips of kanji words,
whose readings come from Sudachi's dictionary.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kb.search import analysis
from kb.search.names import NameTable, reading_form, reading_of
from kb.splitter import JapaneseSplitter

MIN_FUZZY_CHARS = 4  # shorter Latin words are not corrected (too many neighbours)
TWO_EDITS_CHARS = 7  # from this length a Latin word may be two edits away
SUGGEST_EDITS = 3  # how far a suggested term may be from a word that found nothing
MAX_READING_CHARS = 12  # the longest reading matched against an all-kana run
_FIELDS = ("title", "body")


@dataclass(frozen=True)
class Lexicon:
    """The terms of one index reader: Latin terms by length, Japanese terms by reading, and how many documents
    hold each candidate (read when needed)."""

    terms: frozenset[str]
    latin: dict[int, tuple[str, ...]]
    readings: dict[str, tuple[str, ...]]  # reading (katakana) → indexed terms and names, most frequent first
    frequency: dict[str, int]


def lexicon(reader: Any, splitter: JapaneseSplitter, names: NameTable) -> Lexicon:
    """The :class:`Lexicon` of an open Whoosh ``reader`` (about 20 ms for the English CR; Sudachi reads each Japanese
    term once)."""
    terms = {t.decode("utf-8") for field in _FIELDS if field in reader.schema for t in reader.lexicon(field)}
    latin: dict[int, list[str]] = defaultdict(list)
    frequency: dict[str, int] = {}
    by_reading: dict[str, list[str]] = defaultdict(list)
    for term in terms:
        if term.isascii():
            if is_latin_candidate(term):
                latin[len(term)].append(term)
            continue
        if len(term) < 2:
            continue
        reading = reading_form(term) or reading_of(splitter, term)
        if reading:
            by_reading[reading].append(term)
    for reading, japanese in names.readings.items():
        for name in japanese:
            if name not in by_reading[reading]:
                by_reading[reading].append(name)
    for group in by_reading.values():
        for term in group:
            frequency[term] = sum(reader.doc_frequency(f, term) for f in _FIELDS if f in reader.schema)
        group.sort(key=lambda t: (-frequency[t], t))
    return Lexicon(frozenset(terms), {n: tuple(sorted(ts)) for n, ts in latin.items()},
                   {r: tuple(ts) for r, ts in by_reading.items()}, frequency)


def is_latin_candidate(term: str) -> bool:
    """Whether an index term may replace a Latin typo: letters only, a stem that stems to itself (safe to type);
    the static search's lexicon (``search/l.js``, :mod:`kb.site.search_export`) holds the same terms."""
    return term.isascii() and term.isalpha() and analysis.light_stem(term) == term


def corrected(lex: Lexicon, reader: Any, splitter: JapaneseSplitter, text: str) -> str | None:
    """``text`` with each word the index lacks replaced as the module doc says; None when nothing was replaced."""
    out, at, changed = [], 0, False
    for kind, run, start, end, _ in analysis.runs(text):
        replacement = None
        if kind == analysis.WORD:
            term = analysis.light_stem(run)
            if len(run) >= MIN_FUZZY_CHARS and analysis.kept(kind, run) and term not in lex.terms:
                replacement = next(iter(_near_words(lex, reader, term)), None)
        elif kind == analysis.JAPANESE_RUN:
            replacement = _japanese(lex, splitter, run)
        if replacement is not None:
            out += [text[at:start], replacement]
            at, changed = end, True
    return "".join([*out, text[at:]]) if changed else None


def closest(lex: Lexicon, reader: Any, splitter: JapaneseSplitter, text: str, limit: int = 5) -> tuple[str, ...]:
    """Indexed terms near the words of ``text`` (edit distance for Latin words, reading for Japanese ones)."""
    found: list[str] = []
    for kind, run, _start, _end, _ in analysis.runs(text):
        if kind == analysis.WORD and len(run) >= MIN_FUZZY_CHARS:
            found += _near_words(lex, reader, analysis.light_stem(run), SUGGEST_EDITS)
        elif kind == analysis.JAPANESE_RUN:
            rewritten = _japanese(lex, splitter, run)
            found += [rewritten] if rewritten else []
            reading = reading_form(run) or reading_of(splitter, run)
            found += lex.readings.get(reading or "", ())
    return tuple(dict.fromkeys(t for t in found if t != text))[:limit]


def _near_words(lex: Lexicon, reader: Any, word: str, most: int | None = None) -> list[str]:
    """Indexed Latin terms within edit distance ``most`` (default: as the module doc says) of ``word``, nearest and
    most frequent first."""
    most = most if most is not None else 2 if len(word) >= TWO_EDITS_CHARS else 1
    scored = [(d, t) for n in range(len(word) - most, len(word) + most + 1) for t in lex.latin.get(n, ())
              if (t[0] == word[0] or t[1:2] == word[1:2]) and (d := edit_distance(word, t, most)) <= most]
    if not scored:
        return []
    frequency = {t: sum(reader.doc_frequency(f, t) for f in _FIELDS if f in reader.schema) for _, t in scored}
    return [t for _, t in sorted(scored, key=lambda s: (s[0], -frequency[s[1]], s[1]))]


def needs_correction(known: Callable[[str], bool], splitter: JapaneseSplitter, text: str) -> bool:
    """Whether :func:`corrected` may rewrite ``text`` (``known``: whether the index holds a term; no lexicon is
    needed to tell): a word the index lacks, or a Japanese run read as kanji one by one although the run is no
    indexed term (``予時``: 予, 時)."""
    for kind, run, _start, _end, _ in analysis.runs(text):
        if kind == analysis.JAPANESE_RUN:
            if reading_form(run) is not None or _suspect(known, splitter, run):
                return True
        elif kind == analysis.WORD and analysis.kept(kind, run) and not known(analysis.light_stem(run)):
            return True
    return False


def _suspect(known: Callable[[str], bool], splitter: JapaneseSplitter, run: str) -> bool:
    words = analysis.analyze(splitter, run, index=False)
    return any(not known(w.text) for w in words) or (
        not known(run) and any(w.end - w.start == 1 and not reading_form(w.text) for w in words))


def _typed_reading(splitter: JapaneseSplitter, text: str) -> str | None:
    """The reading Sudachi gives ``text`` as typed, each kanji read even alone (a query's guess, not a name's)."""
    parts = [m.reading_form() for m in splitter.tokenizer(system=True).tokenize(analysis.fold(text))
             if any(c.isalnum() for c in m.surface())]
    return reading_form("".join(parts)) if parts and all(parts) else None


def _japanese(lex: Lexicon, splitter: JapaneseSplitter, run: str) -> str | None:
    """A rewrite of one Japanese run whose words the index lacks (or of a kana run: Sudachi reads kana words of its own,
    ``とくべつなしょり`` as 特別 alone, which the browser cannot tell), or None."""
    if reading_form(run) is None and not _suspect(lex.terms.__contains__, splitter, run):
        return None
    words = analysis.analyze(splitter, run, index=False)
    whole = lex.readings.get(_typed_reading(splitter, run) or "", ())
    if whole and whole[0] != run:  # the run as one word of the same reading (予時 → 予示)
        return whole[0]
    reading = reading_form(run)
    if reading is not None:  # all kana: read it as a sequence of known readings, every word of it known
        rewritten = _by_readings(lex, run, reading)
        known = rewritten is not None and all(w in lex.terms for w in analysis.query_terms(splitter, rewritten))
        return rewritten if known else None
    out, at, changed = [], 0, False
    for w in words:
        if w.text in lex.terms:
            continue
        same = lex.readings.get(reading_of(splitter, run[w.start:w.end]) or "", ())
        if same and same[0] != w.text:
            out += [run[at:w.start], same[0]]
            at, changed = w.end, True
    return "".join([*out, run[at:]]) if changed else None


def _by_readings(lex: Lexicon, run: str, reading: str) -> str | None:
    """An all-kana ``run`` (its ``reading``, one katakana per character) as known terms where their readings
    cover it, longest first; the kana between them as typed. None when no reading of two or more kana matches."""
    out, i, matched = [], 0, False
    while i < len(reading):
        for n in range(min(MAX_READING_CHARS, len(reading) - i), 1, -1):
            terms = lex.readings.get(reading[i:i + n])
            if terms:
                out.append(terms[0])
                i, matched = i + n, True
                break
        else:
            out.append(run[i])
            i += 1
    return "".join(out) if matched else None


def edit_distance(a: str, b: str, most: int) -> int:
    """The Levenshtein distance of ``a`` and ``b``, or ``most + 1`` as soon as it must exceed ``most``."""
    if abs(len(a) - len(b)) > most:
        return most + 1
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        if min(current) > most:
            return most + 1
        previous = current
    return previous[-1]

