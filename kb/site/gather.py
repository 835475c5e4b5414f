"""Gather what the site shows from the store: the CR version to show (Japanese first, paired with the English CR of the
same effective date), its rules merged by number across the two languages, glossary terms paired by English name,
every unversioned node (wiki articles, release notes, cards…), and every reference resolved to a site URL.

Public entry: :func:`gather_site` → :class:`~kb.site.records.SiteData`. Links are computed here once per node as
:class:`~kb.site.records.Link` records (offsets into the node's text, a site-relative target) so page producers only
arrange them. A link carries the target's URL only, never its text, so changing a rule re-renders the pages showing
it, not every page citing it.
"""

from __future__ import annotations

import gc
import hashlib
import marshal
import re
from collections import defaultdict
from collections.abc import Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from functools import partial
from itertools import groupby, repeat
from operator import itemgetter
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import quote

from kb import rulenum
from kb.ids import id_name, is_glossary_id, rule_id
from kb.link.termlinks import REF_AUTO_TERM
from kb.model import (
    CARD,
    CHAPTER,
    GLOSSARY,
    REF_REDLINK,
    REF_RULE,
    REF_SECTION,
    REF_TERM,
    REF_WIKI,
    REFS_OUTSIDE_SITE,
    RULE_KINDS,
    UNVERSIONED,
    Node,
)
from kb.site.manifest import MANIFEST_FORMAT
from kb.site.records import (
    NO_CONTRIBUTION,
    WHOLE_KINDS,
    Archive,
    Citation,
    Contribution,
    Entry,
    EntryCitations,
    Link,
    Mention,
    SiteData,
    StoredHtml,
)
from kb.splitter import JapaneseSplitter
from kb.store import NodeKey, Store
from kb.urls.paths import page_for_id, url_for
from kb.versions.catalog import VersionInfo, list_versions
from kb.versions.current import current_view
from kb.versions.diff import VersionDiff, version_digest
from kb.versions.history import consecutive_summaries

if TYPE_CHECKING:
    from kb.search.names import NameTable

MTGWIKI = "https://mtgwiki.com/wiki/"


def gather_site(store: Store, splitter: JapaneseSplitter | None = None, names: dict[str, Any] | None = None
                ) -> SiteData:
    """``splitter``: the command's (one is made when None); ``names``: the previous build's
    :attr:`~kb.site.records.SiteData.names_record` (its name table is taken as it is when made from the same inputs:
    :func:`_names`)."""
    from kb.search import userdict  # on first use: a build with nothing to do loads no search code

    with _collector_paused():
        return _gather(store, userdict.prepare(store, splitter or JapaneseSplitter()), names or {})


def gather_edited(store: Store, splitter: JapaneseSplitter | None, names: dict[str, Any],
                  edited: Collection[NodeKey], urls: Mapping[str, str]) -> SiteData:
    """The site of an edit build (:mod:`kb.site.edits`: only the unversioned nodes ``edited`` changed since the last
    build): as :func:`gather_site`, but of the unversioned nodes only the edited ones whole (the others' names alone:
    :attr:`~kb.site.records.SiteData.whole_node` reads one whole), what the edited ones give other pages found (their
    contributions), nothing linked yet (:func:`link_edited` links what the build shows again) and no archive.
    ``urls``: the previous build's page of each unversioned node id (the same nodes: none is made again)."""
    from kb.search import userdict

    with _collector_paused():
        return _gather(store, userdict.prepare(store, splitter or JapaneseSplitter()), names, (edited, urls))


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector off while the site is gathered: gathering makes a million objects (nodes, their
    metadata, links) that all live on and form no garbage cycle, and each collection pass walked those made so far
    again for nothing (some 0.1 s of a 1.35 s gather at 5,000 articles, with the thresholds of :mod:`kb.cli`). Back
    on after, as it was (a caller may have it off). A caller that keeps the objects alive out of collection
    (:func:`gc.freeze`: the builder, for the build) has the gathered ones kept out too: they live as long as the build,
    and the first collection after the gather scanned them all (a tenth of a gather at 5,000 articles)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count():
            gc.freeze()
        if was:
            gc.enable()


