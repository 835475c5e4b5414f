"""Parse mtg-jp.com card release notes (a saved HTML page or its plain text) into note nodes.

Entry point: :func:`parse_release_notes` — a pure function of the bytes that never raises for bad input.
A heading ``〜に関する一般的な情報`` followed by ``•`` bullets becomes one note ``note:<set>:<mechanic>`` with
a ``mechanic`` reference to the mechanic it explains (resolved later to the glossary entry and the MTG Wiki
article: ``kb.link.graph``). Bullets under any other heading (a card's own notes) become ``note:<set>:<heading>``
(``notes-N`` when the heading is only a dash; such a note is titled from its set and what it is about:
``ゼンディカーの夜明け：《玻璃池のミミック》について`` after its first card, else the start of its first bullet).
Sections repeated verbatim, as release-note pages do, are stored once with ``meta['occurrences']``. Every
``《カード名》`` gives a ``card`` reference.

The long-standing layout (2014 and after: title ``『…』 リリースノート``, ``…編、…協力``, ``最終更新 2014年9月23日``)
is told by its chapter headings ``一般注釈`` and ``カード別注釈``: the introduction before them is skipped; each
heading of the general chapter (``製品情報``, ``新メカニズム:疾駆`` …) gives one note of its paragraphs and bullets,
with ``meta['general']`` (and a ``mechanic`` reference when the heading names one); in the card chapter each card's
section — from its ``《名前/Name》`` line, through its card text, to its bullets (``*`` or ``•``) — gives one note
``note:<set>:<名前/Name>``; the colour headings between them (白, 多色 …) are not notes.

``<set>`` is the set name in ``『…』`` of the page title, else the source's file name.
"""

from __future__ import annotations

import dataclasses
import hashlib
import html as html_lib
import re
from pathlib import PurePosixPath
from urllib.parse import unquote, urlsplit

from lxml import etree

from ingest.decode import decode_wiki_html as decode_html
from ingest.htmltree import html_document
from ingest.wikititle import split_card_name
from kb.ids import note_id
from kb.model import NOTE, REF_CARD, REF_MECHANIC, UNVERSIONED, Diagnostic, Document, Node, Ref
from kb.sanitize import sanitize_html

GENERAL_RE = re.compile(r"^(?P<mechanic>.+?)に関する一般的な情報$")
BULLET_RE = re.compile(r"^[•・●◦]\s*(?P<text>.+)$")
CARD_RE = re.compile(r"《([^《》\n]{1,80})》")
SET_NAME_RE = re.compile(r"『([^』]{1,60})』")
DASH_ONLY_RE = re.compile(r"^[\-–—―ー\s]*$")
GENERAL_CHAPTER, CARD_CHAPTER = "一般注釈", "カード別注釈"  # the chapters of the long-standing layout
OLD_BULLET_RE = re.compile(r"^[*＊]\s*(?P<text>.+)$")
CARD_HEADING_RE = re.compile(r"^《[^《》\n]{1,80}》$")
MECHANIC_HEADING_RE = re.compile(r"^(?:新|再録|既存の)?(?:メカニズム|キーワード能力|キーワード処理|能力語|カード・タイプ)"
                                 r"\s*[:：]\s*(?P<mechanic>.+?)$")
SENTENCE_END_RE = re.compile(r"[。．.!！?？」』)）]$")
HEADING_CHARS = 40  # a line this short, not a sentence and with no "key:value", is a heading
BLOCK_TAGS = ("p", "div", "li", "h1", "h2", "h3", "h4", "h5", "h6", "dt", "dd", "tr", "section", "article", "br")
SECTION_BREAK = "\ue000"  # a private-use character marking a section end in converted HTML
CHROME = "//script|//style|//noscript|//nav|//header|//footer|//form|//iframe|//aside|//comment()"


def parse_release_notes(data: bytes, source: str) -> Document:
    """Parse one release-notes page (HTML or text); see the module docstring."""
    diagnostics: list[Diagnostic] = []
    text = decode_html(data, source, diagnostics)
    page_title = None
    if re.search(r"<(?:html|body|div|p|ul|h[1-6])\b", text[:5000], re.I):
        text, page_title = _html_to_text(text, source, diagnostics)
    set_name = _set_name(page_title, source)
    nodes = _notes(text.splitlines(), set_name, source, diagnostics)
    if not nodes:
        diagnostics.append(Diagnostic(source, "", "no release-note sections found (neither 〜に関する一般的な情報 with "
                                      "• bullets nor the chapters 一般注釈 / カード別注釈)"))
    return Document(source=source, kind="release-notes", lang="ja", nodes=tuple(nodes), version=UNVERSIONED,
                    content_hash=hashlib.sha256(data).hexdigest(), diagnostics=tuple(diagnostics),
                    title=page_title or f"{set_name} リリースノート")


