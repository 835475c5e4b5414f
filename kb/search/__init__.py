"""Japanese full-text search over the knowledge base: analysis (:mod:`kb.search.analysis`), the Whoosh index
(:mod:`kb.search.index`) and query understanding (:mod:`kb.search.query`).

``kb.search.search(store_or_kb_dir, query, limit=10, kind=None, lang=None, version=None) -> list[Hit]``.

The names below are imported on first use, so that a module needing only :mod:`kb.search.index`'s bookkeeping (the
site builder's fingerprint) does not load Whoosh and Sudachi.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kb.search.query import Hit, Searcher, parse_query, search

__all__ = ["Hit", "Searcher", "parse_query", "search"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from kb.search import query

        return getattr(query, name)
    raise AttributeError(f"module 'kb.search' has no attribute {name!r}")