def _gather(store: Store, splitter: JapaneseSplitter, names: dict[str, Any],
            edit: tuple[Collection[NodeKey], Mapping[str, str]] | None = None) -> SiteData:
    # the static search and the 五十音 readings analyse with the store's user dictionary
    site = SiteData(splitter=splitter)
    # each language's consecutive version diffs (summaries, cached per version pair): read once, for the current
    # view's renumbering and the 更新履歴
    steps = {lang: consecutive_summaries(store, lang) for lang in ("en", "ja")}
    _choose_versions(store, site, steps["en"])
    shown = site.shown
    if site.primary_version:
        _gather_rules(store, site, shown)
        _gather_terms(store, site, shown)
    _gather_others(store, site, shown, edit)
    if edit is None:
        _link(store, site, shown)
        site.archives = _gather_archives(store, site)
    else:
        _link_edited(store, site, shown, edit[0])
    site.names, site.names_record, site.readings = _names(store, site, names)
    if any(diffs for _, diffs in steps.values()):  # else there is nothing to compare
        from kb.site.changes import gather_changes

        site.changes = gather_changes(steps, _languages(site))
    return site


def _names(store: Store, site: SiteData, previous: dict[str, Any]) -> tuple[NameTable, dict[str, Any], dict[str, str]]:
    """The store's name table (:func:`kb.search.names.name_table`), its record for the next build and the labels'
    readings known (:attr:`~kb.site.records.SiteData.readings`): the table of ``previous`` (a record of this) when it
    was made from the same inputs by the same splitter (its dictionary, the installed Sudachi) and code, the readings
    when split by the same splitter and code — most builds change no name, and splitting each was a part of every
    build that grew with the articles. The record is written by the builder after the pages
    (:func:`names_record`), with the readings they asked for."""
    from kb.search.index import installed_identity
    from kb.search.names import NAME_KINDS, NameTable, name_inputs, names_from

    splitter = site.splitter
    # the code and the installed Sudachi (installed_identity), and the user dictionary
    split = hashlib.sha256(marshal.dumps((splitter.dictionary_id, sorted(installed_identity().items())), 2)).hexdigest()
    # what the inputs (name_inputs) are made from, as digests SQLite makes: the names and English names of the kinds
    # they read, and the versioned nodes the rules' names and the glossary's readings come from (reading the names
    # themselves was most of _names at 20,000 articles)
    key = hashlib.sha256(marshal.dumps((split, store.name_digest("ja", NAME_KINDS), store.versioned_digest()),
                                       2)).hexdigest()
    readings: dict[str, str] = {}
    if previous.get("split") == split and isinstance(previous.get("readings"), dict):
        readings = previous["readings"]
    table = None
    if previous.get("key") == key:
        with suppress(TypeError, KeyError):  # else not a record this code wrote: made again
            table = NameTable(*previous["table"])
    if table is None:
        table = names_from(name_inputs(store), splitter)
    return table, {"format": MANIFEST_FORMAT, "key": key, "split": split,
                   "table": (table.english, table.readings, table.rules)}, readings


def names_record(site: SiteData) -> dict[str, Any]:
    """What the next build takes from this one's names (:func:`_names`): the table, what it was made from, and the
    readings the pages asked for (no label that is gone)."""
    return {**site.names_record, "readings": site.readings_asked}


def _choose_versions(store: Store, site: SiteData,
                     english_steps: tuple[list[VersionInfo], list[VersionDiff]]) -> None:
    view = site.view = current_view(store, english_steps)
    if view.shown is None:
        return
    site.primary_lang, site.primary_version = view.shown.lang, view.shown.version
    site.effective_date = view.shown.effective_date
    site.english_version = view.english.version if view.english else None
    if view.translation:
        site.translation_version, site.translation_date = view.translation.version, view.translation.effective_date
        site.translated_date = view.translation.translated_date
    versioned = store.versioned_documents()  # not the wiki's thousands
    docs = [d for d in versioned if d.version == view.shown.version and d.lang == view.shown.lang]
    site.cr_title = next((d.title for d in docs if d.title), None)
    site.sync_date = max((d.sync_date for d in versioned if d.version == site.translation_version and d.sync_date),
                         default=None)


