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
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import quote

from kb import rulenum
from kb.link.termlinks import REF_AUTO_TERM
from kb.model import CARD, CHAPTER, GLOSSARY, REF_RULE, REF_SECTION, REF_TERM, RULE_KINDS, UNVERSIONED, Node
from kb.urls.paths import page_for_id, url_for
from kb.store import NodeKey, Store
from kb.versions.catalog import list_versions
from kb.versions.current import MISSING, CurrentView, JaText, current_view
from kb.versions.diff import version_digest
from kb.versions.history import consecutive_summaries

if TYPE_CHECKING:
    from kb.search.names import NameTable

MTGWIKI = "https://mtgwiki.com/wiki/"
# Reference kinds whose target lies outside the site by nature (MTG Wiki articles not ingested link to mtgwiki.com):
# never counted as unresolved.
OUTSIDE_KINDS = frozenset(["external", "redlink", "category", "wiki"])


class Link(NamedTuple):  # tens of thousands per build: a tuple is made several times faster than a dataclass
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
    ja: JaText | None = None  # rules and terms: the Japanese text shown and its status (None: 未翻訳)

    @property
    def ja_status(self) -> str:
        return self.ja.status if self.ja else MISSING

    def main_node(self) -> Node:
        """The node whose title names the entry: the Japanese one when there is one."""
        return self.nodes.get("ja") or self.nodes.get("en") or next(iter(self.nodes.values()))

    def text(self, lang: str) -> str:
        node = self.nodes.get(lang)
        return node.text if node else ""


@dataclass(frozen=True)
class Archive:
    """An older version (or one not shown), kept readable under ``v/<version>/`` (:mod:`kb.urls.where`). Its nodes
    are read only when its pages must be made again: ``digest`` names them (:func:`kb.versions.diff.version_digest`)."""

    version: str
    lang: str
    effective_date: str | None
    has_glossary: bool
    digest: str
    nodes: Callable[[], tuple[list[Node], list[Node]]] = field(compare=False)  # (rules, terms), document order


@dataclass
class SiteData:
    primary_lang: str | None = None  # the language and version of the rules shown (kb.versions.current)
    primary_version: str | None = None
    english_version: str | None = None  # the English version shown (the primary one, or the same date's)
    effective_date: str | None = None
    translation_version: str | None = None  # the newest Japanese translation, and its effective date
    translation_date: str | None = None
    translated_date: str | None = None  # the newest translation's translator line date (翻訳日)
    view: CurrentView | None = None
    sync_date: str | None = None
    cr_title: str | None = None
    rules: dict[str, Entry] = field(default_factory=dict)  # by rule number, document order
    chapters: list[str] = field(default_factory=list)
    terms: dict[str, Entry] = field(default_factory=dict)  # by node id
    others: dict[str, Entry] = field(default_factory=dict)  # unversioned nodes by id
    unresolved: list[str] = field(default_factory=list)  # "rule 601.2 refers to rule 728" …
    changes: object = None  # kb.site.changes.ChangesData: version diffs and rule histories
    base_url: str | None = None  # absolute URL of the site's root (ends with "/"), set by the builder when given
    shown: dict[NodeKey, Entry] = field(default_factory=dict)  # every shown node → the entry showing it
    archives: list[Archive] = field(default_factory=list)  # every other stored version, newest first
    names: NameTable | None = None  # Japanese names' English names and readings (kb.search.names), for the search

    def entry_for(self, key: NodeKey) -> Entry | None:
        """The entry that shows the stored node ``key`` (None: the site does not show it)."""
        return self.shown.get(key)


def gather_site(store: Store) -> SiteData:
    from kb.search import userdict  # on first use: a build with nothing to do loads no search code
    from kb.search.names import name_table

    userdict.prepare(store)  # the static search and the 五十音 readings analyse with the store's user dictionary
    site = SiteData()
    # each language's consecutive version diffs (summaries, cached per version pair): read once, for the current
    # view's renumbering and the 更新履歴
    steps = {lang: consecutive_summaries(store, lang) for lang in ("en", "ja")}
    _choose_versions(store, site, steps["en"])
    shown = site.shown
    if site.primary_version:
        _gather_rules(store, site, shown)
        _gather_terms(store, site, shown)
    for node in store.nodes(version=UNVERSIONED):
        entry = Entry(node.id, node.kind, page_for_id(node.id), node.title or node.id.partition(":")[2], {node.lang: node})
        site.others[node.id] = entry
        shown[NodeKey(node.version, node.lang, node.id)] = entry
    _link(store, site, shown)
    site.archives = _gather_archives(store, site)
    site.names = name_table(store)
    if any(diffs for _, diffs in steps.values()):  # else there is nothing to compare
        from kb.site.changes import gather_changes

        site.changes = gather_changes(steps, _languages(site))
    return site


