"""Where every node lives on the static site: safe file names from titles and ``url_for(node_key)``.

URL scheme (paths relative to the site root; every page is one folder deep or at the root, so pages link to each
other with ``../`` and the site works under any sub-path and from ``file://``):

    index.html                     home: rules version, dates, chapters
    cr/6.html                      chapter 6
    cr/601.html                    section 601; every rule in it anchored by its number: cr/601.html#601.2f
    cr/601.2f.html                 one rule (or subrule) on its own page
    glossary/index.html            glossary in 五十音 order
    glossary/<name>.html           one glossary term        (id ``gl:<term>``)
    wiki/<name>.html               one MTG Wiki article     (id ``wiki:<title>``)
    notes/<name>.html              one release note         (id ``note:<...>``)
    cards/<name>.html              one card                 (id ``card:<name>``)
    search.html, 404.html, sitemap.xml, static/…, search/… (the static search index)

``url_for(key)`` gives the canonical place of a node: the section page anchor for rules and subrules (the rule in
context), the page itself for everything else. ``rule_page(number)`` is the rule's own page. The site shows one
CR version, so the version in a key does not change its URL.

``<name>`` is :func:`safe_name` of the title, made to be read and typed: Japanese titles as written
(``glossary/唱える.html``), English titles as lower-case words joined by ``-`` (a hyphen of the title doubled:
``cards/lurrus-of-the-dream--den.html``), ``:`` as ``_`` (``notes/ゼンディカーの夜明け_上陸.html``). Such a *bare* name
is used only when it stands for exactly one title — the one :func:`title_of_name` reads back from it (words
capitalised, short English words such as ``of``/``the`` in lower case: ``release-to-the-wind`` → ``Release to the
Wind``); any other title (other capitals or punctuation: ``唱える/Cast``, ``Sigarda's Aid``) gets its words followed by
``~`` and a hash of the whole title (``sigardas-aid~b6f923d7``, ``唱える-cast~29b6a926``), and so does a title whose
name would be a Windows device name (CON, NUL, COM1 …), a folder's ``index``, or longer than :data:`MAX_NAME_BYTES`
UTF-8 bytes (cut first).
Hence two titles never share a file (a bare name has one title; a hashed one has ``~``, which no bare name has), and
names have no character special on Linux, macOS or Windows, no upper-case letter and no combining mark (so they never
differ from another name only by letter case or Unicode normalisation).

The previous scheme (``_state~2d__based-_actions``), kept by :func:`legacy_name` only to find the old URLs, is
redirected to the new ones by small HTML pages (:func:`legacy_page_for_id`, written by
:func:`kb.site.pages.redirect_pages`), so links out there keep working; so is the name a person would type
(:func:`typed_name`: ``glossary/state-based-actions.html`` → ``glossary/state--based-actions.html``) when only one
title of the folder has it.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable
from functools import lru_cache
from typing import Protocol
from urllib.parse import quote

from kb import rulenum
from kb.ids import RULE_PREFIX, split_id
from kb.model import RULE_KINDS

MAX_NAME_BYTES = 150  # leaves room for '.html' and a folder within every file system's 255-byte name limit
HASH_CHARS = 8  # hex digits of the title's hash in a hashed name
_WINDOWS_DEVICES = re.compile(r"^(con|prn|aux|nul|com[0-9]|lpt[0-9])$")
_RESERVED = frozenset(["index"])  # every folder's index page
_PREFIX_FOLDERS = {"gl": "glossary", "wiki": "wiki", "note": "notes", "card": "cards"}
# English words a title keeps in lower case unless first (how card names and glossary entries are written)
SMALL_WORDS = frozenset({"a", "an", "and", "as", "at", "but", "by", "for", "from", "in", "into", "nor", "of", "on", "or",
                         "over", "the", "to", "upon", "with"})
_WORD = re.compile(r"(?:^|(?<=[ \-]))[a-z][a-z0-9]*")


def _kept(ch: str) -> bool:
    """Characters written as themselves: caseless or lower-case, precomposed, with no combining marks."""
    o = ord(ch)
    return ("a" <= ch <= "z" or "0" <= ch <= "9"
            or 0x3041 <= o <= 0x3096  # hiragana (not the combining voiced marks 3099/309A)
            or 0x309D <= o <= 0x309F or 0x30A1 <= o <= 0x30FF  # katakana, ・ ー
            or o in (0x3005, 0x3006, 0x3007)  # 々 〆 〇
            or 0x3400 <= o <= 0x4DBF or 0x4E00 <= o <= 0x9FFF)  # CJK ideographs (no compatibility forms)


# a title of kept characters, A–Z, spaces, hyphens and colons only (nearly every one) is mapped by one translate
_PLAIN_TITLE = re.compile("[a-zA-Z0-9 :\\-\u3041-\u3096\u309d-\u309f\u30a1-\u30ff\u3005-\u3007\u3400-\u4dbf\u4e00-\u9fff]*")
_PLAIN_MAP = str.maketrans({**{chr(c): chr(c + 32) for c in range(ord("A"), ord("Z") + 1)}, " ": "-", "-": "--", ":": "_"})


def _words(title: str) -> str:
    """The readable part of a name: kept characters, A–Z in lower case, accented Latin letters as their base letter,
    space → ``-``, ``-`` → ``--``, ``:`` → ``_``; everything else left out."""
    return title.translate(_PLAIN_MAP) if _PLAIN_TITLE.fullmatch(title) else words_by_character(title)


def words_by_character(title: str) -> str:
    """:func:`_words` one character at a time (the rule itself; ``_words`` maps a plain title at once)."""
    out = []
    for ch in title:
        if _kept(ch):
            out.append(ch)
        elif "A" <= ch <= "Z":
            out.append(ch.lower())
        elif ch == " ":
            out.append("-")
        elif ch == "-":
            out.append("--")
        elif ch == ":":
            out.append("_")
        else:
            base = unicodedata.normalize("NFKD", ch)[:1]
            if base.isascii() and base.isalnum():
                out.append(base.lower())
    return "".join(out)


def title_of_name(name: str) -> str:
    """The one title a bare name stands for (see the module docstring)."""
    text = name.replace("--", "\0").replace("-", " ").replace("\0", "-").replace("_", ":")

    def capital(m: re.Match) -> str:
        word = m.group()
        small = m.start() > 0 and text[m.start() - 1] == " " and word in SMALL_WORDS
        return word if small else word[0].upper() + word[1:]

    return _WORD.sub(capital, text)


@lru_cache(maxsize=65536)
def safe_name(title: str) -> str:
    """File-name stem for ``title``: readable, portable, injective (see the module docstring)."""
    words = _words(title)
    if (title and len(words.encode()) <= MAX_NAME_BYTES and not _WINDOWS_DEVICES.match(words)
            and words not in _RESERVED and title_of_name(words) == title):
        return words
    digest = hashlib.sha256(title.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_CHARS]
    head = _loose_words(title).encode()[: MAX_NAME_BYTES - HASH_CHARS - 1].decode(errors="ignore")
    return f"{head}~{digest}"


@lru_cache(maxsize=65536)
def typed_name(title: str) -> str | None:
    """The name a person would type for ``title`` — lower-case words with single hyphens, no punctuation
    (``state-based-actions``, ``sigardas-aid``) — when it is not a device name, an index page or too long; the site
    redirects it to the title's page when no other title claims it (:func:`kb.site.pages.redirect_pages`)."""
    name = _loose_words(title)
    if not name or _WINDOWS_DEVICES.match(name) or name in _RESERVED or len(name.encode()) > MAX_NAME_BYTES:
        return None
    return name


