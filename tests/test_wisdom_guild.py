"""Wisdom Guild rules-viewer pages: fixtures built from the real page text of 701.34 (seed_cr_r_701.34.txt) in
three layouts and encodings, a 601 section page, a cr.php single-rule page and broken pages."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.cr_text import parse_cr_text
from ingest.kinds import detect_kind
from ingest.wisdom_guild import parse_wisdom_guild
from kb.errors import KbError
from kb.model import REF_RULE, REF_TERM
from kb.pipeline import ingest_sources
from kb.store import NodeKey, Store

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "wisdom_guild"
DATA = Path(__file__).resolve().parent.parent / "data"
JPN_CR = DATA / "JPN_CR_20231117_0.txt"
SAMPLE = DATA / "wisdom-guild" / "cr_r_701.34.html"
LAYOUTS = (SAMPLE, "cr_r_701.34_table_eucjp.html", "cr_r_701.34_div_sjis.html")
CHROME = ("MJMJ", "最終同期", "総則", "キーワード能力", "トップページ", "広告", "Wisdom Guild", "©", "実行時間", "管理者連絡先",
          "総合ルールビューア", "adsbygoogle")


def parse(name: str):
    path = FIXTURES / name
    return parse_wisdom_guild(path.read_bytes(), str(path))


def by_id(doc):
    return {n.id: n for n in doc.nodes}


def seed_rules() -> dict[str, str]:
    """The seed is the page's text with one line per text node: rule number lines, each followed by its pieces."""
    lines = (FIXTURES / "seed_cr_r_701.34.txt").read_text(encoding="utf-8").split("\n")
    start = lines.index("キーワード処理", lines.index("総合ルールビューア")) + 1
    rules: dict[str, list[str]] = {}
    for line in lines[start:]:
        if line.startswith("©"):
            break
        if re.fullmatch(r"\d{3}\.\d+[a-z]?", line):
            rules[line] = []
        else:
            rules[list(rules)[-1]].append(line)
    return {number: "".join(pieces) for number, pieces in rules.items()}


def glossary_links(html: str, number: str) -> list[str]:
    """Texts of the glossary links in the <dd> after <dt>number</dt> of the <dl> fixture."""
    dd = re.search(rf'<dt id="r{re.escape(number)}">[^<]*</dt>\s*<dd>(.*?)</dd>', html, re.S).group(1)
    return re.findall(r'<a href="/cr/glossary/[^"]*">([^<]*)</a>', dd)


@pytest.fixture(scope="module")
def jpn_cr():
    return by_id(parse_cr_text(JPN_CR.read_bytes(), str(JPN_CR)))


@pytest.mark.parametrize("name", LAYOUTS)
def test_rule_texts_are_the_page_text_joined_without_spaces(name):
    doc = parse(name)
    nodes = by_id(doc)
    expected = seed_rules()
    assert [n.number for n in doc.nodes if n.kind in ("rule", "subrule")] == list(expected)
    for number, text in expected.items():
        assert nodes[f"cr:{number}"].text == text
    assert nodes["cr:701.34"].text == "予示する/Manifest"
    assert nodes["cr:701.34a"].text.startswith("「[カードを]予示する/Manifest [a card]」場合、それを裏向きにする。")
    assert "2/2のクリーチャー・カードになる。そのカードを裏向きで戦場に出す。" in nodes["cr:701.34a"].text
    assert doc.diagnostics == ()


@pytest.mark.parametrize("name", LAYOUTS)
def test_version_dates_and_document_fields(name):
    doc = parse(name)
    assert (doc.kind, doc.lang, doc.version) == ("wisdom-guild", "ja", "20231117.0")
    assert (doc.effective_date, doc.sync_date) == ("2023-11-17", "2024-04-19")
    assert doc.title == "701.34 予示する/Manifest | 総合ルールビューア | Wisdom Guild"
    assert all(n.version == "20231117.0" and n.lang == "ja" for n in doc.nodes)


def test_all_three_layouts_and_encodings_give_identical_nodes():
    docs = [parse(name) for name in LAYOUTS]
    assert docs[0].nodes == docs[1].nodes == docs[2].nodes


