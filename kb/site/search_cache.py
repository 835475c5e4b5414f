"""The static search's analysis cache: per document chunk (:data:`kb.site.search_export.CHUNK` entries), one file
``.kb-build/search/<sha1>.marshal`` holding ``{text key: marshalled analysis}`` of that chunk's documents
(:func:`kb.site.search_export.analyse`), named by the hash of its bytes. The export's state (in the manifest) keeps
only each chunk's file name, so a build reads the files of the chunks it touches, and a full pass (a first build's
counts, a dictionary move's check) reads them one at a time.

The files go through the build's :class:`kb.site.output.Output` like its pages: a build killed before its commit
leaves the previous build's files and manifest as they were; one killed while applying its journal is completed by
the next. A file missing, or whose bytes do not match its name, reads as None ("export those documents again").

Contract: :meth:`AnalysisCache.load` reads a previous build's chunk file; :meth:`AnalysisCache.put` writes a
chunk's file and returns its name, :meth:`AnalysisCache.keep` keeps one of the previous build;
:attr:`AnalysisCache.files` lists every file of this build's cache with its hash, for the build's file records.
"""

from __future__ import annotations

import hashlib
import marshal
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

CACHE_DIR = ".kb-build/search/"
LOADED_CHUNKS = 16  # chunk files kept loaded (a changed document's old analysis and its neighbours' are read together)


class AnalysisCache:
    """The chunk files of the previous build (read from ``out``) and of this one (``write(rel, bytes)`` stages a new
    file, ``keep(rel)`` keeps an old one and says whether it is there)."""

    def __init__(self, out: Path, write: Callable[[str, bytes], None], keep: Callable[[str], bool]):
        self.out = out
        self._write = write
        self._keep = keep
        self.files: dict[str, str] = {}  # this build's chunk files → their hash
        self._loaded: OrderedDict[str, dict[str, bytes] | None] = OrderedDict()

    def load(self, rel: str) -> dict[str, bytes] | None:
        """The analyses in the previous build's chunk file ``rel`` (text key → marshalled analysis); None when the
        file is missing or damaged."""
        if rel in self._loaded:
            self._loaded.move_to_end(rel)
            return self._loaded[rel]
        found = self._read(rel)
        self._loaded[rel] = found
        if len(self._loaded) > LOADED_CHUNKS:
            self._loaded.popitem(last=False)
        return found

    def _read(self, rel: str) -> dict[str, bytes] | None:
        if not (rel.startswith(CACHE_DIR) and rel.endswith(".marshal")):
            return None
        try:
            data = (self.out / rel).read_bytes()
        except OSError:
            return None
        if hashlib.sha1(data).hexdigest() != rel[len(CACHE_DIR):-len(".marshal")]:
            return None
        try:
            found = marshal.loads(data)
        except (EOFError, ValueError, TypeError):
            return None
        if not isinstance(found, dict) or not all(isinstance(v, bytes) for v in found.values()):
            return None
        return found

    def put(self, analyses: dict[str, bytes]) -> str:
        """Write the chunk file of ``analyses`` (text key → marshalled analysis); its name."""
        data = marshal.dumps(dict(sorted(analyses.items())), 2)
        digest = hashlib.sha1(data).hexdigest()
        rel = f"{CACHE_DIR}{digest}.marshal"
        if rel not in self.files:
            self._write(rel, data)
        self.files[rel] = digest
        return rel

    def keep(self, rel: str) -> bool:
        """Keep the previous build's chunk file ``rel``; False when it is missing (or not this cache's)."""
        if rel in self.files:
            return True
        if not (rel.startswith(CACHE_DIR) and self._keep(rel)):
            return False
        self.files[rel] = rel[len(CACHE_DIR):-len(".marshal")]
        return True
