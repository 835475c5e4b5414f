"""Text analysis shared by the index, the query and the static site: one function turns text into terms.

Contract — what the index holds (the static site must reproduce this exactly; use :func:`index_terms`,
:func:`query_terms`, :func:`surface_terms` and :func:`bigram_terms` when exporting, never a re-implementation):

1. **Folding** (:func:`kb.fold.fold_with_offsets`, the one fold, then :func:`kb.search.variants.normalise`: old
   and variant kanji to their standard forms, ``豫示`` → ``予示``, ``總`` → ``総``): every character is
   NFKC-normalised on its own and lower-cased
   (``６０１．２ｆ`` → ``601.2f``, ``ﾏﾅ･ｺｽﾄ`` → ``マナ・コスト``, ``ＡＢＣ`` → ``abc``); a half-width voiced mark is
   recombined with the kana before it (``ｶﾞ`` → ``ガ``). Offsets of the folded text map back to the original, so
   highlights land on the characters the user sees.
2. **Runs** (:data:`_RUN`, left to right over the folded text): a rule number (``kb.rulenum.RULE``, optionally a
   subrule letter, never l or o) not preceded by a digit or ``.`` nor followed by ``[a-z0-9]``; else a Latin word
   ``[a-z0-9]+``; else a Japanese run: non-ASCII word characters (``\\w``) and middle dots. Everything else separates.
3. **Latin words**: a rule number (``601.2f``, ``702.6``) is one term as it is; English stop words
   (:data:`ENGLISH_STOP_WORDS`) and one-letter words are dropped; the others go through :func:`light_stem` (plural
   ``-s``/``-es``/``-ies``, ``-ing``/``-ed`` with undoubling, final ``-e`` on long stems: ``casting``/``casts``/``cast``
   → ``cast``).
4. **Japanese runs**: SudachiPy (``sudachidict-core``) split mode C; each morpheme's ``normalized_form``
   (``唱えた``/``唱えられる`` → ``唱える``, ``コントローラ`` → ``コントローラー``). Morphemes whose first part of
   speech is in :data:`DROPPED_POS` (particles, auxiliaries, symbols, blanks, adnominals such as その) and the
   normalized forms in :data:`JAPANESE_STOP_FORMS` (する, いる, ある, 事, 物, それ, これ …) are dropped; あなた is
   kept. Katakana terms lose a trailing long-vowel mark after three or more characters (``コンピューター`` =
   ``コンピュータ``). In the **index** a mode-C morpheme that splits further in mode A also yields its mode-A parts
   (so ``起因`` finds ``状況起因処理``), and katakana words joined by a middle dot also yield the joined word
   (``マナ・コスト`` → ``マナ``, ``コスト``, ``マナコスト``). A **query** yields the mode-C terms only, and a dotted
   katakana compound only as its joined word — which the index always holds, whether the text wrote
   ``マナ・コスト`` or ``マナコスト``.
5. **Bigrams** (second field, :func:`bigram_terms`): over the folded text with middle dots removed, every pair of
   adjacent characters inside a Japanese run (a one-character run is kept whole). Index and query are the same.

Positions count the kept mode-C terms (and Latin words), so a quoted phrase matches across dropped particles
(``"呪文を唱える"`` = ``呪文``, ``唱える`` at consecutive positions); extra index terms share their word's position.

Sudachi runs in the :class:`kb.splitter.JapaneseSplitter` every function that splits takes first (made once per
command; its user dictionary is the index's: :func:`kb.search.userdict.prepare`); text of any length is analysed
(the splitter hands Sudachi pieces under its input limit).

Terms depend on the Sudachi dictionary (``sudachidict-core``, pinned by the environment); an exported vocabulary
is therefore tied to the index it was exported from.

Each step is one function, written once: :func:`runs` (steps 1–2), :func:`japanese_words` (step 4, Sudachi:
only Japanese runs reach it, and a mode-C word's mode-A parts come from ``Morpheme.split``, not from a second
tokenisation), :func:`kept` (stop words, one-letter words, dropped parts of speech, Japanese stop forms),
:func:`stemmed` (step 3) and :func:`next_position`. Whoosh's way, :func:`text_analyzer` chains them as a
``Tokenizer | Filter …`` (:class:`RunTokenizer`, :class:`JapaneseFormFilter`, :class:`StopWordFilter`,
:class:`EnglishStemFilter`, :class:`PositionFilter`; each filter maps its step over the tokens, and Whoosh's
``mode="query"`` selects the query side). :func:`analyze` composes the same functions over plain tuples, without
Whoosh tokens, in one pass per text (:func:`_terms`): the chain and the plain path give the same terms, positions
and offsets. :class:`BigramTokenizer` is :func:`bigram_analyzer`. The index stores the text fields with
:class:`PreAnalysedPositions`, which takes a :class:`PreAnalysed` value (:func:`index_pairs`,
:func:`bigram_pairs`) as it is: the index build analyses each text once, and text without Japanese (most of the
English CR) skips the offsets. The analyzers are picklable (Whoosh pickles them with the schema): the only state
they hold is the splitter of :class:`JapaneseFormFilter`, which pickles as its user dictionary's path and is left
out of the filter's equality (a schema is the same whichever splitter its analyzer was made with).
"""

