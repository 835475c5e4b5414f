"""The store: one SQLite file holding every document, node (one row per node per version and language),
reference and its resolution.

Location: ``--kb-dir``, else ``$KB_HOME``, else ``./.kb``; the database is ``kb.sqlite`` inside. Writes go
through :meth:`Store.transaction`, so an ingest that fails midway leaves what was stored before untouched.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

from kb.errors import KbError
from kb.model import REF_TERM, Document, Node, Ref

SCHEMA_VERSION = 1
DB_NAME = "kb.sqlite"

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    id INTEGER PRIMARY KEY,
    source TEXT NOT NULL, kind TEXT NOT NULL, lang TEXT NOT NULL, version TEXT NOT NULL,
    effective_date TEXT, sync_date TEXT, title TEXT,
    content_hash TEXT NOT NULL, ingested_at TEXT NOT NULL,
    UNIQUE (source, version, lang)
);
CREATE TABLE IF NOT EXISTS nodes (
    version TEXT NOT NULL, lang TEXT NOT NULL, id TEXT NOT NULL,
    doc_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    kind TEXT NOT NULL, number TEXT, title TEXT, text TEXT NOT NULL, parent TEXT, ord INTEGER NOT NULL,
    examples TEXT NOT NULL, aliases TEXT NOT NULL, english TEXT, html TEXT, meta TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    PRIMARY KEY (version, lang, id)
);
CREATE INDEX IF NOT EXISTS nodes_doc ON nodes(doc_id);
CREATE INDEX IF NOT EXISTS nodes_kind ON nodes(kind);
CREATE TABLE IF NOT EXISTS refs (
    version TEXT NOT NULL, lang TEXT NOT NULL, node_id TEXT NOT NULL, seq INTEGER NOT NULL,
    kind TEXT NOT NULL, target TEXT NOT NULL, text TEXT NOT NULL, start INTEGER NOT NULL, end_ INTEGER NOT NULL,
    cited_version TEXT,
    resolved_version TEXT, resolved_lang TEXT, resolved_id TEXT,
    PRIMARY KEY (version, lang, node_id, seq),
    FOREIGN KEY (version, lang, node_id) REFERENCES nodes(version, lang, id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS refs_resolved ON refs(resolved_id, resolved_version, resolved_lang);
"""


@dataclass(frozen=True)
class NodeKey:
    version: str
    lang: str
    id: str


@dataclass(frozen=True)
class StoredRef:
    """A reference as stored, with where it resolved to (``target_key`` None when unresolved)."""

    source_key: NodeKey
    seq: int
    ref: Ref
    target_key: NodeKey | None


@dataclass(frozen=True)
class DocumentInfo:
    id: int
    source: str
    kind: str
    lang: str
    version: str
    effective_date: str | None
    sync_date: str | None
    title: str | None
    content_hash: str
    ingested_at: str


def default_kb_dir(kb_dir: str | os.PathLike | None = None) -> Path:
    if kb_dir:
        return Path(kb_dir)
    if os.environ.get("KB_HOME"):
        return Path(os.environ["KB_HOME"])
    return Path.cwd() / ".kb"


def node_hash(node: Node) -> str:
    import hashlib

    payload = json.dumps(_node_row_values(node), ensure_ascii=False, sort_keys=True, default=list)
    return hashlib.sha256(payload.encode()).hexdigest()[:20]


def _node_row_values(node: Node) -> list:
    return [node.kind, node.number, node.title, node.text, node.parent, list(node.examples), list(node.aliases),
            node.english, node.html, node.meta, [[r.kind, r.target, r.text, r.start, r.end, r.version] for r in node.refs]]


