"""kb fetch against a real HTTP server on 127.0.0.1 serving small copies of each site (tests/fixtures/fetch/).

The server logs every request it saw (arrival time, status, headers, body bytes sent), which is what the politeness,
conditional-request and resume checks count. Nothing here reaches beyond loopback.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import pairwise
from pathlib import Path
from string import Template
from urllib.parse import parse_qs, unquote

import pytest
from click.testing import CliRunner
from conftest import KB_MAIN

from ingest.net.cache import SiteCache, bytes_for_parser
from ingest.net.fetch import Politeness, crawl, fetch_url
from kb.cli import main
from kb.errors import KbError
from kb.pipeline import ingest_from_cache
from kb.store import Store

FIXTURES = Path(__file__).parent / "fixtures" / "fetch"
REPO = Path(__file__).resolve().parent.parent
JA_CR = REPO / "data" / "JPN_CR_20231117_0.txt"
LAST_MODIFIED = "Fri, 19 Apr 2024 00:00:00 GMT"
FAST = Politeness(delay=0.01, backoff_base=0.05, max_tries=3, read_timeout=5)


# -- the local site ---------------------------------------------------------------------------------------------
@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict = field(default_factory=dict)
    sleep: float = 0.0  # before answering
    length: bool = True  # send Content-Length (else close-delimited)


@dataclass
class Hit:
    path: str
    t: float
    headers: dict
    status: int = 0
    sent: int = 0


class LocalSite:
    """A threaded HTTP server. Routes map a decoded path to a Reply, a list of Replies (one per request, the last
    repeating) or a callable(query dict) → Reply. Static HTML replies get an ETag and Last-Modified and answer
    conditional requests with 304."""

    def __init__(self):
        self.routes: dict = {}
        self.log: list[Hit] = []
        self.on_request = None
        self._lock = threading.Lock()
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                hit = Hit(unquote(self.path), time.monotonic(), {k.lower(): v for k, v in self.headers.items()})
                with site._lock:
                    site.log.append(hit)
                if site.on_request and site.on_request(hit) is False:
                    self.close_connection = True  # dropped without an answer
                    return
                reply = site._reply(hit)
                try:
                    if reply.sleep:
                        time.sleep(reply.sleep)
                    self.send_response(reply.status)
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    if reply.length:
                        self.send_header("Content-Length", str(len(reply.body)))
                    else:
                        self.send_header("Connection", "close")
                        self.close_connection = True
                    hit.status, hit.sent = reply.status, len(reply.body)  # before the client can see it
                    self.end_headers()
                    self.wfile.write(reply.body)
                except (BrokenPipeError, ConnectionResetError):
                    hit.status, hit.sent = 0, 0
                    self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.block_on_close = False
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}/"

    def _reply(self, hit: Hit) -> Reply:
        path, _, query = hit.path.partition("?")
        route = self.routes.get(path)
        if route is None:
            return Reply(404, b"not found", {"Content-Type": "text/plain"})
        if callable(route):
            return route(parse_qs(query))
        if isinstance(route, list):
            seen = sum(1 for h in self.log if h.path == hit.path) - 1
            return route[min(seen, len(route) - 1)]
        etag = route.headers.get("ETag")
        if route.status == 200 and (etag and hit.headers.get("if-none-match") == etag or not etag and
                                    hit.headers.get("if-modified-since") == route.headers.get("Last-Modified")):
            return Reply(304, b"", {"ETag": etag} if etag else {})
        return route

    def page(self, path: str, body: bytes | str, content_type="text/html; charset=UTF-8", *, etag=True, **kw):
        body = body.encode() if isinstance(body, str) else body
        headers = {"Content-Type": content_type, "Last-Modified": LAST_MODIFIED}
        if etag:
            headers["ETag"] = f'"{hashlib.sha1(body).hexdigest()[:16]}"'
        self.routes[path] = Reply(200, body, headers, **kw)

    def requests(self, path: str | None = None) -> list[Hit]:
        return [h for h in self.log if path is None or h.path == path]

    def page_hits(self) -> list[Hit]:
        return [h for h in self.log if h.path != "/robots.txt"]


@pytest.fixture
def site():
    s = LocalSite()
    thread = threading.Thread(target=s.server.serve_forever, daemon=True)
    thread.start()
    yield s
    s.server.shutdown()
    s.server.server_close()


SECTION_TITLES = {600: "総則", 601: "呪文を唱えること", 700: "総則", 701: "キーワード処理", 702: "キーワード能力",
                  703: "ターン起因処理", 704: "状況起因処理", 705: "コイン投げ", 706: "サイコロを振ること",
                  707: "オブジェクトのコピー", 708: "裏向きの呪文やパーマネント"}


def wisdom_guild(site: LocalSite, sections7=range(700, 709), sections6=(600, 601)) -> set[str]:
    """Serve the rules viewer (index, chapters 6 and 7, their sections); return the rule-page paths."""
    chapter = Template((FIXTURES / "wg_chapter.html.tmpl").read_text(encoding="utf-8"))
    section = Template((FIXTURES / "wg_section.html.tmpl").read_text(encoding="utf-8"))
    site.page("/robots.txt", "User-agent: *\nDisallow: /cgi-bin/\n", "text/plain")
    site.page("/cr/", (FIXTURES / "wg_index.html").read_text(encoding="utf-8"))
    pages = set()
    for number, title, sections in ((6, "呪文、能力、効果", sections6), (7, "その他のルール", sections7)):
        links = "\n".join(f'<li><a href="/cr/r/{n}/">{n}. {SECTION_TITLES.get(n, "")}</a></li>' for n in sections)
        site.page(f"/cr/r/{number}/", chapter.substitute(chapter=number, title=title, sections=links))
        pages.add(f"/cr/r/{number}/")
        for n in sections:
            rules = ((FIXTURES / "wg_701_rules.html").read_text(encoding="utf-8") if n == 701 else
                     f'<dt id="{n}.1">{n}.1</dt>\n<dd>{SECTION_TITLES.get(n, "規則")}に関する規則。</dd>')
            site.page(f"/cr/r/{n}/", section.substitute(number=n, title=SECTION_TITLES.get(n, "規則"), chapter=number,
                                                         rules=rules))
            pages.add(f"/cr/r/{n}/")
    return pages


def gaps(hits: list[Hit]) -> list[float]:
    return [b.t - a.t for a, b in pairwise(hits)]


# -- crawling, politeness ---------------------------------------------------------------------------------------
def test_wisdom_guild_crawl_follows_chapter_and_section_pages_only(site, tmp_path):
    pages = wisdom_guild(site)
    report = crawl("wisdom-guild", [], kb_dir=tmp_path, base_url=site.base,
                   politeness=Politeness(delay=0.01, contact="mailto:kb@example.org"))
    requested = [h.path for h in site.page_hits()]
    assert sorted(requested) == sorted(pages | {"/cr/"})  # each once; no glossary, query or off-site link
    assert len(report.fetched) == len(pages) + 1 and not report.failed and not report.robots_skipped
    assert all(h.headers["user-agent"].startswith("kb/") and "mailto:kb@example.org" in h.headers["user-agent"]
               for h in site.log)
    cache = SiteCache(tmp_path, "wisdom-guild")
    roles = {e.url.removeprefix(site.base.rstrip("/")): e.role for e in cache.entries()}
    assert roles["/cr/"] == "listing" and roles["/cr/r/701/"] == "page" and len(roles) == len(pages) + 1
    entry = cache.get(site.base + "cr/r/701/")
    assert entry.status == 200 and entry.charset == "UTF-8" and entry.etag and entry.last_modified == LAST_MODIFIED
    assert "する/Manifest [a card]」場合".encode() in cache.body(entry)


def test_robots_disallow_and_crawl_delay_are_obeyed(site, tmp_path):
    wisdom_guild(site, sections7=(700, 701, 702, 703), sections6=())
    site.page("/robots.txt", "User-agent: *\nCrawl-delay: 0.3\nDisallow: /cr/r/702/\n", "text/plain")
    report = crawl("wisdom-guild", [], kb_dir=tmp_path, base_url=site.base, politeness=Politeness(delay=0.01))
    assert not site.requests("/cr/r/702/")
    assert report.robots_skipped == [site.base + "cr/r/702/"]
    page_gaps = gaps(site.page_hits())
    assert len(page_gaps) >= 5 and min(page_gaps) >= 0.29, page_gaps


def test_default_spacing_is_one_request_per_second(site, tmp_path):
    site.page("/robots.txt", "User-agent: *\nAllow: /\n", "text/plain")
    for version in ("20231117", "20230616"):
        site.page(f"/data/CR/JPN_CR_{version}_0.txt", JA_CR.read_bytes(), "text/plain; charset=UTF-8")
    result = CliRunner().invoke(main, ["--kb-dir", str(tmp_path), "fetch", "mjmj", "--base-url", site.base + "data/CR/",
                                       "20231117", "20230616"])
    assert result.exit_code == 0, result.output
    assert "fetched 2," in result.output
    assert len(site.log) == 3 and min(gaps(site.log)) >= 0.95, gaps(site.log)


def test_429_waits_for_retry_after(site, tmp_path):
    body = (FIXTURES / "mtgjp_release_notes.html").read_bytes()
    site.page("/robots.txt", "", "text/plain")
    site.routes["/reading/notes/"] = [Reply(429, b"slow down", {"Retry-After": "1", "Content-Type": "text/plain"}),
                                      Reply(200, body, {"Content-Type": "text/html; charset=UTF-8"})]
    report = crawl("mtg-jp", ["reading/notes/"], kb_dir=tmp_path, base_url=site.base, politeness=FAST)
    hits = site.requests("/reading/notes/")
    assert [h.status for h in hits] == [429, 200] and report.fetched == [site.base + "reading/notes/"]
    assert gaps(hits)[0] >= 1.0


def test_5xx_is_retried_with_backoff_then_recorded_as_failed(site, tmp_path):
    body = (FIXTURES / "mtgjp_release_notes.html").read_bytes()
    html = {"Content-Type": "text/html"}
    site.page("/robots.txt", "", "text/plain")
    site.routes["/flaky/"] = [Reply(500, b"oops", html), Reply(503, b"busy", html), Reply(200, body, html)]
    site.routes["/broken/"] = [Reply(500, b"oops", html)]
    site.page("/fine/", body)
    report = crawl("mtg-jp", ["flaky/", "broken/", "fine/"], kb_dir=tmp_path, base_url=site.base, politeness=FAST)
    assert [h.status for h in site.requests("/flaky/")] == [500, 503, 200]
    assert len(site.requests("/broken/")) == 3
    assert report.failed == {site.base + "broken/": "HTTP 500 after 3 tries"}
    assert sorted(report.fetched) == [site.base + "fine/", site.base + "flaky/"]  # the crawl went on
    assert min(gaps(site.requests("/flaky/"))) >= 0.025  # backoff_base 0.05 with ±50 % jitter


@pytest.mark.slow
def test_read_timeout_is_retried_and_then_fails(site, tmp_path):
    body = (FIXTURES / "mtgjp_release_notes.html").read_bytes()
    html = {"Content-Type": "text/html"}
    site.page("/robots.txt", "", "text/plain")
    # the timeout leaves a prompt answer time to arrive from a loaded machine (0.3 s did not, under parallel tests)
    site.routes["/slow-once/"] = [Reply(200, body, html, sleep=2.5), Reply(200, body, html)]
    site.routes["/always-slow/"] = [Reply(200, body, html, sleep=2.5)]
    politeness = Politeness(delay=0.01, backoff_base=0.01, max_tries=2, read_timeout=1.0)
    report = crawl("mtg-jp", ["always-slow/", "slow-once/"], kb_dir=tmp_path, base_url=site.base, politeness=politeness)
    assert report.failed == {site.base + "always-slow/": "read timeout after 2 tries"}
    assert report.fetched == [site.base + "slow-once/"]
    assert len(site.requests("/always-slow/")) == 2 and len(site.requests("/slow-once/")) == 2


def test_redirects_are_followed_within_the_site_only(site, tmp_path):
    wisdom_guild(site, sections7=(703, 704, 705), sections6=())
    site.routes["/cr/r/703/"] = Reply(301, b"", {"Location": "/cr/r/704/"})
    site.routes["/cr/r/705/"] = Reply(302, b"", {"Location": "http://example.invalid/cr/r/705/"})
    report = crawl("wisdom-guild", [], kb_dir=tmp_path, base_url=site.base, politeness=FAST)
    assert site.base + "cr/r/703/" in report.fetched
    entry = SiteCache(tmp_path, "wisdom-guild").get(site.base + "cr/r/703/")
    assert entry.final_url == site.base + "cr/r/704/"
    assert "leaves" in report.failed[site.base + "cr/r/705/"] and "example.invalid" in report.failed[site.base + "cr/r/705/"]


def test_non_html_and_oversized_responses_are_refused(site, tmp_path):
    wisdom_guild(site, sections7=(706, 707, 708), sections6=())
    site.page("/cr/r/706/", b'{"rule": 706}', "application/json")
    site.page("/cr/r/707/", "<html>" + "予" * 30000 + "</html>")  # ~90 KB with Content-Length
    site.page("/cr/r/708/", "<html>" + "示" * 30000 + "</html>", length=False)  # close-delimited
    politeness = Politeness(delay=0.01, max_bytes=50_000)
    report = crawl("wisdom-guild", [], kb_dir=tmp_path, base_url=site.base, politeness=politeness)
    assert report.failed[site.base + "cr/r/706/"] == "not an HTML page (Content-Type: application/json)"
    assert report.failed[site.base + "cr/r/707/"].startswith("response too large (0.1 MB")
    assert report.failed[site.base + "cr/r/708/"].startswith("response too large (over")
    assert SiteCache(tmp_path, "wisdom-guild").get(site.base + "cr/r/706/") is None

    site.page("/data/CR/JPN_CR_20231117_0.txt", "<html>error page</html>")
    report = crawl("mjmj", ["20231117"], kb_dir=tmp_path, base_url=site.base + "data/CR/", politeness=politeness)
    assert "expected a text file" in report.failed[site.base + "data/CR/JPN_CR_20231117_0.txt"]


# -- cache, conditional requests, resume ------------------------------------------------------------------------
def test_second_run_is_conditional_and_downloads_no_body(site, tmp_path):
    pages = wisdom_guild(site, sections7=(700, 701, 702, 708), sections6=())  # 701 cites 708
    site.page("/cr/r/701/", site.routes["/cr/r/701/"].body, etag=False)  # Last-Modified only
    first = crawl("wisdom-guild", [], kb_dir=tmp_path, base_url=site.base, politeness=FAST)
    assert len(first.fetched) == len(pages) + 1
    site.log.clear()
    second = crawl("wisdom-guild", [], kb_dir=tmp_path, base_url=site.base, politeness=FAST)
    assert not second.fetched and len(second.not_modified) == len(pages) + 1
    hits = site.page_hits()
    assert [(h.path, h.status, h.sent) for h in hits if h.status != 304 or h.sent] == []
    assert site.requests("/cr/r/701/")[0].headers["if-modified-since"] == LAST_MODIFIED
    assert site.requests("/cr/r/700/")[0].headers["if-none-match"] == site.routes["/cr/r/700/"].headers["ETag"]

    # A damaged entry (its body no longer matches its hash) is fetched again, unconditionally.
    cache = SiteCache(tmp_path, "wisdom-guild")
    cache._paths(site.base + "cr/r/702/")[1].write_bytes(b"half a page")
    site.log.clear()
    third = crawl("wisdom-guild", [], kb_dir=tmp_path, base_url=site.base, politeness=FAST)
    assert third.fetched == [site.base + "cr/r/702/"]
    assert "if-none-match" not in site.requests("/cr/r/702/")[0].headers


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["kill", "ctrl-c"])
def test_interrupt_then_resume_fetches_every_page_exactly_once(site, tmp_path, sig):
    pages = wisdom_guild(site, sections7=range(700, 728))
    command = [sys.executable, "-c", KB_MAIN, "--kb-dir", str(tmp_path), "fetch", "wisdom-guild",
               "--base-url", site.base, "--delay", "0.02"]
    state = {"pages": 0}

    def interrupt_midway(hit: Hit) -> bool:
        if hit.path != "/robots.txt":
            state["pages"] += 1
            if state["pages"] == 12:  # the 12th page request: stop the crawler; it never gets an answer
                os.kill(state["pid"], sig)
        return state["pages"] < 12

    site.on_request = interrupt_midway
    proc = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    state["pid"] = proc.pid
    _, stderr = proc.communicate(timeout=60)
    if sig == signal.SIGKILL:
        assert proc.returncode == -signal.SIGKILL
    else:
        assert proc.returncode == 130 and "interrupted: run the same command again to resume" in stderr
    answered_before = {h.path for h in site.page_hits() if h.status == 200}
    assert len(answered_before) == 11

    site.on_request = None
    rerun = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=60)
    assert rerun.returncode == 0, rerun.stderr
    assert f"resumed from cache {len(answered_before)}," in rerun.stdout
    served = [h.path for h in site.page_hits() if h.status == 200]
    assert sorted(served) == sorted(pages | {"/cr/"})  # every page downloaded exactly once across both runs
    assert all(h.status == 200 for h in site.page_hits() if h.path in answered_before)  # none asked again
    cache = SiteCache(tmp_path, "wisdom-guild")
    urls = [e.url for e in cache.entries()]
    assert len(urls) == len(set(urls)) == len(pages) + 1 and all(cache.body(e) for e in cache.entries())


def test_a_finished_crawl_starts_afresh_with_conditional_requests(site, tmp_path):
    wisdom_guild(site, sections7=(700,), sections6=())
    crawl("wisdom-guild", [], kb_dir=tmp_path, base_url=site.base, politeness=FAST)
    again = crawl("wisdom-guild", [], kb_dir=tmp_path, base_url=site.base, politeness=FAST)
    assert not again.resumed and len(again.not_modified) == 4  # index, chapters 6 and 7, 700


# -- encodings ----------------------------------------------------------------------------------------------------
def test_euc_jp_and_shift_jis_pages_keep_bytes_and_charset(site, tmp_path):
    from bs4 import BeautifulSoup

    html = (FIXTURES / "mtgjp_release_notes.html").read_text(encoding="utf-8")
    euc = html.encode("euc_jp")
    sjis = html.replace("<head>", '<head>\n<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">')
    site.page("/robots.txt", "", "text/plain")
    site.page("/notes/euc/", euc, "text/html; charset=EUC-JP")
    site.page("/notes/sjis/", sjis.encode("cp932"), "text/html")
    report = crawl("mtg-jp", ["notes/euc/", "notes/sjis/"], kb_dir=tmp_path, base_url=site.base, politeness=FAST)
    assert len(report.fetched) == 2
    cache = SiteCache(tmp_path, "mtg-jp")
    euc_entry, sjis_entry = cache.get(site.base + "notes/euc/"), cache.get(site.base + "notes/sjis/")
    assert cache.body(euc_entry) == euc and euc_entry.charset == "EUC-JP" and euc_entry.meta_charset is None
    assert sjis_entry.charset is None and sjis_entry.meta_charset == "Shift_JIS"
    for entry in (euc_entry, sjis_entry):
        soup = BeautifulSoup(bytes_for_parser(entry, cache.body(entry)), "lxml")
        assert soup.h2.get_text() == "両面カードに関する一般的な情報"
        assert "《セジーリの防護》" in soup.get_text()


@pytest.mark.slow
def test_wisdom_guild_euc_jp_page_ingests_from_cache(site, tmp_path):
    pytest.importorskip("ingest.wisdom_guild")
    page = (REPO / "tests" / "fixtures" / "wisdom_guild" / "cr_r_701.34_table_eucjp.html").read_bytes()
    site.page("/robots.txt", "", "text/plain")
    site.page("/cr/r/701.34/", page, "text/html; charset=EUC-JP")
    report = crawl("wisdom-guild", ["701.34"], kb_dir=tmp_path, base_url=site.base, politeness=FAST)
    assert report.fetched == [site.base + "cr/r/701.34/"]
    with Store.open(tmp_path) as store:
        ingested = ingest_from_cache(store, "wisdom-guild", kb_dir=tmp_path)
        assert not ingested.failed and ingested.stored == 1
        texts = {n.id: n.text for n in store.nodes()}
    assert "予示" in texts["cr:701.34a"]


# -- ingest from the cache, kb ingest URL -------------------------------------------------------------------------
def test_ingest_from_cache_parses_only_changed_pages(site, tmp_path):
    site.page("/robots.txt", "", "text/plain")
    site.page("/data/CR/JPN_CR_20231117_0.txt", JA_CR.read_bytes(), "text/plain; charset=UTF-8")
    crawl("mjmj", ["20231117"], kb_dir=tmp_path, base_url=site.base + "data/CR/", politeness=FAST)
    runner = CliRunner()
    first = runner.invoke(main, ["--kb-dir", str(tmp_path), "ingest", "--from-cache", "mjmj", "-q"])
    assert first.exit_code == 0, first.output
    assert "sources: 1 read (1 stored, 0 unchanged)" in first.output
    second = runner.invoke(main, ["--kb-dir", str(tmp_path), "ingest", "--from-cache", "-q"])
    assert "sources: 1 read (0 stored, 1 unchanged)" in second.output

    changed = JA_CR.read_text(encoding="utf-8").replace("予示する", "予示する（改訂）", 1).encode()
    site.page("/data/CR/JPN_CR_20231117_0.txt", changed, "text/plain; charset=UTF-8")
    report = crawl("mjmj", ["20231117"], kb_dir=tmp_path, base_url=site.base + "data/CR/", politeness=FAST)
    assert len(report.fetched) == 1
    with Store.open(tmp_path) as store:
        third = ingest_from_cache(store, "mjmj", kb_dir=tmp_path)
        assert len(third.documents) == 1 and third.stored == 1
        assert any("予示する（改訂）" in n.text for n in store.nodes())


def test_ingest_from_cache_names_a_site_with_nothing_cached(tmp_path):
    with Store.open(tmp_path) as store, pytest.raises(KbError, match="nothing cached for 'mtgwiki'"):
        ingest_from_cache(store, "mtgwiki", kb_dir=tmp_path)


@pytest.mark.slow
def test_kb_ingest_url_fetches_politely_through_the_cache(site, tmp_path):
    site.page("/robots.txt", "User-agent: *\nDisallow: /private/\n", "text/plain")
    site.page("/files/JPN_CR_20231117_0.txt", JA_CR.read_bytes(), "text/plain; charset=UTF-8")
    site.page("/private/JPN_CR_20231117_0.txt", JA_CR.read_bytes(), "text/plain")
    runner = CliRunner()
    env = {"KB_HOME": str(tmp_path)}
    result = runner.invoke(main, ["ingest", "-q", site.base + "files/JPN_CR_20231117_0.txt"], env=env)
    assert result.exit_code == 0, result.output
    assert "sources: 1 read (1 stored" in result.output
    assert [h.path for h in site.log] == ["/robots.txt", "/files/JPN_CR_20231117_0.txt"]
    host_cache = SiteCache(tmp_path, f"127.0.0.1_{site.server.server_address[1]}")
    assert [e.url for e in host_cache.entries()] == [site.base + "files/JPN_CR_20231117_0.txt"]
    assert fetch_url(site.base + "files/JPN_CR_20231117_0.txt", kb_dir=tmp_path) == JA_CR.read_bytes()
    assert site.log[-1].status == 304

    blocked = runner.invoke(main, ["ingest", site.base + "private/JPN_CR_20231117_0.txt"], env=env)
    assert blocked.exit_code == 1 and "disallowed by the site's robots.txt" in blocked.output
    assert not site.requests("/private/JPN_CR_20231117_0.txt")


# -- MTG Wiki --------------------------------------------------------------------------------------------------------
WIKI_LINKED = ["キーワード処理", "呪文", "スタック", "コスト", "総合ルール", "ドライアドの東屋"]


def mtgwiki(site: LocalSite) -> None:
    article = Template((FIXTURES / "mw_article.html.tmpl").read_text(encoding="utf-8"))
    site.page("/robots.txt", "User-agent: *\nDisallow: /index.php\nDisallow: /wiki/特別:\n", "text/plain")
    site.page("/wiki/唱える", article.substitute(title="唱える",
                                                content=(FIXTURES / "mw_cast_content.html").read_text(encoding="utf-8")))
    for title in WIKI_LINKED:
        site.page(f"/wiki/{title}", article.substitute(title=title, content=f"<p><b>{title}</b>の記事。</p>"))

    def category(query):
        members = ([{"ns": 0, "title": "唱える"}, {"ns": 14, "title": "カテゴリ:下位"}, {"ns": 0, "title": "呪文"}]
                   if "cmcontinue" not in query else [{"ns": 0, "title": "スタック"}])
        data = {"query": {"categorymembers": members}}
        if "cmcontinue" not in query:
            data["continue"] = {"cmcontinue": "page|30b930bf30c330af|42", "continue": "-||"}
        return Reply(200, json.dumps(data, ensure_ascii=False).encode(), {"Content-Type": "application/json"})

    site.routes["/api.php"] = category


def test_mtgwiki_titles_file_and_depth_follow_article_links_only(site, tmp_path):
    mtgwiki(site)
    titles = tmp_path / "titles.txt"
    titles.write_text("# seeds\n唱える\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["--kb-dir", str(tmp_path), "fetch", "mtgwiki", "--base-url", site.base,
                                       "--delay", "0.01", "--titles-file", str(titles), "--depth", "1"])
    assert result.exit_code == 0, result.output
    requested = sorted(h.path for h in site.page_hits())
    assert requested == sorted(["/wiki/唱える"] + [f"/wiki/{t}" for t in WIKI_LINKED])
    assert "fetched 7," in result.output


def test_mtgwiki_category_lists_members_through_the_api(site, tmp_path):
    mtgwiki(site)
    report = crawl("mtgwiki", ["カテゴリ:ルール用語"], kb_dir=tmp_path, base_url=site.base, politeness=FAST)
    api_hits = [h for h in site.log if h.path.startswith("/api.php")]
    assert len(api_hits) == 2 and "cmcontinue=page|30b930bf30c330af|42" in api_hits[1].path
    pages = sorted(h.path for h in site.page_hits() if not h.path.startswith("/api.php"))
    assert pages == ["/wiki/スタック", "/wiki/呪文", "/wiki/唱える"]  # depth 0: no links followed
    assert len(report.fetched) == 5


def test_mtgwiki_pages_ingest_from_cache(site, tmp_path):
    pytest.importorskip("ingest.mtgwiki")
    mtgwiki(site)
    crawl("mtgwiki", ["唱える"], kb_dir=tmp_path, base_url=site.base, politeness=FAST)
    with Store.open(tmp_path) as store:
        report = ingest_from_cache(store, "mtgwiki", kb_dir=tmp_path)
        assert not report.failed and report.stored == 1
        nodes = {n.id: n for n in store.nodes()}
    assert "呪文を唱えるとは" in nodes["wiki:唱える"].text


def test_euc_jp_release_notes_ingest_from_cache(site, tmp_path):
    pytest.importorskip("ingest.release_notes")
    euc = (FIXTURES / "mtgjp_release_notes.html").read_text(encoding="utf-8").encode("euc_jp")
    site.page("/robots.txt", "", "text/plain")
    site.page("/reading/notes/", euc, "text/html; charset=EUC-JP")  # the header is the only charset given
    crawl("mtg-jp", ["reading/notes/"], kb_dir=tmp_path, base_url=site.base, politeness=FAST)
    with Store.open(tmp_path) as store:
        report = ingest_from_cache(store, "mtg-jp", kb_dir=tmp_path)
        assert not report.failed and report.stored == 1
        text = "\n".join(n.text for n in store.nodes())
    assert "両面カードの各面は、それ自体の一連の特性" in text


def test_a_crawl_can_be_repeated_from_its_recorded_seeds(site, tmp_path):
    """kb update re-crawls from the seed URLs in state.json; a category seed must stay a listing."""
    mtgwiki(site)
    crawl("mtgwiki", ["カテゴリ:ルール用語", "唱える"], kb_dir=tmp_path, base_url=site.base, politeness=FAST)
    spec = SiteCache(tmp_path, "mtgwiki").load_state().spec
    again = crawl("mtgwiki", spec["seeds"], kb_dir=tmp_path, base_url=spec["base"], politeness=FAST)
    assert not again.failed and len(again.not_modified) == 3  # the three member articles
    assert len(again.fetched) == 2 and all("/api.php?" in url for url in again.fetched)  # no validators: re-read
