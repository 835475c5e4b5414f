"""The link check: every link a page writes must name a file of the site and, with an anchor, an id in it.

:func:`page_links` finds a rendered page's links and ids (kept in the manifest, :mod:`kb.site.manifest`),
:func:`resolve_links` turns its relative links into site files, :func:`check_links` finds the broken ones — only
those that can have changed since the previous build, when it can tell.
"""

from __future__ import annotations

import marshal
import re
from collections.abc import Collection, Mapping
from functools import lru_cache, partial
from urllib.parse import unquote, urlsplit

from kb.site.manifest import FileRecord, linking, removed_since
from kb.site.output import RECORDS

_NO_LINKS = marshal.dumps([])  # the links of a file with none (a search shard), as its record keeps them
_ATTR_RE = re.compile(r'\s(href|src|id)="([^"]*)"')


def page_links(html: str) -> tuple[list[str], list[str]]:
    """(hrefs and srcs, ids) written in ``html`` — what the link check verifies."""
    links: list[str] = []
    ids: list[str] = []
    for attr, value in _ATTR_RE.findall(html):
        if "&" in value:  # an escaped character (every href the templates write has none)
            value = value.replace("&amp;", "&").replace("&#34;", '"').replace("&#39;", "'")
        (ids if attr == "id" else links).append(value)
    return links, ids


def resolve_links(path: str, links: list[str]) -> list[str]:
    """The site files (``path#anchor``) the relative links written on the page at ``path`` point at; a link
    climbing above the site root becomes ``../<link>`` (always broken). Outside links are left out."""
    targets = map(partial(_resolve, path.rpartition("/")[0]), links)
    return [path + target if not target or target[0] == "#" else target  # an anchor on the page
            for target in targets if target is not None]


@lru_cache(maxsize=262144)
def _resolve(base: str, link: str) -> str | None:
    """``link`` written in the folder ``base`` as a site file with its anchor (``""`` for the page itself, then its
    anchor appended by the caller), None for an outside link. A page's links repeat across pages (the chrome, the
    rules a section cites): each (folder, link) is resolved once per process, each link parsed once (:func:`_parse`:
    the pages of a folder depth write the same link to a file)."""
    parsed = _parse(link)
    if parsed is None:
        return None
    path, fragment = parsed
    if not path:
        return f"#{fragment}" if fragment else ""
    target = _join(base, path) or f"../{link}"
    return f"{target}#{fragment}" if fragment else target


@lru_cache(maxsize=262144)
def _parse(link: str) -> tuple[str, str] | None:
    """(path, anchor) of a relative ``link``, percent-decoded; None for an outside link."""
    if ":" not in link and link[:1] not in ("/", " ") and link.isprintable():
        # what urlsplit makes of a link with no scheme, no host and nothing it strips: (path?query, fragment)
        rest, _, fragment = link.partition("#")
        return unquote(rest.partition("?")[0]), unquote(fragment)
    parts = urlsplit(link)
    if parts.scheme or parts.netloc or link.startswith("/"):
        return None  # outside links are not ours to check (and absolute paths are never written)
    return unquote(parts.path), unquote(parts.fragment)


