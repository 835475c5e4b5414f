"""Japanese full-text search over the knowledge base: analysis (:mod:`kb.search.analysis`), the Whoosh index
(:mod:`kb.search.index`) and query understanding (:mod:`kb.search.query`).

``kb.search.search(store_or_kb_dir, query, limit=10, kind=None, lang=None, version=None) -> list[Hit]``.
"""

from kb.search.query import Hit, Searcher, parse_query, search

__all__ = ["Hit", "Searcher", "parse_query", "search"]
