"""Lookup tables over the stored nodes (:class:`LinkIndex`), the report of one link run (:class:`LinkReport`) and
the name folding every resolver shares. The lowest module of the link stage: resolvers, the graph and term links
all read it; it imports none of them.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TypeVar

from kb.fold import fold_name
from kb.model import ARTICLE, CARD, GLOSSARY, UNVERSIONED, Diagnostic, Ref
from kb.store import NodeKey, Scopes, Store

NameTarget = TypeVar("NameTarget", NodeKey, str)  # what a name table maps a name to: a node, or a glossary entry's id
NAMED_KINDS = (ARTICLE, CARD)  # kinds looked up by title, alias and English name (LinkIndex.names)
_FINAL_LONG_VOWEL = re.compile(r"(?<=[ァ-ヺ])ー$")


fold = fold_name  # the one fold (kb.fold), as names are looked up


def loose_fold(name: str) -> str:
    """:func:`fold`, also ignoring a word-final katakana long vowel (``パーティー`` = ``パーティ``)."""
    return _FINAL_LONG_VOWEL.sub("", fold(name))


_MAX_OKURIGANA = 3
_OKURIGANA = re.compile(rf"^[ぁ-ゖー]{{0,{_MAX_OKURIGANA}}}$")


def key_order(key: NodeKey) -> tuple[str, str, str]:
    """The sort key of a node key: version, language, id."""
    return (key.version, key.lang, key.id)


def _loosened(names: dict[str, NameTarget]) -> dict[str, NameTarget]:
    """A table of folded names keyed by their :func:`loose_fold` instead, the first of each loose name kept."""
    loose: dict[str, NameTarget] = {}
    for folded, value in names.items():
        loose.setdefault(loose_fold(folded), value)
    return loose


class LinkIndex:
    """Lookup tables over the stored nodes (of the (version, lang) ``scopes`` only, when given; the list of versions is
    always complete), each read from the store when a resolver first asks for it: linking a few references reads
    little more than they name. One link run's: the nodes must not change while it is used (references may)."""

    def __init__(self, store: Store, scopes: Scopes = None, *, by_key: bool = False):
        """``by_key``: for a few references (an incremental link) — each node, and each title looked up exactly,
        read from the store as asked (an indexed read, or one by SQLite), not a table of every node of its scope;
        a name table is still made the first time a name is not a title."""
        self._store = store
        self._scopes = None if scopes is None else frozenset(scopes)
        self._by_key = by_key
        self._keys: dict[NodeKey, tuple[str, str | None, str | None] | None] = {}
        self._titles: dict[tuple[str, str], list[NodeKey]] = {}
        self.versions: dict[str, list[str]] = defaultdict(list)  # lang → CR versions, newest first
        for version, lang in sorted(store.document_scopes(), reverse=True):
            if version != UNVERSIONED:
                self.versions[lang].append(version)
        self._nodes: dict[tuple[str, str], dict[str, tuple[str, str | None, str | None]]] = {}
        self._glossaries: dict[tuple[str, str], dict[str, str]] = {}
        self._loose_glossaries: dict[tuple[str, str], dict[str, str]] = {}
        self._stems: dict[tuple[str, str], dict[str, str]] = {}
        self._named: dict[str, tuple[dict[str, list[NodeKey]], dict[str, NodeKey]]] = {}
        self._loose_named: dict[str, dict[str, NodeKey]] = {}
        self._sources: dict[NodeKey, str] = {}

    def _in_scope(self, version: str, lang: str) -> bool:
        return self._scopes is None or (version, lang) in self._scopes

    def _node(self, key: NodeKey) -> tuple[str, str | None, str | None] | None:
        """(kind, title, English name) of a node, None when there is none (or it is out of scope)."""
        scope = (key.version, key.lang)
        if self._by_key:
            if key not in self._keys:
                self._keys[key] = self._store.node_name(key) if self._in_scope(*scope) else None
            return self._keys[key]
        if scope not in self._nodes:
            self._nodes[scope] = self._store.node_names(*scope) if self._in_scope(*scope) else {}
        return self._nodes[scope].get(key.id)

    def has(self, key: NodeKey) -> bool:
        return self._node(key) is not None

    def kind(self, key: NodeKey) -> str | None:
        node = self._node(key)
        return node[0] if node else None

    def title(self, key: NodeKey) -> str | None:
        node = self._node(key)
        return node[1] if node else None

    def english(self, key: NodeKey) -> str | None:
        node = self._node(key)
        return node[2] if node else None

    def source(self, key: NodeKey) -> str:
        """The source (file or URL) the node shows; '' when there is no such node (or it is out of scope)."""
        if key not in self._sources:
            doc = self._store.document_of(key) if self._in_scope(key.version, key.lang) else None
            self._sources[key] = doc.source if doc else ""
        return self._sources[key]

    def glossary_names(self, version: str, lang: str) -> dict[str, str]:
        """Folded title, English name and aliases → id of the glossary entries of one version and language (the
        first entry stored wins a name)."""
        scope = (version, lang)
        if scope not in self._glossaries:
            names = self._glossaries[scope] = {}
            if self._in_scope(version, lang):
                for key, _, title, aliases, english in self._store.name_rows([scope], kinds=[GLOSSARY]):
                    for name in [title, english, *aliases]:
                        if name:
                            names.setdefault(fold(name), key.id)
        return self._glossaries[scope]

    def loose_glossary_names(self, version: str, lang: str) -> dict[str, str]:
        """:meth:`glossary_names` keyed by :func:`loose_fold` (the first entry of a loose name wins it)."""
        scope = (version, lang)
        if scope not in self._loose_glossaries:
            self._loose_glossaries[scope] = _loosened(self.glossary_names(version, lang))
        return self._loose_glossaries[scope]

    def titled(self, kind: str, title: str) -> list[NodeKey]:
        """The nodes of a named kind (:data:`NAMED_KINDS`) with this exact title, by key."""
        if self._by_key and kind not in self._named:
            if (kind, title) not in self._titles:
                self.expect_titles(kind, [title])
            return self._titles[(kind, title)]
        return self._named_tables(kind)[0].get(title, [])

    def expect_titles(self, kind: str, titles: Collection[str]) -> None:
        """With ``by_key``: read the nodes of ``kind`` with these exact titles at once (in one statement, not one
        each), before :meth:`titled` asks for them."""
        if self._by_key:
            wanted = {title for title in titles if (kind, title) not in self._titles}
            if wanted:
                self._titles.update(((kind, title), keys) for title, keys in
                                    self._store.titled_keys(kind, wanted, self._scopes).items())

    def names(self, kind: str) -> dict[str, NodeKey]:
        """Folded title, English name and aliases → node, of the nodes of a named kind (the least key wins a name
        several have: the same whatever order they were stored in, so an incremental link finds what a whole one
        does)."""
        return self._named_tables(kind)[1]

    def loose_names(self, kind: str) -> dict[str, NodeKey]:
        """:meth:`names` keyed by :func:`loose_fold` (the first of a loose name in :meth:`names` wins it)."""
        if kind not in self._loose_named:
            self._loose_named[kind] = _loosened(self.names(kind))
        return self._loose_named[kind]

    def _named_tables(self, kind: str) -> tuple[dict[str, list[NodeKey]], dict[str, NodeKey]]:
        if kind not in self._named:
            by_title: dict[str, list[NodeKey]] = defaultdict(list)
            names: dict[str, NodeKey] = {}
            rows = sorted(self._store.name_rows(self._scopes, kinds=[kind]), key=lambda row: key_order(row[0]))
            for key, _, title, aliases, english in rows:
                if title:
                    by_title[title].append(key)
                for name in [title, english, *aliases]:
                    if name:
                        names.setdefault(fold(name), key)
            self._named[kind] = (by_title, names)
        return self._named[kind]

    def cr_version_for(self, source: NodeKey, ref: Ref) -> list[tuple[str, str]]:
        """Candidate (version, lang) pairs a rule/term reference from ``source`` should look in, best first."""
        if source.version != UNVERSIONED:
            return [(source.version, source.lang)]
        candidates = []
        if ref.version:
            candidates += [(ref.version, lang) for lang in (source.lang, "ja", "en")
                           if ref.version in self.versions.get(lang, ())]
        for lang in dict.fromkeys((source.lang, "ja", "en")):
            if self.versions.get(lang):
                candidates.append((self.versions[lang][0], lang))
        return candidates

    def find_glossary(self, version: str, lang: str, name: str) -> str | None:
        names = self.glossary_names(version, lang)
        folded = fold(name)
        if folded in names:
            return names[folded]
        # a stem link ('唱え' + 'る', '戦場に出' + 'す') names the term that adds only okurigana to it
        return self._stem_table(version, lang).get(folded) if folded else None

    def _stem_table(self, version: str, lang: str) -> dict[str, str]:
        """Stem → id of the shortest glossary name (the least id among equals) that is the stem plus 1–3 characters
        of okurigana: what :meth:`find_glossary` finds for a stem, looked up instead of scanned for."""
        scope = (version, lang)
        if scope not in self._stems:
            best: dict[str, tuple[int, str]] = {}
            for name, gid in self.glossary_names(version, lang).items():
                for cut in range(max(len(name) - _MAX_OKURIGANA, 0), len(name)):
                    if _OKURIGANA.match(name[cut:]) and (name[:cut] not in best or (len(name), gid) < best[name[:cut]]):
                        best[name[:cut]] = (len(name), gid)
            self._stems[scope] = {stem: gid for stem, (_, gid) in best.items()}
        return self._stems[scope]



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
