"""The link check: every link a page writes must name a file of the site and, with an anchor, an id in it.

:func:`page_links` finds a rendered page's links and ids (kept in the manifest, :mod:`kb.site.manifest`),
:func:`resolve_links` turns its relative links into site files, :func:`check_links` finds the broken ones — only
those that can have changed since the previous build, when it can tell.
"""

from __future__ import annotations

import marshal
import re
from functools import lru_cache
from urllib.parse import unquote, urlsplit

from kb.site.manifest import FileRecord
from kb.site.search_cache import CACHE_DIR

_NO_LINKS = marshal.dumps([])  # the links of a file with none (a search shard), as its record keeps them
_ATTR_RE = re.compile(r'\s(href|src|id)="([^"]*)"')


def page_links(html: str) -> tuple[list[str], list[str]]:
    """(hrefs and srcs, ids) written in ``html`` — what the link check verifies."""
    links: list[str] = []
    ids: list[str] = []
    for attr, value in _ATTR_RE.findall(html):
        (ids if attr == "id" else links).append(value.replace("&amp;", "&").replace("&#34;", '"').replace("&#39;", "'"))
    return links, ids


def resolve_links(path: str, links: list[str]) -> list[str]:
    """The site files (``path#anchor``) the relative links written on the page at ``path`` point at; a link
    climbing above the site root becomes ``../<link>`` (always broken). Outside links are left out."""
    base = path.rpartition("/")[0]
    resolved = []
    for link in links:
        target = _resolve(base, link)
        if target is not None:
            resolved.append(path + target if not target or target[0] == "#" else target)  # an anchor on the page
    return resolved


@lru_cache(maxsize=262144)
def _resolve(base: str, link: str) -> str | None:
    """``link`` written in the folder ``base`` as a site file with its anchor (``""`` for the page itself, then its
    anchor appended by the caller), None for an outside link. A page's links repeat across pages (the chrome, the
    rules a section cites): each (folder, link) is resolved once per process."""
    parts = urlsplit(link)
    if parts.scheme or parts.netloc or link.startswith("/"):
        return None  # outside links are not ours to check (and absolute paths are never written)
    if not parts.path:
        return f"#{unquote(parts.fragment)}" if parts.fragment else ""
    target = _join(base, unquote(parts.path)) or f"../{link}"
    return f"{target}#{unquote(parts.fragment)}" if parts.fragment else target


def check_links(files: dict[str, FileRecord], old_files: dict[str, FileRecord] | None = None,
                old_broken: list[list[str]] | None = None) -> list[tuple[str, str, str]]:
    """Every link written must name a file of the site and, with an anchor, an id in that file: the links that do
    not, as (page, link, what is wrong), in order. Given the previous build's files (a kept file's record is the same
    object in ``files``) and its broken (page, link) pairs: when no file is gone and no rewritten file lost an id,
    only the links broken before and the rewritten files' links that are new or were broken are checked — no other
    can have broken or mended (a link the page had before named a file still there and an id it still has)."""
    ids: dict[str, set[str]] = {}

    def problem(link: str) -> str | None:
        target, _, anchor = link.partition("#")
        if target not in files:
            return "no such page"
        if anchor:
            if target not in ids:
                ids[target] = set(marshal.loads(files[target]["ids"]))
            if anchor not in ids[target]:
                return "no such anchor"
        return None

    if old_files is not None and old_broken is not None and _files_only_grew(files, old_files):
        pairs = [(path, link) for path, link in old_broken if path in files and files[path] is old_files.get(path)]
        broken_before: dict[str, set[str]] = {}
        for path, link in old_broken:
            broken_before.setdefault(path, set()).add(link)
        for path, info in files.items():
            old = old_files.get(path)
            if info is not old and info["links"] != _NO_LINKS:  # rewritten, with links
                pairs += [(path, link) for link in _new_links(info, old, broken_before.get(path, set()))]
    else:
        pairs = [(path, link) for path, info in files.items() for link in marshal.loads(info["links"])]
    return sorted((path, link, reason) for path, link in pairs if (reason := problem(link)) is not None)


def _new_links(info: FileRecord, old: FileRecord | None, broken: set[str]) -> list[str]:
    """The links of a rewritten file that its previous version did not have, or had broken, in order."""
    links: list[str] = marshal.loads(info["links"])
    if old is None:
        return links
    if old["links"] == info["links"]:
        return [link for link in links if link in broken]
    had = set(marshal.loads(old["links"])) - broken
    return [link for link in links if link not in had]


def _files_only_grew(files: dict[str, FileRecord], old_files: dict[str, FileRecord]) -> bool:
    """No file of the previous build is gone (but the static search's analysis files, no link's target), and none
    rewritten lost an id."""
    return all(rel in files or rel.startswith(CACHE_DIR) for rel in old_files) and all(
        old["ids"] == info["ids"] or set(marshal.loads(old["ids"])) <= set(marshal.loads(info["ids"]))
        for rel, info in files.items()
        if (old := old_files.get(rel)) is not None and old is not info)


def _join(base: str, rel: str) -> str | None:
    stack = [p for p in base.split("/") if p not in ("", ".")]
    for part in rel.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not stack:
                return None
            stack.pop()
        else:
            stack.append(part)
    return "/".join(stack)
