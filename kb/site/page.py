"""The record every page producer yields and the builder renders: where the page goes, which template renders it,
and the JSON-able context it shows (hashed with the template to decide whether the page must be rendered again)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Page:
    path: str  # site-relative, e.g. 'cr/601.html'
    template: str
    title: str
    description: str
    context: dict = field(default_factory=dict, hash=False)
    in_sitemap: bool = True
