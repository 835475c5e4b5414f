"""The names the Japanese rules text gives the rules it cites (``rule 605〔マナ能力〕``, ``連繋(rule 702.47 参照)``,
:func:`kb.search.names.text_names`), for the static search's whole-query lookups: the query ``多人数戦ルール`` finds
chapter 8 first, as :meth:`kb.search.query.Searcher._named_rules` does — the Japanese rule of that number shown
(with the English rule beside it), else the English rule of that number where it bears the name's English name.

Contract: :func:`learned_rules` gives, per name form (:func:`kb.search.names.name_forms`) and per reading of such a
name, the documents of those rules; ``kb.site.search_export`` puts them first in the name shards (``n/``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from kb.site.records import Entry, SiteData


def learned_rules(site: SiteData, docs_of: Callable[[Entry], list[int]],
                  forms_of: Callable[[str], Iterable[str]]) -> dict[str, list[int]]:
    """Name form or reading → the documents (``docs_of`` an entry) of the rules a Japanese rules text names so;
    ``forms_of``: a name's forms (:func:`kb.search.names.name_forms`, or the same kept by the export)."""
    names = site.names
    if names is None or not names.rules:
        return {}
    by_japanese = {node.number: entry for entry in site.rules.values()
                   for lang, node in entry.nodes.items() if lang == "ja" and node.number}

    def docs(numbers: tuple[str, ...], english: set[str]) -> list[int]:
        out: list[int] = []
        for number in numbers:
            entry = by_japanese.get(number)
            if entry is None:
                shown = site.rules.get(number)
                node = shown.nodes.get("en") if shown else None
                entry = shown if node is not None and (node.title or node.text.strip()).casefold() in english else None
            out += [d for d in (docs_of(entry) if entry else ()) if d not in out]
        return out

    def english_of(forms: list[str]) -> set[str]:
        return {e.casefold() for f in forms for e in names.english.get(f, ())}

    out = {}
    for form, numbers in names.rules.items():
        found = docs(numbers, english_of([form]))
        if found:
            out[form] = found
    for reading, japanese in names.readings.items():
        forms = sorted({f for name in japanese for f in forms_of(name)})
        numbers = tuple(dict.fromkeys(n for f in forms for n in names.rules.get(f, ())))
        found = docs(numbers, english_of(forms)) if numbers else []
        if found:
            out[reading] = list(dict.fromkeys([*out.get(reading, []), *found]))
    return out
