"""Render :class:`kb.site.pages.Page` records to HTML with the Jinja2 templates in ``site_templates/``.

Every link a template writes goes through the ``rel`` filter (site-relative target → relative href from the page
being rendered, :func:`kb.urls.paths.href`), so the site works under any sub-path and from ``file://``; ``absolute``
(with the build's ``base_url``) writes the few absolute URLs (canonical links). A renderer computes a page's relative
prefix once and memoises each target's percent-encoding, and writes the long lists of links (the items citing a rule
or term, a card's mentions, a page's contents, the indexes) with one filter each rather than a template loop: the same
bytes, escaped by markupsafe as the template would. Linked text (rule references, glossary
terms) is rendered by the ``linked`` filter from the segments made in :mod:`kb.site.pages`; MTG Wiki HTML by
:func:`article_html` (called by the page producer, so the result is part of the page's inputs), which points links
at our pages when the article exists here and at mtgwiki.com otherwise (``CR:708.4``, ``総合ルール#601.4`` and Wisdom
Guild rule and term URLs at our rule and term pages), links rule numbers, and drops anything that would make the browser
fetch from another site.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote, urlsplit

from ingest.wgurl import INDEX, RULE, TERM, wisdom_guild_target
from ingest.wikititle import WIKI_HOSTS, parse_wiki_href
from kb import rulenum
from kb.codedigest import tree_digest
from kb.model import REF_RULE
from kb.site.gather import MTGWIKI
from kb.urls.paths import encoded_target, href, relative_prefix

if TYPE_CHECKING:
    from jinja2.runtime import Context

    from kb.site.contexts import LinkContext, Segment, TocItem
    from kb.site.page import Page
    from kb.site.records import Mention


def templates_folder() -> Path:
    """``site_templates/`` of the source checkout (or an editable install), else the copy a wheel installs under
    ``<prefix>/share/kb/site_templates`` (see pyproject.toml), for the environment's or the user's prefix."""
    import sysconfig

    checkout = Path(__file__).resolve().parent.parent.parent / "site_templates"
    installed = [Path(sysconfig.get_path("data", scheme)) / "share" / "kb" / "site_templates"
                 for scheme in (sysconfig.get_default_scheme(), sysconfig.get_preferred_scheme("user"))]
    return next((folder for folder in (checkout, *installed) if (folder / "base.html").is_file()), checkout)


TEMPLATES = templates_folder()


ENCODED_TARGETS = 1 << 18  # targets whose percent-encoding a renderer keeps (more than a large site's pages and anchors)


class Renderer:
    def __init__(self, templates: Path = TEMPLATES):
        from jinja2 import (
            Environment,
            FileSystemBytecodeCache,
            FileSystemLoader,
            StrictUndefined,
            pass_context,
            select_autoescape,
        )

        self.templates = templates
        # compiled templates are cached in a private per-user temporary folder: compiling them costs more than
        # rendering the few pages of a small rebuild in a fresh process (each `kb build`)
        self.env = Environment(loader=FileSystemLoader(templates), autoescape=select_autoescape(["html", "xml"]),
                               undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                               bytecode_cache=FileSystemBytecodeCache())
        # a target's encoding, once per renderer: the pages of a build link the same targets thousands of times
        self.encoded = lru_cache(maxsize=ENCODED_TARGETS)(encoded_target)
        encoded = self.encoded

        # every filter writing a link reads the page's relative prefix from the context (render sets it, once a page)
        @pass_context
        def rel(ctx: Context, target: str) -> str:
            return ctx["page_root"] + encoded(target)

        @pass_context
        def linked(ctx: Context, segments: list[Segment]) -> str:
            return self.linked(ctx["page_root"], segments)

        @pass_context
        def absolute(ctx: Context, target: str) -> str:
            return ctx["base_url"] + encoded(target)

        @pass_context
        def cited_items(ctx: Context, items: list[tuple[str, str]]) -> str:
            return self.link_items(ctx["page_root"], items)

        @pass_context
        def link_items(ctx: Context, items: list[LinkContext]) -> str:
            return self.link_items(ctx["page_root"], [(i["url"], i["label"]) for i in items])

        @pass_context
        def toc_items(ctx: Context, items: list[TocItem]) -> str:
            return self.toc_items(ctx["page_root"], items)

        @pass_context
        def mention_items(ctx: Context, items: list[Mention]) -> str:
            return self.mention_items(ctx["page_root"], items)

        @pass_context
        def term_items(ctx: Context, items: list[dict[str, Any]]) -> str:
            return self.term_items(ctx["page_root"], items)

        @pass_context
        def card_items(ctx: Context, items: list[dict[str, Any]]) -> str:
            return self.card_items(ctx["page_root"], items)

        self.env.filters.update(rel=rel, linked=linked, absolute=absolute, jdate=japanese_date, cited_items=cited_items,
                                link_items=link_items, toc_items=toc_items, mention_items=mention_items,
                                term_items=term_items, card_items=card_items)
        self.template_hash = templates_hash(templates)

    @classmethod
    def for_templates(cls, templates: Path = TEMPLATES) -> Renderer:
        """A renderer for ``templates``, reused while they are unchanged (compiling them costs more than rendering the
        few pages of a small rebuild)."""
        digest = templates_hash(templates)
        renderer = _RENDERERS.get(templates)
        if renderer is None or renderer.template_hash != digest:
            renderer = _RENDERERS[templates] = cls(templates)
        return renderer

    def render(self, page: Page, template_vars: dict[str, object]) -> str:
        """The page's file, without control characters (a NUL or an escape in a stored text is no text to show)."""
        variables = {"base_url": None, **template_vars, **page.context}
        return without_controls(self.env.get_template(page.template).render(
            page_path=page.path, page_root=relative_prefix(page.path), page=page, **variables))

    def href(self, root: str, target: str) -> str:
        """:func:`kb.urls.paths.href` from the page whose :func:`~kb.urls.paths.relative_prefix` is ``root``, the
        target's encoding memoised. No character in it needs HTML escaping (see :func:`~kb.urls.paths.href`)."""
        return root + self.encoded(target)

    def linked(self, root: str, segments: list[Segment]) -> str:
        """Linked text (the ``linked`` filter) on the page whose relative prefix is ``root``."""
        from markupsafe import Markup, escape

        out = []
        for seg in segments:
            if isinstance(seg, str):
                out.append(str(escape(seg)).replace("\n", "<br>\n"))
                continue
            text, target, kind = seg
            if target is None:
                out.append(f'<span class="unresolved" title="未収録">{escape(text)}</span>')
                continue
            url = target if target.startswith("https://") else self.href(root, target)
            out.append(f'<a class="ref ref-{escape(kind)}" href="{escape(url)}">{escape(text)}</a>')
        return Markup("".join(out))

    # The long lists of links, each item as the template wrote it with ``{{ url|rel }}`` and ``{{ text }}``: an href
    # needs no escaping, the texts are escaped by markupsafe (what autoescape calls), a list's texts at once
    # (:func:`escaped`), the targets' encodings mapped (no call per item from Python).

    def hrefs(self, root: str, targets: Iterable[str]) -> list[str]:
        """:meth:`href` of each target."""
        return [root + url for url in map(self.encoded, targets)]

    def link_items(self, root: str, items: Sequence[tuple[str, str] | list[str]]) -> str:
        """``<li><a href="…">label</a></li>`` for each (url, label): the items citing a rule or term, the indexes."""
        from markupsafe import Markup

        if not items:
            return Markup("")
        urls, labels = zip(*items, strict=True)
        return Markup("".join([f'<li><a href="{url}">{label}</a></li>'
                               for url, label in zip(self.hrefs(root, urls), escaped(labels), strict=True)]))

    def toc_items(self, root: str, items: list[TocItem]) -> str:
        """A page's contents: each line's link, level and hint."""
        from markupsafe import Markup

        lines = zip(self.hrefs(root, [t["url"] for t in items]), escaped([t["label"] for t in items]),
                    escaped([t["level"] for t in items]), escaped([t["hint"] for t in items]), items, strict=True)
        return Markup("".join([f'<li class="toc-level-{level}"><a href="{url}">{label}</a>'
                               + (f' <span class="toc-hint">{hint}</span>' if t["hint"] else "") + "</li>"
                               for url, label, level, hint, t in lines]))

    def mention_items(self, root: str, items: list[Mention]) -> str:
        """A card's mentions: each one's link and the sentence around the card's name."""
        from markupsafe import Markup

        texts = [escaped([m[key] for m in items]) for key in ("label", "before", "name", "after")]
        lines = zip(self.hrefs(root, [m["url"] for m in items]), *texts, strict=True)
        return Markup("".join([f'<li><a href="{url}">{label}</a><p class="mention">{before}<mark>{name}</mark>{after}'
                               "</p></li>" for url, label, before, name, after in lines]))

    def term_items(self, root: str, items: list[dict[str, Any]]) -> str:
        """A glossary index row's terms, each with its English name when it has one."""
        from markupsafe import Markup

        lines = zip(self.hrefs(root, [t["url"] for t in items]), escaped([t["label"] for t in items]),
                    escaped([t["english"] for t in items]), items, strict=True)
        return Markup("".join([f'<li><a href="{url}">{label}</a>'
                               + (f' <span class="en-name" lang="en">{english}</span>' if t["english"] else "")
                               + "</li>" for url, label, english, t in lines]))

    def card_items(self, root: str, items: list[dict[str, Any]]) -> str:
        """The cards index: each card's link, English name (when another) and count of mentions."""
        from markupsafe import Markup

        lines = zip(self.hrefs(root, [c["url"] for c in items]), escaped([c["label"] for c in items]),
                    escaped([c["english"] for c in items]), escaped([c["mentions"] for c in items]), items,
                    strict=True)
        return Markup("".join([f'<li><a class="ref ref-card" href="{url}">{label}</a>'
                               + (f' <span class="en-name" lang="en">{english}</span>'
                                  if c["english"] and c["english"] != c["label"] else "")
                               + f"（{mentions}）</li>" for url, label, english, mentions, c in lines]))


