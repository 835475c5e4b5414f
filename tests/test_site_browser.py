"""End to end in real headless Chromium (Debian /usr/bin/chromium driven by Playwright): the sample site served by a
local http.server on 127.0.0.1, at desktop width and at 375 px; screenshots go to test-artifacts/ (look at them).
Also from file://, where the static search must work too. No request may leave the site."""

from __future__ import annotations

import functools
import http.server
import shutil
import threading
from pathlib import Path
from urllib.parse import quote

import pytest
from conftest import ARTIFACTS, copy_kb

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def site(tmp_path_factory, data_kb, data_site) -> Path:
    """The sample site in ``site/`` and its knowledge base in ``kb/`` beside it (copies of ``data_site`` and
    ``data_kb``: ``sub_site`` is copied into the site)."""
    base = tmp_path_factory.mktemp("browser")
    copy_kb(data_kb, base / "kb")
    return Path(shutil.copytree(data_site, base / "site"))


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

    # the static search: 唱えた finds section 601 first, and the glossary entry 唱える
    page.mouse.move(0, 0)
    page.fill(".search-input", "唱えた")
    page.wait_for_selector(".search-results a", timeout=5000)
    hrefs = [a.get_attribute("href") for a in page.locator(".search-results a").all()]
    assert hrefs[0] == "../cr/601.html" and "../glossary/唱える.html" in hrefs  # the section, then the term
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
    from kb.store import NodeKey
    from kb.urls.paths import url_for

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


def test_japanese_text_renders_with_a_japanese_font(browser, base_url, sub_site):
    """Fails when Japanese renders as boxes (tofu: no Japanese font installed): the font Chromium actually used for a
    Japanese heading is a CJK font with a glyph for every character, and 唱, え and る draw differently (missing glyphs
    all draw the same box)."""
    page = browser.new_page()
    page.goto(f"{base_url}/glossary/%E5%94%B1%E3%81%88%E3%82%8B.html")
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument")["root"]["nodeId"]
    heading = cdp.send("DOM.querySelector", {"nodeId": root, "selector": "h1"})["nodeId"]
    fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": heading})["fonts"]
    assert page.locator("h1").evaluate("h => h.firstChild.textContent.trim()") == "唱える"
    japanese = [f for f in fonts if "CJK" in f["familyName"] or "JP" in f["familyName"] or "Gothic" in f["familyName"]]
    assert japanese and sum(f["glyphCount"] for f in japanese) >= 3, f"唱える drawn with {fonts}: boxes, not Japanese"
    glyphs = page.evaluate("""() => {
        const canvas = document.createElement("canvas");
        canvas.width = canvas.height = 64;
        const g = canvas.getContext("2d");
        g.font = "48px " + getComputedStyle(document.body).fontFamily;
        return ["唱", "え", "る", "\\u0378"].map(ch => {
            g.clearRect(0, 0, 64, 64);
            g.fillText(ch, 4, 52);
            return {width: g.measureText(ch).width, pixels: Array.from(g.getImageData(0, 0, 64, 64).data).join()};
        });
    }""")
    shapes = [g["pixels"] for g in glyphs[:3]]
    assert len(set(shapes)) == 3, "Japanese characters all draw the same shape: boxes"
    assert glyphs[3]["pixels"] not in shapes  # and none of them is the box of a character no font has
    page.close()


def test_walk_glossary_wiki_card_note_and_back(browser, base_url, sub_site):
    """A reader's walk through every kind of page, each one tap away, then back the same way with the browser's back."""
    ARTIFACTS.mkdir(exist_ok=True)
    outside: list[str] = []
    page, errors = open_page(browser, 1280, outside, base_url.rsplit("/", 1)[0])
    page.goto(f"{base_url}/glossary/index.html")
    visited = [page.url]

    def step(locator, url_part: str) -> None:
        locator.click()
        page.wait_for_url(f"**{url_part}")
        visited.append(page.url)

    step(page.locator("ul.columns a", has_text="唱える").first, "/glossary/%E5%94%B1%E3%81%88%E3%82%8B.html")
    step(page.locator("p.see-also a"), "/wiki/%E5%94%B1%E3%81%88%E3%82%8B.html")  # the article of the same name
    article = page.locator("div.article")
    step(article.locator("a", has_text="定義").first, "#%E5%AE%9A%E7%BE%A9")  # an in-page section link
    assert page.evaluate("document.getElementById('定義').getBoundingClientRect().top") < 200  # scrolled to it
    step(article.locator("sup a", has_text="[1]"), "#cite_note-1")  # a footnote
    assert "Magic Origins" in page.locator('[id="cite_note-1"]').inner_text()
    step(article.locator('[id="cite_note-1"] a', has_text="↑"), "#cite_ref-1")  # and back up to the text
    step(article.locator("a.ref-term", has_text="総コスト").first, "/glossary/%E7%B7%8F%E3%82%B3%E3%82%B9%E3%83%88.html")
    page.go_back()
    visited.pop()
    step(article.locator("a.ref-card", has_text="ドライアドの東屋").first, "/cards/dryad-arbor.html")
    assert "唱える" in page.locator("ul.mentions").inner_text()  # where the card is mentioned, with the sentence
    page.screenshot(path=str(ARTIFACTS / "walk-card-1280.png"), full_page=True)
    step(page.locator(".crumbs a", has_text="カード"), "/cards/index.html")
    step(page.locator("a.ref-card", has_text="セジーリの防護"), f"/cards/{quote('セジーリの防護')}.html")
    step(page.locator("ul.mentions a").first, f"/notes/{quote('ゼンディカーの夜明け_両面カード')}.html")
    assert page.locator("h1").inner_text() == "両面カードに関する一般的な情報"
    page.screenshot(path=str(ARTIFACTS / "walk-note-1280.png"), full_page=True)
    step(page.locator("a.ref-card", has_text="セジーリの氷河").first, f"/cards/{quote('セジーリの氷河')}.html")
    for expected in reversed(visited[:-1]):  # back, the same way
        page.go_back()
        assert page.url == expected
    assert errors == [] and outside == []
    page.close()


