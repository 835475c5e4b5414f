"""Finding 12: terminal escape sequences in source text (and newlines or U+202E in file names) were printed raw by
warnings, ``kb search`` and ``kb links``: a source could clear the screen, retitle the terminal, forge output lines
or reverse what follows. Replayed with real ``kb`` processes; no output line may carry a control or bidi character.
Finding 16: ``--strict`` showed only a count, and a failed source's one error line was buried among old warnings."""

from __future__ import annotations

import re

import pytest
from conftest import copy_kb
from hostile import DATA, SAMPLE_CR, kb, wiki_page

ESCAPES = "\x1b[2J\x1b]0;pwned\x07\x1b[31m\u202e\x9b"
UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _hostile_cr(tmp_path):
    text = SAMPLE_CR.read_text(encoding="utf-8-sig")
    text = text.replace("601.1. かつて、", f"601.1. かつて{ESCAPES}、", 1)
    path = tmp_path / f"JPN_CR_20231117_0{ESCAPES}.txt"  # every warning names its file
    path.write_text(text, encoding="utf-8")
    return path


def _assert_safe(output: str):
    assert not UNSAFE.search(output), [line for line in output.splitlines() if UNSAFE.search(line)]


@pytest.mark.slow
def test_source_text_never_reaches_the_terminal_raw(tmp_path):
    kb_dir = tmp_path / "kb"
    wiki = tmp_path / "wiki.html"
    wiki.write_bytes(wiki_page("悪意\u202eの記事", '<p>本文です。<a href="/wiki/%E5%94%B1%E3%81%88%E3%82%8B">唱える</a></p>'))
    ingested = kb(kb_dir, "ingest", str(_hostile_cr(tmp_path)), str(wiki))
    assert ingested.returncode == 0, ingested.stderr
    assert "JPN_CR_20231117_0\\x1b[2J\\x1b]0;pwned\\x07\\x1b[31m\\u202e\\x9b.txt: " in ingested.stderr  # shown as text
    _assert_safe(ingested.stdout + ingested.stderr)
    for args, shown in ((["search", "かつて"], "\\x1b[2J"), (["links", "悪意\u202eの記事"], "悪意\\u202eの記事"),
                        (["history", "601.1"], "\\x1b[2J")):
        result = kb(kb_dir, *args)
        assert result.returncode == 0 and shown in result.stdout, (args, result.stdout, result.stderr)
        _assert_safe(result.stdout + result.stderr)


def test_file_names_never_forge_lines(tmp_path):
    bad = tmp_path / "a\nkb: error: forged\u202etxt.html"
    bad.write_bytes(b"")
    result = kb(tmp_path / "kb", "ingest", str(bad))
    assert result.returncode == 1
    _assert_safe(result.stderr)
    assert [line for line in result.stderr.splitlines() if line.startswith("kb: error: forged")] == []
    assert "\\x0akb: error: forged\\u202etxt.html" in result.stderr


def test_strict_names_the_first_warning(tmp_path):
    result = kb(tmp_path / "kb", "ingest", "--strict", str(SAMPLE_CR))
    assert result.returncode == 1
    line = result.stderr.strip()
    assert line.startswith("kb: error: --strict: ") and "nothing was stored; first: " in line
    assert "incomplete: the document has no chapter" in line.split("first: ")[1]  # the warning itself: an excerpt


@pytest.mark.slow
def test_a_failed_source_is_the_last_line_not_buried_in_old_warnings(tmp_path, data_kb):
    kb_dir = copy_kb(data_kb, tmp_path / "kb")  # data/ ingested, with its warnings
    missing = tmp_path / "missing.txt"
    result = kb(kb_dir, "ingest", str(DATA), str(missing))
    assert result.returncode == 1
    assert result.stderr.splitlines() == [f"error: {missing}: no such file"]  # the old warnings are counted only
    assert "warnings: 144" in result.stdout


def test_json_output_escapes_them_as_json(tmp_path):
    """``--json`` and ``kb export`` keep the data (valid JSON, the same strings once parsed) but write bidi and C1
    characters as ``\\u`` escapes, so the JSON is as safe on a terminal as the text output."""
    import json

    kb_dir = tmp_path / "kb"
    wiki = tmp_path / "wiki.html"
    wiki.write_bytes(wiki_page("悪意\u202eの記事", "<p>本文です。\x9b31m</p>"))
    assert kb(kb_dir, "ingest", "--quiet", str(wiki)).returncode == 0
    for args in (["links", "悪意\u202eの記事", "--json"], ["search", "本文", "--json"], ["export"]):
        result = kb(kb_dir, *args)
        assert result.returncode == 0, result.stderr
        _assert_safe(result.stdout)
        assert "\\u202e" in result.stdout
        parsed = [json.loads(line) for line in result.stdout.splitlines()] if args == ["export"] else \
            [json.loads(result.stdout)]
        assert "悪意\u202eの記事" in json.dumps(parsed, ensure_ascii=False)