def test_term_links_become_term_refs_with_offsets_into_the_joined_text():
    html = (FIXTURES / LAYOUTS[0]).read_text(encoding="utf-8")
    for node in parse(LAYOUTS[0]).nodes:
        if node.kind not in ("rule", "subrule"):
            continue
        terms = [r for r in node.refs if r.kind == REF_TERM]
        assert [r.target for r in terms] == glossary_links(html, node.number)
        for ref in terms:
            assert node.text[ref.start:ref.end] == ref.text == ref.target
    nodes = by_id(parse(LAYOUTS[0]))
    title_refs = nodes["cr:701.34"].refs
    assert [(r.kind, r.target, r.start, r.end) for r in title_refs] == [(REF_TERM, "予示", 0, 2)]
    stems = {r.target for r in nodes["cr:701.34a"].refs}
    assert {"戦場に出", "にな", "マナ・コスト"} <= stems


def test_rule_references_in_the_text():
    nodes = by_id(parse(LAYOUTS[1]))
    expected = {"cr:701.34b": "116.2b", "cr:701.34c": "702.37e", "cr:701.34g": "708"}
    for node_id, target in expected.items():
        node = nodes[node_id]
        rules = [r for r in node.refs if r.kind == REF_RULE]
        assert [r.target for r in rules] == [target]
        assert node.text[rules[0].start:rules[0].end] == target
        assert not any(r.kind == REF_TERM and "rule" in r.target for r in node.refs)
    refs = nodes["cr:701.34b"].refs
    assert [r.start for r in refs] == sorted(r.start for r in refs)


@pytest.mark.parametrize("name", LAYOUTS)
def test_page_chrome_is_not_content(name):
    doc = parse(name)
    assert [n.id for n in doc.nodes] == ["cr:7", "cr:701", "cr:701.34"] + [f"cr:701.34{x}" for x in "abcdefg"]
    for node in doc.nodes:
        for chrome in CHROME:
            assert chrome not in node.text and chrome not in (node.title or "")
            assert all(chrome not in e for e in node.examples)


def test_breadcrumb_ancestors_and_nodes_match_the_cr_text_of_the_same_version(jpn_cr):
    doc = parse(LAYOUTS[2])
    nodes = by_id(doc)
    assert (nodes["cr:7"].kind, nodes["cr:7"].title, nodes["cr:7"].parent) == ("chapter", "その他のルール", None)
    assert (nodes["cr:701"].kind, nodes["cr:701"].title, nodes["cr:701"].parent) == ("section", "キーワード処理", "cr:7")
    for node in doc.nodes:
        cr = jpn_cr[node.id]
        assert (node.kind, node.number, node.parent, node.title, node.text) == (cr.kind, cr.number, cr.parent, cr.title, cr.text)
        assert [(r.kind, r.target, r.start) for r in node.refs if r.kind == REF_RULE] == \
            [(r.kind, r.target, r.start) for r in cr.refs if r.kind == REF_RULE]


def test_section_page_601(jpn_cr):
    doc = parse("cr_r_601.html")
    nodes = by_id(doc)
    assert nodes["cr:601"].title == "呪文を唱えること" and nodes["cr:6"].title == "呪文、能力、効果"
    rules = [n for n in doc.nodes if n.kind in ("rule", "subrule")]
    assert len(rules) == 22 and rules[0].id == "cr:601.1" and rules[-1].id == "cr:601.7"
    for node in doc.nodes:
        cr = jpn_cr[node.id]
        assert (node.kind, node.parent, node.title, node.text) == (cr.kind, cr.parent, cr.title, cr.text)
    ranges = [r.target for r in nodes["cr:601.2"].refs if r.kind == REF_RULE]
    assert ranges[:8] == ["601.2a", "601.2b", "601.2c", "601.2d", "601.2f", "601.2g", "601.2h", "601.3"]
    assert nodes["cr:601.3b"].text.count("ように 唱える") == 1  # a real space in the text stays
    cast = [r for r in nodes["cr:601.2"].refs if r.target == "唱え"]
    text = nodes["cr:601.2"].text
    assert [text[r.end] for r in cast] == ["る", "る", "る", "ら", "る"]  # 唱え + る, 唱え + られる


