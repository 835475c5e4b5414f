"""Translations dated and paired as the real files are (issue 22, item 1): every row of the issue's table.

A translation claims its file name's date (else its title version's); its English original is the stored English
version nearest that claim within 7 days of the claim or of the translator line's date; it takes its original's
effective date, keeps the translator line's date apart (翻訳日) and never outranks its original."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import DATA, FIXTURES

from ingest.cr_text import parse_cr_text
from kb.pipeline import ingest_sources
from kb.store import Store
from kb.versions.catalog import list_versions
from kb.versions.current import CURRENT, current_view

JA = DATA / "JPN_CR_20231117_0.txt"
WG_PAGE = DATA / "wisdom-guild" / "cr_r_701.34.html"
RULES_PAGE = FIXTURES / "cr_html" / "mtg_jp_rules_doc.html"
MONTHS = "January February March April May June July August September October November December".split()


def japanese(folder: Path, name: str, title: str, translated: str | None, *, old_title: str | None = None) -> Path:
    """The sample under a real header: file ``name``, title ``和訳 <title> 版`` (or the whole ``old_title``), the
    translator line dated ``translated`` (None: an old header without a date in it)."""
    text = JA.read_bytes().decode("utf-8-sig")
    text = text.replace("(和訳 20231117.0 版)", old_title or f"(和訳 {title} 版)")
    line = next(x for x in text.splitlines() if x.endswith("に翻訳したものです。"))
    old_line = (" このファイルは、マジック:ザ・ギャザリングのComprehensive Rulesを、Japan Netrep *ぱお*/米村 薫 "
                "以下CR翻訳グループが翻訳したものです。")  # the old translator line, without a date
    text = text.replace(line, line.replace("2023-11-18", translated) if translated else old_line)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def english(folder: Path, name: str, effective: str, *, period: bool = True) -> Path:
    """A small English CR whose text states ``effective`` (ISO) as ``effective as of July 13, 2013.``."""
    year, month, day = map(int, effective.split("-"))
    path = folder / name
    path.write_text("Magic: The Gathering Comprehensive Rules\n\nThese rules are effective as of "
                    f"{MONTHS[month - 1]} {day}, {year}{'.' if period else ''}\n\n1. Game Concepts\n\n100. General\n\n"
                    "100.1. These Magic rules apply to any Magic game.\n\n6. Spells, Abilities, and Effects\n\n"
                    "601. Casting Spells\n\n601.2. To cast a spell is to take it.\n\n601.2f The player determines the "
                    "total cost of the spell.\n\nGlossary\n\nCast\nTo take a spell and put it on the stack.\n\nCredits\n\n"
                    "Nobody\n", encoding="utf-8")
    return path


def versions_of(folder: Path, *sources: Path) -> dict[tuple[str, str], object]:
    with Store.open(folder / "kb") as store:
        assert not ingest_sources(store, [str(s) for s in sources]).failed
        return {(v.version, v.lang): v for v in list_versions(store)}


@pytest.mark.parametrize(("name", "title", "translated", "claim"), [
    ("JPN_CR_20230901_0.txt", "20230901.0", "2023-08-30", "2023-09-01"),
    ("JPN_CR_20231117_0.txt", "20231117.0", "2023-11-18", "2023-11-17"),
    ("JPN_CR_20250725_0.txt", "20250726.0", "2025-07-25", "2025-07-25"),
    ("JPN_CR_20250919_1.txt", "20250919.1", "2025-09-19", "2025-09-19"),
    ("JPN_CR_20190125_3.txt", "20190125.3", "2019-02-25", "2019-01-25"),
    ("JPN_CR_20210922_1.txt", "20210922.1", "2021-09-26", "2021-09-22"),
])
def test_a_translation_claims_its_file_names_date_and_keeps_its_translation_date(tmp_path, name, title, translated, claim):
    doc = parse_cr_text(japanese(tmp_path, name, title, translated).read_bytes(), str(tmp_path / name))
    assert (doc.version, doc.effective_date, doc.translated_date) == (title, claim, translated)


def test_without_a_dated_file_name_the_title_is_the_claim(tmp_path):
    doc = parse_cr_text(japanese(tmp_path, "rules.txt", "20250726.0", "2025-07-25").read_bytes(), "rules.txt")
    assert (doc.effective_date, doc.translated_date) == ("2025-07-26", "2025-07-25")


@pytest.mark.parametrize(("name", "title", "translated", "english_name", "english_date"), [
    # (和訳 20230901.0), translated 2023-08-30: the English of 2023-09-01, not that of 2023-06-16 before it
    ("JPN_CR_20230901_0.txt", "20230901.0", "2023-08-30", "MagicCompRules 20230901.txt", "2023-09-01"),
    # (和訳 20231117.0), translated 2023-11-18 (a day after its original)
    ("JPN_CR_20231117_0.txt", "20231117.0", "2023-11-18", "MagicCompRules 20231117.txt", "2023-11-17"),
    # (和訳 20250726.0) in JPN_CR_20250725_0.txt, translated 2025-07-25
    ("JPN_CR_20250725_0.txt", "20250726.0", "2025-07-25", "MagicCompRules 20250725.txt", "2025-07-25"),
    ("JPN_CR_20250919_1.txt", "20250919.1", "2025-09-19", "MagicCompRules 20250919.txt", "2025-09-19"),
    ("JPN_CR_20251114_0.txt", "20251114.0", "2025-11-14", "MagicCompRules-2025-11-14.txt", "2025-11-14"),
    ("JPN_CR_20260116_0.txt", "20260116.0", "2026-01-16", "MagicCompRules 20260116.txt", "2026-01-16"),
    # (和訳 20190125.3), a revision translated a month later (2019-02-25)
    ("JPN_CR_20190125_3.txt", "20190125.3", "2019-02-25", "MagicCompRules 20190125.txt", "2019-01-25"),
    # (和訳 20210922.1), translated 2021-09-26: the English of 2021-09-24
    ("JPN_CR_20210922_1.txt", "20210922.1", "2021-09-26", "MagicCompRules 20210924.txt", "2021-09-24"),
])
def test_each_real_translation_pairs_with_its_english_original(tmp_path, name, title, translated, english_name,
                                                              english_date):
    older = english(tmp_path, "MagicCompRules 20230616.txt", "2023-06-16")
    found = versions_of(tmp_path, japanese(tmp_path, name, title, translated), older,
                        english(tmp_path, english_name, english_date))
    ja = found[(title, "ja")]
    assert (ja.original, ja.effective_date, ja.translated_date) == (english_date.replace("-", ""), english_date,
                                                                    translated)


def test_no_original_in_the_window_is_no_original_never_an_older_english(tmp_path):
    """JPN_CR_20230901_0 with only the English of 2023-06-16 stored: no original, dated by its claim."""
    found = versions_of(tmp_path, japanese(tmp_path, "JPN_CR_20230901_0.txt", "20230901.0", "2023-08-30"),
                        english(tmp_path, "MagicCompRules 20230616.txt", "2023-06-16"))
    ja = found[("20230901.0", "ja")]
    assert (ja.original, ja.effective_date, ja.claim_date) == (None, "2023-09-01", "2023-09-01")


def test_the_mtg_jp_rules_document_pairs_with_the_bloomburrow_rules(tmp_path):
    """和訳 20240730.0, translated 2024-07-30 by 日本マジックジャッジルール文書翻訳チーム: the English file dated 20240802."""
    page = tmp_path / "rules-doc.html"  # as saved from https://mtg-jp.com/gameplay/rules/docs/…/: no dated file name
    page.write_bytes(RULES_PAGE.read_bytes())
    assert "日本マジックジャッジルール文書翻訳チーム が 2024-07-30 に翻訳".encode() in page.read_bytes()
    found = versions_of(tmp_path, page, english(tmp_path, "MagicCompRules 20240802.txt", "2024-08-02"))
    ja = found[("20240730.0", "ja")]
    assert (ja.claim_date, ja.translated_date, ja.original, ja.effective_date) == (
        "2024-07-30", "2024-07-30", "20240802", "2024-08-02")


@pytest.mark.parametrize(("old_title", "version", "english_name", "stated", "release"), [
    ("(和訳 20160408.0-rb 版)", "20160408.0", "MagicCompRules_20160408.txt", "2016-04-08", "20160408"),
    # the 2013-07-11 English file says "effective as of July 13, 2013"
    ("(和訳 20130713.0 版)", "20130713.0", "MagicCompRules_20130711.txt", "2013-07-13", "20130711"),
])
def test_old_titles_without_a_date_in_the_line(tmp_path, old_title, version, english_name, stated, release):
    name = f"JPN_CR_{version.replace('.', '_')}.txt"
    found = versions_of(tmp_path, japanese(tmp_path, name, version, None, old_title=old_title),
                        english(tmp_path, english_name, stated))
    ja, en = found[(version, "ja")], found[(stated.replace("-", ""), "en")]
    assert (ja.translated_date, ja.original, ja.effective_date) == (None, en.version, stated)
    assert (en.effective_date, en.release) == (stated, release)


def test_english_takes_the_date_its_text_states_and_keeps_its_file_name_as_release(tmp_path):
    """MagicCompRules-2024-02-06.txt says 'effective as of February 2, 2024' (no final period)."""
    found = versions_of(tmp_path, english(tmp_path, "MagicCompRules-2024-02-06.txt", "2024-02-02", period=False))
    en = found[("20240202", "en")]
    assert (en.effective_date, en.release) == ("2024-02-02", "20240206")


def test_a_translation_never_outranks_its_original(tmp_path):
    """JPN_CR_20231117_0 (translated 2023-11-18) beside the English 2023-11-17: the English is shown, the Japanese
    beside it, current — not a '2023-11-18 発効版' of Japanese alone."""
    with Store.open(tmp_path / "kb") as store:
        ingest_sources(store, [str(japanese(tmp_path, "JPN_CR_20231117_0.txt", "20231117.0", "2023-11-18")),
                               str(english(tmp_path, "MagicCompRules 20231117.txt", "2023-11-17"))])
        view = current_view(store)
    assert view.shown is not None and (view.shown.lang, view.shown.effective_date) == ("en", "2023-11-17")
    assert view.english is view.shown and view.original is not None and view.original.version == "20231117"
    assert view.ja["cr:601.2f"].status == CURRENT


def test_a_versions_dates_do_not_depend_on_the_other_sources_of_it(tmp_path):
    """A Wisdom Guild page of 和訳 20250726.0 (whose title claims 2025-07-26) beside JPN_CR_20250725_0.txt changes
    no date of the version."""
    cr = japanese(tmp_path, "JPN_CR_20250725_0.txt", "20250726.0", "2025-07-25")
    page = tmp_path / "cr_r_701.34.html"
    page.write_bytes(WG_PAGE.read_bytes().replace(b"20231117.0", b"20250726.0"))
    alone = versions_of(tmp_path / "a", cr)[("20250726.0", "ja")]
    both = versions_of(tmp_path / "b", cr, page)[("20250726.0", "ja")]
    assert (both.effective_date, both.claim_date, both.translated_date) == (
        alone.effective_date, alone.claim_date, alone.translated_date) == ("2025-07-25", "2025-07-25", "2025-07-25")


def test_the_site_and_kb_versions_show_both_dates(tmp_path):
    """The Japanese beside the English it translates, with the effective date and the 翻訳日 both visible."""
    import lxml.html as lxml_html
    from click.testing import CliRunner

    from kb.cli import main
    from kb.site import build_site

    with Store.open(tmp_path / "kb") as store:
        ingest_sources(store, [str(japanese(tmp_path, "JPN_CR_20231117_0.txt", "20231117.0", "2023-11-18")),
                               str(english(tmp_path, "MagicCompRules 20231117.txt", "2023-11-17"))])
        build_site(store, tmp_path / "site")
    facts = lxml_html.fromstring((tmp_path / "site" / "index.html").read_bytes()).find_class("facts")[0].text_content()
    assert "2023年11月17日発効" in facts and "翻訳日（訳者の記した日付）：2023年11月18日" in facts
    assert "2023年11月18日発効" not in facts
    rule = lxml_html.fromstring((tmp_path / "site" / "cr" / "601.html").read_bytes()).get_element_by_id("601.2f")
    texts = {div.get("lang"): div.text_content() for div in rule.xpath('.//div[starts-with(@class, "text ")]')}
    assert "総コスト" in texts["ja"] and "total cost" in texts["en"]
    listed = CliRunner().invoke(main, ["--kb-dir", str(tmp_path / "kb"), "versions"])
    assert listed.exit_code == 0, listed.output
    ja_line = next(line for line in listed.output.splitlines() if line.startswith("20231117.0"))
    assert ja_line.split()[:3] == ["20231117.0", "ja", "2023-11-17"]
    assert "翻訳日 2023-11-18" in ja_line and "original 20231117" in ja_line


def test_an_english_version_is_named_by_its_release_too(tmp_path):
    from kb.versions.catalog import resolve_version

    with Store.open(tmp_path / "kb") as store:
        ingest_sources(store, [str(english(tmp_path, "MagicCompRules-2024-02-06.txt", "2024-02-02", period=False))])
        assert resolve_version(store, "20240206").version == resolve_version(store, "2024-02-02").version == "20240202"


def test_a_schema_6_store_dates_its_translations_anew_at_their_next_ingest(tmp_path):
    """Schema 6 stored the translator line's date as the effective date; the migration makes the next ingest of the
    same file read it again."""
    import sqlite3

    from kb.store import DB_NAME

    cr = japanese(tmp_path, "JPN_CR_20231117_0.txt", "20231117.0", "2023-11-18")
    with Store.open(tmp_path / "kb") as store:
        ingest_sources(store, [str(cr)])
    with sqlite3.connect(tmp_path / "kb" / DB_NAME) as conn:  # what schema 6 left
        conn.execute("ALTER TABLE documents DROP COLUMN translated_date")
        conn.execute("UPDATE documents SET effective_date='2023-11-18' WHERE lang='ja'")
        conn.execute("UPDATE meta SET value='6' WHERE key='schema'")
    with Store.open(tmp_path / "kb") as store:
        report = ingest_sources(store, [str(cr)])
        assert (report.stored, report.unchanged) == (1, 0)
        ja = next(v for v in list_versions(store) if v.lang == "ja")
    assert (ja.effective_date, ja.translated_date) == ("2023-11-17", "2023-11-18")
