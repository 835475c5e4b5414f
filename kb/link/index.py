"""Lookup tables over every stored node (:class:`LinkIndex`), the report of one link run (:class:`LinkReport`) and
the name folding every resolver shares. The lowest module of the link stage: resolvers, the graph and term links
all read it; it imports none of them.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from kb.fold import fold_name
from kb.model import ARTICLE, CARD, GLOSSARY, UNVERSIONED, Diagnostic, Ref
from kb.store import NodeKey, Scopes, Store

NAMED_KINDS = (ARTICLE, CARD)  # kinds looked up by alias / English name too (LinkIndex.names_by_kind)
_FINAL_LONG_VOWEL = re.compile(r"(?<=[ァ-ヺ])ー$")


fold = fold_name  # the one fold (kb.fold), as names are looked up


def loose_fold(name: str) -> str:
    """:func:`fold`, also ignoring a word-final katakana long vowel (``パーティー`` = ``パーティ``)."""
    return _FINAL_LONG_VOWEL.sub("", fold(name))


_OKURIGANA = re.compile(r"^[ぁ-ゖー]{0,3}$")


@dataclass
class LinkIndex:
    """Lookup tables over every node in the store."""

    keys: set[NodeKey] = field(default_factory=set)
    kinds: dict[NodeKey, str] = field(default_factory=dict)
    titles: dict[NodeKey, str | None] = field(default_factory=dict)
    english: dict[NodeKey, str | None] = field(default_factory=dict)
    sources: dict[NodeKey, str] = field(default_factory=dict)
    glossary_names: dict[tuple[str, str], dict[str, str]] = field(default_factory=lambda: defaultdict(dict))
    versions: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))  # lang → CR versions, newest first
    by_kind_title: dict[tuple[str, str], list[NodeKey]] = field(default_factory=lambda: defaultdict(list))
    names_by_kind: dict[str, dict[str, NodeKey]] = field(default_factory=lambda: defaultdict(dict))  # articles, cards

    @classmethod
    def build(cls, store: Store, scopes: Scopes = None) -> LinkIndex:
        """The tables over every node, or over the nodes of the (version, lang) ``scopes`` only (the list of versions
        is always complete)."""
        index = cls()
        for doc in store.documents():
            if doc.version != UNVERSIONED and doc.version not in index.versions[doc.lang]:
                index.versions[doc.lang].append(doc.version)
        for versions in index.versions.values():
            versions.sort(reverse=True)
        index.sources = store.node_sources(scopes)
        for key, kind, title, aliases, english in store.name_rows(scopes):
            version, lang, id_ = key.version, key.lang, key.id
            index.keys.add(key)
            index.kinds[key] = kind
            index.titles[key] = title
            index.english[key] = english
            if title:
                index.by_kind_title[(kind, title)].append(key)
            if kind in NAMED_KINDS:  # title, English name and aliases (redirects, other spellings)
                for name in [title, english, *aliases]:
                    if name:
                        index.names_by_kind[kind].setdefault(fold(name), key)
            if kind == GLOSSARY:
                names = index.glossary_names[(version, lang)]
                for name in [title, english, *aliases]:
                    if name:
                        names.setdefault(fold(name), id_)
        return index

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
        names = self.glossary_names.get((version, lang), {})
        folded = fold(name)
        if folded in names:
            return names[folded]
        # a stem link ('唱え' + 'る', '戦場に出' + 'す') names the term that adds only okurigana to it
        stems = [(len(n), i) for n, i in names.items() if n.startswith(folded) and _OKURIGANA.match(n[len(folded):])]
        return min(stems)[1] if stems and len(folded) >= 1 else None


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
