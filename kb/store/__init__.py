"""The store: one SQLite file holding every document, each source's contribution to each node, the merged nodes,
their references and resolutions — and the only module that speaks SQL (schema and migrations: :mod:`kb.store.schema`;
the one-writer lock: :mod:`kb.store.lock`).

Location: ``--kb-dir``, else ``$KB_HOME``, else ``./.kb``; the database is ``kb.sqlite`` inside.

Provenance: each document's nodes are kept as it gave them (its *contribution*); the node every reader sees is merged
from the contributions by source authority (each document's, given by the ingest: the store knows no kinds; the newer
document first among equals), with the
other sources' glossary-term links and examples added when they give the same text (:func:`merge_same_text`).
Re-ingesting or removing a source replaces exactly its contribution and re-merges the nodes it touched.

Writes are transactional by default: each write method runs in its own transaction unless the caller has opened one
with :meth:`Store.transaction` (re-entrant), so an ingest that fails midway leaves what was stored before untouched; rows
are written in batches (``executemany``). Reading methods return frozen records (or plain tuples where a caller reads
hundreds of thousands of rows, documented per method).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Collection, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kb.model import GLOSSARY, REF_RULE, REF_SECTION, REF_TERM, UNVERSIONED, Document, Node, Ref
from kb.store.schema import SCHEMA_VERSION, connect, node_payload

__all__ = ["DB_NAME", "SCHEMA_VERSION", "DocumentInfo", "NodeKey", "Store", "StoredRef",
           "default_kb_dir", "merge_same_text", "node_hash"]

DB_NAME = "kb.sqlite"
Scopes = Collection[tuple[str, str]] | None  # (version, lang) pairs a reading or deleting method keeps to; None: all


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
    translated_date: str | None = None  # a translation's own date, from its translator line


def default_kb_dir(kb_dir: str | os.PathLike | None = None) -> Path:
    if kb_dir:
        return Path(kb_dir)
    if os.environ.get("KB_HOME"):
        return Path(os.environ["KB_HOME"])
    return Path.cwd() / ".kb"


def node_hash(node: Node) -> str:
    payload = json.dumps(_node_row_values(node), ensure_ascii=False, sort_keys=True, default=list)
    return hashlib.sha256(payload.encode()).hexdigest()[:20]


def _node_row_values(node: Node) -> list:
    return [node.kind, node.number, node.title, node.text, node.parent, list(node.examples), list(node.aliases),
            node.english, node.html, node.meta, [[r.kind, r.target, r.text, r.start, r.end, r.version] for r in node.refs]]


class Store:
    """The repository every stage reads and writes through (see the module doc). Open with :meth:`Store.open`."""

    def __init__(self, path: str | os.PathLike, *, create: bool = True, kb_dir: str | os.PathLike | None = None):
        """``kb_dir``: the folder of the search index and caches that go with this database, when it is not the
        database's own (``kb update`` writes the live database in one transaction and its index beside, staged)."""
        self.path = Path(path)
        self._kb_dir = Path(kb_dir) if kb_dir is not None else self.path.parent
        self._db = connect(self.path, create=create)
        self._rewritten: set[NodeKey] = set()  # see take_rewritten
        self._node_counts: tuple[tuple[int, int], dict] | None = None  # (generation, counts): see node_counts
        self._light_nodes: tuple[tuple[int, int], dict] | None = None  # (generation, nodes by scope): see light_nodes

    @classmethod
    def open(cls, kb_dir: str | os.PathLike | None = None, *, create: bool = True) -> Store:
        """The store of the kb folder ``kb_dir`` (see :func:`default_kb_dir`); ``create=False``: KbError if none."""
        return cls(default_kb_dir(kb_dir) / DB_NAME, create=create)

    @property
    def kb_dir(self) -> Path:
        """The kb folder of this store: its search index, caches and writer lock (the database's folder unless
        opened with another)."""
        return self._kb_dir

    def close(self) -> None:
        self._db.close()

    def take_rewritten(self) -> set[NodeKey]:
        """The merged nodes this Store has added, changed or removed since the last call (what the linker must link
        again; a node whose merged content and source stayed the same keeps its row, references and links)."""
        rewritten, self._rewritten = self._rewritten, set()
        return rewritten

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One transaction around the block: all its writes or none. Re-entrant: inside another, joins it."""
        if self._db.in_transaction:
            yield
            return
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    # -- writing: documents and their contributions -----------------------------------------------------------
    def has_document(self, source: str, content_hash: str) -> bool:
        """Whether ``source`` was ingested from bytes with this hash (its parse would change nothing)."""
        return self._db.execute("SELECT 1 FROM documents WHERE source=? AND content_hash=? LIMIT 1",
                                (source, content_hash)).fetchone() is not None

    def put_document(self, doc: Document, authority: int = 0) -> bool:
        """Store ``doc`` as its source's contribution, replacing an earlier ingest of the same (source, version,
        lang), and re-merge every node either gave. False (and nothing written) if the content hash is unchanged.
        ``authority``: the rank of the document's source kind (``ingest.kinds``); the higher wins a node."""
        with self.transaction():
            row = self._db.execute("SELECT id, content_hash, authority FROM documents WHERE source=? AND version=?"
                                   " AND lang=?", (doc.source, doc.version, doc.lang)).fetchone()
            if row and row[1] == doc.content_hash:
                return False
            now = datetime.now(UTC).isoformat(timespec="seconds")
            values = (doc.kind, doc.effective_date, doc.sync_date, doc.title, doc.content_hash, now, authority,
                      doc.translated_date)
            given: dict[str, Node] = {}
            for node in doc.nodes:  # a node given twice by one source: the later, with the earlier's term links
                given[node.id] = merge_same_text(node, given[node.id]) if node.id in given else node
            payloads = {node_id: _payload(node) for node_id, node in given.items()}
            if row:  # the same document row, its contribution replaced: only the nodes whose part changed are merged
                doc_id = row[0]
                stored = dict(self._db.execute("SELECT id, node FROM contributions WHERE doc_id=?", (doc_id,)))
                if row[2] != authority:  # every node it gives may now win or lose: all merged again
                    stored = {}
                    self._db.execute("DELETE FROM contributions WHERE doc_id=?", (doc_id,))
                gone = stored.keys() - payloads.keys()
                changed = [node_id for node_id, payload in payloads.items() if stored.get(node_id) != payload]
                self._db.executemany("DELETE FROM contributions WHERE doc_id=? AND id=?",
                                     [(doc_id, node_id) for node_id in [*gone, *changed] if node_id in stored])
                touched = {NodeKey(doc.version, doc.lang, node_id) for node_id in gone}
                self._db.execute("UPDATE documents SET kind=?, effective_date=?, sync_date=?, title=?, content_hash=?,"
                                  " ingested_at=?, authority=?, translated_date=? WHERE id=?", (*values, doc_id))
            else:
                changed, touched = list(payloads), set()
                cur = self._db.execute(
                    "INSERT INTO documents (source, lang, version, kind, effective_date, sync_date, title, content_hash,"
                    " ingested_at, authority, translated_date) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    (doc.source, doc.lang, doc.version, *values))
                assert cur.lastrowid is not None  # always set by an INSERT
                doc_id = cur.lastrowid
            self._db.executemany(
                "INSERT INTO contributions (version, lang, id, doc_id, node) VALUES (?,?,?,?,?)",
                [(doc.version, doc.lang, node_id, doc_id, payloads[node_id]) for node_id in changed])
            fresh = {NodeKey(doc.version, doc.lang, node_id): (authority, doc_id, given[node_id]) for node_id in changed}
            self._merge(touched | fresh.keys(), fresh)
        return True

    def remove_document(self, source: str) -> int:
        """Remove every document ingested from ``source`` (all versions and languages) and exactly its contribution
        to each node; return how many documents were removed. References must be linked again afterwards."""
        with self.transaction():
            ids = [r[0] for r in self._db.execute("SELECT id FROM documents WHERE source=?", (source,))]
            self._merge(self._drop_documents(ids))
        return len(ids)

    def _drop_documents(self, doc_ids: list[int]) -> set[NodeKey]:
        """Delete documents (their contributions and the nodes they won follow); return the keys they gave."""
        keys: set[NodeKey] = set()
        for doc_id in doc_ids:
            keys.update(NodeKey(*r) for r in self._db.execute(
                "SELECT version, lang, id FROM contributions WHERE doc_id=?", (doc_id,)))
            self._db.execute("DELETE FROM documents WHERE id=?", (doc_id,))
        return keys

    def _merge(self, keys: set[NodeKey], fresh: dict[NodeKey, tuple[int, int, Node]] | None = None) -> None:
        """Rewrite the merged node (and its source references) of each key from the contributions that remain;
        ``fresh``: the contributions just written, as (authority, doc id, node), not read back."""
        if not keys:
            return
        fresh = fresh or {}
        fresh_docs = {doc_id for _, doc_id, _ in fresh.values()}
        self._load_keys(keys)
        given: dict[NodeKey, list[tuple[int, int, Node]]] = {key: [item] for key, item in fresh.items()}
        for version, lang, id_, doc_id, authority, payload in self._db.execute(
                "SELECT c.version, c.lang, c.id, c.doc_id, d.authority, c.node FROM temp.keys k JOIN contributions c"
                " ON c.version=k.version AND c.lang=k.lang AND c.id=k.id JOIN documents d ON d.id=c.doc_id"):
            if doc_id not in fresh_docs:
                key = NodeKey(version, lang, id_)
                given.setdefault(key, []).append((authority, doc_id, _from_payload(key, payload)))
        held = {NodeKey(v, lang, i): (owner, digest, order) for v, lang, i, owner, digest, order in self._db.execute(
            "SELECT n.version, n.lang, n.id, n.doc_id, n.content_hash, n.ord FROM temp.keys k JOIN nodes n"
            " ON n.version=k.version AND n.lang=k.lang AND n.id=k.id")}
        node_rows, ref_rows, kept = [], [], set()
        for key, contributions in given.items():
            contributions.sort(key=lambda c: (-c[0], -c[1]))  # most authoritative first; the newer among equals
            node = contributions[0][2]
            for _, _, other in contributions[1:]:
                node = merge_same_text(node, other)
            digest = node_hash(node)
            if held.get(key) == (contributions[0][1], digest, node.order):  # as it was: row, references, links stay
                kept.add(key)
                continue
            node_rows.append((key.version, key.lang, key.id, contributions[0][1], node.kind, node.number, node.title,
                              node.text, node.parent, node.order, _dump(list(node.examples)), _dump(list(node.aliases)),
                              node.english, node.html, _dump(node.meta), digest))
            ref_rows += [(key.version, key.lang, key.id, seq, r.kind, r.target, r.text, r.start, r.end, r.version)
                         for seq, r in enumerate(node.refs)]
        rewritten = keys - kept
        self._rewritten |= rewritten
        self._db.executemany("DELETE FROM nodes WHERE version=? AND lang=? AND id=?",
                             [(k.version, k.lang, k.id) for k in rewritten])
        self._db.executemany("INSERT INTO nodes VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", node_rows)
        self._db.executemany("INSERT INTO refs (version, lang, node_id, seq, kind, target, text, start, end_,"
                             " cited_version) VALUES (?,?,?,?,?,?,?,?,?,?)", ref_rows)

    def _load_keys(self, keys: Iterable[NodeKey]) -> None:
        """Fill the connection's temporary table ``keys`` (joined against by batch reads)."""
        self._db.execute("CREATE TEMP TABLE IF NOT EXISTS keys (version TEXT, lang TEXT, id TEXT)")
        self._db.execute("DELETE FROM temp.keys")
        self._db.executemany("INSERT INTO temp.keys VALUES (?,?,?)", [(k.version, k.lang, k.id) for k in keys])

    # -- writing: links -----------------------------------------------------------------------------------------
    def set_resolutions(self, resolutions: Iterable[tuple[NodeKey, int, NodeKey | None]]) -> None:
        """Record where each (citing node, reference seq) resolved to (None: unresolved)."""
        with self.transaction():
            self._db.executemany(
                "UPDATE refs SET resolved_version=?, resolved_lang=?, resolved_id=? WHERE version=? AND lang=?"
                " AND node_id=? AND seq=?",
                [((t.version, t.lang, t.id) if t else (None, None, None)) + (s.version, s.lang, s.id, seq)
                 for s, seq, t in resolutions])

    def delete_refs(self, kinds: Iterable[str], scopes: Scopes = None) -> None:
        """Delete every reference of these kinds (the linker's derived references, before it makes them again), of
        the citing nodes in ``scopes`` only when given."""
        kinds = list(kinds)
        where, args = _scoped("refs", scopes)
        kind = "kind" if scopes is None else "+kind"  # '+': a scope's are found by key, not among every version's
        with self.transaction():
            self._db.execute(f"DELETE FROM refs{where} AND {kind} IN ({','.join('?' * len(kinds))})", [*args, *kinds])

    def add_refs(self, refs: Iterable[tuple[NodeKey, Ref, NodeKey | None]]) -> int:
        """Append references (derived by the linker) to nodes, after each node's own, with where they resolved to
        (None: not yet resolved); return how many were added."""
        refs = list(refs)
        with self.transaction():
            self._load_keys({key for key, _, _ in refs})
            next_seq = {NodeKey(v, lang, i): top + 1 for v, lang, i, top in self._db.execute(
                "SELECT k.version, k.lang, k.id, (SELECT COALESCE(MAX(seq), -1) FROM refs r WHERE r.version=k.version"
                " AND r.lang=k.lang AND r.node_id=k.id) FROM temp.keys k")}
            rows = []
            for key, ref, target in refs:
                resolved = (target.version, target.lang, target.id) if target else (None, None, None)
                rows.append((key.version, key.lang, key.id, next_seq[key], ref.kind, ref.target, ref.text, ref.start,
                             ref.end, ref.version, *resolved))
                next_seq[key] += 1
            self._db.executemany(
                "INSERT INTO refs (version, lang, node_id, seq, kind, target, text, start, end_, cited_version,"
                " resolved_version, resolved_lang, resolved_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
        return len(rows)

    # -- reading: documents and versions ------------------------------------------------------------------------
    def documents(self) -> list[DocumentInfo]:
        rows = self._db.execute("SELECT id, source, kind, lang, version, effective_date, sync_date, title, content_hash,"
                                " ingested_at, translated_date FROM documents ORDER BY id").fetchall()
        return [DocumentInfo(*r) for r in rows]

    def document_of(self, key: NodeKey) -> DocumentInfo | None:
        """The document whose contribution the merged node ``key`` shows (the most authoritative source)."""
        row = self._db.execute(
            "SELECT d.id, d.source, d.kind, d.lang, d.version, d.effective_date, d.sync_date, d.title, d.content_hash,"
            " d.ingested_at, d.translated_date FROM documents d JOIN nodes n ON n.doc_id=d.id"
            " WHERE n.version=? AND n.lang=? AND n.id=?",
            (key.version, key.lang, key.id)).fetchone()
        return DocumentInfo(*row) if row else None

    def contributors(self, key: NodeKey) -> list[DocumentInfo]:
        """Every document that gives the node ``key``, in merge order (the winner first)."""
        rows = self._db.execute(
            "SELECT d.id, d.source, d.kind, d.lang, d.version, d.effective_date, d.sync_date, d.title, d.content_hash,"
            " d.ingested_at, d.translated_date FROM documents d JOIN contributions c ON c.doc_id=d.id"
            " WHERE c.version=? AND c.lang=? AND c.id=? ORDER BY d.authority DESC, d.id DESC",
            (key.version, key.lang, key.id)).fetchall()
        return [DocumentInfo(*r) for r in rows]

    def versions(self, lang: str | None = None) -> list[str]:
        """CR versions present (newest first), optionally for one language."""
        sql = "SELECT DISTINCT version FROM documents WHERE version != ''"
        args: tuple = ()
        if lang:
            sql += " AND lang=?"
            args = (lang,)
        return sorted((r[0] for r in self._db.execute(sql, args)), reverse=True)

    def node_counts(self) -> dict[tuple[str, str], dict[str, int]]:
        """Number of nodes per kind of each versioned (version, lang) (counted again only after a write)."""
        generation = self.generation()
        if self._node_counts is None or self._node_counts[0] != generation:
            counts: dict[tuple[str, str], dict[str, int]] = {}
            for version, lang, kind, n in self._db.execute(
                    "SELECT version, lang, kind, COUNT(*) FROM nodes WHERE version != '' GROUP BY version, lang, kind"):
                counts.setdefault((version, lang), {})[kind] = n
            self._node_counts = (generation, counts)
        return {key: dict(by_kind) for key, by_kind in self._node_counts[1].items()}

    def generation(self) -> tuple[int, int]:
        """A value that changes whenever the database may have: a write through this Store, or a commit by another
        connection (SQLite's ``data_version``). What read caches are keyed by."""
        return self._db.execute("PRAGMA data_version").fetchone()[0], self._db.total_changes

    def content_generation(self) -> str:
        """A token of the stored content, changed by :meth:`new_content_generation` in the transaction of every
        content change ('' before the first): the search index records the one it was brought in line with."""
        row = self._db.execute("SELECT value FROM meta WHERE key='generation'").fetchone()
        return row[0] if row else ""

    def new_content_generation(self) -> None:
        """Mark the content as changed (see :meth:`content_generation`); call inside the transaction that changes it."""
        self._db.execute("INSERT OR REPLACE INTO meta VALUES ('generation', ?)", (os.urandom(8).hex(),))

    def content_digest(self) -> str:
        """A hash that changes whenever a node, a document or the references change (relinking rewrites references:
        their count and newest row id are enough, and much cheaper than reading them all)."""
        digest = hashlib.sha256()
        # one string made by SQLite (ordered by the subquery; were it not, a build would only redo work): a tenth of
        # a no-op build's time at 11 versions when read as rows
        digest.update((self._db.execute(
            "SELECT group_concat(version || ' ' || lang || ' ' || id || ' ' || content_hash, char(10))"
            " FROM (SELECT version, lang, id, content_hash FROM nodes ORDER BY version, lang, id)").fetchone()[0] or "").encode())
        for sql in ("SELECT count(*), max(rowid) FROM refs",
                    "SELECT source, kind, lang, version, effective_date, sync_date, title, content_hash, ingested_at,"
                    " translated_date FROM documents ORDER BY id"):
            digest.update(json.dumps(self._db.execute(sql).fetchall(), ensure_ascii=False).encode())
        return digest.hexdigest()

    # -- reading: nodes -----------------------------------------------------------------------------------------
    def nodes(self, version: str | None = None, lang: str | None = None, kinds: Iterable[str] | None = None) -> Iterator[Node]:
        """Merged nodes in document order (newest version first), with their references."""
        where, args = _filter("n", version, lang, kinds)
        refs: dict[tuple, list[Ref]] = {}
        for r in self._db.execute(f"SELECT r.version, r.lang, r.node_id, r.kind, r.target, r.text, r.start, r.end_,"
                                  f" r.cited_version FROM refs r JOIN nodes n ON n.version=r.version AND n.lang=r.lang"
                                  f" AND n.id=r.node_id{where} ORDER BY r.version, r.lang, r.node_id, r.seq", args):
            refs.setdefault(r[:3], []).append(Ref(*r[3:]))
        for row in self._db.execute(
                f"SELECT n.version, n.lang, n.id, n.kind, n.number, n.title, n.text, n.parent, n.ord, n.examples,"
                f" n.aliases, n.english, n.html, n.meta FROM nodes n{where} ORDER BY n.version DESC, n.lang, n.ord, n.id", args):
            yield _node(row, refs.get(row[:3], []))

    def light_nodes(self, version: str, lang: str, kinds: Iterable[str]) -> list[Node]:
        """Nodes of ``kinds`` of one version and language in document order, without references or HTML (much cheaper
        than :meth:`nodes`; for readers that take references from :meth:`ref_rows`). Each version and language is read
        once until the store changes (:meth:`generation`): the version diff, the current view and the site read the
        same nodes in one ``kb update``."""
        generation = self.generation()
        if self._light_nodes is None or self._light_nodes[0] != generation:
            self._light_nodes = (generation, {})
        nodes = self._light_nodes[1].get((version, lang))
        if nodes is None:
            nodes = self._light_nodes[1][(version, lang)] = self._read_light_nodes(version, lang)
        kinds = set(kinds)
        return [node for node in nodes if node.kind in kinds]

    def _read_light_nodes(self, version: str, lang: str) -> list[Node]:
        rows = self._db.execute(
            "SELECT id, kind, number, title, text, parent, ord, examples, aliases, english, meta FROM nodes"
            " WHERE version=? AND lang=? ORDER BY ord, id", (version, lang))
        return [Node(id=id_, kind=kind, lang=lang, version=version, text=text, number=number, title=title,
                     parent=parent, order=order, examples=tuple(json.loads(examples)) if examples != "[]" else (),
                     aliases=tuple(json.loads(aliases)) if aliases != "[]" else (), english=english,
                     meta=json.loads(meta_json) if meta_json != "{}" else {})
                for id_, kind, number, title, text, parent, order, examples, aliases, english, meta_json in rows]

    def node(self, key: NodeKey) -> Node | None:
        row = self._db.execute(
            "SELECT version, lang, id, kind, number, title, text, parent, ord, examples, aliases, english, html, meta"
            " FROM nodes WHERE version=? AND lang=? AND id=?", (key.version, key.lang, key.id)).fetchone()
        if row is None:
            return None
        refs = [Ref(*r) for r in self._db.execute(
            "SELECT kind, target, text, start, end_, cited_version FROM refs WHERE version=? AND lang=? AND node_id=?"
            " ORDER BY seq", (key.version, key.lang, key.id))]
        return _node(row, refs)

    def kind_of(self, key: NodeKey) -> str | None:
        """The node's kind, None when there is no such node."""
        row = self._db.execute("SELECT kind FROM nodes WHERE version=? AND lang=? AND id=?",
                               (key.version, key.lang, key.id)).fetchone()
        return row[0] if row else None

    def node_keys(self) -> list[tuple[NodeKey, str]]:
        """Every node's key with its content hash."""
        return [(NodeKey(*r[:3]), r[3]) for r in self._db.execute("SELECT version, lang, id, content_hash FROM nodes")]

    def content_hashes(self, version: str, lang: str) -> list[tuple[str, str]]:
        """(id, content hash) of every node of one version and language, by id."""
        return [tuple(r) for r in self._db.execute(
            "SELECT id, content_hash FROM nodes WHERE version=? AND lang=? ORDER BY id", (version, lang))]

    def keys_with_id(self, node_id: str) -> list[NodeKey]:
        """Every version and language of the node ``node_id``, newest version first."""
        return [NodeKey(*r) for r in self._db.execute(
            "SELECT version, lang, id FROM nodes WHERE id=? ORDER BY version DESC, lang", (node_id,))]

    def keys_numbered(self, number: str, *, pattern: str | None = None, limit: int = 2000) -> list[tuple[NodeKey, str, int]]:
        """(key, kind, order) of the nodes with rule number ``number`` (or whose number matches the GLOB
        ``pattern``), at most ``limit``."""
        sql, args = "SELECT version, lang, id, kind, ord FROM nodes WHERE number = ?", [number]
        if pattern:
            sql += " OR number GLOB ?"
            args.append(pattern)
        return [(NodeKey(v, lang, id_), kind, order)
                for v, lang, id_, kind, order in self._db.execute(sql + f" LIMIT {int(limit)}", args)]

    def glossary_named(self, name: str, *, version: str | None = None, lang: str | None = None,
                       by_title: bool = True) -> list[NodeKey]:
        """Glossary entries whose English name (or, with ``by_title``, title) is ``name`` ignoring case, newest
        version first."""
        where, args = _filter("n", version, lang, [GLOSSARY])
        match = "(n.title=? COLLATE NOCASE OR n.english=? COLLATE NOCASE)" if by_title else "n.english=? COLLATE NOCASE"
        args += [name, name] if by_title else [name]
        return [NodeKey(*r) for r in self._db.execute(
            f"SELECT n.version, n.lang, n.id FROM nodes n{where} AND {match} ORDER BY n.version DESC, n.lang", args)]

    def node_sources(self, scopes: Scopes = None) -> dict[NodeKey, str]:
        """The source (file or URL) each merged node (of ``scopes``, when given) shows."""
        where, args = _scoped("n", scopes)
        return {NodeKey(v, lang, i): source for v, lang, i, source in self._db.execute(
            f"SELECT n.version, n.lang, n.id, d.source FROM nodes n JOIN documents d ON d.id=n.doc_id{where}", args)}

    def node_names(self, version: str, lang: str) -> dict[str, tuple[str, str | None, str | None]]:
        """id → (kind, title, English name) of every node of one version and language."""
        return {id_: (kind, title, english) for id_, kind, title, english in self._db.execute(
            "SELECT id, kind, title, english FROM nodes WHERE version=? AND lang=?", (version, lang))}

    def name_rows(self, scopes: Scopes = None, *, lang: str | None = None, kinds: Iterable[str] | None = None
                  ) -> Iterator[tuple[NodeKey, str, str | None, tuple[str, ...], str | None]]:
        """(key, kind, title, aliases, English name) of every node (of ``scopes``, of ``lang`` and of ``kinds``, when
        given): what the linker and the search's name tables look names up in."""
        where, args = _scoped("nodes", scopes)
        if lang is not None:
            where, args = f"{where} AND lang=?", [*args, lang]
        if kinds is not None:
            kinds = list(kinds)
            where, args = f"{where} AND kind IN ({','.join('?' * len(kinds))})", [*args, *kinds]
        for version, lang, id_, kind, title, aliases, english in self._db.execute(
                f"SELECT version, lang, id, kind, title, aliases, english FROM nodes{where}", args):
            yield NodeKey(version, lang, id_), kind, title, tuple(json.loads(aliases)), english

    def glossary_rows(self, scopes: Scopes = None, *, lang: str | None = None
                      ) -> Iterator[tuple[NodeKey, str | None, tuple[str, ...], str | None, str, dict]]:
        """(key, title, aliases, English name, text, meta) of every versioned glossary entry (of ``scopes`` and of
        ``lang``, when given), in document order."""
        where, args = _scoped("nodes", scopes)
        if lang is not None:
            where, args = f"{where} AND lang=?", [*args, lang]
        for version, lang, id_, title, aliases, english, text, meta in self._db.execute(
                f"SELECT version, lang, id, title, aliases, english, text, meta FROM nodes{where} AND kind=?"
                " AND version != ? ORDER BY ord, version, lang, id", (*args, GLOSSARY, UNVERSIONED)):
            yield NodeKey(version, lang, id_), title, tuple(json.loads(aliases)), english, text, json.loads(meta)

    def texts(self, kinds: Iterable[str], scopes: Scopes = None, nodes: Collection[NodeKey] | None = None
              ) -> list[tuple[NodeKey, str, str]]:
        """(key, kind, text) of every versioned node of these kinds (of ``scopes`` and among ``nodes``, when given)."""
        kinds = list(kinds)
        where, args = _scoped("nodes", scopes)
        keyed, keys = _keyed("nodes", "id", nodes)
        rows = [(NodeKey(v, lang, i), kind, text) for v, lang, i, kind, text in self._db.execute(
            f"SELECT version, lang, id, kind, text FROM nodes{where}{keyed} AND version != ?"
            f" AND kind IN ({','.join('?' * len(kinds))})", (*args, *keys, UNVERSIONED, *kinds))]
        return rows if nodes is None else [row for row in rows if row[0] in nodes]

    # -- reading: references --------------------------------------------------------------------------------------
    def refs(self, version: str | None = None, lang: str | None = None,
             kinds: Iterable[str] | None = None) -> Iterator[StoredRef]:
        """Stored references (optionally of one citing version, language, kinds), by citing node and order."""
        clauses, args = [], []
        if version is not None:
            clauses.append("version=?")
            args.append(version)
        if lang is not None:
            clauses.append("lang=?")
            args.append(lang)
        if kinds is not None:
            kinds = list(kinds)
            clauses.append(f"kind IN ({','.join('?' * len(kinds))})")
            args += kinds
        sql = _REF_COLUMNS + (" WHERE " + " AND ".join(clauses) if clauses else "")
        for r in self._db.execute(sql + " ORDER BY version, lang, node_id, seq", args):
            yield _stored_ref(r)

    def ref_rows(self, version: str, lang: str | None = None) -> list[tuple]:
        """References of one citing version (and language) as plain tuples, for readers of very many: (lang,
        node_id, kind, target, start, end, resolved_version, resolved_lang, resolved_id), by node and order."""
        return self._db.execute(
            "SELECT lang, node_id, kind, target, start, end_, resolved_version, resolved_lang, resolved_id"
            f" FROM refs WHERE version=?{' AND lang=?' if lang else ''} ORDER BY version, lang, node_id, seq",
            (version, lang) if lang else (version,)).fetchall()

    def rule_refs_naming(self, version: str, lang: str, numbers: Iterable[str]) -> list[StoredRef]:
        """The rule and section references of one version and language whose target is one of ``numbers`` (looked up
        by kind and target, not among all of the version's)."""
        numbers = sorted(set(numbers))
        return [_stored_ref(r) for r in self._db.execute(
            _REF_COLUMNS + f" INDEXED BY refs_kind_target WHERE kind IN (?,?) AND target IN ({','.join('?' * len(numbers))})"
            " AND version=? AND lang=? ORDER BY node_id, seq", (REF_RULE, REF_SECTION, *numbers, version, lang))]

    def refs_from(self, key: NodeKey) -> list[StoredRef]:
        return [_stored_ref(r) for r in self._db.execute(
            _REF_COLUMNS + " WHERE version=? AND lang=? AND node_id=? ORDER BY seq", (key.version, key.lang, key.id))]

    def cited_by(self, key: NodeKey) -> list[StoredRef]:
        """References from other nodes that resolved to ``key``."""
        return [_stored_ref(r) for r in self._db.execute(
            _REF_COLUMNS + " WHERE resolved_id=? AND resolved_version=? AND resolved_lang=?"
            " ORDER BY version, lang, node_id, seq", (key.id, key.version, key.lang))]

    def ref_spans(self, scopes: Scopes = None, nodes: Collection[NodeKey] | None = None
                  ) -> Iterator[tuple[NodeKey, str, str, int, int]]:
        """(citing key, kind, target, start, end) of every reference from a versioned node (of ``scopes``, when
        given; from ``nodes``, when given — perhaps others too, when they are too many to name in one query)."""
        where, args = _scoped("refs", scopes)
        keyed, keys = _keyed("refs", "node_id", nodes)
        for version, lang, node_id, kind, target, start, end in self._db.execute(
                f"SELECT version, lang, node_id, kind, target, start, end_ FROM refs{where}{keyed} AND version != ?",
                (*args, *keys, UNVERSIONED)):
            yield NodeKey(version, lang, node_id), kind, target, start, end

    def glossary_rule_targets(self, scopes: Scopes = None) -> Iterator[tuple[NodeKey, str]]:
        """(glossary entry, rule number) of every rule or section a glossary entry (of ``scopes``, when given)
        refers to, in no particular order."""
        where, args = _scoped("n", scopes)
        for version, lang, node_id, target in self._db.execute(  # the entries first, then their references by key
                "SELECT r.version, r.lang, r.node_id, r.target FROM nodes n CROSS JOIN refs r ON n.version=r.version"
                f" AND n.lang=r.lang AND n.id=r.node_id{where} AND n.kind=? AND r.kind IN (?, ?)",
                (*args, GLOSSARY, REF_RULE, REF_SECTION)):
            yield NodeKey(version, lang, node_id), target

    def ref_targets(self, kind: str) -> list[tuple[str, str]]:
        """(target, surface text) of every reference of ``kind``, in the order they were stored."""
        return [tuple(r) for r in self._db.execute("SELECT target, text FROM refs WHERE kind=? ORDER BY rowid", (kind,))]

    def ref_target_names(self, kinds: Iterable[str]) -> list[str]:
        """The distinct targets of the references of these kinds (read from the index on kind and target)."""
        kinds = list(kinds)
        return [r[0] for r in self._db.execute(
            f"SELECT DISTINCT target FROM refs WHERE kind IN ({','.join('?' * len(kinds))})", kinds)]

    def refs_targeting(self, kinds: Iterable[str], targets: Iterable[str]) -> list[StoredRef]:
        """The references of these kinds whose target is one of ``targets``, by citing node and order."""
        kinds, targets = list(kinds), sorted(set(targets))
        out: list[StoredRef] = []
        for start in range(0, len(targets), KEYED_MAX):
            chunk = targets[start:start + KEYED_MAX]
            out += [_stored_ref(r) for r in self._db.execute(
                _REF_COLUMNS + f" INDEXED BY refs_kind_target WHERE kind IN ({','.join('?' * len(kinds))})"
                f" AND target IN ({','.join('?' * len(chunk))})", [*kinds, *chunk])]
        return sorted(out, key=lambda sr: (sr.source_key.version, sr.source_key.lang, sr.source_key.id, sr.seq))

    def delete_refs_of(self, kinds: Iterable[str], nodes: Iterable[NodeKey]) -> None:
        """Delete the references of these kinds from ``nodes`` (the derived references of the nodes the linker
        derives again)."""
        kinds = list(kinds)
        with self.transaction():
            self._db.executemany(
                f"DELETE FROM refs WHERE version=? AND lang=? AND node_id=? AND kind IN ({','.join('?' * len(kinds))})",
                [(key.version, key.lang, key.id, *kinds) for key in nodes])

    def ref_summary(self) -> list[tuple[str, bool, int]]:
        """(kind, resolved?, count) over every stored reference, by kind, the unresolved first (two index reads: the
        references of each kind, and the few unresolved)."""
        unresolved = dict(self._db.execute("SELECT kind, count(*) FROM refs WHERE resolved_id IS NULL GROUP BY kind"))
        out = []
        for kind, n in self._db.execute("SELECT kind, count(*) FROM refs GROUP BY kind ORDER BY kind"):
            missed = unresolved.get(kind, 0)
            out += [(kind, False, missed)] if missed else []
            out += [(kind, True, n - missed)] if n > missed else []
        return out

    def unresolved_refs(self) -> list[tuple[NodeKey, str, str, str]]:
        """(citing key, kind, target, source of the citing node) of every unresolved reference, by node and order."""
        return [(NodeKey(v, lang, i), kind, target, source) for v, lang, i, kind, target, source in self._db.execute(
            "SELECT r.version, r.lang, r.node_id, r.kind, r.target, d.source FROM refs r"
            " JOIN nodes n ON n.version=r.version AND n.lang=r.lang AND n.id=r.node_id JOIN documents d ON d.id=n.doc_id"
            " WHERE r.resolved_id IS NULL ORDER BY r.version, r.lang, r.node_id, r.seq")]


def merge_same_text(winner: Node, loser: Node) -> Node:
    """``winner``, plus ``loser``'s term links and examples when both nodes have the same text."""
    if " ".join(winner.text.split()) != " ".join(loser.text.split()):
        return winner
    refs = winner.refs + tuple(r for r in loser.refs if r.kind == REF_TERM and r not in winner.refs)
    return replace(winner, refs=refs, examples=winner.examples or loser.examples)


_REF_COLUMNS = ("SELECT version, lang, node_id, seq, kind, target, text, start, end_, cited_version, resolved_version,"
                " resolved_lang, resolved_id FROM refs")


KEYED_MAX = 2000  # nodes named in one query at most (SQLite allows 32,766 parameters); more: the caller filters


def _keyed(table: str, id_column: str, nodes: Collection[NodeKey] | None) -> tuple[str, list]:
    """An AND clause keeping the rows of ``table`` that belong to one of ``nodes`` ('' when None, or more than
    :data:`KEYED_MAX`: the caller filters)."""
    if nodes is None or len(nodes) > KEYED_MAX:
        return "", []
    if not nodes:
        return " AND 0", []
    values = ",".join("(?,?,?)" for _ in nodes)
    return (f" AND ({table}.version, {table}.lang, {table}.{id_column}) IN (VALUES {values})",
            [x for key in nodes for x in (key.version, key.lang, key.id)])


def _scoped(table: str, scopes: Scopes) -> tuple[str, list]:
    """A WHERE clause keeping the rows of ``table`` in ``scopes`` ((version, lang) pairs; None: every row)."""
    if scopes is None:
        return " WHERE 1", []
    pairs = sorted(set(scopes))
    if not pairs:
        return " WHERE 0", []
    values = ",".join("(?,?)" for _ in pairs)
    return f" WHERE ({table}.version, {table}.lang) IN (VALUES {values})", [x for pair in pairs for x in pair]


def _filter(table: str, version: str | None, lang: str | None, kinds: Iterable[str] | None) -> tuple[str, list[Any]]:
    clauses, args = [], []
    if version is not None:
        clauses.append(f"{table}.version=?")
        args.append(version)
    if lang is not None:
        clauses.append(f"{table}.lang=?")
        args.append(lang)
    if kinds:
        kinds = list(kinds)
        clauses.append(f"{table}.kind IN ({','.join('?' * len(kinds))})")
        args += kinds
    return (" WHERE " + " AND ".join(clauses) if clauses else " WHERE 1"), args


def _payload(node: Node) -> str:
    return node_payload(node.kind, node.number, node.title, node.text, node.parent, node.order, list(node.examples),
                        list(node.aliases), node.english, node.html, node.meta,
                        [[r.kind, r.target, r.text, r.start, r.end, r.version] for r in node.refs])


def _from_payload(key: NodeKey, payload: str) -> Node:
    p = json.loads(payload)
    return Node(id=key.id, kind=p["kind"], lang=key.lang, version=key.version, text=p["text"], number=p["number"],
                title=p["title"], parent=p["parent"], order=p["order"], examples=tuple(p["examples"]),
                refs=tuple(Ref(*r) for r in p["refs"]), aliases=tuple(p["aliases"]), english=p["english"],
                html=p["html"], meta=p["meta"])


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _node(row: tuple[Any, ...], refs: list[Ref]) -> Node:
    version, lang, id_, kind, number, title, text, parent, order, examples, aliases, english, html, meta = row
    return Node(id=id_, kind=kind, lang=lang, version=version, text=text, number=number, title=title, parent=parent, order=order,
                examples=tuple(json.loads(examples)), refs=tuple(refs), aliases=tuple(json.loads(aliases)),
                english=english, html=html, meta=json.loads(meta))


def _stored_ref(r: tuple[Any, ...]) -> StoredRef:
    source = NodeKey(r[0], r[1], r[2])
    target = NodeKey(r[10], r[11], r[12]) if r[12] is not None else None
    return StoredRef(source, r[3], Ref(r[4], r[5], r[6], r[7], r[8], r[9]), target)
