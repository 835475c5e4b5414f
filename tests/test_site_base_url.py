"""``kb build --base-url``: absolute URLs in sitemap.xml, the Atom feed, canonical links and the 404 page; without it
every URL stays relative. Two Japanese versions are ingested so the 更新履歴 pages and the feed exist."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest
from click.testing import CliRunner
from lxml import etree
from lxml import html as lxml_html

from kb.cli import main
from kb.errors import KbError
from kb.pipeline import ingest_sources
from kb.site import build_site
from kb.store import Store

REPO = Path(__file__).resolve().parent.parent
JA = REPO / "data" / "JPN_CR_20231117_0.txt"
BASE = "https://example.org/rules/"
ATOM = "{http://www.w3.org/2005/Atom}"


@pytest.fixture(scope="module")
def two_versions(tmp_path_factory) -> Path:
    """The bundled Japanese sample and a later version of it with one rule edited."""
    work = tmp_path_factory.mktemp("base-url")
    text = JA.read_text(encoding="utf-8-sig")
    edited = "通常、そのマナ・コストだけである。"
    assert edited in text
    later = text.replace("和訳 20231117.0 版", "和訳 20240301.0 版").replace("2023-11-17", "2024-03-01")
    later = later.replace("2023-11-18", "2024-03-01")  # the translator line
    (work / "JPN_CR_20240301.txt").write_text(later.replace(edited, "通常、そのマナ・コストのみである。"), encoding="utf-8")
    with Store.open(work / "kb") as store:
        assert not ingest_sources(store, [str(JA), str(work / "JPN_CR_20240301.txt")], index=False).failed
    return work / "kb"


def sitemap_locs(site: Path) -> list[str]:
    tree = etree.parse(str(site / "sitemap.xml"))
    return tree.xpath("//s:loc/text()", namespaces={"s": "http://www.sitemaps.org/schemas/sitemap/0.9"})


def feed_links(site: Path) -> list[str]:
    return etree.parse(str(site / "changes" / "feed.xml")).xpath("//a:link/@href", namespaces={"a": ATOM[1:-1]})


def test_absolute_urls_with_base_url(two_versions, tmp_path):
    out = tmp_path / "site"
    with Store.open(two_versions) as store:
        report = build_site(store, out, base_url="https://example.org/rules")  # the slash is added
    assert report.broken == []
    locs = sitemap_locs(out)
    assert locs and all(loc.startswith(BASE) for loc in locs)
    assert BASE + "cr/601.html" in locs and BASE + "glossary/%E5%94%B1%E3%81%88%E3%82%8B.html" in locs
    links = feed_links(out)
    assert BASE + "changes/index.html" in links and BASE + "changes/feed.xml" in links
    assert BASE + "changes/ja-20231117.0-20240301.0.html" in links
    for rel in ("cr/601.html", "index.html", "glossary/唱える.html"):
        page = lxml_html.fromstring((out / rel).read_bytes())
        assert page.xpath("//link[@rel='canonical']/@href") == [BASE + quote(rel)]
        assert not page.xpath("//base")
    not_found = lxml_html.fromstring((out / "404.html").read_bytes())
    assert not_found.xpath("//base/@href") == [BASE] and not not_found.xpath("//link[@rel='canonical']")
    assert not not_found.xpath("//script[not(@src)][contains(., 'XMLHttpRequest')]")


def test_relative_urls_without_base_url(two_versions, tmp_path):
    out = tmp_path / "site"
    with Store.open(two_versions) as store:
        build_site(store, out)
    locs = sitemap_locs(out)
    assert "cr/601.html" in locs and not any("://" in loc for loc in locs)
    links = feed_links(out)
    assert "index.html" in links and "feed.xml" in links and "ja-20231117.0-20240301.0.html" in links
    page = lxml_html.fromstring((out / "cr" / "601.html").read_bytes())
    assert not page.xpath("//link[@rel='canonical']")
    not_found = lxml_html.fromstring((out / "404.html").read_bytes())
    assert not not_found.xpath("//base") and not_found.xpath("//script[not(@src)][contains(., 'static/site.css')]")


def test_changing_the_base_url_rebuilds(two_versions, tmp_path):
    out = tmp_path / "site"
    with Store.open(two_versions) as store:
        build_site(store, out, base_url=BASE)
        again = build_site(store, out, base_url=BASE)
        other = build_site(store, out, base_url="https://rules.example.net/")
    assert again.rendered == 0
    assert other.rendered == other.pages
    assert all(loc.startswith("https://rules.example.net/") for loc in sitemap_locs(out))


@pytest.mark.parametrize("bad", ["example.org/rules", "ftp://example.org/", "https://example.org/?x=1", "/rules/"])
def test_bad_base_url_is_refused(two_versions, tmp_path, bad):
    with Store.open(two_versions) as store, pytest.raises(KbError, match="--base-url"):
        build_site(store, tmp_path / "site", base_url=bad)
    assert not (tmp_path / "site").exists()


def test_kb_build_base_url_option(two_versions, tmp_path):
    out = tmp_path / "site"
    result = CliRunner().invoke(main, ["--kb-dir", str(two_versions), "build", "--out", str(out), "--base-url", BASE])
    assert result.exit_code == 0, result.output
    assert sitemap_locs(out)[0].startswith(BASE)
