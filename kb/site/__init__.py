"""The static site: ``build_site(store, out)`` renders the store into a folder of HTML pages that link every rule,
term and article both ways, with a static search index; ``serve_site`` previews it (``kb serve``).

Records: :mod:`kb.site.records` (what the gather step reads), :mod:`kb.site.page` (what producers yield),
:mod:`kb.site.contexts` (the shapes of page contexts), :mod:`kb.site.manifest` (what a build leaves for the next).
Stages (one module each): :mod:`kb.site.gather` (store → :class:`~kb.site.records.SiteData`),
:mod:`kb.site.pages` and :mod:`kb.site.changes` (page producers → :class:`~kb.site.page.Page`; add a page kind by
appending to :data:`~kb.site.pages.PAGE_PRODUCERS`), :mod:`kb.site.render` (Jinja2), :mod:`kb.site.sitemap`,
:mod:`kb.site.search_export` (sharded index), :mod:`kb.site.linkcheck`, :mod:`kb.site.fingerprint` (what is unchanged),
:mod:`kb.site.output` (the atomic put-in-place and the output folder's lock), :mod:`kb.site.builder` (the phases, in
order), :mod:`kb.site.serve` (preview server). URLs: :mod:`kb.urls` (shared with the search).
"""

from kb.site.builder import BuildReport, build_site

__all__ = ["BuildReport", "build_site"]
