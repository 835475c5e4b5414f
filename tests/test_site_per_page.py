"""A build after one MTG Wiki article changed renders only the pages that show or cite it — not every article, whose
HTML is made only when its page is rendered (:class:`kb.site.page.Deferred`) — and the site it leaves is byte for
byte the site a full build makes. An article whose links start to name a page of the site (a new article) is
rendered again although its own text did not change."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest
from search_files import BUILD_RECORDS, same_built_file

from kb.pipeline import ingest_sources
from kb.site import build_site
from kb.store import Store
from kb.urls.paths import page_for_id

# title → the titles it links to (a link to 新しい記事 is a red link until that article is ingested)
ARTICLES = {"連鎖記事": ["対象記事", "引用記事"], "対象記事": ["連鎖記事"], "引用記事": [], "孤立記事": [],
            "末端記事": ["孤立記事", "新しい記事"]}


def wiki_page(title: str, links: list[str], extra: str = "") -> str:
    """A MediaWiki page as the wiki serves it (the parts kb reads): its heading and its text with links."""
    anchors = "".join(f'<a href="/wiki/{quote(t)}" title="{t}">{t}</a>は関連する記事。' for t in links)
    return (f"<html><head><title>{title} - MTG Wiki</title></head><body>"
            f'<h1 id="firstHeading" class="firstHeading">{title}</h1><div id="bodyContent"><div id="mw-content-text">'
            f"<p><b>{title}</b>は、呪文を唱えるときの記事。{anchors}{extra}(CR:601.2f)</p>"
            "</div></div></body></html>")


def write_wiki(folder: Path, articles: dict[str, list[str]]) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for title, links in articles.items():
        paths[title] = folder / f"{quote(title)}.html"
        paths[title].write_text(wiki_page(title, links), encoding="utf-8")
    return paths


JA_CR = Path(__file__).resolve().parent.parent / "data" / "JPN_CR_20231117_0.txt"


def cr_and_wiki(folder: Path) -> tuple[dict[str, Path], Path, str]:
    """:data:`ARTICLES` written into ``folder/wiki`` and a copy of the sample's Japanese CR beside it, to change:
    (the articles' paths, the CR's path, its text)."""
    paths = write_wiki(folder / "wiki", ARTICLES)
    text = JA_CR.read_text(encoding="utf-8-sig")
    cr = folder / JA_CR.name
    cr.write_text(text, encoding="utf-8")
    return paths, cr, text


def page_of(title: str) -> str:
    return page_for_id(f"wiki:{title}")


def assert_same_site(full: Path, site: Path, *, search: bool = True) -> None:
    """Every file of the full build is in ``site`` with the same bytes (but the manifest, and the search
    vocabulary, which only grows between full builds; without ``search``, no search file: a document added since
    the first build keeps the number it was given then, which a full build gives another)."""
    compared = set()
    for path in full.rglob("*"):
        rel = path.relative_to(full)
        if not search and rel.parts[0] == "search":
            continue
        if path.is_file() and path.name not in BUILD_RECORDS and rel.parts[:2] != ("search", "v"):
            assert same_built_file(path, site / rel, rel), rel
            compared.add(rel.as_posix())
    assert {page_of(title) for title in ARTICLES} | {"index.html", "sitemap.xml"} <= compared


@pytest.mark.slow  # three builds, each compiling a Sudachi user dictionary of the new names
def test_one_changed_article_renders_only_the_pages_that_show_or_cite_it(tmp_path):
    paths = write_wiki(tmp_path / "wiki", ARTICLES)
    site = tmp_path / "site"
    with Store.open(tmp_path / "kb") as store:
        assert not ingest_sources(store, [str(tmp_path / "wiki")], index=False).failed
        first = build_site(store, site)
        articles = {page_of(t) for t in ARTICLES}
        assert articles <= set(first.rendered_pages)
        # 引用記事 changes: it now links to 孤立記事 (whose cited-by list gains it)
        paths["引用記事"].write_text(wiki_page("引用記事", ["孤立記事"], "竜巻ミョルニルの説明。"), encoding="utf-8")
        assert not ingest_sources(store, [str(paths["引用記事"])], index=False).failed
        second = build_site(store, site)
        rendered = set(second.rendered_pages)
        assert {page_of("引用記事"), page_of("孤立記事")} <= rendered
        # the articles linking to it show its URL only, and the others nothing of it: kept
        assert not rendered & {page_of("連鎖記事"), page_of("対象記事"), page_of("末端記事")}
        assert rendered <= articles | {p for p in rendered if p.startswith("previews/")}, rendered
        assert second.reused == second.pages - second.rendered
        assert "竜巻ミョルニル" in (site / page_of("引用記事")).read_text(encoding="utf-8")
        build_site(store, tmp_path / "full")
    assert_same_site(tmp_path / "full", site)


@pytest.mark.slow
def test_an_article_whose_red_link_gets_a_page_is_rendered_again(tmp_path):
    """末端記事 links to 新しい記事, which has no page: a link to mtgwiki.com. When 新しい記事 is ingested, the
    lookup 末端記事's HTML made answers otherwise: its page is rendered again (its text unchanged), pointing here."""
    write_wiki(tmp_path / "wiki", ARTICLES)
    site = tmp_path / "site"
    with Store.open(tmp_path / "kb") as store:
        assert not ingest_sources(store, [str(tmp_path / "wiki")], index=False).failed
        build_site(store, site)
        before = (site / page_of("末端記事")).read_text(encoding="utf-8")
        assert "mtgwiki.com/wiki/%E6%96%B0" in before
        new = write_wiki(tmp_path / "new", {"新しい記事": []})
        assert not ingest_sources(store, [str(new["新しい記事"])], index=False).failed
        again = build_site(store, site)
        assert page_of("末端記事") in again.rendered_pages and page_of("新しい記事") in again.rendered_pages
        assert not set(again.rendered_pages) & {page_of("連鎖記事"), page_of("対象記事"), page_of("引用記事")}
        after = (site / page_of("末端記事")).read_text(encoding="utf-8")
        assert "mtgwiki.com/wiki/%E6%96%B0" not in after and f'href="../{quote(page_of("新しい記事"))}"' in after
        build_site(store, tmp_path / "full")
    assert_same_site(tmp_path / "full", site, search=False)
