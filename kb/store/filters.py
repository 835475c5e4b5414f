"""The store's one filter builder: :func:`where`, the WHERE clause of every read and delete that keeps to versions,
languages, kinds, scopes or named nodes."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

from kb.store.records import NodeKey, Scopes

KEYED_MAX = 2000  # nodes named in one query at most (SQLite allows 32,766 parameters); more: the caller filters


def where(table: str, *, version: str | None = None, lang: str | None = None, kinds: Iterable[str] | None = None,
          scopes: Scopes = None, nodes: Collection[NodeKey] | None = None, id_column: str = "id"
          ) -> tuple[str, list[Any]]:
    """`` WHERE …`` and its arguments keeping the rows of ``table`` (a name or alias) of ``version``, of ``lang``,
    of ``kinds``, in ``scopes`` ((version, lang) pairs) and belonging to one of ``nodes`` (by ``id_column``), each
    when given (None: no condition; an empty collection keeps nothing). ``nodes`` beyond :data:`KEYED_MAX` add no
    condition: the caller filters. Always a WHERE clause (``WHERE 1`` at least), so callers may append ``AND …``."""
    clauses: list[str] = []
    args: list[Any] = []
    if version is not None:
        clauses.append(f"{table}.version=?")
        args.append(version)
    if lang is not None:
        clauses.append(f"{table}.lang=?")
        args.append(lang)
    keyed = nodes is not None and 0 < len(nodes) <= KEYED_MAX
    if kinds is not None:
        kinds = list(kinds)
        kind = f"+{table}.kind" if keyed else f"{table}.kind"  # keyed: read by key (the kind's index read them all)
        clauses.append(f"{kind} IN ({','.join('?' * len(kinds))})" if kinds else "0")
        args += kinds
    if scopes is not None:
        pairs = sorted(set(scopes))
        clauses.append(f"({table}.version, {table}.lang) IN (VALUES {','.join('(?,?)' for _ in pairs)})" if pairs
                       else "0")
        args += [x for pair in pairs for x in pair]
    if nodes is not None and len(nodes) <= KEYED_MAX:
        clauses.append(f"({table}.version, {table}.lang, {table}.{id_column}) IN"
                       f" (VALUES {','.join('(?,?,?)' for _ in nodes)})" if nodes else "0")
        args += [x for key in nodes for x in (key.version, key.lang, key.id)]
    return " WHERE " + (" AND ".join(clauses) if clauses else "1"), args
