"""Parse one MTG Wiki (mtgwiki.com, MediaWiki) page into a :class:`Document` holding one article node.

Entry point: :func:`parse_mtgwiki` — a pure function of the bytes that never raises for bad input: a broken,
hostile, empty, oversized or wrongly-encoded page gives :class:`Diagnostic` warnings (and at worst no node).
Both the old MonoBook skin (``#bodyContent``, ``span.editsection``, ``table#toc``, ``div#catlinks``) and newer
``.mw-parser-output`` markup are read.

The node ``wiki:<title>`` carries: ``text`` (plain text, list items as ``- …`` lines, one line per block),
``html`` (the body through :func:`kb.sanitize.sanitize_html`, the one sanitiser; headings keep their anchor as
``id``: the decoded MediaWiki anchor, else the heading's text; footnote ``id``s are kept; wikitext left in the page as
text is repaired: stray emphasis quotes ``’’’``/``'''`` are dropped and ``#見出し`` naming a heading of the page becomes a
link to it), ``english`` (from ``'''唱える'''/''Cast''は…`` in the lead or a ``日本語名/English`` title),
``aliases`` (titles redirected here) and ``meta``: ``sections`` (the heading tree, each with its blocks as
sanitised HTML and plain text plus their offsets in ``text``), ``categories``, ``footnotes``,
``last_modified`` (ISO date), ``decklists`` (card counts), ``quoted_rules`` (``引用：総合ルール`` blocks)
and ``redirect`` (on a redirect page). Page chrome (navigation, edit links, TOC, print footer, ads, scripts,
styles) is dropped.

References (offsets into ``text`` where they appear in it; -1 when not in the text): ``wiki`` (title,
``#fragment`` kept), ``redlink``, ``external``, ``rule`` (``CR:601.2f`` linked or plain; rule lines of a
quoted block carry the cited version in ``Ref.version``), ``card`` (links to ``日本語名/English`` titles,
``《日本語名/English》`` in text, deck rows ``|1||名前/English`` and ``2:《平地/Plains]]``; target = English
name when known, else Japanese) and ``category``.

The title grammar (titles ↔ URLs, anchors, what an href points at, card titles) is :mod:`ingest.wikititle`; the
text one line per block, :mod:`ingest.wikitext`; the HTML trees, :mod:`ingest.htmltree`.
"""

from __future__ import annotations

import bisect
import dataclasses
import hashlib
import html as html_lib
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import NotRequired, TypedDict
from urllib.parse import unquote, urlsplit

from lxml import etree
from lxml.html import HtmlElement

from ingest.decode import decode_wiki_html
from ingest.htmltree import class_xpath, drop_keeping_tail, element_html, html_document, insert_links
from ingest.refs import find_rule_refs
from ingest.wikitext import HEADINGS, TextBuilder, clean_text, content_blocks, heading_of, trim_span
from ingest.wikititle import decode_anchor, element_id, normalize_title, parse_wiki_href, split_card_name
from kb import rulenum
from kb.ids import article_id
from kb.model import (
    ARTICLE,
    REF_CARD,
    REF_CATEGORY,
    REF_RULE,
    REF_WIKI,
    UNVERSIONED,
    Diagnostic,
    Document,
    Node,
    Ref,
)
from kb.sanitize import sanitize_html

MAX_PAGE_BYTES = 3_000_000  # larger pages are cut here (with a warning): real articles are well under 1 MB
SITE_TITLE_SUFFIX = re.compile(r"\s*[-–—]\s*MTG Wiki\s*$")
_XML_DECL = re.compile(r"^\s*<\?xml[^>]*\?>")

# -- chrome ----------------------------------------------------------------------------------------------

CHROME_TAGS = {"script", "style", "noscript", "link", "meta", "iframe", "form", "object", "embed", "nav", "template"}
CHROME_IDS = {"toc", "catlinks", "siteSub", "contentSub", "contentSub2", "jump-to-nav", "mw-navigation", "column-one",
              "mw-panel", "mw-head", "footer"}
CHROME_CLASSES = {"editsection", "mw-editsection", "toc", "printfooter", "catlinks", "mw-jump", "mw-jump-link",
                  "noprint", "adsbygoogle", "ad", "ads", "advertisement", "mw-indicators", "visualClear"}