def _html_to_text(text: str, source: str, diagnostics: list[Diagnostic]) -> tuple[str, str | None]:
    try:
        tree = html_document(re.sub(r"^\s*<\?xml[^>]*\?>", "", text), source, diagnostics)
    except (etree.ParserError, ValueError) as exc:
        diagnostics.append(Diagnostic(source, "", f"not readable as HTML ({exc})"))
        return "", None
    title_el = tree.find(".//title")
    title = title_el.text_content().strip() if title_el is not None and title_el.text_content().strip() else None
    h1 = tree.find(".//h1")
    if title is None and h1 is not None:
        title = h1.text_content().strip() or None
    for el in tree.xpath(CHROME):
        el.drop_tree()
    root = next(iter(tree.xpath("//article|//main|//*[@id='article-body' or contains(@class, 'article-body')]")), None)
    root = root if root is not None else tree.find(".//body") if tree.find(".//body") is not None else tree
    for el in root.iter(*BLOCK_TAGS, "ul", "ol"):
        if el.tag == "li" and not (el.text or "").lstrip().startswith(("•", "・")):
            el.text = "• " + (el.text or "")
        if el.tag in ("ul", "ol"):  # a list ends a section, as a blank line does in the text form
            el.tail = f"\n{SECTION_BREAK}\n" + (el.tail or "")
        elif el.tag[0] == "h" and el.tag[1:].isdigit():
            el.text = f"\n{SECTION_BREAK}\n" + (el.text or "")
            el.tail = "\n" + (el.tail or "")
        else:
            el.tail = "\n" + (el.tail or "")
            el.text = "\n" + (el.text or "")
    lines = [line for line in root.text_content().splitlines() if line.strip()]
    return "\n".join("" if line.strip() == SECTION_BREAK else line for line in lines), title


def _set_name(page_title: str | None, source: str) -> str:
    if page_title and (m := SET_NAME_RE.search(page_title)):
        return m.group(1).strip()
    if page_title and page_title.replace("リリースノート", "").strip(" 　|-–"):
        return re.split(r"\s*[|｜]\s*", page_title.replace("リリースノート", ""))[0].strip(" 　-–")
    path = urlsplit(source).path if "://" in source else source
    return unquote(PurePosixPath(path).stem) or "release-notes"


def _notes(lines: list[str], set_name: str, source: str, diagnostics: list[Diagnostic]) -> list[Node]:
    chaptered = any(_clean(line) in (GENERAL_CHAPTER, CARD_CHAPTER) for line in lines)
    groups = _chapter_groups(lines) if chaptered else _groups(lines)
    return _nodes(groups, set_name, source, diagnostics)


def _clean(raw: str) -> str:
    return raw.strip().replace("\u3000", " ").strip()


def _is_heading(line: str) -> bool:
    return (MECHANIC_HEADING_RE.match(line) is not None or GENERAL_RE.match(line) is not None
            or (len(line) <= HEADING_CHARS and not SENTENCE_END_RE.search(line) and not re.search(r"[:：]", line)))


def _chapter_groups(lines: list[str]) -> list[dict]:
    """The sections of the long-standing layout (see the module doc)."""
    groups: list[dict] = []
    chapter: str | None = None
    current: dict | None = None
    for lineno, raw in enumerate(lines, 1):
        line = _clean(raw)
        if line in (GENERAL_CHAPTER, CARD_CHAPTER):
            chapter, current = line, None
            continue
        if not line or chapter is None:  # blank, or the introduction before the chapters
            continue
        bullet = BULLET_RE.match(line) or OLD_BULLET_RE.match(line)
        if chapter == CARD_CHAPTER:
            if CARD_HEADING_RE.match(line):
                current = {"heading": line, "line": lineno, "bullets": [], "body": []}
                groups.append(current)
            elif current is None or (not bullet and _is_heading(line) and current["bullets"]):
                continue  # a colour or card-type heading between card sections
            elif bullet:
                current["bullets"].append(bullet.group("text").strip())
            elif current["bullets"]:
                current["bullets"][-1] += "\n" + line
            else:
                current["body"].append(line)  # the card's own text: cost, type line, rules text
            continue
        if not bullet and _is_heading(line):
            mechanic = MECHANIC_HEADING_RE.match(line) or GENERAL_RE.match(line)
            current = {"heading": line, "line": lineno, "bullets": [], "body": [], "general": True,
                       "mechanic": mechanic.group("mechanic").strip() if mechanic else None}
            groups.append(current)
        elif current is None:
            continue  # text of the chapter before its first heading
        elif bullet:
            current["bullets"].append(bullet.group("text").strip())
        else:
            current["body"].append(line)
    return [g for g in groups if g["bullets"] or g["body"]]


