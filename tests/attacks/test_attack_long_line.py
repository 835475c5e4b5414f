"""Finding 2: one long line broke the knowledge base for good. A paragraph, rule or bullet over 49,149 UTF-8 bytes
without a line break (about 16,400 Japanese characters; MTG Wiki is publicly editable) made Sudachi fail after the
store commit: re-ingest said "unchanged", ``kb index --rebuild`` failed after emptying the index, and ``kb build``
failed every run. Replayed with real ``kb`` processes: every command succeeds, and the long text is searchable."""

from __future__ import annotations

import json

import pytest
from hostile import DATA, SAMPLE_CR, kb, wiki_page

RUN = 16_400  # characters without a line break: 49,200 UTF-8 bytes, just over Sudachi's limit

LONG_TEXTS = {
    "hiragana-kanji": ("呪文を唱えるときに" * (RUN // 9 + 1))[:RUN] + "終端語彙",
    "katakana": "ア" * RUN + "終端語彙",
    "kanji": "漢" * RUN + "の終端語彙",
    "punctuated": ("呪文を唱える。" * (RUN // 7 + 1)) + "終端語彙",
}
SWEETS = ("羊羹", "煎餅", "饅頭", "団子")  # one word that only the end of each long paragraph has


@pytest.mark.slow
def test_long_wiki_paragraphs_break_nothing(tmp_path):
    pages = []
    for n, shape in enumerate(sorted(LONG_TEXTS)):
        text = LONG_TEXTS[shape] + f"の{SWEETS[n]}"
        pages.append(tmp_path / f"長い段落{n}.html")
        pages[-1].write_bytes(wiki_page(f"長い段落{n}", f"<p>{text}</p><ul><li>{text}</li></ul>"))
    kb_dir = tmp_path / "kb"
    first = kb(kb_dir, "ingest", "--quiet", str(DATA), *map(str, pages))
    assert first.returncode == 0, first.stderr
    assert "internal error" not in first.stderr
    for n in range(len(pages)):
        hits = kb(kb_dir, "search", "--json", SWEETS[n])
        assert hits.returncode == 0, hits.stderr
        assert [h["id"] for h in json.loads(hits.stdout)] == [f"wiki:長い段落{n}"]
    rebuilt = kb(kb_dir, "index", "--rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr
    hits = kb(kb_dir, "search", "--json", SWEETS[0])
    assert hits.returncode == 0 and json.loads(hits.stdout), hits.stderr  # the index is whole again
    built = kb(kb_dir, "build", "--out", str(tmp_path / "site"))
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "site" / "index.html").is_file()


@pytest.mark.slow
def test_a_long_rule_breaks_nothing(tmp_path):
    """A CR text whose rule 601.1 runs on for 16,400 characters: linking (glossary terms are looked up in it with
    Sudachi) and indexing both take it."""
    lines = SAMPLE_CR.read_text(encoding="utf-8").split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("601.1. "))
    lines[at] += LONG_TEXTS["hiragana-kanji"]
    cr = tmp_path / SAMPLE_CR.name
    cr.write_text("\n".join(lines), encoding="utf-8")
    kb_dir = tmp_path / "kb"
    ingested = kb(kb_dir, "ingest", "--quiet", str(cr))
    assert ingested.returncode == 0, ingested.stderr
    hits = kb(kb_dir, "search", "--json", "終端語彙")
    assert [h["id"] for h in json.loads(hits.stdout)][:1] == ["cr:601.1"]
    built = kb(kb_dir, "build", "--out", str(tmp_path / "site"))
    assert built.returncode == 0, built.stderr


@pytest.mark.parametrize("shape", sorted(LONG_TEXTS))
def test_long_runs_reach_the_tokenizer_in_pieces_it_takes(shape):
    from kb.search.analysis import analyze
    from kb.splitter import SUDACHI_MAX_BYTES, JapaneseSplitter, sudachi_pieces

    text = LONG_TEXTS[shape] * 3
    pieces = sudachi_pieces(text)
    assert "".join(piece for _, piece in pieces) == text and len(pieces) > 1
    assert all(text[offset:offset + len(piece)] == piece for offset, piece in pieces)
    assert all(len(piece.encode()) <= SUDACHI_MAX_BYTES for _, piece in pieces)
    terms = analyze(JapaneseSplitter(), text)
    assert terms[-1].text == "語彙" and text[terms[-1].start:terms[-1].end] == "語彙"  # offsets stay right
    if shape == "punctuated":  # cut after punctuation, never inside a word
        assert all(piece.endswith("。") for _, piece in pieces[:-1])
