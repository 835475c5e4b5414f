"""The shapes of the page contexts the producers of :mod:`kb.site.pages` make and the templates show: TypedDicts, so
they stay plain JSON-able dicts (hashed as they are by :func:`kb.site.fingerprint.page_hash`) and are checked by
mypy. Records only.
"""

from __future__ import annotations

from typing import Any, TypedDict

from kb.site.records import Mention

Segment = str | list[str | None]  # plain text, or [linked text, target URL (None: unresolved), link kind]


class LinkContext(TypedDict):
    label: str
    url: str


class Pager(TypedDict):
    """The previous and the next page at the same level (rule, section, chapter), None at either end."""

    prev: LinkContext | None
    next: LinkContext | None


class TocItem(TypedDict):
    """A line of a long page's own contents: where it jumps (``cr/601.html#601.2``), what it says, how deep it is."""

    url: str
    label: str
    hint: str  # a few words of the rule's text when it has no title ("" when the label says it all)
    level: int  # 1 or 2


class SiteContext(TypedDict):
    """The version shown, on every page."""

    version: str | None
    english_version: str | None
    lang: str | None
    effective_date: str | None
    sync_date: str | None
    cr_title: str | None
    translation_version: str | None
    translation_date: str | None
    translated_date: str | None  # the translation's translator line date (翻訳日)
    menu: list[LinkContext]  # the header's menu: chapters, glossary, 更新履歴, cards (kb.site.chrome)


class LangText(TypedDict):
    """One language's text of a rule or term."""

    lang: str
    title: str | None
    english: str | None
    text: list[Segment]
    examples: list[str]
    aliases: list[str]


class JaContext(TypedDict):
    """How current the Japanese text of a rule or term is (:func:`kb.site.pages.ja_context`)."""

    ja_status: str
    ja_note: str | None
    ja_version: str | None
    ja_number: str | None
    ja_ops: list[list[str]]


class HistoryBlock(TypedDict):
    """One language's history of a rule or term (entries: ``kb.site.changes._entry``)."""

    lang: str
    lang_name: str
    entries: list[dict[str, Any]]


class RuleContext(JaContext):
    """A rule block: on its section page and on the rule's own page."""

    number: str
    kind: str
    label: str
    url: str
    page: str
    langs: list[LangText]
    cited_by: list[tuple[str, str]]
    history: list[HistoryBlock]


class TermContext(JaContext):
    label: str
    english: str | None
    langs: list[LangText]
    article: LinkContext | None
    cited_by: list[tuple[str, str]]


class Bullet(TypedDict):
    """A line of a release note."""

    bullet: bool
    segments: list[Segment]


class NodeContext(TypedDict):
    """An unversioned node's page: an MTG Wiki article, a release note, a card…"""

    id: str
    kind: str
    kind_name: str
    label: str
    english: str | None
    html: str | None
    text: list[Segment]
    lines: list[Bullet]
    meta: dict[str, str | int]
    term: LinkContext | None
    index: str | None
    mentions: list[Mention]
    cited_by: list[tuple[str, str]]
