"""The MTG Wiki's title grammar: its hosts and namespaces, titles ↔ URLs, heading anchors, what an href points at,
and ``日本語名/English`` card titles — MediaWiki's rules (``_`` ↔ space, percent-encoding, first letter upper-cased,
legacy ``.E5.AE.9A`` heading anchors) as pure functions of strings, for the parsers, the linker, the site and the crawl.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from urllib.parse import parse_qs, quote, unquote, urlsplit

from kb import rulenum
from kb.model import REF_CATEGORY, REF_EXTERNAL, REF_REDLINK, REF_RULE, REF_WIKI

WIKI_HOST = "mtgwiki.com"  # where the wiki lives: the crawl's default base
# links to these hosts are the wiki's own (wiki.mtg-jp.com was its former home)
WIKI_HOSTS = frozenset({WIKI_HOST, "www.mtgwiki.com", "wiki.mtg-jp.com"})
CATEGORY_NAMESPACES = ("カテゴリ", "Category")
SKIPPED_NAMESPACES = ("特別", "Special", "ファイル", "File", "画像", "Image", "テンプレート", "Template", "ヘルプ", "Help",
                      "MediaWiki", "メディア", "Media")


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

    def dotted(m: re.Match[str]) -> str:
        raw = bytes.fromhex(m.group().replace(".", ""))
        if any(b < 0x80 and (chr(b).isalnum() or chr(b) in _ANCHOR_SAFE) for b in raw):
            return m.group()
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return m.group()

    return _DOTTED.sub(dotted, unquote(anchor)).replace("_", " ")


def element_id(anchor: str) -> str:
    """The id a decoded heading anchor is written as in an article's stored HTML: ``_`` for spaces (ids hold none)."""
    return anchor.replace(" ", "_")


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
    if title == "総合ルール" and fragment and (number := rulenum.normalize(fragment)):
        return WikiLink(REF_RULE, number)
    return WikiLink(kind, title, fragment)


CARD_NAME_RE = re.compile(r"^(?P<ja>[^/:]*[^\x00-\x7f][^/]*?)\s*/\s*(?P<en>[A-Za-z0-9\"'][^/]*?)\s*$")


def split_card_name(name: str) -> tuple[str, str | None] | None:
    """``ドライアドの東屋/Dryad Arbor`` → (``ドライアドの東屋``, ``Dryad Arbor``); None if it is not such a pair."""
    m = CARD_NAME_RE.match(name.strip())
    return (m.group("ja").strip(), m.group("en").strip()) if m else None
