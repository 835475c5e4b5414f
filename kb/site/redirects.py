"""Redirect pages at the English URLs of glossary terms shown under their Japanese name, so an English name typed or
linked reaches the term: ``glossary/cast.html`` → ``glossary/唱える.html``; for ``State-Based Actions`` → 状況起因処理 the
name a person types (``state-based-actions``), the English title's own name (``state--based-actions``) and the
previous scheme's (``_state~2d__based-_actions``), every name from :mod:`kb.urls.paths`.

A path is used only when no page of the site is there and no other redirect (:func:`kb.site.pages.redirect_pages`)
is, and when exactly one English name of the folder claims it (two Japanese terms sharing an English name redirect
neither). Not in the sitemap: each page is ``noindex`` and its target is listed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from kb.ids import glossary_id
from kb.site.page import Page
from kb.site.pages import CARDS_INDEX, redirect_pages
from kb.site.records import Entry, SiteData
from kb.urls.paths import legacy_page_for_id, page_for_id, typed_page_for_id


def english_redirect_pages(site: SiteData) -> Iterable[Page]:
    """A page producer: one redirect page per free English URL of a Japanese-named glossary term."""
    entries = [*site.terms.values(), *site.others.values()]
    taken = {e.url for e in entries} | {"glossary/index.html", CARDS_INDEX} | {p.path for p in redirect_pages(site)}
    claims: list[tuple[str, Entry, str]] = []  # (path, term, English name)
    for entry in site.terms.values():
        mine: dict[str, str] = {}  # path → the English name claiming it (an entry's two spellings claim a path once)
        for english in _english_names(entry):
            english_id = glossary_id(english)
            for path in (page_for_id(english_id), typed_page_for_id(english_id), legacy_page_for_id(english_id)):
                if path and path != entry.url:
                    mine.setdefault(path, english)
        claims += [(path, entry, english) for path, english in mine.items()]
    # a typed name other entries have too is nobody's (redirect_pages leaves it out as well)
    count = Counter(path for path, _, _ in claims) + Counter(typed_page_for_id(e.id) for e in entries)
    for path, entry, english in claims:
        if path not in taken and count[path] == 1:
            taken.add(path)
            yield Page(path, "redirect.html", f"{entry.label}（{english}）", f"{english} は用語集の「{entry.label}」です。",
                       {"target": entry.url}, in_sitemap=False)


def _english_names(entry: Entry) -> list[str]:
    """The English names of a term whose page is named otherwise: the English entry shown with it, and the English
    name the Japanese glossary gives."""
    names = {node.title for node in entry.nodes.values() if node.lang == "en" and node.title}
    names |= {node.english for node in entry.nodes.values() if node.english}
    return sorted(name for name in names if page_for_id(glossary_id(name)) != entry.url)
