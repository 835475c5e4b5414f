"""What the CLI prints of text it did not write (source text, file names, URLs, error messages): control
characters (C0 and C1, ESC of terminal escape sequences included), line breaks and bidirectional-format characters
(U+202E and the like) are shown as ``\\x1b``-style escapes, so no input can move the cursor, recolour the terminal,
split one line into two or reverse what follows. :func:`terminal_safe` is the one place this happens for text, and
:func:`json_text` for JSON (the same characters as JSON's own ``\\u`` escapes: the data is unchanged)."""

from __future__ import annotations

import json
import re

_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escape(m: re.Match) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with every unsafe character escaped; ``keep_newlines`` keeps ``\\n`` (multi-line output)."""
    if keep_newlines:
        return "\n".join(_UNSAFE.sub(_escape, line) for line in text.split("\n"))
    return _UNSAFE.sub(_escape, text)


_UNSAFE_IN_JSON = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")  # JSON escapes C0


def json_text(data: object, *, indent: int | None = None) -> str:
    """``data`` as JSON (non-ASCII kept readable) with every unsafe character written as a ``\\uXXXX`` escape."""
    return _UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(data, ensure_ascii=False, indent=indent))


def incomplete_warnings(warnings: list[str]) -> list[str]:
    """The warnings saying a rules text is cut short or an excerpt: shown by every command, even with --quiet."""
    from ingest.cr_text import INCOMPLETE

    return [line for line in warnings if INCOMPLETE in line]
