"""The cross-source graph: rules ↔ glossary ↔ MTG Wiki articles ↔ release notes ↔ cards.

Hooked into :func:`kb.link.resolve.link`, which runs after all sources are in:

1. :func:`prepare` (before resolving) rebuilds the **card entities** from every ``card`` reference in the
   store: one node ``card:<English name>`` (``card:<日本語名>`` when no source gives the English name) with
   ``title`` = Japanese name, ``english`` = English name, other spellings in ``aliases``. They live in one
   synthetic document, source :data:`CARDS_SOURCE`, kind ``cards``, version UNVERSIONED. It also deletes the
   derived references of the previous run (step 3 makes them again).
2. The resolvers in :data:`RESOLVERS` (registered in ``kb.link.resolve.RESOLVERS``): ``wiki`` → the article with that
   title, redirect alias or English name (the ``#fragment`` is kept in the target, ignored for the lookup);
   ``card`` → the card entity; ``mechanic`` → the glossary entry (newest Japanese CR first; ``パーティ`` and
   ``パーティー`` are the same word), else the article; ``term-article`` → the article.
3. :func:`derive_links` (after resolving): every ``term`` or ``mechanic`` reference that resolved to a glossary
   entry whose term also has an MTG Wiki article (by title, or by English name across languages) gets a
   second, **derived** reference of kind :data:`REF_TERM_ARTICLE` on the same citing node, same surface text
   and offsets, target = the article title, resolved to the article. So the article's ``cited_by`` lists the
   rules and notes that use its term (``kb links 唱える``), and the rule lists the article among what it
   refers to. Derived references are rebuilt on every link, never parsed from a source.

Rule references from the wiki (``CR:601.2f``, quoted blocks with a version) need nothing here: the core
resolver takes the cited version when it is present, else the newest.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Iterable

from kb.ids import card_id, id_name, is_glossary_id
from kb.link.index import NAMED_KINDS, LinkIndex, LinkReport, fold, key_order, loose_fold
from kb.model import (
    ARTICLE,
    CARD,
    GLOSSARY,
    REF_AUTO_TERM,
    REF_CARD,
    REF_MECHANIC,
    REF_TERM,
    REF_TERM_ARTICLE,
    REF_WIKI,
    UNVERSIONED,
    Document,
    Node,
    Ref,
)
from kb.store import NodeKey, Store, StoredRef

DERIVED_KINDS = (REF_TERM_ARTICLE,)  # the derived kind this module makes (REF_AUTO_TERM: kb/link/termlinks.py)
NAMED_REF_KINDS = (REF_WIKI, REF_CARD, REF_MECHANIC)  # the reference kinds resolved by an article's or card's name
TERM_REF_KINDS = (REF_TERM, REF_AUTO_TERM, REF_MECHANIC)  # those derive_links gives a term-article reference beside
CARDS_SOURCE = "kb:cards"
CARD_LANG = "ja"


# -- 1. before resolving ---------------------------------------------------------------------------------


def prepare(store: Store) -> None:
    """Drop last run's derived references and rebuild the card entities from all card references."""
    store.delete_refs(DERIVED_KINDS)
    store.put_document(card_entities(store.ref_target_counts(REF_CARD)))


def relink_names(store: Store, touched: set[NodeKey], renamed: set[NodeKey] | None = None
                 ) -> tuple[list[StoredRef], set[NodeKey]]:
    """What an incremental link of the unversioned nodes ``touched`` (added, changed or removed: articles, notes,
    card entities) must do: the references to resolve again — those of ``touched``, and of those ``renamed`` (whose
    names are not as before: :meth:`WatchedNodes.renamed`; all of ``touched`` when None) those that resolved into it
    and those whose target names a name it has now — and the nodes whose derived references to derive again — the
    citing nodes of those references, and those of the term references resolved to a glossary entry whose term or
    English name is a name a renamed node has now. A name it lost is found through the references that resolved to
    it. A reference resolves by the names of the nodes alone (:data:`RESOLVERS`), so those into a node whose names
    are as they were stay as they are: a prose edit of an article thousands cite costs its own references. Every
    lookup goes by key or by target (the distinct targets are read from the index on kind and target, not the
    references), so the cost is what the change reaches, plus one pass over the distinct names."""
    renamed = touched if renamed is None else renamed & touched
    names = _loose_names_of(store, renamed)
    refs = {(sr.source_key, sr.seq): sr for key in touched for sr in store.refs_from(key)}
    derive: set[NodeKey] = set()
    for key in renamed:
        for sr in store.cited_by(key):
            if sr.ref.kind in DERIVED_KINDS:
                derive.add(sr.source_key)
            else:
                refs[(sr.source_key, sr.seq)] = sr
    if names:
        targets = [t for t in store.ref_target_names(NAMED_REF_KINDS) if loose_fold(t.split("#", 1)[0]) in names]
        refs.update(((sr.source_key, sr.seq), sr) for sr in store.refs_targeting(NAMED_REF_KINDS, targets))
        for entry, _, title, _, english in store.name_rows(kinds=[GLOSSARY]):
            if loose_fold(title or id_name(entry.id)) in names or (english and loose_fold(english) in names):
                derive.update(sr.source_key for sr in store.cited_by(entry) if sr.ref.kind in TERM_REF_KINDS)
    derive.update(key for key, _ in refs)
    return sorted(refs.values(), key=lambda sr: (key_order(sr.source_key), sr.seq)), derive