def _loose_words(title: str) -> str:
    """The readable part of a hashed name: kept characters and letters as in :func:`_words`, apostrophes left out,
    any other run of characters as one ``-``."""
    out = []
    for ch in title:
        if ch in "'’":
            continue
        word = _words(ch) if ch not in " -:" else ""
        out.append(word or "-")
    return re.sub(r"-{2,}", "-", "".join(out)).strip("-")


def legacy_name(title: str) -> str:
    """The name the previous URL scheme gave ``title`` (a reversible escape: ``State-Based Actions`` →
    ``_state~2d__based-_actions``), used only to redirect those URLs."""
    if title == "":
        return "~_"
    out = []
    for ch in title:
        if _kept(ch):
            out.append(ch)
        elif ch == " ":
            out.append("-")
        elif "A" <= ch <= "Z":
            out.append("_" + ch.lower())
        else:
            out.append(f"~{ord(ch):x}_")
    name = "".join(out)
    if _WINDOWS_DEVICES.match(name):
        name = f"~{ord(name[0]):x}_{name[1:]}"
    if len(name.encode()) > MAX_NAME_BYTES:
        digest = hashlib.sha256(title.encode("utf-8", "surrogatepass")).hexdigest()[:24]
        head = name.encode()[: MAX_NAME_BYTES - 26].decode(errors="ignore")
        name = f"{head}~~{digest}"
    return name


