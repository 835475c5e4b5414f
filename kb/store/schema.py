"""The store's schema, its version and every migration, in one place; :func:`connect` opens a database only when it is
a kb store this code can read.

Contract: a missing file is created with the current schema (``create=True``), whole or not at all, once however many
kb commands make it at the same time; a kb store of an older schema is migrated in one transaction (once: a second
migrator finds it done); a reader (``create=False``) opens it read-only and never writes (in a read-only kb folder
too), except to migrate an older store it can write; anything else — an empty (0-byte) file, a file that is not
SQLite, an SQLite database kb did not make, a kb store missing one of its tables or with a schema that is no number, a
store made by a newer kb — is refused with a one-line :class:`KbError` and never touched, so a damaged knowledge base
is never silently re-initialised as an empty one.

Tables: ``documents`` (one row per ingested source, version and language, with the authority of its source kind —
given by the ingest, from the registry :mod:`ingest.kinds`); ``contributions`` (each document's own
version of each node it gives, references included, as JSON: what the source said, kept apart so that re-ingesting or
removing one source replaces exactly its part); ``nodes`` and ``refs`` (the merged view every reader uses: per node
the contribution of the most authoritative source, plus the other sources' term links, and the linker's resolutions
and derived references).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

from kb.errors import KbError
from kb.model import DERIVED_REF_KINDS
from kb.store.codec import decode_node, encode_node, node_columns, payload, row_fields
from kb.store.lock import writer_lock

SCHEMA_VERSION = 8
TABLES = ("meta", "documents", "contributions", "nodes", "refs")

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE documents (
    id INTEGER PRIMARY KEY,
    source TEXT NOT NULL, kind TEXT NOT NULL, lang TEXT NOT NULL, version TEXT NOT NULL,
    effective_date TEXT, sync_date TEXT, title TEXT,
    content_hash TEXT NOT NULL, ingested_at TEXT NOT NULL,
    authority INTEGER NOT NULL DEFAULT 0,
    translated_date TEXT,
    UNIQUE (source, version, lang)
);
CREATE TABLE contributions (
    version TEXT NOT NULL, lang TEXT NOT NULL, id TEXT NOT NULL,
    doc_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    node TEXT NOT NULL,
    PRIMARY KEY (version, lang, id, doc_id)
);
CREATE INDEX contributions_doc ON contributions(doc_id);
CREATE TABLE nodes (
    version TEXT NOT NULL, lang TEXT NOT NULL, id TEXT NOT NULL,
    doc_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    kind TEXT NOT NULL, number TEXT, title TEXT, text TEXT NOT NULL, parent TEXT, ord INTEGER NOT NULL,
    examples TEXT NOT NULL, aliases TEXT NOT NULL, english TEXT, html TEXT, meta TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    PRIMARY KEY (version, lang, id)
);
CREATE INDEX nodes_doc ON nodes(doc_id);
CREATE INDEX nodes_kind ON nodes(kind);
CREATE INDEX nodes_number ON nodes(number);
CREATE INDEX nodes_scope_kind ON nodes(version, lang, kind);
CREATE INDEX nodes_hash ON nodes(version, lang, id, content_hash);
CREATE TABLE refs (
    version TEXT NOT NULL, lang TEXT NOT NULL, node_id TEXT NOT NULL, seq INTEGER NOT NULL,
    kind TEXT NOT NULL, target TEXT NOT NULL, text TEXT NOT NULL, start INTEGER NOT NULL, end_ INTEGER NOT NULL,
    cited_version TEXT,
    resolved_version TEXT, resolved_lang TEXT, resolved_id TEXT,
    PRIMARY KEY (version, lang, node_id, seq),
    FOREIGN KEY (version, lang, node_id) REFERENCES nodes(version, lang, id) ON DELETE CASCADE
);
CREATE INDEX refs_resolved ON refs(resolved_id, resolved_version, resolved_lang, kind);
CREATE INDEX refs_kind_target ON refs(kind, target, text);
"""
STATEMENTS = [s.strip() for s in SCHEMA.split(";") if s.strip()]