def _loose_names_of(store: Store, keys: set[NodeKey]) -> set[str]:
    """The loose-folded titles, aliases and English names of the named nodes (articles, cards) among ``keys``."""
    return {loose_fold(name) for key, _, title, aliases, english in store.name_rows(kinds=NAMED_KINDS, nodes=keys)
            if key in keys for name in (title, english, *aliases) if name}


NameFacts = tuple[str, str | None, tuple[str, ...], str | None]  # a node's (kind, title, aliases, English name)


class WatchedNodes:
    """The nodes an ingest may rewrite, as they were before it: their card references and their names.
    :meth:`watch` each document before it is stored; then :meth:`cards_changed` tells whether the card entities —
    made from every card reference of the store, and so from these, the only ones the ingest can have changed — must
    be made again, and :meth:`renamed` which of the rewritten nodes have other names now (the references into the
    others resolve as they did: :func:`relink_names`). One ingest's."""

    def __init__(self) -> None:
        self._keys: set[NodeKey] = set()
        self._cards_before: Counter = Counter()
        self._names_before: dict[NodeKey, NameFacts] = {}

    def watch(self, store: Store, doc: Document) -> None:
        """Before ``doc`` is stored: note the card references and the names of the nodes it gives, or gave (not
        noted yet)."""
        keys = {NodeKey(doc.version, doc.lang, node.id) for node in doc.nodes}
        new = (keys | store.contributed_keys(doc.source, doc.version, doc.lang)) - self._keys
        self._keys |= new
        self._cards_before.update(store.ref_pairs_of(REF_CARD, new))
        self._names_before.update(_name_facts(store, new))

    def cards_changed(self, store: Store) -> bool:
        """Whether the card references of the watched nodes are other than before (as a multiset)."""
        return Counter(store.ref_pairs_of(REF_CARD, self._keys)) != self._cards_before

    def renamed(self, store: Store, keys: set[NodeKey]) -> set[NodeKey]:
        """Those of ``keys`` whose kind, title, aliases or English name are not as before, that are new or gone, or
        that were not watched."""
        now = _name_facts(store, keys & self._keys)
        return {key for key in keys if key not in self._keys or now.get(key) != self._names_before.get(key)}


def _name_facts(store: Store, keys: set[NodeKey]) -> dict[NodeKey, NameFacts]:
    return {key: (kind, title, aliases, english) for key, kind, title, aliases, english in store.name_rows(nodes=keys)
            if key in keys} if keys else {}


