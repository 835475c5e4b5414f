"""Resolve references across everything in the store, after all sources are in (gather, then resolve).

Each reference kind has a resolver in :data:`RESOLVERS` taking the :class:`LinkIndex`, the citing node's key
and the reference, returning the key of the node it names or None. Unresolved references are kept in the
store (resolved columns NULL) and reported with their location, never dropped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterable

from kb.ids import id_name, is_glossary_id, is_rule_id, rule_id, split_id
from kb.link import graph, termlinks
from kb.link.index import LinkIndex, LinkReport, key_order
from kb.model import (
    ARTICLE,
    CARD,
    REF_AUTO_TERM,
    REF_CARD,
    REF_MECHANIC,
    REF_RULE,
    REF_SECTION,
    REF_TERM,
    REF_TERM_ARTICLE,
    REFS_OUTSIDE_KB,
    UNVERSIONED,
    Diagnostic,
    Ref,
)
from kb.splitter import JapaneseSplitter
from kb.store import NodeKey, Store, StoredRef


def resolve_rule(index: LinkIndex, source: NodeKey, ref: Ref) -> NodeKey | None:
    for version, lang in index.cr_version_for(source, ref):
        key = NodeKey(version, lang, rule_id(ref.target))
        if index.has(key):
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
                                  REF_AUTO_TERM: resolve_term,  # terms found in rule text: kb/link/termlinks.py
                                  **graph.RESOLVERS}  # wiki, card, mechanic, term-article: kb/link/graph.py
INTO_VERSIONS = (REF_RULE, REF_SECTION, REF_TERM, REF_AUTO_TERM, REF_MECHANIC)  # may name a CR node


def link(store: Store, scopes: Collection[tuple[str, str]] | None = None,
         nodes: Collection[NodeKey] | None = None, *, splitter: JapaneseSplitter | None = None,
         watched: graph.WatchedNodes | None = None) -> LinkReport:
    """Resolve the stored references and write the results. Call inside the ingest's transaction.

    With ``scopes`` — the (version, lang) pairs of the CR versions whose documents changed, never an unversioned
    one — only what those changes can affect is linked again: the term links and references of those versions'
    nodes, and the references of the unversioned nodes (wiki articles, release notes) of the kinds that can point into
    a version (:data:`INTO_VERSIONS`: the newest, or the one they cite; their links to articles and cards stay); the
    lookup tables hold only the versions these can reach.
    A versioned node's references resolve inside its own version, so every other version keeps its links, and the
    cost of linking a version does not grow with the number stored. The report is then read back from the store.

    ``nodes`` narrows it further: the nodes of those versions that were added, changed or removed
    (what :meth:`kb.store.Store.put_document` returned; the others kept their rows and links). Unless a glossary entry is among
    them (the version's term links then all change), only these nodes get term links and have their references
    resolved, with the rule references of the version that name one of them (an added or removed number).
    Without ``scopes`` (an unversioned source changed: card entities, articles and terms of every version meet
    there) but with ``nodes`` all unversioned (wiki articles, release notes: only they changed), the card entities
    are rebuilt (unless ``watched``, which watched every document stored, says no card reference changed) and what
    those nodes reach is linked again (:func:`kb.link.graph.relink_names`: their references, and of those whose
    names ``watched`` saw change the references into them and to the names they have, and the derived references
    beside those); the nodes and
    titles those references name are read by key (:class:`~kb.link.index.LinkIndex` ``by_key``; a name table only
    when a name is no title), so the cost is mostly that of what changed, not of the corpus. Otherwise everything is
    linked again.

    Memory: versions are linked one at a time (their tables, term links and references; then those of the next),
    so a link holds one version's references, not every version's."""
    if scopes is None and nodes is not None and all(key.version == UNVERSIONED for key in nodes):
        return _link_unversioned(store, set(nodes), watched)
    stored = store.document_scopes()  # by version and language, read by SQLite (not every wiki article's document)
    langs = {lang for _, lang in stored}
    unversioned = {(UNVERSIONED, lang) for lang in langs}
    if scopes is None:
        graph.prepare(store)  # card entities from all card references; drop derived references
        report = LinkReport()
        index = LinkIndex(store)  # the unversioned nodes' references (into any version) first, as the store orders them
        for _, lang in sorted(unversioned):
            _resolve_and_derive(store, index, store.refs(UNVERSIONED, lang), report)
        for scope in [scope for scope in stored if scope[0] != UNVERSIONED]:
            index = LinkIndex(store, {scope} | unversioned)  # one version at a time: its references resolve inside it
            termlinks.link_terms(store, index, [scope], splitter=splitter)  # glossary terms in CR text, recomputed
            _resolve_and_derive(store, index, store.refs(*scope), report)
        return report
    scopes = set(scopes)
    touched = None if nodes is None else {key for key in nodes if (key.version, key.lang) in scopes}
    if touched is not None and any(is_glossary_id(key.id) for key in touched):
        touched = None  # a glossary entry changed: every node of its version may link other terms now
    store.delete_refs(graph.DERIVED_KINDS, unversioned if touched is not None else scopes | unversioned)
    report = LinkReport()  # read back from the store at the end
    for scope in sorted(scopes):  # one version at a time: its term links and references depend on it alone
        index = LinkIndex(store, {scope} | unversioned)
        mine = None if touched is None else {k for k in touched if (k.version, k.lang) == scope}
        termlinks.link_terms(store, index, [scope], mine, splitter=splitter)
        if mine is None:
            changed: Iterable[StoredRef] = store.refs(*scope)
        else:  # the rewritten nodes' references, and the rule references naming a rewritten node
            numbers = [id_name(key.id) for key in mine if is_rule_id(key.id)]
            changed = [*(sr for key in sorted(mine, key=key_order) for sr in store.refs_from(key)),
                       *(sr for sr in store.rule_refs_naming(*scope, numbers) if sr.source_key not in mine)]
        _resolve_and_derive(store, index, changed, report)
    loose = [sr for _, lang in sorted(unversioned) for sr in store.refs(UNVERSIONED, lang, INTO_VERSIONS)]
    reached = {(versions[0], lang) for lang in langs if (versions := store.versions(lang))}
    reached |= {(sr.ref.version, lang) for sr in loose if sr.ref.version for lang in langs}
    _resolve_and_derive(store, LinkIndex(store, scopes | unversioned | reached), loose, report)
    return stored_report(store)


def _resolve_and_derive(store: Store, index: LinkIndex, refs: Iterable[StoredRef], report: LinkReport) -> None:
    """Resolve ``refs`` (:func:`_resolve`) and derive the term-article references beside them
    (:func:`kb.link.graph.derive_links`), adding to ``report``."""
    part, resolved = _resolve(store, index, refs)
    graph.derive_links(store, index, part, resolved)
    report.resolved.update(part.resolved)
    report.unresolved.update(part.unresolved)
    report.diagnostics += part.diagnostics


def _link_unversioned(store: Store, touched: set[NodeKey], watched: graph.WatchedNodes | None) -> LinkReport:
    """:func:`link` after an ingest that changed the unversioned nodes ``touched`` only."""
    if watched is None or watched.cards_changed(store):  # with the card entities that changed with the card references
        touched |= store.put_document(graph.card_entities(store.ref_target_counts(REF_CARD))).rewritten
    refs, derive = graph.relink_names(store, touched, None if watched is None else watched.renamed(store, touched))
    store.delete_refs_of(graph.DERIVED_KINDS, derive)
    index = LinkIndex(store, by_key=True)  # what those few references name, read as they ask
    for kind in (ARTICLE, CARD):  # the titles they may name: read at once
        index.expect_titles(kind, {sr.ref.target.split("#", 1)[0] for sr in refs
                                   if sr.ref.kind in graph.NAMED_REF_KINDS + (REF_TERM_ARTICLE,)})
    report, _ = _resolve(store, index, refs)
    graph.derive_links(store, index, report, [sr for key in sorted(derive, key=key_order) for sr in store.refs_from(key)])
    return stored_report(store)


def _resolve(store: Store, index: LinkIndex, refs: Iterable[StoredRef]) -> tuple[LinkReport, list[StoredRef]]:
    """Resolve ``refs`` and write where each went; the report, and those resolved to a glossary entry by a term
    reference (what :func:`kb.link.graph.derive_links` derives from) with their new targets."""
    report = LinkReport()
    resolutions, resolved = [], []
    for stored in refs:
        ref = stored.ref
        if ref.kind in REFS_OUTSIDE_KB:
            continue
        resolver = RESOLVERS.get(ref.kind)
        target = resolver(index, stored.source_key, ref) if resolver else None
        resolutions.append((stored.source_key, stored.seq, target))
        if target and ref.kind in graph.TERM_REF_KINDS and is_glossary_id(target.id):  # all derive_links reads
            resolved.append(StoredRef(stored.source_key, stored.seq, ref, target))
        if target:
            report.resolved[ref.kind] += 1
        else:
            report.unresolved[ref.kind] += 1
            report.diagnostics.append(_unresolved(index, stored.source_key, ref))
    store.set_resolutions(resolutions)
    return report, resolved


def stored_report(store: Store) -> LinkReport:
    """The report :func:`link` gave for the store as it is, read back without linking again (for an ingest that
    changed nothing)."""
    report = LinkReport()
    unresolved = store.unresolved_refs(skip=sorted(REFS_OUTSIDE_KB))
    missed = Counter(kind for _, kind, _, _ in unresolved)
    for kind, count in store.ref_counts():
        if kind not in REFS_OUTSIDE_KB:
            report.unresolved.update({kind: missed[kind]} if missed[kind] else {})
            report.resolved.update({kind: count - missed[kind]} if count > missed[kind] else {})
    for key, kind, target, source in unresolved:
        report.diagnostics.append(_unresolved_at(source, key, kind, target))
    return report


def _unresolved(index: LinkIndex, source: NodeKey, ref: Ref) -> Diagnostic:
    return _unresolved_at(index.source(source), source, ref.kind, ref.target)


def _unresolved_at(path: str, source: NodeKey, kind: str, target: str) -> Diagnostic:
    prefix, name = split_id(source.id)
    label = {"cr": "rule", "gl": "glossary entry", "wiki": "article", "note": "release note"}.get(prefix, "node")
    what = {REF_RULE: "rule ", REF_SECTION: "section "}.get(kind, f"{kind} ")
    version = f" [{source.version} {source.lang}]" if source.version else ""
    return Diagnostic(path, "", f"{label} {name}{version} refers to {what}{target}, which does not exist")
