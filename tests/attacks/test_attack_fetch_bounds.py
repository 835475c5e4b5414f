"""Issue 21, finding 11, against real servers on 127.0.0.1: a redirect to ``ftp:``/``javascript:``/``data:`` or a
scheme-relative URL ended in ``internal error: InvalidURL``; a redirect, a seed or a discovered link with ``%2e%2e``
left the base folder; a non-ASCII ETag made every later conditional fetch fail with ``UnicodeEncodeError``; an
``api.php`` handing out a new ``cmcontinue`` forever was followed forever; a capped Crawl-delay was said only at the
end of the crawl."""

from __future__ import annotations

import json
import threading
import time
from urllib.parse import parse_qs, urlsplit

import pytest
from hostile import kb, kb_process
from test_attack_fetch import PAGE, ROBOTS_OK, RawServer, reply

from ingest.net.fetch import Politeness, crawl, fetch_url
from ingest.net.sites import PROFILES, Target, canonical_url
from kb.errors import KbError

FAST = Politeness(delay=0, max_tries=1)
HTML = ["Content-Type: text/html; charset=UTF-8"]


def _robots_then(answer):
    def serve(path, conn):
        if path == "/robots.txt":
            return reply(conn, body=ROBOTS_OK, headers=["Content-Type: text/plain"])
        return answer(path, conn)
    return serve


@pytest.mark.parametrize("location", ["ftp://127.0.0.1/x", "javascript:alert(1)", "data:text/html,<p>x</p>",
                                      "//[::1", "http://[::1/x", "mailto:a@b.c"])
def test_a_redirect_off_http_fails_the_url_in_one_line(tmp_path, location):
    server = RawServer(_robots_then(lambda path, conn: reply(conn, "302 Found", headers=[f"Location: {location}"])))
    fetched = kb(tmp_path / "kb", "fetch", "mtg-jp", "a/", "--base-url", server.base, "--delay", "0", "--tries", "1")
    ingested = kb(tmp_path / "kb", "ingest", server.base + "b.html")
    server.close()
    for run in (fetched, ingested):
        assert run.returncode == 1, run.stderr
        assert "internal error" not in run.stderr and "Traceback" not in run.stderr
    for run, url in ((fetched, server.base + "a/"), (ingested, server.base + "b.html")):
        failure = [line for line in run.stderr.splitlines() if url in line]
        assert len(failure) == 1 and "not followed" in failure[0], run.stderr
    assert [p for p, _ in server.log if p != "/robots.txt"] == ["/a/", "/b.html"]


@pytest.mark.parametrize("dots", ["%2e%2e", "%2E%2E", ".%2e", "%2e.", ".."])
def test_dot_segments_never_leave_the_base_folder(tmp_path, dots):
    def answer(path, conn):
        if path == "/docs/jump/":
            return reply(conn, "301 Moved Permanently", headers=[f"Location: /docs/{dots}/secret.html"])
        reply(conn, body=PAGE, headers=HTML)

    server = RawServer(_robots_then(answer))
    base = server.base + "docs/"
    with pytest.raises(KbError, match="outside the crawl's base URL"):
        crawl("mtg-jp", [f"{dots}/secret.html"], kb_dir=tmp_path, base_url=base, politeness=FAST)
    with pytest.raises(KbError, match="outside the crawl's base URL"):
        crawl("mtg-jp", [f"{base}{dots}/secret.html"], kb_dir=tmp_path, base_url=base, politeness=FAST)
    report = crawl("mtg-jp", ["jump/"], kb_dir=tmp_path, base_url=base, politeness=FAST)
    server.close()
    assert report.failed == {base + "jump/": f"redirect to {server.base}secret.html leaves {base}; not followed"}
    assert all(p.startswith("/docs/") for p, _ in server.log if p != "/robots.txt"), server.log


def test_a_discovered_link_with_dot_segments_is_not_followed():
    base = canonical_url("http://127.0.0.1:9/wg/")
    body = (b'<html><body><a href="/wg/cr/r/%2e%2e/%2e%2e/../admin/r/601/">x</a>'
            b'<a href="/wg/cr/r/601/">ok</a></body></html>')
    found = PROFILES["wisdom-guild"].discover(Target(base + "cr/"), base + "cr/", body, base, None)
    assert [t.url for t in found] == [base + "cr/r/601/"]


