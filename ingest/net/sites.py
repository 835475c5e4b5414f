"""Site profiles for ``kb fetch``: where a crawl starts, which links it follows, what it accepts, how its pages parse.

A profile turns the command-line arguments into seed :class:`Target` s and, for each fetched body, names the further
targets to fetch (:meth:`SiteProfile.discover`). Every URL a profile produces stays under the crawl's base URL.
Profiles never touch the network; :mod:`ingest.net.fetch` does. Pages (role ``page``) are what ``kb ingest --from-cache``
parses, as the source kinds that name the site in :mod:`ingest.kinds`; listings (role ``listing``: an index page, a
category member list) are only
read for their links.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, quote, unquote, urlencode, urljoin, urlsplit, urlunsplit

from ingest.cr_text import file_names_of_version
from ingest.htmltree import html_document
from ingest.wgurl import WG_HOST
from ingest.wikititle import WIKI_HOST, WIKI_HOSTS
from kb import rulenum
from kb.errors import KbError

PAGE = "page"
LISTING = "listing"
HTML_TYPES = ("text/html", "application/xhtml+xml")


@dataclass(frozen=True)
class Target:
    url: str
    role: str = PAGE
    depth: int = 0
    fallbacks: tuple[str, ...] = ()  # the URLs to try next, in order, when this one is not found (404, 410)
    tried: tuple[str, ...] = ()  # the URLs tried before this one, not found


def canonical_url(url: str) -> str:
    """One spelling per URL: no fragment, lower-case scheme and host, percent-encoding normalised, and no dot segments
    (``/docs/%2e%2e/x`` is ``/x``, where a server takes it), so a URL under the base path is there."""
    parts = urlsplit(url.strip())
    path = quote(_without_dot_segments(unquote(parts.path)), safe="/:@!$&'()*+,;=-._~") or "/"
    query = urlencode(parse_qsl(parts.query, keep_blank_values=True), quote_via=quote, safe=":/")
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, query, ""))


def _without_dot_segments(path: str) -> str:
    """RFC 3986's remove_dot_segments for an absolute path: ``.`` dropped, ``..`` drops the segment before it."""
    if not path.startswith("/"):
        return path
    segments = path.split("/")
    kept: list[str] = []
    for i, segment in enumerate(segments):
        if segment in (".", ".."):
            if segment == ".." and len(kept) > 1:
                kept.pop()
            if i == len(segments) - 1:
                kept.append("")  # "/a/.." is the folder "/"
            continue
        kept.append(segment)
    return "/".join(kept)


def normalise_base(base_url: str) -> str:
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise KbError(f"{base_url}: --base-url must be an http(s) URL")
    return canonical_url(base_url if base_url.endswith("/") else base_url + "/")


def under_base(url: str, base: str) -> bool:
    return canonical_url(url).startswith(base)


def html_links(body: bytes, page_url: str, *, container_xpath: str | None = None) -> list[str]:
    """Absolute URLs of the ``<a href>`` links in an HTML body (inside ``container_xpath`` when it matches)."""
    if not body.strip():
        return []
    root = html_document(body, page_url, [])  # a page's warnings are the parser's to give, when it is ingested
    scope = (root.xpath(container_xpath) if container_xpath else None) or [root]
    out = []
    for element in scope:
        for anchor in element.iter("a"):
            href = anchor.get("href")
            if href and not href.startswith(("#", "javascript:", "mailto:")) and "new" not in anchor.get("class", "").split():
                out.append(urljoin(page_url, href))
    return out


def _resolve(arg: str, base: str) -> str:
    url = canonical_url(urljoin(base, arg))
    if not url.startswith(base):
        raise KbError(f"{arg}: outside the crawl's base URL {base}")
    return url


@dataclass(frozen=True)
class SiteProfile:
    name: str
    default_base: str
    html: bool  # pages must be HTML
    description: str

    def seeds(self, base: str, args: list[str]) -> list[Target]:
        return [Target(_resolve(a, base)) for a in args]

    def hosts(self) -> frozenset[str]:
        """The hosts whose URLs are this site's (for a single URL fetched outside a crawl)."""
        return frozenset({urlsplit(self.default_base).netloc})

    def discover(self, target: Target, final_url: str, body: bytes, base: str, max_depth: int | None) -> list[Target]:
        return []

    def reject(self, target: Target, content_type: str) -> str | None:
        """Why a 200 response with this Content-Type is refused, or None when it is acceptable."""
        media = content_type.split(";")[0].strip().lower()
        if target.role == LISTING and media == "application/json":
            return None
        if self.html and media not in HTML_TYPES:
            return f"not an HTML page (Content-Type: {content_type or 'none'})"
        if not self.html and media in HTML_TYPES:
            return f"expected a text file, got an HTML page (Content-Type: {content_type})"
        return None


