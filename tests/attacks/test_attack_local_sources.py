"""Findings 10 and 13. 13: local sources had no size cap (``kb ingest /dev/zero`` read until memory ran out) and a
FIFO hung the ingest. 10: past about 255 levels of nesting the rest of an article was silently dropped (release
notes lost every section). Replayed with real ``kb`` processes and real files."""

from __future__ import annotations

import os

from hostile import kb, wiki_page

from ingest.mtgwiki import parse_mtgwiki


def test_dev_zero_is_refused_at_once(tmp_path):
    result = kb(tmp_path / "kb", "ingest", "/dev/zero", timeout=60)
    assert result.returncode == 1
    assert result.stderr.strip().endswith("error: /dev/zero: not a regular file (a device); give a file or a folder")


def test_a_fifo_is_refused_without_waiting(tmp_path):
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    result = kb(tmp_path / "kb", "ingest", str(fifo), timeout=60)
    assert result.returncode == 1
    assert result.stderr.strip().endswith(f"error: {fifo}: not a regular file (a FIFO); give a file or a folder")


def test_a_huge_file_is_refused_before_it_is_read(tmp_path):
    huge = tmp_path / "MagicCompRules-huge.txt"
    with open(huge, "wb") as f:
        f.truncate(5_000_000_000)  # sparse: 5 GB that take no room
    result = kb(tmp_path / "kb", "ingest", str(huge), timeout=60)
    assert result.returncode == 1
    assert result.stderr.strip().endswith(f"error: {huge}: 5000.0 MB, over the 20 MB a source may have")


def test_deep_nesting_keeps_the_rest_of_the_article():
    deep = "<div>" * 300 + "<p>奥の段落。</p>" + "</div>" * 300
    doc = parse_mtgwiki(wiki_page("深い入れ子", f"{deep}<h2>後の節</h2><p>後の段落。</p>"), "deep.html")
    text = "\n".join(n.text for n in doc.nodes)
    assert "奥の段落。" in text and "後の段落。" in text
    assert not [d for d in doc.diagnostics if "nest" in d.message]


def test_nesting_beyond_the_limit_is_said_not_silent():
    deep = "<div>" * 3000 + "<p>奥の段落。</p>" + "</div>" * 3000
    doc = parse_mtgwiki(wiki_page("深すぎる入れ子", f"<p>前の段落。</p>{deep}<p>後の段落。</p>"), "deeper.html")
    assert [d.message for d in doc.diagnostics if "nest" in d.message] == [
        "HTML nested deeper than 2048 levels; the rest of the page is lost"]


def test_release_notes_nested_deep_keep_every_section():
    import re

    from hostile import DATA

    from ingest.release_notes import parse_release_notes

    page = (DATA / "release-notes" / "zendikar-rising.html").read_text(encoding="utf-8")
    nested = re.sub(r"(<body[^>]*>)", lambda m: m.group(1) + "<div>" * 300, page, count=1).replace(
        "</body>", "</div>" * 300 + "</body>")
    plain = parse_release_notes(page.encode(), "notes.html")
    deep = parse_release_notes(nested.encode(), "notes.html")
    assert len(plain.nodes) > 3
    assert [n.text for n in deep.nodes] == [n.text for n in plain.nodes]
