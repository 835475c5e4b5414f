"""Reading and navigating the sample site in real headless Chromium, at 375 px (a phone, with touch) and 1280 px: every
jump lands with its target below the sticky header, previews stay inside the window wherever the reference is, the
header's menu, a long page's own contents, previous/next links, and the search page (one box, a count, no request for
a file that is not there). Served by a local http.server on 127.0.0.1; screenshots go to test-artifacts/."""

from __future__ import annotations

import functools
import http.server
import threading
from urllib.parse import quote

import pytest
from conftest import ARTIFACTS

WIDTHS = [375, 1280]


@pytest.fixture(scope="module")
def served(data_site):
    """``data_site`` (the sample's site, no broken link) served read-only; what was asked and is not there."""
    missing: list[str] = []

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def send_error(self, code, message=None, explain=None):
            missing.append(self.path)
            super().send_error(code, message, explain)

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(data_site)))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}", missing
    srv.shutdown()
    srv.server_close()


def new_page(browser, width: int, height: int = 800):
    """A page at ``width``: at 375 a touch phone (taps, not hovers), else a desktop with a mouse."""
    phone = width < 500
    context = browser.new_context(viewport={"width": width, "height": height}, has_touch=phone, is_mobile=phone)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    return page, errors


HEADER_BOTTOM = "document.querySelector('.site-header').getBoundingClientRect().bottom"


def assert_visible_below_header(page, number: str) -> None:
    """The rule's number is drawn below the sticky header, inside the window: the element at its centre is the number."""
    seen = page.evaluate("""(id) => {
        const el = document.getElementById(id), num = el.querySelector('.num') || el, r = num.getBoundingClientRect();
        const header = document.querySelector('.site-header').getBoundingClientRect();
        const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
        return {top: r.top, bottom: r.bottom, header: header.bottom, height: innerHeight, hit: !!hit && num.contains(hit)};
    }""", number)
    assert seen["top"] >= seen["header"] and seen["bottom"] <= seen["height"] and seen["hit"], (number, seen)


@pytest.mark.parametrize("width", WIDTHS)
def test_every_jump_lands_below_the_sticky_header(browser, served, width):
    base, _ = served
    page, errors = new_page(browser, width)
    page.goto(f"{base}/cr/601.html#601.2f")  # a link from outside (a search result, a rule page's link)
    assert_visible_below_header(page, "601.2f")
    page.locator('[id="601.2"] a.ref', has_text="601.2a-d").click()  # a rule link inside the page
    page.wait_for_url("**/cr/601.html#601.2a")
    assert_visible_below_header(page, "601.2a")
    page.goto(f"{base}/index.html")  # a rule number typed in the header's search box
    page.fill(".search-input", "601.3b")
    page.press(".search-input", "Enter")
    page.wait_for_url("**/cr/601.html#601.3b")
    assert_visible_below_header(page, "601.3b")
    page.fill(".search-input", "総コスト")  # a hit of the header's dropdown, on the same page
    page.wait_for_selector('.search-results a[href$="601.html#601.2f"]', timeout=5000)
    page.locator('.search-results a[href$="601.html#601.2f"]').first.click()
    page.wait_for_url("**/cr/601.html#601.2f")
    assert_visible_below_header(page, "601.2f")
    header = page.evaluate("document.querySelector('.site-header').getBoundingClientRect().height")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"jump-601.2f-{width}.png"))
    assert header > 40 and errors == []
    page.context.close()


def open_preview(page, link, phone: bool) -> dict:
    """Hover (or tap, on a phone) ``link``; wait for the preview's text; its box and the window's."""
    if phone:
        link.tap()
    else:
        link.hover()
    page.wait_for_function("() => { const p = document.querySelector('.preview');"  # its text arrived (not '…')
                           " return p && p.children[1].textContent.length > 20; }", timeout=4000)
    page.wait_for_timeout(50)
    return page.evaluate("""() => {
        const p = document.querySelector('.preview').getBoundingClientRect();
        return {left: p.left, right: p.right, top: p.top, bottom: p.bottom, width: p.width,
                header: document.querySelector('.site-header').getBoundingClientRect().bottom,
                vw: document.documentElement.clientWidth, vh: innerHeight};
    }""")


