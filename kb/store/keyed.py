"""A keyed file: byte values by text key in one SQLite file, tagged with the format of what it holds — the store's
other database, for records too large to read whole each time a few of their values are asked for (a site's file
records: :mod:`kb.site.manifest`).

Contract: :meth:`KeyedFile.open` opens one to read (None when it is missing, damaged or of another tag); its reads
are by key (:meth:`~KeyedFile.get`), all keys (:meth:`~KeyedFile.keys`) or all values (:meth:`~KeyedFile.items`).
:func:`apply_changes` writes: a set of changes (a value, or None to remove the key) in one transaction, so a file is
left as it was or with them all; applied twice, the same file. The caller keeps a file consistent with what else it
writes (the site's build applies the changes from its journal: :mod:`kb.site.output`).
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path

from kb.errors import KbError
from kb.store.schema import is_disk_full

_SCHEMA = ("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
           "CREATE TABLE IF NOT EXISTS value (key TEXT PRIMARY KEY, data BLOB NOT NULL)")


class KeyedFile:
    """An open keyed file, read only (see the module doc)."""

    def __init__(self, path: Path, db: sqlite3.Connection):
        self.path = path
        self._db = db

    @classmethod
    def open(cls, path: Path, tag: str) -> KeyedFile | None:
        """The keyed file at ``path`` if it holds values tagged ``tag``; None when it is missing, damaged, of
        another tag or a symbolic link (never read nor written through)."""
        if path.is_symlink() or not path.is_file():
            return None
        try:
            db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        except sqlite3.Error:
            return None
        try:
            found = db.execute("SELECT value FROM meta WHERE name = 'tag'").fetchone()
        except sqlite3.DatabaseError:
            found = None
        if found is None or found[0] != tag:
            db.close()
            return None
        return cls(path, db)

    def get(self, key: str) -> bytes | None:
        row = self._db.execute("SELECT data FROM value WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def keys(self, prefix: str = "") -> list[str]:
        """Every key (that starts with ``prefix``), in order."""
        if not prefix:
            return [key for key, in self._db.execute("SELECT key FROM value ORDER BY key")]
        after = prefix[:-1] + chr(ord(prefix[-1]) + 1)  # the first string past every one that starts with prefix
        return [key for key, in self._db.execute("SELECT key FROM value WHERE key >= ? AND key < ? ORDER BY key",
                                                 (prefix, after))]

    def keys_containing(self, needles: list[bytes]) -> list[str]:
        """The keys whose value contains one of ``needles`` (a scan of every value, in SQLite), in order."""
        if not needles:
            return []
        test = " OR ".join(["instr(data, ?) > 0"] * len(needles))
        return [key for key, in self._db.execute(f"SELECT key FROM value WHERE {test} ORDER BY key", needles)]

    def items(self) -> Iterator[tuple[str, bytes]]:
        """Every (key, value), in key order."""
        yield from self._db.execute("SELECT key, data FROM value ORDER BY key")

    def close(self) -> None:
        self._db.close()


def apply_changes(path: Path, tag: str, changes: Mapping[str, bytes | None], *, fresh: bool = False) -> None:
    """Write ``changes`` (key → value, None: removed) into the keyed file at ``path``, tagged ``tag``, in one
    transaction; ``fresh``: into a new file (the old one, if any, removed first: ``changes`` are all it holds).
    A file of another tag is made anew too. KbError when the disk is full, or when ``path`` is a symbolic link
    (nothing is written through one)."""
    if path.is_symlink():
        raise KbError(f"{path}: a symbolic link among the build's records; kb writes nothing through one: remove it "
                      f"and build again")
    if fresh:
        for suffix in ("", "-journal"):
            with contextlib.suppress(FileNotFoundError):
                Path(f"{path}{suffix}").unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, isolation_level=None)
    try:
        for statement in _SCHEMA:
            db.execute(statement)
        db.execute("BEGIN IMMEDIATE")
        found = db.execute("SELECT value FROM meta WHERE name = 'tag'").fetchone()
        if found is None or found[0] != tag:
            db.execute("DELETE FROM value")
            db.execute("INSERT OR REPLACE INTO meta VALUES ('tag', ?)", (tag,))
        db.executemany("DELETE FROM value WHERE key = ?", [(key,) for key, data in changes.items() if data is None])
        db.executemany("INSERT OR REPLACE INTO value VALUES (?, ?)",
                       [(key, data) for key, data in changes.items() if data is not None])
        db.execute("COMMIT")
    except sqlite3.DatabaseError as error:
        if db.in_transaction:
            db.execute("ROLLBACK")
        if is_disk_full(error, path.parent):
            raise KbError(f"{path}: the disk is full; the build's records were not written — free some space and "
                          f"build again") from None
        raise KbError(f"{path}: cannot write the build's records ({error}); delete it and build again") from None
    finally:
        db.close()
