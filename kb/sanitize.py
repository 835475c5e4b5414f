"""The one HTML sanitiser: every parser that stores HTML (MTG Wiki articles, release notes) and the site's renderer
pass HTML through :func:`sanitize_html` — one policy, defined here once.

Kept: text structure (paragraphs, lists, tables, headings, emphasis, ruby), links (``http``, ``https``, ``mailto``
and relative URLs; the renderer points them at the site's own pages), and the ``id`` attributes in-page anchors and
footnotes need. Dropped with their content: scripts, styles, frames, forms, objects, templates. Dropped as
elements: anything that makes a browser fetch from elsewhere (``img``, ``picture``, ``video``, ``audio``,
``source``), navigation and image maps, event handlers, inline styles and every other attribute. The result is a
fragment a browser renders without fetching anything and without running anything.
"""

from __future__ import annotations

import nh3

_ID_TAGS = ("h1", "h2", "h3", "h4", "h5", "h6", "li", "sup", "span", "p", "div", "cite", "ol", "ul", "table", "dt")
_CLEANER = nh3.Cleaner(
    tags=set(nh3.ALLOWED_TAGS) - {"nav", "area", "map", "img"},
    clean_content_tags={"script", "style", "noscript", "iframe", "object", "embed", "form", "template", "textarea",
                        "select", "button"},
    attributes={tag: (set(nh3.ALLOWED_ATTRIBUTES.get(tag, ())) | ({"id"} if tag in _ID_TAGS else set())
                      | ({"href", "title"} if tag == "a" else set()))
                for tag in {*nh3.ALLOWED_ATTRIBUTES, *_ID_TAGS, "a"} - {"img"}},
    url_schemes={"http", "https", "mailto"},
    link_rel=None,
)


def sanitize_html(html: str) -> str:
    """``html`` (a fragment) with only what the policy above keeps."""
    return _CLEANER.clean(html)
