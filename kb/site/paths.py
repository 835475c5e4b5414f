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

``<name>`` is :func:`safe_name` of the title: a reversible encoding (hence two titles never share a file) that keeps
lower-case ASCII letters, digits and Japanese/CJK characters, writes a space as ``-``, an upper-case ASCII letter
``X`` as ``_x`` and any other character as ``~<hex code point>_``. The result has no character that is special on
Linux, macOS or Windows, never differs from another name only by letter case or Unicode normalisation, is never a
Windows device name (CON, NUL, COM1 …) and is at most :data:`MAX_NAME_BYTES` UTF-8 bytes: a longer one is cut and ends
with ``~~`` and a hash of the whole title (the one place the encoding relies on a hash; ``~~`` appears nowhere else).
"""

from __future__ import annotations

import hashlib
import re
from urllib.parse import quote

from kb import rulenum
from kb.model import RULE_KINDS

MAX_NAME_BYTES = 150  # leaves room for '.html' and a folder within every file system's 255-byte name limit
_WINDOWS_DEVICES = re.compile(r"^(con|prn|aux|nul|com[0-9]|lpt[0-9])$")
_PREFIX_FOLDERS = {"gl": "glossary", "wiki": "wiki", "note": "notes", "card": "cards"}


def _kept(ch: str) -> bool:
    """Characters written as themselves: caseless or lower-case, precomposed, with no combining marks."""
    o = ord(ch)
    return ("a" <= ch <= "z" or "0" <= ch <= "9"
            or 0x3041 <= o <= 0x3096  # hiragana (not the combining voiced marks 3099/309A)
            or 0x309D <= o <= 0x309F or 0x30A1 <= o <= 0x30FF  # katakana, ・ ー
            or o in (0x3005, 0x3006, 0x3007)  # 々 〆 〇
            or 0x3400 <= o <= 0x4DBF or 0x4E00 <= o <= 0x9FFF)  # CJK ideographs (no compatibility forms)


def safe_name(title: str) -> str:
    """File-name stem for ``title``: portable, injective, readable for Japanese titles."""
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
    if _WINDOWS_DEVICES.match(name):  # 'con' → '~63_on': still decodes to 'con', no longer a device name
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


def page_for_id(node_id: str) -> str:
    """Path of the page showing the node with this id (no anchor)."""
    prefix, _, name = node_id.partition(":")
    if prefix == "cr":
        return section_page(name)
    folder = _PREFIX_FOLDERS.get(prefix, "nodes")
    if folder == "nodes":
        name = node_id
    return f"{folder}/{safe_name(name)}.html"


def url_for(node_key) -> str:
    """Canonical site-relative URL of a node (a :class:`kb.store.NodeKey`, or anything with ``.id``):
    ``cr/601.html#601.2f``, ``glossary/唱える.html`` … (unescaped; see :func:`href`)."""
    node_id = node_key.id
    prefix, _, name = node_id.partition(":")
    if prefix == "cr":
        parsed = rulenum.parse(name)
        if parsed is not None and parsed.kind in RULE_KINDS[2:]:
            return f"{section_page(name)}#{rule_anchor(name)}"
    return page_for_id(node_id)


def href(from_page: str, target: str) -> str:
    """Relative, percent-encoded link from the page at ``from_page`` to ``target`` (both site-relative)."""
    depth = from_page.count("/")
    path, _, anchor = target.partition("#")
    url = "../" * depth + quote(path, safe="/~._-")
    return f"{url}#{quote(anchor, safe='~._-')}" if anchor else url
