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

Title ↔ URL helpers (:func:`normalize_title`, :func:`title_to_path`, :func:`title_to_index_url`,
:func:`parse_wiki_href`, :func:`encode_anchor`, :func:`decode_anchor`) follow MediaWiki's rules: ``_`` ↔
space, percent-encoding, first letter upper-cased, legacy ``.E5.AE.9A`` heading anchors.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import hashlib
import html as html_lib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import parse_qs, quote, unquote, urlsplit

import lxml.html
from lxml import etree

from ingest.decode import decode_wiki_html
from ingest.htmltree import html_document
from ingest.refs import find_rule_refs
from kb import rulenum
from kb.model import (
    ARTICLE,
    REF_CARD,
    REF_CATEGORY,
    REF_EXTERNAL,
    REF_REDLINK,
    REF_RULE,
    REF_WIKI,
    UNVERSIONED,
    Diagnostic,
    Document,
    Node,
    Ref,
)
from kb.sanitize import sanitize_html

WIKI_HOSTS = {"mtgwiki.com", "www.mtgwiki.com"}
MAX_PAGE_BYTES = 3_000_000  # larger pages are cut here (with a warning): real articles are well under 1 MB
CATEGORY_NAMESPACES = ("カテゴリ", "Category")
SKIPPED_NAMESPACES = ("特別", "Special", "ファイル", "File", "画像", "Image", "テンプレート", "Template", "ヘルプ", "Help",
                      "MediaWiki", "メディア", "Media")
SITE_TITLE_SUFFIX = re.compile(r"\s*[-–—]\s*MTG Wiki\s*$")

# -- titles and URLs -------------------------------------------------------------------------------------


def normalize_title(title: str) -> str:
    """MediaWiki's canonical title: ``_`` and runs of spaces → one space, trimmed, first letter upper-cased
    (also right after a namespace prefix such as ``カテゴリ:``)."""
    title = re.sub(r"[\s_]+", " ", title).strip()
    namespace, sep, rest = title.partition(":")
    if sep and namespace in (*CATEGORY_NAMESPACES, *SKIPPED_NAMESPACES, "利用者", "User", "MTG Wiki") and rest.strip():
        return f"{namespace}:{_upper_first(rest.strip())}"
    return _upper_first(title)


def _upper_first(s: str) -> str:
    if not s:
        return s
    first = s[0].upper()
    return (first if len(first) == 1 else s[0]) + s[1:]  # 'ß'.upper() is two letters: MediaWiki keeps it


def title_to_path(title: str, fragment: str | None = None) -> str:
    """``唱える`` → ``/wiki/%E5%94%B1%E3%81%88%E3%82%8B`` (spaces as ``_``; ``#fragment`` as an anchor)."""
    path = "/wiki/" + quote(normalize_title(title).replace(" ", "_"), safe=";@$!*(),/~:")
    return path + ("#" + encode_anchor(fragment) if fragment else "")


def title_to_index_url(title: str, *, redlink: bool = False) -> str:
    """``/index.php?title=…`` form of a title (``&action=edit&redlink=1`` for a missing page)."""
    url = "/index.php?title=" + quote(normalize_title(title).replace(" ", "_"), safe=":/")
    return url + ("&action=edit&redlink=1" if redlink else "")


def encode_anchor(fragment: str) -> str:
    """Legacy MediaWiki heading anchor: ``定義`` → ``.E5.AE.9A.E7.BE.A9`` (spaces as ``_``)."""
    return quote(fragment.replace(" ", "_"), safe=";@$!*(),/~:").replace("%", ".")


_DOTTED = re.compile(r"(?:\.[0-9A-F]{2})+")
_ANCHOR_SAFE = "_.-~;@$!*(),/:"  # characters quote(…, safe=";@$!*(),/~:") leaves as they are


def decode_anchor(anchor: str) -> str:
    """Undo :func:`encode_anchor` and percent-encoding; ``_`` → space. A dotted run is decoded only when it
    is what the encoder writes: valid UTF-8, whose ASCII characters are ones it escapes (``.27`` is ``'``), so
    ``601.2f`` or ``A.2F`` stay as written."""

    def dotted(m: re.Match) -> str:
        raw = bytes.fromhex(m.group().replace(".", ""))
        if any(b < 0x80 and (chr(b).isalnum() or chr(b) in _ANCHOR_SAFE) for b in raw):
            return m.group()
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return m.group()

    return _DOTTED.sub(dotted, unquote(anchor)).replace("_", " ")