def _choose_versions(store: Store, site: SiteData, english_steps) -> None:
    view = site.view = current_view(store, english_steps)
    if view.shown is None:
        return
    site.primary_lang, site.primary_version = view.shown.lang, view.shown.version
    site.effective_date = view.shown.effective_date
    site.english_version = view.english.version if view.english else None
    if view.translation:
        site.translation_version, site.translation_date = view.translation.version, view.translation.effective_date
        site.translated_date = view.translation.translated_date
    docs = [d for d in store.documents() if d.version == view.shown.version and d.lang == view.shown.lang]
    site.cr_title = next((d.title for d in docs if d.title), None)
    site.sync_date = max((d.sync_date for d in store.documents() if d.version == site.translation_version and d.sync_date),
                         default=None)


def _languages(site: SiteData) -> list[tuple[str, str]]:
    """The (version, lang) pairs whose nodes the site shows: the shown English version and each translation used."""
    pairs = [(site.english_version, "en")] if site.english_version else []
    view = site.view
    pairs += sorted({(j.key.version, "ja") for j in view.ja.values()}, reverse=True) if view else []
    return pairs


def _shown_nodes(store: Store, site: SiteData, kinds) -> list[tuple[str, str, Node]]:
    """(shown node id, lang, node) for every node of ``kinds`` shown: the English version's in document order, then
    the Japanese texts paired with them (see :mod:`kb.versions.current`)."""
    out = []
    if site.english_version:
        out += [(n.id, "en", n) for n in store.light_nodes(site.english_version, "en", kinds)]
    wanted: dict[str, dict[str, str]] = defaultdict(dict)  # ja version → ja id → shown id
    for shown_id, ja in site.view.ja.items():
        wanted[ja.key.version][ja.key.id] = shown_id
    for version, ids in sorted(wanted.items(), reverse=True):
        out += [(ids[n.id], "ja", n) for n in store.light_nodes(version, "ja", kinds) if n.id in ids]
    return out


def _gather_rules(store: Store, site: SiteData, shown: dict[NodeKey, Entry]) -> None:
    for shown_id, lang, node in _shown_nodes(store, site, RULE_KINDS):
        number = shown_id.partition(":")[2]
        entry = site.rules.get(number)
        if entry is None:
            entry = site.rules[number] = Entry(shown_id, node.kind, "", number, number=number)
        entry.nodes[lang] = node
        shown[NodeKey(node.version, lang, node.id)] = entry
    parsed = {number: rulenum.parse(number) for number in site.rules}
    ordered = sorted(site.rules.values(), key=lambda e: parsed[e.number].sort_key() if parsed[e.number] else (99, e.number))
    site.rules = {e.number: e for e in ordered}
    for entry in ordered:
        number = parsed[entry.number]
        entry.url = url_for(entry)
        entry.ja = site.view.ja.get(entry.id)
        node = entry.main_node()
        title = node.title or entry.nodes[next(iter(entry.nodes))].title
        if title:
            entry.label = f"{entry.number}. {title}"
        parent = str(number.parent) if number and number.parent else None
        if parent in site.rules:
            site.rules[parent].children.append(entry.number)
        elif entry.kind == CHAPTER:
            site.chapters.append(entry.number)


def _gather_terms(store: Store, site: SiteData, shown: dict[NodeKey, Entry]) -> None:
    """Glossary entries: the shown English entry with its Japanese text; the page is named by the Japanese term
    when there is one (``glossary/唱える.html``)."""
    by_shown: dict[str, Entry] = {}
    for shown_id, lang, node in sorted(_shown_nodes(store, site, [GLOSSARY]), key=lambda x: x[1] != "ja"):
        entry = by_shown.get(shown_id)
        if entry is None:
            entry = by_shown[shown_id] = Entry(node.id, GLOSSARY, page_for_id(node.id), node.title or node.id[3:])
            entry.ja = site.view.ja.get(shown_id)
            site.terms[node.id] = entry
        entry.nodes[lang] = node
        shown[NodeKey(node.version, lang, node.id)] = entry


