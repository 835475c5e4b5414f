"""The static search's delta: the ``p/``, ``g/`` and ``q/`` records of every document changed since those shards
were last written whole, in one small file the browser merges into each of those shards as it loads it, so an
incremental build leaves the shards alone.

Layout: ``search/x/<hash>.js`` (named by a hash of its content, and named in ``meta.js`` as ``"x"``, so a cached old
delta is never merged with a new ``meta.js``) holds ``{"d": [document ids, ascending], "p": {shard: {key: [records]}},
"g": …, "q": …}``: the documents ``d`` whose records in the base shards are stale, and, keyed as the shards are (by
shard number, then key), the current records of those documents, gap-coded as in the shards (``[doc gap, weight, …]``
in ``p/`` and ``g/``, ``[doc gap, n, n places, …]`` in ``q/``). A document removed since is in ``d`` with no record.

The browser (``site.js`` ``mergedShard``, and :func:`merged_shard` here, the same merge in Python) drops the records
of the documents ``d`` from each list of a shard, inserts the delta's records of that shard in document order and
drops a list left empty: each shard then holds what a full build writes.

Contract: :func:`read_delta` reads a delta file, :func:`updated` adds a build's changed documents to it (a document
changed in two builds is in it once, with its newest records), :func:`delta_file` writes it, :func:`merged_shard`
merges it into a shard as the browser does."""

from __future__ import annotations

import hashlib
import json
from array import array
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field

from kb.site.search_shards import gap_coded, payload, records

PREFIXES = {"p": False, "g": False, "q": True}  # the delta's tables, and whether their records carry a size
Table = Mapping[str, Sequence[int]]  # key → records with absolute doc ids, ascending


@dataclass(frozen=True)
class Delta:
    """The documents whose base records are stale (ascending) and, per prefix, key → their current records
    (absolute doc ids, ascending)."""

    docs: tuple[int, ...] = ()
    tables: Mapping[str, Table] = field(default_factory=dict)


def read_delta(name: str, text: str) -> Delta:
    """The delta of the file ``search/<name>.js`` (``text``)."""
    data = json.loads(payload(name, text))
    tables: dict[str, dict[str, array[int]]] = {}
    for prefix, sizes in PREFIXES.items():
        tables[prefix] = {key: array("q", absolute(coded, sizes))
                          for shard in data.get(prefix, {}).values() for key, coded in shard.items()}
    return Delta(tuple(data["d"]), tables)


def updated(delta: Delta, changed: Sequence[int], new: Mapping[str, Table]) -> Delta:
    """``delta`` with the documents ``changed`` (ascending) and ``new`` (prefix → key → the records of those of them
    that are there now) in place of their records in it."""
    gone = set(changed)
    tables: dict[str, dict[str, array[int]]] = {}
    for prefix, sizes in PREFIXES.items():
        old, fresh = delta.tables.get(prefix, {}), new.get(prefix, {})
        table = tables[prefix] = {}
        for key in sorted(old.keys() | fresh.keys()):
            kept = [r for r in records(old.get(key, ()), sizes) if r[0] not in gone]
            merged = sorted(kept + records(fresh.get(key, ()), sizes)) if key in fresh else kept
            if merged:
                table[key] = array("q", [x for doc, items in merged for x in (doc, *items)])
    return Delta(tuple(sorted(gone.union(delta.docs))), tables)


def delta_file(delta: Delta, counts: Mapping[str, int], shard_of: Callable[[str], int]) -> tuple[str, str]:
    """``(name, file)`` of the delta (``counts``: the shard count of each prefix; a key is in shard
    ``shard_of(key) % count``)."""
    data: dict[str, object] = {"d": list(delta.docs)}
    for prefix, sizes in PREFIXES.items():
        shards: dict[str, dict[str, list[int]]] = {}
        for key, flat in sorted(delta.tables.get(prefix, {}).items()):
            shards.setdefault(str(shard_of(key) % counts[prefix]), {})[key] = gap_coded(flat, sizes)
        data[prefix] = dict(sorted(shards.items(), key=lambda item: int(item[0])))
    body = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    name = f"x/{hashlib.sha1(body.encode()).hexdigest()[:16]}"
    return name, f'window.__kbSearch("{name}",{body});\n'  # as script(name, data) writes it


def shards_of(delta: Delta, counts: Mapping[str, int], shard_of: Callable[[str], int]) -> set[str]:
    """The shards (``p/3``) the delta has records for."""
    return {f"{prefix}/{shard_of(key) % counts[prefix]}" for prefix, table in delta.tables.items() for key in table}


def merged_shard(base: Mapping[str, Sequence[int]] | None, docs: Collection[int], adds: Mapping[str, Sequence[int]],
                 sizes: bool) -> dict[str, list[int]]:
    """What the browser makes of a shard (``base``, key → gap-coded list; None: no such file) with the delta's
    documents ``docs`` and its records of that shard (``adds``, key → gap-coded list), as ``site.js``
    ``mergedShard`` does: the records of ``docs`` dropped from each list, those of ``adds`` inserted in document
    order, a list left empty dropped (keys sorted)."""
    stale = set(docs)
    out = {}
    for key in sorted((base or {}).keys() | adds.keys()):
        kept = [r for r in records(absolute((base or {}).get(key, ()), sizes), sizes) if r[0] not in stale]
        merged = sorted(kept + records(absolute(adds.get(key, ()), sizes), sizes))
        if merged:
            out[key] = gap_coded([x for doc, items in merged for x in (doc, *items)], sizes)
    return out


def absolute(coded: Sequence[int], sizes: bool) -> list[int]:
    """A gap-coded list's records with absolute doc ids."""
    out = list(coded)
    doc, i = 0, 0
    while i < len(out):
        doc += out[i]
        out[i] = doc
        i += 2 + (out[i + 1] if sizes else 0)
    return out