@dataclass(frozen=True)
class WikiLink:
    """Where an href points: kind is ``wiki``, ``redlink``, ``category``, ``rule`` or ``external``."""

    kind: str
    target: str  # normalised title (rule number for ``rule``, URL for ``external``)
    fragment: str | None = None


CR_TITLE_RE = re.compile(rf"^(?:CR|総合ルール)\s*[:：]?\s*({rulenum.NUMBER})$")


@functools.lru_cache(maxsize=65536)
def parse_wiki_href(href: str) -> WikiLink | None:
    """Classify an href found on an MTG Wiki page; None for in-page anchors, tools, special pages and unsafe
    schemes (``javascript:``, ``data:`` …)."""
    href = href.strip()
    if not href or href.startswith("#"):
        return None
    try:
        parts = urlsplit(href)
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if scheme not in ("", "http", "https") or (href.startswith("//") and not host):
        return None
    if host and host not in WIKI_HOSTS:
        return WikiLink(REF_EXTERNAL, href) if scheme else WikiLink(REF_EXTERNAL, "http:" + href)
    query = parse_qs(parts.query)
    kind = REF_WIKI
    if "title" in query:
        title = query["title"][0]
        action = query.get("action", ["view"])[0]
        if action == "edit" and query.get("redlink") == ["1"]:
            kind = REF_REDLINK
        elif action not in ("view",) or "oldid" in query or "diff" in query:
            return None
    elif parts.path.startswith("/wiki/"):
        title = unquote(parts.path[len("/wiki/"):])
    elif parts.path.startswith("/index.php/"):
        title = unquote(parts.path[len("/index.php/"):])
    else:
        return None
    title = normalize_title(title)
    if not title:
        return None
    fragment = decode_anchor(parts.fragment) if parts.fragment else None
    namespace = title.split(":", 1)[0] if ":" in title else ""
    if namespace in SKIPPED_NAMESPACES:
        return None
    if namespace in CATEGORY_NAMESPACES:
        return WikiLink(REF_CATEGORY, title.split(":", 1)[1])
    rule = CR_TITLE_RE.match(title)
    if rule:
        return WikiLink(REF_RULE, rule.group(1))
    if title == "総合ルール" and fragment and rulenum.normalize(fragment):
        return WikiLink(REF_RULE, rulenum.normalize(fragment))
    return WikiLink(kind, title, fragment)


CARD_NAME_RE = re.compile(r"^(?P<ja>[^/:]*[^\x00-\x7f][^/]*?)\s*/\s*(?P<en>[A-Za-z0-9\"'][^/]*?)\s*$")


def split_card_name(name: str) -> tuple[str, str | None] | None:
    """``ドライアドの東屋/Dryad Arbor`` → (``ドライアドの東屋``, ``Dryad Arbor``); None if it is not such a pair."""
    m = CARD_NAME_RE.match(name.strip())
    return (m.group("ja").strip(), m.group("en").strip()) if m else None


# -- decoding --------------------------------------------------------------------------------------------

_XML_DECL = re.compile(r"^\s*<\?xml[^>]*\?>")


_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\uffff\ud800-\udfff]")


def decode_html(data: bytes, source: str, diagnostics: list[Diagnostic]) -> str:
    """Bytes → text by the one charset policy (:func:`ingest.decode.decode_wiki_html`): BOM, then the declared
    charset, then UTF-8 / CP932 / EUC-JP; a mismatch is reported.
    Control characters (not allowed in HTML text) are dropped."""
    return _CONTROL_CHARS.sub("", decode_wiki_html(data, source, diagnostics))


# -- chrome ----------------------------------------------------------------------------------------------


def _cls(name: str) -> str:
    return f"contains(concat(' ', normalize-space(@class), ' '), ' {name} ')"


CHROME_TAGS = {"script", "style", "noscript", "link", "meta", "iframe", "form", "object", "embed", "nav", "template"}
CHROME_IDS = {"toc", "catlinks", "siteSub", "contentSub", "contentSub2", "jump-to-nav", "mw-navigation", "column-one",
              "mw-panel", "mw-head", "footer"}
