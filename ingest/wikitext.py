"""HTML-to-text for MTG Wiki articles: the content's blocks in order, and plain text one line per block (list items
as ``- …`` lines, table cells joined by `` | ``, ``<pre>`` kept as written) with the spans of the elements asked for.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from lxml.html import HtmlElement

from ingest.htmltree import new_element

BLOCK_TAGS = {"p", "div", "ul", "ol", "dl", "dt", "dd", "li", "table", "tr", "blockquote", "pre", "h1", "h2", "h3",
              "h4", "h5", "h6", "center", "caption", "thead", "tbody", "tfoot", "figure", "figcaption", "hr",
              "section", "article", "aside", "header", "footer", "details", "summary"}
HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_WS = re.compile(r"\s+")


def clean_text(element: HtmlElement) -> str:
    """The element's text, runs of white space as one space, trimmed."""
    return _WS.sub(" ", element.text_content()).strip()


class TextBuilder:
    """Plain text of the article, one line per block, with the spans of tracked elements (links, card names)."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.pos = 0
        self.at_line_start = True
        self.pending_space = False
        self.after_marker = False  # just wrote a list marker: no space before the item's text
        self.spans: list[tuple[HtmlElement, int, int]] = []

    def text(self) -> str:
        return "".join(self.parts)

    def _emit(self, s: str) -> None:
        self.parts.append(s)
        self.pos += len(s)

    def inline(self, s: str | None) -> None:
        if not s:
            return
        lead, trail = s[:1].isspace(), s[-1:].isspace()
        s = _WS.sub(" ", s).strip()
        if not s:
            self.pending_space = self.pending_space or lead
            return
        if (self.pending_space or lead) and not self.at_line_start and not self.after_marker:
            self._emit(" ")
        self._emit(s)
        self.at_line_start = self.after_marker = False
        self.pending_space = trail

    def raw(self, s: str) -> None:
        """Preformatted text: kept as is (minus trailing blanks on lines)."""
        s = re.sub(r"[ \t]+\n", "\n", s.strip("\n"))
        if s:
            self.newline()
            self._emit(s)
            self.at_line_start = s.endswith("\n")

    def newline(self) -> None:
        if not self.at_line_start:
            self._emit("\n")
            self.at_line_start = True
        self.pending_space = False

    def render(self, el: HtmlElement, tracked: set[HtmlElement]) -> None:
        """Write ``el`` and its tail; the span of every element of ``tracked`` in it is kept in :attr:`spans`."""
        tag = el.tag if isinstance(el.tag, str) else ""
        if tag == "br":
            self.newline()
        elif tag == "pre":
            self.newline()
            self.raw(el.text_content())
            self.newline()
        elif tag:
            block = tag in BLOCK_TAGS
            if block:
                self.newline()
            if tag == "li":
                self._emit("- ")
                self.at_line_start, self.after_marker = False, True
            elif tag in ("td", "th") and el.getprevious() is not None:
                self.inline(" | ")
            start = self.pos
            self.inline(el.text)
            for child in el:
                self.render(child, tracked)
            if el in tracked:
                self.spans.append((el, start, self.pos))
            if block:
                self.newline()
        self.inline(el.tail)


def content_blocks(root: HtmlElement) -> Iterator[HtmlElement]:
    """The content's blocks in order, looking through wrappers (``mw-content-text``, ``mw-parser-output``);
    text lying loose between blocks becomes a paragraph of its own."""
    _wrap_loose_text(root)
    for child in root:
        if not isinstance(child.tag, str):
            continue
        classes = (child.get("class") or "").split()
        if child.get("id") == "mw-content-text" or "mw-parser-output" in classes:
            yield from content_blocks(child)
        else:
            yield child


def _wrap_loose_text(container: HtmlElement) -> None:
    if container.text and container.text.strip():
        p = new_element("p")
        p.text, container.text = container.text, None
        container.insert(0, p)
    for child in list(container):
        if child.tail and child.tail.strip():
            p = new_element("p")
            p.text, child.tail = child.tail, None
            child.addnext(p)


def heading_of(el: HtmlElement) -> tuple[int, HtmlElement] | None:
    """(level, the ``<hN>``) when the block is a heading, also inside MediaWiki's newer ``div.mw-heading``."""
    if el.tag in HEADINGS:
        return HEADINGS[el.tag], el
    if el.tag == "div" and "mw-heading" in (el.get("class") or "").split():
        inner = next((child for child in el if child.tag in HEADINGS), None)
        if inner is not None:
            return HEADINGS[inner.tag], inner
    return None


def trim_span(text: str, start: int, end: int) -> tuple[int, int]:
    """The span without white space at its ends; (-1, -1) when it holds none (or was not in the text)."""
    if start < 0:
        return -1, -1
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if end > start else (-1, -1)

