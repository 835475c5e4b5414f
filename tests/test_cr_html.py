"""The CR as an HTML rules document: the official mtg-jp.com rules page and the ruby-annotated JPN_CR_*.rb.html,
parsed with the same rules as the text file, in any of our charsets; readings kept apart from the text."""

from __future__ import annotations

import codecs

import pytest
from conftest import DATA, FIXTURES

from ingest.cr_html import looks_like_cr_html, parse_cr_document, parse_cr_html
from ingest.cr_text import parse_cr_text
from kb.errors import KbError

RULES_PAGE = FIXTURES / "cr_html" / "mtg_jp_rules_doc.html"
EXCERPT = "incomplete: the document has no chapter 2, 3, 4, 5, 9 (an excerpt?)"  # the fixture is one
RUBY = FIXTURES / "cr_html" / "JPN_CR_20250725_0.rb.html"


def nodes_of(doc):
    return {n.id: n for n in doc.nodes}


@pytest.fixture(scope="module")
def page():
    return parse_cr_html(RULES_PAGE.read_bytes(), str(RULES_PAGE))


@pytest.fixture(scope="module")
def ruby():
    return parse_cr_html(RUBY.read_bytes(), str(RUBY))


def test_rules_page_version_and_translation_date(page):
    assert (page.kind, page.lang, page.version, page.effective_date) == ("cr-text", "ja", "20240730.0", "2024-07-30")


def test_rules_page_structure(page):
    nodes = nodes_of(page)
    assert [n.number for n in page.nodes if n.kind == "chapter"] == ["1", "6", "7", "8"]
    assert [n.number for n in page.nodes if n.kind == "section"] == ["100", "601", "701", "800"]
    assert nodes["cr:100"].title == "原則" and nodes["cr:100.1"].parent == "cr:100"
    assert nodes["cr:100.1"].text == "このマジックのルールは、2人以上のプレイヤーによるマジックのゲームに適用される。"
    assert nodes["cr:601.2a"].text == "呪文を唱えることを提示する場合、プレイヤーはそのカードをスタックへと動かす。"
    assert nodes["cr:601.2a"].examples == ("プレイヤーは手札にある呪文を唱え、それをスタックに置く。",)
    assert [n.title for n in page.nodes if n.kind == "glossary"] == ["唱える", "予示", "あなた"]
    assert nodes["gl:唱える"].english == "Cast" and nodes["gl:唱える"].text.startswith("呪文を、それを現在ある場所から")
    assert [d.message.split(";")[0] for d in page.diagnostics] == [EXCERPT]  # an excerpt, and nothing else


def test_rules_page_chrome_contents_and_introduction_are_not_nodes(page):
    every_text = "\n".join(f"{n.title or ''}\n{n.text}\n{n.examples}" for n in page.nodes)
    for chrome in ("GAME PLAY", "ルール文書", "製品情報", "スクリプト", "margin", "Wizards of the Coast LLC", "お問い合わせ",
                   "もくじ", "はじめに", "用語集", "翻訳チーム"):
        assert chrome not in every_text, chrome


def test_rules_page_references(page):
    nodes = nodes_of(page)
    assert [(r.kind, r.target) for r in nodes["cr:100.1b"].refs] == [("section", "8")]
    assert [(r.kind, r.target) for r in nodes["cr:100.2"].refs] == [("section", "9")]
    assert [r.target for r in nodes["cr:601.2"].refs] == ["601.2a", "601.2b", "601.2c", "601.2d", "601.2f", "601.2g", "601.2h"]


def _recoded(charset: str, meta: str | None) -> bytes:
    text = RULES_PAGE.read_text(encoding="utf-8").replace('<meta charset="utf-8">', meta or "")
    if charset == "utf-16":
        return codecs.BOM_UTF16_LE + text.encode("utf-16-le")
    return text.encode(charset)


@pytest.mark.parametrize("charset, meta", [
    ("cp932", '<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">'),
    ("cp932", None),  # no declaration: sniffed
    ("euc_jp", '<meta charset="EUC-JP">'),
    ("utf-16", None),
    ("utf-8", None),
])
def test_rules_page_in_any_charset_gives_the_same_nodes(page, charset, meta):
    doc = parse_cr_html(_recoded(charset, meta), "page.html")
    assert [(n.id, n.text, n.examples, n.refs) for n in doc.nodes] == [(n.id, n.text, n.examples, n.refs) for n in page.nodes]
    assert (doc.version, doc.effective_date) == (page.version, page.effective_date)


def test_ruby_file_version_is_the_title_and_date_the_translated_rules(ruby):
    assert (ruby.version, ruby.effective_date) == ("20250726.0", "2025-07-25")


def test_ruby_readings_never_enter_the_text(ruby):
    nodes = nodes_of(ruby)
    assert nodes["cr:100.1"].text == "このマジックのルールは、2人以上のプレイヤーによるマジックのゲームに適用される。"
    assert nodes["cr:100"].title == "原則" and nodes["cr:701.34"].text == "予示する/Manifest"
    every_text = "".join(f"{n.title or ''}{n.text}" for n in ruby.nodes)
    for reading in ("ぷれいやあ", "げんそく", "よじ", "さんしょう", "(", ")"):
        assert reading not in every_text


