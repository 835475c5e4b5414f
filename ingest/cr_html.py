"""Parse a Comprehensive Rules document published as HTML: the official rules page on mtg-jp.com
(``/gameplay/rules/docs/<id>/``) and the ruby-annotated translation ``JPN_CR_YYYYMMDD_N.rb.html``.

Pure function of the bytes: :func:`parse_cr_html`. The page is turned into text lines — every block element
(``p``, ``div``, ``li``, ``dt``, ``h1`` …) and ``<br>`` ends a line, a block ends a paragraph, scripts and styles are
dropped, and so is the page's chrome (``nav``, ``footer``, ``aside``, a block whose class or id names a footer,
a global navigation, a breadcrumb or a copyright: ``© Wizards of the Coast LLC`` never joins the last rule or
glossary entry) — and the lines from the title ``マジック総合ルール(和訳 20240730.0 版)`` on are parsed by
:func:`ingest.cr_text.parse_cr_lines`, so chapters, sections, rules, examples, glossary, version and translation
date follow the same rules as the text file. Ruby readings (``<rt>``, ``<rp>``) never enter the text; a glossary
term's readings become its ``meta['reading']``; a node's ``meta['line']`` counts the page's text lines from the title.
:func:`looks_like_cr_html` tells such a page by its text (the title
and rule ``100.1``), wherever it comes from. Charset: a byte-order mark, else ``<meta charset>``, else UTF-8, else CP932
(a declared charset the bytes are not in: sniffed, with a warning).
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING

from ingest.cr_text import EN_EFFECTIVE_RE, JA_VERSION_RE, parse_cr_lines, parse_cr_text
from ingest.decode import decode_cr_html, is_utf16, sniffable_head
from kb import rulenum
from kb.errors import KbError
from kb.model import Diagnostic, Document

if TYPE_CHECKING:
    from lxml.etree import _Element

_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")
_HTML_START = re.compile(rb"^\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body|meta|p|div|ruby)\b", re.I | re.S)
_FIRST_RULE_LINE = re.compile(r"(?m)^\s*100\.1\.?\s")
_SKIPPED = {"script", "style", "noscript", "template", "head", "rt", "rp", "nav", "footer", "aside"}  # and page chrome
_CHROME_NAME = re.compile(r"(?:^|[-_\s])(?:footer|foot|global-?nav|gnav|site-?header|breadcrumbs?|copyright|sns|share)"
                          r"(?:$|[-_\s])", re.I)
_BLOCKS = {"p", "div", "li", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "table", "section", "article",
           "header", "footer", "main", "nav", "aside", "blockquote", "ul", "ol", "dl", "pre", "hr", "body", "td", "th",
           "figure", "figcaption", "address", "form"}
_SPACES = re.compile(r"\s+")
_LOOKED_AT = 256 * 1024
# 1. / 100. / 100.1. / 100.1a, and the headings 0. はじめに and 10. 用語集
_NUMBER_ALONE = re.compile(rf"^(?:{rulenum.NUMBER}|{rulenum.SUBRULE_CANDIDATE}|\d{{1,2}})\.?$")


def is_html(data: bytes) -> bool:
    return bool(_HTML_START.match(sniffable_head(data, 2048)))


def decode_html(data: bytes, source: str) -> tuple[str, tuple[Diagnostic, ...]]:
    """The page as text, by the one charset policy (:func:`ingest.decode.decode_cr_html`)."""
    return decode_cr_html(data, source)


def looks_like_cr_html(data: bytes, source: str = "") -> bool:
    """True when an HTML page's text has a CR title (``和訳 … 版`` or ``effective as of …``) and rule ``100.1``,
    both within its first :data:`_LOOKED_AT` bytes (the title, contents and introduction come first)."""
    if not is_html(data):
        return False
    head = data
    if len(data) > _LOOKED_AT:  # cut at a line break: never inside a character
        cut = data.rfind(b"\n", 0, _LOOKED_AT)
        if is_utf16(data):
            cut -= cut % 2  # a UTF-16 character is two bytes from the mark on
        head = data[:cut] if cut > 0 else data
    try:
        text, _ = decode_html(head, source)
    except KbError:
        return False
    from ingest.htmltree import markup_text  # here: the rules as text (the usual file) never load lxml

    text = markup_text(text)
    return bool((JA_VERSION_RE.search(text) or EN_EFFECTIVE_RE.search(text)) and _FIRST_RULE_LINE.search(text))


def parse_cr_html(data: bytes, source: str) -> Document:
    """Parse an HTML rules document. Raise KbError naming the source when it holds none."""
    from lxml import etree  # here: the rules as text (the usual file) never load lxml

    from ingest.htmltree import html_root

    text, diagnostics = decode_html(data, source)
    text = _XML_DECLARATION.sub("", text)
    if not text.strip():
        raise KbError(f"{source}: empty page")
    try:
        root = html_root(text)
    except (etree.ParserError, etree.XMLSyntaxError, ValueError) as exc:
        raise KbError(f"{source}: not readable as HTML ({exc})") from None
    if root is None:
        raise KbError(f"{source}: not readable as HTML")
    lines, readings = _numbers_joined(*html_lines(root))
    title_at = next((i for i, line in enumerate(lines) if JA_VERSION_RE.search(line) or EN_EFFECTIVE_RE.search(line)),
                    None)
    if title_at is None:
        raise KbError(f"{source}: no rules document title like 'マジック総合ルール(和訳 20240730.0 版)' in the page")
    return parse_cr_lines(lines[title_at:], source, content_hash=hashlib.sha256(data).hexdigest(),
                          readings={i - title_at: r for i, r in readings.items() if i >= title_at},
                          diagnostics=diagnostics)


def _numbers_joined(lines: list[str], readings: dict[int, str]) -> tuple[list[str], dict[int, str]]:
    """A rule number in an element of its own (``<dt>100.1.</dt><dd>…</dd>``, ``<th>100.</th><td>原則</td>``) joined
    to the text that follows it, as the text file writes them."""
    out: list[str] = []
    out_readings: dict[int, str] = {}
    pending: str | None = None
    for i, line in enumerate(lines):
        if not line:
            if pending is None and out and out[-1]:
                out.append("")
            continue
        if pending is not None:
            if not _NUMBER_ALONE.match(line):
                if i in readings:
                    out_readings[len(out)] = f"{pending} {readings[i]}"
                out.append(f"{pending} {line}")
                pending = None
                continue
            out.append(pending)
            pending = None
        if _NUMBER_ALONE.match(line):
            pending = line
            continue
        if i in readings:
            out_readings[len(out)] = readings[i]
        out.append(line)
    if pending is not None:
        out.append(pending)
    return out, out_readings


def html_lines(root: _Element) -> tuple[list[str], dict[int, str]]:
    """The page's text lines (ruby readings left out), and for each line with ruby the same line read with them."""
    out = _LineWriter()
    out.walk(root)
    out.end_line()
    return out.lines, out.readings


