"""Parse a Comprehensive Rules text file (official English ``MagicCompRules*.txt`` or the Japanese
translation ``JPN_CR_YYYYMMDD_N.txt``) into a :class:`Document` of chapter, section, rule, subrule and glossary nodes.

Pure function of the bytes: :func:`parse_cr_text`; :func:`parse_cr_lines` is the same parser on lines already
extracted (``ingest.cr_html`` gives it the lines of an HTML rules document). The contents list is skipped
(``Glossary``/``Credits`` appear there too); the body runs from the first chapter heading before rule ``100.1`` to
the glossary (``用語集``, ``10. 用語集``, ``Glossary``), the glossary to the credits. Rule references are found here
but resolved later (``kb.link.resolve``). Each line is read without invisible characters (a BOM mid-file, zero-width
spaces and joiners) and with a number written in full width (``１００．１ｂ``) in half width; a record line that starts
with a word numbering no rule (``999.99999z``, ``601.2l``, a Cyrillic letter) is a warning naming its line and is
skipped, never text of the rule above it.

A whole document has chapters 1 to 9 and ends with its glossary and its credits. One that is not — cut short,
ending inside the rules or the glossary, or an excerpt — is still parsed, with a warning beginning ``incomplete:``
(:data:`INCOMPLETE`) that says what it lacks, so that ``--strict`` refuses it and it never becomes the newest version
unannounced.

Versions: a Japanese translation is the version in its title ``マジック総合ルール(和訳 20250919.1 版)`` (a revision is
its own version; the old forms ``和訳 20160408.0-rb 版`` and ``私訳 … 版`` too). Its document's ``effective_date`` is
the date it *claims* to translate: its file name's date (``JPN_CR_20250725_0.txt``: 2025-07-25, though titled
``和訳 20250726.0 版``), else its title version's date; the translator line ``… が 2023-11-18 に翻訳したものです。``
is only the day it was translated (``translated_date``, 翻訳日), which is the English original's date in half the known
files only (:mod:`kb.versions.catalog` pairs a translation with its original from both). An English file is the date
its text states (``effective as of November 14, 2025``), whatever its file name says.
"""

from __future__ import annotations

import collections
import hashlib
import re
import unicodedata
from collections.abc import Mapping
from datetime import date, timedelta
from typing import Any

from ingest.decode import decode_text, split_lines
from ingest.refs import find_rule_refs
from kb import rulenum
from kb.errors import KbError
from kb.ids import glossary_id, rule_id
from kb.model import CHAPTER, GLOSSARY, REF_TERM, RULE, SECTION, SUBRULE, Diagnostic, Document, Node, Ref

JA_VERSION_RE = re.compile(r"(?:和訳|私訳)\s*第?\s*([0-9]{8}(?:\.[0-9]+)?)(?:-rb)?\s*版")
JA_FILE_DATE_RE = re.compile(r"JPN_CR_(\d{4})(\d{2})(\d{2})_\d+")  # the file name a translation is published under
JA_TRANSLATED_RE = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})\s*に翻訳した")
EN_EFFECTIVE_RE = re.compile(r"effective as of ([A-Z][a-z]+ \d{1,2}, \d{4})")
CHAPTER_RE = re.compile(rf"^({rulenum.CHAPTER})\.\s+(\S.*)$")
SECTION_RE = re.compile(rf"^({rulenum.SECTION})\.\s+(\S.*)$")
RULE_RE = re.compile(rf"^({rulenum.RULE})(\.|\s)\s*(.*)$")
SUBRULE_RE = re.compile(rf"^({rulenum.SUBRULE_CANDIDATE})\.?(?:\s+|$)(.*)$")
EXAMPLE_RE = re.compile(r"^\s*(?:Example|例)\s*[:：]\s*(.*)$")
FIRST_RULE_RE = re.compile(r"^100\.1\.?\s")
GLOSSARY_HEADING_RE = re.compile(r"^(?:\d{1,2}\.\s*)?(?:Glossary|用語集)$")
CREDITS_HEADING_RE = re.compile(r"^(?:\d{1,2}\.\s*)?(?:Credits|クレジット)$")
SENTENCE_END_RE = re.compile(r"(?:[。.．][”」』)）\"'’]*|[!?！？][”」』)）\"'’]+)$")  # ends a sentence, never a term
SENSE_RE = re.compile(r"^\d{1,2}\.\s")  # "2. An activated or triggered ability …": a glossary entry's second sense
SEE_TERM_RE = re.compile(r"^See ([^.]+)\.$|^「([^」]+)」(?:を)?参照。?$")
# invisible characters that are noise wherever they stand in a CR text (a BOM mid-file, zero-width spaces and joiners,
# a word joiner): removed from every line before it is read, so that none hides a rule number
INVISIBLE_RE = re.compile("[\ufeff\u200b\u200c\u200d\u2060]")
LEADING_TOKEN_RE = re.compile(r"^\s*(\S+)")  # a line's first word: where a record line has its number, in any width
ODD_NUMBER_RE = re.compile(rf"^{rulenum.NUMBER_CANDIDATE}")  # a record line numbered like no rule
SHOWN_NUMBER = 40  # characters of an odd number a warning quotes
INCOMPLETE = "incomplete:"  # how the warning about a document cut short begins