class Store:
    def __init__(self, path: str | os.PathLike, *, create: bool = True):
        self.path = Path(path)
        if not create and not self.path.exists():
            raise KbError(f"{self.path}: no knowledge base here; run 'kb ingest' first (or pass --kb-dir)")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = sqlite3.connect(self.path, isolation_level=None)
            self.db.execute("PRAGMA foreign_keys = ON")
            self.db.execute("PRAGMA journal_mode = WAL")
            self.db.executescript(SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise KbError(f"{self.path}: not a kb database ({exc})") from None
        row = self.db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        if row is None:
            self.db.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
        elif int(row[0]) != SCHEMA_VERSION:
            raise KbError(f"{self.path}: schema version {row[0]}, this kb expects {SCHEMA_VERSION}; re-ingest into a new --kb-dir")

    @classmethod
    def open(cls, kb_dir: str | os.PathLike | None = None, *, create: bool = True) -> Store:
        return cls(default_kb_dir(kb_dir) / DB_NAME, create=create)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # -- writing -----------------------------------------------------------------------------------------
    def has_document(self, source: str, content_hash: str) -> bool:
        """Whether ``source`` was ingested from bytes with this hash (its parse would change nothing)."""
        return self.db.execute("SELECT 1 FROM documents WHERE source=? AND content_hash=? LIMIT 1",
                               (source, content_hash)).fetchone() is not None

    def put_document(self, doc: Document, authority: Mapping[str, int] | None = None) -> bool:
        """Store ``doc``, replacing an earlier ingest of the same (source, version, lang). False if unchanged.
        ``authority`` ranks source kinds (``ingest.kinds.authority()``): see :meth:`put_nodes`."""
        row = self.db.execute("SELECT id, content_hash FROM documents WHERE source=? AND version=? AND lang=?",
                              (doc.source, doc.version, doc.lang)).fetchone()
        if row and row[1] == doc.content_hash:
            return False
        if row:
            self.db.execute("DELETE FROM nodes WHERE doc_id=?", (row[0],))
            self.db.execute("DELETE FROM documents WHERE id=?", (row[0],))
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        cur = self.db.execute(
            "INSERT INTO documents (source, kind, lang, version, effective_date, sync_date, title, content_hash, ingested_at)"
            " VALUES (?,?,?,?,?,?,?,?,?)",
            (doc.source, doc.kind, doc.lang, doc.version, doc.effective_date, doc.sync_date, doc.title, doc.content_hash, now))
        self.put_nodes(cur.lastrowid, doc.kind, doc.version, doc.lang, doc.nodes, authority or {})
        return True

    def put_nodes(self, doc_id: int, source_kind: str, version: str, lang: str, nodes: Iterable[Node],
                  authority: Mapping[str, int]) -> None:
        """Insert nodes of a document. When another document already gave a node with the same key, the source
        whose kind ranks higher in ``authority`` wins (a CR text file over a Wisdom Guild page of the same
        version; equal ranks: the newer); when both give the same text, the loser's glossary-term links and
        examples are kept on the winner."""
        rank = authority.get(source_kind, 0)
        for node in nodes:
            key = NodeKey(version, lang, node.id)
            owner = doc_id
            held = self.db.execute("SELECT d.id, d.kind FROM nodes n JOIN documents d ON d.id=n.doc_id"
                                   " WHERE n.version=? AND n.lang=? AND n.id=?", (version, lang, node.id)).fetchone()
            if held:
                held_node = self.node(key)
                if authority.get(held[1], 0) > rank:
                    node, owner = merge_same_text(held_node, node), held[0]
                else:
                    node = merge_same_text(node, held_node)
                self.db.execute("DELETE FROM nodes WHERE version=? AND lang=? AND id=?", (version, lang, node.id))
            self.db.execute(
                "INSERT INTO nodes VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (version, lang, node.id, owner, node.kind, node.number, node.title, node.text, node.parent, node.order,
                 _dump(list(node.examples)), _dump(list(node.aliases)), node.english, node.html, _dump(node.meta),
                 node_hash(node)))
            self.db.executemany(
                "INSERT INTO refs (version, lang, node_id, seq, kind, target, text, start, end_, cited_version)"
                " VALUES (?,?,?,?,?,?,?,?,?,?)",
                [(version, lang, node.id, seq, r.kind, r.target, r.text, r.start, r.end, r.version)
                 for seq, r in enumerate(node.refs)])

    def set_resolutions(self, resolutions: Iterable[tuple[NodeKey, int, NodeKey | None]]) -> None:
        self.db.executemany(
            "UPDATE refs SET resolved_version=?, resolved_lang=?, resolved_id=? WHERE version=? AND lang=? AND node_id=? AND seq=?",
            [((t.version, t.lang, t.id) if t else (None, None, None)) + (s.version, s.lang, s.id, seq)
             for s, seq, t in resolutions])

    # -- reading -----------------------------------------------------------------------------------------
    def documents(self) -> list[DocumentInfo]:
        rows = self.db.execute("SELECT id, source, kind, lang, version, effective_date, sync_date, title, content_hash,"
                               " ingested_at FROM documents ORDER BY id").fetchall()
        return [DocumentInfo(*r) for r in rows]

    def document_of(self, key: NodeKey) -> DocumentInfo | None:
        row = self.db.execute(
            "SELECT d.id, d.source, d.kind, d.lang, d.version, d.effective_date, d.sync_date, d.title, d.content_hash,"
            " d.ingested_at FROM documents d JOIN nodes n ON n.doc_id=d.id WHERE n.version=? AND n.lang=? AND n.id=?",
            (key.version, key.lang, key.id)).fetchone()
        return DocumentInfo(*row) if row else None

    def versions(self, lang: str | None = None) -> list[str]:
        """CR versions present (newest first), optionally for one language."""
        sql = "SELECT DISTINCT version FROM documents WHERE version != ''"
        args: tuple = ()
        if lang:
            sql += " AND lang=?"
            args = (lang,)
        return sorted((r[0] for r in self.db.execute(sql, args)), reverse=True)

    def nodes(self, version: str | None = None, lang: str | None = None, kinds: Iterable[str] | None = None) -> Iterator[Node]:
        """Nodes in document order, with their references."""
        where, args = self._filter(version, lang, kinds)
        refs: dict[tuple, list[Ref]] = {}
        for r in self.db.execute(f"SELECT r.version, r.lang, r.node_id, r.kind, r.target, r.text, r.start, r.end_, r.cited_version"
                                 f" FROM refs r JOIN nodes n ON n.version=r.version AND n.lang=r.lang AND n.id=r.node_id"
                                 f"{where} ORDER BY r.version, r.lang, r.node_id, r.seq", args):
            refs.setdefault(r[:3], []).append(Ref(*r[3:]))
        for row in self.db.execute(
                f"SELECT n.version, n.lang, n.id, n.kind, n.number, n.title, n.text, n.parent, n.ord, n.examples, n.aliases,"
                f" n.english, n.html, n.meta FROM nodes n{where} ORDER BY n.version DESC, n.lang, n.ord", args):
            yield _node(row, refs.get(row[:3], []))

    def node(self, key: NodeKey) -> Node | None:
        row = self.db.execute(
            "SELECT version, lang, id, kind, number, title, text, parent, ord, examples, aliases, english, html, meta"
            " FROM nodes WHERE version=? AND lang=? AND id=?", (key.version, key.lang, key.id)).fetchone()
        if row is None:
            return None
        refs = [Ref(*r) for r in self.db.execute(
            "SELECT kind, target, text, start, end_, cited_version FROM refs WHERE version=? AND lang=? AND node_id=? ORDER BY seq",
            (key.version, key.lang, key.id))]
        return _node(row, refs)

    def node_keys(self) -> list[tuple[NodeKey, str]]:
        """Every node's key with its content hash."""
        return [(NodeKey(*r[:3]), r[3]) for r in self.db.execute("SELECT version, lang, id, content_hash FROM nodes")]

    def refs(self, version: str | None = None, lang: str | None = None) -> Iterator[StoredRef]:
        where, args = [], []
        if version is not None:
            where.append("version=?"); args.append(version)
        if lang is not None:
            where.append("lang=?"); args.append(lang)
        sql = ("SELECT version, lang, node_id, seq, kind, target, text, start, end_, cited_version, resolved_version,"
               " resolved_lang, resolved_id FROM refs")
        if where:
            sql += " WHERE " + " AND ".join(where)
        for r in self.db.execute(sql + " ORDER BY version, lang, node_id, seq", args):
            yield _stored_ref(r)

    def refs_from(self, key: NodeKey) -> list[StoredRef]:
        return [_stored_ref(r) for r in self.db.execute(
            "SELECT version, lang, node_id, seq, kind, target, text, start, end_, cited_version, resolved_version,"
            " resolved_lang, resolved_id FROM refs WHERE version=? AND lang=? AND node_id=? ORDER BY seq",
            (key.version, key.lang, key.id))]

    def cited_by(self, key: NodeKey) -> list[StoredRef]:
        """References from other nodes that resolved to ``key``."""
        return [_stored_ref(r) for r in self.db.execute(
            "SELECT version, lang, node_id, seq, kind, target, text, start, end_, cited_version, resolved_version,"
            " resolved_lang, resolved_id FROM refs WHERE resolved_id=? AND resolved_version=? AND resolved_lang=?"
            " ORDER BY version, lang, node_id, seq", (key.id, key.version, key.lang))]

    def _filter(self, version, lang, kinds) -> tuple[str, list]:
        clauses, args = [], []
        if version is not None:
            clauses.append("n.version=?"); args.append(version)
        if lang is not None:
            clauses.append("n.lang=?"); args.append(lang)
        if kinds:
            kinds = list(kinds)
            clauses.append(f"n.kind IN ({','.join('?' * len(kinds))})"); args += kinds
        return (" WHERE " + " AND ".join(clauses) if clauses else ""), args


def merge_same_text(winner: Node, loser: Node) -> Node:
    """``winner``, plus ``loser``'s term links and examples when both nodes have the same text."""
    if " ".join(winner.text.split()) != " ".join(loser.text.split()):
        return winner
    refs = winner.refs + tuple(r for r in loser.refs if r.kind == REF_TERM and r not in winner.refs)
    return replace(winner, refs=refs, examples=winner.examples or loser.examples)


def _dump(value) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _node(row, refs: list[Ref]) -> Node:
    version, lang, id_, kind, number, title, text, parent, order, examples, aliases, english, html, meta = row
    return Node(id=id_, kind=kind, lang=lang, version=version, text=text, number=number, title=title, parent=parent, order=order,
                examples=tuple(json.loads(examples)), refs=tuple(refs), aliases=tuple(json.loads(aliases)),
                english=english, html=html, meta=json.loads(meta))


def _stored_ref(r) -> StoredRef:
    source = NodeKey(r[0], r[1], r[2])
    target = NodeKey(r[10], r[11], r[12]) if r[12] is not None else None
    return StoredRef(source, r[3], Ref(r[4], r[5], r[6], r[7], r[8], r[9]), target)