def test_single_rule_page():
    doc = parse("cr_php_r_601.2f.html")
    assert [(n.id, n.parent) for n in doc.nodes] == [("cr:6", None), ("cr:601", "cr:6"), ("cr:601.2f", "cr:601.2")]
    assert by_id(doc)["cr:601.2f"].text == by_id(parse("cr_r_601.html"))["cr:601.2f"].text
    assert doc.diagnostics == ()


def test_truncated_page_keeps_what_was_read_and_warns():
    doc = parse("cr_r_701.34_truncated.html")
    nodes = by_id(doc)
    full = by_id(parse(LAYOUTS[0]))
    for number in ("701.34", "701.34a", "701.34b", "701.34c"):
        assert nodes[f"cr:{number}"] == full[f"cr:{number}"]
    assert nodes["cr:701.34d"].text == "効果がプレイヤーにその"
    assert "cr:701.34e" not in nodes
    [warning] = doc.diagnostics
    assert warning.source.endswith("cr_r_701.34_truncated.html") and "701.34d" in warning.message
    assert "truncated" in str(warning)


def test_page_that_is_not_a_rules_page_is_refused():
    path = FIXTURES / "not_rules_page.html"
    with pytest.raises(KbError, match=r"not_rules_page\.html: no 'MJMJ訳 … 版' version line"):
        parse_wisdom_guild(path.read_bytes(), str(path))


def test_rules_viewer_page_without_rules_gives_a_warning():
    doc = parse("cr_top_no_rules.html")
    assert doc.nodes == () and doc.version == "20231117.0"
    assert [d.message for d in doc.diagnostics] == ["no rules found on the page"]


@pytest.mark.parametrize("data", [b"", b"   \n", b"\x00\x01\x02"])
def test_nothing_readable_is_an_error(data):
    with pytest.raises(KbError, match="empty.html"):
        parse_wisdom_guild(data, "empty.html")


def test_page_without_version_line_is_an_error():
    data = (FIXTURES / LAYOUTS[0]).read_bytes().replace("MJMJ訳 20231117.0".encode(), b"")
    with pytest.raises(KbError, match="page.html: no 'MJMJ訳"):
        parse_wisdom_guild(data, "page.html")


def test_wrong_charset_declaration_is_a_warning_and_the_page_still_reads():
    data = (FIXTURES / LAYOUTS[2]).read_bytes().replace(b'charset="Shift_JIS"', b'charset="UTF-8"')
    doc = parse_wisdom_guild(data, "sjis.html")
    assert doc.nodes == parse(LAYOUTS[0]).nodes
    [warning] = doc.diagnostics
    assert warning.source == "sjis.html" and warning.where == "<meta charset>" and "'UTF-8'" in warning.message


def test_undecodable_bytes_are_replaced_with_a_warning_naming_the_line():
    page = (FIXTURES / LAYOUTS[0]).read_bytes()
    at = page.index("〕を参照。".encode())
    data = page[:at] + b"\xff\xfe" + page[at:]
    doc = parse_wisdom_guild(data, "bad.html")
    line = page[:at].count(b"\n") + 1
    assert [(d.where, "utf-8" in d.message) for d in doc.diagnostics] == [(f"line {line}", True)]
    nodes, full = by_id(doc), by_id(parse(LAYOUTS[0]))
    assert nodes["cr:701.34f"] == full["cr:701.34f"]
    assert nodes["cr:701.34g"].text == full["cr:701.34g"].text.replace("〕を参照", "\ufffd\ufffd〕を参照")