class WisdomGuild(SiteProfile):
    """The rules viewer: the index ``/cr/`` links the chapter and section pages ``/cr/r/NNN/``."""

    _RULE_PAGE = re.compile(r"cr/r/\d{1,3}/?$")  # chapters and sections; rules (701.34) only when asked for
    _RULE_NUMBER = re.compile(rf"\d{{1,3}}(\.\d+{rulenum.LETTER}?)?")  # also 0 (はじめに), not only rulenum.NUMBER

    def seeds(self, base: str, args: list[str]) -> list[Target]:
        targets = []
        for arg in args or ["cr/"]:
            url = _resolve(f"cr/r/{arg}/" if self._RULE_NUMBER.fullmatch(arg) else arg, base)
            targets.append(Target(url, LISTING if url == base + "cr/" else PAGE))
        return targets

    def discover(self, target: Target, final_url: str, body: bytes, base: str, max_depth: int | None) -> list[Target]:
        if max_depth is not None and target.depth >= max_depth:
            return []
        found = []
        for link in html_links(body, final_url):
            url = canonical_url(link)
            if url.startswith(base) and not urlsplit(url).query and self._RULE_PAGE.search(url):
                found.append(Target(url, PAGE, target.depth + 1))
        return found


# MediaWiki namespaces whose pages are not articles (Japanese and English names).
_WIKI_NAMESPACES = {
    "特別", "special", "ファイル", "file", "画像", "image", "利用者", "user", "トーク", "talk", "テンプレート", "template",
    "ヘルプ", "help", "mediawiki", "mtg wiki", "project", "カテゴリ", "category", "メディア", "media",
}
_CATEGORY_PREFIXES = ("カテゴリ:", "category:")


class MtgWiki(SiteProfile):
    """Articles by title (``/wiki/<title>``); a ``Category:``/``カテゴリ:`` title lists its members via ``api.php``;
    with ``--depth N`` the article links of each page are followed N steps."""

    def hosts(self) -> frozenset[str]:
        return WIKI_HOSTS

    def page_url(self, base: str, title: str) -> str:
        return canonical_url(base + "wiki/" + quote(title.strip().replace(" ", "_"), safe=":/()!,'"))

    def category_url(self, base: str, category: str, cont: str | None = None) -> str:
        params = {"action": "query", "list": "categorymembers", "cmtitle": category, "cmlimit": "500",
                  "cmnamespace": "0", "format": "json"}
        if cont:
            params["cmcontinue"] = cont
        return canonical_url(base + "api.php?" + urlencode(params))

    def seeds(self, base: str, args: list[str]) -> list[Target]:
        out = []
        for arg in args:
            if "://" in arg or arg.startswith("/"):  # a URL: an article, or a category listing (a re-crawl's seed)
                url = _resolve(arg, base)
                out.append(Target(url, LISTING if urlsplit(url).path.endswith("/api.php") else PAGE))
            elif arg.lower().startswith(_CATEGORY_PREFIXES):
                out.append(Target(self.category_url(base, arg.strip()), LISTING))
            else:
                out.append(Target(self.page_url(base, arg)))
        return out

    def title_of(self, url: str, base: str) -> str | None:
        """The article title a URL names, or None for anything that is not an article link."""
        if not url.startswith(base + "wiki/") or urlsplit(url).query:
            return None
        title = unquote(url[len(base + "wiki/"):])
        namespace = title.split(":", 1)[0].lower() if ":" in title else None
        if namespace and (namespace in _WIKI_NAMESPACES or namespace.endswith(("トーク", " talk"))):
            return None
        return title

    def discover(self, target: Target, final_url: str, body: bytes, base: str, max_depth: int | None) -> list[Target]:
        if target.role == LISTING:
            return self._category_members(target, body, base)
        if max_depth is None or target.depth >= max_depth:
            return []
        found = []
        for link in html_links(body, final_url, container_xpath="//*[@id='mw-content-text']"):
            title = self.title_of(canonical_url(link), base)
            if title:
                found.append(Target(self.page_url(base, title), PAGE, target.depth + 1))
        return found

    def _category_members(self, target: Target, body: bytes, base: str) -> list[Target]:
        try:
            data = json.loads(body)
        except ValueError:
            raise KbError(f"{target.url}: the category listing is not JSON") from None
        found = [Target(self.page_url(base, m["title"]), PAGE, target.depth)
                 for m in data.get("query", {}).get("categorymembers", []) if m.get("ns", 0) == 0]
        cont = data.get("continue", {}).get("cmcontinue")
        if cont:
            category = dict(parse_qsl(urlsplit(target.url).query))["cmtitle"]
            found.append(Target(self.category_url(base, category, cont), LISTING, target.depth))
        return found


