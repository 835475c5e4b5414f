"""Every real page read as what it is, and nothing passing quietly (issue 22, items 2 and 3): a Wisdom Guild page
whose menu links to MTG Wiki, page chrome after the last rule, the 2014-layout release notes, old title forms,
rules without their section's heading, and sources that give nothing."""

from __future__ import annotations

from click.testing import CliRunner
from conftest import DATA, FIXTURES

from ingest.cr_html import parse_cr_html
from ingest.cr_text import parse_cr_text
from ingest.kinds import GAVE_NOTHING, detect_kind, parse_source
from kb.cli import main

WG_PAGE = DATA / "wisdom-guild" / "cr_r_701.34.html"
RULES_PAGE = FIXTURES / "cr_html" / "mtg_jp_rules_doc.html"
RUBY = FIXTURES / "cr_html" / "JPN_CR_20250725_0.rb.html"
NOTES_2014 = FIXTURES / "release_notes" / "c14_2014_layout.html"
JA = DATA / "JPN_CR_20231117_0.txt"
SET = "マジック:ザ・ギャザリング ― 統率者(2014年版)"


def viewer_page_linking_to_mtg_wiki() -> bytes:
    """The rules viewer as saved from the browser: its own links relative, its menu's Wiki links to MediaWiki pages
    of MTG Wiki (カード / Wiki / ルール / デッキ … MTG Wiki)."""
    page = WG_PAGE.read_text(encoding="utf-8")
    for host in ("http://whisper.wisdom-guild.net", "http://www.wisdom-guild.net", "http://wonder.wisdom-guild.net",
                 "http://astral.wisdom-guild.net"):
        page = page.replace(host, "")
    page = page.replace('href="http://wiki.mtg-jp.com/"', 'href="http://mtgwiki.com/mediawiki/index.php?title=メインページ"')
    assert "wisdom-guild.net" not in page and "総合ルールビューア" in page
    return page.encode()


def run(*args: str):
    return CliRunner().invoke(main, list(args))


# -- item 2: every real page read as what it is ---------------------------------------------------------------------
def test_a_rules_viewer_page_whose_menu_links_to_mtg_wiki_stays_a_rules_viewer_page(tmp_path):
    page = viewer_page_linking_to_mtg_wiki()
    for source in ("cr_r_701.34.html", "saved/mtgwiki/cr_r_701.34.html", "http://mtgwiki.com/x.html"):
        assert detect_kind(source, page) == "wisdom-guild", source
    assert detect_kind("page.html", page.decode().encode("euc-jp", "replace").replace(b'charset="UTF-8"', b'charset="EUC-JP"')) \
        == "wisdom-guild"
    spaced = page.replace("MJMJ訳 20231117.0".encode(), '<span class="v">MJMJ訳</span>&nbsp;20231117.0'.encode())
    assert detect_kind("page.html", spaced) == "wisdom-guild"
    saved = tmp_path / "cr_r_701.34.html"
    saved.write_bytes(page)
    result = run("--kb-dir", str(tmp_path / "kb"), "ingest", "-q", str(saved))
    assert result.exit_code == 0, result.output
    assert "0 gave nothing" in result.output and "subrule" in result.output and "article" not in result.output


def test_page_chrome_never_joins_the_last_rule_or_glossary_entry():
    """A whole page's footer (© Wizards of the Coast LLC, site links) after the glossary — no credits heading between."""
    page = RULES_PAGE.read_text(encoding="utf-8").replace("<h4>クレジット</h4>\n  <p>翻訳:翻訳チーム</p>\n", "")
    for footer in ("<footer><p>&copy; Wizards of the Coast LLC</p><p>お問い合わせ</p></footer>",
                   '<div class="footer"><p>&copy; Wizards of the Coast LLC</p><p>お問い合わせ</p></div>',
                   '<div id="copyright"><p>&copy; Wizards of the Coast LLC</p><p>お問い合わせ</p></div>'):
        html = page.replace("<footer><p>&copy; Wizards of the Coast LLC</p><p>お問い合わせ</p></footer>", footer)
        doc = parse_cr_html(html.encode(), "rules.html")
        texts = "\n".join(f"{n.title} {n.text}" for n in doc.nodes)
        assert "Wizards of the Coast LLC" not in texts and "お問い合わせ" not in texts, footer
        assert [n.title for n in doc.nodes if n.kind == "glossary"] == ["唱える", "予示", "あなた"]


