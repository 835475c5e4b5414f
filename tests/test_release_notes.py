"""Release-note parser: general-information sections become deduplicated note nodes with mechanic and card refs."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.kinds import detect_kind
from ingest.release_notes import parse_release_notes

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "release_notes"
SEED_TEXT = FIXTURES / "znr_general_notes.txt"  # the text of seed 003
# the bundled sample: the same notes as a saved mtg-jp.com page
SEED_HTML = Path(__file__).resolve().parent.parent / "data" / "release-notes" / "zendikar-rising.html"


@pytest.fixture(scope="module")
def text_doc():
    return parse_release_notes(SEED_TEXT.read_bytes(), str(SEED_TEXT))


@pytest.fixture(scope="module")
def html_doc():
    return parse_release_notes(SEED_HTML.read_bytes(), str(SEED_HTML))


def by_id(doc):
    return {n.id: n for n in doc.nodes}


def test_sections_become_notes_once_each(text_doc):
    assert text_doc.diagnostics == ()
    nodes = by_id(text_doc)
    assert list(nodes) == ["note:znr_general_notes:両面カード", "note:znr_general_notes:notes-1",
                           "note:znr_general_notes:notes-2", "note:znr_general_notes:上陸", "note:znr_general_notes:パーティ"]
    dfc = nodes["note:znr_general_notes:両面カード"]
    assert dfc.kind == "note" and dfc.lang == "ja" and dfc.version == ""
    assert dfc.meta["occurrences"] == 4 and len(dfc.meta["lines"]) == 4  # repeated verbatim four times in the seed
    assert len(dfc.meta["bullets"]) == 7
    assert nodes["note:znr_general_notes:上陸"].meta["occurrences"] == 3
    assert nodes["note:znr_general_notes:パーティ"].meta["occurrences"] == 1
    assert dfc.title == "両面カードに関する一般的な情報"
    assert dfc.text.startswith("両面カードに関する一般的な情報\n• 両面カードの各面は、それ自体の一連の特性")


def test_mechanic_and_card_references(text_doc):
    nodes = by_id(text_doc)
    for mechanic in ("両面カード", "上陸", "パーティ"):
        node = nodes[f"note:znr_general_notes:{mechanic}"]
        (ref,) = [r for r in node.refs if r.kind == "mechanic"]
        assert (ref.target, node.text[ref.start:ref.end]) == (mechanic, mechanic)
    dfc = nodes["note:znr_general_notes:両面カード"]
    cards = [r for r in dfc.refs if r.kind == "card"]
    assert [r.target for r in cards] == ["セジーリの防護", "セジーリの氷河", "セジーリの防護", "セジーリの氷河"]
    assert all(dfc.text[r.start:r.end] == r.text for r in cards)
    orphan = nodes["note:znr_general_notes:notes-1"]
    assert [r.target for r in orphan.refs] == ["玻璃池のミミック"]
    assert orphan.text.startswith("• クリーチャー・カードが")
    assert orphan.title == "znr_general_notes：《玻璃池のミミック》について"  # untitled: its set and its first card
    cardless = nodes["note:znr_general_notes:notes-2"]  # no card: the start of its bullet
    assert cardless.title.startswith("znr_general_notes：パワーが３以上のクリーチャーが") and cardless.title.endswith("…")
    assert cardless.meta["bullets"][0].startswith(cardless.title.split("：", 1)[1][:-1])


def test_html_page_gives_the_same_notes(text_doc, html_doc):
    assert html_doc.diagnostics == ()
    assert html_doc.title.startswith("『ゼンディカーの夜明け』リリースノート")
    html_nodes = list(html_doc.nodes)
    assert [n.id.split(":", 2)[2] for n in html_nodes] == [n.id.split(":", 2)[2] for n in text_doc.nodes]
    assert all(n.id.startswith("note:ゼンディカーの夜明け:") for n in html_nodes)
    for a, b in zip(text_doc.nodes, html_nodes, strict=True):
        assert (a.text, a.meta["occurrences"], [(r.kind, r.target, r.start) for r in a.refs]) == \
               (b.text, b.meta["occurrences"], [(r.kind, r.target, r.start) for r in b.refs])
    for node in html_nodes:
        assert "トップ" not in node.text and "Wizards" not in node.text and "dataLayer" not in node.text
        assert "<script" not in node.html


def test_same_heading_with_other_bullets_is_kept_apart():
    data = "上陸に関する一般的な情報\n\n• 一つ目。\n\n上陸に関する一般的な情報\n\n• 違う内容の《地盤の際》。\n".encode()
    doc = parse_release_notes(data, "notes.txt")
    assert [n.id for n in doc.nodes] == ["note:notes:上陸", "note:notes:上陸-2"]
    assert any("appears again" in d.message for d in doc.diagnostics)
    assert [r.target for r in doc.nodes[1].refs if r.kind == "card"] == ["地盤の際"]


def test_card_name_with_english():
    text = "パーティーに関する一般的な情報\n• 《ゼンディカーの報復者/Zendikar's Roil》を参照。\n"
    doc = parse_release_notes(text.encode(), "x.txt")
    (card,) = [r for r in doc.nodes[0].refs if r.kind == "card"]
    assert card.target == "Zendikar's Roil" and card.text == "ゼンディカーの報復者/Zendikar's Roil"


@pytest.mark.parametrize("data", [b"", b"\x00\x01", "ただの文章です。\n箇条書きはありません。".encode(),
                                  b"<html><body></body></html>", "上陸に関する一般的な情報\n".encode("cp932")])
def test_pages_without_notes_warn(data):
    doc = parse_release_notes(data, "empty.txt")
    assert doc.nodes == ()
    assert any("no release-note sections" in d.message for d in doc.diagnostics)


def test_detect_kind():
    assert detect_kind(str(SEED_TEXT), SEED_TEXT.read_bytes()) == "release-notes"
    assert detect_kind(str(SEED_HTML), SEED_HTML.read_bytes()) == "release-notes"
