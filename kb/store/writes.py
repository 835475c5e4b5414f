"""The store's writes: documents and their contributions (each re-merging the nodes it touched), and the linker's
resolutions and derived references. Each runs in its own transaction unless the caller opened one
(:meth:`kb.store.connection.Connected.transaction`); those that rewrite merged nodes return them
(:class:`kb.store.records.Written`): the caller accumulates what to link again, the store keeps no account of it."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from kb.model import REF_TERM, Document, Node, Ref
from kb.store.codec import decode_payload, encode_node, node_hash_of, node_row, payload, ref_row
from kb.store.connection import Connected
from kb.store.filters import where
from kb.store.records import NodeKey, Scopes, Written

_WRITTEN_NOW = 1 << 62  # the place of the contributions a write just made among the stored ones' rowids: after all


class Writes(Connected):
    """The writing half of :class:`kb.store.Store`."""

    def put_document(self, doc: Document, authority: int = 0) -> Written:
        """Store ``doc`` as its source's contribution, replacing an earlier ingest of the same (source, version,
        lang), and re-merge every node either gave; return what it rewrote (``documents`` 0, and nothing written, if
        the content hash is unchanged). ``authority``: the rank of the document's source kind (``ingest.kinds``);
        the higher wins a node. Called by the ingest (:mod:`kb.pipeline`) and the card entities (:mod:`kb.link.graph`)."""
        with self.transaction():
            row = self._db.execute("SELECT id, content_hash, authority FROM documents WHERE source=? AND version=?"
                                   " AND lang=?", (doc.source, doc.version, doc.lang)).fetchone()
            if row and row[1] == doc.content_hash:
                return Written(0, frozenset())
            self._content_changed()
            now = datetime.now(UTC).isoformat(timespec="seconds")
            values = (doc.kind, doc.effective_date, doc.sync_date, doc.title, doc.content_hash, now, authority,
                      doc.translated_date)
            given: dict[str, Node] = {}
            for node in doc.nodes:  # a node given twice by one source: the later, with the earlier's term links
                given[node.id] = merge_same_text(node, given[node.id]) if node.id in given else node
            payloads = {node_id: payload(encode_node(node)) for node_id, node in given.items()}
            if row:  # the same document row, its contribution replaced: only the nodes whose part changed are merged
                doc_id = row[0]
                stored = dict(self._db.execute("SELECT id, node FROM contributions WHERE doc_id=?", (doc_id,)))
                if row[2] != authority:  # every node it gives may now win or lose: all merged again
                    stored = {}
                    self._db.execute("DELETE FROM contributions WHERE doc_id=?", (doc_id,))
                gone = stored.keys() - payloads.keys()
                changed = [node_id for node_id, text in payloads.items() if stored.get(node_id) != text]
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
            return Written(1, self._merge(touched | fresh.keys(), fresh))

    def remove_document(self, source: str) -> Written:
        """Remove every document ingested from ``source`` (all versions and languages) and exactly its contribution
        to each node; return how many documents were removed and the nodes rewritten. References must be linked
        again afterwards. Called by :func:`kb.pipeline.remove_sources`."""
        with self.transaction():
            ids = [r[0] for r in self._db.execute("SELECT id FROM documents WHERE source=?", (source,))]
            if ids:
                self._content_changed()
            return Written(len(ids), self._merge(self._drop_documents(ids)))

    def _drop_documents(self, doc_ids: list[int]) -> set[NodeKey]:
        """Delete documents (their contributions and the nodes they won follow); return the keys they gave."""
        keys: set[NodeKey] = set()
        for doc_id in doc_ids:
            keys.update(NodeKey(*r) for r in self._db.execute(
                "SELECT version, lang, id FROM contributions WHERE doc_id=?", (doc_id,)))
            self._db.execute("DELETE FROM documents WHERE id=?", (doc_id,))
        return keys

    def _merge(self, keys: set[NodeKey], fresh: dict[NodeKey, tuple[int, int, Node]] | None = None
               ) -> frozenset[NodeKey]:
        """Rewrite the merged node (and its source references) of each key from the contributions that remain;
        return the keys rewritten (those whose merged node, owner or order changed). ``fresh``: the contributions
        just written, as (authority, doc id, node), not read back. Among contributions of equal authority the one
        written last wins (the highest rowid: a contribution is written again only when it changes), so a source
        ingested again with new content wins over an older copy of the same page under another name."""
        if not keys:
            return frozenset()
        fresh = fresh or {}
        fresh_docs = {doc_id for _, doc_id, _ in fresh.values()}
        self._load_keys(keys)
        # (authority, when written — the rowid; the fresh ones last of all —, doc id, node)
        given: dict[NodeKey, list[tuple[int, int, int, Node]]] = {
            key: [(authority, _WRITTEN_NOW, doc_id, node)] for key, (authority, doc_id, node) in fresh.items()}
        for version, lang, id_, written, doc_id, authority, stored in self._db.execute(
                "SELECT c.version, c.lang, c.id, c.rowid, c.doc_id, d.authority, c.node FROM temp.keys k"
                " CROSS JOIN contributions c ON c.version=k.version AND c.lang=k.lang AND c.id=k.id"
                " JOIN documents d ON d.id=c.doc_id"):
            if doc_id not in fresh_docs:
                key = NodeKey(version, lang, id_)
                given.setdefault(key, []).append((authority, written, doc_id, decode_payload(key, stored)))
        held = {NodeKey(v, lang, i): (owner, digest, order) for v, lang, i, owner, digest, order in self._db.execute(
            "SELECT n.version, n.lang, n.id, n.doc_id, n.content_hash, n.ord FROM temp.keys k CROSS JOIN nodes n"
            " ON n.version=k.version AND n.lang=k.lang AND n.id=k.id")}
        node_rows: list[tuple[Any, ...]] = []
        ref_rows: list[tuple[Any, ...]] = []
        kept: set[NodeKey] = set()
        for key, contributions in given.items():
            contributions.sort(key=lambda c: (-c[0], -c[1]))  # most authoritative first; the last written among equals
            owner, node = contributions[0][2:]
            for *_, other in contributions[1:]:
                node = merge_same_text(node, other)
            fields = encode_node(node)
            digest = node_hash_of(fields)
            if held.get(key) == (owner, digest, node.order):  # as it was: row, references, links stay
                kept.add(key)
                continue
            node_rows.append(node_row(key, owner, fields, digest))
            ref_rows += [ref_row(key, seq, ref) for seq, ref in enumerate(node.refs)]
        rewritten = frozenset(keys - kept)
        self._db.executemany("DELETE FROM nodes WHERE version=? AND lang=? AND id=?",
                             [(k.version, k.lang, k.id) for k in rewritten])
        self._db.executemany("INSERT INTO nodes VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", node_rows)
        self._db.executemany(_INSERT_REF, ref_rows)
        return rewritten

    def _content_changed(self) -> None:
        """Mark the content as changed (see :meth:`kb.store.reads.Reads.content_generation`), in the transaction
        that changes it: every write method does."""
        self._db.execute("INSERT OR REPLACE INTO meta VALUES ('generation', ?)", (os.urandom(8).hex(),))

    # -- the linker's writes (kb.link) -------------------------------------------------------------------------
    def set_resolutions(self, resolutions: Iterable[tuple[NodeKey, int, NodeKey | None]]) -> None:
        """Record where each (citing node, reference seq) resolved to (None: unresolved). Called by
        :mod:`kb.link.resolve`."""
        with self.transaction():
            self._content_changed()
            self._db.executemany(
                "UPDATE refs SET resolved_version=?, resolved_lang=?, resolved_id=? WHERE version=? AND lang=?"
                " AND node_id=? AND seq=?",
                [((t.version, t.lang, t.id) if t else (None, None, None)) + (s.version, s.lang, s.id, seq)
                 for s, seq, t in resolutions])

    def delete_refs(self, kinds: Iterable[str], scopes: Scopes = None) -> None:
        """Delete every reference of these kinds (the linker's derived references, before it makes them again), of
        the citing nodes in ``scopes`` only when given. Called by :mod:`kb.link`."""
        kinds = list(kinds)
        clause, args = where("refs", scopes=scopes)
        kind = "kind" if scopes is None else "+kind"  # '+': a scope's are found by key, not among every version's
        with self.transaction():
            self._content_changed()
            self._db.execute(f"DELETE FROM refs{clause} AND {kind} IN ({','.join('?' * len(kinds))})", [*args, *kinds])

    def delete_refs_of(self, kinds: Iterable[str], nodes: Iterable[NodeKey]) -> None:
        """Delete the references of these kinds from ``nodes`` (the derived references of the nodes the linker
        derives again). Called by :mod:`kb.link.resolve`."""
        kinds = list(kinds)
        with self.transaction():
            self._content_changed()
            self._db.executemany(
                f"DELETE FROM refs WHERE version=? AND lang=? AND node_id=? AND kind IN ({','.join('?' * len(kinds))})",
                [(key.version, key.lang, key.id, *kinds) for key in nodes])

    def add_refs(self, refs: Iterable[tuple[NodeKey, Ref, NodeKey | None]]) -> int:
        """Append references (derived by the linker) to nodes, after each node's own, with where they resolved to
        (None: not yet resolved); return how many were added. Called by :mod:`kb.link`."""
        refs = list(refs)
        with self.transaction():
            self._content_changed()
            self._load_keys({key for key, _, _ in refs})
            next_seq = {NodeKey(v, lang, i): top + 1 for v, lang, i, top in self._db.execute(
                "SELECT k.version, k.lang, k.id, (SELECT COALESCE(MAX(seq), -1) FROM refs r WHERE r.version=k.version"
                " AND r.lang=k.lang AND r.node_id=k.id) FROM temp.keys k")}
            rows = []
            for key, ref, target in refs:
                rows.append(ref_row(key, next_seq[key], ref, target))
                next_seq[key] += 1
            self._db.executemany(_INSERT_REF, rows)
        return len(rows)


_INSERT_REF = ("INSERT INTO refs (version, lang, node_id, seq, kind, target, text, start, end_, cited_version,"
               " resolved_version, resolved_lang, resolved_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)")


def merge_same_text(winner: Node, loser: Node) -> Node:
    """``winner``, plus ``loser``'s term links and examples when both nodes have the same text."""
    if " ".join(winner.text.split()) != " ".join(loser.text.split()):
        return winner
    refs = winner.refs + tuple(r for r in loser.refs if r.kind == REF_TERM and r not in winner.refs)
    return replace(winner, refs=refs, examples=winner.examples or loser.examples)
