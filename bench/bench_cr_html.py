"""The CR as an HTML rules document (the mtg-jp.com page, the ruby .rb.html) against the same CR as a text file: the
2026-01-16 English CR is written as a page (a ``<p>`` per line, every rule number in a ``<span>``, every word of
four letters or more under ``<ruby>`` with a reading), then parsed both ways and told apart by detection.
Ratios to parsing the text file, in the same run.

Run: .venv/bin/python bench/bench_cr_html.py [--repeat N]
"""

from __future__ import annotations

import argparse
import html
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import best_of, corpus_dir, peak_memory  # noqa: E402
from ingest.cr_html import parse_cr_html  # noqa: E402
from ingest.cr_text import parse_cr_text  # noqa: E402
from ingest.kinds import detect_kind  # noqa: E402

_NUMBER = re.compile(r"^([1-9]\d{0,2}(?:\.\d{1,3}[a-z]?)?\.?) ")
_WORD = re.compile(r"\b([A-Za-z]{4,})\b")


def as_page(text: str) -> bytes:
    paragraphs = []
    for line in re.split(r"\r\n|\r|\n", text):
        escaped = html.escape(line)
        escaped = _WORD.sub(lambda m: f"<ruby>{m.group(1)}<rt>{m.group(1).lower()}</rt></ruby>", escaped)
        escaped = _NUMBER.sub(r'<span class="num">\1</span> ', escaped)
        paragraphs.append(f"<p>{escaped}</p>" if line.strip() else "")
    body = "\n".join(paragraphs)
    return f'<!DOCTYPE html><html><head><meta charset="utf-8"></head><body><article>{body}</article></body></html>'.encode()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    path = corpus_dir() / "MagicCompRules-2026-01-16.txt"
    data = path.read_bytes()
    page = as_page(data.decode("utf-8-sig"))
    text_doc, html_doc = parse_cr_text(data, str(path)), parse_cr_html(page, "page.html")
    same = [(n.id, n.text) for n in text_doc.nodes] == [(n.id, n.text) for n in html_doc.nodes]
    t_text = best_of(lambda: parse_cr_text(data, str(path)), args.repeat)
    t_html = best_of(lambda: parse_cr_html(page, "page.html"), args.repeat)
    t_detect_html = best_of(lambda: detect_kind("page.html", page), args.repeat)
    t_detect_text = best_of(lambda: detect_kind(str(path), data), args.repeat)
    m_text = peak_memory(lambda: parse_cr_text(data, str(path)))
    m_html = peak_memory(lambda: parse_cr_html(page, "page.html"))
    print(f"text file {len(data) / 1e6:.1f} MB, page {len(page) / 1e6:.1f} MB; {len(html_doc.nodes)} nodes, "
          f"same nodes both ways: {same}")
    print(f"parse text        {t_text * 1000:8.1f} ms  1.00x")
    print(f"parse page        {t_html * 1000:8.1f} ms  {t_html / t_text:.2f}x")
    print(f"detect page       {t_detect_html * 1000:8.1f} ms  {t_detect_html / t_text:.2f}x")
    print(f"detect text file  {t_detect_text * 1000:8.1f} ms  {t_detect_text / t_text:.2f}x")
    print(f"peak memory       text {m_text / 1e6:.0f} MB, page {m_html / 1e6:.0f} MB ({m_html / m_text:.1f}x)")


if __name__ == "__main__":
    main()
