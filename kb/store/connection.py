"""The connection every part of :class:`kb.store.Store` shares, and its two kinds of transaction: a write
(:meth:`Connected.transaction`: all or nothing) and a read (:meth:`Connected.snapshot`: one state of the database)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from kb.errors import KbError
from kb.store.records import NodeKey
from kb.store.schema import is_disk_full


class Connected:
    """An open store database: its path, its connection and whether it may be written (see :class:`kb.store.Store`)."""

    path: Path
    read_only: bool
    _db: sqlite3.Connection

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction around the block: all its writes or none. Re-entrant: inside another, joins it.
        A write the disk has no room for ends in one KbError, nothing of the block stored."""
        if self._db.in_transaction:
            yield
            return
        if self.read_only:
            raise TypeError(f"{self.path}: this Store was opened to read (create=False); open it to write")
        try:
            self._db.execute("BEGIN IMMEDIATE")
            yield
            self._db.execute("COMMIT")
        except BaseException as exc:
            if self._db.in_transaction:  # SQLite rolls back by itself on some errors (a full disk among them)
                self._db.execute("ROLLBACK")
            if isinstance(exc, sqlite3.DatabaseError) and is_disk_full(exc, self.path.parent):
                raise KbError(f"{self.path}: the disk is full; nothing was stored — free some space and run the "
                              "command again") from None
            raise

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """One read transaction around the block: every read in it sees the database as the last commit before its
        first read left it, whatever other processes commit meanwhile (SQLite's WAL snapshot). For a reader that
        reads in several statements what must agree (an export: nodes, references and their citers). Re-entrant;
        inside a write transaction, joins it."""
        if self._db.in_transaction:
            yield
            return
        self._db.execute("BEGIN")
        try:
            yield
        finally:
            if self._db.in_transaction:
                self._db.execute("COMMIT")

    def _load_keys(self, keys: Iterable[NodeKey]) -> None:
        """Fill the connection's temporary table ``keys`` (joined against by batch reads and writes)."""
        self._db.execute("CREATE TEMP TABLE IF NOT EXISTS keys (version TEXT, lang TEXT, id TEXT)")
        self._db.execute("DELETE FROM temp.keys")
        self._db.executemany("INSERT INTO temp.keys VALUES (?,?,?)", [(k.version, k.lang, k.id) for k in keys])
