"""What every page shows around its content (``base.html``): the version line of the footer and the header's menu
(the CR's chapters, the glossary, the 更新履歴 and the card index, where the site has them). One definition, for the
producers of :mod:`kb.site.pages` and :mod:`kb.site.changes` alike, so the search page, the 404 page and the change
pages show the same header and footer as a rule page.
"""

from __future__ import annotations

from kb.site.contexts import LinkContext, SiteContext
from kb.site.records import SiteData

GLOSSARY_INDEX = "glossary/index.html"
CHANGES_INDEX = "changes/index.html"
CARDS_INDEX = "cards/index.html"


def site_context(site: SiteData) -> SiteContext:
    """The version shown and the header's menu, on every page."""
    return {"version": site.primary_version, "english_version": site.english_version, "lang": site.primary_lang,
            "effective_date": site.effective_date, "sync_date": site.sync_date, "cr_title": site.cr_title,
            "translation_version": site.translation_version, "translation_date": site.translation_date,
            "translated_date": site.translated_date, "menu": menu(site)}


def menu(site: SiteData) -> list[LinkContext]:
    """The header's menu: every chapter of the rules shown, then the glossary (always: its index says when it is
    empty), the 更新履歴 and the cards, when the site has them."""
    items: list[LinkContext] = [{"label": site.rules[n].label, "url": site.rules[n].url} for n in site.chapters]
    items.append({"label": "用語集", "url": GLOSSARY_INDEX})
    if site.changes and site.changes.pairs:
        items.append({"label": "更新履歴", "url": CHANGES_INDEX})
    if any(e.kind == "card" for e in site.others.values()):
        items.append({"label": "カード一覧", "url": CARDS_INDEX})
    return items
