"""What the real Japanese sources give on the site and in search: a translation dated by the rules it translates
stands beside its English original, chapter references are links, ruby readings order the glossary and find terms."""

from __future__ import annotations

import lxml.html as lxml_html
import pytest
from conftest import DATA, FIXTURES

from kb.pipeline import ingest_sources
from kb.search import search
from kb.site import build_site
from kb.store import Store

JA = DATA / "JPN_CR_20231117_0.txt"
RULES_PAGE = FIXTURES / "cr_html" / "mtg_jp_rules_doc.html"
RUBY = FIXTURES / "cr_html" / "JPN_CR_20250725_0.rb.html"


@pytest.mark.slow
def test_a_translation_is_shown_beside_the_english_rules_it_translates(tmp_path):
    """JPN_CR_20250725_0.txt is 和訳 20250726.0 版, translated 2025-07-25: its original is the CR of 2025-07-25."""
    japanese = tmp_path / "JPN_CR_20250725_0.txt"
    japanese.write_text(JA.read_text(encoding="utf-8-sig").replace("和訳 20231117.0 版", "和訳 20250726.0 版")
                        .replace("2023-11-18 に翻訳", "2025-07-25 に翻訳"), encoding="utf-8")
    english = tmp_path / "MagicCompRules 20250725.txt"
    english.write_text("Magic: The Gathering Comprehensive Rules\n\nThese rules are effective as of July 25, 2025.\n\n"
                       "1. Game Concepts\n\n100. General\n\n100.1. These Magic rules apply to any Magic game.\n\n"
                       "6. Spells, Abilities, and Effects\n\n601. Casting Spells\n\n601.2. To cast a spell is to take it.\n\n"
                       "601.2f The player determines the total cost of the spell.\n\nGlossary\n\nCast\nTo take a spell and "
                       "put it on the stack.\n\nCredits\n\nNobody\n", encoding="utf-8")
    with Store.open(tmp_path / "kb") as store:
        assert not ingest_sources(store, [str(japanese), str(english)], index=False).failed
        assert {(d.version, d.effective_date) for d in store.documents() if d.kind == "cr-text"} == {
            ("20250726.0", "2025-07-25"), ("20250725", "2025-07-25")}
        build_site(store, tmp_path / "site")
    rule = lxml_html.fromstring((tmp_path / "site" / "cr" / "601.html").read_bytes()).get_element_by_id("601.2f")
    texts = {div.get("lang"): div.text_content() for div in rule.xpath('.//div[starts-with(@class, "text ")]')}
    assert "総コスト" in texts["ja"] and "total cost" in texts["en"]


def test_chapter_references_are_links_to_the_chapter(tmp_path):
    with Store.open(tmp_path / "kb") as store:
        ingest_sources(store, [str(RULES_PAGE)], index=False)
        build_site(store, tmp_path / "site")
    section = lxml_html.fromstring((tmp_path / "site" / "cr" / "701.html").read_bytes())
    links = {a.text_content(): a.get("href") for a in section.get_element_by_id("701.34a").iter("a")}
    assert links["7"] == "../cr/7.html"  # 詳細は section 7 を参照
    section = lxml_html.fromstring((tmp_path / "site" / "cr" / "100.html").read_bytes())
    links = {a.text_content(): a.get("href") for a in section.get_element_by_id("100.1b").iter("a")}
    assert links["8"] == "../cr/8.html"  # rule 8〔多人数戦ルール〕参照
    assert (tmp_path / "site" / "cr" / "7.html").is_file() and (tmp_path / "site" / "cr" / "8.html").is_file()


def _glossary_rows(site) -> dict[str, list[str]]:
    page = lxml_html.fromstring((site / "glossary" / "index.html").read_bytes())
    return {h2.text_content(): [a.text_content() for a in h2.getnext().iter("a")] for h2 in page.iter("h2")}


def test_ruby_readings_order_the_glossary_and_find_terms(tmp_path):
    read_otherwise = tmp_path / "JPN_CR_20250725_0.rb.html"  # 戦場 read いくさば by its ruby, not Sudachi's せんじょう
    read_otherwise.write_text(RUBY.read_text(encoding="utf-8").replace(
        "<ruby>戦場<rt>せんじょう</rt></ruby>/Battlefield", "<ruby>戦場<rt>いくさば</rt></ruby>/Battlefield"), encoding="utf-8")
    for source, rows in ((RUBY, {"あ": ["アーティファクト"], "さ": ["戦場"], "た": ["唱える"], "や": ["予示"]}),
                         (read_otherwise, {"あ": ["アーティファクト", "戦場"], "た": ["唱える"], "や": ["予示"]})):
        kb_dir, site = tmp_path / source.parent.name / "kb", tmp_path / source.parent.name / "site"
        with Store.open(kb_dir) as store:
            assert not ingest_sources(store, [str(source)]).failed
            build_site(store, site)
            hits = search(store, "よじ")
        assert _glossary_rows(site) == rows
        assert [(h.id, h.match) for h in hits[:2]] == [("cr:701.34", "term"), ("gl:予示", "term")]  # rule, then term
