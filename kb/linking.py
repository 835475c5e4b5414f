"""Resolve references across everything in the store, after all sources are in (gather, then resolve).

Each reference kind has a resolver in :data:`RESOLVERS` taking the :class:`LinkIndex`, the citing node's key
and the reference, returning the key of the node it names or None. Unresolved references are kept in the
store (resolved columns NULL) and reported with their location, never dropped.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from kb import graph, termlinks
from kb.model import GLOSSARY, REF_RULE, REF_SECTION, REF_TERM, UNVERSIONED, Diagnostic, Ref
from kb.store import NodeKey, Store

_OKURIGANA = re.compile(r"^[ぁ-ゖー]{0,3}$")


@dataclass
class LinkIndex:
    """Lookup tables over every node in the store."""

    keys: set[NodeKey] = field(default_factory=set)
    kinds: dict[NodeKey, str] = field(default_factory=dict)
    titles: dict[NodeKey, str | None] = field(default_factory=dict)
    sources: dict[NodeKey, str] = field(default_factory=dict)
    glossary_names: dict[tuple[str, str], dict[str, str]] = field(default_factory=lambda: defaultdict(dict))
    versions: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))  # lang → CR versions, newest first
    by_kind_title: dict[tuple[str, str], list[NodeKey]] = field(default_factory=lambda: defaultdict(list))
    names_by_kind: dict[str, dict[str, NodeKey]] = field(default_factory=lambda: defaultdict(dict))  # articles, cards

    @classmethod
    def build(cls, store: Store) -> LinkIndex:
        index = cls()
        for doc in store.documents():
            if doc.version != UNVERSIONED and doc.version not in index.versions[doc.lang]:
                index.versions[doc.lang].append(doc.version)
        for versions in index.versions.values():
            versions.sort(reverse=True)
        doc_sources = {d.id: d.source for d in store.documents()}
        for version, lang, id_, kind, title, aliases, english, doc_id in store.db.execute(
                "SELECT version, lang, id, kind, title, aliases, english, doc_id FROM nodes"):
            key = NodeKey(version, lang, id_)
            index.keys.add(key)
            index.kinds[key] = kind
            index.titles[key] = title
            index.sources[key] = doc_sources.get(doc_id, "")
            if title:
                index.by_kind_title[(kind, title)].append(key)
            if kind in graph.NAMED_KINDS:  # title, English name and aliases (redirects, other spellings)
                for name in [title, english, *json.loads(aliases)]:
                    if name:
                        index.names_by_kind[kind].setdefault(_fold(name), key)
            if kind == GLOSSARY:
                names = index.glossary_names[(version, lang)]
                for name in [title, english, *json.loads(aliases)]:
                    if name:
                        names.setdefault(_fold(name), id_)
        return index

    def cr_version_for(self, source: NodeKey, ref: Ref) -> list[tuple[str, str]]:
        """Candidate (version, lang) pairs a rule/term reference from ``source`` should look in, best first."""
        if source.version != UNVERSIONED:
            return [(source.version, source.lang)]
        candidates = []
        if ref.version:
            candidates += [(ref.version, lang) for lang in (source.lang, "ja", "en") if ref.version in self.versions.get(lang, ())]
        for lang in dict.fromkeys((source.lang, "ja", "en")):
            if self.versions.get(lang):
                candidates.append((self.versions[lang][0], lang))
        return candidates

    def find_glossary(self, version: str, lang: str, name: str) -> str | None:
        names = self.glossary_names.get((version, lang), {})
        folded = _fold(name)
        if folded in names:
            return names[folded]
        # a stem link ('唱え' + 'る', '戦場に出' + 'す') names the term that adds only okurigana to it
        stems = [(len(n), i) for n, i in names.items() if n.startswith(folded) and _OKURIGANA.match(n[len(folded):])]
        return min(stems)[1] if stems and len(folded) >= 1 else None


def _fold(name: str) -> str:
    return name.strip().casefold()


def resolve_rule(index: LinkIndex, source: NodeKey, ref: Ref) -> NodeKey | None:
    for version, lang in index.cr_version_for(source, ref):
        key = NodeKey(version, lang, f"cr:{ref.target}")
        if key in index.keys:
            return key
    return None


def resolve_term(index: LinkIndex, source: NodeKey, ref: Ref) -> NodeKey | None:
    for version, lang in index.cr_version_for(source, ref):
        found = index.find_glossary(version, lang, ref.target)
        if found:
            return NodeKey(version, lang, found)
    return None


Resolver = Callable[[LinkIndex, NodeKey, Ref], "NodeKey | None"]
RESOLVERS: dict[str, Resolver] = {REF_RULE: resolve_rule, REF_SECTION: resolve_rule, REF_TERM: resolve_term,
                                  termlinks.REF_AUTO_TERM: resolve_term,  # terms found in rule text: kb/termlinks.py
                                  **graph.RESOLVERS}  # wiki, card, mechanic, term-article: kb/graph.py
# Kinds whose targets are outside the knowledge base by nature: never reported as unresolved.
OUTSIDE_KINDS = {"external", "redlink", "category"}


@dataclass
class LinkReport:
    resolved: Counter = field(default_factory=Counter)  # by reference kind
    unresolved: Counter = field(default_factory=Counter)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def total_resolved(self) -> int:
        return sum(self.resolved.values())

    @property
    def total_unresolved(self) -> int:
        return sum(self.unresolved.values())


def link(store: Store) -> LinkReport:
    """Resolve every stored reference and write the results. Call inside the ingest's transaction."""
    graph.prepare(store)  # card entities from all card references; drop derived references
    index = LinkIndex.build(store)
    termlinks.link_terms(store, index)  # glossary terms found in CR text, recomputed on every link
    report = LinkReport()
    resolutions = []
    for stored in list(store.refs()):
        ref = stored.ref
        if ref.kind in OUTSIDE_KINDS:
            continue
        resolver = RESOLVERS.get(ref.kind)
        target = resolver(index, stored.source_key, ref) if resolver else None
        resolutions.append((stored.source_key, stored.seq, target))
        if target:
            report.resolved[ref.kind] += 1
        else:
            report.unresolved[ref.kind] += 1
            report.diagnostics.append(_unresolved(index, stored.source_key, ref))
    store.set_resolutions(resolutions)
    graph.derive_links(store, index, report)  # glossary-term links also to the article of that term
    return report


