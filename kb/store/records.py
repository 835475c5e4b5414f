"""The store's records: what its reads return and its writes report (frozen; no SQL here)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from kb.model import Ref

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


@dataclass(frozen=True)
class Written:
    """What one write did: how many documents it stored or removed (0: the source was unchanged, or never
    ingested), and the merged nodes it added, changed or removed — what the linker must link again (a node whose
    merged content and source stayed the same keeps its row, references and links, and is not among them)."""

    documents: int
    rewritten: frozenset[NodeKey]
