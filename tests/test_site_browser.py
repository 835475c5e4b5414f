"""End to end in real headless Chromium (Debian /usr/bin/chromium driven by Playwright): the sample site served by a
local http.server on 127.0.0.1, at desktop width and at 375 px; screenshots go to test-artifacts/ (look at them).
Also from file://, where the static search must work too. No request may leave the site."""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
from pathlib import Path

import pytest

from kb.pipeline import ingest_sources
from kb.site import build_site
from kb.store import Store

REPO = Path(__file__).resolve().parent.parent
ARTIFACTS = REPO / "test-artifacts"
CHROMIUM = os.environ.get("KB_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).is_file() and not shutil.which("chromium"):
        if os.environ.get("CI") == "true":
            pytest.fail(f"Chromium not found at {CHROMIUM}")
        pytest.skip(f"Chromium not found at {CHROMIUM} (set KB_CHROMIUM)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("browser")
    with Store.open(base / "kb") as store:
        ingest_sources(store, [str(REPO / "data")])
        build_site(store, base / "site")
    return base / "site"


@pytest.fixture(scope="module")
def base_url(site):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(site))
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/sub"  # served under a sub-path: relative links only
    srv.shutdown()
    srv.server_close()


@pytest.fixture(scope="module")
def sub_site(site):
    sub = site / "sub"
    if not sub.exists():
        shutil.copytree(site, sub, ignore=shutil.ignore_patterns("sub"))
    return sub


def open_page(browser, width: int, outside: list[str], origin: str):
    page = browser.new_page(viewport={"width": width, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: None if r.url.startswith((origin, "data:")) else outside.append(r.url))
    return page, errors


@pytest.mark.parametrize("width", [1200, 375])
def test_reader_journey(browser, base_url, sub_site, width):
    ARTIFACTS.mkdir(exist_ok=True)
    outside: list[str] = []
    page, errors = open_page(browser, width, outside, base_url.rsplit("/", 1)[0])
    page.goto(f"{base_url}/index.html")
    assert "マジック" in page.title()
    assert page.locator("ol.toc a", has_text="601. 呪文を唱えること").count() == 1
    page.screenshot(path=str(ARTIFACTS / f"site-home-{width}.png"), full_page=False)

    # a rule number typed in the search box jumps straight to the rule
    page.fill(".search-input", "ＣＲ：６０１．２ｆ")
    page.press(".search-input", "Enter")
    page.wait_for_url("**/cr/601.html#601.2f")
    assert page.locator('[id="601.2f"]').evaluate("el => el.matches(':target')")
    assert page.locator('[id="601.2f"]').is_visible()
    page.screenshot(path=str(ARTIFACTS / f"site-601.2f-{width}.png"))

    # follow the reference 601.2a-d (in 601.2) to 601.2a
    page.locator('[id="601.2"] a.ref', has_text="601.2a-d").click()
    page.wait_for_url("**/cr/601.html#601.2a")
    assert page.locator('[id="601.2a"]').evaluate("el => el.matches(':target')")

    # hover preview of a referenced rule
    link = page.locator('[id="601.2"] a.ref', has_text="601.2f-h")
    link.scroll_into_view_if_needed()
    link.hover()
    preview = page.locator(".preview")
    preview.wait_for(state="visible", timeout=3000)
    page.wait_for_function("() => document.querySelector('.preview').textContent.includes('総コスト')", timeout=3000)
    assert preview.inner_text().startswith("601.2f-h")
    box = preview.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= width + 1  # fits on a phone
    page.screenshot(path=str(ARTIFACTS / f"site-preview-{width}.png"))

    # the static search: 唱えた finds 601.2
    page.mouse.move(0, 0)
    page.fill(".search-input", "唱えた")
    page.wait_for_selector(".search-results a", timeout=5000)
    hrefs = [a.get_attribute("href") for a in page.locator(".search-results a").all()]
    assert "../cr/601.html#601.2" in hrefs
    page.screenshot(path=str(ARTIFACTS / f"site-search-{width}.png"))
    assert page.evaluate("document.documentElement.scrollWidth") <= width  # no sideways scrolling

    # hover preview of a glossary term linked in rule text: its definition
    page.fill(".search-input", "")
    term = page.locator('[id="601.2"] a.ref-term', has_text="唱える").first
    term.scroll_into_view_if_needed()
    term.hover()
    page.wait_for_function("() => { const p = document.querySelector('.preview');"
                           " return p && p.textContent.startsWith('唱える') && p.textContent.includes('手札'); }",
                           timeout=3000)
    page.screenshot(path=str(ARTIFACTS / f"site-term-preview-{width}.png"))
    assert errors == [] and outside == []
    page.close()


@pytest.fixture(scope="module")
def not_found_server(sub_site):
    """A static server like most hosts: a missing path gets the site's 404.html (status 404), at any depth."""
    page_404 = (sub_site / "404.html").read_bytes()

    class NotFound(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def send_error(self, code, message=None, explain=None):
            if code != 404:
                return super().send_error(code, message, explain)
            self.send_response(404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(page_404)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(page_404)

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(NotFound, directory=str(sub_site.parent)))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


@pytest.mark.parametrize("missing", ["/sub/cr/nope/x.html", "/sub/nope.html", "/sub/a/b/c/d/"])
def test_404_page_works_at_any_depth(browser, not_found_server, missing):
    outside: list[str] = []
    page, errors = open_page(browser, 1200, outside, not_found_server)
    response = page.goto(not_found_server + missing)
    assert response.status == 404 and "ページが見つかりません" in page.title()
    # styled by the site's stylesheet (found at the site's root, /sub/) and its script loaded: the search works
    assert page.evaluate("[...document.styleSheets].some(s => s.href && s.href.endsWith('/sub/static/site.css')"
                         " && s.cssRules.length > 10)")
    assert page.evaluate("getComputedStyle(document.querySelector('.site-header')).display") == "flex"
    page.fill(".search-input", "唱えた")
    page.wait_for_selector(".search-results a", timeout=5000)
    home = page.locator("main a", has_text="目次へ")
    assert home.evaluate("a => a.href") == f"{not_found_server}/sub/index.html"
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"site-404-depth-{missing.count('/')}.png"))
    home.click()
    page.wait_for_url(f"{not_found_server}/sub/index.html")
    assert errors == [] and outside == []
    page.close()


def test_search_works_from_disk(browser, site):
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto((site / "search.html").as_uri() + "?q=%E5%94%B1%E3%81%88%E3%81%9F")
    page.wait_for_selector(".search-page-results a", timeout=5000)
    hrefs = [a.get_attribute("href") for a in page.locator(".search-page-results a").all()]
    assert "cr/601.html#601.2" in hrefs
    # a query the vocabulary does not cover falls back to character bigrams
    page.goto((site / "search.html").as_uri() + "?q=%E7%B7%8F%E3%82%B3%E3%82%B9")  # 総コス
    page.wait_for_selector(".search-page-results li", timeout=5000)
    assert page.locator(".search-page-results a").count() > 0
    assert errors == []
    page.close()


def test_dark_mode(browser, base_url, sub_site):
    page = browser.new_page(color_scheme="dark")
    page.goto(f"{base_url}/cr/601.html")
    bg = page.evaluate("getComputedStyle(document.body).backgroundColor")
    r, g, b = [int(x) for x in bg[bg.index("(") + 1:bg.index(")")].split(",")[:3]]
    assert r + g + b < 200  # dark background
    page.close()


def test_browser_search_agrees_with_kb_search(browser, site):
    """On the Japanese evaluation queries, the static search finds in its top 5 what ``kb search`` finds in its."""
    import json

    from kb.search.query import search
    from kb.site.paths import url_for
    from kb.store import NodeKey

    kb_dir = site.parent / "kb"
    cases = [json.loads(line) for line in (REPO / "tests" / "fixtures" / "search" / "eval.jsonl").read_text(
        encoding="utf-8").splitlines() if line.strip()]
    cases = [c for c in cases if c["lang"] == "ja" and c["category"] not in ("number", "phrase")]
    page = browser.new_page()
    page.goto((site / "search.html").as_uri())
    agree, both = [], 0
    for case in cases:
        want = url_for(NodeKey("", case["lang"], case["id"]))
        ours = [h.url for h in search(str(kb_dir), case["query"], limit=5)]
        static = page.evaluate("(q) => kbSearch(q, 5).then(r => r.results.map(x => x.url))", case["query"])
        if want in ours:
            both += 1
            agree.append(want in static or (case["query"], static))
    page.close()
    assert both >= 15
    misses = [a for a in agree if a is not True]
    print(f"kb search found {both} of {len(cases)}; the static search agreed on {both - len(misses)}: misses {misses}")
    assert len(misses) <= len(agree) // 10, misses