class _LineWriter:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.readings: dict[int, str] = {}
        self.text: list[str] = []
        self.reading: list[str] = []
        self.has_ruby = False
        self.pre = 0

    def add(self, text: str | None, reading: str | None = None) -> None:
        if not text and not reading:
            return
        text = text or ""
        if self.pre and "\n" in text:
            first, *rest = text.split("\n")
            self._add(first, first)
            for piece in rest:
                self.end_line()
                self._add(piece, piece)
            return
        self._add(text, text if reading is None else reading)

    def _add(self, text: str, reading: str) -> None:
        self.text.append(text)
        self.reading.append(reading)

    def end_line(self) -> None:
        """Close the line, its whitespace collapsed as HTML shows it."""
        line = _SPACES.sub(" ", "".join(self.text)).strip()
        if line:
            if self.has_ruby:
                self.readings[len(self.lines)] = _SPACES.sub(" ", "".join(self.reading)).strip()
            self.lines.append(line)
        self.text, self.reading, self.has_ruby = [], [], False

    def end_paragraph(self) -> None:
        self.end_line()
        if self.lines and self.lines[-1]:
            self.lines.append("")

    def walk(self, element: _Element) -> None:
        tag = element.tag.lower() if isinstance(element.tag, str) else ""
        if tag in _SKIPPED or not tag or _is_chrome(element):  # comments and PIs have no string tag
            self.add(element.tail)
            return
        if tag == "br":  # a <br> on an empty line (the second of two) ends the paragraph
            self.end_line() if "".join(self.text).strip() else self.end_paragraph()
        elif tag == "ruby":
            self.ruby(element)
        else:
            block = tag in _BLOCKS
            if block:
                self.end_paragraph()
            self.pre += tag == "pre"
            self.add(element.text)
            for child in element:
                self.walk(child)
            self.pre -= tag == "pre"
            if block:
                self.end_paragraph()
        self.add(element.tail)

    def ruby(self, element: _Element) -> None:
        """``<ruby>予<rt>よ</rt>示<rt>じ</rt></ruby>``: the base into the text, each reading in place of its base."""
        base = [element.text or ""]
        for child in element:
            tag = child.tag.lower() if isinstance(child.tag, str) else ""
            if tag == "rt":
                self.add("".join(base), "".join(child.itertext()))
                self.has_ruby = True
                base = []
            elif tag != "rp":
                base.append("".join(child.itertext()))
            base.append(child.tail or "")
        self.add("".join(base))


def _is_chrome(element: _Element) -> bool:
    """Page chrome by its class or id (``<div class="footer">``, ``<div id="copyright">``): never part of a rule."""
    return bool(_CHROME_NAME.search(f"{element.get('class') or ''} {element.get('id') or ''}"))


def parse_cr_document(data: bytes, source: str) -> Document:
    """A CR document as published, text file or HTML page (the ``cr-text`` source kind's parser)."""
    return parse_cr_html(data, source) if is_html(data) else parse_cr_text(data, source)
