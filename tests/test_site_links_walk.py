"""Every link that can stay inside the site does (issue 25 item 3): a walk of every page of the realistic site (data/,
the MTG Wiki page 接死 and the three English CRs) reads each link as a browser would (lxml, not the builder's own
link check) and fails on a relative link to no file or no anchor, and on a link to mtgwiki.com or Wisdom Guild whose
target the site holds (a rule, a glossary term, an article, a card); English glossary URLs reach their term.
Quick tests check the rewriting itself on hand-made article HTML."""

from __future__ import annotations

import marshal
import re
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urljoin, urlsplit

import pytest
from lxml import html as lxml_html

from ingest.wgurl import INDEX, RULE, TERM, WgTarget, wisdom_guild_target
from ingest.wikititle import WIKI_HOSTS, parse_wiki_href, split_card_name
from kb.model import REF_RULE
from kb.site.linkcheck import LINKED_BY_NONE
from kb.site.manifest import load_manifest
from kb.site.render import article_html
from kb.urls.paths import rule_page, safe_name

_REFRESH = re.compile(r"url=(.*)$", re.I)
_ROOT = "https://site.invalid/"  # pages are joined under a made-up origin, so relative links resolve as in a browser


def _page(site: Path, path: str) -> lxml_html.HtmlElement:
    return lxml_html.fromstring((site / path).read_bytes())


def _redirect_target(site: Path, path: str) -> str | None:
    """Where a redirect page sends the reader (site-relative), None for any other page."""
    refresh = _page(site, path).xpath('//meta[@http-equiv="refresh"]/@content')
    if not refresh:
        return None
    m = _REFRESH.search(refresh[0])
    assert m, f"{path}: unreadable refresh {refresh[0]!r}"
    return _site_path(urljoin(_ROOT + path, m.group(1).strip()))


def _site_path(url: str) -> str:
    return unquote(urlsplit(url).path)[len(urlsplit(_ROOT).path):]


def _held(site: Path, candidates: list[str]) -> str | None:
    """The first candidate page the site has, followed through a redirect page (site-relative)."""
    for path in candidates:
        if (site / path).is_file():
            return _redirect_target(site, path) or path
    return None


def held_target(site: Path, url: str) -> str | None:
    """The page of this site holding what an MTG Wiki or Wisdom Guild URL names; None when the site lacks it."""
    wg: WgTarget | None = wisdom_guild_target(url)
    if wg is not None:
        if wg.kind == RULE:
            return _held(site, [rule_page(wg.name)])
        if wg.kind == TERM:
            return _held(site, [f"glossary/{safe_name(wg.name)}.html"])
        return "index.html" if wg.kind == INDEX else None
    if (urlsplit(url).hostname or "") not in WIKI_HOSTS:
        return None
    link = parse_wiki_href(url)
    if link is None:
        return None
    if link.kind == REF_RULE:
        return _held(site, [rule_page(link.target)])
    if link.target == "総合ルール":
        return _held(site, [rule_page(link.fragment)] if link.fragment else ["index.html"])
    if link.kind != "wiki":
        return None
    names = [link.target, *(split_card_name(link.target) or ())]
    return _held(site, [f"{folder}/{safe_name(name)}.html" for name in names if name
                        for folder in ("wiki", "glossary", "cards")])


