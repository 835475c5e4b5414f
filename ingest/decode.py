"""The one charset policy: bytes → text for every source, and the only module that knows charset labels.

Here and nowhere else: byte-order marks (UTF-8, UTF-16 LE/BE), the labels pages declare and what they mean (every
Shift_JIS spelling → CP932, as browsers read it; EUC-JP spellings → EUC-JP), ``<meta charset>`` / ``http-equiv`` /
``<?xml encoding?>`` and HTTP ``Content-Type`` sniffing, and each source's order of fallback codecs. Text sources
(:func:`decode_text`): a byte-order mark, else UTF-8, else Shift_JIS (CP932); lines split on ``\\r\\n``, bare ``\\r``
and ``\\n``. HTML: :func:`decode_cr_html` (rules pages), :func:`decode_wiki_html` (MTG Wiki, release notes),
:func:`decode_wisdom_guild` (Wisdom Guild); the fetch cache: :func:`http_charset`, :func:`meta_charset`,
:func:`reencode_declared`.

A file that is UTF-8 except for a few stray single bytes (the English CR of 2013-07-11 has Windows-1252 quotes in
otherwise UTF-8 text) is read as UTF-8 with those bytes as Windows-1252, with one warning per line naming it — never
as CP932, which would turn the whole file into Japanese garble. Stray means: each such byte stands alone (no other
non-UTF-8 byte beside it) and there are few of them (at most 1 in 100 bytes); CP932 Japanese text has runs of them.
"""

from __future__ import annotations

import codecs
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass

from kb.errors import KbError
from kb.model import Diagnostic

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_STRAY = re.compile(r"[\udc80-\udcff]")  # a byte that is not UTF-8, as surrogateescape decodes it
_STRAY_SHARE = 100  # at most one stray byte in this many
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\uffff\ud800-\udfff]")

BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
# labels as pages spell them (lower case, "_" read as "-"), and the codec they mean
SHIFT_JIS_LABELS = frozenset({"shift-jis", "sjis", "x-sjis", "ms-kanji", "windows-31j", "cp932", "ms932", "csshiftjis"})
EUC_JP_LABELS = frozenset({"euc-jp", "eucjp", "x-euc-jp", "cseucpkdfmtjapanese", "cp51932"})
TEXT_FALLBACKS = ("utf-8", "cp932")  # text files and rules pages (plus stray Windows-1252 bytes in UTF-8)
WIKI_FALLBACKS = ("utf-8", "cp932", "euc_jp")  # MTG Wiki and release notes
WISDOM_GUILD_FALLBACKS = ("utf-8", "euc_jp", "cp932", "euc_jis_2004")  # Wisdom Guild; EUC-JP pages may be JIS X 0213
SNIFFED = 4096  # bytes of a page searched for a declared charset
_META_CHARSET = re.compile(rb"""<meta[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
_XML_ENCODING = re.compile(rb"""^\s*<\?xml[^>]*encoding\s*=\s*["']([A-Za-z0-9_.-]+)""", re.IGNORECASE)


def bom(data: bytes) -> tuple[bytes, str] | None:
    """The byte-order mark ``data`` starts with and its encoding, or None."""
    return next(((mark, enc) for mark, enc in BOMS if data.startswith(mark)), None)


def is_utf16(data: bytes) -> bool:
    found = bom(data)
    return found is not None and found[1] != "utf-8"


def sniffable_head(data: bytes, size: int) -> bytes:
    """The first ``size`` bytes, as ASCII-compatible bytes a markup pattern can match (UTF-16 re-encoded)."""
    head = data[:size].lstrip(codecs.BOM_UTF8)
    if is_utf16(head):
        head = head.decode("utf-16", "replace").encode("utf-8")
    return head


def codec_for(label: str) -> str | None:
    """The codec a declared charset label means, or None for a label no codec answers to."""
    label = label.strip().lower().replace("_", "-")
    if label in SHIFT_JIS_LABELS:
        return "cp932"  # what browsers decode Shift_JIS pages with
    if label in EUC_JP_LABELS:
        return "euc_jp"
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


def meta_charset(body: bytes, xml: bool = False) -> str | None:
    """The label a page's ``<meta charset>`` / ``http-equiv`` content type (or, with ``xml``, its XML declaration)
    names, as written."""
    head = body[:SNIFFED]
    match = _META_CHARSET.search(head) or (_XML_ENCODING.search(head) if xml else None)
    return match.group(1).decode("ascii") if match else None


def http_charset(content_type: str) -> str | None:
    for param in content_type.split(";")[1:]:
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset" and value.strip():
            return value.strip().strip("\"'")
    return None


def reencode_declared(body: bytes, charset: str | None) -> bytes:
    """``body`` re-encoded as UTF-8 behind a byte-order mark when ``charset`` (a declared label) reads it; as it is
    when there is no label, a byte-order mark already, or a wrong or unknown label (the parser sniffs)."""
    codec = codec_for(charset) if charset else None
    if not charset or bom(body):
        return body
    try:
        return codecs.BOM_UTF8 + body.decode(codec or charset).encode("utf-8")
    except (LookupError, UnicodeDecodeError):
        return body


@dataclass(frozen=True)
class Decoded:
    text: str
    encoding: str  # utf-8, utf-8+cp1252, utf-16-le, utf-16-be, cp932
    diagnostics: tuple[Diagnostic, ...] = ()


def decode_text(data: bytes, source: str) -> Decoded:
    """Decode a text source. Raise KbError naming the line of the first undecodable byte."""
    found = bom(data)
    if found:
        mark, enc = found
        body = data[len(mark) :]
        try:
            return Decoded(body.decode(enc), enc)
        except UnicodeDecodeError as exc:
            raise KbError(_where(body, exc, source, enc)) from None
    utf8, legacy = TEXT_FALLBACKS
    try:
        return Decoded(data.decode(utf8), utf8)
    except UnicodeDecodeError as utf8_error:
        mostly_utf8 = _utf8_with_stray_bytes(data, source)
        if mostly_utf8 is not None:
            return mostly_utf8
        try:
            return Decoded(data.decode(legacy), legacy)
        except UnicodeDecodeError:
            raise KbError(_where(data, utf8_error, source, utf8)) from None


def _utf8_with_stray_bytes(data: bytes, source: str) -> Decoded | None:
    """UTF-8 with each stray byte read as Windows-1252 (Latin-1 for its five unassigned bytes), or None when the
    non-UTF-8 bytes are not a few isolated ones."""
    escaped = data.decode("utf-8", "surrogateescape")
    strays = [m.start() for m in _STRAY.finditer(escaped)]
    if len(strays) * _STRAY_SHARE > len(data) or any(b - a == 1 for a, b in itertools.pairwise(strays)):
        return None
    diagnostics = []
    lines = _LINE_BREAK.split(escaped)
    for number, line in enumerate(lines, 1):
        if not _STRAY.search(line):
            continue
        found = [(hex(ord(c) - 0xDC00), _cp1252(ord(c) - 0xDC00)) for c in _STRAY.findall(line)]
        listed = ", ".join(f"{byte} as {char!r}" for byte, char in found)
        diagnostics.append(Diagnostic(source, f"line {number}", f"not UTF-8: read {listed} (Windows-1252)"))
    text = _STRAY.sub(lambda m: _cp1252(ord(m.group()) - 0xDC00), escaped)
    return Decoded(text, "utf-8+cp1252", tuple(diagnostics))


def _cp1252(byte: int) -> str:
    try:
        return bytes([byte]).decode("cp1252")
    except UnicodeDecodeError:
        return bytes([byte]).decode("latin-1")


def _where(data: bytes, exc: UnicodeDecodeError, source: str, enc: str) -> str:
    line = data[: exc.start].count(b"\n") + 1 if "16" not in enc else data[: exc.start].count("\n".encode(enc)) + 1
    return f"{source}:{line}: cannot decode as {enc} (byte offset {exc.start}); is this the right file?"


def split_lines(text: str) -> list[str]:
    return _LINE_BREAK.split(text)


def decode_cr_html(data: bytes, source: str) -> tuple[str, tuple[Diagnostic, ...]]:
    """A rules page as text: a byte-order mark, else the ``<meta>`` charset, else (none, or one the bytes are not in,
    with a warning) as :func:`decode_text` reads it. Raise KbError when nothing reads it."""
    if not bom(data):
        label = meta_charset(data)
        charset = codec_for(label) if label else None
        if label and charset:  # an unknown label: sniff
            try:
                return data.decode(charset), ()
            except UnicodeDecodeError as exc:
                decoded = decode_text(data, source)
                line = data[: exc.start].count(b"\n") + 1
                wrong = Diagnostic(source, f"line {line}", f"not {label} as the page declares; read as {decoded.encoding}")
                return decoded.text, (wrong, *decoded.diagnostics)
    decoded = decode_text(data, source)
    return decoded.text, decoded.diagnostics


def decode_wiki_html(data: bytes, source: str, diagnostics: list[Diagnostic]) -> str:
    """A wiki page (or a release-notes article) as text: BOM, then the declared charset, then UTF-8 / CP932 / EUC-JP;
    a mismatch is reported, undecodable bytes are replaced, control characters (not allowed in HTML text) dropped."""
    return _CONTROL_CHARS.sub("", _wiki_html_text(data, source, diagnostics))


def _wiki_html_text(data: bytes, source: str, diagnostics: list[Diagnostic]) -> str:
    found = bom(data)
    if found:
        return data[len(found[0]) :].decode(found[1], errors="replace")
    label = meta_charset(data)
    declared = label.lower() if label else None
    candidates = list(WIKI_FALLBACKS)
    if declared:
        enc = codec_for(declared)
        if enc:
            candidates.insert(0, enc)
        else:
            diagnostics.append(Diagnostic(source, "<meta charset>", f"unknown charset {declared!r}; guessing"))
    for enc in dict.fromkeys(candidates):
        try:
            text = data.decode(enc)
        except UnicodeDecodeError:
            continue
        if declared and codecs.lookup(enc).name != codecs.lookup(candidates[0]).name:
            diagnostics.append(Diagnostic(source, "<meta charset>",
                                          f"page says charset={declared} but its bytes are {enc}; decoded as {enc}"))
        elif not declared and enc != WIKI_FALLBACKS[0]:
            diagnostics.append(Diagnostic(source, "", f"no charset declared; decoded as {enc}"))
        return text
    diagnostics.append(Diagnostic(source, "", f"bytes are neither {declared or 'UTF-8'} nor Shift_JIS/EUC-JP; "
                                              "undecodable bytes replaced with U+FFFD"))
    return data.decode(declared if declared in candidates else WIKI_FALLBACKS[0], errors="replace")


def decode_wisdom_guild(data: bytes, source: str, diagnostics: list[Diagnostic], fits: Callable[[str], bool]) -> str:
    """A Wisdom Guild page as text: byte-order mark, else ``<meta charset>`` / ``http-equiv`` / XML declaration, else
    UTF-8, EUC-JP or Shift_JIS, whichever reads and ``fits`` (reads as a rules page); a declaration that does not fit
    the bytes gives a warning."""
    declared: str | None
    found = bom(data)
    if found:
        label: str | None = f"{found[1].upper()} (byte-order mark)"
        data, declared = data[len(found[0]) :], found[1]
    else:
        label = meta_charset(data, xml=True)
        declared = codec_for(label) if label else None
    if label and not declared:
        diagnostics.append(Diagnostic(source, "<meta charset>", f"unknown charset {label!r}; guessing the encoding"))
    euc_jp, euc_jis_2004 = WISDOM_GUILD_FALLBACKS[1], WISDOM_GUILD_FALLBACKS[3]
    candidates = list(dict.fromkeys(
        ([declared] if declared else []) + ([euc_jis_2004] if declared == euc_jp else []) + list(WISDOM_GUILD_FALLBACKS)))
    readable: dict[str, str] = {}
    for codec in candidates:
        try:
            readable[codec] = data.decode(codec)
        except (UnicodeDecodeError, LookupError):
            continue
    fitting = [c for c in readable if fits(readable[c])]
    chosen = fitting[0] if fitting else next(iter(readable), None)
    if chosen is None:
        codec = declared or WISDOM_GUILD_FALLBACKS[0]
        try:
            data.decode(codec)
        except UnicodeDecodeError as exc:
            line = data[:exc.start].count(b"\n") + 1
            diagnostics.append(Diagnostic(source, f"line {line}", f"bytes are not valid {codec} (byte offset {exc.start}) "
                                                                  "nor UTF-8, EUC-JP or Shift_JIS; unreadable bytes replaced"))
        return data.decode(codec, errors="replace")
    if declared and chosen != declared and not (declared == euc_jp and chosen == euc_jis_2004):
        diagnostics.append(Diagnostic(source, "<meta charset>", f"the page declares charset {label!r} but its bytes "
                                                                f"read as {chosen}; read as {chosen}"))
    return readable[chosen]
