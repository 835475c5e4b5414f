"""The one text folding every comparison of names, numbers and search terms goes through.

:func:`fold`: each character NFKC-normalised on its own and lower-cased (``６０１．２ｆ`` → ``601.2f``, ``ﾏﾅ･ｺｽﾄ`` →
``マナ・コスト``, ``ＡＢＣ`` → ``abc``), a half-width (semi-)voiced mark joined to the kana before it (``ｶﾞ`` →
``ガ``). :func:`fold_with_offsets` also maps each folded character back to its span in the original (search
highlights); :func:`fold_name` is :func:`fold` of a name without its surrounding blanks (glossary terms, titles,
aliases looked up by the linker). Stricter matching is built on these (the linker's long-vowel-insensitive
``loose_fold``, the English term matcher's hyphen and apostrophe rules), never beside them.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

_VOICED_MARKS = frozenset(["\u3099", "\u309a", " \u3099", " \u309a"])  # a half-width mark, NFKC-folded


def fold(text: str) -> str:
    """The folded text (see the module doc)."""
    if text.isascii():  # the common case (English words, rule numbers): NFKC leaves ASCII as it is
        return text.lower()
    if (lowered := _lowered_in_place(text)) is not None:
        return lowered
    table = {ord(ch): _fold_char(ch) for ch in set(text)}  # each distinct character folded once, then mapped in C
    if _VOICED_MARKS.isdisjoint(table.values()):
        return text.translate(table)
    return fold_with_offsets_or_none(text)[0]  # a (semi-)voiced mark to join to the kana before it


def fold_name(name: str) -> str:
    """A name as looked up: folded, surrounding blanks removed."""
    return fold(name.strip())


def fold_with_offsets(text: str) -> tuple[str, list[int], list[int]]:
    """:func:`fold`, with ``starts[i]``/``ends[i]`` the original span of folded character i."""
    folded, starts, ends = fold_with_offsets_or_none(text)
    if starts is None or ends is None:
        return folded, list(range(len(text))), list(range(1, len(text) + 1))
    return folded, starts, ends


def fold_with_offsets_or_none(text: str) -> tuple[str, list[int] | None, list[int] | None]:
    """:func:`fold_with_offsets`, with None for the offsets when every character kept its place."""
    if (lowered := _lowered_in_place(text)) is not None:
        return lowered, None, None
    pieces = [_fold_char(ch) for ch in text]
    if all(len(p) == 1 for p in pieces) and not any(p in _VOICED_MARKS for p in pieces):
        return "".join(pieces), None, None
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for i, folded in enumerate(pieces):
        if folded in _VOICED_MARKS and out:  # a half-width (semi-)voiced mark
            combined = unicodedata.normalize("NFC", out[-1] + folded.strip())
            if len(combined) == 1:
                out[-1] = combined
                ends[-1] = i + 1
                continue
        for c in folded:
            out.append(c)
            starts.append(i)
            ends.append(i + 1)
    return "".join(out), starts, ends


def _lowered_in_place(text: str) -> str | None:
    """The fold of a text NFKC leaves as it is when lower-casing keeps every character's place; else None."""
    if unicodedata.is_normalized("NFKC", text):
        lowered = text.lower()
        if len(lowered) == len(text):
            return lowered
    return None


@lru_cache(maxsize=8192)
def _fold_char(ch: str) -> str:
    return ch.lower() if ch.isascii() else unicodedata.normalize("NFKC", ch).lower()