def test_2014_layout_release_notes_are_notes_one_per_card_section_general_notes_apart():
    source = "https://mtg-jp.com/gameplay/rules/docs/0011483/"  # the same path as the CR's
    data = NOTES_2014.read_bytes()
    assert detect_kind(source, data) == "release-notes"
    doc = parse_source(source, data)
    assert not doc.diagnostics
    notes = {n.id: n for n in doc.nodes}
    assert list(notes) == [f"note:{SET}:製品情報", f"note:{SET}:新メカニズム:統率者・プレインズウォーカー",
                           f"note:{SET}:宝革スフィンクス/Sphinx of Jewels", f"note:{SET}:時の熟達者/Master of Time"]
    general = [n for n in doc.nodes if n.meta.get("general")]
    assert [n.title for n in general] == ["製品情報", "新メカニズム:統率者・プレインズウォーカー"]
    mechanic = notes[f"note:{SET}:新メカニズム:統率者・プレインズウォーカー"]
    assert [(r.kind, r.target) for r in mechanic.refs] == [("mechanic", "統率者・プレインズウォーカー")]
    sphinx = notes[f"note:{SET}:宝革スフィンクス/Sphinx of Jewels"]
    assert sphinx.meta["bullets"] == ["宝革スフィンクスの能力は、それが戦場にある限り適用される。",
                                      "この能力は、あなたのコントロールする他のクリーチャーにも影響する。"]
    assert "クリーチャー ― スフィンクス" in sphinx.text and "青" not in sphinx.text  # the colour heading is no note
    assert ("card", "Sphinx of Jewels") in [(r.kind, r.target) for r in sphinx.refs]
    every_text = "\n".join(n.text for n in doc.nodes)
    for skipped in ("最終更新", "協力", "「一般注釈」の章", "GAME PLAY", "Wizards of the Coast LLC"):
        assert skipped not in every_text, skipped


def test_2014_layout_as_text_with_star_bullets():
    text = ("『統率者(2014年版)』 リリースノート\n\n最終更新 2014年9月23日\n\n一般注釈\n\n製品情報\n\n"
            "このセットは5種類のデッキからなる。\n\nカード別注釈\n\n白\n\n《宝革スフィンクス/Sphinx of Jewels》\n{3}{W}{W}\n"
            "クリーチャー ― スフィンクス\n4/4\n\n* この能力は常に適用される。\n\n* 他のクリーチャーにも影響する。\n")
    doc = parse_source("c14.txt", text.encode())
    assert doc.kind == "release-notes"
    assert [(n.title, n.meta["bullets"]) for n in doc.nodes] == [
        ("製品情報", []),
        ("《宝革スフィンクス/Sphinx of Jewels》", ["この能力は常に適用される。", "他のクリーチャーにも影響する。"])]


def test_old_title_forms_read():
    """(和訳 20160408.0-rb 版), and the 2012 layout: the title between ======== on one line, 私訳, ---- もくじ ----."""
    sample = JA.read_bytes().decode("utf-8-sig")
    rb = parse_cr_text(sample.replace("(和訳 20231117.0 版)", "(和訳 20160408.0-rb 版)").encode(), "JPN_CR_20160408_0.txt")
    assert (rb.version, rb.effective_date) == ("20160408.0", "2016-04-08")
    old = sample.replace("========\r\nマジック総合ルール(和訳 20231117.0 版)\r\n========",
                         "======== マジック総合ルール(私訳 20120720.0 版) ========").replace("もくじ", "-------- もくじ --------")
    doc = parse_cr_text(old.encode(), "JPN_CR_20120720.txt")
    assert (doc.version, doc.effective_date) == ("20120720.0", "2012-07-20")
    assert {n.id for n in doc.nodes} == {n.id for n in parse_cr_text(JA.read_bytes(), str(JA)).nodes}


