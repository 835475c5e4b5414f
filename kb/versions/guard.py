"""Whether a parsed rules text may become the newest version of its language: the guard between a cut-short or fake
file and the site it would replace. Entry point: :func:`replacement_refusal`.

A rules text (``cr-text``) that would become the newest stored version of its language — a new version dated no
earlier than the newest, or the newest version's own source ingested again — in place of a whole version (every
chapter, 1 to 9, and a glossary: an excerpt replaced loses nothing) is refused when it holds fewer than
:data:`MIN_SHARE` of the rules and glossary entries of the version it replaces, or fewer than that version at all
while incomplete (its parse says so: cut short, or an excerpt; the caller tells) and of another version: one excerpt
may follow another, and an edited excerpt replace itself.
Consecutive real releases differ by a few percent; a file cut at 60 % or a six-line fake differ by far more.
``--force`` stores it all the same.
"""

from __future__ import annotations

from collections.abc import Callable

from kb.model import GLOSSARY, RULE_KINDS, UNVERSIONED, Document
from kb.versions.catalog import VersionInfo

MIN_SHARE = 0.8  # of the replaced version's rules (chapters, sections, rules, subrules) and glossary entries
SIZED_KINDS = frozenset([*RULE_KINDS, GLOSSARY])
WHOLE_CHAPTERS = frozenset("123456789")
RULES_KIND = "cr-text"  # the source kind that brings whole rules versions (Wisdom Guild pages are one rule each)


def replacement_refusal(doc: Document, stored: list[VersionInfo], *, incomplete: str | None,
                        chapters: Callable[[VersionInfo], set[str]]) -> str | None:
    """Why ``doc`` (``incomplete``: what its parse said it lacks — ``the document ends inside the rules, …`` — or
    None) must not replace the newest version of its language (``stored``: :func:`kb.versions.catalog.list_versions`,
    newest first; ``chapters``: the chapter numbers a stored version has); None when it may."""
    if doc.kind != RULES_KIND or doc.version == UNVERSIONED:
        return None
    replaced = _replaced(doc, [v for v in stored if v.lang == doc.lang])
    if replaced is None or not replaced.glossary or not chapters(replaced) >= WHOLE_CHAPTERS:
        return None
    size = sum(node.kind in SIZED_KINDS for node in doc.nodes)
    replaced_size = replaced.rules + replaced.glossary
    if incomplete and size < replaced_size and replaced.version != doc.version:
        why = incomplete
    elif size < MIN_SHARE * replaced_size:
        why = f"it has {size} rules and glossary entries, fewer than {MIN_SHARE:.0%} of its {replaced_size}"
    else:
        return None
    return (f"{doc.source}: rules version {doc.version} would replace {replaced.version} ({replaced.rules} rules) as the "
            f"newest {doc.lang} version, but {why}: not stored; check the file, or give --force to store it")


def _replaced(doc: Document, stored: list[VersionInfo]) -> VersionInfo | None:
    """The version ``doc`` would take the place of as the newest of its language, if any."""
    if not stored:
        return None
    newest = stored[0]
    if newest.version == doc.version:
        return newest if doc.source in newest.sources else None
    others = [v for v in stored if v.version != doc.version]
    if others and (doc.effective_date or "") >= (others[0].effective_date or ""):
        return others[0]
    return None
