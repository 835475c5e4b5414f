"""The preview scripts are groups (:func:`kb.site.pages.preview_pages`) named by the texts their previews are cut
from, an unversioned node's by its content hash: changing one rule's text, or one article's content, changes the
inputs of its script's group and no other's, and a build after it writes that script alone of them."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from kb.pipeline import ingest_sources
from kb.site import build_site
from kb.site.fingerprint import group_hash
from kb.site.gather import gather_site
from kb.site.page import PageGroup
from kb.site.pages import preview_pages
from kb.site.records import SiteData
from kb.store import Store
from tests.test_site_per_page import ARTICLES, JA_CR, assert_same_site, page_of, wiki_page, write_wiki


def hashes(site: SiteData) -> dict[str, str]:
    return {group.name: group_hash("", group) for group in preview_pages(site) if isinstance(group, PageGroup)}


def script_of(site: SiteData, key: str) -> str:
    """The name of the preview group whose script holds ``key``."""
    return next(group.name for group in preview_pages(site)
                for page in group.make() if key in page.context["texts"])


@pytest.mark.slow  # the Japanese CR and Sudachi
def test_a_changed_text_changes_its_scripts_inputs_only(tmp_path):
    write_wiki(tmp_path / "wiki", ARTICLES)
    with Store.open(tmp_path / "kb") as store:
        assert not ingest_sources(store, [str(JA_CR), str(tmp_path / "wiki")], index=False).failed
        site = gather_site(store)
        assert site.html is not None
        before = hashes(site)
        rule = site.rules["601.2f"]
        rule.nodes["ja"] = replace(rule.nodes["ja"], text="書き換えた文。")
        after_rule = hashes(site)
        site.html.digests[("ja", "wiki:孤立記事")] = "another content hash"
        after_article = hashes(site)
        article_script = script_of(site, page_of("孤立記事").rpartition("/")[2][: -len(".html")])
    assert [name for name in before if after_rule[name] != before[name]] == ["previews 601"]
    assert [name for name in before if after_article[name] != after_rule[name]] == [article_script]


@pytest.mark.slow  # the Japanese CR and three builds
def test_a_build_after_an_article_changed_writes_its_preview_script(tmp_path):
    paths = write_wiki(tmp_path / "wiki", ARTICLES)
    site = tmp_path / "site"
    with Store.open(tmp_path / "kb") as store:
        assert not ingest_sources(store, [str(JA_CR), str(tmp_path / "wiki")], index=False).failed
        build_site(store, site)
        paths["孤立記事"].write_text(wiki_page("孤立記事", [], "新しい一文を先頭に。"), encoding="utf-8")
        assert not ingest_sources(store, [str(paths["孤立記事"])], index=False).failed
        report = build_site(store, site)
        previews = [p for p in report.rendered_pages if p.startswith("previews/")]
        new_text = json.dumps("新しい一文を先頭に")[1:-1]  # as the script writes it
        assert len(previews) == 1 and new_text in (site / previews[0]).read_text(encoding="utf-8")
        build_site(store, tmp_path / "full")
    assert_same_site(tmp_path / "full", site, search=False)
