"""Second attack run, the Low findings about the site: a knowledge base of wiki articles only built with broken links
of its own navigation; NUL and other control bytes in rule text reached the pages raw; a symbolic link planted inside
the site was written through; files a user added to a built site (CNAME, .htaccess) vanished on a full rebuild."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hostile import DATA, SAMPLE_CR

from kb.errors import KbError
from kb.pipeline import ingest_sources
from kb.site import build_site
from kb.site.pages import PAGE_PRODUCERS, Page
from kb.store import Store


@pytest.fixture(scope="module")
def sample_kb(tmp_path_factory) -> Path:
    kb_dir = tmp_path_factory.mktemp("low") / "kb"
    with Store.open(kb_dir) as store:
        assert not ingest_sources(store, [str(SAMPLE_CR)]).failed
    return kb_dir


def test_a_site_of_wiki_articles_only_has_no_broken_link(tmp_path):
    with Store.open(tmp_path / "kb") as store:
        assert not ingest_sources(store, [str(DATA / "mtgwiki")]).failed
        report = build_site(store, tmp_path / "site")
    assert report.broken == []
    glossary = (tmp_path / "site" / "glossary" / "index.html").read_text(encoding="utf-8")
    assert "用語集がまだありません" in glossary  # the navigation's 用語集 leads to a page that says so


def test_control_characters_in_rule_text_never_reach_the_pages(tmp_path):
    text = SAMPLE_CR.read_text(encoding="utf-8-sig")
    hostile = text.replace("601.2f プレイヤーは", "601.2f プレイ\x00ヤー\x1b[31mは\x07\x7f\x85", 1)
    assert hostile != text
    source = tmp_path / "JPN_CR_20231117_0.txt"
    source.write_text(hostile, encoding="utf-8")
    out = tmp_path / "site"
    with Store.open(tmp_path / "kb") as store:
        assert not ingest_sources(store, [str(source)]).failed
        build_site(store, out)
    control = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
    served = [p for p in out.rglob("*") if p.is_file() and p.relative_to(out).parts[0] != ".kb-build"]  # not the records
    dirty = [p.relative_to(out).as_posix() for p in served if control.search(p.read_text(encoding="utf-8"))]
    assert dirty == []
    assert "プレイヤー[31mは" in (out / "cr" / "601.html").read_text(encoding="utf-8")  # the text, without them


def extra(path: str):
    return lambda site: [Page(path, "404.html", "extra", "x", {})]


def test_a_symbolic_link_planted_inside_the_site_is_never_written_through(sample_kb, tmp_path):
    out, outside = tmp_path / "site", tmp_path / "outside"
    outside.mkdir()
    with Store.open(sample_kb) as store:
        build_site(store, out)
        (out / "extra").symlink_to(outside, target_is_directory=True)
        with pytest.raises(KbError, match=r"extra: a symbolic link inside the site; kb writes nothing through one"):
            build_site(store, out, producers=[*PAGE_PRODUCERS, extra("extra/page.html")])  # a small build: in place
        with pytest.raises(KbError, match="a symbolic link inside the site"):
            build_site(store, out, base_url="https://example.org/")  # a large one: swapped
    assert list(outside.iterdir()) == []
    (out / "extra").unlink()
    with Store.open(sample_kb) as store:
        build_site(store, out, producers=[*PAGE_PRODUCERS, extra("extra/page.html")])
    assert (out / "extra" / "page.html").is_file() and not (out / "extra").is_symlink()


def test_files_a_user_added_to_the_site_stay_through_small_and_full_rebuilds(sample_kb, tmp_path):
    out = tmp_path / "site"
    with Store.open(sample_kb) as store:
        build_site(store, out)
        (out / "CNAME").write_text("rules.example.org\n")
        (out / ".htaccess").write_text("Options -Indexes\n")
        (out / "cr" / "google1234.html").write_text("google-site-verification: google1234.html\n")
        added = {p: p.read_bytes() for p in (out / "CNAME", out / ".htaccess", out / "cr" / "google1234.html")}
        small = build_site(store, out, producers=[*PAGE_PRODUCERS, extra("extra.html")])
        assert small.rendered == 1
        assert {p: p.read_bytes() for p in added} == added
        full = build_site(store, out, base_url="https://example.org/rules/")  # every page rendered: a new folder
        assert full.rendered == full.pages
        assert {p: p.read_bytes() for p in added} == added
        again = build_site(store, out)
    assert again.notices == [] and {p: p.read_bytes() for p in added} == added