def _languages(site: SiteData) -> list[tuple[str, str]]:
    """The (version, lang) pairs whose nodes the site shows: the shown English version and each translation used."""
    pairs = [(site.english_version, "en")] if site.english_version else []
    view = site.view
    pairs += sorted({(j.key.version, "ja") for j in view.ja.values()}, reverse=True) if view else []
    return pairs


def _shown_nodes(store: Store, site: SiteData, kinds: Iterable[str]) -> list[tuple[str, str, Node]]:
    """(shown node id, lang, node) for every node of ``kinds`` shown: the English version's in document order, then
    the Japanese texts paired with them (see :mod:`kb.versions.current`)."""
    out: list[tuple[str, str, Node]] = []
    if site.english_version:
        out += [(n.id, "en", n) for n in store.light_nodes(site.english_version, "en", kinds)]
    wanted: dict[str, dict[str, str]] = defaultdict(dict)  # ja version → ja id → shown id
    for shown_id, ja in (site.view.ja if site.view else {}).items():
        wanted[ja.key.version][ja.key.id] = shown_id
    for version, ids in sorted(wanted.items(), reverse=True):
        out += [(ids[n.id], "ja", n) for n in store.light_nodes(version, "ja", kinds) if n.id in ids]
    return out


def _gather_rules(store: Store, site: SiteData, shown: dict[NodeKey, Entry]) -> None:
    for shown_id, lang, node in _shown_nodes(store, site, RULE_KINDS):
        number = id_name(shown_id)
        entry = site.rules.get(number)
        if entry is None:
            entry = site.rules[number] = Entry(shown_id, node.kind, "", number, number=number)
        entry.nodes[lang] = node
        shown[NodeKey(node.version, lang, node.id)] = entry
    parsed = {number: rulenum.parse(number) for number in site.rules}

    def order(number: str) -> tuple[object, ...]:
        rule = parsed[number]
        return rule.sort_key() if rule else (99, number)

    site.rules = {number: site.rules[number] for number in sorted(site.rules, key=order)}
    ja = site.view.ja if site.view else {}
    for number, entry in site.rules.items():
        rule = parsed[number]
        entry.url = url_for(entry)
        entry.ja = ja.get(entry.id)
        node = entry.main_node()
        title = node.title or entry.nodes[next(iter(entry.nodes))].title
        if title:
            entry.label = f"{number}. {title}"
        parent = str(rule.parent) if rule and rule.parent else None
        if parent is not None and parent in site.rules:
            site.rules[parent].children.append(number)
        elif entry.kind == CHAPTER:
            site.chapters.append(number)


def _gather_terms(store: Store, site: SiteData, shown: dict[NodeKey, Entry]) -> None:
    """Glossary entries: the shown English entry with its Japanese text; the page is named by the Japanese term
    when there is one (``glossary/唱える.html``)."""
    by_shown: dict[str, Entry] = {}
    for shown_id, lang, node in sorted(_shown_nodes(store, site, [GLOSSARY]), key=lambda x: x[1] != "ja"):
        entry = by_shown.get(shown_id)
        if entry is None:
            entry = by_shown[shown_id] = Entry(node.id, GLOSSARY, page_for_id(node.id), node.title or id_name(node.id))
            entry.ja = site.view.ja.get(shown_id) if site.view else None
            site.terms[node.id] = entry
        entry.nodes[lang] = node
        shown[NodeKey(node.version, lang, node.id)] = entry


