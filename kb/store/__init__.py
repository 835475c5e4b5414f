"""The store: one SQLite file holding every document, each source's contribution to each node, the merged nodes,
their references and resolutions — and the only package that speaks SQL: schema, migrations and opening
(:mod:`kb.store.schema`), the one codec of nodes and references (:mod:`kb.store.codec`), the one filter builder
(:mod:`kb.store.filters`), the writes (:mod:`kb.store.writes`), the reads, grouped by caller
(:mod:`kb.store.reads`), the records they speak in (:mod:`kb.store.records`) and the one-writer lock
(:mod:`kb.store.lock`); and the keyed file, a second small database of values by key, for a site's build records
(:mod:`kb.store.keyed`).

Location: ``--kb-dir``, else ``$KB_HOME``, else ``./.kb``; the database is ``kb.sqlite`` inside.

Provenance: each document's nodes are kept as it gave them (its *contribution*); the node every reader sees is merged
from the contributions by source authority (each document's, given by the ingest: the store knows no kinds; among
equals the contribution written last, so the freshest copy of a page wins), with the other sources' glossary-term
links and examples added when they give the same text (:func:`merge_same_text`). Re-ingesting or removing a source
replaces exactly its contribution and re-merges the nodes it touched; the write returns the merged nodes it rewrote
(:class:`Written`), what the linker links again.

Writes are transactional by default: each write method runs in its own transaction unless the caller has opened one
with :meth:`Store.transaction` (re-entrant), so an ingest that fails midway leaves what was stored before untouched; rows
are written in batches (``executemany``). Reading methods return frozen records (or plain tuples where a caller reads
hundreds of thousands of rows, documented per method); a reader whose reads must agree takes them in one
:meth:`Store.snapshot`. A store opened to read (``create=False``) is opened read-only and never written, so readers
work in a read-only kb folder.
"""

from __future__ import annotations

import os
from pathlib import Path

from kb.store.codec import node_hash
from kb.store.reads import Reads
from kb.store.records import DocumentInfo, NodeKey, Scopes, StoredRef, Written
from kb.store.schema import SCHEMA_VERSION, connect
from kb.store.writes import Writes, merge_same_text

__all__ = ["DB_NAME", "SCHEMA_VERSION", "DocumentInfo", "NodeKey", "Scopes", "Store", "StoredRef", "Written",
           "default_kb_dir", "merge_same_text", "node_hash"]

DB_NAME = "kb.sqlite"


def default_kb_dir(kb_dir: str | os.PathLike[str] | None = None) -> Path:
    """The kb folder: ``kb_dir``, else ``$KB_HOME``, else ``./.kb``."""
    if kb_dir:
        return Path(kb_dir)
    if os.environ.get("KB_HOME"):
        return Path(os.environ["KB_HOME"])
    return Path.cwd() / ".kb"


class Store(Reads, Writes):
    """The repository every stage reads and writes through (see the module doc). Open with :meth:`Store.open`."""

    def __init__(self, path: str | os.PathLike[str], *, create: bool = True,
                 kb_dir: str | os.PathLike[str] | None = None):
        """``create``: make the database if missing, and open it to write; False: open an existing one to read only
        (KbError when there is none). ``kb_dir``: the folder of the search index and caches that go with this
        database, when it is not the database's own (``kb update`` writes the live database in one transaction and
        its index beside, staged)."""
        self.path = Path(path)
        self.read_only = not create
        self._kb_dir = Path(kb_dir) if kb_dir is not None else self.path.parent
        self._db = connect(self.path, create=create)
        self._node_counts = None
        self._light_nodes = None

    @classmethod
    def open(cls, kb_dir: str | os.PathLike[str] | None = None, *, create: bool = True) -> Store:
        """The store of the kb folder ``kb_dir`` (see :func:`default_kb_dir`); ``create=False``: read-only, KbError if
        none."""
        return cls(default_kb_dir(kb_dir) / DB_NAME, create=create)

    @property
    def kb_dir(self) -> Path:
        """The kb folder of this store: its search index, caches and writer lock (the database's folder unless
        opened with another)."""
        return self._kb_dir

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
