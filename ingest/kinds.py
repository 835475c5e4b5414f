"""The registry of source kinds: each kind is declared here once — its name (the ``kb ingest --kind`` choice), what it
is, how its content is recognised, its parser, the ``kb fetch`` sites whose pages are of this kind, and its authority
(which source's node wins when two give the same node: a CR document over a Wisdom Guild page of the same version).

Detection (:func:`detect_kind`) asks every kind how sure it is: 3 when the page says what it is (a Wisdom Guild
rules-viewer page: 総合ルールビューア, its ``MJMJ訳 … 版`` and rule numbers, without MediaWiki's own page structure),
2 when the content says so, 1 when only the file name or URL does, 0 not at all; the surest wins, ties going to the
kind declared first. So an MTG Wiki page that links to Wisdom Guild stays an MTG Wiki page (its MediaWiki markup is
content; a link is not), a rules-viewer page whose menu links to MTG Wiki stays a rules-viewer page, and an HTML
page whose text is a rules document (the ``和訳 … 版`` title and rule ``100.1``) is the CR kind wherever it was saved
or fetched from. Nothing recognised (:func:`unrecognised`): a file named by the user is read, HTML as an MTG Wiki page,
anything else as a CR text file (whose parser then says clearly that it is not one); a folder's file is skipped.
Parsers are imported when first used.

Nothing passes quietly (:func:`parse_source`): a document that gives less than its kind promises — no rules from a
rules kind, no article from a wiki page, no note from release notes — carries a warning beginning
:data:`GAVE_NOTHING` that names the source and why (so ``--strict`` refuses it); :func:`gave_nothing` tells such a
document, for the ingest summary.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from ingest.decode import WIKI_FALLBACKS, WISDOM_GUILD_FALLBACKS
from kb import rulenum
from kb.errors import KbError
from kb.model import ARTICLE, NOTE, RULE_KINDS, Diagnostic, Document

SAYS_SO, CONTENT, NAME, NO = 3, 2, 1, 0
_HEAD = 20000  # bytes of a source looked at for markers
_RELEASE_NOTES = "リリースノート".encode()
_GENERAL_NOTES = "に関する一般的な情報".encode()
_NOTES_CHAPTERS = tuple("\n".join(("一般注釈", "カード別注釈")).encode(e).split(b"\n") for e in WIKI_FALLBACKS)  # 2014 layout
_VIEWER = tuple("総合ルールビューア".encode(e) for e in WISDOM_GUILD_FALLBACKS)  # markers in each charset of the site
_MJMJ_VERSION = tuple(re.compile(re.escape("MJMJ訳".encode(e)) + rb"(?:\s|&nbsp;|&#160;|<[^>]{0,200}>)*\d{8}")
                      for e in WISDOM_GUILD_FALLBACKS)
_RULE_NUMBER = re.compile(rb"(?<![\d.])" + rulenum.RULE.encode() + rulenum.LETTER_CANDIDATE.encode() + rb"?(?![\d.])")
_MEDIAWIKI_PAGE = re.compile(rb"""id=["']?(?:mw-content-text|firstHeading)|name=["']?generator["']?\s+content=["']?MediaWiki""",
                             re.I)
GAVE_NOTHING = "gave nothing:"  # how the warning about a source that gave less than its kind promises begins


def _is_html(data: bytes) -> bool:
    from ingest.cr_html import is_html

    return is_html(data)


def _cr(source: str, data: bytes) -> int:
    from ingest.cr_html import looks_like_cr_html
    from ingest.cr_text import EN_EFFECTIVE_RE, HEADER_LINES, JA_VERSION_RE
    from ingest.decode import decode_text

    if _is_html(data):
        return CONTENT if looks_like_cr_html(data, source) else NO
    try:
        head = "\n".join(decode_text(data[:_HEAD], source).text.splitlines()[:HEADER_LINES])
    except KbError:  # the cut may split a character; the parser reads the whole file
        return NO
    return CONTENT if JA_VERSION_RE.search(head) or EN_EFFECTIVE_RE.search(head) else NO