def escaped(values: Sequence[object]) -> list[str]:
    """``str(markupsafe.escape(value))`` of each value — with one call of escape for them all when they are plain
    strings with no NUL: escaping replaces characters one by one, and the NUL joining them is none it replaces."""
    from markupsafe import escape

    if set(map(type, values)) == {str}:
        joined = "\0".join(values)  # type: ignore[arg-type]
        if joined.count("\0") == len(values) - 1:
            return str(escape(joined)).split("\0")
    return [str(escape(value)) for value in values]


_ISO_DATE = re.compile(r"(\d{4})-(\d\d)-(\d\d)")


def japanese_date(iso: str | None) -> str:
    """``2026-01-16`` → ``2026年1月16日`` (the ``jdate`` filter); anything else as it is."""
    m = _ISO_DATE.fullmatch(iso or "")
    return f"{m[1]}年{int(m[2])}月{int(m[3])}日" if m else iso or ""


_RENDERERS: dict[Path, Renderer] = {}
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def without_controls(text: str) -> str:
    """``text`` without C0 and C1 control characters (but tab, line feed and carriage return): what a page or a
    search result shows of a stored text (a NUL or an escape sequence is no text to show)."""
    return _CONTROL.sub("", text) if _CONTROL.search(text) else text


def templates_hash(templates: Path) -> str:
    """A hash of every file under ``templates`` (names and bytes): with :func:`kb.codedigest.code_digest`, what
    renders a page."""
    return tree_digest(templates, [path for path in templates.rglob("*") if path.is_file()])[:16]


