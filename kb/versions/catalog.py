"""The CR versions in the store: one :class:`VersionInfo` per (version, language), with dates and node counts.

:func:`list_versions` is the entry point. Versions are named as ``kb versions`` prints them: the version id
(``20231117.0`` Japanese, ``20260116`` English, from the effective date); :func:`resolve_version` also accepts
the ISO effective date (``2026-01-16``), an id's date digits (``20231117`` names ``20231117.0`` when no version
has that exact id) and an English version's release name (its file name's date), and picks the language with
``lang`` when a name fits several.

Dates: an English version's effective date is the date its text states; the date in its file name
(``MagicCompRules-2024-02-06.txt``, which states February 2) is kept as its ``release`` name. A translation
(Japanese) claims to translate the rules of its file name's date, else of its title version's date (its CR text's
claim, when one is stored, over a Wisdom Guild page's title). Its English original (:func:`english_original`) is
the stored English version whose effective date is nearest that claim within :data:`PAIRING_WINDOW_DAYS` of the
claim or of its translator line's date (``translated_date``, 翻訳日, kept apart); none stored in that window, none
at all — never an English version months older. Its effective date is its original's, else its claim: a translation
is never dated after the rules it translates, and a version's dates do not depend on which other sources of it are
stored.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, replace
from datetime import date

from kb.errors import KbError
from kb.model import GLOSSARY, RULE_KINDS
from kb.store import DocumentInfo, Store

RULES_TEXT_KIND = "cr-text"  # a whole rules document: its dates are the version's (ingest.kinds names the kinds)

PREFERRED_LANGS = ("ja", "en")  # when a name fits both languages and none is asked for
PAIRING_WINDOW_DAYS = 7  # consecutive English releases are three weeks or more apart
ENGLISH_FILE_DATE_RE = re.compile(r"MagicCompRules[ _-]*(\d{4})-?(\d{2})-?(\d{2})")


@dataclass(frozen=True)
class VersionInfo:
    version: str
    lang: str
    effective_date: str | None  # ISO date
    sources: tuple[str, ...]
    ingested_at: str  # of the latest document of this version
    rules: int  # chapters, sections, rules and subrules
    glossary: int
    release: str | None = None  # English: its file name's date (``20240206``), when the file name has one
    claim_date: str | None = None  # a translation: the English date it claims to translate (ISO)
    translated_date: str | None = None  # a translation: its translator line's date, 翻訳日 (ISO)
    original: str | None = None  # a translation: the version id of its English original, when stored

    @property
    def label(self) -> str:
        return f"{self.version} ({self.lang}, {self.effective_date or 'no date'})"

    def sort_key(self) -> tuple:
        return (self.effective_date or "", self.version, self.lang)

    def to_json(self) -> dict:
        return {"version": self.version, "lang": self.lang, "effective_date": self.effective_date,
                "rules": self.rules, "glossary": self.glossary, "sources": list(self.sources),
                "ingested_at": self.ingested_at, "release": self.release, "claim_date": self.claim_date,
                "translated_date": self.translated_date, "original": self.original}


def list_versions(store: Store, lang: str | None = None) -> list[VersionInfo]:
    """Every versioned (version, language) in the store, newest first (translations dated as the module doc says)."""
    docs: dict[tuple[str, str], list[DocumentInfo]] = defaultdict(list)
    for doc in store.versioned_documents():
        docs[(doc.version, doc.lang)].append(doc)
    counts = store.node_counts()
    found = []
    for (version, doc_lang), group in docs.items():
        by_kind: defaultdict[str, int] = defaultdict(int, counts.get((version, doc_lang), {}))
        rules_texts = [d for d in group if d.kind == RULES_TEXT_KIND] or group  # the best evidence of the dates
        dates = [d.effective_date for d in rules_texts if d.effective_date]
        translated = [d.translated_date for d in group if d.translated_date]
        english = doc_lang == "en"
        releases = [m.expand(r"\1\2\3") for d in group
                    if english and (m := ENGLISH_FILE_DATE_RE.search(_file_name(d.source)))]
        found.append(VersionInfo(
            version=version, lang=doc_lang, effective_date=min(dates) if dates else None,
            sources=tuple(d.source for d in group), ingested_at=max(d.ingested_at for d in group),
            rules=sum(by_kind[k] for k in RULE_KINDS), glossary=by_kind[GLOSSARY],
            release=min(releases) if releases else None,
            claim_date=None if english else (min(dates) if dates else None),
            translated_date=None if english or not translated else min(translated)))
    english_versions = [v for v in found if v.lang == "en"]
    out = []
    for v in found:
        if v.lang != "en":
            original = english_original(v.claim_date, v.translated_date, english_versions)
            if original is not None:
                v = replace(v, effective_date=original.effective_date, original=original.version)
        if lang is None or v.lang == lang:
            out.append(v)
    return sorted(out, key=VersionInfo.sort_key, reverse=True)


def english_original(claim_date: str | None, translated_date: str | None, english_versions: list[VersionInfo]
                     ) -> VersionInfo | None:
    """The English version a translation claiming ``claim_date`` (translated on ``translated_date``) translates:
    the one nearest the claim among those within :data:`PAIRING_WINDOW_DAYS` of the claim or of the translation
    date (the older on a tie); None when none is."""
    if claim_date is None:
        return None
    claim = date.fromisoformat(claim_date)
    anchors = [claim] + ([date.fromisoformat(translated_date)] if translated_date else [])
    near = [(abs((date.fromisoformat(v.effective_date) - claim).days), v.effective_date, v) for v in english_versions
            if v.effective_date and any(abs((date.fromisoformat(v.effective_date) - a).days) <= PAIRING_WINDOW_DAYS
                                        for a in anchors)]
    return min(near, key=lambda n: (n[0], n[1]))[2] if near else None


def _file_name(source: str) -> str:
    return source.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]


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
    """The versions ``name`` names: by id or ISO effective date; failing that, by the date digits of an id
    (``20231117`` → ``20231117.0``), an effective date written without dashes or an English release name
    (``20240206``: the file ``MagicCompRules-2024-02-06.txt``, version ``20240202``)."""
    name = name.strip()
    versions = [v for v in versions if lang is None or v.lang == lang]
    exact = [v for v in versions if name in (v.version, v.effective_date)]
    return exact or [v for v in versions
                     if name in (v.version.split(".")[0], (v.effective_date or "").replace("-", ""), v.release)]


def _pick_language(matches: list[VersionInfo]) -> list[VersionInfo]:
    rank = {lg: i for i, lg in enumerate(PREFERRED_LANGS)}
    return sorted(matches, key=lambda v: rank.get(v.lang, len(rank)))
