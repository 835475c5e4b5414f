"""Bytes → text for text sources: byte-order marks (UTF-8, UTF-16 LE/BE), UTF-8 or Shift_JIS without one,
and line splitting on ``\\r\\n``, bare ``\\r`` and ``\\n``."""

from __future__ import annotations

import codecs
import re

from kb.errors import KbError

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def decode_text(data: bytes, source: str) -> tuple[str, str]:
    """Return (text, encoding name). Raise KbError naming the line of the first undecodable byte."""
    for bom, enc in ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be")):
        if data.startswith(bom):
            body = data[len(bom) :]
            try:
                return body.decode(enc), enc
            except UnicodeDecodeError as exc:
                raise KbError(_where(body, exc, source, enc)) from None
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError as utf8_error:
        try:
            return data.decode("cp932"), "cp932"
        except UnicodeDecodeError:
            raise KbError(_where(data, utf8_error, source, "utf-8")) from None


def _where(data: bytes, exc: UnicodeDecodeError, source: str, enc: str) -> str:
    line = data[: exc.start].count(b"\n") + 1 if "16" not in enc else data[: exc.start].count("\n".encode(enc)) + 1
    return f"{source}:{line}: cannot decode as {enc} (byte offset {exc.start}); is this the right file?"


def split_lines(text: str) -> list[str]:
    return _LINE_BREAK.split(text)
