"""The rule pages (a group per chapter, section and rule, named by its pages' contexts: :func:`kb.site.pages.part_inputs`)
and the redirect pages (named by what they read: :func:`kb.site.pages.redirect_inputs`) are page groups: a build after
one article changed without changing what they show does not make them again; when it changes what they show (a rule
it cites, an article added) the groups showing it are made, and the site equals a full build's byte for byte either
way. More cases: tests/test_site_rule_groups.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.pipeline import ingest_sources
from kb.site import build_site, pages
from kb.site.manifest import MANIFEST, load_record
from kb.store import Store
from kb.urls.paths import rule_page
from tests.test_site_per_page import ARTICLES, assert_same_site, page_of, wiki_page, write_wiki

JA_CR = Path(__file__).resolve().parent.parent / "data" / "JPN_CR_20231117_0.txt"


def counting(monkeypatch: pytest.MonkeyPatch, name: str) -> list[int]:
    """Count the calls of the real producer ``kb.site.pages.<name>`` (the groups call it through the module)."""
    calls: list[int] = []
    real = getattr(pages, name)

    def producer(site):  # type: ignore[no-untyped-def]
        calls.append(1)
        return real(site)

    monkeypatch.setattr(pages, name, producer)
    return calls


def site_groups(out: Path) -> dict[str, dict]:
    """The rule and redirect groups of the build in ``out`` (an article's text is in its run of article pages and
    in its preview script: those change with it)."""
    return {name: group for name, group in load_record(out, MANIFEST)["groups"].items()
            if not name.startswith(("article pages ", "previews "))}


@pytest.mark.slow  # the Japanese CR and four builds
def test_groups_are_made_only_when_what_they_read_changed(tmp_path, monkeypatch):
    paths = write_wiki(tmp_path / "wiki", ARTICLES)
    site = tmp_path / "site"
    with Store.open(tmp_path / "kb") as store:
        assert not ingest_sources(store, [str(JA_CR), str(tmp_path / "wiki")], index=False).failed
        build_site(store, site)
        redirects = counting(monkeypatch, "redirect_pages")
        groups = site_groups(site)
        # its text changes, its citation (601.2f) and its title do not: neither group is made
        paths["引用記事"].write_text(wiki_page("引用記事", [], "竜巻ミョルニルの説明。"), encoding="utf-8")
        assert not ingest_sources(store, [str(paths["引用記事"])], index=False).failed
        quiet = build_site(store, site)
        assert redirects == [] and site_groups(site) == groups
        assert page_of("引用記事") in quiet.rendered_pages
        assert not [p for p in quiet.rendered_pages if p.startswith("cr/")], quiet.rendered_pages
        build_site(store, tmp_path / "full1")
        assert_same_site(tmp_path / "full1", site)
        redirects.clear()
        # now it cites 601.3 too: the parts of 601 and 601.3 are made (they show the new citation), the redirects not
        paths["引用記事"].write_text(wiki_page("引用記事", [], "竜巻ミョルニルの説明。(CR:601.3)"), encoding="utf-8")
        assert not ingest_sources(store, [str(paths["引用記事"])], index=False).failed
        cited = build_site(store, site)
        now = site_groups(site)
        assert [name for name in now if now[name]["hash"] != groups[name]["hash"]] == ["rule pages 601", "rule pages 601.3"]
        assert redirects == []
        assert rule_page("601.3") in cited.rendered_pages
        assert "引用記事" in (site / rule_page("601.3")).read_text(encoding="utf-8")
        # a new article: the redirect pages are made again (a new entry may take or free a path)
        new = write_wiki(tmp_path / "new", {"新しい記事": []})
        assert not ingest_sources(store, [str(new["新しい記事"])], index=False).failed
        build_site(store, site)
        assert redirects
        build_site(store, tmp_path / "full2")
    assert_same_site(tmp_path / "full2", site, search=False)