def _wisdom_guild(source: str, data: bytes) -> int:
    if _is_rules_viewer(data):
        return SAYS_SO
    head = data[:_HEAD].lower()
    name = source.lower()
    if b"wisdom-guild" in head and b"/cr/" in head:
        return CONTENT
    return NAME if "wisdom-guild" in name or "whisper." in name else NO


def _is_rules_viewer(data: bytes) -> bool:
    """A Wisdom Guild rules-viewer page by what it says: 総合ルールビューア, ``MJMJ訳 20231117.0`` and rule numbers
    — and not MediaWiki's page structure (an MTG Wiki article may link to the viewer and quote rules)."""
    if _MEDIAWIKI_PAGE.search(data[:_HEAD * 4]):
        return False
    return (any(marker in data for marker in _VIEWER) and any(v.search(data) for v in _MJMJ_VERSION)
            and _RULE_NUMBER.search(data) is not None)


def _mtgwiki(source: str, data: bytes) -> int:
    head = data[:_HEAD].lower()
    if b"mediawiki" in head or b"mw-content-text" in head or b"firstheading" in head:
        return CONTENT
    return NAME if "mtgwiki" in source.lower() else NO


def _release_notes(source: str, data: bytes) -> int:
    head = data[:_HEAD]
    if (_GENERAL_NOTES in head or (_RELEASE_NOTES in head and _is_html(data))
            or any(general in head and cards in data for general, cards in _NOTES_CHAPTERS)):
        return CONTENT
    return NAME if "mtg-jp" in source.lower() else NO


@dataclass(frozen=True)
class SourceKind:
    name: str
    description: str
    parser: str  # "module:function", a pure function (data: bytes, source: str) -> Document
    recognise: Callable[[str, bytes], int]  # CONTENT, NAME or NO for (source, data)
    authority: int = 0
    rules: bool = False  # its documents hold rules: forced on a source that gives none, it is an error
    fetch_sites: tuple[str, ...] = ()  # ingest.net.sites profiles whose pages are of this kind
    promises: tuple[str, ...] = ()  # node kinds a document of this kind gives at least one of
    promise: str = ""  # what it gives, in words (for the warning when it gives none)

    def parse(self, data: bytes, source: str) -> Document:
        module, function = self.parser.split(":")
        return getattr(importlib.import_module(module), function)(data, source)


KINDS: tuple[SourceKind, ...] = (  # in the order ties are decided
    SourceKind("mtgwiki", "MTG Wiki (mtgwiki.com) article pages", "ingest.mtgwiki:parse_mtgwiki", _mtgwiki,
               fetch_sites=("mtgwiki",), promises=(ARTICLE,), promise="an article"),
    SourceKind("cr-text", "Comprehensive Rules: MagicCompRules*.txt, JPN_CR_*.txt, JPN_CR_*.rb.html, the mtg-jp.com "
               "rules page", "ingest.cr_html:parse_cr_document", _cr, authority=2, rules=True, fetch_sites=("mjmj", "mtg-jp"),
               promises=RULE_KINDS, promise="rules"),
    SourceKind("wisdom-guild", "Wisdom Guild rules-viewer pages", "ingest.wisdom_guild:parse_wisdom_guild",
               _wisdom_guild, authority=1, rules=True, fetch_sites=("wisdom-guild",), promises=RULE_KINDS, promise="rules"),
    SourceKind("release-notes", "mtg-jp.com card release notes", "ingest.release_notes:parse_release_notes",
               _release_notes, fetch_sites=("mtg-jp",), promises=(NOTE,), promise="release notes"),
)
SOURCE_KIND_NAMES: tuple[str, ...] = tuple(k.name for k in KINDS)
FETCH_SITES: tuple[str, ...] = tuple(sorted({site for k in KINDS for site in k.fetch_sites}))  # kb fetch's choices
_BY_NAME = {k.name: k for k in KINDS}


