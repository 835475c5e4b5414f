"""The one sanitiser (kb/sanitize.py): what it keeps and drops, and that every parser storing HTML and the site's
renderer use it — no other module builds an HTML cleaner."""

from __future__ import annotations

import re

from conftest import REPO

from ingest.mtgwiki import parse_mtgwiki
from ingest.release_notes import parse_release_notes
from kb.sanitize import sanitize_html
from kb.site.render import article_html

HOSTILE = ('<p onclick="x()" style="color:red">a<script>alert(1)</script><img src="https://evil.example/t.png" alt="t">'
           '<a href="javascript:alert(1)">j</a><a href="/wiki/X" class="preview">w</a><iframe src="https://e"></iframe></p>'
           '<h2 id="定義">定義</h2><sup id="cite_ref-1"><a href="#cite_note-1">[1]</a></sup>'
           '<ol><li id="cite_note-1">n</li></ol><form><input name="q"></form><table><tr><td colspan="2">c</td></tr></table>')


def test_keeps_structure_links_and_anchors_drops_the_rest():
    clean = sanitize_html(HOSTILE).lower()
    for gone in ("<script", "alert", "onclick", "style=", "<img", "evil.example", "<iframe", "<form", "<input",
                 "javascript:", 'class="preview"'):
        assert gone not in clean, gone
    for kept in ('id="定義"', 'id="cite_ref-1"', 'href="#cite_note-1"', 'id="cite_note-1"', 'href="/wiki/x"',
                 'colspan="2"'):
        assert kept.lower() in clean, kept
    assert sanitize_html(sanitize_html(HOSTILE)) == sanitize_html(HOSTILE)  # stable: stored HTML passes again unchanged


def test_parsers_and_renderer_give_sanitised_html():
    page = (f'<html><body><h1 id="firstHeading">X</h1><div id="bodyContent">{HOSTILE}</div></body></html>').encode()
    (article,) = parse_mtgwiki(page, "x.html").nodes
    assert article.html == sanitize_html(article.html) and "<script" not in article.html
    notes = parse_release_notes("上陸に関する一般的な情報\n• <script>x</script>《地盤の際》\n".encode(), "n.txt")
    assert all(n.html == sanitize_html(n.html) and "<script" not in n.html for n in notes.nodes)
    rendered = article_html(HOSTILE, "wiki/x.html", {}, {})
    assert "<script" not in rendered and "<img" not in rendered and 'class="preview"' not in rendered
    assert 'href="#cite_note-1"' in rendered and 'id="cite_note-1"' in rendered  # in-page anchors work


def test_one_definition():
    """No module but kb/sanitize.py makes an HTML cleaner (nh3, lxml.html.clean, bleach)."""
    cleaner = re.compile(r"^\s*(?:import|from)\s+(?:nh3|bleach|lxml\.html\.clean|lxml_html_clean)\b", re.M)
    modules = [path for folder in ("kb", "ingest") for path in sorted((REPO / folder).rglob("*.py"))]
    offenders = [path.relative_to(REPO).as_posix() for path in modules if cleaner.search(path.read_text(encoding="utf-8"))]
    assert offenders == ["kb/sanitize.py"]
