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

Whoosh glue: :class:`KbTokenizer` | :class:`JapaneseFormFilter` | :class:`EnglishStemFilter` |
:class:`StopAndPositionFilter` is :func:`text_analyzer`; :class:`BigramTokenizer` is :func:`bigram_analyzer`.
The Sudachi tokenizer is created lazily (the analyzers are pickled with the schema).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from whoosh.analysis import Filter, Token, Tokenizer

ENGLISH_STOP_WORDS = frozenset(
    "a an and are as at be by for from in is it its of on or that the this to with".split())
JAPANESE_STOP_FORMS = frozenset(["為る", "居る", "有る", "事", "物", "様", "の", "ん", "其れ", "此れ", "何れ", "等"])
DROPPED_POS = frozenset(["助詞", "助動詞", "補助記号", "空白", "記号", "連体詞"])
MIDDLE_DOTS = "・･"
LONG_VOWEL = "ー"

_RUN = re.compile(r"(?P<number>(?<![0-9.])[1-9][0-9][0-9]\.[0-9]{1,3}[a-z]?(?![a-z0-9]))|(?P<word>[a-z0-9]+)"
                  r"|(?P<ja>(?:(?![\x00-\x7f])[\w・･])+)")
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
    if unicodedata.is_normalized("NFKC", text):
        lowered = text.lower()
        if len(lowered) == len(text):
            return lowered, list(range(len(text))), list(range(1, len(text) + 1))
    pieces = [_fold_char(ch) for ch in text]
    if all(len(p) == 1 for p in pieces) and not any(p in _VOICED_MARKS for p in pieces):
        return "".join(pieces), list(range(len(text))), list(range(1, len(text) + 1))
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
    return fold_with_offsets(text)[0]


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


# -- Whoosh tokenizer and filters ----------------------------------------------------------------------------
def _token(positions, chars, mode, kwargs, text, start, end, start_char) -> Token:
    token = Token(positions, chars, removestops=True, mode=mode, **kwargs)
    token.text = text
    token.boost = 1.0
    token.stopped = False
    token.pos = 0
    token.startchar = start_char + start
    token.endchar = start_char + end
    return token


class KbTokenizer(Tokenizer):
    """Segments text into words (step 1–2 of the contract, Sudachi mode C/A for Japanese runs).

    Each token carries ``text`` (the folded surface), ``normalized`` (Sudachi's normalized form, or the word),
    ``script`` ('latin' | 'ja'), ``rule_number``, ``extra`` (an index-only sub-word or joined word) and
    ``function_word``; char offsets are in the original text. ``mode='query'`` gives the query-side words.
    """

    def __call__(self, value, positions=False, chars=False, keeporiginal=False, removestops=True, start_pos=0,
                 start_char=0, tokenize=True, mode="", **kwargs):
        folded, starts, ends = fold_with_offsets(value)
        index = mode != "query"
        for kind, s, e in _runs(folded):
            if kind != "ja":
                word = folded[s:e]
                token = _token(positions, chars, mode, kwargs, word, starts[s], ends[e - 1], start_char)
                token.normalized, token.script, token.rule_number = word, "latin", kind == "number"
                token.extra = token.function_word = False
                yield token
            else:
                for surface, normalized, a, b, extra, function_word in _japanese_words(folded, s, e, index=index):
                    token = _token(positions, chars, mode, kwargs, surface, starts[a], ends[b - 1], start_char)
                    token.normalized, token.script, token.rule_number = normalized, "ja", False
                    token.extra, token.function_word = extra, function_word
                    yield token


class JapaneseFormFilter(Filter):
    """Japanese words become their normalized form with the katakana long-vowel fold (step 4)."""

    def __call__(self, tokens):
        for token in tokens:
            if token.script == "ja":
                token.text = katakana_fold(token.normalized)
            yield token


class EnglishStemFilter(Filter):
    """Latin words other than rule numbers go through :func:`light_stem` (step 3)."""

    def __call__(self, tokens):
        for token in tokens:
            if token.script == "latin" and not token.rule_number:
                token.text = light_stem(token.text)
            yield token


class StopAndPositionFilter(Filter):
    """Drops function words and stop words, then numbers the kept words; extra terms share their word's position.

    Stop words are tested before stemming would matter: English stop words by the folded word, Japanese by the
    normalized form, plus one-letter English words.
    """

    def __call__(self, tokens):
        pos = -1
        for token in tokens:
            if token.function_word:
                continue
            if token.script == "latin" and (token.normalized in ENGLISH_STOP_WORDS
                                            or (len(token.normalized) == 1 and token.normalized.isalpha())):
                continue
            if token.script == "ja" and token.normalized in JAPANESE_STOP_FORMS:
                continue
            if not token.extra:
                pos += 1
            token.pos = max(pos, 0)
            yield token


class BigramTokenizer(Tokenizer):
    """Tokenizer of the fallback field (:func:`bigrams`)."""

    def __call__(self, value, positions=False, chars=False, keeporiginal=False, removestops=True, start_pos=0,
                 start_char=0, tokenize=True, mode="", **kwargs):
        for term in bigrams(value):
            token = _token(positions, chars, mode, kwargs, term.text, term.start, term.end, start_char)
            token.pos = start_pos + term.pos
            yield token


def text_analyzer():
    """The analyzer of the ``title`` and ``body`` fields: tokenizer and filter chain."""
    return KbTokenizer() | JapaneseFormFilter() | EnglishStemFilter() | StopAndPositionFilter()


def bigram_analyzer():
    """The analyzer of the ``grams`` field."""
    return BigramTokenizer()


@lru_cache(maxsize=1)
def _analyzer():
    return text_analyzer()


# -- plain functions -----------------------------------------------------------------------------------------
def analyze(text: str, *, index: bool = True) -> list[Term]:
    """Terms of ``text`` with positions and ORIGINAL offsets; ``index=False`` gives the query-side terms."""
    return [Term(t.text, t.pos, t.startchar, t.endchar)
            for t in _analyzer()(text, positions=True, chars=True, mode="index" if index else "query")]


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
    return [t.text for t in bigrams(text)]


def bigrams(text: str) -> list[Term]:
    """:func:`bigram_terms` with positions and original offsets."""
    folded, starts, ends = fold_with_offsets(text)
    out: list[Term] = []
    for kind, s, e in _runs(folded):
        if kind != "ja":
            continue
        idx = [i for i in range(s, e) if folded[i] not in MIDDLE_DOTS]
        if len(idx) == 1:
            out.append(Term(folded[idx[0]], len(out), starts[idx[0]], ends[idx[0]]))
        for i, j in zip(idx, idx[1:]):
            out.append(Term(folded[i] + folded[j], len(out), starts[i], ends[j]))
    return out