CHROME_CLASSES = {"editsection", "mw-editsection", "toc", "printfooter", "catlinks", "mw-jump", "mw-jump-link",
                  "noprint", "adsbygoogle", "ad", "ads", "advertisement", "mw-indicators", "visualClear"}
WANTED_IDS = {"firstHeading", "catlinks", "mw-hidden-catlinks", "footer-info-lastmod", "lastmod", "mw-content-text",
              "bodyContent", "content"}
WANTED_CLASSES = {"mw-parser-output", "mw-redirectedfrom"}


@dataclass
class _PageIndex:
    """One pass over the page: elements by id and by class (the few we read), and the chrome to drop."""

    by_id: dict[str, etree._Element]
    by_class: dict[str, list[etree._Element]]
    chrome: list[etree._Element]

    @classmethod
    def build(cls, tree) -> _PageIndex:
        by_id: dict[str, etree._Element] = {}
        by_class: dict[str, list[etree._Element]] = {}
        chrome = []
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


BLOCK_TAGS = {"p", "div", "ul", "ol", "dl", "dt", "dd", "li", "table", "tr", "blockquote", "pre", "h1", "h2", "h3",
              "h4", "h5", "h6", "center", "caption", "thead", "tbody", "tfoot", "figure", "figcaption", "hr",
              "section", "article", "aside", "header", "footer", "details", "summary"}
HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_WS = re.compile(r"\s+")