def card_entities(refs: Iterable[tuple[str, str, int]]) -> Document:
    """One card node per card named by the (target, surface text, how many references) of card references (each
    pair once: :meth:`kb.store.Store.ref_target_counts`)."""
    from ingest.wikititle import split_card_name

    names_of: dict[str, Counter] = defaultdict(Counter)  # English name → Japanese spellings (pairs count double)
    japanese_only: set[str] = set()
    english_of: dict[str, str] = {}
    for target, text, count in refs:
        pair = split_card_name(text or "")
        if target.isascii():
            japanese = pair[0] if pair else (text if text and not text.isascii() else None)
            names_of[target].update({japanese: (2 if pair else 1) * count} if japanese else {})
            if japanese:
                english_of.setdefault(japanese, target)
        else:
            japanese_only.add(target)
    nodes: list[Node] = []
    for english, spellings in sorted(names_of.items()):
        ranked = [name for name, _ in sorted(spellings.items(), key=lambda kv: (-kv[1], kv[0]))]
        nodes.append(Node(id=card_id(english), kind=CARD, lang=CARD_LANG, version=UNVERSIONED,
                          text=f"{ranked[0]}/{english}" if ranked else english, title=ranked[0] if ranked else english,
                          english=english, aliases=tuple(ranked[1:]), order=len(nodes)))
    for japanese in sorted(japanese_only - english_of.keys()):
        nodes.append(Node(id=card_id(japanese), kind=CARD, lang=CARD_LANG, version=UNVERSIONED, text=japanese,
                          title=japanese, order=len(nodes)))
    payload = json.dumps([[n.id, n.title, n.english, n.aliases] for n in nodes], ensure_ascii=False)
    return Document(source=CARDS_SOURCE, kind="cards", lang=CARD_LANG, nodes=tuple(nodes), version=UNVERSIONED,
                    content_hash=hashlib.sha256(payload.encode()).hexdigest(), title="Card entities")


# -- 2. resolvers ----------------------------------------------------------------------------------------


def find_named(index: LinkIndex, kind: str, name: str, *, loose: bool = False) -> NodeKey | None:
    """A node of ``kind`` by exact title, else by title/alias/English name ignoring case (and long vowels)."""
    exact = index.titled(kind, name)
    if exact:
        return exact[0]
    names = index.names(kind)
    if fold(name) in names:
        return names[fold(name)]
    return index.loose_names(kind).get(loose_fold(name)) if loose else None


def resolve_wiki(index: LinkIndex, source: NodeKey, ref: Ref) -> NodeKey | None:
    return find_named(index, ARTICLE, ref.target.split("#", 1)[0])


def resolve_card(index: LinkIndex, source: NodeKey, ref: Ref) -> NodeKey | None:
    key = NodeKey(UNVERSIONED, CARD_LANG, card_id(ref.target))
    return key if index.has(key) else find_named(index, CARD, ref.target)


def find_glossary_entry(index: LinkIndex, source: NodeKey, ref: Ref) -> NodeKey | None:
    for version, lang in index.cr_version_for(source, ref):
        found = index.find_glossary(version, lang, ref.target)
        if not found:
            found = index.loose_glossary_names(version, lang).get(loose_fold(ref.target))
        if found:
            return NodeKey(version, lang, found)
    return None


def resolve_mechanic(index: LinkIndex, source: NodeKey, ref: Ref) -> NodeKey | None:
    return find_glossary_entry(index, source, ref) or find_named(index, ARTICLE, ref.target, loose=True)


def resolve_term_article(index: LinkIndex, source: NodeKey, ref: Ref) -> NodeKey | None:
    return find_named(index, ARTICLE, ref.target, loose=True)


RESOLVERS = {REF_WIKI: resolve_wiki, REF_CARD: resolve_card, REF_MECHANIC: resolve_mechanic,
             REF_TERM_ARTICLE: resolve_term_article}


# -- 3. after resolving ----------------------------------------------------------------------------------


def derive_links(store: Store, index: LinkIndex, report: LinkReport, refs: list[StoredRef] | None = None) -> None:
    """Add a ``term-article`` reference beside each term/mechanic reference resolved to a glossary entry whose
    term has an article (see the module docstring); of ``refs`` only (as stored, resolved) when given, else of every
    stored reference. ``index`` must hold the glossary entries those references resolved to."""
    rows = []
    for sr in store.refs() if refs is None else refs:
        if sr.ref.kind not in TERM_REF_KINDS or sr.target_key is None or not is_glossary_id(sr.target_key.id):
            continue
        term = index.title(sr.target_key) or id_name(sr.target_key.id)
        article = find_named(index, ARTICLE, term, loose=True)
        english = index.english(sr.target_key) if index.kind(sr.target_key) == GLOSSARY else None
        if article is None and english:
            article = find_named(index, ARTICLE, english)
        if article is None or article == sr.source_key:
            continue
        title = index.title(article) or id_name(article.id)
        rows.append((sr.source_key, Ref(REF_TERM_ARTICLE, title, sr.ref.text, sr.ref.start, sr.ref.end), article))
        report.resolved[REF_TERM_ARTICLE] += 1
    store.add_refs(rows)
