"""Text analysis shared by the index, the query and the static site: one function turns text into terms.

Contract — what the index holds (the static site must reproduce this exactly; use :func:`index_terms`,
:func:`query_terms`, :func:`surface_terms` and :func:`bigram_terms` when exporting, never a re-implementation):

1. **Folding** (:func:`fold_with_offsets`): every character is NFKC-normalised on its own and lower-cased
   (``６０１．２ｆ`` → ``601.2f``, ``ﾏﾅ･ｺｽﾄ`` → ``マナ・コスト``, ``ＡＢＣ`` → ``abc``); a half-width voiced mark is
   recombined with the kana before it (``ｶﾞ`` → ``ガ``). Offsets of the folded text map back to the original, so
   highlights land on the characters the user sees.
2. **Runs** (:data:`_RUN`, left to right over the folded text): a rule number ``[1-9][0-9][0-9].[0-9]{1,3}[a-z]?``
   not preceded by a digit or ``.`` nor followed by ``[a-z0-9]``; else a Latin word ``[a-z0-9]+``; else a
   Japanese run: non-ASCII word characters (``\\w``) and middle dots. Everything else separates.
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

Terms depend on the Sudachi dictionary (``sudachidict-core``, pinned by the environment); an exported vocabulary
is therefore tied to the index it was exported from.

Steps 1–4 run in one pass per text (:func:`_terms`); only Japanese runs reach Sudachi, and a mode-C word's
mode-A parts come from ``Morpheme.split``, not from a second tokenisation.
Whoosh glue: :class:`KbTokenizer` is :func:`text_analyzer`, :class:`BigramTokenizer` is :func:`bigram_analyzer`.
The index stores their fields with :class:`PreAnalysedPositions`, which takes a :class:`PreAnalysed` value
(:func:`index_pairs`, :func:`bigram_pairs`) as it is: the index build analyses each text once, and text without
Japanese (most of the English CR) takes a shorter path to the same terms. The Sudachi tokenizer is created
lazily (the analyzers are pickled with the schema).
"""

from __future__ import annotations

import operator
import pickle
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from whoosh.analysis import Token, Tokenizer
from whoosh.formats import Positions
from whoosh.system import pack_uint

ENGLISH_STOP_WORDS = frozenset(
    "a an and are as at be by for from in is it its of on or that the this to with".split())
JAPANESE_STOP_FORMS = frozenset(["為る", "居る", "有る", "事", "物", "様", "の", "ん", "其れ", "此れ", "何れ", "等"])
DROPPED_POS = frozenset(["助詞", "助動詞", "補助記号", "空白", "記号", "連体詞"])
MIDDLE_DOTS = "・･"
LONG_VOWEL = "ー"

_RUN = re.compile(r"(?P<number>(?<![0-9.])[1-9][0-9][0-9]\.[0-9]{1,3}[a-z]?(?![a-z0-9]))|(?P<word>[a-z0-9]+)"
                  r"|(?P<ja>(?:(?![\x00-\x7f])[\w・･])+)")
_JAPANESE_CHAR = re.compile(r"(?:(?![\x00-\x7f])[\w・･])")  # what a Japanese run is made of
_KATAKANA = re.compile(r"^[\u30a1-\u30fa\u30fc]+$")
_KATAKANA_DOTTED = re.compile(r"[\u30a1-\u30fa\u30fc]+(?:[・･][\u30a1-\u30fa\u30fc]+)+")


@dataclass(frozen=True)
class Term:
    """One analysed term: its text, its position and the span of original text it came from."""

    text: str
    pos: int
    start: int
    end: int


# -- folding -----------------------------------------------------------------------------------------------
def fold_with_offsets(text: str) -> tuple[str, list[int], list[int]]:
    """NFKC + lower-case, character by character; ``starts[i]``/``ends[i]`` is the original span of folded char i."""
    folded, starts, ends = _fold(text)
    if starts is None:
        return folded, list(range(len(text))), list(range(1, len(text) + 1))
    return folded, starts, ends


def _fold(text: str) -> tuple[str, list[int] | None, list[int] | None]:
    """:func:`fold_with_offsets`, with None for the offsets when every character kept its place."""
    if unicodedata.is_normalized("NFKC", text):
        lowered = text.lower()
        if len(lowered) == len(text):
            return lowered, None, None
    pieces = [_fold_char(ch) for ch in text]
    if all(len(p) == 1 for p in pieces) and not any(p in _VOICED_MARKS for p in pieces):
        return "".join(pieces), None, None
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for i, folded in enumerate(pieces):
        if folded in _VOICED_MARKS and out:  # a half-width (semi-)voiced mark
            combined = unicodedata.normalize("NFC", out[-1] + folded.strip())
            if len(combined) == 1:
                out[-1] = combined
                ends[-1] = i + 1
                continue
        for c in folded:
            out.append(c)
            starts.append(i)
            ends.append(i + 1)
    return "".join(out), starts, ends