def walk(site: Path) -> tuple[list[str], list[str], int]:
    """(broken internal links, outside links the site could keep, links read) over every page of ``site``."""
    pages = sorted(str(p.relative_to(site)) for p in site.rglob("*.html"))
    ids: dict[str, set[str]] = {}
    links: list[tuple[str, str]] = []
    for path in pages:
        root = _page(site, path)
        ids[path] = set(root.xpath("//@id")) | set(root.xpath("//a/@name"))
        links += [(path, value) for value in root.xpath("//a/@href | //link/@href | //script/@src | //img/@src")]
    broken, outside = [], []
    for path, value in links:
        parts = urlsplit(value)
        if parts.scheme in ("http", "https"):
            held = held_target(site, value)
            # a page's own source link ("MTG Wiki で見る" on the card or article it shows) names the outside copy
            if held is not None and held != path:
                outside.append(f"{path}: {value} (the site has {held})")
            continue
        if parts.scheme or value.startswith("//"):
            continue  # mailto: and the like
        target = _site_path(urljoin(_ROOT + path, value)) if parts.path else path
        if PurePosixPath(target).suffix == "" and (site / target / "index.html").is_file():
            target = f"{target.rstrip('/')}/index.html".lstrip("/")
        if not (site / target).is_file():
            broken.append(f"{path}: {value} (no file {target})")
        elif parts.fragment and target in ids and unquote(parts.fragment) not in ids[target]:
            broken.append(f"{path}: {value} (no anchor in {target})")
    return broken, outside, len(links)


@pytest.mark.slow
def test_every_link_of_the_realistic_site_stays_inside_when_it_can(bilingual_site):
    broken, outside, checked = walk(bilingual_site)
    assert broken == []
    assert outside == []
    assert checked > 100_000


@pytest.mark.slow
def test_no_page_links_the_static_search_files_or_the_builds_records(bilingual_site):
    """What the link check takes for granted when one of those goes (kb.site.linkcheck.LINKED_BY_NONE): no file of
    the realistic site links one, by the links its build recorded."""
    records = load_manifest(bilingual_site)["files"]
    linked = {link.partition("#")[0] for record in records.values() for link in marshal.loads(record["links"])}
    assert len(linked) > 1_000
    assert [target for target in linked if target.startswith(LINKED_BY_NONE)] == []


@pytest.mark.slow
def test_english_glossary_urls_reach_the_japanese_term(bilingual_site):
    for name, term in [("state-based-actions", "状況起因処理"), ("cast", "唱える"), ("manifest", "予示"),
                       ("state--based-actions", "状況起因処理"), ("_state~2d__based-_actions", "状況起因処理")]:
        assert _redirect_target(bilingual_site, f"glossary/{name}.html") == f"glossary/{term}.html", name
        assert f"glossary/{name}.html" not in (bilingual_site / "sitemap.xml").read_text(encoding="utf-8")
    assert _redirect_target(bilingual_site, "glossary/唱える.html") is None  # the term's page itself
    # an English-only term keeps its own page; a name no term has is no page
    assert _redirect_target(bilingual_site, "glossary/state-trigger.html") is None
    assert not (bilingual_site / "glossary/no-such-term.html").exists()


@pytest.mark.slow
def test_wiki_cr_links_go_to_the_rules(bilingual_site):
    root = _page(bilingual_site, "wiki/唱える.html")
    by_text = {a.text_content(): a.get("href") for a in root.iter("a")}
    assert by_text["CR:708.4"] == "../cr/708.html#708.4"
    assert by_text["CR:601.4"] == "../cr/601.html#601.4"  # written as 総合ルール#601.4
    assert by_text["総合ルール"] == "../index.html"


RULES = {"708.4": "cr/708.html#708.4", "601.2f": "cr/601.html#601.2f"}
PAGES = {"唱える": ("glossary/唱える.html", "term"), "接死": ("wiki/接死.html", "wiki")}


def _links(html: str) -> list[tuple[str, str | None, str | None]]:
    root = lxml_html.fromstring(f"<div>{article_html(html, 'wiki/x.html', PAGES, RULES)}</div>")
    return [(a.text_content(), a.get("href"), a.get("class")) for a in root.iter("a")]


