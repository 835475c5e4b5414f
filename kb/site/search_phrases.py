"""The static search's phrase pairs: which documents hold two index terms at adjacent positions, so the browser
answers a quoted phrase (``"total cost"``, ``「マナ能力を起動」``) as ``kb search`` does (a Whoosh phrase of the
phrase's terms, slop 1: each term right after the one before, in the title or in the body).

Layout: ``search/q/<i>.js`` — ``{"<term>\\t<term>": [doc gap, 1, doc gap, 1, …]}`` for the adjacent pairs whose
FNV-1a hash modulo ``meta.q`` is ``i`` (the posting shards' coding, so ``kb.site.search_export`` patches them as it
patches those). Positions are those of :func:`kb.search.analysis.analyze` with ``index=True``: the terms of one
position (a word, its mode-A parts, a dotted compound's joined word) each pair with each term of the next one.
A phrase of one term is that term's postings; a phrase with a word the index lacks is matched by its bigrams
(the browser requires all of them, not their order)."""

from __future__ import annotations

from collections import defaultdict

from kb.search.analysis import Term


def term_pairs(terms: list[Term]) -> list[str]:
    """The adjacent pairs (``a\\tb``) of one field's analysed terms, each once, sorted."""
    at: dict[int, list[str]] = defaultdict(list)
    for t in terms:
        at[t.pos].append(t.text)
    return sorted({f"{a}\t{b}" for p, here in at.items() for a in here for b in at.get(p + 1, ())})


def pair_table(fields_by_id: dict[int, dict]) -> dict[str, list[int]]:
    """Pair → [doc, 1, doc, 1, …] (doc ids ascending) of the given documents' analysed fields (``q``)."""
    pairs: dict[str, list[int]] = defaultdict(list)
    for doc_id in sorted(fields_by_id):
        for pair in fields_by_id[doc_id].get("q", ()):
            pairs[pair] += [doc_id, 1]
    return pairs