from __future__ import annotations

import operator
import pickle
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from typing import Any

from whoosh.analysis import Filter, Token, Tokenizer
from whoosh.formats import Positions
from whoosh.system import pack_uint

from kb import fold as _fold
from kb import rulenum
from kb.search.variants import normalise as _variants
from kb.splitter import JapaneseSplitter

ENGLISH_STOP_WORDS = frozenset(
    "a an and are as at be by for from in is it its of on or that the this to with".split())
JAPANESE_STOP_FORMS = frozenset(["為る", "居る", "有る", "事", "物", "様", "の", "ん", "其れ", "此れ", "何れ", "等"])
DROPPED_POS = frozenset(["助詞", "助動詞", "補助記号", "空白", "記号", "連体詞"])
MIDDLE_DOTS = "・･"
LONG_VOWEL = "ー"

_JAPANESE_CHAR = re.compile(r"(?:(?![\x00-\x7f])[\w・･])")  # what a Japanese run is made of
_RUN = re.compile(rf"(?P<number>(?<![0-9.]){rulenum.RULE}{rulenum.LETTER}?(?![a-z0-9]))|(?P<word>[a-z0-9]+)"
                  rf"|(?P<ja>{_JAPANESE_CHAR.pattern}+)")
_JAPANESE_RUN = re.compile(f"{_JAPANESE_CHAR.pattern}+")
_KATAKANA = re.compile(r"^[\u30a1-\u30fa\u30fc]+$")
# starts only where a katakana run starts: tried inside a run, it fails the same way, once per character of the
# run, and a long run without a middle dot took quadratic time (9 s for 49,000 katakana)
_KATAKANA_DOTTED = re.compile(r"(?<![\u30a1-\u30fa\u30fc])[\u30a1-\u30fa\u30fc]+(?:[・･][\u30a1-\u30fa\u30fc]+)+")


@dataclass(frozen=True)
class Term:
    """One analysed term: its text, its position and the span of original text it came from."""

    text: str
    pos: int
    start: int
    end: int


# -- folding: kb.fold (the one fold), then the variant forms (kb.search.variants) --------------------------------
def fold(text: str) -> str:
    """Step 1: :func:`kb.fold.fold`, then old and variant kanji to their standard forms (豫 → 予)."""
    return _variants(_fold.fold(text))


def fold_with_offsets(text: str) -> tuple[str, list[int], list[int]]:
    """:func:`fold` with each folded character's start and end in ``text``."""
    folded, starts, ends = _fold.fold_with_offsets(text)
    return _variants(folded), starts, ends


def fold_with_offsets_or_none(text: str) -> tuple[str, list[int] | None, list[int] | None]:
    """:func:`fold_with_offsets`, the offsets None when they are the identity (cheaper)."""
    folded, starts, ends = _fold.fold_with_offsets_or_none(text)
    return _variants(folded), starts, ends


