"""The site's navigation in its HTML: the header's menu and the footer's version line on every page, rule pages headed
by their name with levels (not actions) as breadcrumbs and previous/next links, a long page's own contents, readable
home facts, the glossary index in 五十音 first, and 更新履歴 items shown as their changes in context. The sample site
(data/) and, for what only the real rules have (English-only glossary terms, 205.3m), the bilingual site."""

from __future__ import annotations

import re
from pathlib import Path

import lxml.html
import pytest

from kb.site.changes import context_ops
from kb.site.pages import _nearest
from kb.versions.diff import inline_ops


@pytest.fixture(scope="module")
def site(data_site) -> Path:
    """The sample site (no broken link; read-only)."""
    return data_site


def page(site: Path, path: str) -> lxml.html.HtmlElement:
    return lxml.html.fromstring((site / path).read_bytes())


def find(doc, path: str) -> list:
    """XPath with ``.name`` for an element of class ``name``: ``//nav.pager//a``."""
    def has_class(m: re.Match) -> str:
        return f"{m[1]}[contains(concat(' ', normalize-space(@class), ' '), ' {m[2]} ')]"

    return doc.xpath(re.sub(r"(\w+|\*)\.([\w-]+)", has_class, path))


def text(el) -> str:
    return " ".join(el.text_content().split())


def test_every_page_has_the_menu_and_the_footer_says_the_version(site):
    pages = [p for p in site.rglob("*.html") if b'http-equiv="refresh"' not in p.read_bytes()]
    assert len(pages) >= 90
    for path in pages:
        doc = lxml.html.fromstring(path.read_bytes())
        menu = [text(a) for a in find(doc, "//header.site-header//ul.menu-panel//a")]
        assert menu[:3] == ["1. ゲームの考え方", "6. 呪文、能力、効果", "7. その他のルール"] and "用語集" in menu, path
        version = text(find(doc, "//footer.site-footer/p.version-line")[0])
        assert version == "総合ルール 2023年11月17日発効版・日本語訳は 2023年11月17日発効版の和訳", path
    assert len(page(site, "search.html").xpath("//input[@type='search']")) == 1  # the search page's box only


def test_rule_page_heading_crumbs_and_previous_next(site):
    doc = page(site, "cr/601.2f.html")
    assert text(doc.xpath("//h1")[0]) == "601.2f 呪文を唱えること"  # the name of the section it belongs to
    crumbs = find(doc, "//nav.crumbs")[0]
    assert [text(a) for a in crumbs.xpath("a")] == ["目次", "6. 呪文、能力、効果", "601. 呪文を唱えること", "601.2"]
    assert text(crumbs[-1]) == "601.2f" and crumbs[-1].tag == "span" and "文脈で読む" not in text(crumbs)
    assert find(doc, "//p.in-context/a")[0].get("href") == "../cr/601.html#601.2f"  # the section around it, one tap away

    def pager(path: str) -> tuple[str | None, str | None]:
        nav = find(page(site, path), "//nav.pager")[0]
        links = {a.get("rel"): a.get("href") for a in nav.xpath("a")}
        return links.get("prev"), links.get("next")

    assert pager("cr/601.2f.html") == ("../cr/601.2e.html", "../cr/601.2g.html")
    assert pager("cr/601.2.html") == ("../cr/601.1.html", "../cr/601.3.html")  # past its own subrules, which the page shows
    assert pager("cr/601.3.html") == ("../cr/601.2.html", "../cr/601.4.html")  # back to 601.2, not to its last subrule
    assert pager("cr/601.2i.html") == ("../cr/601.2h.html", "../cr/601.3.html")
    assert pager("cr/601.html") == ("../cr/100.html", "../cr/701.html")  # sections among sections
    assert pager("cr/1.html") == (None, "../cr/6.html")  # chapters among chapters


def test_nearest_rule_at_the_same_level_or_above():
    rules = [("601.1", 1), ("601.2", 1), ("601.2a", 2), ("601.2b", 2), ("601.3", 1), ("602.1", 1), ("602.1a", 2)]
    assert _nearest(rules) == {"601.2": "601.1", "601.2a": "601.2", "601.2b": "601.2a", "601.3": "601.2",
                               "602.1": "601.3", "602.1a": "602.1"}
    assert _nearest(rules[::-1]) == {"601.3": "602.1", "601.2b": "601.3", "601.2a": "601.2b",
                                     "601.2": "601.3", "601.1": "601.2"}


