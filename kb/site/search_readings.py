"""The static search's reading table: how the browser rewrites a kana query into indexed terms, as
:func:`kb.search.fuzzy.corrected` does (``よじする`` → ``予示する``, ``こうかをぶんかつ`` → ``効果を分割``).

Layout: ``search/r/<hex>.js`` — ``{reading: term}`` for the readings (katakana, two or more characters) whose first
character has the code point ``<hex>``; the term is the first of :attr:`kb.search.fuzzy.Lexicon.readings` for that
reading: the indexed Japanese terms of two or more characters and the names (:attr:`kb.search.names.NameTable.readings`)
read so (:func:`kb.search.names.reading_form`, else :func:`kb.search.names.reading_of`), the one in most documents
first (title documents plus body documents, as the lexicon counts), then the first in code point order. The browser
loads a shard only for a kana run of the query that the vocabulary does not cover.

``meta.js``'s ``f`` — ``[kana, …]``: the hiragana the analysis dropped (particles, auxiliaries, stop forms:
:func:`dropped_kana`) between or around the terms of a Japanese run of the documents, each stretch whole (``を``,
``られない``, ``された``). The browser drops a kana leftover of the query only when it is one of them (else it is a
word the index lacks, looked up as bigrams), and reads a kana word the vocabulary knows (``ない`` → 無い) as dropped
where it ends such a stretch (``唱えられない``).

Contract: :func:`dropped_kana` is what ``kb.site.search_export.analyse`` keeps of a text (``f``);
:class:`DocumentCounts` counts the documents holding each term (``kb.site.search_export`` keeps them up to date:
counted in a first build's one pass over the analyses, else updated from the documents that changed);
:func:`export_readings` gives from them the shards that changed and the state to keep (the Japanese terms' document
counts and their readings)."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from kb.search.analysis import JAPANESE_RUN, Term, fold, runs
from kb.search.fuzzy import is_latin_candidate
from kb.search.names import NameTable, reading_form, reading_of
from kb.site.search_shards import initial_shard
from kb.splitter import JapaneseSplitter

_HIRAGANA = re.compile(r"^[\u3041-\u3096\u30fc]+$")


def dropped_kana(text: str, terms: list[Term]) -> set[str]:
    """The stretches of hiragana of ``text``'s Japanese runs that no term of ``terms`` (its analysis) covers."""
    covered = sorted((t.start, t.end) for t in terms)
    out = set()
    for kind, _run, start, end, _ in runs(text):
        if kind != JAPANESE_RUN:
            continue
        at = start
        for s, e in [*((s, e) for s, e in covered if start <= s < end), (end, end)]:
            gap = fold(text[at:s]) if s > at else ""
            if gap and _HIRAGANA.match(gap):
                out.add(gap)
            at = max(at, e)
    return out


@dataclass(frozen=True)
class DocumentCounts:
    """Per term, the documents holding it (a title document and a body document counted apart): each Latin term
    that may replace a typo (:func:`kb.search.fuzzy.is_latin_candidate`: the typo lexicon), each Japanese term of
    two or more characters (the reading table), and per dropped kana stretch (``f``: one count per document)."""

    latin: Counter[str] = field(default_factory=Counter)
    japanese: Counter[str] = field(default_factory=Counter)
    dropped: Counter[str] = field(default_factory=Counter)

    def add(self, fields: dict, sign: int = 1) -> None:
        """Count one document's analysed fields in (``sign`` 1) or out (-1)."""
        for name in ("t", "b"):
            for term in set(fields.get(name, ())):
                if term.isascii():
                    if is_latin_candidate(term):
                        self.latin[term] += sign
                elif len(term) >= 2:
                    self.japanese[term] += sign
        for kana in set(fields.get("f", ())):
            self.dropped[kana] += sign


def reading_table(splitter: JapaneseSplitter, names: NameTable | None, counts: Counter[str],
                  known: dict[str, str | None]) -> dict[str, str]:
    """Reading → the term a kana run of that reading is rewritten to (``known``: readings already computed, term →
    reading or None, filled in here)."""
    groups: dict[str, set[str]] = defaultdict(set)
    for term in counts:
        if term not in known:
            known[term] = reading_form(term) or reading_of(splitter, term)
        reading = known[term]
        if reading:
            groups[reading].add(term)
    for reading, japanese in (names.readings.items() if names else ()):
        groups[reading].update(japanese)
    return {reading: min(terms, key=lambda t: (-counts.get(t, 0), t)) for reading, terms in sorted(groups.items())
            if len(reading) >= 2}


def export_readings(splitter: JapaneseSplitter, names: NameTable | None, previous: dict[str, Any],
                    counts: DocumentCounts) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the shards to write, ``r/<hex>`` → their table; the state to keep, its ``dropped``: the dropped kana, each →
    the documents holding it, for ``meta.js``'s ``f``) from ``counts`` (of every document) and ``previous`` (a state
    this returned, or empty), whose readings are reused and whose shards are compared with. A shard that lost its
    last reading is written empty (it stays listed)."""
    japanese, dropped = +counts.japanese, +counts.dropped
    known = {t: r for t, r in previous.get("known", {}).items() if t in japanese}
    table = reading_table(splitter, names, japanese, known)
    shards: dict[str, dict[str, str]] = defaultdict(dict)
    for reading, term in table.items():
        shards[initial_shard(reading)][reading] = term
    old: dict[str, str] = previous.get("table", {})
    old_shards: dict[str, dict[str, str]] = defaultdict(dict)
    for reading, term in old.items():
        old_shards[initial_shard(reading)][reading] = term
    changed: dict[str, Any] = {f"r/{code}": shard for code, shard in shards.items() if shard != old_shards.get(code)}
    changed.update({f"r/{code}": {} for code in old_shards if code not in shards})
    return changed, {"counts": dict(japanese), "known": known, "table": table, "dropped": dict(dropped)}
