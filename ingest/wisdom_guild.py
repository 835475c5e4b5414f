"""Parse a Wisdom Guild rules-viewer page (whisper.wisdom-guild.net ``/cr/r/601/``, ``/cr/r/702.37/``,
``/cr/cr.php?r=608.2c``) into a :class:`Document` holding the same rule nodes the Japanese CR text gives.

Contract: :func:`parse_wisdom_guild` is a pure function of the bytes. The markup is not relied on; the page is
read as lines of text the way a browser shows it: block elements and ``<br>`` end a line, inline elements (the
glossary links around every term, even a stem such as ``唱え`` + ``る``) do not, and their text is joined without
adding spaces. A line that starts with a rule number (``701.34a``) starts a rule; the lines after it are its
text. Each glossary link becomes a ``term`` reference (target = the link text, offsets into the node text);
rule references are found in the text by :func:`ingest.refs.find_rule_refs`. Page chrome (menus, sidebar,
breadcrumb, ads, footer) is never content: the breadcrumb and sidebar only give the titles of the chapter and
section the rules belong to. Only text is kept, never markup. The version comes from the ``MJMJ訳 20231117.0
版`` line (KbError without one: nodes must be versioned), the sync date from ``最終同期: 2024/04/19``.
Encoding: byte-order mark, else ``<meta charset>`` / ``http-equiv`` content type, else UTF-8, EUC-JP or
Shift_JIS, whichever reads as a rules page; a declaration that does not fit the bytes gives a warning.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from typing import Any

from bs4 import NavigableString, Tag
from bs4.element import PageElement, PreformattedString

from ingest.cr_text import EXAMPLE_RE
from ingest.decode import decode_wisdom_guild
from ingest.htmltree import html_soup
from ingest.refs import find_rule_refs
from kb import rulenum
from kb.errors import KbError
from kb.ids import rule_id
from kb.model import CHAPTER, REF_TERM, SECTION, Diagnostic, Document, Node, Ref

VERSION_RE = re.compile(r"MJMJ訳\s*([0-9]{8}(?:\.[0-9]+)?)\s*版")
SYNC_RE = re.compile(r"最終同期\s*[:：]?\s*(\d{4})\s*[/／\-.年]\s*(\d{1,2})\s*[/／\-.月]\s*(\d{1,2})")
RULE_LINE_RE = re.compile(rf"^({rulenum.RULE}{rulenum.LETTER_CANDIDATE}?)\.?(?![0-9A-Za-z.])\s*")
SECTION_LINE_RE = re.compile(rf"^({rulenum.SECTION})\.\s*([^\d\s].*)$")
FOOTER_RE = re.compile(r"^(?:©|\(c\)|copyright\b|[(（]?実行時間)", re.I)
RULE_HREF_RE = re.compile(r"(?:/cr/r/|[?&]r=)\d")
OTHER_SITE_RE = re.compile(r"^(?:[a-z][a-z0-9+.-]*:)?//(?![^/]*whisper\.wisdom-guild\.net)", re.I)
SEPARATOR_RE = re.compile(r"^[\s>＞»›|/:：・\-–—→]*$")
CLOSING_HTML_RE = re.compile(r"</html\s*>", re.I)
SPACE_RUN_RE = re.compile(r"[ \t\n\r\f\u00a0]+")

BLOCK_TAGS = frozenset(
    "address article aside blockquote body caption center dd details dialog div dl dt fieldset figcaption figure footer "
    "form h1 h2 h3 h4 h5 h6 header hr li main nav ol p pre section summary table tbody td tfoot th thead tr ul".split())
SKIPPED_TAGS = frozenset(
    "head script style noscript template iframe ins object embed svg math canvas select option button input textarea "
    "audio video map".split())
CHROME_TAGS = frozenset("nav aside header footer form menu".split())
CHROME_NAME_RE = re.compile(
    r"^(?:side\w*|\w*menu\w*|g?navi?(?:gation)?|\w*nav|foot(?:er)?\w*|header\w*|ads?|adsense|adsbygoogle|advert\w*|"
    r"banner\w*|sponsor\w*|pager|pagination|bread\w*|\w*crumbs?|pankuzu|topicpath)(?:[-_]\w*)*$", re.I)
TERM, RULE_LINK, EXTERNAL = "term", "rule", "external"


@dataclass(frozen=True)
class _Fragment:
    """One text node as written, with the link around it and the block (line) it belongs to."""

    text: str
    link: str | None
    block: int
    chrome: bool
    element: Tag  # the block element holding it
    index: int  # position among all the page's fragments


@dataclass(frozen=True)
class _Line:
    """One line of page text: whitespace resolved, link spans as (start, end, link kind) into ``text``."""

    text: str
    spans: tuple[tuple[int, int, str], ...]
    element: Tag
    first: int  # index of the line's first fragment among all the page's fragments

    def after(self, offset: int) -> _Line:
        """The rest of the line from ``offset`` on (leading spaces dropped), spans shifted."""
        while offset < len(self.text) and self.text[offset].isspace():
            offset += 1
        spans = tuple((s - offset, e - offset, k) for s, e, k in self.spans if s >= offset)
        return _Line(self.text[offset:], spans, self.element, self.first)


def parse_wisdom_guild(data: bytes, source: str) -> Document:
    """Parse one rules-viewer page. Raise KbError when nothing can be read or the page has no version line."""
    diagnostics: list[Diagnostic] = []
    text = _decode(data, source, diagnostics)
    soup = html_soup(text)
    fragments = _read_fragments(soup.body or soup)
    if not any(f.text.strip() for f in fragments):
        raise KbError(f"{source}: no readable text in the page (empty or not HTML)")
    all_text = "\n".join(f.text for f in fragments)
    version_match = VERSION_RE.search(all_text)
    if not version_match:
        raise KbError(f"{source}: no 'MJMJ訳 … 版' version line; not a Wisdom Guild rules-viewer page?")
    version = version_match.group(1)
    content = _lines([f for f in fragments if not f.chrome])
    if not any(RULE_LINE_RE.match(line.text) for line in content):
        every_line = _lines(fragments)
        if any(RULE_LINE_RE.match(line.text) for line in every_line):
            diagnostics.append(Diagnostic(source, "", "rules found only inside elements that look like page chrome "
                                                      "(menu, sidebar, ad); read them anyway"))
            content = every_line
    records = _read_rules(content, source, diagnostics)
    if not records:
        diagnostics.append(Diagnostic(source, "", "no rules found on the page"))
    elif not CLOSING_HTML_RE.search(text):
        diagnostics.append(Diagnostic(source, "end of page", f"page ends without </html> (truncated download?); the "
                                                            f"last rule read, {records[-1].number}, may be incomplete"))
    first_rule = next((line.first for line in content if RULE_LINE_RE.match(line.text)), len(fragments))
    head = [t for t in (_collapse(f.text) for f in fragments[:first_rule]) if t]
    nodes = _nodes(records, head, version)
    title_tag = soup.title.get_text() if soup.title else ""
    return Document(
        source=source,
        kind="wisdom-guild",
        lang="ja",
        nodes=tuple(nodes),
        version=version,
        effective_date=_iso_date(version[:4], version[4:6], version[6:8]),
        sync_date=_sync_date(all_text),
        content_hash=hashlib.sha256(data).hexdigest(),
        diagnostics=tuple(diagnostics),
        title=_collapse(title_tag) or "Wisdom Guild 総合ルールビューア",
    )


# -- bytes to text ---------------------------------------------------------------------------------------

def _decode(data: bytes, source: str, diagnostics: list[Diagnostic]) -> str:
    """By the one charset policy (:func:`ingest.decode.decode_wisdom_guild`): the codec that reads as a rules page."""
    return decode_wisdom_guild(data, source, diagnostics, lambda text: "MJMJ訳" in text)


# -- markup to lines -------------------------------------------------------------------------------------

def _read_fragments(root: Tag) -> list[_Fragment]:
    """Walk the element tree in document order (iteratively: scraped pages may nest deeply), collecting text nodes
    with the link around them and the line they belong to."""
    fragments: list[_Fragment] = []
    block = 0
    # per open element: its children still to visit, the link and chrome flag inside it, its block element, is it a block
    stack: list[tuple[Iterator[PageElement], str | None, bool, Tag, bool]] = [(iter(root.children), None, False, root, False)]
    while stack:
        children, link, chrome, block_element, _ = stack[-1]
        child = next(children, None)
        if child is None:
            if stack.pop()[4]:
                block += 1
            continue
        if isinstance(child, PreformattedString):  # comments, doctype, CDATA, processing instructions
            continue
        if isinstance(child, NavigableString):
            fragments.append(_Fragment(str(child), link, block, chrome, block_element, len(fragments)))
            continue
        if not isinstance(child, Tag) or child.name in SKIPPED_TAGS:
            continue
        if child.name == "br":
            block += 1
            continue
        is_block = child.name in BLOCK_TAGS
        if is_block:
            block += 1
        stack.append((iter(child.children), _link_kind(child) if child.name == "a" else link,
                      chrome or child.name in CHROME_TAGS or _chrome_named(child),
                      child if is_block else block_element, is_block))
    return fragments


def _link_kind(anchor: Tag) -> str:
    href = str(anchor.get("href") or "")
    if RULE_HREF_RE.search(href):
        return RULE_LINK
    if OTHER_SITE_RE.match(href):
        return EXTERNAL
    return TERM


def _chrome_named(tag: Tag) -> bool:
    names = list(tag.get("class") or []) + [str(tag.get("id") or "")]
    return any(CHROME_NAME_RE.match(name) for name in names if name)


def _lines(fragments: list[_Fragment]) -> list[_Line]:
    lines: list[_Line] = []
    start = 0
    for i in range(1, len(fragments) + 1):
        if i == len(fragments) or fragments[i].block != fragments[start].block:
            line = _join(fragments[start:i])
            if line.text:
                lines.append(line)
            start = i
    return lines


def _join(fragments: list[_Fragment]) -> _Line:
    """Join a line's text nodes as written. A run of spaces is one space; a run holding a line break (source
    formatting) disappears next to Japanese text and is one space between Latin words; the line is trimmed."""
    raw, spans = "", []
    for f in fragments:
        if f.link:
            spans.append((len(raw), len(raw) + len(f.text), f.link))
        raw += f.text
    out: list[str] = []
    position = [0] * (len(raw) + 1)  # raw offset → offset in the joined text
    done = length = 0
    for m in SPACE_RUN_RE.finditer(raw):
        for k in range(done, m.start()):
            position[k] = length + k - done
        out.append(raw[done:m.start()])
        length += m.start() - done
        before = raw[m.start() - 1] if m.start() else ""
        after = raw[m.end()] if m.end() < len(raw) else ""
        line_break = "\n" in m.group() or "\r" in m.group()
        joint = "" if not before or not after or (line_break and (_wide(before) or _wide(after))) else " "
        for k in range(m.start(), m.end()):
            position[k] = length
        out.append(joint)
        length += len(joint)
        done = m.end()
    for k in range(done, len(raw) + 1):
        position[k] = length + k - done
    out.append(raw[done:])
    text = "".join(out)
    resolved = []
    for s, e, kind in spans:
        s, e = position[s], position[e]
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if s < e:
            resolved.append((s, e, kind))
    return _Line(text, tuple(resolved), fragments[0].element, fragments[0].index)


def _wide(char: str) -> bool:
    return unicodedata.east_asian_width(char) in ("W", "F")


def _collapse(text: str) -> str:
    return SPACE_RUN_RE.sub(" ", text).strip()


# -- lines to rules --------------------------------------------------------------------------------------

@dataclass
class _Record:
    number: str
    kind: str
    title: str | None
    lines: list[_Line]
    examples: list[list[_Line]]
    element: Tag


def _read_rules(content: list[_Line], source: str, diagnostics: list[Diagnostic]) -> list[_Record]:
    records: list[_Record] = []
    seen: set[str] = set()
    current: _Record | None = None
    skipping = False
    started = False
    for line in content:
        rule = RULE_LINE_RE.match(line.text)
        if not started and not rule:
            continue
        started = True
        if FOOTER_RE.search(line.text):
            break
        section = None if rule else SECTION_LINE_RE.match(line.text)
        heading = rule or section
        if heading is not None:
            number = heading.group(1)
            where = _path(line.element)
            parsed = rulenum.parse(number)
            skipping = parsed is None or number in seen
            if parsed is None:
                diagnostics.append(Diagnostic(source, where, f"bad rule number {number!r}; rule skipped"))
            elif number in seen:
                diagnostics.append(Diagnostic(source, where, f"rule {number} appears twice; the second is skipped"))
            if parsed is None or skipping:
                current = None
                continue
            seen.add(number)
            if rule:
                rest = line.after(rule.end())
                current = _Record(number, parsed.kind, None, [rest] if rest.text else [], [], line.element)
            else:
                current = _Record(number, SECTION, heading.group(2).strip(), [], [], line.element)
            records.append(current)
        elif skipping:
            continue
        elif current is None or current.kind == SECTION:
            diagnostics.append(Diagnostic(source, _path(line.element), f"text outside any rule, skipped: {line.text[:40]!r}"))
        elif (example := EXAMPLE_RE.match(line.text)) is not None:
            current.examples.append([line.after(example.start(1))])
        elif current.examples:
            current.examples[-1].append(line)
        else:
            current.lines.append(line)
    kept = []
    for rec in records:
        if rec.kind != SECTION and not rec.lines:
            diagnostics.append(Diagnostic(source, _path(rec.element), f"rule {rec.number} has no text; skipped"))
        else:
            kept.append(rec)
    return kept


def _nodes(records: list[_Record], head: list[str], version: str) -> list[Node]:
    nodes: list[Node] = []
    present = {rec.number for rec in records}

    def add(**fields: Any) -> None:
        nodes.append(Node(lang="ja", version=version, order=len(nodes), **fields))

    for rec in records:
        number = rulenum.parse(rec.number)
        assert number is not None  # records hold only numbers that parse (_records skips the others)
        chapter, section = str(number.chapter), str(number.section)
        if chapter not in present and (title := _head_title(head, chapter)):
            add(id=rule_id(chapter), kind=CHAPTER, number=chapter, title=title)
            present.add(chapter)
        if rec.kind != SECTION and section not in present and (title := _head_title(head, section)):
            add(id=rule_id(section), kind=SECTION, number=section, title=title, parent=rule_id(chapter))
            present.add(section)
        parent = rule_id(str(number.parent))
        if rec.kind == SECTION:
            add(id=rule_id(rec.number), kind=SECTION, number=rec.number, title=rec.title, parent=parent)
            continue
        text, spans = _text_of(rec.lines)
        refs = [Ref(REF_TERM, text[s:e], text[s:e], s, e) for s, e, kind in spans
                if kind == TERM and not find_rule_refs(text[s:e])]
        refs = sorted(refs + find_rule_refs(text), key=lambda r: r.start)
        examples = []
        for lines in rec.examples:
            example, example_spans = _text_of(lines)
            examples.append(example)
            refs += [Ref(REF_TERM, example[s:e], example[s:e]) for s, e, kind in example_spans
                     if kind == TERM and not find_rule_refs(example[s:e])]
            refs += [Ref(r.kind, r.target, r.text) for r in find_rule_refs(example)]
        add(id=rule_id(rec.number), kind=rec.kind, number=rec.number, text=text, parent=parent,
            examples=tuple(examples), refs=tuple(refs))
    return nodes


def _text_of(lines: list[_Line]) -> tuple[str, list[tuple[int, int, str]]]:
    text, spans = "", []
    for line in lines:
        if text:
            text += "\n"
        spans += [(s + len(text), e + len(text), k) for s, e, k in line.spans]
        text += line.text
    return text, spans


def _head_title(head: list[str], number: str) -> str | None:
    """Title of chapter/section ``number`` as the breadcrumb (nearest the rules) or sidebar writes it:
    ``701. キーワード処理`` in one piece, or ``701.`` followed by ``キーワード処理``."""
    pattern = re.compile(rf"^{number}\.(?!\d)\s*(.*)$")
    for i in range(len(head) - 1, -1, -1):
        m = pattern.match(head[i])
        if not m:
            continue
        title = m.group(1).strip() or next((t for t in head[i + 1:] if not SEPARATOR_RE.match(t)), "")
        if title and not RULE_LINE_RE.match(title) and not re.match(r"^\d+\.", title):
            return title
    return None


def _path(element: Tag) -> str:
    """A short CSS-like path naming the element, e.g. ``div#main > dl.cr > dt:nth-of-type(5)``."""
    parts = []
    for tag in [element, *element.parents][:4]:
        if not isinstance(tag, Tag) or tag.name in ("[document]", "html", "body"):
            break
        name = tag.name
        if tag.get("id"):
            parts.append(f"{name}#{tag['id']}")
            continue
        if tag.get("class"):
            name += "." + tag["class"][0]
        if tag.parent is not None:
            siblings = tag.parent.find_all(tag.name, recursive=False)
            if len(siblings) > 1:
                name += f":nth-of-type({siblings.index(tag) + 1})"
        parts.append(name)
    return " > ".join(reversed(parts)) or "body"


def _iso_date(year: str, month: str, day: str) -> str | None:
    try:
        return date(int(year), int(month), int(day)).isoformat()
    except ValueError:
        return None


def _sync_date(text: str) -> str | None:
    m = SYNC_RE.search(text)
    return _iso_date(*m.groups()) if m else None