def test_ruby_readings_are_the_glossary_terms_readings(ruby):
    nodes = nodes_of(ruby)
    readings = {n.title: n.meta.get("reading") for n in ruby.nodes if n.kind == "glossary"}
    assert readings == {"予示": "よじ", "唱える": "となえる", "アーティファクト": None, "戦場": "せんじょう"}
    assert nodes["gl:予示"].text.startswith("ライブラリーのカードを裏向きの2/2クリーチャーとして戦場に出す")
    assert [(r.kind, r.target) for r in nodes["cr:701.34a"].refs] == [("section", "8")]


def test_html_and_text_go_through_one_entry():
    sample = DATA / "JPN_CR_20231117_0.txt"
    assert parse_cr_document(sample.read_bytes(), str(sample)).nodes[0].id == "cr:1"
    assert parse_cr_document(RUBY.read_bytes(), str(RUBY)).version == "20250726.0"


def test_rules_documents_are_told_by_their_text():
    assert looks_like_cr_html(RULES_PAGE.read_bytes()) and looks_like_cr_html(RUBY.read_bytes())
    assert looks_like_cr_html(_recoded("cp932", None))
    others = [FIXTURES / "wisdom_guild" / "cr_r_601.html", FIXTURES / "mtgwiki" / "cast_modern.html",
              DATA / "release-notes" / "zendikar-rising.html", DATA / "JPN_CR_20231117_0.txt"]
    assert not [p.name for p in others if looks_like_cr_html(p.read_bytes())]


def test_page_without_a_rules_title_is_an_error_naming_it():
    with pytest.raises(KbError, match=r"^other\.html: no rules document title"):
        parse_cr_html("<html><body><p>100.1. ルールのようなもの</p></body></html>".encode(), "other.html")


def test_page_with_a_title_but_no_rules_is_an_error_naming_it():
    text = RULES_PAGE.read_text(encoding="utf-8")
    cut = text[: text.index('<h4 id="s1">')] + "</article></body></html>"
    with pytest.raises(KbError, match=r"^cut\.html: .*rule 100\.1 not found"):
        parse_cr_html(cut.encode(), "cut.html")


def test_a_wrong_charset_declaration_is_a_warning_and_the_page_still_reads(page):
    mislabelled = RULES_PAGE.read_text(encoding="utf-8").encode("cp932")  # CP932 bytes under <meta charset="utf-8">
    doc = parse_cr_html(mislabelled, "sjis.html")
    assert [(n.id, n.text) for n in doc.nodes] == [(n.id, n.text) for n in page.nodes]
    assert [d.message.split(";")[0] for d in doc.diagnostics] == ["not utf-8 as the page declares", EXCERPT]


def test_numbers_in_elements_of_their_own_give_the_same_nodes(page):
    """A layout with each number apart from its text (<dt>/<dd>, table cells) reads as the paragraph layout."""
    import re

    text = RULES_PAGE.read_text(encoding="utf-8")
    split = re.sub(r'<p class="rule">(?:<span class="num">)?([0-9.a-z]+?)(?:</span>)? ', r"<dl><dt>\1</dt><dd>", text)
    split = re.sub(r"<h([45])( id=\"s\d+\")?>(\d+\.) ", r"<table><tr><th\2>\3</th><td>", split)
    split = re.sub(r"(<dd>[^<]*)</p>", r"\1</dd></dl>", split)
    split = re.sub(r"(<td>[^<]*)</h[45]>", r"\1</td></tr></table>", split)
    assert split.count("<dt>") == 13 and split.count("<th") == 10
    doc = parse_cr_html(split.encode(), "split.html")
    assert [(n.id, n.title, n.text, n.examples) for n in doc.nodes] == [
        (n.id, n.title, n.text, n.examples) for n in page.nodes]


def _as_page(text: str, encoding: str = "utf-8") -> bytes:
    """A CR text as an HTML page: a <p> per line, each rule number in a <span> of its own."""
    import html
    import re

    paragraphs = [re.sub(r"^([1-9]\d{0,2}(?:\.\d{1,3}[a-z]?)?\.?) ", r'<span class="n">\1</span> ', html.escape(line))
                  for line in re.split(r"\r\n|\r|\n", text)]
    page = "<!DOCTYPE html><html><head><title>CR</title></head><body><div id='doc'>" + "".join(
        f"<p>{p}</p>\n" for p in paragraphs if p.strip()) + "</div></body></html>"
    return codecs.BOM_UTF16_BE + page.encode("utf-16-be") if encoding == "utf-16-be" else page.encode(encoding)


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16-be"])
def test_the_real_english_cr_as_one_paragraph_per_line_gives_the_text_files_nodes(corpus_dir, encoding):
    """Every line its own paragraph, term and definition apart — even a definition without a final period
    (“Encore”) or one ending in “Start Your Engines!” stays with its term. Detected by content past 256 KB."""
    from ingest.kinds import detect_kind

    source = corpus_dir / "MagicCompRules-2026-01-16.txt"
    text_doc = parse_cr_text(source.read_bytes(), str(source))
    page = _as_page(source.read_bytes().decode("utf-8-sig"), encoding)
    assert len(page) > 1_000_000 and detect_kind("page.html", page) == "cr-text"
    html_doc = parse_cr_html(page, "page.html")
    assert [(n.id, n.title, n.text, n.examples, n.refs) for n in html_doc.nodes] == [
        (n.id, n.title, n.text, n.examples, n.refs) for n in text_doc.nodes]
    assert (html_doc.version, html_doc.effective_date) == ("20260116", "2026-01-16")
