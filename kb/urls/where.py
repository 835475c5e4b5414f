"""Where the site shows a stored node, whatever its version and language — the one answer for the site's own
pages, ``kb search``, ``kb serve`` and the static search.

- Nodes of the version shown (:mod:`kb.versions.current`) and the Japanese texts shown with them: their current
  page (:func:`kb.urls.paths.url_for` of the id they are shown under: the 2023 Japanese 701.34 is at
  ``cr/701.html#701.40``); a glossary entry's page is named by its Japanese term when it has one.
- Rules and glossary entries of every other version: the archive, :func:`archive_url` (``v/<version>/…``).
- Unversioned nodes (wiki articles, release notes, cards): their page.
"""

from __future__ import annotations

import re

from kb.ids import id_name, is_glossary_id
from kb.model import GLOSSARY, UNVERSIONED
from kb.store import NodeKey
from kb.urls.paths import page_for_id, safe_name, url_for
from kb.versions.current import CurrentView

ARCHIVE = "v"
_PLAIN_VERSION = re.compile(r"^[0-9][0-9a-z._-]*$")


def archive_root(version: str) -> str:
    """Folder of an older version's pages: ``v/20231117/``, ``v/20231117.0/``."""
    return f"{ARCHIVE}/{version if _PLAIN_VERSION.match(version) else safe_name(version)}/"


def archive_glossary(version: str) -> str:
    return archive_root(version) + "glossary.html"


def term_anchor(term: str) -> str:
    return "t-" + safe_name(term)


def archive_url(key: NodeKey) -> str:
    """The place of a rule or glossary entry of an older version: its section page (anchored) or the version's
    glossary page (anchored by the term)."""
    if is_glossary_id(key.id):
        return f"{archive_glossary(key.version)}#{term_anchor(id_name(key.id))}"
    return archive_root(key.version) + url_for(key)


class Locator:
    """Site URLs of stored nodes (see the module doc), for one :class:`CurrentView`."""

    def __init__(self, view: CurrentView):
        self.view = view
        self._shown = (view.english.version, "en") if view.english else None
        self._term_pages = {shown: page_for_id(ja.key.id) for shown, ja in view.ja.items() if is_glossary_id(shown)}

    def shown_id(self, key: NodeKey) -> str | None:
        """The id a versioned node is shown under on the current pages (None: only in the archive)."""
        if (key.version, key.lang) == self._shown:
            return key.id
        return self.view.current_ids.get(key)

    def url(self, key: NodeKey, kind: str | None = None) -> str:
        if key.version == UNVERSIONED:
            return url_for(key)
        shown = self.shown_id(key)
        if shown is None:
            return archive_url(key)
        if kind == GLOSSARY or is_glossary_id(shown):
            return self._term_pages.get(shown) or page_for_id(shown)
        return url_for(NodeKey(key.version, key.lang, shown))