# -- English ------------------------------------------------------------------------------------------------
@lru_cache(maxsize=65536)
def light_stem(word: str) -> str:
    """A light English stemmer: plurals, -ing/-ed (undoubling a doubled final consonant), final -e on long stems."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("sses") or word.endswith(("ches", "shes", "xes", "zes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if len(word) >= 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
                word = word[:-1]
            break
    if word.endswith("e") and len(word) >= 5:
        word = word[:-1]
    return word


# -- Japanese: Sudachi through kb.splitter.JapaneseSplitter, handed to every function that splits ----------------
def katakana_fold(term: str) -> str:
    """Drop a trailing long-vowel mark from a katakana word of three or more other characters."""
    if len(term) >= 4 and term.endswith(LONG_VOWEL) and _KATAKANA.match(term):
        return term[:-1]
    return term


# -- the steps: each one function, mapped by a Whoosh filter (below) and composed by :func:`_terms` ---------------
# A piece is a plain tuple (kind, text, start, end, char offsets), start and end into the original text. Only a
# Japanese run from step 1 has char offsets (None when the folded run's characters are start, start + 1, …): the
# original span of each of its characters, which step 4 needs.
NUMBER, WORD, JAPANESE_RUN = "number", "word", "ja"  # step 1: the kinds of run (the groups of _RUN)
FORM, PART, FUNCTION = "form", "part", "function"  # step 4: a positioned word, an extra index term, a dropped POS


def runs(text: str, *, offsets: bool = True) -> list[tuple]:
    """Steps 1–2: fold ``text`` and cut it into runs, (kind, folded run, start, end, char offsets) each; with
    ``offsets=False``, (kind, folded run) pairs alone, cheaper (for the index build, which needs no offsets)."""
    folded, starts, ends = fold_with_offsets_or_none(text)
    if not offsets:
        return [(NUMBER, number) if number else (WORD, word) if word else (JAPANESE_RUN, japanese)
                for number, word, japanese in _RUN.findall(folded)]
    if starts is None or ends is None:
        return [(m.lastgroup, m.group(), m.start(), m.end(), None) for m in _RUN.finditer(folded)]
    out = []
    for m in _RUN.finditer(folded):
        a, b = m.span()
        char_offsets = (starts[a:b], ends[a:b]) if m.lastgroup == JAPANESE_RUN else None
        out.append((m.lastgroup, m.group(), starts[a], ends[b - 1], char_offsets))
    return out


def japanese_words(splitter: JapaneseSplitter, run: tuple, *, index: bool) -> list[tuple[str, str, int, int, None]]:
    """Step 4 on one Japanese run: Sudachi mode-C normalized forms (katakana-folded) as FORM pieces, particles and
    the like (:data:`DROPPED_POS`) as FUNCTION pieces; with ``index``, mode-A parts and the parts of a dotted
    katakana compound as PART pieces. A dotted compound's joined word is a FORM at its first part."""
    _, chunk, start, _, offsets = run
    if offsets is None:
        def span(b: int, e: int) -> tuple[int, int]:
            return start + b, start + e
    else:
        def span(b: int, e: int) -> tuple[int, int]:
            return offsets[0][b], offsets[1][e - 1]
    mode_a, mode_c = splitter.modes
    dotted = [(m.start(), m.end(), re.sub(f"[{MIDDLE_DOTS}]", "", m.group(0)))
              for m in _KATAKANA_DOTTED.finditer(chunk)]
    out: list[tuple[str, str, int, int, None]] = []
    for offset, m in splitter.words(chunk, mode_c):
        b, e = offset + m.begin(), offset + m.end()
        kind = FUNCTION if m.part_of_speech()[0] in DROPPED_POS else FORM
        compound = next((d for d in dotted if d[0] <= b < d[1]), None)
        if compound is not None:
            if b == compound[0]:  # the joined word, at the first part's position
                out.append((FORM, katakana_fold(compound[2]), *span(compound[0], compound[1]), None))
            if index:
                out.append((PART if kind == FORM else FUNCTION, katakana_fold(m.normalized_form()), *span(b, e), None))
            continue
        out.append((kind, katakana_fold(m.normalized_form()), *span(b, e), None))
        if index and kind == FORM and m.dictionary_id() > 0:  # a user word: its system pieces of 2+ characters
            for p in splitter.tokenizer(system=True).tokenize(m.surface(), mode_c):
                if len(p.surface()) >= 2 and p.part_of_speech()[0] not in DROPPED_POS:
                    out.append((PART, katakana_fold(p.normalized_form()), *span(b + p.begin(), b + p.end()), None))
        elif index and kind == FORM:
            parts = m.split(mode_a)
            if len(parts) > 1:
                for p in parts:
                    out.append((FUNCTION if p.part_of_speech()[0] in DROPPED_POS else PART,
                                katakana_fold(p.normalized_form()), *span(offset + p.begin(), offset + p.end()), None))
    return out