_RULE_IN_TEXT = re.compile(rf"(?<![\d.])({rulenum.RULE}{rulenum.LETTER}?)(?!\d)")


def article_html(html: str, page_path: str, site_pages: dict[str, tuple[str, str]], rule_urls: dict[str, str]) -> str:
    """Article HTML for the page at ``page_path``, through the one sanitiser (:mod:`kb.sanitize`): MTG Wiki links go to
    our page of what they name when the site has it (``site_pages``: name → (site path, link kind): articles, glossary
    terms, cards), else to mtgwiki.com; links naming a rule (``CR:708.4``, ``総合ルール#601.4``, a Wisdom Guild rule
    URL) go to the rule when ``rule_urls`` has it, Wisdom Guild term URLs to our term; in-page links (sections,
    footnotes) stay when the article has the anchor; rule numbers in the text link to the rule (``rule_urls``).
    Nothing in it fetches from elsewhere."""
    from markupsafe import escape

    from ingest.htmltree import children_html, html_fragment
    from kb.sanitize import sanitize_html

    root = html_fragment(sanitize_html(html))
    ids = {el.get("id") for el in root.iter() if isinstance(el.tag, str) and el.get("id")}
    for a in list(root.iter("a")):
        raw = a.get("href")
        if raw is None:
            continue
        if raw.startswith("#"):
            if unquote(raw[1:]) in ids:
                a.set("href", "#" + unquote(raw[1:]))
            else:
                a.drop_tag()  # an anchor this article does not have: plain text
            continue
        target, kind = _wiki_href(page_path, raw, site_pages, rule_urls)
        a.set("href", target)
        if kind:
            a.set("class", f"ref ref-{kind}")
        elif target.startswith(("http:", "https:")):
            a.set("rel", "noopener")
    for text_holder, attr in [(el, a) for el in root.iter() if isinstance(el.tag, str) for a in ("text", "tail")]:
        parent = text_holder.getparent()
        inside_link = text_holder.tag == "a" if attr == "text" else parent is not None and parent.tag == "a"
        text = getattr(text_holder, attr)
        if inside_link or not text or not _RULE_IN_TEXT.search(text):
            continue
        _link_rules(text_holder, attr, text, page_path, rule_urls)
    return str(escape(root.text or "")) + children_html(root)


