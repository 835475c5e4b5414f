"""``sitemap.xml``: the site's pages listed for search engines, and the key that spares writing it again when the
same pages are listed."""

from __future__ import annotations

import hashlib
import marshal
from xml.sax.saxutils import escape

from kb.urls.paths import href


def sitemap_xml(paths: list[str], base_url: str | None) -> str:
    """Relative ``<loc>``s, or absolute ones under ``base_url`` (what search engines require)."""
    urls = "".join(f"  <url><loc>{escape((base_url or '') + href('', path))}</loc></url>\n" for path in paths)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
            f"{urls}</urlset>\n")


def sitemap_key(paths: list[str], base_url: str | None) -> str:
    """What :func:`sitemap_xml` is made from, hashed: equal to the previous build's, the file is kept."""
    return hashlib.sha256(marshal.dumps((paths, base_url))).hexdigest()[:24]