def kept(kind: str, text: str) -> bool:
    """Steps 3–4, what is dropped: English stop words and one-letter words, FUNCTION pieces, Japanese stop forms."""
    if kind == WORD:
        return text not in ENGLISH_STOP_WORDS and not (len(text) == 1 and text.isalpha())
    return kind == NUMBER or (kind != FUNCTION and text not in JAPANESE_STOP_FORMS)


def stemmed(kind: str, text: str) -> str:
    """Step 3, stemming: a Latin word through :func:`light_stem`; a rule number or a Japanese term as it is."""
    return light_stem(text) if kind == WORD else text


def next_position(pos: int, kind: str) -> int:
    """Positions: each kept word takes the next position; a PART shares its word's."""
    return pos if kind == PART else pos + 1


@lru_cache(maxsize=65536)
def _term(kind: str, text: str) -> str | None:
    """:func:`kept` then :func:`stemmed`: the term of a piece, or None when it is dropped."""
    return stemmed(kind, text) if kept(kind, text) else None


def _terms(splitter: JapaneseSplitter, text: str, *, index: bool) -> list[tuple[str, int, int, int]]:
    """(term, position, start, end) of each kept word of ``text``: the steps composed over plain tuples, as the
    Whoosh chain (:func:`text_analyzer`) runs them over tokens. Positions count the kept words (a dropped word takes
    none); a PART shares its word's position."""
    out: list[tuple[str, int, int, int]] = []
    append = out.append
    pos = -1
    for run in runs(text):
        for kind, word, start, end, _ in (japanese_words(splitter, run, index=index) if run[0] == JAPANESE_RUN
                                          else (run,)):
            term = _term(kind, word)
            if term is not None:
                pos = next_position(pos, kind)
                append((term, pos if pos >= 0 else 0, start, end))
    return out


# -- Whoosh glue ------------------------------------------------------------------------------------------------
class PreAnalysed(tuple):
    """A field value already analysed: (term, [positions]) pairs, each term once. The index build analyses each
    text once and hands Whoosh these instead of the text (see :func:`kb.search.index.node_fields`)."""

    @classmethod
    def of(cls, pairs: Iterable[tuple[str, int]]) -> PreAnalysed:
        """From (term, position) pairs in position order."""
        positions: dict[str, list[int]] = {}
        for term, pos in pairs:
            found = positions.get(term)
            if found is None:
                positions[term] = [pos]
            else:
                found.append(pos)
        return cls(positions.items())


class PreAnalysedPositions(Positions):
    """Whoosh's ``Positions`` format (what ``TEXT(phrase=True)`` stores) that also takes a :class:`PreAnalysed`
    value as it is, without running the field's analyzer again; the encoded postings are Whoosh's, byte for byte
    (the number of positions, then the pickled position deltas)."""

    def word_values(self, value: Any, analyzer: Any, **kwargs: Any) -> Iterator[tuple[str, int, float, bytes]]:
        if not isinstance(value, PreAnalysed):
            yield from super().word_values(value, analyzer, **kwargs)
            return
        for term, count, weight, encoded in self.postings(value):
            yield term.decode("utf-8"), count, weight, encoded

    def postings(self, value: PreAnalysed) -> list[tuple[bytes, int, float, bytes]]:
        """(term as UTF-8, frequency, weight, encoded positions) for each term: what Whoosh's ``field.index``
        gives for the text (the index build calls this directly, see :class:`kb.search.codec.BulkWriter`)."""
        boost = self.field_boost
        out = []
        for term, poslist in value:
            count = len(poslist)
            deltas = poslist if count == 1 else [poslist[0], *map(operator.sub, poslist[1:], poslist)]
            out.append((term.encode("utf-8"), count, count * boost, pack_uint(count) + pickle.dumps(deltas, 2)))
        return out


