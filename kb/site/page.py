"""The records page producers yield and the builder renders: a :class:`Page` (where it goes, which template renders
it, and the JSON-able context it shows — hashed with the template to decide whether it must be rendered again), or a
:class:`PageGroup` of pages made together from inputs that can be named without making them."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Deferred:
    """A part of a page's context that is costly to make or to hash (an article page's whole context: its HTML with its
    links pointed at our pages, its citations, the chrome), made only when the page is rendered. What it is made from
    is named without making it: ``source`` (e.g. the stored node's content hash and a digest of the rest) and the
    answers to the lookups the making does (``lookup(keys)``, plain marshal-able data: the same keys with the same
    answers make the same part). ``make()`` returns the part (merged into the context)
    and the keys it looked up; the builder keeps the keys in the manifest and hashes the page with their answers.
    ``tables`` is a digest of everything ``lookup`` answers from: when it and ``source`` are the previous build's, the
    same keys have the same answers, and the builder takes their digest from the page's record without asking."""

    source: str
    make: Callable[[], tuple[dict[str, Any], list[Any]]] = field(compare=False)
    lookup: Callable[[list[Any]], Any] = field(compare=False)
    tables: str


@dataclass(frozen=True)
class Page:
    path: str  # site-relative, e.g. 'cr/601.html'
    template: str
    title: str
    description: str
    context: dict[str, Any] = field(default_factory=dict, hash=False)  # JSON-able (kb.site.contexts)
    in_sitemap: bool = True
    deferred: Deferred | None = field(default=None, hash=False, compare=False)  # made only when rendered


@dataclass(frozen=True)
class PageGroup:
    """Pages whose every input is in ``inputs`` (plain, marshal-able data: e.g. a digest of the nodes they show):
    when the previous build made the group ``name`` from equal inputs (and the same templates and page code) and its
    files are all there, they are kept and ``make`` is never called. An archived version's pages are one group. A
    page of a group made again is checked against its record (kept when its hash is unchanged): its record may be
    older than the previous build's."""

    name: str  # unique among the groups, e.g. 'archive 20231117 en'
    inputs: Any = field(hash=False)  # marshal-able
    make: Callable[[], Iterable[Page]] = field(hash=False, compare=False)
