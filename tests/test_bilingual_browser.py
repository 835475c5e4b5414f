"""End to end in real headless Chromium over the site built from data/ plus the three English CRs (and the MTG Wiki
page 接死/Deathtouch): the newest rules with each rule's Japanese status, the 2023 Japanese 701.34 under the 2026
701.40, Japanese queries reaching English rules in the static search, and every search URL a page that exists.
Screenshots at 375 and 1280 px go to test-artifacts/."""

from __future__ import annotations

import functools
import http.server
import threading

import pytest
from conftest import ARTIFACTS

from kb.search import Searcher
from kb.store import Store


@pytest.fixture(scope="module")
def served(bilingual_site):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(bilingual_site)))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


@pytest.mark.parametrize("width", [375, 1280])
def test_newest_rules_with_japanese_status(browser, served, width):
    page = browser.new_page(viewport={"width": width, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{served}/cr/701.html#701.40")
    manifest = page.locator('section[id="701.40"]')
    assert manifest.get_attribute("data-ja-status") == "current"
    assert "予示する" in manifest.locator('div[lang="ja"]').inner_text()
    assert "701.34" in manifest.locator(".ja-state").inner_text()
    outdated = page.locator('section[id="701.40a"]')
    assert outdated.get_attribute("data-ja-status") == "outdated"
    assert outdated.locator(".ja-state").is_visible() and "旧版" in outdated.locator(".ja-state").inner_text()
    outdated.locator(".ja-changes summary").click()
    assert outdated.locator(".ja-changes ins").inner_text().strip() == "for"
    missing = page.locator('section[id="701.34"]')  # Proliferate: never translated
    assert missing.get_attribute("data-ja-status") == "missing" and missing.locator(".ja-state").inner_text() == "未翻訳"
    statuses = page.eval_on_selector_all("section[data-ja-status]", "els => [...new Set(els.map(e => e.dataset.jaStatus))]")
    assert sorted(statuses) == ["current", "missing", "outdated"]
    page.screenshot(path=str(ARTIFACTS / f"bilingual-701-{width}.png"))
    page.goto(f"{served}/index.html")
    facts = page.locator("dl.facts").inner_text()
    assert "2026年1月16日" in facts and "和訳 20231117.0 版" in facts
    page.screenshot(path=str(ARTIFACTS / f"bilingual-home-{width}.png"))
    # no box wider than the phone (the marker and the English diff wrap)
    overflow = page.evaluate("document.documentElement.scrollWidth > window.innerWidth")
    assert not overflow and errors == []
    page.close()


@pytest.mark.run_first
def test_static_search_crosses_languages_and_links_real_pages(browser, served, bilingual_kb):
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{served}/search.html")

    def static(query: str, limit: int = 10) -> dict:
        return page.evaluate("([q, n]) => kbSearch(q, n)", [query, limit])

    assert static("予示")["results"][0]["url"] == "cr/701.html#701.40"
    assert static("よじ")["results"][0]["url"] == "cr/701.html#701.40"
    cast = static("lang:en 唱える")["results"]
    assert cast[0]["url"] == "cr/601.html" and cast[0]["kind"] == "rule"
    assert "cr/702.html#702.2" in [r["url"] for r in static("接死")["results"]]
    glossary = static("kind:glossary 唱える")["results"]
    assert glossary and {r["kind"] for r in glossary} == {"glossary"}
    assert [r["url"] for r in static("601.2a-d")["results"]] == [f"cr/601.html#601.2{c}" for c in "abcd"]
    assert static("701.40")["jump"] == {"number": "701.40", "url": "cr/701.html#701.40"}
    assert static("999.9")["jump"] is None  # no such rule: no jump offered
    # the same queries in kb search: every URL either search hands out is a page with that anchor
    queries = ["予示", "lang:en 唱える", "接死", "601.2a-d", "唱えた", "マナ・コスト", "version:20231117 601.2f"]
    with Store.open(bilingual_kb, create=False) as store, Searcher(store) as searcher:
        urls = {h.url for q in queries for h in searcher.search(q, limit=10)}
    urls |= {r["url"] for q in queries for r in static(q)["results"]}
    broken = []
    for url in sorted(urls):
        path, _, anchor = url.partition("#")
        response = page.goto(f"{served}/{path}")
        if response is None or response.status != 200 or (anchor and page.locator(f'[id="{anchor}"]').count() != 1):
            broken.append(url)
    assert broken == [] and len(urls) > 20
    # the search page: highlighted words, kind labels, and 見つかりませんでした said once, not as result number 1
    page.goto(f"{served}/search.html?q=%E5%94%B1%E3%81%88%E3%81%9F")  # 唱えた
    page.wait_for_selector(".search-page-results a mark", timeout=5000)
    assert page.locator(".search-page-results .kind").first.inner_text() in ("ルール", "用語", "記事")
    page.goto(f"{served}/search.html?q=%E3%81%82%E3%81%82%E3%81%82%E3%81%82%E3%81%82zzqx")  # nothing
    page.wait_for_selector("p.none", timeout=5000)
    assert page.locator(".search-page-results li").count() == 0 and page.locator("p.none").inner_text() == "見つかりませんでした"
    assert errors == []
    page.close()


def test_header_search_jumps_only_to_rules_with_a_page(browser, served):
    page = browser.new_page(viewport={"width": 375, "height": 800})
    page.goto(f"{served}/index.html")
    page.fill(".search-input", "rule 701.40")
    page.press(".search-input", "Enter")
    page.wait_for_url("**/cr/701.html#701.40")
    page.goto(f"{served}/index.html")
    page.fill(".search-input", "999.9")
    page.press(".search-input", "Enter")
    page.wait_for_url("**/search.html?q=999.9")
    page.close()