HEADER_LINES = 80  # the title and translator lines are within the first lines (HTML pages have a few header blocks)
MONTHS = {m: i for i, m in enumerate(
    "January February March April May June July August September October November December".split(), 1)}


def file_names_of_version(version: str, window_days: int = 7) -> list[str]:
    """The file names a translation of ``version`` (``20250726.0``, ``20250919.1``, ``20260116``) can be published
    under, likeliest first: its own date, then the dates nearest it within ``window_days`` (earlier first) — a file
    is named by the English release it translates, not always its title (``JPN_CR_20250725_0.txt`` is
    ``和訳 20250726.0 版``). Empty when ``version`` is not a version id."""
    m = re.fullmatch(r"(\d{4})(\d{2})(\d{2})(?:[._](\d+))?", version.strip())
    if not m:
        return []
    try:
        day = date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return []
    offsets = [0] + [sign * n for n in range(1, window_days + 1) for sign in (-1, 1)]
    return [f"JPN_CR_{(day + timedelta(days=k)).strftime('%Y%m%d')}_{m.group(4) or 0}.txt" for k in offsets]


def incompleteness(doc: Document) -> str | None:
    """What ``doc`` lacks, as its :data:`INCOMPLETE` warning says it (``the document ends inside the rules, …``), or
    None for a whole document."""
    return next((d.message.removeprefix(INCOMPLETE).split(";")[0].strip() for d in doc.diagnostics
                 if d.message.startswith(INCOMPLETE)), None)


def parse_cr_text(data: bytes, source: str) -> Document:
    """Parse one CR text file. Raise KbError when the bytes are not a Comprehensive Rules text."""
    decoded = decode_text(data, source)
    return parse_cr_lines(split_lines(decoded.text), source, content_hash=hashlib.sha256(data).hexdigest(),
                          diagnostics=decoded.diagnostics)


def parse_cr_lines(lines: list[str], source: str, *, content_hash: str, kind: str = "cr-text",
                   readings: Mapping[int, str] | None = None, diagnostics: tuple[Diagnostic, ...] = ()) -> Document:
    """Parse the lines of a CR document. ``readings`` maps a line's index to the line with ruby readings in place of
    the words they read (``予示/Manifest`` → ``よじ/Manifest``); a glossary term's reading comes from it."""
    lines = [_readable(line) for line in lines]
    lang, version, effective, translated = _identify(lines, source)
    body_start = _body_start(lines, source)
    glossary_at = _heading_after(lines, GLOSSARY_HEADING_RE, body_start)
    credits_at = _heading_after(lines, CREDITS_HEADING_RE, glossary_at if glossary_at is not None else body_start)
    rules_end = glossary_at if glossary_at is not None else (credits_at if credits_at is not None else len(lines))
    found: list[Diagnostic] = list(diagnostics)
    contents = {m.group(1): m.group(2).strip() for line in lines[:body_start] if (m := SECTION_RE.match(line.strip()))}
    nodes = _parse_rules(lines, body_start, rules_end, lang, version, source, found, contents)
    if glossary_at is not None:
        end = credits_at if credits_at is not None else len(lines)
        nodes += _parse_glossary(lines, glossary_at + 1, end, lang, version, len(nodes), source, found, readings or {})
    lacking = _lacking(lines, nodes, glossary_at, credits_at)
    if lacking:
        last = next((i + 1 for i in range(len(lines) - 1, -1, -1) if lines[i].strip()), len(lines))
        found.insert(len(diagnostics), Diagnostic(  # before the records' warnings: it matters most
            source, f"line {last}", f"{INCOMPLETE} the document {lacking}; it is stored as version {version} all the "
            "same — ingest the whole file to replace it (--strict refuses it)"))
    return Document(
        source=source,
        kind=kind,
        lang=lang,
        nodes=tuple(nodes),
        version=version,
        effective_date=effective,
        translated_date=translated,
        content_hash=content_hash,
        diagnostics=tuple(found),
        title="Magic: The Gathering Comprehensive Rules" if lang == "en" else "マジック総合ルール",
    )


