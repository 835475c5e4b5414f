"""HTML into an lxml tree for the parsers, keeping deep nesting: libxml2 stops at 256 levels by default and silently
drops the rest of the page; :func:`html_document` lets it go to :data:`MAX_DEPTH` (libxml2's limit for huge
documents), and a page nested deeper still is kept up to there with a warning saying the rest is lost."""

from __future__ import annotations

import lxml.html

from kb.model import Diagnostic

MAX_DEPTH = 2048


def html_document(text: str, source: str, diagnostics: list[Diagnostic]):
    """The document tree of ``text`` (as ``lxml.html.document_fromstring``, which may raise ``etree.ParserError``)."""
    parser = lxml.html.HTMLParser(huge_tree=True)
    tree = lxml.html.document_fromstring(text, parser=parser)
    deep = next((e for e in parser.error_log if "Excessive depth" in e.message), None)
    if deep is not None:
        diagnostics.append(Diagnostic(source, f"line {deep.line}",
                                      f"HTML nested deeper than {MAX_DEPTH} levels; the rest of the page is lost"))
    return tree