WANTED_IDS = {"firstHeading", "catlinks", "mw-hidden-catlinks", "footer-info-lastmod", "lastmod", "mw-content-text",
              "bodyContent", "content"}
WANTED_CLASSES = {"mw-parser-output", "mw-redirectedfrom"}


@dataclass(frozen=True)
class _PageIndex:
    """One pass over the page: elements by id and by class (the few we read), and the chrome to drop."""

    by_id: dict[str, HtmlElement]
    by_class: dict[str, list[HtmlElement]]
    chrome: list[HtmlElement]

    @classmethod
    def build(cls, tree: HtmlElement) -> _PageIndex:
        by_id: dict[str, HtmlElement] = {}
        by_class: dict[str, list[HtmlElement]] = {}
        chrome: list[HtmlElement] = []
        for el in tree.iter():
            tag = el.tag
            if not isinstance(tag, str):  # comments, processing instructions
                chrome.append(el)
                continue
            id_ = el.get("id")
            classes = el.get("class", "").split()
            if id_ in WANTED_IDS:
                by_id.setdefault(id_, el)
            for c in WANTED_CLASSES.intersection(classes):
                by_class.setdefault(c, []).append(el)
            if (tag in CHROME_TAGS or id_ in CHROME_IDS or (id_ or "").startswith("google_ads")
                    or CHROME_CLASSES.intersection(classes)):
                chrome.append(el)
        return cls(by_id, by_class, chrome)


# -- the parser ------------------------------------------------------------------------------------------

LASTMOD_JA = re.compile(r"(\d{4})年\s*(\d{1,2})月\s*(\d{1,2})日")
LASTMOD_EN = re.compile(r"(\d{1,2}) ([A-Z][a-z]+) (\d{4})")
MONTHS = {m: i for i, m in enumerate(
    "January February March April May June July August September October November December".split(), 1)}
QUOTE_HEAD_RE = re.compile(r"引用\s*[:：]\s*総合ルール\s*(\d{8}(?:\.\d+)?)")
QUOTED_RULE_LINE_RE = re.compile(rf"^(?:- )?({rulenum.NUMBER})\.?(?=[ 　])", re.M)
BRACKET_CARD_RE = re.compile(r"《([^《》\]\[\n]{1,80}?)(?:》|\]\])")
DECK_ROW_RE = re.compile(r"\|(\d{1,3})\|\|([^|\n]+?)(?=\s*\|\d{1,3}\|\||\s+\d{1,3}:《|\s*$)", re.M)
COUNTED_CARD_RE = re.compile(r"(?<![\d|])(\d{1,3}):《([^《》\]\[\n]{1,80}?)(?:》|\]\])")


class _Block(TypedDict):
    """A block of a section in ``meta``: its sanitised HTML and its span (and text) in the article's text."""

    tag: str
    html: str
    start: int
    end: int
    text: NotRequired[str]


class _Section(TypedDict):
    """A section in ``meta`` (the lead is one without a title or a start), with its blocks and sub-sections."""

    title: str | None
    level: int
    anchor: str | None
    start: NotRequired[int]
    blocks: list[_Block]
    sections: list[_Section]


class _DeckCard(TypedDict):
    count: int
    name: str
    english: str | None


class _Deck(TypedDict):
    section: str | None
    start: int
    cards: list[_DeckCard]
    total: NotRequired[int]


LEAD_ENGLISH_RE = re.compile(r"^\s*(?P<ja>[^/／\n]{1,60}?)\s*[/／]\s*"
                             r"(?P<en>[A-Za-z0-9][A-Za-z0-9 ,.'’\-:!?&+]*?)\s*(?=は|とは|、|。|\(|（|$)")


