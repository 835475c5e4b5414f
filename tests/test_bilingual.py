"""One current, bilingual knowledge base (issue 11): the bundled sample (the 2023-11-17 Japanese excerpt) plus the
three real English CRs. The site shows the 2026-01-16 rules, the Japanese text paired through renumbering (701.34
予示 → 701.40), each rule's ja_status; kb export carries it; kb history shows both languages."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from conftest import DATA
from lxml import html as lxml_html

from kb.cli import main
from kb.search import Searcher, analysis
from kb.search.index import recorded_user_dictionary
from kb.store import NodeKey, Store
from kb.versions.current import current_view


def _rule(site: Path, page: str, number: str):
    return lxml_html.fromstring((site / page).read_bytes()).get_element_by_id(number)


def test_current_view_pairs_the_translation_through_renumbering(bilingual_kb):
    with Store.open(bilingual_kb, create=False) as store:
        view = current_view(store)
        assert (view.shown.version, view.english.version) == ("20260116", "20260116")
        assert (view.translation.version, view.original.version) == ("20231117.0", "20231117")
        manifest = view.ja["cr:701.40"]
        assert manifest.key == NodeKey("20231117.0", "ja", "cr:701.34") and manifest.status == "current"
        # 2025 inserted a new 701.40d: the Japanese 701.34d is now 701.40e
        assert view.ja["cr:701.40e"].key.id == "cr:701.34d"
        worded = view.ja["cr:701.40a"]  # the English gained "for" in "a manifested permanent for as long as"
        assert worded.status == "outdated" and ("insert", "for ") in [(o.op, o.text) for o in worded.ops]
        assert view.status("cr:701.34") == "missing"  # Proliferate now: never translated in the excerpt
        assert view.status("cr:702.2") == "missing"
        assert view.ja["gl:Cast"].key.id == "gl:唱える"
        assert view.current_ids[NodeKey("20231117.0", "ja", "cr:701.34")] == "cr:701.40"
        statuses = {view.status(i) for i in ("cr:601.2f", "cr:601.2a", "cr:702.2")}
        assert statuses == {"current", "outdated", "missing"}


def test_site_shows_the_newest_rules_with_japanese_where_translated(bilingual_site):
    manifest = _rule(bilingual_site, "cr/701.html", "701.40")
    assert manifest.get("data-ja-status") == "current"
    texts = {div.get("lang"): div.text_content() for div in manifest.xpath('.//div[starts-with(@class, "text ")]')}
    assert "予示する" in texts["ja"] and "Manifest" in texts["en"]
    assert "701.34" in manifest.findtext('.//p[@class="ja-state"]')  # the number it has in the translation
    outdated = _rule(bilingual_site, "cr/701.html", "701.40a")
    assert outdated.get("data-ja-status") == "outdated"
    assert "旧版" in outdated.xpath('.//p[contains(@class, "ja-state")]')[0].text_content()
    assert [i.text for i in outdated.xpath('.//details[@class="ja-changes"]//ins')] == ["for "]
    proliferate = _rule(bilingual_site, "cr/701.html", "701.34")
    assert proliferate.get("data-ja-status") == "missing" and "未翻訳" in proliferate.text_content()
    assert "Proliferate" in proliferate.text_content() and not proliferate.xpath('.//div[@lang="ja"]')
    blight = _rule(bilingual_site, "cr/701.html", "701.68")  # new in 2026, exists only in English
    assert blight.get("data-ja-status") == "missing"
    statuses = {s.get("data-ja-status") for s in lxml_html.fromstring((bilingual_site / "cr" / "601.html").read_bytes())
                .xpath('//section[@data-ja-status]')}
    assert statuses == {"current", "outdated", "missing"}
    term = lxml_html.fromstring((bilingual_site / "glossary" / "予示.html").read_bytes())
    assert term.xpath('//article[@data-ja-status="outdated"]') and "Manifest" in term.text_content()


def test_japanese_references_follow_the_renumbering(bilingual_site):
    """The 2023 Japanese 701.34g cites rule 708; its 701.34 citations in the glossary lead to 701.40 today."""
    term = lxml_html.fromstring((bilingual_site / "glossary" / "予示.html").read_bytes())
    ja_links = [a.get("href") for a in term.xpath('//div[@lang="ja"]//a')]
    assert any(h.endswith("cr/701.40.html") or h.endswith("cr/701.html#701.40") for h in ja_links), ja_links


def test_home_names_the_version_shown_and_the_translation(bilingual_site):
    home = lxml_html.fromstring((bilingual_site / "index.html").read_bytes())
    facts = home.xpath('//dl[@class="facts"]')[0].text_content()
    assert "2026年1月16日発効" in facts  # dates said as dates, each with what it means (no bare version ids)
    assert "和訳 20231117.0 版" in facts and "2023年11月17日発効版の和訳" in facts and "古い版" in facts
    counts = home.xpath('//dd[@class="ja-counts"]')[0].text_content()
    assert "未翻訳" in counts


def test_export_carries_ja_status(bilingual_kb, tmp_path):
    out = tmp_path / "kb.jsonl"
    result = CliRunner().invoke(main, ["--kb-dir", str(bilingual_kb), "export", "--format", "jsonl", "-o", str(out)])
    assert result.exit_code == 0, result.output
    records = {(r["version"], r["lang"], r["id"]): r for r in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    manifest = records[("20260116", "en", "cr:701.40")]
    assert manifest["ja_status"] == "current" and manifest["ja"] == {"id": "cr:701.34", "version": "20231117.0", "lang": "ja"}
    assert records[("20260116", "en", "cr:701.40a")]["ja_status"] == "outdated"
    assert records[("20260116", "en", "cr:701.34")]["ja_status"] == "missing"
    japanese = records[("20231117.0", "ja", "cr:701.34")]
    assert japanese["ja_status"] == "current" and japanese["current"] == "cr:701.40"
    assert "ja_status" not in records[("20231117", "en", "cr:701.34")]  # older English: not shown


def test_history_in_both_languages(bilingual_kb):
    kb = ["--kb-dir", str(bilingual_kb)]
    runner = CliRunner()
    out = runner.invoke(main, [*kb, "history", "701.34", "--version", "20231117"]).output
    english, japanese = out.split("Japanese:")
    assert "701.40       renumbered from 701.34" in english and "予示する/Manifest" in japanese
    assert "shown with 701.40 of 20260116 (translation current)" in japanese
    plain = runner.invoke(main, [*kb, "history", "701.34"]).output  # Proliferate today, 予示 in the translation
    assert "Proliferate" in plain and "予示する/Manifest" in plain
    by_date = runner.invoke(main, [*kb, "history", "701.34", "--version", "2023-11-17", "--json"])
    data = json.loads(by_date.output)
    assert data["lang"] == "ja" and [e["id"] for e in data["entries"]] == ["cr:701.34"]  # a date names both
    english = data["other_languages"][0]
    assert english["lang"] == "en" and [e["id"] for e in english["entries"]] == ["cr:701.34", "cr:701.40", "cr:701.40"]


def test_history_version_by_date_digits_with_only_the_translation(tmp_path):
    kb = ["--kb-dir", str(tmp_path / "kb")]
    runner = CliRunner()
    assert runner.invoke(main, [*kb, "ingest", "--quiet", str(DATA)]).exit_code == 0
    for version in ("20231117", "20231117.0", "2023-11-17"):
        result = runner.invoke(main, [*kb, "history", "701.34", "--version", version])
        assert result.exit_code == 0, result.output
        assert "予示する/Manifest" in result.output
    wrong = runner.invoke(main, [*kb, "history", "701.34", "--version", "20250101"])
    assert wrong.exit_code == 1 and "known versions: 20231117.0" in wrong.output


def test_search_reaches_english_rules_from_japanese_names(bilingual_kb):
    with Store.open(bilingual_kb, create=False) as store, Searcher(store) as searcher:
        manifest = searcher.search("予示")
        assert (manifest[0].lang, manifest[0].id, manifest[0].url) == ("ja", "cr:701.34", "cr/701.html#701.40")
        assert manifest[0].shown_as == "701.40"
        assert ("en", "cr:701.40") in [(h.lang, h.id) for h in manifest]
        cast = searcher.search("lang:en 唱える")
        assert (cast[0].lang, cast[0].id, cast[0].version) == ("en", "cr:601", "20260116")
        deathtouch = searcher.search("lang:en 接死")  # the MTG Wiki title 接死/Deathtouch
        assert deathtouch[0].id == "cr:702.2" and "Deathtouch" in [h.title for h in deathtouch]
        by_reading = searcher.search("よじ")  # 予示 is read よじ
        assert by_reading[0].url == "cr/701.html#701.40"
        card = searcher.search("lang:en ドライアドの東屋")  # a card's English name in English rules
        assert card and all("Dryad Arbor" in h.snippet for h in card[:3])


def test_every_search_url_is_a_page_of_the_site(bilingual_kb, bilingual_site):
    queries = ["予示", "lang:en 唱える", "接死", "601.2a-d", "version:20231117 601.2f", "version:20251114 manifest",
               "version:20231117 Manifest", "kind:glossary マナ・コスト", "唱えた", "ドライアドの東屋"]
    with Store.open(bilingual_kb, create=False) as store, Searcher(store) as searcher:
        urls = {h.url for q in queries for h in searcher.search(q, limit=20)}
    assert any(u.startswith("v/20231117/") for u in urls) and any(u.startswith("cr/") for u in urls)
    missing = []
    for url in sorted(urls):
        path, _, anchor = url.partition("#")
        page = bilingual_site / path
        if not page.is_file() or anchor and not lxml_html.fromstring(page.read_bytes()).xpath(f'//*[@id="{anchor}"]'):
            missing.append(url)
    assert missing == [] and len(urls) > 30


def test_glossary_terms_and_wiki_titles_are_single_words(bilingual_kb):
    with Store.open(bilingual_kb, create=False) as store, Searcher(store) as searcher:
        digest = recorded_user_dictionary(store)
        assert digest and (bilingual_kb / "userdict" / f"{digest}.dic").is_file()
        splitter = searcher.splitter  # the index's dictionary
        assert splitter.dictionary_id == digest
        terms = analysis.index_terms(splitter, "接死を持つクリーチャー")
        assert "接死" in terms and "死" not in terms
        assert "起因" in analysis.index_terms(splitter, "状況起因処理")  # a user word's pieces still find it
        assert analysis.query_terms(splitter, "状況起因処理") == ["状況起因処理"]
        assert not [h for h in searcher.search("死", limit=50) if h.id == "wiki:接死"]
        assert searcher.search("接死")[0].id in ("cr:702.2", "wiki:接死")