def kind(name: str) -> SourceKind:
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KbError(f"unknown source kind {name!r}; choose one of {', '.join(SOURCE_KIND_NAMES)}") from None


def authority() -> dict[str, int]:
    """Each kind's authority, for the store (which knows kinds only by name)."""
    return {k.name: k.authority for k in KINDS}


def kinds_of_site(site: str) -> tuple[str, ...]:
    """The kinds a ``kb fetch`` site's pages can be."""
    return tuple(k.name for k in KINDS if site in k.fetch_sites)


def detect_kind(source: str, data: bytes, among: tuple[str, ...] | None = None) -> str:
    """The kind of a source (one of ``among``, default any), from its content first and its name or URL second."""
    among = among or SOURCE_KIND_NAMES
    best, name = NO, None
    for candidate in KINDS:  # in declared order: a later kind must be surer to win
        if candidate.name in among:
            score = candidate.recognise(source, data)
            if score == SAYS_SO:
                return candidate.name
            if score > best:
                best, name = score, candidate.name
    if name is not None:
        return name
    if len(among) < len(KINDS):
        raise KbError(f"{source}: not recognised as {' or '.join(among)}")
    return "mtgwiki" if _is_html(data) else "cr-text"


def unrecognised(source: str, data: bytes) -> str | None:
    """Why no kind recognises ``source`` by its content or its name (None when one does): :func:`detect_kind` would
    only guess (HTML as an MTG Wiki page, anything else as a CR text). A folder's files are read only when
    recognised: a stray ``page.html`` beside the sources must not become the MTG Wiki article "Page"."""
    if any(k.recognise(source, data) > NO for k in KINDS):
        return None
    return (f"not recognised as any source kind ({', '.join(SOURCE_KIND_NAMES)}); "
            "give the file itself, with --kind if need be, to read it anyway")


def parse_source(source: str, data: bytes, kind_name: str | None = None, among: tuple[str, ...] | None = None) -> Document:
    """Parse a source as ``kind_name`` (forced), else as the kind it is among ``among`` (a fetch site's kinds: the
    one, or the one detected), else as the kind detected. A forced kind of rules whose parse gives no rule is an
    error naming the source: a kind that does not fit never makes a quiet, empty document."""
    if kind_name is None:
        name = among[0] if among and len(among) == 1 else detect_kind(source, data, among)
        return _kept_promise(kind(name), kind(name).parse(data, source))
    forced = kind(kind_name)
    doc = forced.parse(data, source)
    if forced.rules and not any(n.kind in RULE_KINDS for n in doc.nodes):
        reasons = "; ".join(d.message for d in doc.diagnostics[:3])
        raise KbError(f"{source}: read as {kind_name}, no rules found" + (f" ({reasons})" if reasons else ""))
    return _kept_promise(forced, doc)


def _kept_promise(source_kind: SourceKind, doc: Document) -> Document:
    """``doc``, with a :data:`GAVE_NOTHING` warning first when it gives none of what its kind promises."""
    if not source_kind.promises or any(n.kind in source_kind.promises for n in doc.nodes):
        return doc
    found = f"{len(doc.nodes)} nodes of other kinds" if doc.nodes else "no nodes at all"
    warning = Diagnostic(doc.source, "", f"{GAVE_NOTHING} read as {source_kind.name}, it gives no {source_kind.promise}"
                         f" ({found}); is it a {source_kind.name} source? (--kind chooses another)")
    return replace(doc, diagnostics=(warning, *doc.diagnostics))


def gave_nothing(doc: Document) -> bool:
    """Whether ``doc`` gave none of what its kind promises (:func:`parse_source` warned about it)."""
    return any(d.message.startswith(GAVE_NOTHING) for d in doc.diagnostics)