def _migrate_1_to_2(db: sqlite3.Connection) -> None:
    """Schema 1 kept one merged row per node: each becomes the contribution of the document that owned it (the
    other sources' term links merged into it stay with it; the next ingest of either source separates them)."""
    for statement in STATEMENTS:
        if " contributions" in statement.split("(")[0]:
            db.execute(statement)
    refs: dict[tuple[str, str, str], list[tuple[Any, ...]]] = {}
    derived = ",".join("?" * len(DERIVED_REF_KINDS))
    for version, lang, node_id, *ref in db.execute(
            f"SELECT version, lang, node_id, kind, target, text, start, end_, cited_version FROM refs"
            f" WHERE kind NOT IN ({derived}) ORDER BY version, lang, node_id, seq", DERIVED_REF_KINDS):
        refs.setdefault((version, lang, node_id), []).append(tuple(ref))
    rows = []
    for doc_id, *node in db.execute(f"SELECT doc_id, {node_columns()} FROM nodes").fetchall():
        key, fields = row_fields(node, refs.get((node[0], node[1], node[2]), []))
        rows.append((key.version, key.lang, key.id, doc_id, payload(encode_node(decode_node(key, fields)))))
    db.executemany("INSERT INTO contributions (version, lang, id, doc_id, node) VALUES (?,?,?,?,?)", rows)


def _migrate_2_to_3(db: sqlite3.Connection) -> None:
    """Schema 3 records each document's authority; schema 2 merged with CR text 2, Wisdom Guild 1, the rest 0."""
    db.execute("ALTER TABLE documents ADD COLUMN authority INTEGER NOT NULL DEFAULT 0")
    db.execute("UPDATE documents SET authority = CASE kind WHEN 'cr-text' THEN 2 WHEN 'wisdom-guild' THEN 1 ELSE 0 END")


def _migrate_3_to_4(db: sqlite3.Connection) -> None:
    """Schema 4 indexes rule numbers (a search by number read every version's nodes)."""
    db.execute("CREATE INDEX IF NOT EXISTS nodes_number ON nodes(number)")


def _migrate_4_to_5(db: sqlite3.Connection) -> None:
    """Schema 5 indexes nodes by version, language and kind (the versions list counted every node of every version:
    a search, which lists them, slowed down with each version stored)."""
    db.execute("CREATE INDEX IF NOT EXISTS nodes_scope_kind ON nodes(version, lang, kind)")


def _migrate_5_to_6(db: sqlite3.Connection) -> None:
    """Schema 6 indexes references by kind and target (each ingest's link report counted them by reading every
    reference, and found those naming a rewritten rule among all of its version's)."""
    db.execute("CREATE INDEX IF NOT EXISTS refs_kind_target ON refs(kind, target)")


def _migrate_6_to_7(db: sqlite3.Connection) -> None:
    """Schema 7 keeps a translation's own date (its translator line's) apart from the date it claims; schema 6 stored
    the translator line's date as the effective date. The Japanese rules texts' content hashes are cleared, so that
    the next ingest of each reads it again and dates it anew."""
    if "translated_date" not in {row[1] for row in db.execute("PRAGMA table_info(documents)")}:
        db.execute("ALTER TABLE documents ADD COLUMN translated_date TEXT")
    db.execute("UPDATE documents SET content_hash='' WHERE lang='ja' AND kind='cr-text' AND translated_date IS NULL")


def _migrate_7_to_8(db: sqlite3.Connection) -> None:
    """Schema 8 indexes each node's content hash by key, each reference's surface text after its kind and target,
    and its kind after where it resolved to (the content hashes of a scope — each search index update's — and the card
    references' spellings — each link's card entities — were read from the rows, after their long texts; so were the
    kinds of the unresolved references, for the link report, most of them of kinds it leaves out)."""
    db.execute("CREATE INDEX IF NOT EXISTS nodes_hash ON nodes(version, lang, id, content_hash)")
    for name, columns in (("refs_kind_target", "kind, target, text"),
                          ("refs_resolved", "resolved_id, resolved_version, resolved_lang, kind")):
        db.execute(f"DROP INDEX IF EXISTS {name}")
        db.execute(f"CREATE INDEX {name} ON refs({columns})")


MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {1: _migrate_1_to_2, 2: _migrate_2_to_3,
                                                               3: _migrate_3_to_4, 4: _migrate_4_to_5,
                                                               5: _migrate_5_to_6, 6: _migrate_6_to_7,
                                                               7: _migrate_7_to_8}  # N to N + 1


def connect(path: Path, *, create: bool) -> sqlite3.Connection:
    """An autocommit connection to the kb store at ``path`` (see the module doc): to write (``create``: made when
    missing, migrated when older) or to read only (the store must exist; never written, so a read-only kb folder
    can be read; a store of an older schema is migrated first when it can be written)."""
    try:
        if not path.exists():
            if not create:
                raise KbError(f"{path}: no knowledge base here; run 'kb ingest' first (or pass --kb-dir)")
            _create(path)
        if path.is_file() and path.stat().st_size == 0:
            raise KbError(f"{path}: empty file (0 bytes), not a kb database; restore it from a backup, or move it away "
                          f"and ingest again")
        if not create:
            db = _open_read_only(path)
            version = _schema_of(db, path)
            if version < SCHEMA_VERSION:
                db.close()
                if not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)):
                    raise KbError(f"{path}: made by an older kb (store schema {version}) and read-only here; run "
                                  "'kb ingest' once where it can be written, to upgrade it")
                connect(path, create=True).close()  # migrated once, as by any writer
                db = _open_read_only(path)
            _check_tables(db, path)
            return db
        if not os.access(path.parent, os.W_OK):
            raise KbError(f"{path}: the kb folder is read-only; a command that writes needs a writable kb folder "
                          "(readers — search, export, versions, links — work here)")
        db = sqlite3.connect(path, isolation_level=None)
        db.execute("PRAGMA foreign_keys = ON")
        _check_and_migrate(db, path)
        db.execute("PRAGMA journal_mode = WAL")
    except sqlite3.DatabaseError as exc:
        if is_disk_full(exc, path.parent):
            raise KbError(f"{path}: the disk is full; free some space and run the command again") from None
        if "malformed" in str(exc):
            raise KbError(f"{path}: damaged kb database ({exc}); restore it from a backup, or move it away and "
                          "ingest again") from None
        raise KbError(f"{path}: not a kb database ({exc})") from None
    except OSError as exc:
        raise KbError(f"{path}: cannot open the knowledge base ({exc.strerror or exc})") from None
    return db


def is_disk_full(error: sqlite3.DatabaseError, folder: Path) -> bool:
    """Whether SQLite failed for want of room: a full database or disk, or an I/O error (making its shared-memory
    file, say) on a disk with less than :data:`LOW_SPACE` bytes left."""
    name = getattr(error, "sqlite_errorname", "")
    if name == "SQLITE_FULL":
        return True
    try:
        return name.startswith("SQLITE_IOERR") and shutil.disk_usage(folder).free < LOW_SPACE
    except OSError:
        return False


LOW_SPACE = 1 << 20


def _create(path: Path) -> None:
    """Make the store at ``path``, whole or not at all: built beside it and renamed into place, under the writer lock
    of its folder, so two kb commands making the same new knowledge base at once make it once (the second finds it
    made), and no reader ever sees it half made."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with writer_lock(path.parent):
        if path.exists():  # made meanwhile by another kb
            return
        draft = path.with_name(path.name + ".new")
        for stale in (draft, draft.with_name(draft.name + "-wal"), draft.with_name(draft.name + "-shm")):
            stale.unlink(missing_ok=True)  # left by a kb killed while making it
        with closing(sqlite3.connect(draft, isolation_level=None)) as db:
            db.execute("BEGIN IMMEDIATE")  # with a rollback journal: written into the file itself
            for statement in STATEMENTS:
                db.execute(statement)
            db.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
            db.execute("COMMIT")
            db.execute("PRAGMA journal_mode = WAL")  # recorded in the file: every later connection uses it
        os.replace(draft, path)  # whole: WAL mode was set after the last write, nothing of it in a log
        for log in (draft.with_name(draft.name + "-wal"), draft.with_name(draft.name + "-shm")):
            log.unlink(missing_ok=True)  # empty, when a full disk kept SQLite from removing them


def _open_read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection (``mode=ro``); in a folder SQLite cannot write its shared-memory file into, and with no
    write-ahead log holding writes not yet in the database, an immutable one (nothing can change it there)."""
    uri = f"{path.resolve().as_uri()}?mode=ro"
    db = sqlite3.connect(uri, uri=True, isolation_level=None)
    try:
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return db
    except sqlite3.OperationalError as exc:
        db.close()
        if exc.sqlite_errorname != "SQLITE_CANTOPEN":
            raise
    log = path.with_name(path.name + "-wal")
    if log.exists() and log.stat().st_size > 0:
        raise KbError(f"{path}: the kb folder is read-only, and {log.name} holds writes not yet in the database; "
                      "open the knowledge base once where it can be written (any kb command), then read it here")
    return sqlite3.connect(uri + "&immutable=1", uri=True, isolation_level=None)