def test_rules_without_their_section_heading_get_the_section_of_the_contents_and_the_number():
    ruby = RUBY.read_text(encoding="utf-8")
    ruby = ruby.replace("0. はじめに<br>\n1. ゲームの<ruby>考<rt>かんが</rt></ruby>え<ruby>方<rt>かた</rt></ruby><br>\n",
                        "0. はじめに<br>\n1. ゲームの<ruby>考<rt>かんが</rt></ruby>え<ruby>方<rt>かた</rt></ruby><br>\n"
                        "100. <ruby>原則<rt>げんそく</rt></ruby><br>\n", 1)
    body_section = "<br>\n100. <ruby>原則<rt>げんそく</rt></ruby><br>\n<br>\n100.1. "
    assert body_section in ruby
    doc = parse_cr_html(ruby.replace(body_section, "<br>\n100.1. ").encode(), "JPN_CR_20250725_0.rb.html")
    assert not [d for d in doc.diagnostics if "no parent" in d.message]
    nodes = {n.id: n for n in doc.nodes}
    assert (nodes["cr:100"].kind, nodes["cr:100"].title, nodes["cr:100"].parent) == ("section", "原則", "cr:1")
    assert nodes["cr:100.1"].parent == "cr:100" and nodes["cr:100.1a"].parent == "cr:100.1"
    assert nodes["cr:100"].meta.get("implied") is True
    # without a contents entry for it, the section is known from the number alone
    text = JA.read_bytes().decode("utf-8-sig").replace("100. 総則\r\n", "")
    plain = {n.id: n for n in parse_cr_text(text.encode(), "JPN_CR_20231117_0.txt").nodes}
    assert plain["cr:100"].parent == "cr:1" and plain["cr:100.1"].parent == "cr:100"


# -- item 3: nothing passes quietly ----------------------------------------------------------------------------------
def test_a_source_that_gives_nothing_is_a_warning_an_error_under_strict_and_counted(tmp_path):
    empty_notes = tmp_path / "notes.html"
    empty_notes.write_text("<html><head><title>『テスト』 リリースノート</title></head><body><p>準備中</p></body></html>",
                           encoding="utf-8")
    viewer_top = tmp_path / "cr_top.html"
    viewer_top.write_bytes((FIXTURES / "wisdom_guild" / "cr_top_no_rules.html").read_bytes())
    result = run("--kb-dir", str(tmp_path / "kb"), "ingest", str(empty_notes), str(viewer_top))
    assert result.exit_code == 0, result.output
    assert f"warning: {empty_notes}: {GAVE_NOTHING} read as release-notes, it gives no release notes" in result.output
    assert f"warning: {viewer_top}: {GAVE_NOTHING} read as wisdom-guild, it gives no rules" in result.output
    assert "0 failed, 2 gave nothing" in result.output
    quiet = run("--kb-dir", str(tmp_path / "kb4"), "ingest", "-q", str(empty_notes))
    assert quiet.exit_code == 0 and f"warning: {empty_notes}: {GAVE_NOTHING}" in quiet.output  # never quietly
    strict = run("--kb-dir", str(tmp_path / "kb2"), "ingest", "--strict", str(empty_notes))
    assert strict.exit_code == 1 and GAVE_NOTHING in strict.output and "release notes" in strict.output
    good = run("--kb-dir", str(tmp_path / "kb3"), "ingest", "-q", str(NOTES_2014))
    assert good.exit_code == 0 and "0 gave nothing" in good.output and "note 4" in good.output
