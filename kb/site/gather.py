"""Gather what the site shows from the store: the CR version to show (Japanese first, paired with the English CR of the
same effective date), its rules merged by number across the two languages, glossary terms paired by English name,
every unversioned node (wiki articles, release notes, cards…), and every reference resolved to a site URL.

Public entry: :func:`gather_site` → :class:`SiteData`. Links are computed here once per node as :class:`Link`
records (offsets into the node's text, a site-relative target) so page producers only arrange them. A link carries
the target's URL only, never its text, so changing a rule re-renders the pages showing it, not every page citing it.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from urllib.parse import quote

from kb import rulenum
from kb.link.termlinks import REF_AUTO_TERM
from kb.model import CARD, CHAPTER, GLOSSARY, REF_RULE, REF_SECTION, REF_TERM, RULE_KINDS, UNVERSIONED, Node
from kb.site.paths import page_for_id, url_for
from kb.store import NodeKey, Store

MTGWIKI = "https://mtgwiki.com/wiki/"
# Reference kinds whose target lies outside the site by nature (MTG Wiki articles not ingested link to mtgwiki.com):
# never counted as unresolved.
OUTSIDE_KINDS = frozenset(["external", "redlink", "category", "wiki"])


@dataclass(frozen=True)
class Link:
    start: int
    end: int
    target: str | None  # site-relative URL (with anchor), None when the reference names nothing on the site
    kind: str = "rule"


@dataclass
class Entry:
    """One thing with a page or an anchor: a rule (both languages), a glossary term (both languages), an article…"""

    id: str  # node id (the primary language's)
    kind: str
    url: str
    label: str
    nodes: dict[str, Node] = field(default_factory=dict)  # lang → node
    links: dict[str, list[Link]] = field(default_factory=dict)  # lang → links into nodes[lang].text
    children: list[str] = field(default_factory=list)  # ids of child entries in order (rules)
    cited_by: list[tuple[str, str]] = field(default_factory=list)  # (url, label), in order, unique
    number: str | None = None  # rule number (rules only)
    mentions: list[dict] = field(default_factory=list)  # cards: {url, label, before, name, after} per citing sentence

    def text(self, lang: str) -> str:
        node = self.nodes.get(lang)
        return node.text if node else ""


@dataclass
class SiteData:
    primary_lang: str | None = None
    primary_version: str | None = None
    english_version: str | None = None  # the English CR paired with a Japanese primary (same effective date)
    effective_date: str | None = None
    sync_date: str | None = None
    cr_title: str | None = None
    rules: dict[str, Entry] = field(default_factory=dict)  # by rule number, document order
    chapters: list[str] = field(default_factory=list)
    terms: dict[str, Entry] = field(default_factory=dict)  # by node id
    others: dict[str, Entry] = field(default_factory=dict)  # unversioned nodes by id
    unresolved: list[str] = field(default_factory=list)  # "rule 601.2 refers to rule 728" …
    changes: object = None  # kb.site.changes.ChangesData: version diffs and rule histories
    base_url: str | None = None  # absolute URL of the site's root (ends with "/"), set by the builder when given


def gather_site(store: Store) -> SiteData:
    site = SiteData()
    _choose_versions(store, site)
    shown: dict[NodeKey, Entry] = {}
    if site.primary_version:
        _gather_rules(store, site, shown)
        _gather_terms(store, site, shown)
    for node in store.nodes(version=UNVERSIONED):
        entry = Entry(node.id, node.kind, page_for_id(node.id), node.title or node.id.partition(":")[2], {node.lang: node})
        site.others[node.id] = entry
        shown[NodeKey(node.version, node.lang, node.id)] = entry
    _link(store, site, shown)
    if any(len(store.versions(lang)) > 1 for lang in ("ja", "en")):  # else there is nothing to compare
        from kb.site.changes import gather_changes

        site.changes = gather_changes(store, _languages(site))
    return site


def _choose_versions(store: Store, site: SiteData) -> None:
    cr_docs = [d for d in store.documents() if d.kind == "cr-text" or d.version != UNVERSIONED]
    if not cr_docs:
        return
    ja = sorted((d for d in cr_docs if d.lang == "ja"), key=lambda d: d.version, reverse=True)
    en = sorted((d for d in cr_docs if d.lang == "en"), key=lambda d: d.version, reverse=True)
    main_doc = ja[0] if ja else en[0]
    site.primary_lang, site.primary_version = main_doc.lang, main_doc.version
    site.effective_date, site.cr_title = main_doc.effective_date, main_doc.title
    site.sync_date = max((d.sync_date for d in cr_docs if d.version == main_doc.version and d.sync_date), default=None)
    if ja and main_doc.effective_date:
        pair = next((d for d in en if d.effective_date == main_doc.effective_date), None)
        site.english_version = pair.version if pair else None


def _languages(site: SiteData) -> list[tuple[str, str]]:
    pairs = [(site.primary_version, site.primary_lang)]
    if site.english_version:
        pairs.append((site.english_version, "en"))
    return pairs


def _cr_nodes(store: Store, version: str, lang: str, kinds, *, meta: bool = False) -> list[Node]:
    """Rules or glossary entries of one CR version in document order — the fields the site shows, read straight from
    the nodes table (``Store.nodes`` also decodes every node's references and metadata: a third of a no-op rebuild;
    the site takes references from ``Store.refs``); ``meta`` too when asked (glossary: a term's reading)."""
    return store.light_nodes(version, lang, kinds, meta=meta)


def _gather_rules(store: Store, site: SiteData, shown: dict[NodeKey, Entry]) -> None:
    for version, lang in _languages(site):
        for node in _cr_nodes(store, version, lang, RULE_KINDS):
            number = node.number or node.id.partition(":")[2]
            entry = site.rules.get(number)
            if entry is None:
                entry = site.rules[number] = Entry(node.id, node.kind, "", number, number=number)
            entry.nodes[lang] = node
            shown[NodeKey(version, lang, node.id)] = entry
    parsed = {number: rulenum.parse(number) for number in site.rules}
    ordered = sorted(site.rules.values(), key=lambda e: parsed[e.number].sort_key() if parsed[e.number] else (99, e.number))
    site.rules = {e.number: e for e in ordered}
    for entry in ordered:
        number = parsed[entry.number]
        entry.url = url_for(entry)
        node = entry.nodes.get(site.primary_lang) or next(iter(entry.nodes.values()))
        if node.title:
            entry.label = f"{entry.number}. {node.title}"
        parent = str(number.parent) if number and number.parent else None
        if parent in site.rules:
            site.rules[parent].children.append(entry.number)
        elif entry.kind == CHAPTER:
            site.chapters.append(entry.number)


def _gather_terms(store: Store, site: SiteData, shown: dict[NodeKey, Entry]) -> None:
    by_english: dict[str, Entry] = {}
    for node in _cr_nodes(store, site.primary_version, site.primary_lang, [GLOSSARY], meta=True):
        entry = Entry(node.id, GLOSSARY, page_for_id(node.id), node.title or node.id[3:], {node.lang: node})
        site.terms[node.id] = entry
        shown[NodeKey(site.primary_version, site.primary_lang, node.id)] = entry
        if node.english:
            by_english[node.english.casefold()] = entry
    if site.english_version:
        for node in _cr_nodes(store, site.english_version, "en", [GLOSSARY]):
            entry = by_english.get((node.title or "").casefold())
            if entry is None:
                entry = Entry(node.id, GLOSSARY, page_for_id(node.id), node.title or node.id[3:])
                site.terms[node.id] = entry
            entry.nodes["en"] = node
            shown[NodeKey(site.english_version, "en", node.id)] = entry


def _link(store: Store, site: SiteData, shown: dict[NodeKey, Entry]) -> None:
    """Turn every stored reference of a shown node into a :class:`Link`, and fill each entry's cited-by list."""
    by_title: dict[tuple[str, str], Entry] = {}
    for entry in [*site.terms.values(), *site.others.values()]:
        for node in entry.nodes.values():
            for name in (node.title, node.english):
                if name:
                    by_title.setdefault((entry.kind, name.casefold()), entry)
    # (source key, start, end) → [(kind, target, resolved key or None)], read as plain rows (tens of thousands of
    # references: building Ref records for them costs more than the rest of the linking)
    grouped: dict[tuple[tuple, int, int], list[tuple]] = defaultdict(list)
    by_key = {(key.version, key.lang, key.id): entry for key, entry in shown.items()}  # plain tuples hash fast
    shown_pairs = sorted({(key.version, key.lang) for key in shown if key.version != UNVERSIONED})
    for version, lang in [(UNVERSIONED, None), *shown_pairs]:  # the store's order (version, lang, node, seq)
        rows = store.ref_rows(version, lang)
        for s_version, s_lang, node_id, kind, target, start, end, r_version, r_lang, r_id in rows:
            source_key = (s_version, s_lang, node_id)
            if source_key in by_key:
                resolved = (r_version, r_lang, r_id) if r_id is not None else None
                grouped[(source_key, start, end)].append((kind, target, resolved))
    cited: dict[int, dict[str, str]] = defaultdict(dict)
    mentions: dict[int, list[dict]] = defaultdict(list)
    for (source_key, start, end), refs in grouped.items():
        source, source_lang = by_key[source_key], source_key[1]
        target = None
        for ref_kind, ref_target, resolved in refs:
            target = _target_entry(site, by_key, by_title, ref_kind, ref_target, resolved)
            if target is not None:
                break
        ref_kind, ref_target, _ = refs[0]
        if target is None:
            if ref_kind not in OUTSIDE_KINDS:
                site.unresolved.append(f"{source.label} [{source_lang}] refers to {ref_kind} {ref_target}")
            if start < 0 or ref_kind == REF_TERM:  # an unknown term is just a word
                continue
            outside = MTGWIKI + quote(ref_target.replace(" ", "_"), safe="/:()") if ref_kind in ("wiki", "redlink") else None
            source.links.setdefault(source_lang, []).append(Link(start, end, outside, kind=ref_kind))
            continue
        if target is not source:
            cited[id(target)].setdefault(source.url, source.label)
            if target.kind == CARD and start >= 0:
                mentions[id(target)].append(_mention(source, source_lang, start, end))
        if start >= 0:
            kind = REF_TERM if ref_kind == REF_AUTO_TERM else ref_kind  # terms found in the text look like parsed ones
            source.links.setdefault(source_lang, []).append(Link(start, end, target.url, kind))
    for entry in [*site.rules.values(), *site.terms.values(), *site.others.values()]:
        entry.cited_by = list(cited.get(id(entry), {}).items())
        entry.mentions = list({(m["url"], m["before"], m["name"], m["after"]): m for m in mentions.get(id(entry), [])}.values())
        for links in entry.links.values():
            links.sort(key=lambda l: (l.start, -l.end))


SENTENCE_ENDS = "。！？\n"
MENTION_CONTEXT = 90  # characters on each side of a mention at most


def _mention(source: Entry, lang: str, start: int, end: int) -> dict:
    """The sentence of ``source`` around the reference at ``start:end`` (cut at ``MENTION_CONTEXT`` characters)."""
    text = source.text(lang)
    left = max((text.rfind(ch, 0, start) for ch in SENTENCE_ENDS), default=-1) + 1
    right = min((i for i in (text.find(ch, end) for ch in SENTENCE_ENDS) if i >= 0), default=len(text))
    right += right < len(text) and text[right] != "\n"
    left = max(left, start - MENTION_CONTEXT)
    right = min(right, end + MENTION_CONTEXT)
    before, after = text[left:start].lstrip("•- ").strip(), text[end:right].rstrip()
    cut_before = left > 0 and text[left - 1] not in SENTENCE_ENDS
    cut_after = right < len(text) and text[right - 1] not in SENTENCE_ENDS
    return {"url": source.url, "label": source.label, "before": ("…" if cut_before else "") + before,
            "name": text[start:end], "after": after + ("…" if cut_after else "")}


def _target_entry(site: SiteData, by_key: dict[tuple, Entry], by_title: dict, kind: str, target: str,
                  key: tuple[str, str, str] | None) -> Entry | None:
    """The entry a reference (``kind``, ``target``, resolved to ``key`` = (version, lang, id) or None) points at."""
    if kind in (REF_RULE, REF_SECTION):
        number = key[2].partition(":")[2] if key else target
        return site.rules.get(number)
    if key is not None and key in by_key:
        return by_key[key]
    if key is not None:  # resolved into a version the site does not show: find the same thing by name
        if key[2].startswith("gl:"):
            return by_title.get((GLOSSARY, key[2].partition(":")[2].casefold()))
    return None