@pytest.mark.parametrize("where", ["top", "bottom"])
@pytest.mark.parametrize("width", WIDTHS)
def test_previews_stay_inside_the_window(browser, served, width, where):
    """A reference just below the header and one at the window's bottom edge: the whole preview is inside the window
    (below the header), and on a phone it is not squeezed into the space right of the reference."""
    base, _ = served
    page, errors = new_page(browser, width)
    page.goto(f"{base}/cr/601.html")
    phone = width < 500
    links = page.locator(".rule a.ref-rule, .rule a.ref-term")
    checked = 0
    for i in range(min(links.count(), 6)):
        link = links.nth(i)
        # scroll so that the reference sits right below the header (top) or on the window's last line (bottom)
        page.evaluate("""([el, where]) => {
            const r = el.getBoundingClientRect(), header = document.querySelector('.site-header').getBoundingClientRect();
            window.scrollBy(0, where === 'top' ? r.top - header.bottom - 4 : r.bottom - innerHeight + 4);
        }""", [link.element_handle(), where])
        box = open_preview(page, link, phone)
        assert box["left"] >= 0 and box["right"] <= box["vw"] + 0.5, box
        assert box["top"] >= box["header"] - 0.5 and box["bottom"] <= box["vh"] + 0.5, box
        if phone:
            assert box["width"] >= 0.8 * box["vw"], box  # as wide as the phone allows for a long text
        checked += 1
        page.keyboard.press("Escape")
        if phone:
            page.locator("h1").tap()  # a tap elsewhere closes it
        page.wait_for_function("() => !document.querySelector('.preview')", timeout=2000)
    ARTIFACTS.mkdir(exist_ok=True)
    box = open_preview(page, links.nth(0), phone)
    page.screenshot(path=str(ARTIFACTS / f"preview-{where}-{width}.png"))
    assert checked >= 3 and errors == []
    page.context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_menu_contents_and_previous_next(browser, served, width):
    base, _ = served
    page, errors = new_page(browser, width)
    phone = width < 500
    page.goto(f"{base}/cr/601.2f.html")
    assert page.locator("h1").inner_text() == "601.2f 呪文を唱えること"
    assert page.locator(".crumbs > :last-child").inner_text() == "601.2f"
    assert page.locator(".crumbs a", has_text="文脈で読む").count() == 0
    page.locator(".pager-next").click()  # the next rule of its level, then back with the previous link
    page.wait_for_url("**/cr/601.2g.html")
    page.locator(".pager-prev").click()
    page.wait_for_url("**/cr/601.2f.html")

    # the header's menu: the chapters and the glossary, inside the window, closed by a tap elsewhere
    menu = page.locator(".site-header .menu")
    menu.locator("summary").click()
    panel = menu.locator(".menu-panel")
    labels = panel.locator("a").all_inner_texts()
    assert labels[:3] == ["1. ゲームの考え方", "6. 呪文、能力、効果", "7. その他のルール"] and "用語集" in labels
    box = panel.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= width + 0.5
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"menu-{width}.png"))
    page.locator(".pager").dispatch_event("click")  # a tap elsewhere (under the panel, on a phone) closes it
    assert not menu.evaluate("d => d.open")
    menu.locator("summary").click()
    page.keyboard.press("Escape")  # so does Escape
    assert not menu.evaluate("d => d.open")
    menu.locator("summary").click()
    panel.locator("a", has_text="6. 呪文、能力、効果").click()
    page.wait_for_url("**/cr/6.html")

    # a long page's own contents: beside the text and sticky on a wide screen, closed until tapped on a phone
    page.goto(f"{base}/wiki/{quote('唱える')}.html")
    toc = page.locator(".page-toc details")
    assert toc.evaluate("d => d.open") is (not phone)
    if phone:
        toc.locator("summary").click()
    toc.locator("a", has_text="総コストの決定").click()
    page.wait_for_url(f"**#{quote('6.総コストの決定')}")
    heading = page.evaluate(f"document.getElementById('6.総コストの決定').getBoundingClientRect().top - {HEADER_BOTTOM}")
    assert 0 <= heading < 40, heading
    if not phone:  # still in view after the jump, beside the text
        r = toc.bounding_box()
        article = page.locator("div.article").bounding_box()
        assert r["y"] >= 0 and r["y"] < 800 and r["x"] >= article["x"] + article["width"]
        page.wait_for_function("() => (document.querySelector('.page-toc a.current') || {}).textContent === '6.総コストの決定'",
                               timeout=2000)  # the part being read is marked
    else:
        assert not toc.evaluate("d => d.open")  # closed again, so the text is in view
    page.screenshot(path=str(ARTIFACTS / f"toc-{width}.png"))
    assert page.evaluate("document.documentElement.scrollWidth") <= width and errors == []
    page.context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_search_page_one_box_a_count_and_no_missing_files(browser, served, width):
    base, missing = served
    missing.clear()
    page, errors = new_page(browser, width)
    page.goto(f"{base}/search.html?q={quote('唱える')}")
    page.wait_for_selector(".search-page-results a", timeout=5000)
    assert page.locator("input[type=search]").count() == 1
    results = page.locator(".search-page-results li").count()
    assert page.locator(".search-count").inner_text() == f"「唱える」の検索結果：{results} 件"
    button = page.locator(".search-button")
    assert button.evaluate("b => getComputedStyle(b).backgroundColor") == page.evaluate(
        "getComputedStyle(document.querySelector('.site-footer a')).color")  # the links' colour, not the default grey
    assert "総合ルール" in page.locator(".version-line").inner_text()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"search-page-{width}.png"))
    # queries whose characters have no vocabulary or name shard ask for none
    for query in ("ぬぬぬ", "xyzzy", "鬱蒼", "唱えた 総コスト"):
        page.goto(f"{base}/search.html?q={quote(query)}")
        page.wait_for_selector(".search-page-results li, p.none", timeout=5000)
    # the header's dropdown: its 8 hits, then the way to all of them
    page.goto(f"{base}/index.html")
    page.fill(".search-input", "唱える")
    page.wait_for_selector(".search-results a.all", timeout=5000)
    assert page.locator(".search-results a:not(.all)").count() == 8
    page.locator(".search-results a.all").click()
    page.wait_for_url(f"**/search.html?q={quote('唱える')}")
    assert missing == [] and errors == []
    page.context.close()