def rule_page(number: str) -> str:
    """The rule's own page: ``cr/601.2f.html``."""
    return f"cr/{number}.html"


def section_page(number: str) -> str:
    """The page a rule is shown on in context: its section (``cr/601.html``), or the chapter page for a chapter."""
    parsed = rulenum.parse(number)
    if parsed is None or parsed.section is None:
        return f"cr/{number}.html"
    return f"cr/{parsed.section}.html"


def rule_anchor(number: str) -> str:
    """Element id of a rule on its section page (the rule number itself: ``601.2f``)."""
    return number


def page_for_id(node_id: str, *, naming: Callable[[str], str] = safe_name) -> str:
    """Path of the page showing the node with this id (no anchor)."""
    prefix, name = split_id(node_id)
    if prefix == RULE_PREFIX:
        return section_page(name)
    folder = _PREFIX_FOLDERS.get(prefix, "nodes")
    if folder == "nodes":
        name = node_id
    return f"{folder}/{naming(name)}.html"


def typed_page_for_id(node_id: str) -> str | None:
    """Where :func:`typed_name` would put the node's page (None when it has no such name)."""
    prefix, name = split_id(node_id)
    typed = typed_name(name if prefix in _PREFIX_FOLDERS else node_id)
    return page_for_id(node_id, naming=lambda _: typed) if typed and prefix != RULE_PREFIX else None


def legacy_page_for_id(node_id: str) -> str:
    """Where the previous URL scheme put the node's page (see :func:`legacy_name`)."""
    return page_for_id(node_id, naming=legacy_name)


class HasId(Protocol):
    """A stored node's key (:class:`kb.store.NodeKey`), a site entry: anything with a node id."""

    @property
    def id(self) -> str: ...


def url_for(node_key: HasId) -> str:
    """Canonical site-relative URL of a node (a :class:`kb.store.NodeKey`, or anything with ``.id``):
    ``cr/601.html#601.2f``, ``glossary/唱える.html`` … (unescaped; see :func:`href`)."""
    node_id = node_key.id
    prefix, name = split_id(node_id)
    if prefix == RULE_PREFIX:
        parsed = rulenum.parse(name)
        if parsed is not None and parsed.kind in RULE_KINDS[2:]:
            return f"{section_page(name)}#{rule_anchor(name)}"
    return page_for_id(node_id)


def href(from_page: str, target: str) -> str:
    """Relative, percent-encoded link from the page at ``from_page`` to ``target`` (both site-relative): the page's
    :func:`relative_prefix` and the target's :func:`encoded_target`. It holds no character HTML escapes (``&<>"'``)."""
    return relative_prefix(from_page) + encoded_target(target)


def relative_prefix(from_page: str) -> str:
    """What leads from the page at ``from_page`` to the site root: ``../`` per folder (``""`` at the root)."""
    return "../" * from_page.count("/")


def encoded_target(target: str) -> str:
    """``target`` (a site-relative path, maybe with ``#anchor``) percent-encoded for an ``href``: ASCII letters,
    digits, ``/~._-``, ``%`` escapes and the one ``#`` — the page-independent part of :func:`href`, which a renderer
    may memoise."""
    path, _, anchor = target.partition("#")
    url = quote(path, safe="/~._-")
    return f"{url}#{quote(anchor, safe='~._-')}" if anchor else url