class Mjmj(SiteProfile):
    """The Japanese CR files ``JPN_CR_YYYYMMDD_N.txt`` in the folder of the base URL (``--base-url`` names host and
    folder): give a version (``20260116`` = ``20260116.0``, ``20250919.1``, or the id ``kb versions`` shows:
    ``20250726.0``, whose file is ``JPN_CR_20250725_0.txt`` — the names of the dates a week either side are tried in
    turn, :func:`ingest.cr_text.file_names_of_version`), a file name (``JPN_CR_20250919_1.txt``,
    ``JPN_CR_20250919_1.rb.html``) or a URL on the same host."""

    _VERSION = re.compile(r"(\d{8})(?:[._](\d+))?")

    def seeds(self, base: str, args: list[str]) -> list[Target]:
        if not args:
            raise KbError("mjmj: give a CR version (e.g. 20260116 or 20250919.1), a JPN_CR_*.txt name or its URL")
        targets = []
        for arg in args:
            if names := file_names_of_version(arg) if self._VERSION.fullmatch(arg.strip()) else []:
                # the id kb versions shows (20250726.0) may be in a file of a nearby date (JPN_CR_20250725_0.txt)
                urls = [_resolve(name, base) for name in names]
                targets.append(Target(urls[0], fallbacks=tuple(urls[1:])))
            else:
                targets.append(Target(self._url(base, arg.strip())))
        return targets

    def _url(self, base: str, arg: str) -> str:
        if "://" not in arg:
            return _resolve(arg, base)
        url = canonical_url(arg)
        host = urlunsplit(urlsplit(base)[:2] + ("/", "", ""))
        if not url.startswith(host):
            raise KbError(f"{arg}: not on the crawl's host {host} (give --base-url)")
        return url

    def reject(self, target: Target, content_type: str) -> str | None:
        media = content_type.split(";")[0].strip().lower()
        if urlsplit(target.url).path.endswith((".html", ".htm")):  # the ruby edition JPN_CR_*.rb.html
            return None if media in HTML_TYPES else f"expected an HTML page (Content-Type: {content_type or 'none'})"
        return super().reject(target, content_type)


class MtgJp(SiteProfile):
    """mtg-jp.com pages by URL (or a path under the base URL): release-notes articles and the official rules
    document ``/gameplay/rules/docs/<id>/`` (told apart by their content when ingested)."""

    def seeds(self, base: str, args: list[str]) -> list[Target]:
        if not args:
            raise KbError("mtg-jp: give the URL of each release-notes article or rules document")
        return super().seeds(base, args)


PROFILES: dict[str, SiteProfile] = {
    p.name: p for p in (
        WisdomGuild("wisdom-guild", f"http://{WG_HOST}/", True,
                    "Wisdom Guild rules viewer: /cr/ and the chapter and section pages /cr/r/NNN/"),
        MtgWiki("mtgwiki", f"http://{WIKI_HOST}/", True,
                "MTG Wiki articles by title, Category:NAME members, links followed to --depth N"),
        Mjmj("mjmj", "https://mjmj.info/data/docs/", False, "the Japanese CR file JPN_CR_YYYYMMDD_N.txt of a version"),
        MtgJp("mtg-jp", "https://mtg-jp.com/", True, "mtg-jp.com release notes and rules documents by URL"),
    )
}


def profile_for_url(url: str) -> SiteProfile | None:
    host = urlsplit(url).netloc.lower()
    return next((p for p in PROFILES.values() if host in p.hosts()), None)