def test_unreadable_rule_fragments_are_skipped_and_the_rest_kept():
    page = (FIXTURES / LAYOUTS[0]).read_text(encoding="utf-8")
    page = page.replace('<dt id="r701.34e">701.34e</dt>', '<dt id="r701.34e">701.34l</dt>')
    page = re.sub(r'(<dt id="r701.34c">701.34c</dt>\s*<dd>).*?(</dd>)', r"\1\2", page, flags=re.S)
    doc = parse_wisdom_guild(page.encode(), "broken.html")
    ids = [n.id for n in doc.nodes]
    assert ids == ["cr:7", "cr:701", "cr:701.34", "cr:701.34a", "cr:701.34b", "cr:701.34d", "cr:701.34f", "cr:701.34g"]
    messages = sorted(d.message for d in doc.diagnostics)
    assert messages == ["bad rule number '701.34l'; rule skipped", "rule 701.34c has no text; skipped"]
    assert all(d.source == "broken.html" and "dt#r701.34" in d.where for d in doc.diagnostics)


def test_examples_are_kept_apart_from_the_text():
    page = (FIXTURES / LAYOUTS[0]).read_text(encoding="utf-8")
    example = "例:呪文の効果によってあなたはあなたのライブラリーの一番上のカードを予示した。"
    linked = example.replace("予示", "<a href=/cr/glossary/x>予示</a>").replace(
        "カード", '<a href="http://wonder.wisdom-guild.net/card/">カード</a>')  # a link to another site: not a term
    page = page.replace("時点で終了する。</dd>", f"時点で終了する。<br>{linked}</dd>")
    node = by_id(parse_wisdom_guild(page.encode(), "example.html"))["cr:701.34a"]
    assert node.text == seed_rules()["701.34a"]
    assert node.examples == (example.removeprefix("例:"),)
    unplaced = [(r.kind, r.target) for r in node.refs if r.start == -1]
    assert unplaced == [(REF_TERM, "予示")]


def test_rules_inside_an_element_named_like_chrome_are_still_read_with_a_warning():
    page = (FIXTURES / LAYOUTS[0]).read_text(encoding="utf-8").replace('<div id="main">', '<div id="main" class="menu">')
    doc = parse_wisdom_guild(page.encode(), "menu.html")
    assert doc.nodes == parse(LAYOUTS[0]).nodes
    assert [d.message.split(";")[0] for d in doc.diagnostics] == [
        "rules found only inside elements that look like page chrome (menu, sidebar, ad)"]


JAPANESE = "あいうえおかがをはにるすカードクリーチャー予示裏向き戦場出、。・「」〔〕()/"


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.text(alphabet=JAPANESE, min_size=1, max_size=6), st.booleans()), min_size=1, max_size=12),
       st.sampled_from(["", "\n", "\n    "]))
def test_any_mix_of_text_and_term_links_joins_exactly(pieces, formatting):
    page = (FIXTURES / LAYOUTS[0]).read_text(encoding="utf-8")
    dd, before = "", ""
    for text, link in pieces:  # source formatting between pieces, where a browser would not show a space either
        if before and (unicodedata.east_asian_width(before[-1]) in "WF" or unicodedata.east_asian_width(text[0]) in "WF"):
            dd += formatting
        dd += f'<a href="/cr/glossary/t/">{text}</a>' if link else text
        before = text
    page = re.sub(r'(<dt id="r701.34g">701.34g</dt>\s*<dd>).*?(</dd>)', lambda m: m.group(1) + dd + m.group(2), page, flags=re.S)
    node = by_id(parse_wisdom_guild(page.encode(), "mix.html"))["cr:701.34g"]
    assert node.text == "".join(t for t, _ in pieces)
    terms = [r for r in node.refs if r.kind == REF_TERM]
    assert [r.target for r in terms] == [t for t, link in pieces if link]
    assert all(node.text[r.start:r.end] == r.target for r in terms)


def test_deeply_nested_markup_is_read_without_recursion():
    depth = 5000
    data = ("<html><body><p>MJMJ訳 20231117.0 版</p>" + "<span>" * depth + "<dl><dt>701.34</dt><dd><a>予示</a>する/Manifest"
            + "</dd></dl>" + "</span>" * depth + "</body></html>").encode()
    [node] = parse_wisdom_guild(data, "deep.html").nodes
    assert (node.id, node.text, node.refs[0].target) == ("cr:701.34", "予示する/Manifest", "予示")


def test_every_layout_is_detected_by_its_content():
    assert all(detect_kind("page.html", (FIXTURES / name).read_bytes()) == "wisdom-guild" for name in LAYOUTS)