def _readable(line: str) -> str:
    """``line`` without its invisible characters, its first word in half width when that reads as a number
    (``１００．１ｂ`` → ``100.1b``; the Japanese files sometimes mix widths)."""
    if line.isascii():
        return line
    line = INVISIBLE_RE.sub("", line)
    head = LEADING_TOKEN_RE.search(line)
    if head is None or head.group(1).isascii():
        return line
    word = unicodedata.normalize("NFKC", head.group(1))
    return line[:head.start(1)] + word + line[head.end():] if word[:1].isdigit() and word[:1].isascii() else line


def _lacking(lines: list[str], nodes: list[Node], glossary_at: int | None, credits_at: int | None) -> str | None:
    """What a document that is not whole lacks — its closing sections (cut short), or chapters (an excerpt); None
    for a whole one: chapters 1 to 9, the glossary, then the credits with their text."""
    if glossary_at is None:
        return "ends inside the rules, without its glossary and credits (cut short?)"
    if credits_at is None:
        return "ends inside the glossary, without its credits (cut short?)"
    if not any(line.strip() for line in lines[credits_at + 1:]):
        return "ends at the credits' heading, without their text (cut short?)"
    chapters = {n.number for n in nodes if n.kind == CHAPTER}
    missing = [str(c) for c in range(1, 10) if str(c) not in chapters]
    if missing:
        return f"has no chapter {', '.join(missing)} (an excerpt?)"
    return None


def _identify(lines: list[str], source: str) -> tuple[str, str, str | None, str | None]:
    """(language, version, effective or claimed date, translation date) from the header (and, for a translation,
    the file name)."""
    head = "\n".join(lines[:HEADER_LINES])
    m = JA_VERSION_RE.search(head)
    if m:
        version = m.group(1)
        translated = JA_TRANSLATED_RE.search(head)
        named = JA_FILE_DATE_RE.search(source.replace("\\", "/").rsplit("/", 1)[-1])
        claimed = _iso(named.groups() if named else (version[:4], version[4:6], version[6:8]), source, "file or title")
        return "ja", version, claimed, _iso(translated.groups(), source, "translation") if translated else None
    m = EN_EFFECTIVE_RE.search(head)
    if m:
        month, day, year = m.group(1).replace(",", "").split()
        at = head.count("\n", 0, m.start()) + 1  # the header line that says it
        where = f"{source}:{at}"
        if month not in MONTHS:
            raise KbError(f"{where}: unknown month in effective date {m.group(1)!r}")
        try:
            d = date(int(year), MONTHS[month], int(day))
        except ValueError:
            raise KbError(f"{where}: the effective date {m.group(1)!r} is not a date") from None
        return "en", d.strftime("%Y%m%d"), d.isoformat(), None
    if any("総合ルール" in line for line in lines[:HEADER_LINES]):
        raise KbError(f"{source}:1: Japanese CR without a version line like 'マジック総合ルール(和訳 20231117.0 版)'")
    raise KbError(f"{source}:1: not a Comprehensive Rules text (no 'effective as of …' or '和訳 … 版' line in the header)")


def _iso(parts: tuple[str, ...], source: str, what: str) -> str:
    try:
        return date(*map(int, parts)).isoformat()
    except ValueError:
        raise KbError(f"{source}: the {what} date {'-'.join(parts)} is not a date") from None


def _body_start(lines: list[str], source: str) -> int:
    first_rule = next((i for i, line in enumerate(lines) if FIRST_RULE_RE.match(line)), None)
    if first_rule is None:
        raise KbError(f"{source}: not a Comprehensive Rules text (rule 100.1 not found; truncated file?)")
    for i in range(first_rule - 1, -1, -1):
        if CHAPTER_RE.match(lines[i].strip()):
            return i
    return first_rule


def _heading_after(lines: list[str], heading: re.Pattern[str], after: int) -> int | None:
    """Index of the first line after ``after`` that is the ``heading``."""
    return next((i for i in range(after, len(lines)) if heading.match(lines[i].strip())), None)