def _gather_others(store: Store, site: SiteData, shown: dict[NodeKey, Entry],
                   edit: tuple[Collection[NodeKey], Mapping[str, str]] | None = None) -> None:
    """Every unversioned node (wiki articles, release notes, cards…), in the store's order, without its HTML (most of
    a wiki page's size: read by the page that shows it, through ``site.html``). With ``edit`` (an edit build's
    edited nodes and the previous build's pages by id: :func:`gather_edited`), of the kinds but
    :data:`~kb.site.records.WHOLE_KINDS` only the nodes edited whole, the others' names alone (``site.whole_node``
    reads one whole)."""
    digests = {(lang, node_id): digest for lang, node_id, digest in store.version_hashes(UNVERSIONED)}
    edited, urls = edit if edit is not None else (None, {})
    whole = {(key.lang, key.id): key for key in edited or ()}
    for lang in sorted({lang for lang, _ in digests}):
        nodes = store.light_nodes(UNVERSIONED, lang, None) if edited is None else [
            next(store.index_nodes(UNVERSIONED, lang, [whole[(lang, n.id)]]), n) if (lang, n.id) in whole else n
            for n in store.named_nodes(UNVERSIONED, lang, WHOLE_KINDS)]
        for node in nodes:
            entry = Entry(node.id, node.kind, urls.get(node.id) or page_for_id(node.id), node.title or id_name(node.id),
                          {node.lang: node})
            site.others[node.id] = entry
            shown[NodeKey(node.version, node.lang, node.id)] = entry

    def read(key: NodeKey) -> str | None:
        node = store.node(key)
        return node.html if node else None

    site.html = StoredHtml(digests, read)
    if edited is not None:
        site.edited = site.wholes = frozenset(key.id for key in edited)
        site.whole_node = lambda key: next(store.index_nodes(key.version, key.lang, [key]), None)


def _gather_archives(store: Store, site: SiteData) -> list[Archive]:
    current = (site.english_version, "en") if site.english_version else (site.primary_version, site.primary_lang)
    counts = store.node_counts()

    def nodes(version: str, lang: str) -> tuple[list[Node], list[Node]]:
        return store.light_nodes(version, lang, RULE_KINDS), store.light_nodes(version, lang, [GLOSSARY])

    return [Archive(v.version, v.lang, v.effective_date, bool(counts.get((v.version, v.lang), {}).get(GLOSSARY)),
                    version_digest(store, v.version, v.lang), partial(nodes, v.version, v.lang))
            for v in list_versions(store) if (v.version, v.lang) != current]


def _link(store: Store, site: SiteData, shown: dict[NodeKey, Entry]) -> None:
    """Turn every stored reference of a shown node into a :class:`Link`, and fill each entry's cited-by list
    (:class:`_Linker`); each unversioned node's contribution to other pages is kept in ``site.contributions``."""
    linker = _Linker(site, shown)
    shown_pairs = sorted({(key.version, key.lang) for key in shown if key.version != UNVERSIONED})
    for rank, (version, lang) in enumerate([(UNVERSIONED, None), *shown_pairs]):  # the store's order (version, lang,
        linker.link(version, store.ref_rows(version, lang), site.unresolved,  # node, seq)
                    site.contributions if version == UNVERSIONED else None, rank)
    linker.finish()
    for target in linker.targets.values():
        if target.cited:
            citations, mentions = linker.found_citations(target.entry)
            if target.entry.number is None:
                site.entry_citations[target.url] = citations, mentions
            else:
                site.rule_citations[target.url] = citations


def _link_edited(store: Store, site: SiteData, shown: dict[NodeKey, Entry], edited: Collection[NodeKey]) -> None:
    """What the edited nodes of an edit build (:func:`gather_edited`) give other pages: linked alone (no cited-by
    list is kept: :func:`link_edited` links the site's shown entries)."""
    given: dict[tuple[str, str], Contribution] = {}
    _Linker(site, shown).link(UNVERSIONED, store.ref_rows_of(UNVERSIONED, edited), [], given)
    site.contributions = {(key.lang, key.id): given.get((key.lang, key.id), NO_CONTRIBUTION) for key in edited}