class _TextBuilder:
    """Plain text of the article, one line per block, with the spans of tracked elements (links, card names)."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.pos = 0
        self.at_line_start = True
        self.pending_space = False
        self.after_marker = False  # just wrote a list marker: no space before the item's text
        self.spans: list[tuple[etree._Element, int, int]] = []

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

    def render(self, el: etree._Element, tracked: set) -> None:
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
    text = _XML_DECL.sub("", decode_html(data, source, diagnostics))
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
        _drop(el)
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


def _drop(el: etree._Element) -> None:
    """Remove an element but keep its tail text."""
    parent = el.getparent()
    if parent is None:
        return
    tail = el.tail
    if tail:
        prev = el.getprevious()
        if prev is not None:
            prev.tail = (prev.tail or "") + tail
        else:
            parent.text = (parent.text or "") + tail
    parent.remove(el)


def _page_title(tree, page: _PageIndex, source: str, diagnostics: list[Diagnostic]) -> str:
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


def _content_root(tree, page: _PageIndex):
    if page.by_class.get("mw-parser-output"):
        return page.by_class["mw-parser-output"][0]
    for id_ in ("mw-content-text", "bodyContent", "content"):
        if id_ in page.by_id:
            return page.by_id[id_]
    return tree.find(".//body")


def _first(el, xpath: str):
    found = el.xpath(xpath)
    return found[0] if found else None


def _flat_children(root) -> Iterator[etree._Element]:
    """The content's blocks in order, looking through wrappers (``mw-content-text``, ``mw-parser-output``);
    text lying loose between blocks becomes a paragraph of its own."""
    _wrap_loose_text(root)
    for child in root:
        if not isinstance(child.tag, str):
            continue
        classes = (child.get("class") or "").split()
        if child.get("id") == "mw-content-text" or "mw-parser-output" in classes:
            yield from _flat_children(child)
        else:
            yield child


def _wrap_loose_text(container) -> None:
    if container.text and container.text.strip():
        p = lxml.html.Element("p")
        p.text, container.text = container.text, None
        container.insert(0, p)
    for child in list(container):
        if child.tail and child.tail.strip():
            p = lxml.html.Element("p")
            p.text, child.tail = child.tail, None
            child.addnext(p)


def _heading_of(el) -> tuple[int, etree._Element] | None:
    if el.tag in HEADINGS:
        return HEADINGS[el.tag], el
    if el.tag == "div" and "mw-heading" in (el.get("class") or "").split():
        inner = next((child for child in el if child.tag in HEADINGS), None)
        if inner is not None:
            return HEADINGS[inner.tag], inner
    return None


class _ArticleBuilder:
    def __init__(self, source: str, title: str, diagnostics: list[Diagnostic]):
        self.source = source
        self.title = title
        self.diagnostics = diagnostics
        self.out = _TextBuilder()
        self.block_starts: list[int] = []  # start offset of each block in the text, ascending
        self.block_info: list[tuple[int, str | None]] = []  # (start, title of its section)

    def build(self, root, aliases, categories, last_modified) -> Node:
        card_boxes = root.xpath(f".//div[{_cls('card')}]")
        card_names = [_first(box, f".//*[{_cls('card-name')}]|.//b|.//strong|.//a") for box in card_boxes]
        anchors = [a for a in root.iter("a") if a.get("href")]
        tracked = set(anchors) | {el for el in card_names if el is not None}
        lead = {"title": None, "level": 1, "anchor": None, "blocks": [], "sections": []}
        stack = [lead]
        html_parts: list[str] = []
        blocks: list[tuple[etree._Element, dict]] = []
        for el in _flat_children(root):
            heading = _heading_of(el)
            if heading:
                level, h = heading
                name = _WS.sub(" ", h.text_content()).strip()
                anchor = _heading_anchor(h)
                self.out.newline()
                start = self.out.pos
                self.out.inline(name)
                section = {"title": name, "level": level, "anchor": anchor, "start": start, "blocks": [], "sections": []}
                self.out.newline()
                while len(stack) > 1 and stack[-1]["level"] >= level:
                    stack.pop()
                stack[-1]["sections"].append(section)
                stack.append(section)
                attr = f' id="{html_lib.escape(_element_id(anchor), quote=True)}"' if anchor else ""
                html_parts.append(sanitize_html(f"<h{level}{attr}>{html_lib.escape(name)}</h{level}>"))
                continue
            if not el.text_content().strip() and el.tag != "hr" and next(el.iter("img"), None) is None:
                continue  # empty anchors (<a name=…>) and spacers
            start = self.out.pos
            self.out.render(el, tracked)
            self.out.newline()
            block_html = sanitize_html(lxml.html.tostring(el, encoding="unicode", with_tail=False))
            block = {"tag": el.tag, "html": block_html, "start": start, "end": self.out.pos}
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
        refs, footnotes, decklists, quotes = [], [], [], []
        refs += self._link_refs(anchors, spans, text)
        refs += self._card_box_refs(card_names, spans, text, refs)
        refs += self._text_rule_refs(text, quotes)
        refs += self._text_card_refs(text, refs, decklists)
        refs += [Ref(REF_CATEGORY, c) for c in categories]
        for el in root.xpath(f".//ol[{_cls('references')}]/li"):
            note = _WS.sub(" ", el.text_content()).strip().lstrip("↑^ ").strip()
            footnotes.append({"id": el.get("id"), "text": note})
        english = _english_name(self.title, lead, text)
        redirect = _first(root, f".//*[{_cls('redirectMsg')}]//a|.//ul[{_cls('redirectText')}]//a")
        meta = {"lead": lead["blocks"], "sections": lead["sections"], "categories": categories, "footnotes": footnotes,
                "last_modified": last_modified, "decklists": decklists, "quoted_rules": quotes}
        if redirect is not None:
            link = parse_wiki_href(redirect.get("href", ""))
            if link and link.kind == REF_WIKI:
                meta["redirect"] = link.target
        return Node(id=f"wiki:{self.title}", kind=ARTICLE, lang="ja", version=UNVERSIONED, text=text, title=self.title,
                    refs=tuple(refs), aliases=aliases, english=english, html="\n".join(html_parts), meta=meta)

    def _link_refs(self, anchors, spans, text) -> list[Ref]:
        refs = []
        for a in anchors:
            link = parse_wiki_href(a.get("href", ""))
            if link is None:
                continue
            start, end = _trim(text, *spans.get(a, (-1, -1)))
            surface = text[start:end] if start >= 0 else _WS.sub(" ", a.text_content()).strip()
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

    def _card_box_refs(self, card_names, spans, text, refs) -> list[Ref]:
        out = []
        for el in card_names:
            if el is None or el not in spans:
                continue
            start, end = _trim(text, *spans[el])
            names = split_card_name(text[start:end])
            if names and not any(r.kind == REF_CARD and r.start == start for r in refs):
                out.append(Ref(REF_CARD, names[1] or names[0], text[start:end], start, end))
        return out

    def _text_rule_refs(self, text: str, quotes: list[dict]) -> list[Ref]:
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

    def _text_card_refs(self, text: str, refs: list[Ref], decklists: list[dict]) -> list[Ref]:
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

        rows: list[tuple[int, dict]] = []
        for m in [*DECK_ROW_RE.finditer(text), *COUNTED_CARD_RE.finditer(text)]:
            names = add(m.group(2), m.start(2), m.end(2))
            if names:
                rows.append((m.start(), {"count": int(m.group(1)), "name": names[0], "english": names[1]}))
        for m in BRACKET_CARD_RE.finditer(text):
            add(m.group(1), m.start(1), m.end(1))
        decklists += self._group_decks(sorted(rows, key=lambda r: r[0]))
        return out

    def _group_decks(self, rows: list[tuple[int, dict]]) -> list[dict]:
        """Deck rows in one block (a ``<pre>`` or paragraph) form one deck list."""
        decks: dict[int, dict] = {}
        for pos, row in rows:
            i = bisect.bisect_right(self.block_starts, pos) - 1
            start, section = self.block_info[i] if i >= 0 else (0, None)
            deck = decks.setdefault(start, {"section": section, "start": start, "cards": []})
            deck["cards"].append(row)
        for deck in decks.values():
            deck["total"] = sum(c["count"] for c in deck["cards"])
        return list(decks.values())


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    if start < 0:
        return -1, -1
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if end > start else (-1, -1)


def _heading_anchor(h) -> str | None:
    """The heading's anchor: its MediaWiki id decoded (``.E5.AE.9A.E7.BE.A9`` → ``定義``), else its text."""
    headline = next((el for el in h.iter("span") if "mw-headline" in el.get("class", "").split()), None)
    for el in (headline, h):
        if el is not None and el.get("id"):
            return decode_anchor(el.get("id"))
    return _WS.sub(" ", h.text_content()).strip() or None