_VOICED_MARKS = frozenset(["\u3099", "\u309a", " \u3099", " \u309a"])


@lru_cache(maxsize=8192)
def _fold_char(ch: str) -> str:
    return ch.lower() if ch.isascii() else unicodedata.normalize("NFKC", ch).lower()


def fold(text: str) -> str:
    """The folded text alone (see :func:`fold_with_offsets`)."""
    return _fold(text)[0]


def _runs(folded: str):
    """(kind, start, end) over folded text; kind is 'number' (a rule number), 'word' (Latin) or 'ja' (a run)."""
    for m in _RUN.finditer(folded):
        yield m.lastgroup, m.start(), m.end()


# -- English ------------------------------------------------------------------------------------------------
@lru_cache(maxsize=65536)
def light_stem(word: str) -> str:
    """A light English stemmer: plurals, -ing/-ed (undoubling a doubled final consonant), final -e on long stems."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("sses"):
        word = word[:-2]
    elif word.endswith(("ches", "shes", "xes", "zes")):
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


# -- Japanese -----------------------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def _sudachi():
    from sudachipy import Dictionary

    return Dictionary().tokenizer()


@lru_cache(maxsize=1)
def _modes():
    from sudachipy import SplitMode

    return SplitMode.A, SplitMode.C


def katakana_fold(term: str) -> str:
    """Drop a trailing long-vowel mark from a katakana word of three or more other characters."""
    if len(term) >= 4 and term.endswith(LONG_VOWEL) and _KATAKANA.match(term):
        return term[:-1]
    return term


def _japanese_words(folded: str, start: int, end: int, *, index: bool):
    """(surface, normalized, start, end, is_extra, is_function_word) in folded offsets for one Japanese run."""
    mode_a, mode_c = _modes()
    chunk = folded[start:end]
    dotted = [(m.start(), m.end(), re.sub(f"[{MIDDLE_DOTS}]", "", m.group(0)))
              for m in _KATAKANA_DOTTED.finditer(chunk)]
    for m in _sudachi().tokenize(chunk, mode_c):
        b, e = m.begin(), m.end()
        function_word = m.part_of_speech()[0] in DROPPED_POS
        compound = next((d for d in dotted if d[0] <= b < d[1]), None)
        if compound is not None:
            if b == compound[0]:  # the joined word, at the first part's position
                yield compound[2], compound[2], start + compound[0], start + compound[1], False, False
            if index:
                yield m.surface(), m.normalized_form(), start + b, start + e, True, function_word
            continue
        yield m.surface(), m.normalized_form(), start + b, start + e, False, function_word
        if index and not function_word:
            parts = m.split(mode_a)
            if len(parts) > 1:
                for p in parts:
                    yield (p.surface(), p.normalized_form(), start + p.begin(), start + p.end(), True,
                           p.part_of_speech()[0] in DROPPED_POS)


# -- the analysis in one pass ----------------------------------------------------------------------------------
def _terms(text: str, *, index: bool) -> list[tuple[str, int, int, int]]:
    """(term, position, start, end) for each kept word of ``text`` (steps 1–4; offsets into the original text).

    Function words and stop words are dropped before numbering, so positions count the kept words; an extra index
    term (a mode-A part, a joined dotted word) shares its word's position."""
    terms, starts, ends = _folded_terms(text, index=index)
    if starts is None:
        return terms
    return [(term, pos, starts[a], ends[b - 1]) for term, pos, a, b in terms]


def _folded_terms(text: str, *, index: bool):
    """:func:`_terms` with offsets into the folded text, and the folded-to-original offset maps (None: the same)."""
    folded, starts, ends = _fold(text)
    out: list[tuple[str, int, int, int]] = []
    append = out.append
    pos = -1
    for m in _RUN.finditer(folded):
        kind = m.lastgroup
        if kind == "ja":
            s, e = m.span()
            for _, normalized, a, b, extra, function_word in _japanese_words(folded, s, e, index=index):
                if function_word or normalized in JAPANESE_STOP_FORMS:
                    continue
                if not extra:
                    pos += 1
                append((katakana_fold(normalized), max(pos, 0), a, b))
            continue
        word = m.group() if kind == "number" else _latin_term(m.group())
        if word is None:
            continue
        pos += 1
        append((word, pos, m.start(), m.end()))
    return out, starts, ends


@lru_cache(maxsize=65536)
def _latin_term(word: str) -> str | None:
    """The term of a Latin word other than a rule number (step 3); None for a stop word or a one-letter word."""
    if word in ENGLISH_STOP_WORDS or (len(word) == 1 and word.isalpha()):
        return None
    return light_stem(word)


# -- Whoosh glue ------------------------------------------------------------------------------------------------
class PreAnalysed(tuple):
    """A field value already analysed: (term, [positions]) pairs, each term once. The index build analyses each
    text once and hands Whoosh these instead of the text (see :func:`kb.search.index.node_fields`)."""

    @classmethod
    def of(cls, pairs) -> PreAnalysed:
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

    def word_values(self, value, analyzer, **kwargs):
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


