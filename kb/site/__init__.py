"""The static site: ``build_site(store, out)`` renders the store into a folder of HTML pages that link every rule,
term and article both ways, with a static search index; ``serve_site`` previews it (``kb serve``).

Stages (one module each): :mod:`kb.site.gather` (store → :class:`~kb.site.gather.SiteData`),
:mod:`kb.site.pages` (page producers → :class:`~kb.site.page.Page`; add a page kind by appending to
:data:`~kb.site.pages.PAGE_PRODUCERS`), :mod:`kb.site.render` (Jinja2), :mod:`kb.site.search_export` (sharded index),
:mod:`kb.site.builder` (incremental render, link check, atomic swap), :mod:`kb.site.serve` (preview server).
URLs: :mod:`kb.urls` (shared with the search).
"""

from kb.site.builder import BuildReport, build_site

__all__ = ["BuildReport", "build_site"]
