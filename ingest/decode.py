"""Bytes → text for text sources: byte-order marks (UTF-8, UTF-16 LE/BE), UTF-8 or Shift_JIS (CP932) without one,
and line splitting on ``\\r\\n``, bare ``\\r`` and ``\\n``.

A file that is UTF-8 except for a few stray single bytes (the English CR of 2013-07-11 has Windows-1252 quotes in
otherwise UTF-8 text) is read as UTF-8 with those bytes as Windows-1252, with one warning per line naming it — never
as CP932, which would turn the whole file into Japanese garble. Stray means: each such byte stands alone (no other
non-UTF-8 byte beside it) and there are few of them (at most 1 in 100 bytes); CP932 Japanese text has runs of them.
"""

from __future__ import annotations

import codecs
import itertools
import re
from dataclasses import dataclass

from kb.errors import KbError
from kb.model import Diagnostic

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_STRAY = re.compile(r"[\udc80-\udcff]")  # a byte that is not UTF-8, as surrogateescape decodes it
_STRAY_SHARE = 100  # at most one stray byte in this many


@dataclass(frozen=True)
class Decoded:
    text: str
    encoding: str  # utf-8, utf-8+cp1252, utf-16-le, utf-16-be, cp932
    diagnostics: tuple[Diagnostic, ...] = ()


def decode_text(data: bytes, source: str) -> Decoded:
    """Decode a text source. Raise KbError naming the line of the first undecodable byte."""
    for bom, enc in ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be")):
        if data.startswith(bom):
            body = data[len(bom) :]
            try:
                return Decoded(body.decode(enc), enc)
            except UnicodeDecodeError as exc:
                raise KbError(_where(body, exc, source, enc)) from None
    try:
        return Decoded(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError as utf8_error:
        mostly_utf8 = _utf8_with_stray_bytes(data, source)
        if mostly_utf8 is not None:
            return mostly_utf8
        try:
            return Decoded(data.decode("cp932"), "cp932")
        except UnicodeDecodeError:
            raise KbError(_where(data, utf8_error, source, "utf-8")) from None


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