def parse_mtgwiki(data: bytes, source: str) -> Document:
    """Parse one MTG Wiki page (see the module docstring). Never raises for bad input; see diagnostics."""
    diagnostics: list[Diagnostic] = []
    content_hash = hashlib.sha256(data).hexdigest()
    if len(data) > MAX_PAGE_BYTES:
        diagnostics.append(Diagnostic(source, "", f"page is {len(data) / 1e6:.1f} MB; only the first "
                                                  f"{MAX_PAGE_BYTES / 1e6:.0f} MB were parsed"))
        data = data[:MAX_PAGE_BYTES]
    text = _XML_DECL.sub("", decode_wiki_html(data, source, diagnostics))
    empty = Document(source=source, kind="mtgwiki", lang="ja", nodes=(), version=UNVERSIONED,
                     content_hash=content_hash, diagnostics=tuple(diagnostics))
    if not text.strip():
        return _with(empty, diagnostics, Diagnostic(source, "", "empty page; no article stored"))
    try:
        tree = html_document(text, source, diagnostics)
    except (etree.ParserError, ValueError) as exc:
        return _with(empty, diagnostics, Diagnostic(source, "", f"not readable as HTML ({exc}); no article stored"))
    page = _PageIndex.build(tree)
    title = _page_title(tree, page, source, diagnostics)
    aliases = _redirected_from(page)
    categories = _categories(page)
    last_modified = _last_modified(page)
    root = _content_root(tree, page)
    for el in page.chrome:
        drop_keeping_tail(el)
    if root is not None:
        _repair_wikitext(root, title)
    if root is None or not root.text_content().strip():
        return _with(empty, diagnostics,
                     Diagnostic(source, "#bodyContent", f"article {title!r} has no body text; no article stored"))
    if not {"firstHeading", "bodyContent", "mw-content-text"} & page.by_id.keys() and "mw-parser-output" not in page.by_class:
        diagnostics.append(Diagnostic(source, "", "no MediaWiki markup (#firstHeading, #bodyContent, .mw-parser-output); "
                                                  "read the whole <body> as the article"))
    node = _ArticleBuilder(source, title, diagnostics).build(root, aliases, categories, last_modified)
    if not node.text.strip():
        return _with(empty, diagnostics, Diagnostic(source, "#bodyContent", f"article {title!r} has no text; no article stored"))
    return Document(source=source, kind="mtgwiki", lang="ja", nodes=(node,), version=UNVERSIONED,
                    content_hash=content_hash, diagnostics=tuple(diagnostics), title=title)


def _with(doc: Document, diagnostics: list[Diagnostic], extra: Diagnostic) -> Document:
    return dataclasses.replace(doc, diagnostics=(*diagnostics, extra))


def _page_title(tree: HtmlElement, page: _PageIndex, source: str, diagnostics: list[Diagnostic]) -> str:
    heading = page.by_id.get("firstHeading")
    if heading is not None and heading.text_content().strip():
        return normalize_title(heading.text_content())
    title_el = tree.find(".//title")
    if title_el is not None and title_el.text_content().strip():
        title = normalize_title(SITE_TITLE_SUFFIX.sub("", title_el.text_content()))
        diagnostics.append(Diagnostic(source, "#firstHeading", f"no #firstHeading; title {title!r} taken from <title>"))
        return title
    link = parse_wiki_href(source) if "://" in source else None
    if link and link.kind == REF_WIKI:
        title = link.target
    else:
        stem = unquote(PurePosixPath(urlsplit(source).path if "://" in source else source).stem) or "untitled"
        title = normalize_title(stem)
    diagnostics.append(Diagnostic(source, "#firstHeading", f"no #firstHeading or <title>; title {title!r} taken from the "
                                                           f"{'URL' if '://' in source else 'file name'}"))
    return title


def _redirected_from(page: _PageIndex) -> tuple[str, ...]:
    names = []
    for a in (a for el in page.by_class.get("mw-redirectedfrom", ()) for a in el.iter("a")):
        link = parse_wiki_href(a.get("href", ""))
        names.append(link.target if link and link.kind == REF_WIKI else normalize_title(a.text_content()))
    return tuple(dict.fromkeys(n for n in names if n))


def _categories(page: _PageIndex) -> list[str]:
    box = page.by_id.get("catlinks")
    hidden = page.by_id.get("mw-hidden-catlinks")
    hidden_links = set(hidden.iter("a")) if hidden is not None else set()
    out = []
    for a in box.iter("a") if box is not None else ():
        link = parse_wiki_href(a.get("href", ""))
        if link and link.kind == REF_CATEGORY and a not in hidden_links:
            out.append(link.target)
    return list(dict.fromkeys(out))