def _parse_rules(lines: list[str], start: int, end: int, lang: str, version: str, source: str,
                 diagnostics: list[Diagnostic], contents: Mapping[str, str]) -> list[Node]:
    """The rule nodes of ``lines[start:end]``. A rule whose section has no heading line (some ruby editions go from
    ``1. ゲームの考え方`` straight to ``100.1.``) gets its section from the number, titled as the contents list
    (``contents``: section number → title) names it, with ``meta['implied']``."""
    nodes: list[dict[str, Any]] = []
    by_number: dict[str, dict[str, Any]] = {}
    current: dict[str, Any] | None = None
    last_was_example = False

    def add(number: str, kind: str, text: str, title: str | None, lineno: int) -> dict[str, Any] | None:
        n = rulenum.parse(number)
        if n is None:
            diagnostics.append(_odd_number(source, lineno, number))
            return None
        parent = str(n.parent) if n.parent else None
        if kind == RULE and parent and parent not in by_number and (section := rulenum.parse(parent)) is not None:
            chapter = str(section.parent) if section.parent else None
            implied: dict[str, Any] = {
                "number": parent, "kind": SECTION, "title": contents.get(parent), "text": [], "examples": [],
                "parent": chapter if chapter in by_number else None, "line": lineno, "implied": True}
            nodes.append(implied)
            by_number[parent] = implied
        if parent and parent not in by_number:
            diagnostics.append(Diagnostic(source, f"line {lineno}", f"rule {number} has no parent {parent} above it"))
        if number in by_number:
            diagnostics.append(Diagnostic(source, f"line {lineno}", f"rule {number} appears twice; the second is skipped"))
            return None
        rec = {"number": number, "kind": kind, "title": title, "text": [text] if text else [], "examples": [],
               "parent": parent if parent in by_number else None, "line": lineno}
        nodes.append(rec)
        by_number[number] = rec
        return rec

    for i in range(start, end):
        raw = lines[i]
        line = raw.strip()
        if not line:
            continue
        lineno = i + 1
        if m := SUBRULE_RE.match(line):
            current, last_was_example = add(m.group(1), SUBRULE, m.group(2).strip(), None, lineno), False
        elif m := RULE_RE.match(line):
            current, last_was_example = add(m.group(1), RULE, m.group(3).strip(), None, lineno), False
        elif m := SECTION_RE.match(line):
            current, last_was_example = add(m.group(1), SECTION, "", m.group(2).strip(), lineno), False
        elif (m := CHAPTER_RE.match(line)) and not raw[:1].isspace():
            current, last_was_example = add(m.group(1), CHAPTER, "", m.group(2).strip(), lineno), False
        elif (m := ODD_NUMBER_RE.match(line)) and not raw[:1].isspace():
            diagnostics.append(_odd_number(source, lineno, m.group()))
            current, last_was_example = None, False
        elif m := EXAMPLE_RE.match(line):
            if current is None or current["kind"] in (CHAPTER, SECTION):
                diagnostics.append(Diagnostic(source, f"line {lineno}", "example outside any rule, skipped"))
                continue
            current["examples"].append(m.group(1).strip())
            last_was_example = True
        elif current is not None:
            if last_was_example:
                current["examples"][-1] += "\n" + line
            else:
                current["text"].append(line)
        else:
            diagnostics.append(Diagnostic(source, f"line {lineno}", f"text before the first rule, skipped: {line[:40]!r}"))

    out = []
    for order, rec in enumerate(nodes):
        text = "\n".join(rec["text"])
        refs = find_rule_refs(text)
        for example in rec["examples"]:  # offsets are for the text only; references in examples are unplaced
            refs += [Ref(r.kind, r.target, r.text) for r in find_rule_refs(example)]
        meta: dict[str, Any] = {"line": rec["line"]}
        if rec.get("implied"):
            meta["implied"] = True
        out.append(Node(
            id=rule_id(rec["number"]), kind=rec["kind"], lang=lang, version=version, text=text, number=rec["number"],
            title=rec["title"], parent=rule_id(rec["parent"]) if rec["parent"] else None, order=order,
            examples=tuple(rec["examples"]), refs=tuple(refs), meta=meta,
        ))
    return out


def _odd_number(source: str, lineno: int, number: str) -> Diagnostic:
    shown = number if len(number) <= SHOWN_NUMBER else number[:SHOWN_NUMBER] + "…"
    return Diagnostic(source, f"line {lineno}", f"{shown} is not a rule number; the line is skipped")


