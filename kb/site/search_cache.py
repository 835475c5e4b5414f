"""The static search's analysis cache: one file per document text, ``.kb-build/search/<text key>.marshal`` (the text
key: :func:`kb.site.search_export._text_key`, a hash of the title and body), holding the SHA-1 of its payload, then
the payload: the text's analysis (:func:`kb.site.search_export.analyse`), marshalled in format 2 (no back-references,
so equal analyses give equal bytes, and an incremental build's files equal a full build's). The export's state (in
the manifest) keeps only each document's text key, so a build reads and writes the files of the documents it
touches, and a full pass (a count over every document, for a site from before the lexicons' counts) reads them one at a time.

The files go through the build's :class:`kb.site.output.Output` like its pages: a build killed before its commit
leaves the previous build's files and manifest as they were; one killed while applying its journal is completed by
the next. A file missing, or whose payload does not match its hash, reads as None ("analyse that text again").

Contract: :meth:`AnalysisCache.read` reads a previous build's file; :meth:`AnalysisCache.put` writes a text's
analysis, :meth:`AnalysisCache.keep` keeps the previous build's (:meth:`AnalysisCache.keep_all`, many at once);
:attr:`AnalysisCache.files` lists every file of this build's cache (with the payload's hash when written, None when
kept), for the build's file records.

The export's state also keeps the section boundaries of the long articles (:class:`SectionCache`, by each node's
stored content hash), so a build cuts again only the articles that changed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from pathlib import Path

from kb.model import ARTICLE, Node
from kb.search.sections import LONG_ARTICLE_CHARS, sections
from kb.site.output import RECORDS

CACHE_DIR = f"{RECORDS}search/"  # among the build's records
_HASH_BYTES = 20  # SHA-1


class AnalysisCache:
    """The analysis files of the previous build (read from ``out``) and of this one (``write(rel, bytes)`` stages a
    new file, ``keep(rel)`` keeps an old one and says whether it is there)."""

    def __init__(self, out: Path, write: Callable[[str, bytes], None], keep: Callable[[str], bool]):
        self.out = out
        self._write = write
        self._keep = keep
        self.files: dict[str, str | None] = {}  # this build's files → the payload's hash (None: kept)

    @staticmethod
    def path(key: str) -> str:
        return f"{CACHE_DIR}{key}.marshal"

    def read(self, key: str) -> bytes | None:
        """The marshalled analysis of the text ``key`` the previous build kept; None when missing or damaged."""
        try:
            data = (self.out / self.path(key)).read_bytes()
        except OSError:
            return None
        payload = data[_HASH_BYTES:]
        return payload if hashlib.sha1(payload).digest() == data[:_HASH_BYTES] else None

    def put(self, key: str, analysis: bytes) -> None:
        """Write the marshalled analysis of the text ``key`` (once per build)."""
        rel = self.path(key)
        if self.files.get(rel) is None:
            digest = hashlib.sha1(analysis)
            self._write(rel, digest.digest() + analysis)
            self.files[rel] = digest.hexdigest()

    def keep_all(self, keys: Iterable[str]) -> bool:
        """Keep the previous build's files of the texts ``keys``; False when one is not there (those before it kept)."""
        return all(map(self.keep, keys))

    def kept(self, keys: Iterable[str]) -> None:
        """Keep the previous build's files of the texts ``keys`` as its records list them, unlooked at (an edit build
        keeps every page it does not make so)."""
        self.files.update((self.path(key), None) for key in keys)

    def keep(self, key: str) -> bool:
        """Keep the previous build's file of the text ``key``; False when it is not there."""
        rel = self.path(key)
        if rel in self.files:
            return True
        if not self._keep(rel):
            return False
        self.files[rel] = None
        return True


class SectionCache:
    """The anchors of the sections of long articles (:func:`kb.search.sections.sections`: all a build needs of an
    unchanged article's sections, their URLs; plain strings, which load many times faster than the sections' tuples)
    by the node's stored content hash (``kb.store``'s: every field of the node but its order, so its kind, text and ``meta`` — the
    heading tree and the quoted rules, all that ``sections`` reads); the code that cuts them is covered by the
    export's state, dropped when the code changes (:func:`kb.search.index.index_identity`). ``previous``: the last
    build's :attr:`state`; :attr:`state` holds those this build asked for (an article gone drops out)."""

    def __init__(self, previous: dict[str, tuple[str, ...]]):
        self._previous = previous
        self.state: dict[str, tuple[str, ...]] = {}

    def of(self, node: Node, digest: str | None) -> tuple[str, ...]:
        """The anchors of the sections of ``node``, whose stored content hash is ``digest`` (None: unknown, cut
        without the cache)."""
        if node.kind != ARTICLE:
            return ()
        # the cache first: an edit build's unedited articles hold their names alone
        found = None if digest is None else self.state.get(digest, self._previous.get(digest))
        if found is None:
            if len(node.text) < LONG_ARTICLE_CHARS:
                return ()  # never cut (sections' first test): nothing kept
            found = _anchors(node)
        if digest is not None:
            self.state[digest] = found
        return found


def _anchors(node: Node) -> tuple[str, ...]:
    return tuple(s.anchor for s in sections(node))