def _last_modified(page: _PageIndex) -> str | None:
    el = page.by_id.get("footer-info-lastmod", page.by_id.get("lastmod"))
    if el is None:
        return None
    text = el.text_content()
    if m := LASTMOD_JA.search(text):
        return f"{int(m.group(1)):04d}-{int(m.group(2)):02d}-{int(m.group(3)):02d}"
    if (m := LASTMOD_EN.search(text)) and m.group(2) in MONTHS:
        return f"{int(m.group(3)):04d}-{MONTHS[m.group(2)]:02d}-{int(m.group(1)):02d}"
    return None


def _content_root(tree: HtmlElement, page: _PageIndex) -> HtmlElement | None:
    if page.by_class.get("mw-parser-output"):
        return page.by_class["mw-parser-output"][0]
    for id_ in ("mw-content-text", "bodyContent", "content"):
        if id_ in page.by_id:
            return page.by_id[id_]
    return tree.find(".//body")


def _first(el: HtmlElement, xpath: str) -> HtmlElement | None:
    found: list[HtmlElement] = el.xpath(xpath)
    return found[0] if found else None


class _ArticleBuilder:
    def __init__(self, source: str, title: str, diagnostics: list[Diagnostic]) -> None:
        self.source = source
        self.title = title
        self.diagnostics = diagnostics
        self.out = TextBuilder()
        self.block_starts: list[int] = []  # start offset of each block in the text, ascending
        self.block_info: list[tuple[int, str | None]] = []  # (start, title of its section)

    def build(self, root: HtmlElement, aliases: tuple[str, ...], categories: list[str], last_modified: str | None) -> Node:
        card_boxes = root.xpath(f".//div[{class_xpath('card')}]")
        card_names = [_first(box, f".//*[{class_xpath('card-name')}]|.//b|.//strong|.//a") for box in card_boxes]
        anchors = [a for a in root.iter("a") if a.get("href")]
        tracked = set(anchors) | {el for el in card_names if el is not None}
        lead: _Section = {"title": None, "level": 1, "anchor": None, "blocks": [], "sections": []}
        stack = [lead]
        html_parts: list[str] = []
        blocks: list[tuple[HtmlElement, _Block]] = []
        for el in content_blocks(root):
            heading = heading_of(el)
            if heading:
                level, h = heading
                name = clean_text(h)
                anchor = _heading_anchor(h)
                self.out.newline()
                start = self.out.pos
                self.out.inline(name)
                section: _Section = {"title": name, "level": level, "anchor": anchor, "start": start, "blocks": [],
                                     "sections": []}
                self.out.newline()
                while len(stack) > 1 and stack[-1]["level"] >= level:
                    stack.pop()
                stack[-1]["sections"].append(section)
                stack.append(section)
                attr = f' id="{html_lib.escape(element_id(anchor), quote=True)}"' if anchor else ""
                html_parts.append(sanitize_html(f"<h{level}{attr}>{html_lib.escape(name)}</h{level}>"))
                continue
            if not el.text_content().strip() and el.tag != "hr" and next(el.iter("img"), None) is None:
                continue  # empty anchors (<a name=…>) and spacers
            start = self.out.pos
            self.out.render(el, tracked)
            self.out.newline()
            block_html = sanitize_html(element_html(el))
            block: _Block = {"tag": el.tag, "html": block_html, "start": start, "end": self.out.pos}
            stack[-1]["blocks"].append(block)
            blocks.append((el, block))
            self.block_starts.append(start)
            self.block_info.append((start, stack[-1]["title"]))
            html_parts.append(block_html)
        text = self.out.text().rstrip("\n")
        for _, block in blocks:
            block["end"] = min(block["end"], len(text))
            block["text"] = text[block["start"]:block["end"]].strip("\n")
        spans = {el: (s, min(e, len(text))) for el, s, e in self.out.spans}
        refs: list[Ref] = []
        footnotes: list[dict[str, str | None]] = []
        decklists: list[_Deck] = []
        quotes: list[dict[str, object]] = []
        refs += self._link_refs(anchors, spans, text)
        refs += self._card_box_refs(card_names, spans, text, refs)
        refs += self._text_rule_refs(text, quotes)
        refs += self._text_card_refs(text, refs, decklists)
        refs += [Ref(REF_CATEGORY, c) for c in categories]
        for el in root.xpath(f".//ol[{class_xpath('references')}]/li"):
            note = clean_text(el).lstrip("↑^ ").strip()
            footnotes.append({"id": el.get("id"), "text": note})
        english = _english_name(self.title, lead, text)
        redirect = _first(root, f".//*[{class_xpath('redirectMsg')}]//a|.//ul[{class_xpath('redirectText')}]//a")
        meta: dict[str, object] = {"lead": lead["blocks"], "sections": lead["sections"], "categories": categories,
                                   "footnotes": footnotes, "last_modified": last_modified, "decklists": decklists,
                                   "quoted_rules": quotes}
        if redirect is not None:
            link = parse_wiki_href(redirect.get("href", ""))
            if link and link.kind == REF_WIKI:
                meta["redirect"] = link.target
        return Node(id=article_id(self.title), kind=ARTICLE, lang="ja", version=UNVERSIONED, text=text, title=self.title,
                    refs=tuple(refs), aliases=aliases, english=english, html="\n".join(html_parts), meta=meta)

    def _link_refs(self, anchors: list[HtmlElement], spans: dict[HtmlElement, tuple[int, int]], text: str) -> list[Ref]:
        refs = []
        for a in anchors:
            link = parse_wiki_href(a.get("href", ""))
            if link is None:
                continue
            start, end = trim_span(text, *spans.get(a, (-1, -1)))
            surface = text[start:end] if start >= 0 else clean_text(a)
            if link.kind == REF_RULE:
                if start >= 0 and find_rule_refs(surface):
                    continue  # the text itself names the rule; found with the plain-text references
                refs.append(Ref(REF_RULE, link.target, surface, start, end))
            elif link.kind == REF_WIKI and link.target == self.title and link.fragment:
                continue  # an anchor within this page
            elif link.kind == REF_WIKI and not link.fragment and (names := split_card_name(link.target)):
                refs.append(Ref(REF_CARD, names[1] or names[0], surface, start, end))
            else:
                target = f"{link.target}#{link.fragment}" if link.fragment else link.target
                refs.append(Ref(link.kind, target, surface, start, end))
        return refs

    def _card_box_refs(self, card_names: list[HtmlElement | None], spans: dict[HtmlElement, tuple[int, int]], text: str,
                       refs: list[Ref]) -> list[Ref]:
        out = []
        for el in card_names:
            if el is None or el not in spans:
                continue
            start, end = trim_span(text, *spans[el])
            names = split_card_name(text[start:end])
            if names and not any(r.kind == REF_CARD and r.start == start for r in refs):
                out.append(Ref(REF_CARD, names[1] or names[0], text[start:end], start, end))
        return out

    def _text_rule_refs(self, text: str, quotes: list[dict[str, object]]) -> list[Ref]:
        """CR references in the text; inside a quoted rule block every rule line (and reference) cites its version."""
        quoted: list[tuple[int, int, str]] = []
        refs: list[Ref] = []
        for head in QUOTE_HEAD_RE.finditer(text):
            version = head.group(1)
            pos = text.find("\n", head.end())
            end = head.end()
            numbers = []
            while pos != -1:
                line_end = text.find("\n", pos + 1)
                line = text[pos + 1: line_end if line_end != -1 else len(text)]
                m = QUOTED_RULE_LINE_RE.match(line)
                if not m:
                    break
                start = pos + 1 + m.start(1)
                refs.append(Ref(REF_RULE, m.group(1), m.group(1), start, start + len(m.group(1)), version))
                numbers.append(m.group(1))
                end = line_end if line_end != -1 else len(text)
                pos = line_end
            quoted.append((head.start(), end, version))
            quotes.append({"version": version, "rules": numbers, "start": head.start(), "end": end})
        for ref in find_rule_refs(text):
            version = next((v for s, e, v in quoted if s <= ref.start < e), None)
            refs.append(Ref(ref.kind, ref.target, ref.text, ref.start, ref.end, version))
        return refs

    def _text_card_refs(self, text: str, refs: list[Ref], decklists: list[_Deck]) -> list[Ref]:
        taken = [(r.start, r.end) for r in refs if r.kind == REF_CARD and r.start >= 0]
        out: list[Ref] = []

        def add(name: str, start: int, end: int) -> tuple[str, str | None] | None:
            if any(s < end and start < e for s, e in taken):
                return None
            names = split_card_name(name) or (name.strip(), None)
            if not names[0]:
                return None
            out.append(Ref(REF_CARD, names[1] or names[0], text[start:end], start, end))
            taken.append((start, end))
            return names

        rows: list[tuple[int, _DeckCard]] = []
        for m in [*DECK_ROW_RE.finditer(text), *COUNTED_CARD_RE.finditer(text)]:
            names = add(m.group(2), m.start(2), m.end(2))
            if names:
                rows.append((m.start(), {"count": int(m.group(1)), "name": names[0], "english": names[1]}))
        for m in BRACKET_CARD_RE.finditer(text):
            add(m.group(1), m.start(1), m.end(1))
        decklists += self._group_decks(sorted(rows, key=lambda r: r[0]))
        return out

    def _group_decks(self, rows: list[tuple[int, _DeckCard]]) -> list[_Deck]:
        """Deck rows in one block (a ``<pre>`` or paragraph) form one deck list."""
        decks: dict[int, _Deck] = {}
        for pos, row in rows:
            i = bisect.bisect_right(self.block_starts, pos) - 1
            start, section = self.block_info[i] if i >= 0 else (0, None)
            deck = decks.setdefault(start, {"section": section, "start": start, "cards": []})
            deck["cards"].append(row)
        for deck in decks.values():
            deck["total"] = sum(c["count"] for c in deck["cards"])
        return list(decks.values())