def test_canonical_urls_have_no_dot_segments():
    assert canonical_url("http://h/docs/%2e%2e/x") == "http://h/x"
    assert canonical_url("http://h/a/./b/%2E/c/../d") == "http://h/a/b/d"
    assert canonical_url("http://h/a/..%2f..%2fx") == "http://h/x"  # the canonical URL unescapes slashes, then resolves
    assert canonical_url("http://h/../../x") == "http://h/x"
    assert canonical_url("http://h/wiki/A..B") == "http://h/wiki/A..B"


@pytest.mark.parametrize("etag", ['"caf\xe9"'.encode("latin-1"), '"唱える"'.encode()])
def test_a_non_ascii_etag_does_not_break_later_fetches(tmp_path, etag):
    def answer(path, conn):
        head = ["HTTP/1.1 200 OK", f"Content-Length: {len(PAGE)}", "Connection: close", *HTML]
        conn.sendall(("\r\n".join(head)).encode() + b"\r\nETag: " + etag + b"\r\n\r\n" + PAGE)

    server = RawServer(_robots_then(answer))
    first = fetch_url(server.base + "notes.html", kb_dir=tmp_path, politeness=FAST)
    again = fetch_url(server.base + "notes.html", kb_dir=tmp_path, politeness=FAST)
    crawled = crawl("mtg-jp", ["notes.html"], kb_dir=tmp_path, base_url=server.base, politeness=FAST)
    server.close()
    assert first == again and first.endswith(PAGE)
    assert crawled.failed == {} and crawled.fetched == [server.base + "notes.html"]


def test_an_endless_category_listing_is_bounded_and_said(tmp_path):
    def answer(path, conn):
        if path.startswith("/wiki/"):
            return reply(conn, body=PAGE, headers=HTML)
        query = parse_qs(urlsplit(path).query)
        page = int(query.get("cmcontinue", ["0"])[0])
        members = [{"ns": 0, "title": f"Page{page}"}]
        reply(conn, body=json.dumps({"continue": {"cmcontinue": str(page + 1)}, "query": {"categorymembers": members}})
              .encode(), headers=["Content-Type: application/json"])

    server = RawServer(_robots_then(answer))
    politeness = Politeness(delay=0, max_tries=1, max_listing_pages=5)
    started = time.monotonic()
    report = crawl("mtgwiki", ["Category:Endless"], kb_dir=tmp_path, base_url=server.base, politeness=politeness)
    server.close()
    listings = [p for p, _ in server.log if p.startswith("/api.php")]
    assert len(listings) == 5 and time.monotonic() - started < 30
    assert list(report.failed.values()) == ["more than 5 listing pages in one crawl (a listing that never ends?); "
                                            "the rest not fetched"]


def test_a_capped_crawl_delay_is_said_before_the_wait(tmp_path):
    def answer(path, conn):
        if path == "/robots.txt":
            return reply(conn, body=b"User-agent: *\nCrawl-delay: 100000\n", headers=["Content-Type: text/plain"])
        reply(conn, body=PAGE, headers=HTML)

    server = RawServer(answer)
    seen: list[tuple[str, list[str]]] = []
    politeness = Politeness(delay=0.01, max_crawl_delay=0.3)
    crawl("mtg-jp", ["a/", "b/"], kb_dir=tmp_path, base_url=server.base, politeness=politeness,
          on_progress=lambda report, url: seen.append((url, list(report.notes))))
    assert seen[0][0] == server.base + "a/" and len(seen[0][1]) == 1  # known after the first page, before the wait
    # kb fetch says it while it waits (its cap is five minutes), not at the end
    process = kb_process(tmp_path / "kb", "fetch", "mtg-jp", "c/", "d/", "--base-url", server.base, "--delay", "0")
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(process.stderr.readline, "")), daemon=True)
    reader.start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any("robots.txt asks for 100000 s" in line for line in lines):
        time.sleep(0.1)
    still_waiting = process.poll() is None
    process.kill()
    process.wait()
    server.close()
    assert still_waiting, "kb fetch ended: the test could not see it wait"
    said = [line for line in lines if "robots.txt asks for 100000 s" in line]
    assert len(said) == 1 and "kb waits 300 s, its cap" in said[0]
    assert [p for p, _ in server.log].count("/d/") == 0  # said before the next request