class RunTokenizer(Tokenizer):
    """Steps 1–2 (:func:`runs`): one token per run, ``kind`` and ``runoffsets`` beside Whoosh's attributes;
    ``startchar``/``endchar`` are offsets into ``value`` until :class:`PositionFilter`."""

    def __call__(self, value: str, positions: bool = False, chars: bool = False, keeporiginal: bool = False,
                 removestops: bool = True, start_pos: int = 0, start_char: int = 0, tokenize: bool = True,
                 mode: str = "", **kwargs: Any) -> Iterator[Token]:
        token = Token(positions, chars, removestops=removestops, mode=mode, start_pos=start_pos,
                      start_char=start_char, **kwargs)
        for token.kind, token.text, token.startchar, token.endchar, token.runoffsets in runs(value):
            yield token


class JapaneseFormFilter(Filter):
    """Step 4 (:func:`japanese_words`): a Japanese run becomes its words, split by ``splitter``; mode-A and dotted
    parts in ``"index"`` mode only (Whoosh passes ``mode="query"`` when parsing a query). Two such filters are equal
    whatever their splitters (an index's schema names the steps; its dictionary is in the index identity)."""

    def __init__(self, splitter: JapaneseSplitter):
        self.splitter = splitter

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __call__(self, tokens: Iterable[Any]) -> Iterator[Any]:
        for t in tokens:
            if t.kind != JAPANESE_RUN:
                yield t
                continue
            run = (t.kind, t.text, t.startchar, t.endchar, t.runoffsets)
            for kind, text, start, end, offsets in japanese_words(self.splitter, run, index=t.mode != "query"):
                t.kind, t.text, t.startchar, t.endchar, t.runoffsets = kind, text, start, end, offsets
                yield t


class StopWordFilter(Filter):
    """Drops (:func:`kept`): English stop words, one-letter words, function words, Japanese stop forms."""

    def __call__(self, tokens: Iterable[Any]) -> Iterator[Any]:
        for t in tokens:
            if kept(t.kind, t.text):
                yield t


class EnglishStemFilter(Filter):
    """Step 3 (:func:`stemmed`): light stemming of Latin words."""

    def __call__(self, tokens: Iterable[Any]) -> Iterator[Any]:
        for t in tokens:
            t.text = stemmed(t.kind, t.text)
            yield t


class PositionFilter(Filter):
    """Positions (:func:`next_position`) counting the kept words, from ``start_pos``; offsets from ``start_char``."""

    def __call__(self, tokens: Iterable[Any]) -> Iterator[Any]:
        pos = -1
        for t in tokens:
            pos = next_position(pos, t.kind)
            t.pos = t.start_pos + max(pos, 0)
            t.startchar += t.start_char
            t.endchar += t.start_char
            yield t


class BigramTokenizer(Tokenizer):
    """Tokenizer of the fallback field (:func:`bigrams`)."""

    def __call__(self, value: str, positions: bool = False, chars: bool = False, keeporiginal: bool = False,
                 removestops: bool = True, start_pos: int = 0, start_char: int = 0, tokenize: bool = True,
                 mode: str = "", **kwargs: Any) -> Iterator[Token]:
        token = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        for text, pos, start, end in _bigrams(value):
            token.text, token.pos = text, start_pos + pos
            token.startchar, token.endchar = start_char + start, start_char + end
            yield token


def text_analyzer(splitter: JapaneseSplitter) -> Any:
    """The analyzer of the ``title`` and ``body`` fields: the steps as a Whoosh chain splitting with ``splitter``
    (picklable: see :mod:`kb.splitter`), giving what :func:`analyze` gives, in ``"index"`` or ``"query"`` mode."""
    return RunTokenizer() | JapaneseFormFilter(splitter) | StopWordFilter() | EnglishStemFilter() | PositionFilter()


