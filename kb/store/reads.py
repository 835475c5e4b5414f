"""The store's reads. The general ones — documents, versions, nodes and references as records — come first; then the
reads shaped for one caller (a few columns, plain tuples where a caller reads hundreds of thousands of rows), grouped
by that caller and each naming it: the linker's (:mod:`kb.link`), the search's (:mod:`kb.search`), and the version
views' and the site's (:mod:`kb.versions`, :mod:`kb.site`). A reader that reads in several statements what must
agree takes them in one :meth:`~kb.store.connection.Connected.snapshot`."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterable, Iterator
from operator import attrgetter
from typing import Any

from kb.model import GLOSSARY, REF_RULE, REF_SECTION, UNVERSIONED, Node
from kb.store.codec import NODE_COLUMNS, REF_COLUMNS, node_columns, node_from_row, stored_ref
from kb.store.connection import Connected
from kb.store.filters import KEYED_MAX, where
from kb.store.records import DocumentInfo, NodeKey, Scopes, StoredRef

_DOCUMENT_ORDER = attrgetter("order", "id")  # a node's place in its version and language (the nodes' ORDER BY ord, id)
_DOCUMENT_COLUMNS = ("d.id, d.source, d.kind, d.lang, d.version, d.effective_date, d.sync_date, d.title, d.content_hash,"
                     " d.ingested_at, d.translated_date")  # DocumentInfo's fields, in order


class Reads(Connected):
    """The reading half of :class:`kb.store.Store`."""

    _node_counts: tuple[tuple[int, int], dict[tuple[str, str], dict[str, int]]] | None  # see node_counts
    _light_nodes: tuple[tuple[int, int], dict[tuple[str, str], list[Node]]] | None  # see light_nodes
    _documents: tuple[tuple[int, int], list[DocumentInfo]] | None = None  # see documents
    _name_digests: tuple[tuple[int, int], dict[tuple[str, str], str]] | None = None  # see name_digest
    _versioned: tuple[tuple[int, int], list[DocumentInfo]] | None = None  # see versioned_documents
    _versioned_digest: tuple[tuple[int, int], str] | None = None  # see versioned_digest

    # -- documents and versions ----------------------------------------------------------------------------------
    def has_document(self, source: str, content_hash: str) -> bool:
        """Whether ``source`` was ingested from bytes with this hash (its parse would change nothing)."""
        return self._db.execute("SELECT 1 FROM documents WHERE source=? AND content_hash=? LIMIT 1",
                                (source, content_hash)).fetchone() is not None

    def documents(self) -> list[DocumentInfo]:
        """Every document, in the order they were first stored (read again only after a write: :meth:`generation`;
        one ``kb update`` asks a dozen times, and there is a document per wiki article)."""
        generation = self.generation()
        if self._documents is None or self._documents[0] != generation:
            self._documents = (generation, [DocumentInfo(*r) for r in self._db.execute(
                f"SELECT {_DOCUMENT_COLUMNS} FROM documents d ORDER BY id")])
        return list(self._documents[1])

    def versioned_documents(self) -> list[DocumentInfo]:
        """The documents of a rules version (not the unversioned: a wiki has thousands), in the order of
        :meth:`documents`; SQLite leaves the others out (but reads them all: read again only after a write,
        :meth:`generation` — one ``kb update`` asks eight times)."""
        generation = self.generation()
        if self._versioned is None or self._versioned[0] != generation:
            self._versioned = (generation, [DocumentInfo(*r) for r in self._db.execute(
                f"SELECT {_DOCUMENT_COLUMNS} FROM documents d WHERE d.version != ? ORDER BY id", (UNVERSIONED,))])
        return list(self._versioned[1])

    def document_of(self, key: NodeKey) -> DocumentInfo | None:
        """The document whose contribution the merged node ``key`` shows (the most authoritative source)."""
        row = self._db.execute(f"SELECT {_DOCUMENT_COLUMNS} FROM documents d JOIN nodes n ON n.doc_id=d.id"
                               " WHERE n.version=? AND n.lang=? AND n.id=?", (key.version, key.lang, key.id)).fetchone()
        return DocumentInfo(*row) if row else None

    def contributors(self, key: NodeKey) -> list[DocumentInfo]:
        """Every document that gives the node ``key``, in merge order (the winner first)."""
        return [DocumentInfo(*r) for r in self._db.execute(
            f"SELECT {_DOCUMENT_COLUMNS} FROM documents d JOIN contributions c ON c.doc_id=d.id WHERE c.version=?"
            " AND c.lang=? AND c.id=? ORDER BY d.authority DESC, c.rowid DESC", (key.version, key.lang, key.id))]

    def versions(self, lang: str | None = None) -> list[str]:
        """CR versions present (newest first), optionally for one language."""
        clause, args = where("documents", lang=lang or None)
        return sorted((r[0] for r in self._db.execute(
            f"SELECT DISTINCT version FROM documents{clause} AND version != ''", args)), reverse=True)

    def generation(self) -> tuple[int, int]:
        """A value that changes whenever the database may have: a write through this Store, or a commit by another
        connection (SQLite's ``data_version``). What read caches are keyed by."""
        return self._db.execute("PRAGMA data_version").fetchone()[0], self._db.total_changes

    def content_generation(self) -> str:
        """A token of the stored content, made anew in the transaction of every write (:mod:`kb.store.writes`; ''
        before the first): the search index (kb.search.index) records the one it was brought in line with, a site
        build the one it was made from (:meth:`content_token`)."""
        row = self._db.execute("SELECT value FROM meta WHERE key='generation'").fetchone()
        return row[0] if row else ""

    # -- nodes ------------------------------------------------------------------------------------------------------
    def nodes(self, version: str | None = None, lang: str | None = None, kinds: Iterable[str] | None = None
              ) -> Iterator[Node]:
        """Merged nodes in document order (newest version first), with their references."""
        clause, args = where("n", version=version, lang=lang, kinds=kinds)
        refs: dict[tuple[str, str, str], list[tuple[Any, ...]]] = {}
        for r in self._db.execute(f"SELECT r.version, r.lang, r.node_id, r.kind, r.target, r.text, r.start, r.end_,"
                                  f" r.cited_version FROM refs r JOIN nodes n ON n.version=r.version AND n.lang=r.lang"
                                  f" AND n.id=r.node_id{clause} ORDER BY r.version, r.lang, r.node_id, r.seq", args):
            refs.setdefault(r[:3], []).append(r[3:])
        for row in self._db.execute(f"SELECT {node_columns('n')} FROM nodes n{clause}"
                                    " ORDER BY n.version DESC, n.lang, n.ord, n.id", args):
            yield node_from_row(row, refs.get(row[:3], ()))

    def index_nodes(self, version: str, lang: str, keys: Collection[NodeKey] | None = None) -> Iterator[Node]:
        """The merged nodes of one version and language (those of ``keys`` only, when given), without their
        references and HTML, one row at a time: what the search index analyses (kb.search.index)."""
        if keys is not None:
            for key in keys:
                row = self._db.execute(f"SELECT {node_columns(html=False)} FROM nodes WHERE version=? AND lang=?"
                                       " AND id=?", (key.version, key.lang, key.id)).fetchone()
                if row is not None:
                    yield node_from_row(row)
            return
        for row in self._db.execute(f"SELECT {node_columns(html=False)} FROM nodes WHERE version=? AND lang=?",
                                    (version, lang)):
            yield node_from_row(row)

    def node(self, key: NodeKey) -> Node | None:
        """The merged node ``key`` with its references, None when there is none."""
        row = self._db.execute(f"SELECT {node_columns()} FROM nodes WHERE version=? AND lang=? AND id=?",
                               (key.version, key.lang, key.id)).fetchone()
        if row is None:
            return None
        refs = self._db.execute("SELECT kind, target, text, start, end_, cited_version FROM refs WHERE version=?"
                                " AND lang=? AND node_id=? ORDER BY seq", (key.version, key.lang, key.id)).fetchall()
        return node_from_row(row, refs)

    def keys_with_id(self, node_id: str) -> list[NodeKey]:
        """Every version and language of the node ``node_id``, newest version first."""
        return [NodeKey(*r) for r in self._db.execute(
            "SELECT version, lang, id FROM nodes WHERE id=? ORDER BY version DESC, lang", (node_id,))]

    # -- references --------------------------------------------------------------------------------------------------
    def refs(self, version: str | None = None, lang: str | None = None,
             kinds: Iterable[str] | None = None) -> Iterator[StoredRef]:
        """Stored references (optionally of one citing version, language, kinds), by citing node and order."""
        clause, args = where("refs", version=version, lang=lang, kinds=kinds)
        for r in self._db.execute(f"SELECT {REF_COLUMNS} FROM refs{clause} ORDER BY version, lang, node_id, seq", args):
            yield stored_ref(r)

    def refs_from(self, key: NodeKey) -> list[StoredRef]:
        """The references of the node ``key``, in order."""
        return [stored_ref(r) for r in self._db.execute(
            f"SELECT {REF_COLUMNS} FROM refs WHERE version=? AND lang=? AND node_id=? ORDER BY seq",
            (key.version, key.lang, key.id))]

    def cited_by(self, key: NodeKey) -> list[StoredRef]:
        """References from other nodes that resolved to ``key``."""
        return [stored_ref(r) for r in self._db.execute(
            f"SELECT {REF_COLUMNS} FROM refs WHERE resolved_id=? AND resolved_version=? AND resolved_lang=?"
            " ORDER BY version, lang, node_id, seq", (key.id, key.version, key.lang))]

    # -- for the linker (kb.link) -----------------------------------------------------------------------------------
    def node_names(self, version: str, lang: str) -> dict[str, tuple[str, str | None, str | None]]:
        """id → (kind, title, English name) of every node of one version and language. For kb.link.index."""
        return {id_: (kind, title, english) for id_, kind, title, english in self._db.execute(
            "SELECT id, kind, title, english FROM nodes WHERE version=? AND lang=?", (version, lang))}

    def name_rows(self, scopes: Scopes = None, *, lang: str | None = None, kinds: Iterable[str] | None = None,
                  nodes: Collection[NodeKey] | None = None
                  ) -> Iterator[tuple[NodeKey, str, str | None, tuple[str, ...], str | None]]:
        """(key, kind, title, aliases, English name) of every node (of ``scopes``, of ``lang``, of ``kinds`` and among
        ``nodes``, when given; more than :data:`~kb.store.filters.KEYED_MAX` ``nodes``: the caller filters): what the
        linker (kb.link.index) and the search's name tables (kb.search.names, kb.search.userdict) look names up in."""
        clause, args = where("nodes", scopes=scopes, lang=lang, kinds=kinds, nodes=nodes)
        for version, lang_, id_, kind, title, aliases, english in self._db.execute(
                f"SELECT version, lang, id, kind, title, aliases, english FROM nodes{clause}", args):
            yield NodeKey(version, lang_, id_), kind, title, () if aliases == "[]" else tuple(json.loads(aliases)), english

    def glossary_rows(self, scopes: Scopes = None, *, lang: str | None = None
                      ) -> Iterator[tuple[NodeKey, str | None, tuple[str, ...], str | None, str, dict[str, Any]]]:
        """(key, title, aliases, English name, text, meta) of every versioned glossary entry (of ``scopes`` and of
        ``lang``, when given), in document order. For kb.link.termlinks and kb.search.names."""
        clause, args = where("nodes", scopes=scopes, lang=lang, kinds=[GLOSSARY])
        for version, lang_, id_, title, aliases, english, text, meta in self._db.execute(
                f"SELECT version, lang, id, title, aliases, english, text, meta FROM nodes{clause}"
                " AND version != ? ORDER BY ord, version, lang, id", (*args, UNVERSIONED)):
            yield NodeKey(version, lang_, id_), title, tuple(json.loads(aliases)), english, text, json.loads(meta)

    def glossary_named(self, name: str, *, version: str | None = None, lang: str | None = None,
                       by_title: bool = True) -> list[NodeKey]:
        """Glossary entries whose English name (or, with ``by_title``, title) is ``name`` ignoring case, newest
        version first. For kb.link.query and kb.versions.history."""
        clause, args = where("n", version=version, lang=lang, kinds=[GLOSSARY])
        match = "(n.title=? COLLATE NOCASE OR n.english=? COLLATE NOCASE)" if by_title else "n.english=? COLLATE NOCASE"
        args += [name, name] if by_title else [name]
        return [NodeKey(*r) for r in self._db.execute(
            f"SELECT n.version, n.lang, n.id FROM nodes n{clause} AND {match} ORDER BY n.version DESC, n.lang", args)]

    def texts(self, kinds: Iterable[str], scopes: Scopes = None, nodes: Collection[NodeKey] | None = None
              ) -> list[tuple[NodeKey, str, str]]:
        """(key, kind, text) of every versioned node of these kinds (of ``scopes`` and among ``nodes``, when given).
        For kb.link.termlinks."""
        clause, args = where("nodes", scopes=scopes, nodes=nodes, kinds=kinds)
        rows = [(NodeKey(v, lang, i), kind, text) for v, lang, i, kind, text in self._db.execute(
            f"SELECT version, lang, id, kind, text FROM nodes{clause} AND version != ?", (*args, UNVERSIONED))]
        return rows if nodes is None else [row for row in rows if row[0] in nodes]

    def ref_spans(self, scopes: Scopes = None, nodes: Collection[NodeKey] | None = None
                  ) -> Iterator[tuple[NodeKey, str, str, int, int]]:
        """(citing key, kind, target, start, end) of every reference from a versioned node (of ``scopes``, when
        given; from ``nodes``, when given — perhaps others too, when they are too many to name in one query). For
        kb.link.termlinks."""
        clause, args = where("refs", scopes=scopes, nodes=nodes, id_column="node_id")
        for version, lang, node_id, kind, target, start, end in self._db.execute(
                f"SELECT version, lang, node_id, kind, target, start, end_ FROM refs{clause} AND version != ?",
                (*args, UNVERSIONED)):
            yield NodeKey(version, lang, node_id), kind, target, start, end

    def glossary_rule_targets(self, scopes: Scopes = None) -> Iterator[tuple[NodeKey, str]]:
        """(glossary entry, rule number) of every rule or section a glossary entry (of ``scopes``, when given)
        refers to, in no particular order. For kb.link.termlinks."""
        clause, args = where("n", scopes=scopes)
        for version, lang, node_id, target in self._db.execute(  # the entries first, then their references by key
                "SELECT r.version, r.lang, r.node_id, r.target FROM nodes n CROSS JOIN refs r ON n.version=r.version"
                f" AND n.lang=r.lang AND n.id=r.node_id{clause} AND n.kind=? AND r.kind IN (?, ?)",
                (*args, GLOSSARY, REF_RULE, REF_SECTION)):
            yield NodeKey(version, lang, node_id), target

    def rule_refs_naming(self, version: str, lang: str, numbers: Iterable[str]) -> list[StoredRef]:
        """The rule and section references of one version and language whose target is one of ``numbers`` (looked up
        by kind and target, not among all of the version's). For kb.link.resolve and kb.versions.diff."""
        numbers = sorted(set(numbers))
        return [stored_ref(r) for r in self._db.execute(
            f"SELECT {REF_COLUMNS} FROM refs INDEXED BY refs_kind_target WHERE kind IN (?,?)"
            f" AND target IN ({','.join('?' * len(numbers))}) AND version=? AND lang=? ORDER BY node_id, seq",
            (REF_RULE, REF_SECTION, *numbers, version, lang))]

    def ref_target_counts(self, kind: str) -> list[tuple[str, str, int]]:
        """(target, surface text, how many) of the references of ``kind``, each distinct pair once, by target and text
        (counted by SQLite: a card is cited many times, by few spellings). For kb.link.graph."""
        return [(target, text, n) for target, text, n in self._db.execute(
            "SELECT target, text, count(*) FROM refs WHERE kind=? GROUP BY target, text ORDER BY target, text", (kind,))]

    def ref_target_names(self, kinds: Iterable[str]) -> list[str]:
        """The distinct targets of the references of these kinds (read from the index on kind and target). For
        kb.link.graph."""
        clause, args = where("refs", kinds=kinds)
        return [r[0] for r in self._db.execute(f"SELECT DISTINCT target FROM refs{clause}", args)]

    def refs_targeting(self, kinds: Iterable[str], targets: Iterable[str]) -> list[StoredRef]:
        """The references of these kinds whose target is one of ``targets``, by citing node and order. For
        kb.link.graph."""
        kinds, names = list(kinds), sorted(set(targets))
        out: list[StoredRef] = []
        for start in range(0, len(names), KEYED_MAX):
            chunk = names[start:start + KEYED_MAX]
            out += [stored_ref(r) for r in self._db.execute(
                f"SELECT {REF_COLUMNS} FROM refs INDEXED BY refs_kind_target WHERE kind IN ({','.join('?' * len(kinds))})"
                f" AND target IN ({','.join('?' * len(chunk))})", [*kinds, *chunk])]
        return sorted(out, key=lambda sr: (sr.source_key.version, sr.source_key.lang, sr.source_key.id, sr.seq))

    def ref_counts(self) -> list[tuple[str, int]]:
        """(kind, count) over every stored reference, by kind (one read of the index on kind). For kb.link.resolve's
        report (with :meth:`unresolved_refs`)."""
        return [(kind, n) for kind, n in self._db.execute("SELECT kind, count(*) FROM refs GROUP BY kind ORDER BY kind")]

    def unresolved_refs(self, skip: Iterable[str] = ()) -> list[tuple[NodeKey, str, str, str]]:
        """(citing key, kind, target, source of the citing node) of every unresolved reference but those of the kinds
        ``skip`` (left out by SQLite: never resolved, they are most of the unresolved), by node and order. For
        kb.link.resolve's report."""
        skip = list(skip)
        return [(NodeKey(v, lang, i), kind, target, source) for v, lang, i, kind, target, source in self._db.execute(
            "SELECT r.version, r.lang, r.node_id, r.kind, r.target, d.source FROM refs r"
            " JOIN nodes n ON n.version=r.version AND n.lang=r.lang AND n.id=r.node_id JOIN documents d ON d.id=n.doc_id"
            f" WHERE r.resolved_id IS NULL AND r.kind NOT IN ({','.join('?' * len(skip))})"
            " ORDER BY r.version, r.lang, r.node_id, r.seq", skip)]

    # -- for the search (kb.search) ---------------------------------------------------------------------------------
    def kind_of(self, key: NodeKey) -> str | None:
        """The node's kind, None when there is no such node. For kb.search.query."""
        row = self._db.execute("SELECT kind FROM nodes WHERE version=? AND lang=? AND id=?",
                               (key.version, key.lang, key.id)).fetchone()
        return row[0] if row else None

    def node_keys(self) -> list[tuple[NodeKey, str]]:
        """Every node's key with its content hash. For kb.search.index."""
        return [(NodeKey(*r[:3]), r[3]) for r in self._db.execute("SELECT version, lang, id, content_hash FROM nodes")]

    def content_hashes(self, version: str, lang: str) -> list[tuple[str, str]]:
        """(id, content hash) of every node of one version and language, by id. For kb.search.index and
        kb.versions.diff."""
        return [(id_, digest) for id_, digest in self._db.execute(
            "SELECT id, content_hash FROM nodes WHERE version=? AND lang=? ORDER BY id", (version, lang))]

    def version_hashes(self, version: str) -> list[tuple[str, str, str]]:
        """(lang, id, content hash) of every node of one version (``''``: the unversioned nodes). For kb.site.gather."""
        return self._db.execute("SELECT lang, id, content_hash FROM nodes WHERE version=?", (version,)).fetchall()

    def keys_numbered(self, number: str, *, pattern: str | None = None, limit: int = 2000
                      ) -> list[tuple[NodeKey, str, int]]:
        """(key, kind, order) of the nodes with rule number ``number`` (or whose number matches the GLOB
        ``pattern``), at most ``limit``. For kb.search.query."""
        sql, args = "SELECT version, lang, id, kind, ord FROM nodes WHERE number = ?", [number]
        if pattern:
            sql += " OR number GLOB ?"
            args.append(pattern)
        return [(NodeKey(v, lang, id_), kind, order)
                for v, lang, id_, kind, order in self._db.execute(sql + f" LIMIT {int(limit)}", args)]

    # -- for the version views and the site (kb.versions, kb.site, kb.export) ---------------------------------------
    def node_counts(self) -> dict[tuple[str, str], dict[str, int]]:
        """Number of nodes per kind of each versioned (version, lang) (counted again only after a write). For
        kb.versions.catalog and kb.site.gather."""
        generation = self.generation()
        if self._node_counts is None or self._node_counts[0] != generation:
            counts: dict[tuple[str, str], dict[str, int]] = {}
            for version, lang, kind, n in self._db.execute(
                    "SELECT version, lang, kind, COUNT(*) FROM nodes WHERE version != '' GROUP BY version, lang, kind"):
                counts.setdefault((version, lang), {})[kind] = n
            self._node_counts = (generation, counts)
        return {key: dict(by_kind) for key, by_kind in self._node_counts[1].items()}

    def light_nodes(self, version: str, lang: str, kinds: Iterable[str] | None) -> list[Node]:
        """Nodes of ``kinds`` (None: every kind) of one version and language in document order, without references or
        HTML (much cheaper
        than :meth:`nodes`; for readers that take references from :meth:`ref_rows`). Each version and language is read
        once until the store changes (:meth:`generation`): the version diff (kb.versions.diff), the current view
        (kb.versions.current) and the site (kb.site.gather) read the same nodes in one ``kb update``."""
        generation = self.generation()
        if self._light_nodes is None or self._light_nodes[0] != generation:
            self._light_nodes = (generation, {})
        nodes = self._light_nodes[1].get((version, lang))
        if nodes is None:
            # put in document order here (ORDER BY ord, id): SQLite's sort carried every whole row, a wiki article's
            # text and metadata, through its sorter — half of the read at 5,000 articles
            nodes = [node_from_row(row) for row in self._db.execute(
                f"SELECT {node_columns(html=False)} FROM nodes WHERE version=? AND lang=?", (version, lang))]
            nodes.sort(key=_DOCUMENT_ORDER)
            self._light_nodes[1][(version, lang)] = nodes
        if kinds is None:
            return list(nodes)
        wanted = set(kinds)
        return [node for node in nodes if node.kind in wanted]

    def ref_rows(self, version: str, lang: str | None = None) -> list[tuple[Any, ...]]:
        """References of one citing version (and language) as plain tuples, for readers of very many: (lang,
        node_id, kind, target, start, end, resolved_version, resolved_lang, resolved_id), by node and order. For
        kb.site.gather."""
        clause, args = where("refs", version=version, lang=lang or None)
        return self._db.execute(
            "SELECT lang, node_id, kind, target, start, end_, resolved_version, resolved_lang, resolved_id"
            f" FROM refs{clause} ORDER BY version, lang, node_id, seq", args).fetchall()

    def named_nodes(self, version: str, lang: str, whole: Iterable[str]) -> list[Node]:
        """The nodes of one version and language in document order, like :meth:`light_nodes`, but only those of the
        kinds ``whole`` with their text, examples and meta (the others' empty: their names alone, for a build that
        reads the few it shows again by key). For kb.site.gather (an edit build)."""
        kinds = sorted(set(whole))
        marks = ",".join("?" * len(kinds)) or "NULL"
        blank = {"text": "''", "examples": "'[]'", "meta": "'{}'"}  # of the nodes of the other kinds
        columns = ", ".join("NULL" if name == "html" else f"CASE WHEN kind IN ({marks}) THEN {name} ELSE {blank[name]} END"
                            if name in blank else name for name in NODE_COLUMNS)
        nodes = [node_from_row(row) for row in self._db.execute(
            f"SELECT {columns} FROM nodes WHERE version=? AND lang=?", (*kinds * len(blank), version, lang))]
        nodes.sort(key=_DOCUMENT_ORDER)
        return nodes

    def ref_rows_of(self, version: str, nodes: Collection[NodeKey]) -> list[tuple[Any, ...]]:
        """:meth:`ref_rows` of the nodes ``nodes`` (of ``version``) alone, in the same order. For kb.site.gather (an
        edit build)."""
        keys = sorted((key for key in nodes if key.version == version), key=lambda key: (key.lang, key.id))
        rows: list[tuple[Any, ...]] = []
        for start in range(0, len(keys), KEYED_MAX):
            clause, args = where("refs", nodes=keys[start:start + KEYED_MAX], id_column="node_id")
            rows += self._db.execute(
                "SELECT lang, node_id, kind, target, start, end_, resolved_version, resolved_lang, resolved_id"
                f" FROM refs{clause} ORDER BY version, lang, node_id, seq", args).fetchall()
        rows.sort(key=lambda row: (row[0], row[1]))  # stable: each node's rows stay in order
        return rows

    def versioned_digest(self) -> str:
        """A hash of every versioned node (its key and content hash) and document: what changes when anything but
        the unversioned nodes (wiki articles, release notes, cards) does (made again only after a write:
        :meth:`generation` — a build that is no edit build asks twice). For kb.site.builder (an edit build)."""
        generation = self.generation()
        if self._versioned_digest is not None and self._versioned_digest[0] == generation:
            return self._versioned_digest[1]
        digest = hashlib.sha256((self._db.execute(
            "SELECT group_concat(version || ' ' || lang || ' ' || id || ' ' || content_hash, char(10))"
            " FROM (SELECT version, lang, id, content_hash FROM nodes WHERE version != '' ORDER BY version, lang, id)"
        ).fetchone()[0] or "").encode())
        digest.update(json.dumps(self._db.execute(
            "SELECT source, kind, lang, version, effective_date, sync_date, title, content_hash, translated_date"
            " FROM documents WHERE version != '' ORDER BY id").fetchall(), ensure_ascii=False).encode())
        self._versioned_digest = (generation, digest.hexdigest())
        return self._versioned_digest[1]

    def node_sources(self, scopes: Scopes = None) -> dict[NodeKey, str]:
        """The source (file or URL) each merged node (of ``scopes``, when given) shows. For kb.export."""
        clause, args = where("n", scopes=scopes)
        return {NodeKey(v, lang, i): source for v, lang, i, source in self._db.execute(
            f"SELECT n.version, n.lang, n.id, d.source FROM nodes n JOIN documents d ON d.id=n.doc_id{clause}", args)}

    def content_token(self) -> str:
        """A value that changes whenever a node, a document or a reference does: the :meth:`content_generation`
        (read in O(1): a whole-store digest was a tenth of a one-article ``kb update`` at 20,000 articles), or the
        :meth:`_content_digest` of a store no write of this kb has marked yet. For kb.site.fingerprint."""
        generation = self.content_generation()
        return f"generation {generation}" if generation else self._content_digest()

    def _content_digest(self) -> str:
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

    # -- for the linker (kb.link), added after the rest -------------------------------------------------------------
    def document_scopes(self) -> list[tuple[str, str]]:
        """The distinct (version, lang) of the documents, by version and language (read by SQLite, not as every
        document: :meth:`documents`). For kb.link.index and kb.link.resolve."""
        return [(version, lang) for version, lang in self._db.execute(
            "SELECT DISTINCT version, lang FROM documents ORDER BY version, lang")]

    def node_name(self, key: NodeKey) -> tuple[str, str | None, str | None] | None:
        """(kind, title, English name) of the node ``key``, None when there is none: :meth:`node_names` of one node.
        For kb.link.index."""
        row = self._db.execute("SELECT kind, title, english FROM nodes WHERE version=? AND lang=? AND id=?",
                               (key.version, key.lang, key.id)).fetchone()
        return (row[0], row[1], row[2]) if row else None

    def titled_keys(self, kind: str, titles: Collection[str], scopes: Scopes = None) -> dict[str, list[NodeKey]]:
        """Each of ``titles`` → the keys of the nodes of ``kind`` (of ``scopes``, when given) with that exact title, by
        key (compared by SQLite among the kind's nodes, none read; [] for a title none has). For kb.link.index."""
        names = sorted(set(titles))
        out: dict[str, list[NodeKey]] = {title: [] for title in names}
        clause, args = where("nodes", scopes=scopes, kinds=[kind])
        for start in range(0, len(names), KEYED_MAX):
            chunk = names[start:start + KEYED_MAX]
            for version, lang, id_, title in self._db.execute(
                    f"SELECT version, lang, id, title FROM nodes{clause} AND title IN ({','.join('?' * len(chunk))})"
                    " ORDER BY version, lang, id", (*args, *chunk)):
                out[title].append(NodeKey(version, lang, id_))
        return out

    def ref_pairs_of(self, kind: str, nodes: Collection[NodeKey]) -> list[tuple[str, str]]:
        """(target, surface text) of the references of ``kind`` from ``nodes``, in no particular order (read by key:
        :data:`~kb.store.filters.KEYED_MAX` nodes a query). For kb.link.graph."""
        keys = sorted(nodes, key=lambda key: (key.version, key.lang, key.id))
        out: list[tuple[str, str]] = []
        for start in range(0, len(keys), KEYED_MAX):
            clause, args = where("refs", nodes=keys[start:start + KEYED_MAX], id_column="node_id")
            out += self._db.execute(f"SELECT target, text FROM refs{clause} AND +kind=?", (*args, kind)).fetchall()
        return out

    def contributed_keys(self, source: str, version: str, lang: str) -> set[NodeKey]:
        """The keys of the nodes the document of (``source``, ``version``, ``lang``) gives (none: never ingested).
        For kb.link.graph (what an ingest of it may rewrite)."""
        return {NodeKey(*r) for r in self._db.execute(
            "SELECT c.version, c.lang, c.id FROM documents d JOIN contributions c ON c.doc_id=d.id WHERE d.source=?"
            " AND d.version=? AND d.lang=?", (source, version, lang))}

    # -- for the search (kb.search), added after the rest -----------------------------------------------------------
    def name_digest(self, lang: str, kinds: Iterable[str]) -> str:
        """A hash of the key, order, title, aliases and English name of every node of ``lang`` and ``kinds`` (and the
        meta of the glossary entries: their source readings), in a fixed order: it changes whenever their names may
        have (one string per kind made by SQLite, not the rows read; each made once, and again only after a write:
        :meth:`generation` — the index update and the build of one ``kb update`` both ask, for kinds most of which
        they share). For kb.search.userdict and kb.site.gather."""
        generation = self.generation()
        if self._name_digests is None or self._name_digests[0] != generation:
            self._name_digests = (generation, {})
        known = self._name_digests[1]
        for kind in (kinds := sorted(set(kinds))):
            if (lang, kind) not in known:
                clause, args = where("nodes", lang=lang, kinds=[kind])
                row = self._db.execute(
                    "SELECT group_concat(name, char(30)) FROM (SELECT version || char(31) || id || char(31) || ord"
                    " || char(31) || coalesce(title, '') || char(31) || aliases || char(31) || coalesce(english, '')"
                    f" || char(31) || CASE kind WHEN ? THEN meta ELSE '' END AS name FROM nodes{clause}"
                    " ORDER BY ord, version, id)", (GLOSSARY, *args)).fetchone()
                known[(lang, kind)] = hashlib.sha256((row[0] or "").encode()).hexdigest()
        return hashlib.sha256("\x1e".join(f"{kind}\x1f{known[(lang, kind)]}" for kind in kinds).encode()).hexdigest()