def _tokens(terms, positions, chars, mode, kwargs):
    token = Token(positions, chars, removestops=True, mode=mode, **kwargs)
    token.boost = 1.0
    token.stopped = False
    for token.text, token.pos, token.startchar, token.endchar in terms:
        yield token


class KbTokenizer(Tokenizer):
    """The analyzer of the ``title`` and ``body`` fields: :func:`analyze` as Whoosh tokens (``mode='query'`` gives
    the query-side terms)."""

    def __call__(self, value, positions=False, chars=False, keeporiginal=False, removestops=True, start_pos=0,
                 start_char=0, tokenize=True, mode="", **kwargs):
        terms = ((term, start_pos + pos, start_char + a, start_char + b)
                 for term, pos, a, b in _terms(value, index=mode != "query"))
        return _tokens(terms, positions, chars, mode, kwargs)


class BigramTokenizer(Tokenizer):
    """Tokenizer of the fallback field (:func:`bigrams`)."""

    def __call__(self, value, positions=False, chars=False, keeporiginal=False, removestops=True, start_pos=0,
                 start_char=0, tokenize=True, mode="", **kwargs):
        terms = ((t.text, start_pos + t.pos, start_char + t.start, start_char + t.end) for t in bigrams(value))
        return _tokens(terms, positions, chars, mode, kwargs)


def text_analyzer():
    """The analyzer of the ``title`` and ``body`` fields."""
    return KbTokenizer()


def bigram_analyzer():
    """The analyzer of the ``grams`` field."""
    return BigramTokenizer()


def index_pairs(text: str) -> PreAnalysed:
    """The ``title``/``body`` field value of ``text`` for the index: its index terms and their positions."""
    folded = _fold(text)[0]
    if _JAPANESE_CHAR.search(folded):
        return PreAnalysed.of((term, pos) for term, pos, _, _ in _folded_terms(text, index=True)[0])
    positions: dict[str, list[int]] = {}  # Latin words only (the bulk of the English CR): as _folded_terms does
    pos = 0
    for number, word, _ in _RUN.findall(folded):
        term = number or _latin_term(word)
        if term is not None:
            found = positions.get(term)
            if found is None:
                positions[term] = [pos]
            else:
                found.append(pos)
            pos += 1
    return PreAnalysed(positions.items())


def bigram_pairs(text: str) -> PreAnalysed:
    """The ``grams`` field value of ``text`` for the index."""
    return PreAnalysed.of((term, pos) for term, pos, _, _ in _bigrams(text))


# -- plain functions -----------------------------------------------------------------------------------------
def analyze(text: str, *, index: bool = True) -> list[Term]:
    """Terms of ``text`` with positions and ORIGINAL offsets; ``index=False`` gives the query-side terms."""
    return [Term(*t) for t in _terms(text, index=index)]


def index_terms(text: str) -> list[str]:
    """The terms the index holds for ``text`` (title and body fields), in order, with repeats."""
    return [t.text for t in analyze(text, index=True)]


def query_terms(text: str) -> list[str]:
    """The terms a query ``text`` is looked up by (every one of them is also an index term of the same words)."""
    return [t.text for t in analyze(text, index=False)]


def surface_terms(text: str) -> list[tuple[str, str]]:
    """(folded surface, term) for each query-side word of ``text``: ``唱えた`` → ``[("唱え", "唱える")]``.

    For a client that cannot run Sudachi (the static site): collect these pairs over the indexed texts, fold the
    typed query (step 1), cut it by longest match against the collected surfaces, and look each piece up by its
    term; a Japanese piece with no surface goes to the bigram field."""
    return [(fold(text[t.start:t.end]), t.text) for t in analyze(text, index=False)]


def bigram_terms(text: str) -> list[str]:
    """Character bigrams of the Japanese runs of ``text`` (the fallback field; same for index and query)."""
    return [term for term, _, _, _ in _bigrams(text)]


def bigrams(text: str) -> list[Term]:
    """:func:`bigram_terms` with positions and original offsets."""
    return [Term(*t) for t in _bigrams(text)]


def _bigrams(text: str) -> list[tuple[str, int, int, int]]:
    """(bigram, position, start, end) for :func:`bigrams`."""
    folded, starts, ends = _fold(text)
    if not _JAPANESE_CHAR.search(folded):
        return []
    if starts is None:
        starts, ends = range(len(folded)), range(1, len(folded) + 1)
    out: list[tuple[str, int, int, int]] = []
    for kind, s, e in _runs(folded):
        if kind != "ja":
            continue
        idx = [i for i in range(s, e) if folded[i] not in MIDDLE_DOTS]
        if len(idx) == 1:
            out.append((folded[idx[0]], len(out), starts[idx[0]], ends[idx[0]]))
        for i, j in zip(idx, idx[1:]):
            out.append((folded[i] + folded[j], len(out), starts[i], ends[j]))
    return out
