"""The static search's phrase pairs: where two index terms stand at adjacent positions, so the browser answers a
quoted phrase (``"total cost"``, ``「マナ能力を起動」``) as ``kb search`` does (a Whoosh phrase of the phrase's
terms, slop 1: each term right after the one before, in the title or in the body).

Layout: ``search/q/<i>.js`` — ``{"<term>\\t<term>": [doc gap, n, place, …, doc gap, n, place, …]}`` for the
adjacent pairs whose FNV-1a hash modulo ``meta.q`` is ``i``: per document (ids ascending, each written as the gap
from the previous one) the ``n`` places of the pair's first term, a place being ``2 × position + field`` (0 the
title, 1 the body), so a phrase of three terms holds where its second pair is at the first pair's place + 2.
Positions are those of :func:`kb.search.analysis.analyze` with ``index=True``: the terms of one position (a word,
its mode-A parts, a dotted compound's joined word) each pair with each term of the next one. A phrase of one term
is that term's postings; a phrase with a word the index lacks is matched by its bigrams (the browser requires all
of them, not their order).

Contract: :func:`field_pairs` is what ``kb.site.search_export.analyse`` keeps of a document (``q``);
:func:`export_pairs` gives the shards that changed, patching the previous build's as the posting shards are."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from kb.search.analysis import Term

TITLE, BODY = 0, 1


def field_pairs(fields: list[tuple[int, list[Term]]]) -> dict[str, list[int]]:
    """Pair (``a\\tb``) → the places of its first term, over the ``(field, terms)`` of one document."""
    out: dict[str, set[int]] = defaultdict(set)
    for field, terms in fields:
        at: dict[int, list[str]] = defaultdict(list)
        for t in terms:
            at[t.pos].append(t.text)
        for p, here in at.items():
            for b in at.get(p + 1, ()):
                for a in here:
                    out[f"{a}\t{b}"].add(2 * p + field)
    return {pair: sorted(places) for pair, places in sorted(out.items())}


def export_pairs(fields_by_id: dict[int, dict], old_fields: dict[int, dict], changed: set[int], count: int,
                 shard_of: Callable[[str], int], read_old: Callable[[str], dict] | None) -> dict[str, dict[str, list[int]]]:
    """The ``q/<i>`` shards (name → table) holding a pair of a changed document: the pairs of ``fields_by_id``
    (new and changed documents) replacing those of ``old_fields`` (their previous analysis) in the previous
    build's shard (``read_old(name)``; None: a first build, every shard made here)."""
    new, old = _by_shard(fields_by_id, count, shard_of), _by_shard(old_fields, count, shard_of)
    out = {}
    for shard in new.keys() | old.keys():
        part = new.get(shard, {})
        if part == old.get(shard, {}):
            continue
        name = f"q/{shard}"
        coded = read_old(name) if read_old else {}
        for pair in part.keys() | old.get(shard, {}).keys():
            kept = {d: places for d, places in _decode(coded.get(pair, [])).items() if d not in changed}
            kept.update(part.get(pair, {}))
            if kept:
                coded[pair] = _encode(kept)
            else:
                coded.pop(pair, None)
        out[name] = dict(sorted(coded.items()))
    return out


def shard_count(fields_by_id: dict[int, dict], per_shard: int) -> int:
    """How many ``q/`` shards a first build makes: about ``per_shard`` document entries each."""
    return max(1, sum(len(f.get("q", {})) for f in fields_by_id.values()) // per_shard)


def _by_shard(fields_by_id: dict[int, dict], count: int, shard_of: Callable[[str], int]
              ) -> dict[int, dict[str, dict[int, list[int]]]]:
    parts: dict[int, dict[str, dict[int, list[int]]]] = defaultdict(lambda: defaultdict(dict))
    for doc_id, fields in fields_by_id.items():
        for pair, places in fields.get("q", {}).items():
            parts[shard_of(pair) % count][pair][doc_id] = places
    return parts


def _encode(places_by_doc: dict[int, list[int]]) -> list[int]:
    out, last = [], 0
    for doc in sorted(places_by_doc):
        out += [doc - last, len(places_by_doc[doc]), *places_by_doc[doc]]
        last = doc
    return out


def _decode(coded: list[int]) -> dict[int, list[int]]:
    out, i, doc = {}, 0, 0
    while i < len(coded):
        doc += coded[i]
        n = coded[i + 1]
        out[doc] = coded[i + 2:i + 2 + n]
        i += 2 + n
    return out