def link_edited(store: Store, site: SiteData, shown_again: Collection[Entry],
                rule_citations: Mapping[str, list[Citation]], entry_citations: Mapping[str, EntryCitations]) -> None:
    """Link an edit build's site (:func:`gather_edited`): the edited entries and ``shown_again`` (the entries whose
    pages it makes again: :mod:`kb.site.edits`) as a full gather links them — their links, and who cites them, in
    the store's order — and every rule and term (the search's name shards read their links). The unversioned
    entries among them are read whole and linked; who cites them is the previous build's record with the edited
    nodes' citations in their places — a rule's (``rule_citations``, by URL), any other entry's with a card's
    mentions (``entry_citations``): a section page lists every article citing one of its rules, an article's page
    every article citing it, a card's the sentence of every node mentioning it, which had to be read, thousands for
    a much cited one. ``site.rule_citations`` and ``site.entry_citations`` hold those of the entries shown again."""
    cited = list({id(entry): entry for entry in [*shown_again, *(site.others[i] for i in sorted(site.edited))]}.values())
    wanted = {id(entry) for entry in cited}
    own = {key for key, entry in site.shown.items() if id(entry) in wanted and key.version == UNVERSIONED}
    read_whole = site.whole_node
    assert read_whole is not None  # an edit build's site (gather_edited)
    for key in {key for key in own if key.id not in site.edited}:
        entry = site.others.get(key.id)
        node = read_whole(key)
        if entry is not None and node is not None and key.lang in entry.nodes:
            entry.nodes[key.lang] = node
    site.wholes = site.wholes | {key.id for key in own}
    linker = _Linker(site, site.shown)
    linker.link(UNVERSIONED, store.ref_rows_of(UNVERSIONED, own), [])
    for rank, (version, lang) in enumerate(sorted({(key.version, key.lang) for key in site.shown
                                                    if key.version != UNVERSIONED}), 1):
        linker.link(version, store.ref_rows(version, lang), [], None, rank)
    linker.finish()
    edited_urls = {site.others[node_id].url for node_id in site.edited}
    site.rule_citations, site.entry_citations = {}, {}
    for entry in cited:  # the previous build's, but of the nodes this link found citing it (the edited ones, those
        # shown again, the versioned ones) theirs now; the mentions alike, but of the nodes read whole alone
        found, said = linker.found_citations(entry)
        old_citations, old_mentions = (rule_citations.get(entry.url, []), []) if entry.number \
            else entry_citations.get(entry.url, ([], []))
        gone = edited_urls | {url for _, url, _ in found}
        citations = sorted([*(c for c in old_citations if c[1] not in gone), *found])
        gone = edited_urls | {mention["url"] for _, mention in said}
        mentions = sorted([*((place, m) for place, m in old_mentions if m["url"] not in gone), *said], key=_PLACE)
        if entry.number:
            site.rule_citations[entry.url] = citations
        else:
            site.entry_citations[entry.url] = citations, mentions
            entry.mentions = _distinct([mention for _, mention in mentions])
        entry.cited_by = [(url, label) for _, url, label in citations]


