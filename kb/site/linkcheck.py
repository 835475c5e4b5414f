"""The link check: every link a page writes must name a file of the site and, with an anchor, an id in it.

:func:`page_links` finds a rendered page's links and ids (kept in the manifest, :mod:`kb.site.manifest`),
:func:`resolve_links` turns its relative links into site files, :func:`check_links` finds the broken ones — only
those that can have changed since the previous build, when it can tell.
"""

from __future__ import annotations

import marshal
import re
from functools import lru_cache
from pathlib import PurePosixPath
from urllib.parse import SplitResult, unquote, urlsplit

from kb.site.manifest import FileRecord
from kb.site.search_cache import CACHE_DIR

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
    base = PurePosixPath(path).parent
    resolved = []
    for link in links:
        parts = _split(link)
        if parts.scheme or parts.netloc or link.startswith("/"):
            continue  # outside links are not ours to check (and absolute paths are never written)
        target = (_join(base, unquote(parts.path)) or f"../{link}") if parts.path else path
        resolved.append(f"{target}#{unquote(parts.fragment)}" if parts.fragment else target)
    return resolved


def check_links(files: dict[str, FileRecord], old_files: dict[str, FileRecord] | None = None,
                old_broken: list[list[str]] | None = None) -> list[tuple[str, str, str]]:
    """Every link written must name a file of the site and, with an anchor, an id in that file: the links that do
    not, as (page, link, what is wrong), in order. Given the previous build's files (a kept file's record is the same
    object in ``files``) and its broken (page, link) pairs: when no file is gone and no rewritten file lost an id,
    only the rewritten files' links and the links broken before are checked — no other can have broken or mended."""
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
        pairs += [(path, link) for path, info in files.items() if info is not old_files.get(path)
                  for link in marshal.loads(info["links"])]
    else:
        pairs = [(path, link) for path, info in files.items() for link in marshal.loads(info["links"])]
    return sorted((path, link, reason) for path, link in pairs if (reason := problem(link)) is not None)


def _files_only_grew(files: dict[str, FileRecord], old_files: dict[str, FileRecord]) -> bool:
    """No file of the previous build is gone (but the static search's analysis files, no link's target), and none
    rewritten lost an id."""
    return all(rel in files or rel.startswith(CACHE_DIR) for rel in old_files) and all(
        old["ids"] == info["ids"] or set(marshal.loads(old["ids"])) <= set(marshal.loads(info["ids"]))
        for rel, info in files.items()
        if (old := old_files.get(rel)) is not None and old is not info)


@lru_cache(maxsize=65536)
def _split(link: str) -> SplitResult:
    return urlsplit(link)


@lru_cache(maxsize=65536)
def _join(base: PurePosixPath, rel: str) -> str | None:
    stack = [p for p in base.parts if p not in ("", ".")]
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