def test_long_pages_have_their_own_contents(site):
    section = page(site, "cr/601.html")
    items = find(section, "//nav.page-toc//li/a")
    ids = {el.get("id") for el in section.iter() if el.get("id")}
    assert [a.get("href") for a in items] == [f"../cr/601.html#601.{n}" for n in range(1, 8)]
    assert all(a.get("href").split("#")[1] in ids for a in items)  # each to a rule on the page
    assert "601.2 呪文を唱えるとは、" in text(find(section, "//nav.page-toc")[0])  # the number and its first words
    assert not find(page(site, "cr/100.html"), "//nav.page-toc")  # a short section has none
    article = page(site, "wiki/唱える.html")
    headings = [a.get("href") for a in find(article, "//nav.page-toc//a")]
    assert len(headings) >= 10 and "%E5%AE%9A%E7%BE%A9" in headings[0]  # #定義, the article's first heading
    assert find(article, "//nav.page-toc//li.toc-level-2")  # its subsections indented under their section


def test_home_says_what_each_date_means(site):
    facts = text(find(page(site, "index.html"), "//dl.facts")[0])
    assert "同期日" not in facts
    assert "2023年11月17日発効" in facts and "翻訳日（訳者の記した日付）：2023年11月18日" in facts
    assert "Wisdom Guild のルールビューアが和訳を最後に同期した日" in facts and "2024年4月19日" in facts
    bare = [m.group() for m in re.finditer(r"\d{8}\.\d", facts) if f"和訳 {m.group()} 版" not in facts]
    assert bare == []  # a version id only as the translation's own name for itself


def test_context_ops_show_a_one_word_edit_in_a_few_words():
    old = "All other creature types are one word long: " + ", ".join(f"Type{i}" for i in range(300)) + "."
    new = old.replace("Type150, ", "Type150, Sorcerer, ")
    ops = [[o.op, o.text] for o in inline_ops(old, new, "en")]
    shown = context_ops(ops, "en")
    assert ["insert", "Sorcerer, "] in shown and shown[0] == ["gap", ""] and shown[-1] == ["gap", ""]
    assert len("".join(t for _, t in shown)) < 120 < len(new)
    assert "Type150," in "".join(t for _, t in shown) and "Type151" in "".join(t for _, t in shown)
    ja_old = "呪文を唱えるとは、" * 20 + "その呪文をスタックに置くことである。" + "ここで終わる。" * 20
    ja_ops = [[o.op, o.text] for o in inline_ops(ja_old, ja_old.replace("置く", "移動する"), "ja")]
    ja_shown = context_ops(ja_ops, "ja")
    assert ["gap", ""] in ja_shown and len("".join(t for _, t in ja_shown)) < 60
    short = [["equal", "The spell "], ["delete", "is"], ["insert", "becomes"], ["equal", " cast."]]
    assert context_ops(short, "en") == short  # nothing to leave out


def test_glossary_index_in_gojuon_first(bilingual_site):
    doc = page(bilingual_site, "glossary/index.html")
    rows = [text(h) for h in doc.xpath("//h2")]
    kana = [r for r in rows if r in "あかさたなはまやらわ"]
    assert rows[:len(kana)] == kana and len(kana) >= 5 and rows[len(kana)] == "A"  # then A–Z
    jumps = find(doc, "//p.rows")
    assert [j.get("class") for j in jumps][:2] == ["rows rows-kana", "rows rows-az"]
    assert len(doc.xpath("//h2/following-sibling::ul[1]/li")) > 700


def test_change_page_shows_205_3m_in_context(bilingual_site):
    doc = page(bilingual_site, "changes/en-20251114-20260116.html")
    item = next(li for li in find(doc, "//ul.changes-changed/li") if text(find(li, "span.change-label")[0]) == "205.3m")
    shown, whole = find(item, "div.diff-text")[0], find(item, "details.whole/div.diff-text")[0]
    assert len(text(shown)) < 200 < 2000 < len(text(whole))  # the new type in a few words, the whole rule one tap away
    assert shown.xpath(".//ins") and find(shown, ".//span.gap")
    assert text(shown.xpath(".//ins")[0]) in text(whole)
