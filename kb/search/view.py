"""What a search ranks: the documents of the current view — each node the site shows (:mod:`kb.versions.current`:
the shown English rules and glossary, the Japanese text shown with each, every unversioned node), at the URL it is
shown on (a long article's sections at their headings' anchors, :mod:`kb.search.sections`) — or, for
``version:V``, the nodes of that version at their archive URLs.

:func:`doc_table` maps a Whoosh searcher's document numbers to these documents; :func:`asked_by` says which typed
numbers reach a rule (``601`` reaches 601.2f: a number means today's number, with its subrules). Both the live
search (:mod:`kb.search.query`) and the static export (:mod:`kb.site.search_export`) number and find documents
through these, so every surface ranks the same documents in the same order (:mod:`kb.search.ranking`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ingest.wikititle import element_id
from kb import rulenum
from kb.ids import is_glossary_id, rule_number
from kb.model import GLOSSARY, RULE_KINDS, UNVERSIONED
from kb.search.ranking import doc_order
from kb.store import NodeKey

SHOWN_KINDS = (*RULE_KINDS, GLOSSARY)


@dataclass(frozen=True)
class ViewDoc:
    key: NodeKey
    url: str
    number: str | None  # the number it is shown under (today's, for a translated rule)
    order: tuple  # doc_order: the tie-break
    section: str | None = None  # a long article's section (kb.search.sections): its heading's anchor


@dataclass(frozen=True)
class DocTable:
    """The documents of one Whoosh searcher that a search ranks."""

    docs: dict[int, ViewDoc]  # Whoosh document number → its document
    by_key: dict[NodeKey, int]  # a node's document (a long article's: its lead)
    by_number: dict[str, list[int]] = field(default_factory=dict)  # typed number → its documents, in order
    by_url: dict[str, list[int]] = field(default_factory=dict)  # URL → its documents (Japanese, English)

    @property
    def size(self) -> int:
        return len(self.docs)


def place(url: str, number: str | None, unversioned: bool) -> tuple[int, tuple]:
    """(group, place) of a document for :func:`kb.search.ranking.doc_order`."""
    if unversioned:
        return 2, (url,)
    if number is not None:
        return 0, rulenum.sort_key(number)
    return 1, (url,)


def asked_by(number: str) -> list[str]:
    """The typed numbers (without a trailing period) whose results hold rule ``number``: itself, its rule, section
    and chapter (``601.2f`` ← ``601.2f``, ``601.2``, ``601``, ``6``). A number with a trailing period asks for that
    rule alone (key ``number + "."``)."""
    parsed = rulenum.parse(number)
    out = [number, number + "."]
    while parsed is not None and parsed.parent is not None:
        parsed = parsed.parent
        out.append(str(parsed))
    return out


def doc_table(searcher: Any, shown: Callable[[NodeKey], bool], url: Callable[[NodeKey], str],
              shown_number: Callable[[NodeKey], str | None]) -> DocTable:
    """The documents of ``searcher`` whose node is ``shown``, each at ``url(key)``, numbered ``shown_number(key)``."""
    from whoosh import query as wq

    kinds = set(searcher.docs_for_query(wq.Or([wq.Term("kind", k) for k in SHOWN_KINDS])))
    rows = []
    for docnum, stored in searcher.reader().iter_docs():
        key = NodeKey(*stored["key"].split("\t", 2))
        unversioned = key.version == UNVERSIONED
        if not unversioned and (docnum not in kinds or not shown(key)):
            continue
        number = None if unversioned else shown_number(key)
        anchor = stored.get("section")
        where = url(key) + (f"#{element_id(anchor)}" if anchor else "")
        rows.append((doc_order(*place(where, number, unversioned), key.lang), docnum, key, where, number, anchor))
    rows.sort(key=lambda r: r[0])
    docs = {docnum: ViewDoc(key, where, number, order, anchor) for order, docnum, key, where, number, anchor in rows}
    by_number: dict[str, list[int]] = {}
    by_url: dict[str, list[int]] = {}
    for docnum, doc in docs.items():
        by_url.setdefault(doc.url, []).append(docnum)
        if doc.number:
            for asked in asked_by(doc.number):
                by_number.setdefault(asked, []).append(docnum)
    return DocTable(docs, {d.key: n for n, d in docs.items() if d.section is None}, by_number, by_url)


def current_shown(view: Any) -> Callable[[NodeKey], bool]:
    """Whether a versioned node is shown on the current pages of ``view`` (a CurrentView)."""
    english = (view.english.version, "en") if view.english else None
    japanese = {ja.key for ja in view.ja.values()}
    only_ja = (view.shown.version, "ja") if view.shown is not None and view.english is None else None

    def shown(key: NodeKey) -> bool:
        return (key.version, key.lang) in (english, only_ja) or key in japanese

    return shown


def shown_rule_number(locator: Any) -> Callable[[NodeKey], str | None]:
    """The number a rule node is shown under (None for a glossary entry or a node only in the archive)."""

    def number(key: NodeKey) -> str | None:
        shown = locator.shown_id(key)
        return rule_number(shown) if shown and not is_glossary_id(shown) else None

    return number


def own_rule_number(key: NodeKey) -> str | None:
    """An archived node's own number (``version:V``)."""
    return None if is_glossary_id(key.id) else rule_number(key.id)
