"""The identity of kb's own code: one digest of every source file of the packages ``kb`` and ``ingest``.

Whatever kb writes from the store (the search index, the site) records this digest beside its data, so any change to
any module that can shape the output — listed by nobody, derived from the files — makes the next writer rebuild.
Reading the sources costs a few milliseconds; the digest is computed once per process.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

PACKAGES = ("kb", "ingest")  # kb's own code: every *.py under these folders beside this file's package


@lru_cache(maxsize=1)
def code_digest() -> str:
    """A hash of the relative path and bytes of every ``*.py`` file of :data:`PACKAGES`, in a fixed order."""
    root = Path(__file__).resolve().parent.parent
    return tree_digest(root, [path for package in PACKAGES for path in (root / package).rglob("*.py")])


def tree_digest(root: Path, files: list[Path]) -> str:
    """A hash of each file's path relative to ``root`` and its bytes, in sorted order (the same in every process)."""
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()
