"""Japanese text into Sudachi's words: the one place kb runs SudachiPy.

A :class:`JapaneseSplitter` holds the Sudachi dictionaries — ``sudachidict-core``, and the compiled user dictionary
it was made with, if any (:mod:`kb.search.userdict` makes one from a store's glossary terms and wiki titles) — a
tokenizer of each per thread, and a cache of readings. A command makes one and hands it to the stages that split
Japanese: the linker's term links and the site's 五十音 readings (the system dictionary alone, or the store's user
dictionary), the search index and the query (:meth:`with_user_dictionary`: the dictionary the index records).
Nothing of it is global: splitters with different user dictionaries work side by side in one process, and each
says which one it splits with (:attr:`JapaneseSplitter.dictionary_id`).

Threads: a SudachiPy tokenizer refuses to be used by two threads at once ("Tokenizer is already in use"), so each
thread gets its own tokenizers (a tokenizer costs a fraction of a millisecond; the dictionaries, about 80 ms to
load, are loaded once per splitter and shared by its threads and by the splitters made from it).

Length: SudachiPy refuses an input over :data:`SUDACHI_MAX_BYTES`; :meth:`JapaneseSplitter.words` takes text of any
length, handing Sudachi pieces of it (:func:`sudachi_pieces`, cut where no word can go on).

Pickling (Whoosh pickles the analyzers of an index's schema): a splitter pickles as the path of its user dictionary;
its dictionaries and tokenizers are loaded again on first use.

SudachiPy is imported on first use: a command that splits nothing does not load it.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SUDACHI_MAX_BYTES = 49149  # SudachiPy refuses a longer input ("Input is too long")
SUDACHI_PIECE_CHARS = SUDACHI_MAX_BYTES // 4  # at most 4 UTF-8 bytes a character: a piece this long always passes
_NOT_IN_A_WORD = re.compile(r"[^\w・･]")
_HIRAGANA_CHAR = re.compile(r"[\u3041-\u309f]")
_KANJI = re.compile(r"[\u3400-\u9fff々〆]")


class _Dictionaries:
    """The loaded SudachiPy dictionaries of splitters made from one another: the system dictionary, and each user
    dictionary by its path (each loaded once, under the lock; a Dictionary object may be shared by threads)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.loaded: dict[Path | None, Any] = {}

    def get(self, user_dictionary: Path | None) -> Any:
        with self.lock:
            dictionary = self.loaded.get(user_dictionary)
            if dictionary is None:
                from sudachipy import Dictionary, config

                dictionary = (Dictionary() if user_dictionary is None else
                              Dictionary(config=config.Config(user=[str(user_dictionary.resolve())])))
                self.loaded[user_dictionary] = dictionary
            return dictionary


class JapaneseSplitter:
    """Sudachi over ``sudachidict-core`` and, when given, the compiled user dictionary ``user_dictionary``."""

    def __init__(self, user_dictionary: Path | None = None, *, _shared: _Dictionaries | None = None) -> None:
        self.user_dictionary = Path(user_dictionary) if user_dictionary else None
        self._dictionaries = _shared or _Dictionaries()
        self._threads = threading.local()  # this thread's tokenizers: "system", "user"
        self._readings: dict[str, str] = {}

    @property
    def dictionary_id(self) -> str:
        """Names the user dictionary ('' when none): analysis results depend on it."""
        return self.user_dictionary.stem if self.user_dictionary else ""

    def with_user_dictionary(self, path: Path | None) -> JapaneseSplitter:
        """A splitter with the user dictionary ``path`` (None: none) instead of this one's: this splitter when it is
        the same, else a new one sharing the dictionaries already loaded."""
        path = Path(path) if path else None
        if path == self.user_dictionary:
            return self
        return JapaneseSplitter(path, _shared=self._dictionaries)

    def tokenizer(self, *, system: bool = False) -> Any:
        """This thread's SudachiPy tokenizer: of the system dictionary alone with ``system``, else with the user
        dictionary (the same when there is none)."""
        which = "system" if system or self.user_dictionary is None else "user"
        tokenizer = getattr(self._threads, which, None)
        if tokenizer is None:
            tokenizer = self._dictionaries.get(None if which == "system" else self.user_dictionary).tokenizer()
            setattr(self._threads, which, tokenizer)
        return tokenizer

    @property
    def modes(self) -> tuple[Any, Any]:
        """Sudachi's split modes A (shortest) and C (longest)."""
        from sudachipy import SplitMode

        return SplitMode.A, SplitMode.C

    def words(self, text: str, mode: Any = None, *, system: bool = False) -> Iterator[tuple[int, Any]]:
        """Sudachi's morphemes of ``text`` of any length (see :func:`sudachi_pieces`), as (offset, morpheme) pairs:
        ``offset + m.begin()`` is the morpheme's place in ``text`` (its ``split`` parts' too). ``system``: with the
        system dictionary alone, else with the user dictionary too. ``mode``: Sudachi's default (C) when None."""
        tokenizer = self.tokenizer(system=system)
        for offset, piece in sudachi_pieces(text):
            for m in tokenizer.tokenize(piece) if mode is None else tokenizer.tokenize(piece, mode):
                yield offset, m

    def reading(self, label: str) -> str:
        """How ``label`` reads: Sudachi's reading of each word with kanji (katakana), other words as written;
        remembered for the life of the splitter (the site reads each glossary label many times)."""
        if not _KANJI.search(label):
            return label
        reading = self._readings.get(label)
        if reading is None:
            reading = self._readings[label] = "".join(m.reading_form() or m.surface() for _, m in self.words(label))
        return reading

    def __getstate__(self) -> dict[str, Any]:
        return {"user_dictionary": self.user_dictionary}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.user_dictionary = state["user_dictionary"]
        self._dictionaries = _Dictionaries()
        self._threads = threading.local()
        self._readings = {}

    def __repr__(self) -> str:
        return f"JapaneseSplitter({str(self.user_dictionary) if self.user_dictionary else ''})"


def system_dictionary_path() -> Path:
    """The file of ``sudachidict-core``'s system dictionary (a user dictionary is compiled against it)."""
    import sudachidict_core  # type: ignore[import-untyped]

    return Path(sudachidict_core.__file__).parent / "resources" / "system.dic"


def sudachi_pieces(text: str) -> list[tuple[int, str]]:
    """``text`` as (offset, piece) pairs of at most :data:`SUDACHI_PIECE_CHARS` characters, so that Sudachi takes
    text of any length: a long text is cut after the last character of a piece that cannot be inside a word
    (a line break, space or punctuation), else at the last change between hiragana and other characters (where
    Japanese words mostly end), else where the piece is full."""
    out = []
    start = 0
    while len(text) - start > SUDACHI_PIECE_CHARS:
        window = text[start:start + SUDACHI_PIECE_CHARS]
        cut = _piece_end(window)
        out.append((start, window[:cut]))
        start += cut
    out.append((start, text[start:]))
    return out


def _piece_end(window: str) -> int:
    half = len(window) // 2
    for i in range(len(window) - 1, half, -1):
        if _NOT_IN_A_WORD.match(window[i - 1]):
            return i
    for i in range(len(window) - 1, half, -1):
        if bool(_HIRAGANA_CHAR.match(window[i - 1])) != bool(_HIRAGANA_CHAR.match(window[i])):
            return i
    return len(window)