def damaged_database_error(path: Path, error: BaseException) -> KbError | None:
    """For an error met while a command read the database at ``path``: the one-line KbError naming the remedy when
    the database is busy, or damaged (SQLite's ``quick_check`` fails, or a text is not UTF-8 — kb writes UTF-8
    only); None when the database is sound (then ``error`` is a bug)."""
    if not isinstance(error, sqlite3.DatabaseError):
        return None
    message = str(error).split("\n")[0]
    message = message if len(message) <= 80 else message[:80] + "…"
    if "locked" in message or "busy" in message:
        return KbError(f"{path}: the knowledge base is busy (another kb command is writing to it); try again when it "
                       "is done")
    try:
        with closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as db:
            problems = [row[0] for row in db.execute("PRAGMA quick_check(1)")]
    except sqlite3.DatabaseError as check:
        problems = [str(check)]
    if problems == ["ok"] and "Could not decode to UTF-8" not in message:
        return None
    return KbError(f"{path}: damaged kb database (sqlite: {message}); restore it from a backup, or move it away and "
                   "ingest again")


def _tables(db: sqlite3.Connection) -> set[str]:
    return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def _schema_of(db: sqlite3.Connection, path: Path) -> int:
    """The store schema of the database, refused when kb did not make it or a newer kb did."""
    tables = _tables(db)
    row = db.execute("SELECT value FROM meta WHERE key='schema'").fetchone() if "meta" in tables else None
    if row is None:
        found = ", ".join(sorted(tables)) or "no tables"
        raise KbError(f"{path}: not a kb database (an SQLite file kb did not make: {found}); choose another --kb-dir")
    if not str(row[0]).isdecimal():
        raise KbError(f"{path}: damaged kb database (store schema {str(row[0])[:40]!r} is not a number); restore it "
                      "from a backup, or move it away and ingest again")
    version = int(row[0])
    if version > SCHEMA_VERSION:
        raise KbError(f"{path}: made by a newer kb (store schema {version}; this kb reads up to {SCHEMA_VERSION}); "
                      f"upgrade kb")
    return version


def _check_and_migrate(db: sqlite3.Connection, path: Path) -> None:
    if _schema_of(db, path) < SCHEMA_VERSION:
        db.execute("BEGIN IMMEDIATE")
        try:
            version = _schema_of(db, path)  # again, in the transaction: another kb may have migrated it meanwhile
            for step in range(version, SCHEMA_VERSION):
                if step not in MIGRATIONS:
                    raise KbError(f"{path}: store schema {version} cannot be migrated; ingest again into a new --kb-dir")
                MIGRATIONS[step](db)
            db.execute("UPDATE meta SET value=? WHERE key='schema'", (str(SCHEMA_VERSION),))
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
    _check_tables(db, path)


def _check_tables(db: sqlite3.Connection, path: Path) -> None:
    missing = [t for t in TABLES if t not in _tables(db)]
    if missing:
        raise KbError(f"{path}: damaged kb database (table {', '.join(missing)} missing); restore it from a backup, "
                      f"or move it away and ingest again")