def _heading_anchor(h: HtmlElement) -> str | None:
    """The heading's anchor: its MediaWiki id decoded (``.E5.AE.9A.E7.BE.A9`` → ``定義``), else its text."""
    headline = next((el for el in h.iter("span") if "mw-headline" in el.get("class", "").split()), None)
    for el in (headline, h):
        if el is not None and el.get("id"):
            return decode_anchor(el.get("id"))
    return clean_text(h) or None


_EMPHASIS_QUOTES = re.compile(r"(?<![’'])(?:[’']{5}|[’']{3}|[’']{2})(?![’'])")


def _repair_wikitext(root: HtmlElement, title: str) -> None:
    """In-page links point at the decoded anchors the headings carry (``#.E5.AE.9A.E7.BE.A9``, ``/wiki/<this page>#…``
    → ``#定義``); wikitext the page shows as text is repaired: emphasis quotes (``’’’``) are dropped, and ``#見出し``
    naming a heading of this page becomes an in-page link to it (the ``#`` dropped)."""
    for a in root.iter("a"):
        href = (a.get("href") or "").strip()
        link = parse_wiki_href(href) if href and not href.startswith("#") else None
        if href.startswith("#") and len(href) > 1:
            a.set("href", "#" + element_id(decode_anchor(href[1:])))
        elif link is not None and link.kind == REF_WIKI and link.target == title and link.fragment:
            a.set("href", "#" + element_id(link.fragment))
    headings: dict[str, str] = {}
    for h in root.iter(*HEADINGS):
        anchor = _heading_anchor(h)
        name = clean_text(h)
        if name and anchor:
            headings.setdefault(name, anchor)
    section_link = (re.compile("#(" + "|".join(re.escape(n) for n in sorted(headings, key=len, reverse=True)) + ")")
                    if headings else None)
    for el in list(root.iter()):
        if not isinstance(el.tag, str) or el.tag in ("pre", "code"):
            continue
        for attr in ("text", "tail"):
            value = getattr(el, attr)
            if not value or ("’" not in value and "'" not in value and "#" not in value):
                continue
            value = _EMPHASIS_QUOTES.sub("", value)
            setattr(el, attr, value)
            holders = [*([el] if attr == "text" else []), *el.iterancestors()]
            if section_link is None or any(x.tag == "a" or x.tag in HEADINGS for x in holders):
                continue
            insert_links(el, attr, [(m.start(), m.end(), m.group(1), {"href": "#" + element_id(headings[m.group(1)])})
                                    for m in section_link.finditer(value)])


def _english_name(title: str, lead: _Section, text: str) -> str | None:
    names = split_card_name(title)
    if names:
        return names[1]
    for block in lead["blocks"][:3]:
        m = LEAD_ENGLISH_RE.match(text[block["start"]:block["end"]])
        if m and m.group("ja").strip() == title:
            return m.group("en").strip()
    return None