@pytest.mark.parametrize(("link", "expected"), [
    ('<a href="/wiki/CR:708.4">CR:708.4</a>', ("CR:708.4", "../cr/708.html#708.4", "ref ref-rule")),
    ('<a href="https://mtgwiki.com/wiki/CR:601.2f">x</a>', ("x", "../cr/601.html#601.2f", "ref ref-rule")),
    ('<a href="/wiki/%E7%B7%8F%E5%90%88%E3%83%AB%E3%83%BC%E3%83%AB#601.2f">x</a>',
     ("x", "../cr/601.html#601.2f", "ref ref-rule")),
    ('<a href="/wiki/%E7%B7%8F%E5%90%88%E3%83%AB%E3%83%BC%E3%83%AB">総合ルール</a>', ("総合ルール", "../index.html", None)),
    ('<a href="http://whisper.wisdom-guild.net/cr/r/708.4/">x</a>', ("x", "../cr/708.html#708.4", "ref ref-rule")),
    ('<a href="http://whisper.wisdom-guild.net/cr/cr.php?r=601.2f">x</a>', ("x", "../cr/601.html#601.2f", "ref ref-rule")),
    ('<a href="http://whisper.wisdom-guild.net/cr/glossary/%E5%94%B1%E3%81%88%E3%82%8B/">x</a>',
     ("x", "../glossary/%E5%94%B1%E3%81%88%E3%82%8B.html", "ref ref-term")),
    ('<a href="http://whisper.wisdom-guild.net/cr/">x</a>', ("x", "../index.html", None)),
    # what the site lacks stays outside: a rule it does not have, a term it does not have, an article it lacks
    ('<a href="/wiki/CR:999.9">x</a>', ("x", "https://mtgwiki.com/wiki/CR:999.9", None)),
    ('<a href="http://whisper.wisdom-guild.net/cr/r/999.9/">x</a>', ("x", "http://whisper.wisdom-guild.net/cr/r/999.9/", None)),
    ('<a href="http://whisper.wisdom-guild.net/cr/glossary/%E6%8E%A5%E6%AD%BB/">x</a>',
     ("x", "http://whisper.wisdom-guild.net/cr/glossary/%E6%8E%A5%E6%AD%BB/", None)),  # 接死 is an article, no term
    ('<a href="/wiki/%E7%9E%AC%E9%80%9F">x</a>', ("x", "https://mtgwiki.com/wiki/%E7%9E%AC%E9%80%9F", None)),
])
def test_article_links_naming_what_the_site_has_stay_inside(link, expected):
    (text, url, cls), = _links(f"<p>{link}</p>")
    assert (text, url, cls if cls else None) == expected


def test_wisdom_guild_urls_name_rules_terms_and_the_index():
    assert wisdom_guild_target("http://whisper.wisdom-guild.net/cr/r/601.2F/") == WgTarget(RULE, "601.2f")
    assert wisdom_guild_target("https://whisper.wisdom-guild.net/cr/r/7/") == WgTarget(RULE, "7")
    assert wisdom_guild_target("http://whisper.wisdom-guild.net/cr/glossary/%E4%BA%88%E7%A4%BA/") == WgTarget(TERM, "予示")
    assert wisdom_guild_target("http://whisper.wisdom-guild.net/cr/") == WgTarget(INDEX, "")
    for other in ("http://www.wisdom-guild.net/", "http://whisper.wisdom-guild.net/cr/r/abc/",
                  "http://whisper.wisdom-guild.net/card/x/", "/cr/r/601/", "javascript:alert(1)", "http://[::1"):
        assert wisdom_guild_target(other) is None, other