class _Linker:
    """Links: the references of one span of a node (rows of :meth:`kb.store.Store.ref_rows`, in order) make one link:
    the first that names an entry of the site is its link (and cites that entry); none, the span is an outside or
    unresolved link. One loop over the rows, with no call per reference where the target is a shown node: tens of
    thousands of references per build; what a link needs of its target (URL, citations, mentions) is looked up once
    per entry (:class:`_Target`), and a span is decided on its first row when that names a shown node (most do).
    Sources are linked in the store's order (:meth:`link`, a version at a time): each cited-by list is in the order
    of its citations; :meth:`finish` puts the lists in the entries."""

    def __init__(self, site: SiteData, shown: dict[NodeKey, Entry]):
        self.site = site
        self.glossary: dict[str, Entry] = {}  # a shown glossary entry by its casefolded title or English name (what
        # a term resolved into a version the site does not show is looked up by: _target_entry)
        for entry in [*site.terms.values(), *site.others.values()]:
            if entry.kind == GLOSSARY:
                for node in entry.nodes.values():
                    for name in (node.title, node.english):
                        if name:
                            self.glossary.setdefault(name.casefold(), entry)
        self.targets: dict[int, _Target] = {}  # id(entry) → its target record, made when it is first linked to
        self.by_key = {(key.version, key.lang, key.id): entry for key, entry in shown.items()}  # plain tuples hash fast
        self.outside_urls: dict[str, str] = {}  # wiki title → its MTG Wiki URL (a title is linked from many articles)

    def target_of(self, entry: Entry) -> _Target:
        found = self.targets.get(id(entry))
        if found is None:
            found = self.targets[id(entry)] = _Target(entry, entry.url, entry.kind == CARD, {}, [], [])
        return found

    def link(self, version: str, ref_rows: list[tuple[Any, ...]], unresolved: list[str],
             contributions: dict[tuple[str, str], Contribution] | None = None, rank: int = 0) -> None:
        """Link the sources of ``ref_rows`` (of ``version``, one source node after another; ``rank``: the version's
        place in the store's order, 0 for the unversioned nodes); each source's lines for ``unresolved``; with
        ``contributions``, what each source gives other pages (:data:`~kb.site.records.Contribution`) under its
        (lang, id)."""
        site, by_key, glossary, targets, target_of = self.site, self.by_key, self.glossary, self.targets, self.target_of
        outside_urls = self.outside_urls
        # rows (lang, node id, kind, target, start, end, resolved version, lang, id), one source node after another
        for (s_lang, node_id), rows in groupby(ref_rows, key=_SOURCE):
            source = by_key.get((version, s_lang, node_id))
            if source is None:
                continue
            source_url, source_label = source.url, source.label
            mentions = site.is_whole(source)  # (an edit build's unedited articles have no text to cut them from)
            spans: dict[tuple[int, int], list[Any]] = {}  # (start, end) → its first row's kind and target, the entry found
            for _, _, kind, name, start, end, r_version, r_lang, r_id in rows:
                span = spans.get((start, end))
                if span is not None and span[2] is not None:
                    continue  # the span's link is found: the later references of it are not looked at
                found = by_key.get((r_version, r_lang, r_id))
                if found is None and (r_id is not None or kind in _RULE_REFS):
                    found = _target_entry(site, glossary, kind, name, r_id, version)
                target = None if found is None else targets.get(id(found)) or target_of(found)
                if span is None:
                    spans[(start, end)] = [kind, name, target]
                elif target is not None:
                    span[2] = target
            links: list[Link] = []
            cites: list[tuple[str, tuple[str, str, str] | None]] = []  # what it gives other pages: the entries it
            lines: list[str] = []  # cites, a mention of a card with each, and its unresolved references
            for (start, end), (ref_kind, name, target) in spans.items():
                if target is None:
                    if ref_kind not in REFS_OUTSIDE_SITE:
                        line = f"{source_label} [{s_lang}] refers to {ref_kind} {name}"
                        unresolved.append(line)
                        lines.append(line)
                    if start < 0 or ref_kind == REF_TERM:  # an unknown term is just a word
                        continue
                    outside = None
                    if ref_kind in _WIKI_REFS:
                        outside = outside_urls.get(name)
                        if outside is None:
                            outside = outside_urls[name] = MTGWIKI + quote(name.replace(" ", "_"), safe="/:()")
                    links.append(Link(start, end, outside, ref_kind))
                    continue
                if target.entry is not source:
                    cited = target.cited
                    if source_url not in cited:
                        cited[source_url] = source_label
                        target.places.append((rank, s_lang, node_id))
                    said = None  # what other pages show of the mention (its place is the source's)
                    if start >= 0 and target.card and mentions:
                        mention = _mention(source, s_lang, start, end)
                        target.mentions.append(((rank, s_lang, node_id), mention))
                        said = (mention["before"], mention["name"], mention["after"])
                    cites.append((target.url, said))
                if start >= 0:  # terms found in the text look like parsed ones
                    links.append(Link(start, end, target.url, REF_TERM if ref_kind == REF_AUTO_TERM else ref_kind))
            if links:  # by start, a longer span first (two stable sorts, keyed in C)
                links.sort(key=_END, reverse=True)
                links.sort(key=_START)
                source.links[s_lang] = links
            if contributions is not None and (cites or lines):
                contributions[(s_lang, node_id)] = (tuple(cites), hashlib.sha1(marshal.dumps(lines, 2)).digest())

    def found_citations(self, entry: Entry) -> EntryCitations:
        """Who this link found citing ``entry`` and its mentions, each with its citing node's place."""
        target = self.targets.get(id(entry))
        if target is None:
            return [], []
        return [(place, url, label) for place, (url, label) in zip(target.places, target.cited.items(), strict=True)], \
            list(target.mentions)

    def finish(self) -> None:
        """Put each cited entry's citations and mentions in it."""
        for target in self.targets.values():
            entry = target.entry
            if target.cited:
                entry.cited_by = list(target.cited.items())
            if target.mentions:
                entry.mentions = _distinct([mention for _, mention in target.mentions])