def stored_report(store: Store) -> LinkReport:
    """The report :func:`link` gave for the store as it is, read back without linking again (for an ingest that
    changed nothing)."""
    report = LinkReport()
    for kind, resolved, count in store.db.execute(
            "SELECT kind, resolved_id IS NOT NULL, count(*) FROM refs GROUP BY kind, resolved_id IS NOT NULL"):
        if kind not in OUTSIDE_KINDS:
            (report.resolved if resolved else report.unresolved)[kind] += count
    rows = store.db.execute(
        "SELECT r.version, r.lang, r.node_id, r.kind, r.target, d.source FROM refs r"
        " JOIN nodes n ON n.version=r.version AND n.lang=r.lang AND n.id=r.node_id JOIN documents d ON d.id=n.doc_id"
        " WHERE r.resolved_id IS NULL ORDER BY r.version, r.lang, r.node_id, r.seq")
    for version, lang, node_id, kind, target, source in rows:
        if kind not in OUTSIDE_KINDS:
            report.diagnostics.append(_unresolved_at(source, NodeKey(version, lang, node_id), kind, target))
    return report


def _unresolved(index: LinkIndex, source: NodeKey, ref: Ref) -> Diagnostic:
    return _unresolved_at(index.sources.get(source, ""), source, ref.kind, ref.target)


def _unresolved_at(path: str, source: NodeKey, kind: str, target: str) -> Diagnostic:
    name = source.id.split(":", 1)[1]
    label = {"cr": "rule", "gl": "glossary entry", "wiki": "article", "note": "release note"}.get(source.id.split(":")[0], "node")
    what = {REF_RULE: "rule ", REF_SECTION: "section "}.get(kind, f"{kind} ")
    version = f" [{source.version} {source.lang}]" if source.version else ""
    return Diagnostic(path, "", f"{label} {name}{version} refers to {what}{target}, which does not exist")