@pytest.mark.parametrize("width", [1280, 375])
def test_lists_never_run_into_the_next_column(browser, base_url, sub_site, width):
    """Multi-column lists: between the text of an item and the bullet of an item in the next column to its right there
    is always a clear gap (an outside list marker hangs 1em left of its item), at every width."""
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": width, "height": 900})
    for path in ("glossary/index.html", "cards/index.html", "index.html"):
        page.goto(f"{base_url}/{path}")
        collisions = page.evaluate("""() => {
            const out = [];
            for (const ul of document.querySelectorAll("ul.columns")) {
                const items = [...ul.children].map(li => {
                    const style = getComputedStyle(li), range = document.createRange();
                    range.selectNodeContents(li);
                    const rects = [...range.getClientRects()], box = li.getBoundingClientRect();
                    const outside = style.listStyleType !== "none" && style.listStylePosition === "outside";
                    return {text: li.textContent, top: box.top, bottom: box.bottom, left: box.left,
                            bulletLeft: box.left - (outside ? parseFloat(style.fontSize) : 0),
                            textRight: Math.max(...rects.map(r => r.right))};
                });
                for (const a of items) {
                    for (const b of items) {
                        const rows = a.top < b.bottom && b.top < a.bottom;
                        if (b.left > a.left + 1 && rows && b.bulletLeft - a.textRight < 8) { out.push(a.text + " | " + b.text); }
                    }
                }
            }
            return out;
        }""")
        assert collisions == [], (path, collisions)
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.screenshot(path=str(ARTIFACTS / f"columns-{path.replace('/', '-')[:-5]}-{width}.png"), full_page=True)
    page.close()


def test_touch_first_tap_previews_second_tap_follows(browser, base_url, sub_site):
    """On a touch-emulated phone: the first tap on a reference shows its preview (the page stays), a second tap on it
    follows it; the preview's own link follows too."""
    ARTIFACTS.mkdir(exist_ok=True)
    context = browser.new_context(viewport={"width": 375, "height": 740}, has_touch=True, is_mobile=True,
                                  device_scale_factor=2)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{base_url}/cr/601.html")
    term = page.locator('[id="601.2"] a.ref-term', has_text="唱える").first
    term.scroll_into_view_if_needed()
    before = page.url
    term.tap()
    page.wait_for_function("() => { const p = document.querySelector('.preview');"
                           " return p && p.textContent.startsWith('唱える') && p.textContent.includes('手札'); }",
                           timeout=3000)
    assert page.url == before
    box = page.locator(".preview").bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 375 + 1
    page.screenshot(path=str(ARTIFACTS / "touch-preview-375.png"))
    term.tap()  # the second tap follows the reference
    page.wait_for_url("**/glossary/%E5%94%B1%E3%81%88%E3%82%8B.html")

    page.goto(f"{base_url}/wiki/%E5%94%B1%E3%81%88%E3%82%8B.html")
    card = page.locator("div.article a.ref-card", has_text="ドライアドの東屋").first
    card.scroll_into_view_if_needed()
    before = page.url
    card.tap()
    page.wait_for_function("() => { const p = document.querySelector('.preview');"
                           " return p && p.textContent.includes('ドライアドの東屋') && !p.textContent.includes('…開く'); }",
                           timeout=3000)
    assert page.url == before
    page.screenshot(path=str(ARTIFACTS / "touch-card-preview-375.png"))
    page.locator(".preview a.go").tap()  # the preview's link follows it
    page.wait_for_url("**/cards/dryad-arbor.html")
    page.screenshot(path=str(ARTIFACTS / "card-375.png"), full_page=True)
    assert errors == []
    context.close()
