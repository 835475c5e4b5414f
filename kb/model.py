"""Frozen records shared by every stage: nodes, references, parsed documents and diagnostics.

Node ids are stable across versions so that versions can be compared: ``cr:601.2f`` (chapters, sections,
rules, subrules), ``gl:<term>`` (glossary), ``wiki:<title>`` (MTG Wiki article), ``note:<...>`` (release
note), ``card:<name>`` (card entity). A node's key in the store is (version, lang, id).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# Node kinds
CHAPTER = "chapter"  # 6
SECTION = "section"  # 601
RULE = "rule"  # 601.2
SUBRULE = "subrule"  # 601.2f
GLOSSARY = "glossary"
ARTICLE = "article"
NOTE = "note"
CARD = "card"
RULE_KINDS = (CHAPTER, SECTION, RULE, SUBRULE)
NODE_KINDS = (*RULE_KINDS, GLOSSARY, ARTICLE, NOTE, CARD)

# Reference kinds
REF_RULE = "rule"  # a rule number (also ranges, expanded: one Ref per rule)
REF_SECTION = "section"  # "section 7" — a chapter
REF_TERM = "term"  # glossary-term link inside rule text (Wisdom Guild), target = surface form
REF_AUTO_TERM = "auto-term"  # a glossary term found in rule text by kb/link/termlinks.py (derived at every link)
REF_WIKI = "wiki"  # MTG Wiki link to an article
REF_REDLINK = "redlink"  # MTG Wiki link to a page that does not exist
REF_EXTERNAL = "external"
REF_CARD = "card"
REF_CATEGORY = "category"
REF_MECHANIC = "mechanic"  # release note → the mechanic it explains
REF_TERM_ARTICLE = "term-article"  # a glossary-term link's second target, the article of that term (kb/link/graph.py)
# Reference kinds whose targets lie outside the knowledge base by nature: the linker never reports them unresolved.
REFS_OUTSIDE_KB = frozenset([REF_EXTERNAL, REF_REDLINK, REF_CATEGORY])
# Reference kinds the site may link off-site (those, plus MTG Wiki articles not ingested, which link to mtgwiki.com).
REFS_OUTSIDE_SITE = REFS_OUTSIDE_KB | {REF_WIKI}
DERIVED_REF_KINDS = (REF_AUTO_TERM, REF_TERM_ARTICLE)  # made by the linker on every link, never given by a source

UNVERSIONED = ""  # version of sources that have none (wiki articles, release notes, cards)

# How a long stage says how far it is: progress(stage, done, total), stage a short name ("read", "link", "index",
# "render"), done and total in that stage's units (total None: unknown). The library calls it; the CLI shows it.
Progress = Callable[[str, int, int | None], None]


def no_progress(stage: str, done: int, total: int | None) -> None:
    """The :data:`Progress` callback when no one listens."""


@dataclass(frozen=True)
class Ref:
    """A reference written in a node's text. ``target`` is normalised (a rule number, a title, a term)."""

    kind: str
    target: str
    text: str = ""  # the surface text as written
    start: int = -1  # offsets of ``text`` in the node's text; -1 when not located
    end: int = -1
    version: str | None = None  # the version the reference cites, when it names one


@dataclass(frozen=True)
class Node:
    id: str
    kind: str
    lang: str
    version: str = UNVERSIONED
    text: str = ""
    number: str | None = None  # rule number for rule kinds
    title: str | None = None  # chapter/section title, glossary term, article title
    parent: str | None = None  # id of the parent node
    order: int = 0  # document order
    examples: tuple[str, ...] = ()
    refs: tuple[Ref, ...] = ()
    aliases: tuple[str, ...] = ()
    english: str | None = None  # English name when the source gives one
    html: str | None = None  # sanitised HTML (wiki articles, notes)
    meta: dict[str, Any] = field(default_factory=dict, hash=False, compare=True)


@dataclass(frozen=True)
class Diagnostic:
    """A warning about the input, with the place it happened (``where``: 'line 120', 'rule 601.2b', a CSS path)."""

    source: str
    where: str
    message: str

    def __str__(self) -> str:
        place = f"{self.source}:{self.where}" if self.where else self.source
        return f"{place}: {self.message}"


@dataclass(frozen=True)
class Document:
    """Everything parsed from one source."""

    source: str  # file path or URL
    kind: str  # cr-text | wisdom-guild | mtgwiki | release-notes | cards (card entities, made by kb.link.graph)
    lang: str
    nodes: tuple[Node, ...]
    version: str = UNVERSIONED  # '20231117.0' (Japanese), '20231117' (English, from the effective date)
    effective_date: str | None = None  # ISO date (a translation: the date it claims, see ingest.cr_text)
    translated_date: str | None = None  # a translation's translator line date (翻訳日)
    sync_date: str | None = None  # Wisdom Guild "最終同期"
    content_hash: str = ""  # sha256 of the source's bytes: an unchanged source is not parsed again
    diagnostics: tuple[Diagnostic, ...] = ()
    title: str | None = None
