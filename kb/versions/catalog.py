"""The CR versions in the store: one :class:`VersionInfo` per (version, language), with dates and node counts.

:func:`list_versions` is the entry point. Versions are named as ``kb versions`` prints them: the version id
(``20231117.0`` Japanese, ``20260116`` English, from the effective date); :func:`resolve_version` also accepts
the ISO effective date (``2026-01-16``) and picks the language with ``lang`` when a name fits several.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from kb.errors import KbError
from kb.model import GLOSSARY, RULE_KINDS, UNVERSIONED
from kb.store import Store

PREFERRED_LANGS = ("ja", "en")  # when a name fits both languages and none is asked for


@dataclass(frozen=True)
class VersionInfo:
    version: str
    lang: str
    effective_date: str | None  # ISO date
    sources: tuple[str, ...]
    ingested_at: str  # of the latest document of this version
    rules: int  # chapters, sections, rules and subrules
    glossary: int

    @property
    def label(self) -> str:
        return f"{self.version} ({self.lang}, {self.effective_date or 'no date'})"

    def sort_key(self) -> tuple:
        return (self.effective_date or "", self.version, self.lang)

    def to_json(self) -> dict:
        return {"version": self.version, "lang": self.lang, "effective_date": self.effective_date,
                "rules": self.rules, "glossary": self.glossary, "sources": list(self.sources),
                "ingested_at": self.ingested_at}


def list_versions(store: Store, lang: str | None = None) -> list[VersionInfo]:
    """Every versioned (version, language) in the store, newest first."""
    docs = defaultdict(list)
    for doc in store.documents():
        if doc.version != UNVERSIONED and (lang is None or doc.lang == lang):
            docs[(doc.version, doc.lang)].append(doc)
    counts = store.node_counts()
    out = []
    for (version, doc_lang), group in docs.items():
        by_kind = defaultdict(int, counts.get((version, doc_lang), {}))
        dates = [d.effective_date for d in group if d.effective_date]
        out.append(VersionInfo(
            version=version, lang=doc_lang, effective_date=min(dates) if dates else None,
            sources=tuple(d.source for d in group), ingested_at=max(d.ingested_at for d in group),
            rules=sum(by_kind[k] for k in RULE_KINDS), glossary=by_kind[GLOSSARY]))
    return sorted(out, key=VersionInfo.sort_key, reverse=True)


def resolve_version(store: Store, name: str, lang: str | None = None) -> VersionInfo:
    """The version ``name`` means (version id or ISO effective date); KbError naming the choices when none fits."""
    matches = _matches(list_versions(store), name, lang)
    if not matches:
        known = ", ".join(v.version for v in list_versions(store, lang)) or "none (run 'kb ingest' first)"
        raise KbError(f"{name}: no such version{f' in {lang}' if lang else ''}; known versions: {known}")
    return _pick_language(matches)[0]


def resolve_pair(store: Store, old: str, new: str, lang: str | None = None) -> tuple[VersionInfo, VersionInfo]:
    """Resolve OLD and NEW to versions of one language (the one both have; Japanese first when both fit)."""
    versions = list_versions(store)
    old_matches, new_matches = _matches(versions, old, lang), _matches(versions, new, lang)
    for name, matches in ((old, old_matches), (new, new_matches)):
        if not matches:
            resolve_version(store, name, lang)  # raises with the list of known versions
    common = [lg for lg in PREFERRED_LANGS + tuple(sorted({v.lang for v in versions}))
              if any(v.lang == lg for v in old_matches) and any(v.lang == lg for v in new_matches)]
    if not common:
        raise KbError(f"{old} is {'/'.join(sorted({v.lang for v in old_matches}))} and {new} is "
                      f"{'/'.join(sorted({v.lang for v in new_matches}))}: compare versions of one language")
    pick = common[0]
    return (next(v for v in old_matches if v.lang == pick), next(v for v in new_matches if v.lang == pick))


def previous_version(store: Store, version: VersionInfo) -> VersionInfo | None:
    """The newest version of the same language older than ``version``."""
    older = [v for v in list_versions(store, version.lang) if v.sort_key() < version.sort_key()]
    return older[0] if older else None


def _matches(versions: list[VersionInfo], name: str, lang: str | None) -> list[VersionInfo]:
    name = name.strip()
    return [v for v in versions if (lang is None or v.lang == lang) and name in (v.version, v.effective_date)]


def _pick_language(matches: list[VersionInfo]) -> list[VersionInfo]:
    rank = {lg: i for i, lg in enumerate(PREFERRED_LANGS)}
    return sorted(matches, key=lambda v: rank.get(v.lang, len(rank)))
