"""Long MTG Wiki articles searched by section: a hit is the section, linked to its heading's anchor.

Contract: :func:`sections` cuts an article of :data:`LONG_ARTICLE_CHARS` or more characters of text at its headings
(``meta['sections']``, the heading tree the parser records with each heading's offset in ``text``): each heading's
own text, up to the next heading and without the rules it quotes (:func:`section_text`), is one :class:`Section`
(a heading with no text of its own is none). The index holds such an article as its lead (:func:`split_node`: title
and the text before the first heading) and one document per section (:func:`kb.search.index.node_documents`), so
a question is answered by the section, or the rule, that answers it rather than by the article that holds every
word somewhere; a section's weights are halved (:func:`kb.search.ranking.section_weight`, in every surface), so
that among hits matching as many words the rule comes first. A section's search id is ``<article id>#<anchor>``
(:func:`section_id`, :func:`split_section_id`); its URL is the article's with the heading's element id
(:func:`ingest.wikititle.element_id`, as the parser writes it). :func:`lead_node` and :func:`section_node` make one
of those documents' nodes alone (the static search makes only the changed articles').
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from kb.ids import is_article_id
from kb.model import ARTICLE, Node

LONG_ARTICLE_CHARS = 1500
SEPARATOR = "#"  # between the article id and the anchor; MediaWiki titles never hold it


@dataclass(frozen=True)
class Section:
    anchor: str
    title: str
    start: int  # offsets of its own text in the article's text
    end: int


def sections(node: Node) -> list[Section]:
    """The sections of a long article, in document order; [] for anything else."""
    if node.kind != ARTICLE or len(node.text) < LONG_ARTICLE_CHARS:
        return []
    heads = [(s["start"], s["anchor"], s["title"]) for s in _walk(node.meta.get("sections") or [])
             if isinstance(s.get("start"), int) and s.get("anchor") and s.get("title")]
    heads.sort(key=lambda h: h[0])
    out = []
    for i, (start, anchor, title) in enumerate(heads):
        end = heads[i + 1][0] if i + 1 < len(heads) else len(node.text)
        section = Section(anchor, title, start, end)
        if section_text(node, section).strip():
            out.append(section)
    return out


def section_text(node: Node, section: Section) -> str:
    """The text of ``section`` without the rules the article quotes (``meta['quoted_rules']``, 引用：総合ルール:
    the rules themselves answer for their words)."""
    quoted = sorted((q["start"], q["end"]) for q in node.meta.get("quoted_rules") or []
                    if isinstance(q, dict) and isinstance(q.get("start"), int) and isinstance(q.get("end"), int))
    parts, at = [], section.start
    for start, end in quoted:
        if end <= at or start >= section.end:
            continue
        parts.append(node.text[at:max(at, start)])
        at = max(at, min(end, section.end))
    parts.append(node.text[at:section.end])
    return "".join(parts)


def split_node(node: Node) -> tuple[Node, list[tuple[Section, Node]]]:
    """A long article as the documents the search holds: its lead (the node, text up to the first section) and
    each section as a node of the heading's title and the section's text; any other node as it is."""
    found = sections(node)
    if not found:
        return node, []
    return lead_node(node, found[0]), [(s, section_node(node, s)) for s in found]


def lead_node(node: Node, first: Section) -> Node:
    """The lead of a long article whose first section is ``first``: the node with its text up to that section."""
    return replace(node, text=node.text[:first.start])


def section_node(node: Node, section: Section) -> Node:
    """A section of a long article as a node: the heading's title and the section's text (:func:`section_text`)."""
    return replace(node, title=section.title, text=section_text(node, section), aliases=(), english=None, examples=())


def _walk(tree: list) -> list[dict]:
    out = []
    for section in tree:
        if isinstance(section, dict):
            out.append(section)
            out += _walk(section.get("sections") or [])
    return out


def section_id(node_id: str, anchor: str) -> str:
    return f"{node_id}{SEPARATOR}{anchor}"


def split_section_id(search_id: str) -> tuple[str, str | None]:
    """(article id, anchor) of a section's search id; (id, None) for any other node's."""
    node_id, sep, anchor = search_id.partition(SEPARATOR)
    return (node_id, anchor) if sep and is_article_id(node_id) else (search_id, None)


