"""The one way kb reads HTML: every parser, the crawl's link discovery and the site's article rewriting get their trees
here, and nowhere else names a parser.

The design's reader is BeautifulSoup over the lxml parser (:func:`html_soup`: the Wisdom Guild viewer, whose parser walks
strings and tags). lxml's own tree (:func:`html_document`, :func:`html_root`, :func:`html_fragment`) is used where a
benchmark shows the need: ``bench/bench_wiki.py`` (400 pages) parses whole MTG Wiki pages — text, sections,
references, sanitised HTML — in 0.83x–0.92x (two runs) the time BeautifulSoup takes only to build its tree and
call ``get_text()``,
and ``parse_cr_html`` reads the 3.8 MB rules page of ``bench/bench_cr_html.py`` in 1.25 s against 8.89 s for
BeautifulSoup's ``get_text()`` alone (0.14x); so the wiki, the release notes (the wiki's tree helpers), the rules
pages and the site's article HTML are read with lxml.

Deep nesting is kept: libxml2 stops at 256 levels by default and silently drops the rest of the page;
:func:`html_document` lets it go to :data:`MAX_DEPTH` (libxml2's limit for huge documents), and a page nested deeper
still is kept up to there with a warning saying the rest is lost. Tree edits shared by the wiki parser and the site
(:func:`insert_links`, :func:`drop_keeping_tail`) live here too.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import lxml.html
from lxml import etree
from lxml.html import HtmlElement

from kb.model import Diagnostic

if TYPE_CHECKING:
    from bs4 import BeautifulSoup

MAX_DEPTH = 2048
_READING_START = re.compile(r"<(rt|rp)\b", re.I)
_READING_END = re.compile(r"</(rt|rp)\s*>", re.I)
_TAG = re.compile(r"<[^>]*>")


def html_document(markup: str | bytes, source: str, diagnostics: list[Diagnostic]) -> HtmlElement:
    """The document tree of ``markup`` (as ``lxml.html.document_fromstring``, which may raise ``etree.ParserError``;
    bytes are decoded by libxml2 from their ``<meta charset>``)."""
    parser = lxml.html.HTMLParser(huge_tree=True)
    tree = lxml.html.document_fromstring(markup, parser=parser)
    deep = next((e for e in parser.error_log if "Excessive depth" in e.message), None)
    if deep is not None:
        diagnostics.append(Diagnostic(source, f"line {deep.line}",
                                      f"HTML nested deeper than {MAX_DEPTH} levels; the rest of the page is lost"))
    return tree


def html_root(text: str) -> etree._Element | None:
    """The root of ``text`` read by libxml2's HTML parser into a plain (not ``lxml.html``) tree, which is the faster
    to walk for a whole rules document; None when nothing is readable. May raise ``etree.ParserError``,
    ``etree.XMLSyntaxError`` or ``ValueError``."""
    root: etree._Element | None = etree.fromstring(text, etree.HTMLParser())
    return root


def html_fragment(markup: str) -> HtmlElement:
    """``markup`` (a piece of a page) inside a ``<div>``: its text is the div's text, its elements the div's children."""
    fragment: HtmlElement = lxml.html.fragment_fromstring(markup, create_parent="div")
    return fragment


def element_html(element: HtmlElement) -> str:
    """The HTML of ``element`` alone (without its tail)."""
    html: str = lxml.html.tostring(element, encoding="unicode", with_tail=False)
    return html


def children_html(element: HtmlElement) -> str:
    """The HTML of ``element``'s children, each with its tail (its own text is not included)."""
    return "".join(lxml.html.tostring(child, encoding="unicode") for child in element)


def new_element(tag: str, attributes: Mapping[str, str] | None = None) -> HtmlElement:
    element: HtmlElement = lxml.html.Element(tag, dict(attributes or {}))
    return element


def html_soup(text: str) -> BeautifulSoup:
    """``text`` as BeautifulSoup reads it with the lxml parser."""
    from bs4 import BeautifulSoup  # here: importing bs4 costs 94 ms, which the lxml readers' users need not pay

    return BeautifulSoup(text, "lxml")


def class_xpath(name: str) -> str:
    """An XPath test for an element whose ``class`` list holds ``name``."""
    return f"contains(concat(' ', normalize-space(@class), ' '), ' {name} ')"


def insert_links(holder: HtmlElement, attr: str, links: Sequence[tuple[int, int, str, Mapping[str, str]]]) -> None:
    """Turn spans of ``holder``'s ``attr`` (``"text"``: the text before its first child; ``"tail"``: the text after
    it) into ``<a>`` elements: each link is (start, end, the link's text, its attributes), in order and not
    overlapping; the text between them stays as text."""
    if not links:
        return
    value = getattr(holder, attr) or ""
    anchors = []
    for i, (_start, end, text, attributes) in enumerate(links):
        anchor = new_element("a", attributes)
        anchor.text = text
        anchor.tail = value[end: links[i + 1][0] if i + 1 < len(links) else len(value)]
        anchors.append(anchor)
    setattr(holder, attr, value[: links[0][0]])
    if attr == "text":
        for offset, anchor in enumerate(anchors):
            holder.insert(offset, anchor)
    else:
        parent = holder.getparent()
        index = parent.index(holder)
        for offset, anchor in enumerate(anchors, 1):
            parent.insert(index + offset, anchor)


def drop_keeping_tail(element: HtmlElement) -> None:
    """Remove an element but keep its tail text."""
    parent = element.getparent()
    if parent is None:
        return
    tail = element.tail
    if tail:
        prev = element.getprevious()
        if prev is not None:
            prev.tail = (prev.tail or "") + tail
        else:
            parent.text = (parent.text or "") + tail
    parent.remove(element)


def markup_text(text: str) -> str:
    """The text of HTML markup without building a tree, for sniffing a page: ruby readings (``<rt>…</rt>``,
    ``<rp>…</rp>``) dropped, every tag a line break. Linear in the length of ``text`` however its ``<`` are left
    open: the same as ``<[^>]*>`` replaced by ``"\\n"`` after ``<(rt|rp)\\b[^>]*>.*?</\\1\\s*>`` removed, which
    takes quadratic time on unclosed tags."""
    closings: dict[str, tuple[list[int], list[int]]] = {"rt": ([], []), "rp": ([], [])}
    for m in _READING_END.finditer(text):
        starts, ends = closings[m.group(1).lower()]
        starts.append(m.start())
        ends.append(m.end())
    kept: list[str] = []
    pos = 0
    tag_end = -1  # the first ">" at or after the last opening looked at (-1: not looked for yet, or none)
    for m in _READING_START.finditer(text):
        if m.start() < pos:
            continue  # inside a reading already dropped
        if tag_end < m.end():
            tag_end = text.find(">", m.end())
            if tag_end == -1:
                break  # no ">" after here: no reading opens from here on
        starts, ends = closings[m.group(1).lower()]
        i = bisect.bisect_left(starts, tag_end + 1)
        if i == len(starts):
            continue  # never closed: not a reading
        kept.append(text[pos:m.start()])
        pos = ends[i]
    kept.append(text[pos:])
    without_readings = "".join(kept)
    last = without_readings.rfind(">") + 1  # past the last ">", a "<" starts no tag: the pattern would try in vain
    return _TAG.sub("\n", without_readings[:last]) + without_readings[last:]
