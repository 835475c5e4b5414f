"""The link stage, run after all sources are in: :func:`link` resolves every stored reference (rules, terms, wiki
links, cards, mechanics), adds the derived term links, and reports what did not resolve.

Modules: :mod:`kb.link.index` (lookup tables, the report, name folding), :mod:`kb.link.resolve` (the entry point and
the rule/term resolvers), :mod:`kb.link.graph` (cards, wiki, mechanics, term-article), :mod:`kb.link.termlinks`
(glossary terms found in rule text), :mod:`kb.link.query` (what a node cites and what cites it).
"""

from kb.link.index import LinkIndex, LinkReport
from kb.link.resolve import link, stored_report

__all__ = ["LinkIndex", "LinkReport", "link", "stored_report"]