def _parse_glossary(lines: list[str], start: int, end: int, lang: str, version: str, order0: int, source: str,
                    diagnostics: list[Diagnostic], readings: Mapping[int, str]) -> list[Node]:
    """Entries are paragraphs (runs of non-blank lines) headed by the term. A paragraph continues the entry above when
    it reads as part of a definition — it ends a sentence, or starts a numbered sense, or both it and the paragraph
    above are single lines (a term, then its definition, as two HTML paragraphs)."""
    blocks: list[tuple[int, list[str]]] = []  # (index of the head line, lines)
    block: list[str] = []
    block_at = start
    for i in range(start, end + 1):
        line = lines[i].strip() if i < end else ""
        if line:
            if not block:
                block_at = i
            block.append(line)
        elif block:
            above = blocks[-1][1] if blocks else None
            if above and (SENTENCE_END_RE.search(block[0]) or SENSE_RE.match(block[0])
                          or (len(above) == 1 and len(block) == 1)):
                above.extend(block)
            else:
                blocks.append((block_at, block))
            block = []

    heads = [_split_term(b[0], lang) for _, b in blocks]
    term_counts = collections.Counter(h[0] for h in heads)
    nodes: list[Node] = []
    seen: set[str] = set()
    for (head_at, block), (term, aliases, english) in zip(blocks, heads, strict=True):
        lineno = head_at + 1
        if len(block) < 2:
            diagnostics.append(Diagnostic(source, f"line {lineno}", f"glossary entry {block[0]!r} has no definition, skipped"))
            continue
        if aliases and (term_counts[term] > 1 or any(a in term_counts for a in aliases)):
            # "Active Player, Nonactive Player Order" is one term, not the entry "Active Player" again
            term, aliases = block[0].split("/")[0].strip() if lang == "ja" else block[0].strip(), ()
        if term in seen:
            diagnostics.append(Diagnostic(source, f"line {lineno}",
                                          f"glossary term {term!r} appears twice; the second is skipped"))
            continue
        seen.add(term)
        text = "\n".join(block[1:])
        refs = find_rule_refs(text)
        see = SEE_TERM_RE.match(block[-1])
        if see:
            target = see.group(1) or see.group(2)
            off = text.rfind(target)
            refs.append(Ref(REF_TERM, target, target, off, off + len(target)))
        meta: dict[str, Any] = {"line": lineno}
        if head_at in readings and readings[head_at] != lines[head_at]:
            meta["reading"] = _reading_of(term, lines[head_at], readings[head_at], lang)
        if "(Obsolete)" in block[0] or "（廃語）" in block[0]:
            meta["obsolete"] = True
        nodes.append(Node(
            id=glossary_id(term), kind=GLOSSARY, lang=lang, version=version, text=text, title=term, order=order0 + len(nodes),
            aliases=tuple(aliases), english=english, refs=tuple(refs), meta=meta,
        ))
    return nodes


_QUOTED = re.compile(r"[“\"「]([^”\"」]+)[”\"」]")


def _split_term(head: str, lang: str) -> tuple[str, tuple[str, ...], str | None]:
    """'You, Your' → ('You', ('Your',), None); '唱える/Cast' → ('唱える', (), 'Cast')."""
    head = re.sub(r"\s*[(（](?:Obsolete|廃語)[)）]\s*$", "", head.strip())
    english = None
    if lang == "ja" and re.search(r"[/／]", head):
        ja_part, english = re.split(r"\s*[/／]\s*", head, maxsplit=1)
        head = ja_part
    quoted = [q.strip(" ,，、") for q in _QUOTED.findall(head)]
    plain = _QUOTED.sub("", head)
    parts = [p.strip() for p in re.split(r"[,，、]", plain) if p.strip()]
    if not parts:
        parts = quoted[:1]
        quoted = quoted[1:]
    return parts[0], tuple(parts[1:] + quoted), english


def _reading_of(term: str, head: str, head_reading: str, lang: str) -> str:
    """The reading of ``term`` from its head line read with ruby (``予示/Manifest`` with ``よじ/Manifest`` → ``よじ``),
    katakana as hiragana."""
    read_term, _, _ = _split_term(head_reading, lang)
    if term != _split_term(head.strip(), lang)[0]:  # the head names another term (see the duplicate rule above)
        read_term = re.split(r"\s*[/／]\s*", head_reading.strip(), maxsplit=1)[0]
    return "".join(chr(ord(c) - 0x60) if "ァ" <= c <= "ヶ" else c for c in read_term)