def bigram_analyzer() -> BigramTokenizer:
    """The analyzer of the ``grams`` field."""
    return BigramTokenizer()


def index_pairs(splitter: JapaneseSplitter, text: str) -> PreAnalysed:
    """The ``title``/``body`` field value of ``text`` for the index: its index terms and their positions, as
    :func:`_terms` gives them; text without Japanese (most of the English CR) skips the offsets."""
    positions: dict[str, list[int]] = {}
    pos = -1
    for kind, run in runs(text, offsets=False):
        if kind == JAPANESE_RUN:  # Sudachi's words need the offsets of the run
            return PreAnalysed.of((term, pos) for term, pos, _, _ in _terms(splitter, text, index=True))
        term = _term(kind, run)
        if term is not None:
            pos = next_position(pos, kind)
            found = positions.get(term)
            if found is None:
                positions[term] = [pos]
            else:
                found.append(pos)
    return PreAnalysed(positions.items())


def bigram_pairs(text: str) -> PreAnalysed:
    """The ``grams`` field value of ``text`` for the index."""
    return PreAnalysed.of((term, pos) for term, pos, _, _ in _bigrams(text))


# -- plain functions -----------------------------------------------------------------------------------------
def analyze(splitter: JapaneseSplitter, text: str, *, index: bool = True) -> list[Term]:
    """Terms of ``text`` with positions and ORIGINAL offsets; ``index=False`` gives the query-side terms."""
    return [Term(*t) for t in _terms(splitter, text, index=index)]


def index_terms(splitter: JapaneseSplitter, text: str) -> list[str]:
    """The terms the index holds for ``text`` (title and body fields), in order, with repeats."""
    return [t.text for t in analyze(splitter, text, index=True)]


def query_terms(splitter: JapaneseSplitter, text: str) -> list[str]:
    """The terms a query ``text`` is looked up by (every one of them is also an index term of the same words)."""
    return [t.text for t in analyze(splitter, text, index=False)]


def surface_terms(splitter: JapaneseSplitter, text: str) -> list[tuple[str, str]]:
    """(folded surface, term) for each query-side word of ``text``: ``唱えた`` → ``[("唱え", "唱える")]``.

    For a client that cannot run Sudachi (the static site): collect these pairs over the indexed texts, fold the
    typed query (step 1), cut it by longest match against the collected surfaces, and look each piece up by its
    term; a Japanese piece with no surface goes to the bigram field."""
    return [(fold(text[t.start:t.end]), t.text) for t in analyze(splitter, text, index=False)]


def bigram_terms(text: str) -> list[str]:
    """Character bigrams of the Japanese runs of ``text`` (the fallback field; same for index and query)."""
    return [term for term, _, _, _ in _bigrams(text)]


def is_japanese_run(text: str) -> bool:
    """Whether the folded ``text`` is one Japanese run of :func:`bigram_terms` (non-ASCII word characters and middle
    dots): wherever it stands in a text, its bigrams are among that text's."""
    return _JAPANESE_RUN.fullmatch(text) is not None


def bigrams(text: str) -> list[Term]:
    """:func:`bigram_terms` with positions and original offsets."""
    return [Term(*t) for t in _bigrams(text)]


def _bigrams(text: str) -> list[tuple[str, int, int, int]]:
    """(bigram, position, start, end) for :func:`bigrams`."""
    folded, starts, ends = fold_with_offsets_or_none(text)
    if not _JAPANESE_CHAR.search(folded):
        return []
    if starts is None or ends is None:
        starts, ends = list(range(len(folded))), list(range(1, len(folded) + 1))
    out: list[tuple[str, int, int, int]] = []
    for m in _RUN.finditer(folded):
        if m.lastgroup != JAPANESE_RUN:
            continue
        s, e = m.span()
        idx = [i for i in range(s, e) if folded[i] not in MIDDLE_DOTS]
        if len(idx) == 1:
            out.append((folded[idx[0]], len(out), starts[idx[0]], ends[idx[0]]))
        for i, j in pairwise(idx):
            out.append((folded[i] + folded[j], len(out), starts[i], ends[j]))
    return out
