"""An article page is named without making its context (:func:`kb.site.pages.other_pages`: its whole context is a
:class:`~kb.site.page.Deferred` part): its source covers everything the page shows — the node's content hash, its
label, its links, its paired glossary term, who cites and mentions it, the chrome — so changing any one of them
changes that page's source (and the chrome every article's), and nothing else changes another page's; what its
lookups answer from is named by the tables' digest. The pages are made in runs, each a group named by its pages'
sources and the tables: a change makes again the one run of the page it changes. A build after such a change renders
the page, and the site equals a full build's."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kb.pipeline import ingest_sources
from kb.site import build_site, pages
from kb.site.fingerprint import group_hash
from kb.site.gather import gather_site
from kb.site.page import Page, PageGroup
from kb.site.pages import other_pages
from kb.site.records import SiteData
from kb.store import Store
from tests.test_site_per_page import ARTICLES as LINKED
from tests.test_site_per_page import JA_CR, assert_same_site, page_of, wiki_page, write_wiki

ARTICLES = {**LINKED, "マナ・コスト": ["引用記事"]}  # マナ・コスト: a glossary term of the CR


def article_pages(site: SiteData) -> list[Page]:
    """The pages of the article groups other_pages yields."""
    return [page for item in other_pages(site) if isinstance(item, PageGroup) for page in item.make()]


def sources(site: SiteData) -> dict[str, str]:
    out = {}
    for page in article_pages(site):
        assert page.deferred is not None
        out[page.path] = f"{page.title}|{page.description}|{page.deferred.source}"
    return out


def groups(site: SiteData) -> dict[str, tuple[list[str], str]]:
    """Each article group's name → (its pages' paths, its hash: of its inputs as they are now)."""
    return {item.name: ([page.path for page in item.make()], group_hash("", item))
            for item in other_pages(site) if isinstance(item, PageGroup)}


def tables(site: SiteData) -> set[str]:
    return {page.deferred.tables for page in article_pages(site) if page.deferred}


def _cite(site: SiteData) -> str:
    site.others["wiki:孤立記事"].cited_by.append(("wiki/x.html", "x"))
    return page_of("孤立記事")


def _mention(site: SiteData) -> str:
    site.others["wiki:孤立記事"].mentions.append(
        {"url": "wiki/x.html", "label": "x", "before": "a", "name": "b", "after": "c"})
    return page_of("孤立記事")


def _label(site: SiteData) -> str:
    site.others["wiki:孤立記事"].label = "別の名"
    return page_of("孤立記事")


def _link(site: SiteData) -> str:
    links = site.others["wiki:マナ・コスト"].links["ja"]
    links[0] = links[0]._replace(target="wiki/other.html")
    return page_of("マナ・コスト")


def _term(site: SiteData) -> str:
    term = next(e for e in site.terms.values() if e.label == "マナ・コスト")
    term.url = "glossary/moved.html"
    return page_of("マナ・コスト")


def _content(site: SiteData) -> str:
    assert site.html is not None
    site.html.digests[("ja", "wiki:引用記事")] = "another content hash"
    return page_of("引用記事")


@pytest.mark.slow  # the Japanese CR and Sudachi
@pytest.mark.parametrize("change", [_cite, _mention, _label, _link, _term, _content])
def test_each_input_of_an_article_page_changes_its_source_only(tmp_path, change: Callable[[SiteData], str]):
    write_wiki(tmp_path / "wiki", ARTICLES)
    with Store.open(tmp_path / "kb") as store:
        assert not ingest_sources(store, [str(JA_CR), str(tmp_path / "wiki")], index=False).failed
        before = sources(gather_site(store))
        assert sources(gather_site(store)) == before  # the same store: the same names
        site = gather_site(store)
        assert all(not page.context for page in article_pages(site))  # nothing made before rendering
        changed = change(site)
        after = sources(site)
    assert [path for path in before if after[path] != before[path]] == [changed]


def _rule_url(site: SiteData) -> None:
    site.rules["601.2f"].url = "cr/moved.html#601.2f"


def _term_name(site: SiteData) -> None:
    next(e for e in site.terms.values() if e.label == "マナ・コスト").label = "別の用語"


@pytest.mark.slow  # the Japanese CR and Sudachi
@pytest.mark.parametrize("change", [_rule_url, _term_name])
def test_the_tables_digest_names_what_the_lookups_answer_from(tmp_path, change: Callable[[SiteData], None]):
    write_wiki(tmp_path / "wiki", ARTICLES)
    with Store.open(tmp_path / "kb") as store:
        assert not ingest_sources(store, [str(JA_CR), str(tmp_path / "wiki")], index=False).failed
        site = gather_site(store)
        before = tables(site)
        _cite(site)  # shown on the page, but no lookup's answer: the same tables
        assert len(before) == 1 and tables(site) == before
        change(site)
        after = tables(site)
    assert len(after) == 1 and after != before


@pytest.mark.slow  # the Japanese CR and Sudachi
@pytest.mark.parametrize("change", [_cite, _mention, _label, _link, _content])
def test_a_change_to_one_article_page_changes_its_groups_inputs_only(tmp_path, monkeypatch,
                                                                     change: Callable[[SiteData], str]):
    monkeypatch.setattr(pages, "ARTICLE_RUN", 2)
    write_wiki(tmp_path / "wiki", ARTICLES)
    with Store.open(tmp_path / "kb") as store:
        assert not ingest_sources(store, [str(JA_CR), str(tmp_path / "wiki")], index=False).failed
        site = gather_site(store)
        before = groups(site)
        changed = change(site)
        after = groups(site)
    assert len(before) == 3 and [paths for paths, _ in after.values()] == [paths for paths, _ in before.values()]
    assert [paths for name, (paths, inputs) in before.items() if after[name][1] != inputs] == \
        [next(paths for paths, _ in before.values() if changed in paths)]


@pytest.mark.slow  # the Japanese CR and five builds
def test_after_a_build_whose_tables_changed_the_next_keeps_the_articles_it_checked(tmp_path):
    """新しい記事 is new: the tables change, and the build asks every article page's lookups again (末端記事, which
    links it, is rendered). The next build, after 孤立記事 changed, has the same tables: it takes each kept page's
    answers from its record, and renders 孤立記事 and no other article."""
    paths = write_wiki(tmp_path / "wiki", ARTICLES)
    site = tmp_path / "site"
    with Store.open(tmp_path / "kb") as store:
        assert not ingest_sources(store, [str(JA_CR), str(tmp_path / "wiki")], index=False).failed
        build_site(store, site)
        new = write_wiki(tmp_path / "new", {"新しい記事": []})
        assert not ingest_sources(store, [str(new["新しい記事"])], index=False).failed
        report = build_site(store, site)
        assert {p for p in report.rendered_pages if p.startswith("wiki/")} == {page_of("末端記事"), page_of("新しい記事")}
        paths["孤立記事"].write_text(wiki_page("孤立記事", [], "書き足した文。"), encoding="utf-8")
        assert not ingest_sources(store, [str(paths["孤立記事"])], index=False).failed
        report = build_site(store, site)
        assert {p for p in report.rendered_pages if p.startswith("wiki/")} == {page_of("孤立記事")}, report.rendered_pages
        build_site(store, tmp_path / "full")
    assert_same_site(tmp_path / "full", site, search=False)


@pytest.mark.slow  # the Japanese CR and Sudachi
def test_the_chrome_changes_every_article_pages_source(tmp_path):
    write_wiki(tmp_path / "wiki", ARTICLES)
    with Store.open(tmp_path / "kb") as store:
        assert not ingest_sources(store, [str(JA_CR), str(tmp_path / "wiki")], index=False).failed
        site = gather_site(store)
        before = sources(site)
        site.translation_date = "2099-01-01"  # shown in every page's footer
        after = sources(site)
    assert len(before) == len(ARTICLES) and all(after[path] != before[path] for path in before)


@pytest.mark.slow  # the Japanese CR and four builds
def test_a_build_renders_the_article_whose_paired_term_or_citations_changed(tmp_path):
    paths = write_wiki(tmp_path / "wiki", ARTICLES)
    site = tmp_path / "site"
    with Store.open(tmp_path / "kb") as store:
        assert not ingest_sources(store, [str(JA_CR), str(tmp_path / "wiki")], index=False).failed
        build_site(store, site)
        assert "glossary/" in (site / page_of("マナ・コスト")).read_text(encoding="utf-8")  # paired with its term
        # 孤立記事 is newly cited: its page (and the citing one) rendered, no other article
        paths["引用記事"].write_text(wiki_page("引用記事", ["孤立記事"]), encoding="utf-8")
        assert not ingest_sources(store, [str(paths["引用記事"])], index=False).failed
        report = build_site(store, site)
        articles = {p for p in report.rendered_pages if p.startswith("wiki/")}
        assert articles == {page_of("孤立記事"), page_of("引用記事")}, report.rendered_pages
        build_site(store, tmp_path / "full")
        assert_same_site(tmp_path / "full", site, search=False)