def _element_id(anchor: str) -> str:
    """The id an anchor is written as in the article's HTML: decoded, with ``_`` for spaces (ids hold no spaces)."""
    return anchor.replace(" ", "_")


_EMPHASIS_QUOTES = re.compile(r"(?<![’'])(?:[’']{5}|[’']{3}|[’']{2})(?![’'])")


def _repair_wikitext(root, title: str) -> None:
    """In-page links point at the decoded anchors the headings carry (``#.E5.AE.9A.E7.BE.A9``, ``/wiki/<this page>#…``
    → ``#定義``); wikitext the page shows as text is repaired: emphasis quotes (``’’’``) are dropped, and ``#見出し``
    naming a heading of this page becomes an in-page link to it (the ``#`` dropped)."""
    for a in root.iter("a"):
        href = (a.get("href") or "").strip()
        link = parse_wiki_href(href) if href and not href.startswith("#") else None
        if href.startswith("#") and len(href) > 1:
            a.set("href", "#" + _element_id(decode_anchor(href[1:])))
        elif link is not None and link.kind == REF_WIKI and link.target == title and link.fragment:
            a.set("href", "#" + _element_id(link.fragment))
    headings = {}
    for h in root.iter(*HEADINGS):
        anchor = _heading_anchor(h)
        name = _WS.sub(" ", h.text_content()).strip()
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
            _link_sections(el, attr, value, section_link, headings)


def _link_sections(el, attr: str, value: str, pattern: re.Pattern, headings: dict[str, str]) -> None:
    matches = list(pattern.finditer(value))
    if not matches:
        return
    links = []
    for i, m in enumerate(matches):
        a = lxml.html.Element("a", {"href": "#" + _element_id(headings[m.group(1)])})
        a.text = m.group(1)
        a.tail = value[m.end(): matches[i + 1].start() if i + 1 < len(matches) else len(value)]
        links.append(a)
    setattr(el, attr, value[: matches[0].start()])
    if attr == "text":
        for offset, a in enumerate(links):
            el.insert(offset, a)
    else:
        parent, index = el.getparent(), el.getparent().index(el)
        for offset, a in enumerate(links, 1):
            parent.insert(index + offset, a)


def _english_name(title: str, lead: dict, text: str) -> str | None:
    names = split_card_name(title)
    if names:
        return names[1]
    for block in lead["blocks"][:3]:
        m = LEAD_ENGLISH_RE.match(text[block["start"]:block["end"]])
        if m and m.group("ja").strip() == title:
            return m.group("en").strip()
    return None