def _gather_archives(store: Store, site: SiteData) -> list[Archive]:
    current = (site.english_version, "en") if site.english_version else (site.primary_version, site.primary_lang)
    counts = store.node_counts()

    def nodes(version: str, lang: str) -> tuple[list[Node], list[Node]]:
        return store.light_nodes(version, lang, RULE_KINDS), store.light_nodes(version, lang, [GLOSSARY])

    return [Archive(v.version, v.lang, v.effective_date, bool(counts.get((v.version, v.lang), {}).get(GLOSSARY)),
                    version_digest(store, v.version, v.lang), partial(nodes, v.version, v.lang))
            for v in list_versions(store) if (v.version, v.lang) != current]


def _link(store: Store, site: SiteData, shown: dict[NodeKey, Entry]) -> None:
    """Turn every stored reference of a shown node into a :class:`Link`, and fill each entry's cited-by list."""
    by_title: dict[tuple[str, str], Entry] = {}
    for entry in [*site.terms.values(), *site.others.values()]:
        for node in entry.nodes.values():
            for name in (node.title, node.english):
                if name:
                    by_title.setdefault((entry.kind, name.casefold()), entry)
    by_key = {(key.version, key.lang, key.id): entry for key, entry in shown.items()}  # plain tuples hash fast
    # (source key, start, end) → its references (kind, target, resolved key or None), in the store's order. Tens of
    # thousands of plain rows, nearly every span with one reference: held as that tuple, a list only when several
    spans: dict[tuple, tuple | list] = {}
    shown_pairs = sorted({(key.version, key.lang) for key in shown if key.version != UNVERSIONED})
    for version, lang in [(UNVERSIONED, None), *shown_pairs]:  # the store's order (version, lang, node, seq)
        source_key: tuple | None = None
        for s_lang, node_id, kind, target, start, end, r_version, r_lang, r_id in store.ref_rows(version, lang):
            if source_key is None or source_key[2] != node_id or source_key[1] != s_lang:
                source_key = (version, s_lang, node_id)
                shown_source = source_key in by_key
            if not shown_source:
                continue
            ref = (kind, target, (r_version, r_lang, r_id) if r_id is not None else None)
            span = (source_key, start, end)
            held = spans.get(span)
            spans[span] = ref if held is None else [held, ref] if isinstance(held, tuple) else [*held, ref]
    cited: dict[int, dict[str, str]] = defaultdict(dict)
    mentions: dict[int, list[dict]] = defaultdict(list)
    for (source_key, start, end), held in spans.items():
        source, source_lang = by_key[source_key], source_key[1]
        refs = [held] if isinstance(held, tuple) else held
        target = None
        for ref_kind, ref_target, resolved in refs:
            target = by_key.get(resolved) if resolved is not None else None
            if target is None:
                target = _target_entry(site, by_title, ref_kind, ref_target, resolved, source_key)
            if target is not None:
                break
        ref_kind, ref_target, _ = refs[0]
        if target is None:
            if ref_kind not in OUTSIDE_KINDS:
                site.unresolved.append(f"{source.label} [{source_lang}] refers to {ref_kind} {ref_target}")
            if start < 0 or ref_kind == REF_TERM:  # an unknown term is just a word
                continue
            outside = MTGWIKI + quote(ref_target.replace(" ", "_"), safe="/:()") if ref_kind in ("wiki", "redlink") else None
            source.links.setdefault(source_lang, []).append(Link(start, end, outside, ref_kind))
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
            links.sort(key=_link_order)


def _link_order(link: Link) -> tuple[int, int]:
    return link.start, -link.end


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


def _target_entry(site: SiteData, by_title: dict, kind: str, target: str, key: tuple[str, str, str] | None,
                  source_key: tuple[str, str, str]) -> Entry | None:
    """The entry a reference (``kind``, ``target``, resolved to ``key`` = (version, lang, id) or None, which the site
    does not show) of the node ``source_key`` points at. A rule cited by an older translation is the rule its number
    meant then."""
    if kind in (REF_RULE, REF_SECTION):
        number = key[2].partition(":")[2] if key else target
        renumbered = site.view.renumbered if site.view else {}
        if (source_key[0], f"cr:{number}") in renumbered:
            now = renumbered[(source_key[0], f"cr:{number}")]
            return site.rules.get(now.partition(":")[2]) if now else None
        return site.rules.get(number)
    if key is not None:  # resolved into a version the site does not show: find the same thing by name
        if key[2].startswith("gl:"):
            return by_title.get((GLOSSARY, key[2].partition(":")[2].casefold()))
    return None