def _link_rules(holder: Any, attr: str, text: str, page_path: str, rule_urls: dict[str, str]) -> None:
    from ingest.htmltree import insert_links

    insert_links(holder, attr, [(m.start(), m.end(), m.group(1),
                                 {"class": "ref ref-rule", "href": href(page_path, rule_urls[m.group(1)])})
                                for m in _RULE_IN_TEXT.finditer(text) if m.group(1) in rule_urls])


def _wiki_href(page_path: str, raw: str, site_pages: dict[str, tuple[str, str]],
               rule_urls: dict[str, str]) -> tuple[str, str | None]:
    """(href, link kind when it is one of our pages) for a link found in MTG Wiki HTML."""
    ours = _site_target(raw, site_pages, rule_urls)
    if ours:
        return href(page_path, ours[0]), ours[1]
    parts = urlsplit(raw)
    if parts.scheme in ("http", "https") and parts.hostname not in WIKI_HOSTS:
        return raw, None
    if parts.scheme and parts.scheme not in ("http", "https", "mailto"):
        return MTGWIKI, None  # javascript: and the like
    if parts.scheme == "mailto":
        return raw, None
    title = None
    if parts.path.startswith("/wiki/"):
        title = unquote(parts.path[len("/wiki/"):])
    elif "title=" in parts.query:
        title = unquote(parts.query.split("title=", 1)[1].split("&", 1)[0])
    elif not parts.netloc and parts.path and not parts.path.startswith("/"):
        title = unquote(parts.path)
    if title is None:
        return MTGWIKI, None
    title = title.replace("_", " ")
    ours = site_pages.get(title) or site_pages.get(title[:1].upper() + title[1:])
    if ours:
        return href(page_path, ours[0]), ours[1]
    anchor = f"#{parts.fragment}" if parts.fragment else ""
    return MTGWIKI + quote(title.replace(" ", "_"), safe="/:()") + anchor, None


def _site_target(raw: str, site_pages: dict[str, tuple[str, str]],
                 rule_urls: dict[str, str]) -> tuple[str, str | None] | None:
    """(site path, link kind) of the rule, term or rules index a link names by MTG Wiki's ``CR:`` grammar
    (:func:`ingest.wikititle.parse_wiki_href`) or as a Wisdom Guild URL (:mod:`ingest.wgurl`), when the site has it."""
    wg = wisdom_guild_target(raw)
    if wg is not None:
        if wg.kind == RULE and wg.name in rule_urls:
            return rule_urls[wg.name], "rule"
        if wg.kind == TERM and site_pages.get(wg.name, ("", ""))[1] == "term":
            return site_pages[wg.name]
        return ("index.html", None) if wg.kind == INDEX else None
    parts = urlsplit(raw)
    if parts.hostname not in (None, *WIKI_HOSTS):
        return None
    link = parse_wiki_href(raw)
    if link is None:
        return None
    if link.kind == REF_RULE:
        number = rulenum.normalize(link.target)
        return (rule_urls[number], "rule") if number in rule_urls else None
    if link.target == "総合ルール" and not link.fragment:  # MTG Wiki's page of the rules: the site is that
        return "index.html", None
    return None


OUTLINE_LEVELS = {"h2": 1, "h3": 2}


def article_outline(html: str, page_path: str) -> list[TocItem]:
    """The contents of an article rendered by :func:`article_html`: its ``h2`` and ``h3`` headings that have an id,
    in order, each a link to its anchor on ``page_path``."""
    from ingest.htmltree import html_fragment

    if not html.strip():
        return []
    root = html_fragment(html)
    return [{"url": f"{page_path}#{el.get('id')}", "label": " ".join(el.text_content().split()), "hint": "",
             "level": OUTLINE_LEVELS[el.tag]}
            for el in root.iter("h2", "h3") if el.get("id") and el.text_content().strip()]
