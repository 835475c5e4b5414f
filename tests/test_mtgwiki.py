"""MTG Wiki page parser: structure, references, sanitising, chrome, broken and hostile pages, title ↔ URL."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from ingest.kinds import detect_kind
from ingest.mtgwiki import MAX_PAGE_BYTES, parse_mtgwiki
from ingest.refs import find_rule_refs
from ingest.wikititle import (
    CR_TITLE_RE,
    decode_anchor,
    encode_anchor,
    normalize_title,
    parse_wiki_href,
    split_card_name,
    title_to_index_url,
    title_to_path,
)
from kb.pipeline import ingest_sources
from kb.store import Store

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "mtgwiki"
CAST = Path(__file__).resolve().parent.parent / "data" / "mtgwiki" / "唱える.html"  # the bundled sample, MonoBook skin
SEED_LINES_IN_ARTICLE = [
    "唱える/Castは、キーワード処理の1つ。呪文を使うときに行われる処理である。",
    "- 土地は他のカード・タイプを持っていても、呪文として唱えることはできない(CR:300.2a)。例として、ドライアドの東屋/Dryad Arbor"
    "はマナ・コストを支払うことなく唱える効果でも唱えることはできない。",
    "- CR601.2の手順を踏まずにスタックや戦場に置かれたものは「唱えられた」とは言わない。",
    "引用：総合ルール 20231117.0\n- 7 その他のルール\n引用：総合ルール 20231117.0\n- 6 呪文、能力、効果\n- 601 呪文を唱えること",
]


def parse(name: str | Path):
    """Parse a fixture by file name (or any page by path: FIXTURES / an absolute path is that path)."""
    return parse_mtgwiki((FIXTURES / name).read_bytes(), str(name))


@pytest.fixture(scope="module")
def cast():
    doc = parse(CAST)
    assert doc.diagnostics == ()
    (node,) = doc.nodes
    return node


def refs_of(node, kind):
    return [r for r in node.refs if r.kind == kind]


def test_cast_article_identity(cast):
    assert (cast.id, cast.kind, cast.lang, cast.version, cast.title) == ("wiki:唱える", "article", "ja", "", "唱える")
    assert cast.english == "Cast"
    assert cast.aliases == ("Cast",)  # redirected from Cast
    assert cast.meta["categories"] == ["キーワード処理", "ルール用語"]
    assert cast.meta["last_modified"] == "2023-12-02"


def test_cast_text_follows_the_seed(cast):
    for chunk in SEED_LINES_IN_ARTICLE:
        assert chunk in cast.text
    assert cast.text.startswith("唱える/Castは")


def test_chrome_is_dropped(cast):
    for chrome in ("[編集]", "編集]", "目次", "提供：MTG Wiki", "移動:", "より作成", "最終更新", "メインページ", "adsbygoogle",
                   "wgPageName", "本文", "おまかせ表示"):
        assert chrome not in cast.text, chrome
        assert chrome not in cast.html, chrome
    assert "<script" not in cast.html and "<form" not in cast.html and "<style" not in cast.html


def test_heading_tree(cast):
    tops = [s["title"] for s in cast.meta["sections"]]
    assert tops == ["定義", "解説", "唱える領域やタイミングの拡張", "呪文を唱えることの制限",
                    "「瞬速を持っているかのように」の扱い", "代替の特性があるカードの扱い", "その他のルール", "ルールの変遷",
                    "その他", "参考"]
    explanation = cast.meta["sections"][1]
    assert [s["title"] for s in explanation["sections"]][:2] == ["1.呪文をスタックに置く", "2.呪文の選択を行う"]
    assert all(s["level"] == 3 for s in explanation["sections"])
    assert cast.meta["sections"][0]["anchor"] == "定義"  # decoded from the legacy .E5.AE.9A.E7.BE.A9
    definition = cast.meta["sections"][0]["blocks"]
    assert [b["tag"] for b in definition] == ["p", "ul", "p"]
    assert definition[1]["text"].startswith("- 呪文を唱えることを宣言し")
    assert definition[1]["html"].startswith("<ul><li>")
    for section in [*cast.meta["sections"], *explanation["sections"]]:
        for block in section["blocks"]:
            assert cast.text[block["start"]:block["end"]].strip("\n") == block["text"]
    assert cast.meta["lead"][0]["text"].startswith("唱える/Cast")


def test_footnotes(cast):
    notes = cast.meta["footnotes"]
    assert [n["id"] for n in notes] == ["cite_note-1", "cite_note-2", "cite_note-3", "cite_note-4"]
    assert notes[0]["text"] == ("Magic Origins Update Bulletin—Comprehensive Rules Change(Internet Archive)"
                                "(Daily MTG 2015年7月16日)")
    assert "[1]" in cast.text  # the marker stays where it was cited


def test_reference_offsets_point_at_their_text(cast):
    placed = [r for r in cast.refs if r.start >= 0]
    assert len(placed) > 100
    for ref in placed:
        assert cast.text[ref.start:ref.end] == ref.text, ref


def test_cr_references(cast):
    plain = {r.target for r in refs_of(cast, "rule") if r.version is None}
    assert {"300.2a", "601.2f", "601.3a", "601.4", "601.5", "608.2g", "708.4", "601.2"} <= plain
    linked_to_cr_page = [r for r in refs_of(cast, "rule") if r.target == "708.4"]
    assert len(linked_to_cr_page) == 1  # the link and its text name the same rule once


def test_quoted_rule_block_carries_its_version(cast):
    quotes = cast.meta["quoted_rules"]
    assert [q["version"] for q in quotes] == ["20231117.0", "20231117.0"]
    assert quotes[0]["rules"] == ["7"]
    assert quotes[1]["rules"][:4] == ["6", "601", "601.1", "601.2"]
    assert "601.7" in quotes[1]["rules"]
    versioned = {r.target for r in refs_of(cast, "rule") if r.version == "20231117.0"}
    assert {"601.2a", "601.2i", "601.7", "728", "611.2f"} <= versioned  # rule lines and references inside them
    first_line = next(r for r in refs_of(cast, "rule") if r.target == "601.2a" and r.version)
    assert cast.text[first_line.start - 2:first_line.end] == "- 601.2a"


def test_links(cast):
    wiki = {r.target for r in refs_of(cast, "wiki")}
    assert {"キーワード処理", "スタック", "優先権", "総合ルール", "Daily MTG"} <= wiki
    assert not any("#" in t and t.startswith("唱える") for t in wiki)  # in-page anchors are not references
    assert [r.target for r in refs_of(cast, "redlink")] == ["唱え始める"]
    external = refs_of(cast, "external")
    assert len(external) == 8 and all(r.target.startswith("https://") for r in external)
    assert [r.target for r in refs_of(cast, "category")] == ["キーワード処理", "ルール用語"]


def test_card_references(cast):
    cards = refs_of(cast, "card")
    dryad = [r for r in cards if r.target == "Dryad Arbor"]
    assert len(dryad) == 2  # the link in the text and the card box
    assert {r.text for r in dryad} == {"ドライアドの東屋/Dryad Arbor"}
    assert {"Rout", "Teferi, Time Raveler", 'Henzie "Toolbox" Torre', "Fire+Ice", "Squee, the Immortal"} <= {
        r.target for r in cards}


def test_modern_markup_reads_the_same(cast):
    doc = parse("cast_modern.html")
    (modern,) = doc.nodes
    assert modern.text == cast.text
    def ref_fields(node):
        return [(r.kind, r.target, r.start, r.version) for r in node.refs]

    assert ref_fields(modern) == ref_fields(cast)
    assert modern.meta["categories"] == ["キーワード処理", "ルール用語"]  # the hidden category is left out
    assert modern.meta["last_modified"] == "2024-01-05"
    assert modern.aliases == ("Cast",)
    assert "NewPP" not in modern.text and "CentralAutoLogin" not in modern.html


def test_user_page():
    (node,) = parse("user_page.html").nodes
    assert node.id == "wiki:利用者:ブラー" and node.english is None
    assert [s["title"] for s in node.meta["sections"]] == ["編集方針", "作成中の記事"]
    assert [s["title"] for s in node.meta["sections"][1]["sections"]] == ["The Great Designer Search 3"]
    assert "個人的編集方針であり、推奨や提案ではありません。" in node.text
    assert "- ゼンディカー/Zendikarの未訳記事の情報追加\n- 随時" in node.text
    assert [r.target for r in refs_of(node, "external")] == ["https://twitter.com/mtgjp/status/1687906720734224384"]
    assert [r.target for r in refs_of(node, "redlink")] == ["デッドリンク"]
    assert "利用者:ブラー/目次" in {r.target for r in refs_of(node, "wiki")}
    assert not any("ファイル" in r.target for r in node.refs)  # the image link is not a reference


def test_deck_lists():
    (node,) = parse("decklists.html").nodes
    decks = node.meta["decklists"]
    assert [d["section"] for d in decks] == ["Blast from the Past", "Timey-Wimey", "Paradox Power", "Masters of Evil"]
    assert [d["total"] for d in decks] == [100, 100, 100, 100]  # commander decks
    assert decks[0]["cards"][0] == {"count": 1, "name": "４代目ドクター", "english": "The Fourth Doctor"}
    assert {"count": 2, "name": "平地", "english": "Plains"} in decks[0]["cards"]
    assert {"count": 0, "name": "殺人鬼", "english": "Killer"} in decks[1]["cards"]
    cards = refs_of(node, "card")
    fourth = next(r for r in cards if r.target == "The Fourth Doctor")
    assert node.text[fourth.start:fourth.end] == "４代目ドクター/The Fourth Doctor"
    assert "Temple of Atropos" in {r.target for r in cards}  # plane links
    assert "K-9, Mark I" in {r.target for r in cards}


def test_hostile_page_is_sanitised():
    doc = parse("hostile.html")
    (node,) = doc.nodes
    lowered = node.html.lower()
    for bad in ("<script", "onerror", "onclick", "onload", "onmouseover", "javascript:", "<iframe", "<form", "<input",
                "style=", "<svg", "<object", "data:text", "evil.example/frame", "evil.example/steal"):
        assert bad not in lowered, bad
        assert bad not in node.text.lower(), bad
    assert "alert" not in node.text and "埋め込みの中身" not in node.text and "送信" not in node.text
    assert "広告です" not in node.text
    assert "対象を取る呪文は、唱える際に対象を選ぶ。危険なリンクとデータURL。" in node.text  # link text stays
    assert {(r.kind, r.target) for r in node.refs if r.kind in ("wiki", "external")} == {
        ("wiki", "ルール用語"), ("wiki", "唱える"), ("external", "https://evil.example/")}
    assert {r.target for r in refs_of(node, "rule")} == {"115.1", "601.2c"}


def test_unclosed_tags_and_missing_heading():
    doc = parse("broken_unclosed.html")
    assert any(d.where == "#firstHeading" and "<title>" in d.message for d in doc.diagnostics)
    (node,) = doc.nodes
    assert node.title == "変異" and node.english == "Morph"
    for text in ("裏向きの呪文は2/2である(CR:708.2)", "変異 | (3)", "閉じられていない段落"):
        assert text.replace(" | ", " |") in node.text.replace(" | ", " |")
    assert {r.target for r in refs_of(node, "rule")} == {"702.37", "708.2"}


@pytest.mark.parametrize("data, message", [
    (b"", "empty page"),
    (b"   \n\t ", "empty page"),
    ((FIXTURES / "empty_body.html").read_bytes(), "no body text"),
    (b"\x00\x01\x02\x03", "empty page"),
    (b"<html><body><script>alert(1)</script></body></html>", "no body text"),
])
def test_empty_pages_give_a_warning_and_no_node(data, message):
    doc = parse_mtgwiki(data, "page.html")
    assert doc.nodes == ()
    assert any(message in d.message for d in doc.diagnostics), doc.diagnostics


def test_wrong_charset():
    doc = parse("wrong_charset.html")  # declares Shift_JIS, is UTF-8
    assert any("charset=shift_jis" in d.message and "utf-8" in d.message for d in doc.diagnostics)
    assert doc.nodes[0].text.startswith("唱える/Castは")
    euc = (FIXTURES / "wrong_charset.html").read_text("utf-8").replace("Shift_JIS", "UTF-8").encode("euc_jp")
    doc = parse_mtgwiki(euc, "euc.html")  # declares UTF-8, is EUC-JP
    assert any("euc_jp" in d.message for d in doc.diagnostics)
    assert doc.nodes[0].title == "唱える" and doc.nodes[0].english == "Cast"


def test_a_10_mb_page_is_cut_with_a_warning():
    page = CAST.read_bytes()
    filler = ("<p>" + "長い段落の文章。" * 100 + "</p>\n").encode() * 4200
    huge = page.replace(b"<!-- start content -->", b"<!-- start content -->" + filler, 1)
    assert len(huge) > 10_000_000
    doc = parse_mtgwiki(huge, "huge.html")
    assert any("MB" in d.message and "only the first" in d.message for d in doc.diagnostics)
    (node,) = doc.nodes
    assert node.title == "唱える" and len(node.text) < MAX_PAGE_BYTES


def test_bad_pages_never_stop_an_ingest(tmp_path):
    for name in ("hostile.html", "broken_unclosed.html", "empty_body.html", "wrong_charset.html", CAST):
        (tmp_path / name).write_bytes((FIXTURES / name).read_bytes())
    (tmp_path / "empty.html").write_bytes(b"")
    with Store.open(tmp_path / "kb") as store:
        report = ingest_sources(store, [str(tmp_path / n) for n in sorted(p.name for p in tmp_path.glob("*.html"))],
                                kind="mtgwiki", index=False)
        assert report.failed == []
        assert {d.source.rsplit("/", 1)[-1] for d in report.warnings} >= {"empty.html", "empty_body.html", "wrong_charset.html",
                                                                           "broken_unclosed.html"}
        titles = {n.title for n in store.nodes(kinds=["article"])}
    assert titles == {"唱える", "対象", "変異"}  # the two 唱える pages are one article; empty pages store nothing


def test_detect_kind_sees_wiki_pages():
    for name in (CAST, "cast_modern.html", "user_page.html", "decklists.html"):
        assert detect_kind(f"page{len(str(name))}.html", (FIXTURES / name).read_bytes()) == "mtgwiki"  # by content


# -- rule references as the wiki writes them ----------------------------------------------------------------


@pytest.mark.parametrize("text, targets", [
    ("(CR:601.2f)", ["601.2f"]),
    ("(CR:601.3)", ["601.3"]),
    ("CR:601.2f-h", ["601.2f", "601.2g", "601.2h"]),
    ("CR601.2fの手順", ["601.2f"]),
    ("CR:708を参照", ["708"]),
    ("（CR：601.2c）", ["601.2c"]),
])
def test_wiki_cr_forms(text, targets):
    refs = find_rule_refs(text)
    assert [r.target for r in refs] == targets
    assert all(text[r.start:r.end] == r.text for r in refs)


# -- titles and URLs ------------------------------------------------------------------------------------------

TITLE_CHARS = st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters="#<>[]|{}")
titles = st.text(TITLE_CHARS, min_size=1, max_size=30).filter(lambda t: normalize_title(t) and ":" not in t)


@given(titles)
def test_title_path_round_trip(title):
    assume(not CR_TITLE_RE.match(normalize_title(title)))
    link = parse_wiki_href(title_to_path(title))
    assert (link.kind, link.target, link.fragment) == ("wiki", normalize_title(title), None)


@given(titles)
def test_index_url_round_trip(title):
    link = parse_wiki_href(title_to_index_url(title))
    assume(link is not None and link.kind == "wiki")
    assert link.target == normalize_title(title)
    red = parse_wiki_href(title_to_index_url(title, redlink=True))
    assert (red.kind, red.target) == ("redlink", normalize_title(title))


@given(titles)
def test_normalize_title_is_idempotent(title):
    once = normalize_title(title)
    assert normalize_title(once) == once
    assert normalize_title(once.replace(" ", "_")) == once
    assert "_" not in once and "  " not in once and once == once.strip()


@given(st.text(TITLE_CHARS, min_size=1, max_size=30))
def test_anchor_round_trip(fragment):
    assume(not re.search(r"\.[0-9A-F]{2}", fragment) and "_" not in fragment)
    assert decode_anchor(encode_anchor(fragment)) == fragment


@given(titles, st.text(TITLE_CHARS, min_size=1, max_size=10))
def test_fragment_survives(title, fragment):
    assume(not re.search(r"\.[0-9A-F]{2}", fragment) and "_" not in fragment and fragment.strip() == fragment)
    link = parse_wiki_href(title_to_path(title, fragment))
    assume(link is not None and link.kind == "wiki")
    assert (link.target, link.fragment) == (normalize_title(title), fragment)


@pytest.mark.parametrize("href, expected", [
    ("/wiki/%E5%94%B1%E3%81%88%E3%82%8B", ("wiki", "唱える", None)),
    ("/wiki/唱える#定義", ("wiki", "唱える", "定義")),
    ("/wiki/%E5%94%B1%E3%81%88%E3%82%8B#.E5.AE.9A.E7.BE.A9", ("wiki", "唱える", "定義")),
    ("/index.php?title=%E5%94%B1%E3%81%88%E3%82%8B", ("wiki", "唱える", None)),
    ("http://mtgwiki.com/wiki/Daily_MTG", ("wiki", "Daily MTG", None)),
    ("/wiki/daily_MTG", ("wiki", "Daily MTG", None)),
    ("/index.php?title=%E3%81%AA%E3%81%97&action=edit&redlink=1", ("redlink", "なし", None)),
    ("/wiki/%E3%82%AB%E3%83%86%E3%82%B4%E3%83%AA:%E3%83%AB%E3%83%BC%E3%83%AB", ("category", "ルール", None)),
    ("/wiki/CR:601.2f", ("rule", "601.2f", None)),
    ("/wiki/総合ルール#601.4", ("rule", "601.4", None)),
    ("https://magic.wizards.com/ja", ("external", "https://magic.wizards.com/ja", None)),
])
def test_href_classification(href, expected):
    link = parse_wiki_href(href)
    assert (link.kind, link.target, link.fragment) == expected


@pytest.mark.parametrize("href", ["#定義", "javascript:alert(1)", " JAVASCRIPT:x", "data:text/html,x",
                                  "/index.php?title=X&action=edit", "/index.php?title=X&action=history",
                                  "/wiki/特別:Categories", "/wiki/ファイル:x.jpg",
                                  "/skins/monobook/main.css", ""])
def test_hrefs_that_are_not_references(href):
    assert parse_wiki_href(href) is None


def test_card_names():
    assert split_card_name("ドライアドの東屋/Dryad Arbor") == ("ドライアドの東屋", "Dryad Arbor")
    assert split_card_name("火+氷/Fire+Ice") == ("火+氷", "Fire+Ice")
    assert split_card_name("唱える") is None
    assert split_card_name("利用者:ブラー/目次") is None


def test_redirect_page():
    page = ('<html><head><title>Cast - MTG Wiki</title></head><body class="mediawiki"><h1 id="firstHeading">Cast</h1>'
            '<div id="bodyContent"><div class="redirectMsg"><p>転送先:</p><ul class="redirectText"><li>'
            '<a href="/wiki/%E5%94%B1%E3%81%88%E3%82%8B" title="唱える">唱える</a></li></ul></div></div></body></html>')
    (node,) = parse_mtgwiki(page.encode(), "Cast.html").nodes
    assert node.id == "wiki:Cast" and node.meta["redirect"] == "唱える"
    assert [(r.kind, r.target) for r in node.refs] == [("wiki", "唱える")]