def _groups(lines: list[str]) -> list[dict]:
    groups: list[dict] = []
    heading: str | None = None
    heading_line = 0
    current: dict | None = None
    for lineno, raw in enumerate(lines, 1):
        line = raw.strip().replace("\u3000", " ").strip()
        if not line:
            if current is not None:  # a blank line after bullets ends the section
                heading, heading_line, current = None, 0, None
            continue
        bullet = BULLET_RE.match(line)
        if bullet:
            if current is None:
                current = {"heading": heading, "line": heading_line or lineno, "bullets": []}
                groups.append(current)
            current["bullets"].append(bullet.group("text").strip())
            continue
        if current is not None or heading is None or GENERAL_RE.match(line):
            heading, heading_line, current = line, lineno, None  # a new heading starts after bullets
    return groups


def _nodes(groups: list[dict], set_name: str, source: str, diagnostics: list[Diagnostic]) -> list[Node]:
    nodes: list[Node] = []
    by_content: dict[tuple, int] = {}
    used_ids: dict[str, int] = {}
    unnamed = 0
    for group in groups:
        key = (group["heading"], tuple(group["bullets"]))
        if key in by_content:
            i = by_content[key]
            meta = nodes[i].meta
            nodes[i] = dataclasses.replace(nodes[i], meta={**meta, "occurrences": meta["occurrences"] + 1,
                                                           "lines": [*meta["lines"], group["line"]]})
            continue
        heading = group["heading"]
        general = GENERAL_RE.match(heading) if heading else None
        mechanic = general.group("mechanic") if general else group.get("mechanic")
        if general:
            name = general.group("mechanic")
        elif heading and not DASH_ONLY_RE.match(heading):
            name = CARD_RE.sub(r"\1", heading)[:60]
        else:
            unnamed += 1
            name = f"notes-{unnamed}"
        node_id = note_id(set_name, name)
        if node_id in used_ids:
            used_ids[node_id] += 1
            diagnostics.append(Diagnostic(source, f"line {group['line']}", f"section {heading!r} appears again "
                                          f"with different bullets; kept as {name}-{used_ids[node_id]}"))
            node_id = f"{node_id}-{used_ids[node_id]}"
        else:
            used_ids[node_id] = 1
        by_content[key] = len(nodes)
        nodes.append(_note(node_id, heading, mechanic, group, len(nodes), set_name))
    return nodes


UNTITLED_LEAD_CHARS = 24


def untitled_note_title(set_name: str, bullets: list[str]) -> str:
    """The title of a note whose heading is missing or only a dash: its set and its first card, else the start of its
    first bullet."""
    card = next((m.group(1) for b in bullets for m in CARD_RE.finditer(b)), None)
    if card:
        return f"{set_name}：《{card}》について"
    lead = bullets[0] if bullets else ""
    return f"{set_name}：{lead[:UNTITLED_LEAD_CHARS]}{'…' if len(lead) > UNTITLED_LEAD_CHARS else ''}"


def _note(node_id: str, heading: str | None, mechanic: str | None, group: dict, order: int, set_name: str) -> Node:
    head = heading if heading and not DASH_ONLY_RE.match(heading) else None
    body = group.get("body", [])
    text = "\n".join(([head] if head else []) + body + [f"• {b}" for b in group["bullets"]])
    refs = [Ref(REF_MECHANIC, mechanic, mechanic, 0, len(mechanic))] if mechanic else []
    for m in CARD_RE.finditer(text):
        names = split_card_name(m.group(1)) or (m.group(1).strip(), None)
        refs.append(Ref(REF_CARD, names[1] or names[0], m.group(1), m.start(1), m.end(1)))
    html = sanitize_html((f"<h3>{html_lib.escape(head)}</h3>" if head else "")
                         + "".join(f"<p>{html_lib.escape(line)}</p>" for line in body)
                         + ("<ul>" + "".join(f"<li>{html_lib.escape(b)}</li>" for b in group["bullets"]) + "</ul>"
                            if group["bullets"] else ""))
    meta: dict[str, object] = {"occurrences": 1, "lines": [group["line"]], "bullets": group["bullets"]}
    if group.get("general"):
        meta["general"] = True
    if mechanic:
        meta["mechanic"] = mechanic
    title = head or untitled_note_title(set_name, group["bullets"])
    return Node(id=node_id, kind=NOTE, lang="ja", version=UNVERSIONED, text=text, title=title, order=order,
                refs=tuple(refs), html=html, meta=meta)