def test_the_walk_finds_what_leaves_the_site_and_what_is_broken(tmp_path):
    """The walker itself, on a small hand-made site: each kind of fault found, the source link and real outside
    links left alone."""
    pages = {
        "index.html": '<a href="cr/708.4.html#708.4">ok</a><a href="https://mtgwiki.com/wiki/CR:708.4">out</a>',
        "cr/708.4.html": '<p id="708.4">rule</p><a href="https://mtgwiki.com/wiki/CR:708.4">its own source</a>',
        "glossary/唱える.html": "<p>term</p>",
        "glossary/cast.html": '<meta http-equiv="refresh" content="0; url=%E5%94%B1%E3%81%88%E3%82%8B.html">',
        "cards/dryad-arbor.html": '<a href="https://mtgwiki.com/wiki/Dryad_Arbor">MTG Wiki で見る</a>',
        "wiki/a.html": ('<a href="https://mtgwiki.com/wiki/Cast">term</a>'
                        '<a href="http://whisper.wisdom-guild.net/cr/r/708.4/">wg</a>'
                        '<a href="https://mtgwiki.com/wiki/%E3%83%89%E3%83%A9%E3%82%A4%E3%82%A2%E3%83%89%E3%81%AE%E6%9D%B1'
                        '%E5%B1%8B/Dryad_Arbor">card</a>'
                        '<a href="https://mtgwiki.com/wiki/Unknown_Page">fine</a><a href="https://example.org/">fine</a>'
                        '<a href="../cr/708.4.html#nope">anchor</a><a href="../cr/999.html">file</a>'
                        '<a href="mailto:x@example.org">fine</a>'),
    }
    for path, body in pages.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(f"<!doctype html><html><body>{body}</body></html>", encoding="utf-8")
    broken, outside, checked = walk(tmp_path)
    assert broken == ["wiki/a.html: ../cr/708.4.html#nope (no anchor in cr/708.4.html)",
                      "wiki/a.html: ../cr/999.html (no file cr/999.html)"]
    assert [line.split(" (the site has ")[1] for line in outside] == [
        "cr/708.4.html)", "glossary/唱える.html)", "cr/708.4.html)", "cards/dryad-arbor.html)"]
    assert checked == 12


def test_in_chromium_english_glossary_urls_and_wiki_cr_links_land_on_the_site(browser, bilingual_site):
    """Over a real HTTP server on 127.0.0.1: the redirect pages take the reader to the term (with the hash kept), and
    the article's CR:708.4 link to the rule."""
    import functools
    import http.server
    import threading
    from urllib.parse import unquote as decoded

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(bilingual_site)))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    root = f"http://127.0.0.1:{srv.server_address[1]}/"
    page = browser.new_page()
    try:
        for name, term in [("cast", "唱える"), ("state-based-actions", "状況起因処理"), ("manifest", "予示")]:
            page.goto(f"{root}glossary/{name}.html#top")
            page.wait_for_url(lambda url, term=term: decoded(url) == f"{root}glossary/{term}.html#top")
        page.goto(f"{root}wiki/唱える.html")
        page.locator("a", has_text="CR:708.4").first.click()
        page.wait_for_url("**/cr/708.html#708.4")
        assert page.locator("[id='708.4']").is_visible()
    finally:
        page.close()
        srv.shutdown()
        srv.server_close()


def test_english_redirects_never_take_a_page_or_a_shared_name():
    """On hand-made entries: a Japanese-named term gets its English URLs; a path where a page of the site is, or that
    two English names claim, gets no redirect."""
    from kb.model import GLOSSARY, Node
    from kb.site.records import Entry, SiteData
    from kb.site.redirects import english_redirect_pages

    def term(label: str, url: str, english: str | None = None) -> Entry:
        nodes = {"ja" if english else "en": Node(f"gl:{label}", GLOSSARY, "ja" if english else "en", "1", title=label,
                                                 english=english)}
        if english:
            nodes["en"] = Node(f"gl:{english}", GLOSSARY, "en", "2", title=english)
        return Entry(f"gl:{label}", GLOSSARY, url, label, nodes)

    site = SiteData()
    for entry in [term("唱える", "glossary/唱える.html", "Cast"),
                  term("Priority", "glossary/priority.html"), term("優先権", "glossary/優先権.html", "Priority"),
                  term("裏向き", "glossary/裏向き.html", "Face Down"), term("裏向きの", "glossary/裏向きの.html", "Face Down")]:
        site.terms[entry.id] = entry
    made = {page.path: page.context["target"] for page in english_redirect_pages(site)}
    assert made == {"glossary/cast.html": "glossary/唱える.html", "glossary/_cast.html": "glossary/唱える.html"}
    assert all(not page.in_sitemap for page in english_redirect_pages(site))
