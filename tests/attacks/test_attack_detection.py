"""Issue 21, finding 13: kind detection was quadratic — 256 KB of ``<`` or 64 K unclosed ``<rt>`` tags ran past 90 s
(the page's text was sniffed with ``<[^>]*>`` and ``<(rt|rp)…>.*?</rt>``, each unclosed tag scanning to the end)."""

from __future__ import annotations

import time

import pytest

from ingest.kinds import detect_kind

PATHOLOGICAL = {
    "256 KB of <": b"<html><body>" + b"<" * 262144,
    "64 K unclosed <rt>": b"<html><body><ruby>" + b"<rt>x" * 65536,
    "64 K unclosed <rp": b"<html><body>" + b"<rp " * 65536 + b">",
    "64 K <rt> then one </rt>": b"<html><body>" + b"<rt>" * 65536 + "マジック総合ルール</rt>".encode(),
}


@pytest.mark.parametrize("name", sorted(PATHOLOGICAL))
def test_detection_is_linear_on_unclosed_tags(name):
    data = PATHOLOGICAL[name]
    started = time.monotonic()
    kind = detect_kind(f"{name}.html", data)
    seconds = time.monotonic() - started
    assert kind != "cr-text"  # no rules page: no title, no rule 100.1
    assert seconds < 3, f"{name}: {seconds:.1f} s"


def test_a_ruby_rules_page_under_a_flood_of_tags_is_still_recognised():
    title = "<p>マジック：ザ・ギャザリング 総合ルール(和訳 20240730.0 版)</p>".encode()
    rules = "<p>100.1. 総合<ruby>規則<rt>きそく</rt></ruby>は</p>".encode()
    data = b"<html><body>" + title + b"<rt>" * 20000 + b"</rt>" + rules + b"<" * 100000
    started = time.monotonic()
    assert detect_kind("rules.html", data) == "cr-text"
    assert time.monotonic() - started < 3