def _distinct(mentions: list[Mention]) -> list[Mention]:
    """Each mention once (the same sentence of the same page), where it first came."""
    return list({(m["url"], m["before"], m["name"], m["after"]): m for m in mentions}.values())


class _Target(NamedTuple):
    """What a link to an entry needs, looked up once per entry (:func:`_link`): the entry, its URL, whether it is a
    card (cited sentences are kept), and the citations and mentions gathered for it."""

    entry: Entry
    url: str
    card: bool
    cited: dict[str, str]  # citing page's URL → its label, in order
    mentions: list[tuple[tuple[int, str, str], Mention]]  # each with its citing node's place in the store's order
    places: list[tuple[int, str, str]]  # the place in the store's order of each citation's first citing node


_SOURCE, _START, _END = itemgetter(0, 1), itemgetter(0), itemgetter(1)
_PLACE = itemgetter(0)
_RULE_REFS, _WIKI_REFS = frozenset((REF_RULE, REF_SECTION)), frozenset((REF_WIKI, REF_REDLINK))


SENTENCE_ENDS = "。！？\n"
_SENTENCE_END = re.compile(f"[{SENTENCE_ENDS}]")
MENTION_CONTEXT = 90  # characters on each side of a mention at most


def _mention(source: Entry, lang: str, start: int, end: int) -> Mention:
    """The sentence of ``source`` around the reference at ``start:end`` (cut at ``MENTION_CONTEXT`` characters)."""
    text = source.text(lang)
    # a sentence end further than MENTION_CONTEXT makes no difference: looked for only within it (texts are long;
    # tens of thousands of mentions at 5,000 articles)
    low = max(0, start - MENTION_CONTEXT - 1)
    left = max(map(text.rfind, SENTENCE_ENDS, repeat(low), repeat(start))) + 1  # the last sentence end before it
    found = _SENTENCE_END.search(text, end, end + MENTION_CONTEXT + 1)
    right = found.start() if found else len(text)
    right += right < len(text) and text[right] != "\n"
    left = max(left, start - MENTION_CONTEXT)
    right = min(right, end + MENTION_CONTEXT)
    before, after = text[left:start].lstrip("•- ").strip(), text[end:right].rstrip()
    cut_before = left > 0 and text[left - 1] not in SENTENCE_ENDS
    cut_after = right < len(text) and text[right - 1] not in SENTENCE_ENDS
    return {"url": source.url, "label": source.label, "before": ("…" if cut_before else "") + before,
            "name": text[start:end], "after": after + ("…" if cut_after else "")}


def _target_entry(site: SiteData, glossary: dict[str, Entry], kind: str, target: str, key: str | None,
                  source_version: str) -> Entry | None:
    """The entry a reference (of :meth:`kb.store.Store.ref_rows`: its kind and target, resolved to the node id ``key``
    the site does not show, or to none) of a node of ``source_version`` points at. A rule cited by an older
    translation is the rule its number meant then."""
    if kind in _RULE_REFS:
        number = id_name(key) if key is not None else target
        renumbered = site.view.renumbered if site.view else {}
        if (source_version, rule_id(number)) in renumbered:
            now = renumbered[(source_version, rule_id(number))]
            return site.rules.get(id_name(now)) if now else None
        return site.rules.get(number)
    if key is not None and is_glossary_id(key):  # resolved into a version the site does not show: by name
        return glossary.get(id_name(key).casefold())
    return None
