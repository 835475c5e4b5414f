"""The store's schema, its version and every migration, in one place; :func:`connect` opens a database only when it is
a kb store this code can read.

Contract: a missing file is created with the current schema (``create=True``); a kb store of an older schema is
migrated in one transaction; anything else — an empty (0-byte) file, a file that is not SQLite, an SQLite database kb did
not make, a kb store missing one of its tables, a store made by a newer kb — is refused with a one-line
:class:`KbError` and never touched, so a damaged knowledge base is never silently re-initialised as an empty one.

Tables: ``documents`` (one row per ingested source, version and language, with the authority of its source kind —
given by the ingest, from the registry :mod:`ingest.kinds`); ``contributions`` (each document's own
version of each node it gives, references included, as JSON: what the source said, kept apart so that re-ingesting or
removing one source replaces exactly its part); ``nodes`` and ``refs`` (the merged view every reader uses: per node
the contribution of the most authoritative source, plus the other sources' term links, and the linker's resolutions
and derived references).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

from kb.errors import KbError
from kb.model import DERIVED_REF_KINDS

SCHEMA_VERSION = 7
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
CREATE TABLE refs (
    version TEXT NOT NULL, lang TEXT NOT NULL, node_id TEXT NOT NULL, seq INTEGER NOT NULL,
    kind TEXT NOT NULL, target TEXT NOT NULL, text TEXT NOT NULL, start INTEGER NOT NULL, end_ INTEGER NOT NULL,
    cited_version TEXT,
    resolved_version TEXT, resolved_lang TEXT, resolved_id TEXT,
    PRIMARY KEY (version, lang, node_id, seq),
    FOREIGN KEY (version, lang, node_id) REFERENCES nodes(version, lang, id) ON DELETE CASCADE
);
CREATE INDEX refs_resolved ON refs(resolved_id, resolved_version, resolved_lang);
CREATE INDEX refs_kind_target ON refs(kind, target);
"""
STATEMENTS = [s.strip() for s in SCHEMA.split(";") if s.strip()]


_PAYLOAD_ENCODER = json.JSONEncoder(ensure_ascii=False)  # json.dumps(…, ensure_ascii=False), made once


def node_payload(kind: str, number: str | None, title: str | None, text: str, parent: str | None, order: int,
                 examples: list[str], aliases: list[str], english: str | None, html: str | None, meta: dict[str, Any],
                 refs: list[list[Any]]) -> str:
    """A node as one source gave it, as stored in ``contributions.node`` (lists, not JSON strings, for the lists)."""
    return _PAYLOAD_ENCODER.encode({"kind": kind, "number": number, "title": title, "text": text, "parent": parent,
                                    "order": order, "examples": examples, "aliases": aliases, "english": english,
                                    "html": html, "meta": meta, "refs": refs})


def _migrate_1_to_2(db: sqlite3.Connection) -> None:
    """Schema 1 kept one merged row per node: each becomes the contribution of the document that owned it (the
    other sources' term links merged into it stay with it; the next ingest of either source separates them)."""
    for statement in STATEMENTS:
        if " contributions" in statement.split("(")[0]:
            db.execute(statement)
    refs: dict[tuple[str, str, str], list] = {}
    derived = ",".join("?" * len(DERIVED_REF_KINDS))
    for version, lang, node_id, kind, target, text, start, end, cited in db.execute(
            f"SELECT version, lang, node_id, kind, target, text, start, end_, cited_version FROM refs"
            f" WHERE kind NOT IN ({derived}) ORDER BY version, lang, node_id, seq", DERIVED_REF_KINDS):
        refs.setdefault((version, lang, node_id), []).append([kind, target, text, start, end, cited])
    rows = []
    for (version, lang, id_, doc_id, kind, number, title, text, parent, order, examples, aliases, english, html,
         meta) in db.execute("SELECT version, lang, id, doc_id, kind, number, title, text, parent, ord, examples, aliases,"
                             " english, html, meta FROM nodes").fetchall():
        payload = node_payload(kind, number, title, text, parent, order, json.loads(examples), json.loads(aliases),
                               english, html, json.loads(meta), refs.get((version, lang, id_), []))
        rows.append((version, lang, id_, doc_id, payload))
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


MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {1: _migrate_1_to_2, 2: _migrate_2_to_3,
                                                               3: _migrate_3_to_4, 4: _migrate_4_to_5,
                                                               5: _migrate_5_to_6, 6: _migrate_6_to_7}  # N to N + 1


def connect(path: Path, *, create: bool) -> sqlite3.Connection:
    """An autocommit connection to the kb store at ``path``, created, migrated or refused (see the module doc)."""
    existed = path.exists()
    if not existed and not create:
        raise KbError(f"{path}: no knowledge base here; run 'kb ingest' first (or pass --kb-dir)")
    if existed and path.is_file() and path.stat().st_size == 0:
        raise KbError(f"{path}: empty file (0 bytes), not a kb database; restore it from a backup, or move it away "
                      f"and ingest again")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        db = sqlite3.connect(path, isolation_level=None)
        db.execute("PRAGMA foreign_keys = ON")
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not existed and not tables:
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("BEGIN IMMEDIATE")
            for statement in STATEMENTS:
                db.execute(statement)
            db.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
            db.execute("COMMIT")
            return db
        _check_and_migrate(db, path, tables)
        db.execute("PRAGMA journal_mode = WAL")
    except sqlite3.DatabaseError as exc:
        if "malformed" in str(exc):
            raise KbError(f"{path}: damaged kb database ({exc}); restore it from a backup, or move it away and "
                          "ingest again") from None
        raise KbError(f"{path}: not a kb database ({exc})") from None
    return db


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


def _check_and_migrate(db: sqlite3.Connection, path: Path, tables: set[str]) -> None:
    row = db.execute("SELECT value FROM meta WHERE key='schema'").fetchone() if "meta" in tables else None
    if row is None:
        found = ", ".join(sorted(tables)) or "no tables"
        raise KbError(f"{path}: not a kb database (an SQLite file kb did not make: {found}); choose another --kb-dir")
    version = int(row[0])
    if version > SCHEMA_VERSION:
        raise KbError(f"{path}: made by a newer kb (store schema {version}; this kb reads up to {SCHEMA_VERSION}); "
                      f"upgrade kb")
    if version < SCHEMA_VERSION:
        db.execute("BEGIN IMMEDIATE")
        try:
            for step in range(version, SCHEMA_VERSION):
                if step not in MIGRATIONS:
                    raise KbError(f"{path}: store schema {version} cannot be migrated; ingest again into a new --kb-dir")
                MIGRATIONS[step](db)
            db.execute("UPDATE meta SET value=? WHERE key='schema'", (str(SCHEMA_VERSION),))
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    missing = [t for t in TABLES if t not in tables]
    if missing:
        raise KbError(f"{path}: damaged kb database (table {', '.join(missing)} missing); restore it from a backup, "
                      f"or move it away and ingest again")