def test_ingest_resolves_term_links_to_the_glossary_of_the_same_version(tmp_path):
    sources = [str(JPN_CR), str(SAMPLE), str(FIXTURES / "cr_r_601.html")]
    with Store.open(tmp_path) as store:
        report = ingest_sources(store, sources, index=False)
        assert report.failed == [] and report.stored == 3
        refs = {}
        for stored in store.refs("20231117.0", "ja"):
            if stored.ref.kind == REF_TERM and stored.source_key.id.startswith(("cr:701.34", "cr:601.2")):
                refs.setdefault((stored.source_key.id, stored.ref.target), set()).add(
                    stored.target_key.id if stored.target_key else None)
        expected = {
            ("cr:701.34", "予示"): "gl:予示",
            ("cr:701.34a", "裏向き"): "gl:裏向き",
            ("cr:701.34a", "戦場に出"): "gl:戦場に出る",  # a stem link: 戦場に出 + す
            ("cr:701.34a", "マナ・コスト"): "gl:マナ・コスト",
            ("cr:701.34b", "あなた"): "gl:あなた",
            ("cr:701.34b", "優先権"): "gl:優先権",
            ("cr:701.34b", "特別な処理"): "gl:特別な処理",
            ("cr:601.2", "唱え"): "gl:唱える",  # a stem link: 唱え + る
            ("cr:601.2f", "総コスト"): "gl:総コスト",
        }
        for key, target in expected.items():
            assert refs[key] == {target}, key
        node = store.node(NodeKey("20231117.0", "ja", "cr:701.34g"))
        [section_ref] = [r for r in store.refs_from(NodeKey("20231117.0", "ja", "cr:701.34g")) if r.ref.kind == REF_RULE]
        assert section_ref.target_key == NodeKey("20231117.0", "ja", "cr:708")
        assert node.text == seed_rules()["701.34g"]
        before = sorted(store.node_keys(), key=lambda k: k[0].id)
        before_refs = list(store.refs())
        again = ingest_sources(store, sources, index=False)
        assert (again.stored, again.unchanged, again.failed) == (0, 3, [])
        assert sorted(store.node_keys(), key=lambda k: k[0].id) == before
        assert list(store.refs()) == before_refs


@pytest.mark.slow
def test_real_urls_without_the_final_slash_and_pages_of_different_versions(httpserver, tmp_path):
    """/cr/r/100 and /cr/r/108/ are both section pages; a page synced at 20201120.0 beside pages at 20231117.0 keeps
    its own version and sync date."""
    from ingest.net.sites import PROFILES, Target

    page = (FIXTURES / "cr_r_601.html").read_text(encoding="utf-8")
    older = page.replace("MJMJ訳 20231117.0<br>版", "MJMJ訳 20201120.0<br>版").replace("2024/04/19", "2021/01/23")
    assert older != page
    httpserver.expect_request("/robots.txt").respond_with_data("User-agent: *\nAllow: /\n")
    httpserver.expect_request("/cr/r/601").respond_with_data(page, content_type="text/html; charset=utf-8")
    httpserver.expect_request("/old/cr/r/601/").respond_with_data(older, content_type="text/html; charset=utf-8")
    with Store.open(tmp_path / "kb") as store:
        report = ingest_sources(store, [httpserver.url_for("/cr/r/601"), httpserver.url_for("/old/cr/r/601/")], index=False)
        assert report.failed == []
        documents = sorted((d.version, d.sync_date) for d in store.documents() if d.kind == "wisdom-guild")
        assert documents == [("20201120.0", "2021-01-23"), ("20231117.0", "2024-04-19")]
        assert {v for v in store.versions("ja")} == {"20201120.0", "20231117.0"}
    base = "http://whisper.wisdom-guild.net/"
    body = b'<a href="/cr/r/100">100.</a> <a href="/cr/r/108/">108.</a> <a href="/cr/r/601.2f">601.2f</a>'
    found = PROFILES["wisdom-guild"].discover(Target(base + "cr/"), base + "cr/", body, base, None)
    assert [t.url for t in found] == [base + "cr/r/100", base + "cr/r/108/"]