def check_links(files: Mapping[str, FileRecord], old_files: Mapping[str, FileRecord] | None = None,
                old_broken: list[list[str]] | None = None, rewritten: Collection[str] | None = None
                ) -> list[tuple[str, str, str]]:
    """Every link written must name a file of the site and, with an anchor, an id in that file: the links that do
    not, as (page, link, what is wrong), in order. Given the previous build's files (a kept file's record is the same
    object in ``files``) and its broken (page, link) pairs, only the links that can have broken or mended are checked:
    those broken before, the rewritten files' new links, and the links into a file gone or rewritten without some of
    its ids (found by their bytes in the marshalled links; when many files are, every link is checked).
    ``rewritten``: the files whose record may not be the previous build's (an edit build's few; None: each one is
    looked at)."""
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

    changed = list(files) if rewritten is None else [path for path in rewritten if path in files]
    lost = _lost_targets(files, old_files, changed) if old_files is not None and old_broken is not None else None
    if old_files is not None and old_broken is not None and lost is not None:
        broken_before: dict[str, set[str]] = {}
        for path, link in old_broken:
            broken_before.setdefault(path, set()).add(link)
        pairs = [(path, link) for path, link in old_broken if path in files and files[path] is old_files.get(path)]
        needles = [target.encode() for target in lost]
        for path in changed:  # rewritten: its new links, those broken before and those into a lost target
            info, old = files[path], old_files.get(path)
            if info["links"] != _NO_LINKS and info is not old:
                pairs += [(path, link) for link in _new_links(info, old, broken_before.get(path, set()), lost)]
        for path in linking(old_files, needles) if needles else ():  # may link a lost target
            kept = files.get(path)
            if kept is not None and kept is old_files.get(path) and kept["links"] != _NO_LINKS:  # and kept
                broken = broken_before.get(path, set())
                pairs += [(path, link) for link in marshal.loads(kept["links"])
                          if link.partition("#")[0] in lost and link not in broken]
    else:
        pairs = [(path, link) for path, info in files.items() for link in marshal.loads(info["links"])]
    return sorted((path, link, reason) for path, link in pairs if (reason := problem(link)) is not None)


def _new_links(info: FileRecord, old: FileRecord | None, broken: set[str], lost: set[str]) -> list[str]:
    """The links of a rewritten file that its previous version did not have, had broken, or that point into a
    ``lost`` file, in order."""
    links: list[str] = marshal.loads(info["links"])
    if old is None:
        return links
    had = None if old["links"] == info["links"] else set(marshal.loads(old["links"]))  # None: the same links
    return [link for link in links if link in broken or link.partition("#")[0] in lost
            or (had is not None and link not in had)]


LOST_AT_MOST = 64  # files gone or losing ids from which every link is checked (each costs a scan of the links)
LINKED_BY_NONE = (RECORDS, "search/")  # the files no page links to: the build's own records, and the static search's
# files, which its script fetches (the templates link none of them, and an article's links go to our pages or to the
# wiki: kb.site.render.article_html; tests/test_site_links_walk.py checks every link of a built site). So one gone
# (every edit build renames the static search's delta) sends the check looking for no link


def _lost_targets(files: Mapping[str, FileRecord], old_files: Mapping[str, FileRecord], changed: list[str]
                  ) -> set[str] | None:
    """The files of the previous build that are gone (but those no page links to: :data:`LINKED_BY_NONE`) or were
    rewritten (among ``changed``) without some of their ids — the only targets a kept link can have lost; None when
    there are many (every link is checked)."""
    lost = {rel for rel in removed_since(old_files, files) if not rel.startswith(LINKED_BY_NONE)}
    if len(lost) > LOST_AT_MOST and files:
        return None
    for rel in changed:
        info = files[rel]
        if (old := old_files.get(rel)) is not None and old is not info and old["ids"] != info["ids"] \
                and not set(marshal.loads(old["ids"])) <= set(marshal.loads(info["ids"])):
            lost.add(rel)
            if len(lost) > LOST_AT_MOST:
                return None
    return lost


def _join(base: str, rel: str) -> str | None:
    """``rel`` (a path relative to the folder ``base``) as a site path; None when it climbs above the root. Its folder
    joined once per (``base``, folder): a page links thousands of files in a few folders."""
    folder, _, name = rel.rpartition("/")
    if name in ("", ".", ".."):
        return _join_parts(base, rel)
    top = _join_folder(base, folder)
    return None if top is None else f"{top}/{name}" if top else name


@lru_cache(maxsize=4096)
def _join_folder(base: str, folder: str) -> str | None:
    return _join_parts(base, folder)


def _join_parts(base: str, rel: str) -> str | None:
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
