"""The registry of source kinds (ingest/kinds.py) and the real sources it lets in: detection by content (an MTG Wiki
page linking to Wisdom Guild stays a wiki page; an HTML rules document is the CR wherever it comes from), forced
kinds that hold no rules fail naming the file, the CLI's choices come from the registry, the store knows kinds only
as data; the official rules page through kb ingest (file, URL), kb fetch mtg-jp and kb update; kb fetch mjmj."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner
from conftest import DATA, FIXTURES, REPO

from ingest.kinds import FETCH_SITES, KINDS, SOURCE_KIND_NAMES, authority, detect_kind, kinds_of_site
from ingest.net.fetch import Politeness, crawl
from ingest.net.sites import PROFILES
from kb.cli import main
from kb.cli.fetch import fetch
from kb.errors import KbError
from kb.pipeline import ingest_from_cache, ingest_sources
from kb.store import Store
from kb.update import run_update

RULES_PAGE = FIXTURES / "cr_html" / "mtg_jp_rules_doc.html"
RUBY = FIXTURES / "cr_html" / "JPN_CR_20250725_0.rb.html"
WIKI_PAGE = FIXTURES / "mtgwiki" / "cast_modern.html"
WG_PAGE = FIXTURES / "wisdom_guild" / "cr_r_601.html"
NOTES = DATA / "release-notes" / "zendikar-rising.html"
FAST = Politeness(delay=0)


def wiki_page_linking_to_wisdom_guild() -> bytes:
    page = WIKI_PAGE.read_bytes()
    link = '<p>総合ルールは<a href="http://whisper.wisdom-guild.net/cr/r/601/">総合ルールビューア</a>で読める。</p>'.encode()
    marker = b'<div id="mw-content-text"'
    assert marker in page and b"wisdom-guild" not in page.lower()
    return page.replace(marker, link + marker, 1)


def test_each_kind_is_declared_once_and_the_cli_offers_the_registry():
    assert len(set(SOURCE_KIND_NAMES)) == len(KINDS) == 4
    ingest_kind = next(p for p in main.commands["ingest"].params if p.name == "kind")
    assert tuple(ingest_kind.type.choices) == SOURCE_KIND_NAMES
    site = next(p for p in fetch.params if p.name == "site")
    assert tuple(site.type.choices) == FETCH_SITES == tuple(sorted(PROFILES))  # every fetch profile feeds a kind
    assert kinds_of_site("mtg-jp") == ("cr-text", "release-notes") and kinds_of_site("mjmj") == ("cr-text",)


def test_the_store_knows_kinds_only_as_data():
    loaded = subprocess.run([sys.executable, "-c", "import sys, kb.store; print(sorted(m for m in sys.modules"
                             " if m.split('.')[0] == 'ingest'))"], capture_output=True, text=True, cwd=REPO, check=True)
    assert loaded.stdout.strip() == "[]"
    ranks = authority()
    assert ranks["cr-text"] > ranks["wisdom-guild"] > ranks["mtgwiki"]


def test_a_wiki_page_that_links_to_wisdom_guild_stays_a_wiki_page(tmp_path):
    page = wiki_page_linking_to_wisdom_guild()
    assert detect_kind("saved/cast.html", page) == "mtgwiki"
    assert detect_kind("http://mtgwiki.com/wiki/唱える", page) == "mtgwiki"
    saved = tmp_path / "wisdom-guild-and-wiki"  # a saved folder of both sites
    saved.mkdir()
    (saved / "cast.html").write_bytes(page)
    (saved / "cr_r_601.html").write_bytes(WG_PAGE.read_bytes())
    with Store.open(tmp_path / "kb") as store:
        report = ingest_sources(store, [str(saved)], index=False)
        assert report.failed == []
        assert {d.kind for d in store.documents()} - {"cards"} == {"mtgwiki", "wisdom-guild"}  # cards: kb.link.graph
        assert [n.title for n in store.nodes(kinds=["article"])] == ["唱える"]


@pytest.mark.parametrize("source", ["page.html", "saved/mtgwiki/page.html", "whisper.wisdom-guild.net/x.html",
                                    "https://mtg-jp.com/gameplay/rules/docs/1234567/"])
def test_an_html_rules_document_is_the_cr_kind_wherever_it_comes_from(source):
    assert detect_kind(source, RULES_PAGE.read_bytes()) == "cr-text"
    assert detect_kind(source, RUBY.read_bytes()) == "cr-text"
    mislabelled = RULES_PAGE.read_text(encoding="utf-8").encode("cp932")  # CP932 bytes under <meta charset="utf-8">
    assert detect_kind(source, mislabelled) == "cr-text"
    linking = RULES_PAGE.read_bytes().replace(b"</nav>", b'<a href="http://whisper.wisdom-guild.net/cr/">viewer</a></nav>')
    assert detect_kind(source, linking) == "cr-text"  # a link to the rules viewer does not make it the viewer


def test_other_sources_are_still_told_apart():
    assert detect_kind("cr_r_601.html", WG_PAGE.read_bytes()) == "wisdom-guild"
    assert detect_kind("zendikar-rising.html", NOTES.read_bytes()) == "release-notes"
    assert detect_kind("JPN_CR_20231117_0.txt", (DATA / "JPN_CR_20231117_0.txt").read_bytes()) == "cr-text"
    with pytest.raises(KbError, match=r"^page\.html: not recognised as wisdom-guild"):
        detect_kind("page.html", RULES_PAGE.read_bytes(), ("wisdom-guild",))


def test_a_forced_kind_that_yields_no_rules_is_an_error_naming_the_file(tmp_path):
    page = tmp_path / "cast.html"
    page.write_bytes(WIKI_PAGE.read_bytes())
    rules_doc = tmp_path / "rules.html"
    rules_doc.write_bytes(RULES_PAGE.read_bytes())
    runner = CliRunner()
    as_cr = runner.invoke(main, ["--kb-dir", str(tmp_path / "kb"), "ingest", "-q", "--kind", "cr-text", str(page)])
    assert as_cr.exit_code == 1 and f"error: {page}:" in as_cr.output and "nodes: none" in as_cr.output
    as_wg = runner.invoke(main, ["--kb-dir", str(tmp_path / "kb"), "ingest", "-q", "--kind", "wisdom-guild", str(rules_doc)])
    assert as_wg.exit_code == 1 and f"error: {rules_doc}:" in as_wg.output


def test_kb_ingest_reads_the_official_rules_page(tmp_path):
    saved = tmp_path / "docs.html"
    saved.write_bytes(RULES_PAGE.read_bytes())
    runner = CliRunner()
    result = runner.invoke(main, ["--kb-dir", str(tmp_path / "kb"), "ingest", "-q", str(saved)])
    assert result.exit_code == 0, result.output
    assert "nodes: chapter 4, glossary 3, rule 5, section 4, subrule 5" in result.output
    exported = runner.invoke(main, ["--kb-dir", str(tmp_path / "kb"), "export", "--format", "json"])
    records = {r["id"]: r for r in json.loads(exported.output)}
    assert records["cr:601.2a"]["version"] == "20240730.0" and records["cr:601.2a"]["source"] == str(saved)
    assert [r["node"]["id"] for r in records["cr:701.34a"]["refs"] if r["kind"] == "section"] == ["cr:7"]
    assert [r["node"]["id"] for r in records["cr:100.1b"]["refs"] if r["kind"] == "section"] == ["cr:8"]


def test_kb_fetch_mtg_jp_and_ingest_tell_rules_documents_from_release_notes(httpserver, tmp_path):
    httpserver.expect_request("/robots.txt").respond_with_data("User-agent: *\nAllow: /\n")
    httpserver.expect_request("/gameplay/rules/docs/1234567/").respond_with_data(
        RULES_PAGE.read_bytes(), content_type="text/html; charset=utf-8")
    httpserver.expect_request("/notes/znr/").respond_with_data(NOTES.read_bytes(), content_type="text/html; charset=utf-8")
    kb_dir = tmp_path / "kb"
    report = crawl("mtg-jp", ["gameplay/rules/docs/1234567/", "notes/znr/"], kb_dir=kb_dir,
                   base_url=httpserver.url_for("/"), politeness=FAST)
    assert len(report.fetched) == 2 and not report.failed
    with Store.open(kb_dir) as store:
        ingested = ingest_from_cache(store, "mtg-jp", kb_dir=kb_dir)
        assert ingested.failed == []
        kinds = {d.source.removeprefix(httpserver.url_for("/")): (d.kind, d.version) for d in store.documents()}
    assert kinds["gameplay/rules/docs/1234567/"] == ("cr-text", "20240730.0")
    assert kinds["notes/znr/"][0] == "release-notes"


def test_kb_ingest_takes_the_rules_page_by_url(httpserver, tmp_path):
    httpserver.expect_request("/robots.txt").respond_with_data("User-agent: *\nAllow: /\n")
    httpserver.expect_request("/gameplay/rules/docs/1234567/").respond_with_data(
        RULES_PAGE.read_text(encoding="utf-8").replace('<meta charset="utf-8">', "").encode("cp932", "replace"),
        content_type="text/html; charset=Shift_JIS")
    url = httpserver.url_for("/gameplay/rules/docs/1234567/")
    result = CliRunner().invoke(main, ["--kb-dir", str(tmp_path / "kb"), "ingest", "-q", url])
    assert result.exit_code == 0, result.output
    assert "nodes: chapter 4, glossary 3, rule 5, section 4, subrule 5" in result.output


def test_kb_update_takes_the_rules_page_by_url(httpserver, tmp_path):
    httpserver.expect_request("/robots.txt").respond_with_data("User-agent: *\nAllow: /\n")
    httpserver.expect_request("/gameplay/rules/docs/1234567/").respond_with_data(
        RULES_PAGE.read_bytes(), content_type="text/html; charset=utf-8")
    result = run_update(tmp_path / "kb", sources=[httpserver.url_for("/gameplay/rules/docs/1234567/")], delay=0)
    assert result.changed and result.stored == 1
    with Store.open(tmp_path / "kb") as store:
        documents = [(d.kind, d.version, d.effective_date) for d in store.documents() if d.kind != "cards"]
    assert documents == [("cr-text", "20240730.0", "2024-07-30")]


@pytest.mark.parametrize("arg, path", [
    ("20260116", "/cr/JPN_CR_20260116_0.txt"),
    ("20260116.0", "/cr/JPN_CR_20260116_0.txt"),
    ("20250919.1", "/cr/JPN_CR_20250919_1.txt"),
    ("JPN_CR_20250725_0.rb.html", "/cr/JPN_CR_20250725_0.rb.html"),
    ("{host}other/JPN_CR_20251114_0.txt", "/other/JPN_CR_20251114_0.txt"),
])
def test_kb_fetch_mjmj_asks_for_the_real_file_name(arg, path):
    base = "http://127.0.0.1:8000/cr/"
    (target,) = PROFILES["mjmj"].seeds(base, [arg.format(host="http://127.0.0.1:8000/")])
    assert target.url == "http://127.0.0.1:8000" + path


def test_kb_fetch_mjmj_refuses_another_host():
    with pytest.raises(KbError, match="not on the crawl's host"):
        PROFILES["mjmj"].seeds("https://mjmj.info/data/docs/", ["https://example.org/JPN_CR_20260116_0.txt"])


def test_kb_fetch_mjmj_ruby_edition_is_ingested_with_its_readings(httpserver, tmp_path):
    httpserver.expect_request("/robots.txt").respond_with_data("User-agent: *\nAllow: /\n")
    httpserver.expect_request("/docs/JPN_CR_20250725_0.rb.html").respond_with_data(
        RUBY.read_bytes(), content_type="text/html; charset=utf-8")
    httpserver.expect_request("/docs/JPN_CR_20250725_0.txt").respond_with_data("<html>not found</html>",
                                                                                 content_type="text/html")
    kb_dir = tmp_path / "kb"
    runner = CliRunner()
    fetched = runner.invoke(main, ["--kb-dir", str(kb_dir), "fetch", "mjmj", "--delay", "0", "--base-url",
                                   httpserver.url_for("/docs/"), "JPN_CR_20250725_0.rb.html", "20250725"])
    assert fetched.exit_code == 1 and "expected a text file" in fetched.output  # the .txt URL answered with HTML
    result = runner.invoke(main, ["--kb-dir", str(kb_dir), "ingest", "-q", "--from-cache", "mjmj"])
    assert result.exit_code == 0, result.output
    with Store.open(kb_dir) as store:
        terms = {n.title: n.meta.get("reading") for n in store.nodes(kinds=["glossary"])}
    assert terms["予示"] == "よじ" and terms["唱える"] == "となえる"
