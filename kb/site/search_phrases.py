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
:class:`PairTable` holds the pairs of many documents, written and patched as the posting shards are
(:func:`kb.site.search_shards.patched_shards`, :mod:`kb.site.search_delta`)."""

from __future__ import annotations

from array import array
from collections import defaultdict

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


class PairTable:
    """The pairs of documents added in ascending id order, compactly: pair → ``[doc, n, place…]`` per document (an
    array of ints; as Python lists and dicts the pairs of 5,000 articles were hundreds of MiB), and how many
    document entries there are."""

    def __init__(self) -> None:
        self.places: dict[str, array[int]] = {}
        self.entries = 0

    def add(self, doc_id: int, pairs: dict[str, list[int]]) -> None:
        """Add one document's pairs (:func:`field_pairs`); ``doc_id`` greater than every one added before."""
        table = self.places
        for pair, places in pairs.items():
            coded = table.get(pair)
            if coded is None:
                coded = table[pair] = array("q")
            coded.append(doc_id)
            coded.append(len(places))
            coded.extend(places)
        self.entries += len(pairs)


def shard_count(table: PairTable, per_shard: int) -> int:
    """How many ``q/`` shards a first build makes: about ``per_shard`` document entries each."""
    return max(1, table.entries // per_shard)
