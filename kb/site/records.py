"""The site's data records: what :func:`kb.site.gather.gather_site` reads from the store (:class:`SiteData`, its
:class:`Entry` s with their :class:`Link` s, the :class:`Archive` s of other versions, the :class:`ChangesData` of the
updates) and every page producer, the search export and the 更新履歴 read. Records only: no stage's code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, NamedTuple, TypedDict

from kb.model import Node
from kb.splitter import JapaneseSplitter
from kb.store import NodeKey
from kb.versions.current import MISSING, CurrentView, JaText

if TYPE_CHECKING:
    from kb.search.names import NameTable


WHOLE_KINDS = frozenset(("card", "note"))  # the unversioned kinds an edit build gathers whole (their texts are names
# and lists other pages show); of the others (MTG Wiki articles) it gathers the names (SiteData.whole_node)


class Mention(TypedDict):
    """A sentence citing a card: where it is (``url``, ``label``) and its text around the card's name."""

    url: str
    label: str
    before: str
    name: str
    after: str


Contribution = tuple[tuple[tuple[str, tuple[str, str, str] | None], ...], bytes]  # what an unversioned node gives
# pages other than its own (kb.site.gather): the URL of each entry it cites, in order, with its mention of it when a
# card (the text before, the name, the text after; else None), and a digest of its unresolved references' lines
NO_CONTRIBUTION: Contribution = ((), b"")
Citation = tuple[tuple[int, str, str], str, str]  # a citation of a rule (kb.site.gather): the citing node's place in
# the store's order (its version's rank, 0 for the unversioned nodes, its language and id), the citing page's URL and
# its label
EntryCitations = tuple[list[Citation], list[tuple[tuple[int, str, str], Mention]]]  # who cites an entry (not a
# rule: Citation alone), in order, and each mention of it with its citing node's place, in order (a card's; duplicates
# kept: Entry.mentions has each once)


class Link(NamedTuple):  # tens of thousands per build: a tuple is made several times faster than a dataclass
    start: int
    end: int
    target: str | None  # site-relative URL (with anchor), None when the reference names nothing on the site
    kind: str = "rule"


@dataclass
class Entry:
    """One thing with a page or an anchor: a rule (both languages), a glossary term (both languages), an article…
    Filled in by the gather step (links and citations come after the entries), then only read."""

    id: str  # node id (the primary language's)
    kind: str
    url: str
    label: str
    nodes: dict[str, Node] = field(default_factory=dict)  # lang → node
    links: dict[str, list[Link]] = field(default_factory=dict)  # lang → links into nodes[lang].text
    children: list[str] = field(default_factory=list)  # ids of child entries in order (rules)
    cited_by: list[tuple[str, str]] = field(default_factory=list)  # (url, label), in order, unique
    number: str | None = None  # rule number (rules only)
    mentions: list[Mention] = field(default_factory=list)  # cards: each citing sentence
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
class StoredHtml:
    """The HTML of the unversioned nodes (wiki articles, release notes), gathered without it — it is most of their
    size — and read one node at a time when a page shows it: each node's content hash (which covers its HTML) by
    (lang, id), and the reader."""

    digests: dict[tuple[str, str], str]
    read: Callable[[NodeKey], str | None] = field(compare=False)


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
class ChangesData:
    """The updates between consecutive versions (:func:`kb.site.changes.gather_changes`): JSON-able data kept in the
    diff cache, so plain dicts (their keys: ``kb.site.changes._pair`` and ``_entry``)."""

    pairs: list[dict[str, Any]] = field(default_factory=list)  # one per diff, newest first
    history: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)  # (lang, rule number or term id) → entries


@dataclass
class SiteData:
    """Everything the site shows, gathered once per build; ``base_url`` is set by the builder."""

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
    changes: ChangesData | None = None  # version diffs and rule histories (None: a single version)
    base_url: str | None = None  # absolute URL of the site's root (ends with "/"), set by the builder when given
    shown: dict[NodeKey, Entry] = field(default_factory=dict)  # every shown node → the entry showing it
    archives: list[Archive] = field(default_factory=list)  # every other stored version, newest first
    names: NameTable | None = None  # Japanese names' English names and readings (kb.search.names), for the search
    splitter: JapaneseSplitter = field(default_factory=JapaneseSplitter)  # with the store's user dictionary
    html: StoredHtml | None = None  # where the unversioned nodes' HTML is read from (their nodes are gathered without)
    names_record: dict[str, Any] = field(default_factory=dict)  # ``names`` and what it was made from, kept by the
    # builder for the next build (kb.site.gather._names)
    readings: dict[str, str] = field(default_factory=dict)  # label → splitter.reading(label), for the 五十音 order:
    # the previous build's when split alike (kb.site.gather._names)
    readings_asked: dict[str, str] = field(default_factory=dict)  # those the pages asked for, kept for the next build
    contributions: dict[tuple[str, str], Contribution] = field(default_factory=dict)  # unversioned (lang, id) → what
    # it gives pages other than its own: kept for an edit build (kb.site.edits)
    rule_citations: dict[str, list[Citation]] = field(default_factory=dict)  # rule URL → its citations, in order: a
    # full gather's, kept for an edit build (which takes them instead of reading who cites a rule: kb.site.edits)
    entry_citations: dict[str, EntryCitations] = field(default_factory=dict)  # the URL of any other cited entry →
    # who cites and mentions it, kept alike (an edit build takes them instead of reading who cites an entry)
    edited: frozenset[str] = frozenset()  # an edit build's edited unversioned node ids
    wholes: frozenset[str] = frozenset()  # an edit build's unversioned node ids gathered whole (the edited ones, those
    # whose pages it makes again, those citing a card it shows again)
    whole_node: Callable[[NodeKey], Node | None] | None = None  # an edit build's (kb.site.gather.gather_edited): its
    # unversioned entries but the edited ones hold their nodes' names alone; a node's whole is read by key here

    def is_whole(self, entry: Entry) -> bool:
        """Whether ``entry`` holds its nodes whole (all do but an edit build's unedited articles)."""
        return self.whole_node is None or entry.kind in WHOLE_KINDS or entry.id in self.wholes

    def whole(self, entry: Entry) -> Entry:
        """``entry`` with its nodes whole (an edit build reads them by key; any other has them)."""
        read = self.whole_node
        if read is None or self.is_whole(entry):
            return entry
        return replace(entry, nodes={lang: read(NodeKey(node.version, lang, node.id)) or node
                                     for lang, node in entry.nodes.items()})

    def entry_for(self, key: NodeKey) -> Entry | None:
        """The entry that shows the stored node ``key`` (None: the site does not show it)."""
        return self.shown.get(key)
