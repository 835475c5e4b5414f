"""Findings 7, 8, 9 and 17, against real servers on 127.0.0.1 (raw sockets, so they can misbehave as hostile servers
do). 7: a server sending one byte a second held ``kb fetch`` forever (no overall deadline per request). 8: a
``Crawl-delay: 100000`` was obeyed without cap or message (27.8 h). 9: a redirect loop on robots.txt ended in
``internal error: TooManyRedirects`` after 21 requests in 13 ms. 17: ``user:pass@`` in a URL was kept in the source,
the export and the cache folder name."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable

import pytest
from hostile import kb

from ingest.net.fetch import Politeness, crawl, fetch_url
from kb.errors import KbError


class RawServer:
    """Answers each request with ``answer(path, connection)``, which writes what it likes, as slowly as it likes.
    Records (path, monotonic time) of every request."""

    def __init__(self, answer: Callable[[str, socket.socket], None]):
        self.answer = answer
        self.log: list[tuple[str, float]] = []
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.base = f"http://127.0.0.1:{self.sock.getsockname()[1]}/"
        self.closed = False
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while not self.closed:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn):
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                data += chunk
            path = data.split(b" ", 2)[1].decode()
            self.log.append((path, time.monotonic()))
            with contextlib.suppress(OSError):  # the client gave up
                self.answer(path, conn)

    def close(self):
        self.closed = True
        self.sock.close()


def reply(conn, status="200 OK", body=b"", headers=()):
    head = [f"HTTP/1.1 {status}", f"Content-Length: {len(body)}", "Connection: close", *headers]
    conn.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + body)


ROBOTS_OK = b"User-agent: *\nAllow: /\n"
PAGE = "<html><head><title>x</title></head><body><p>リリースノート</p></body></html>".encode()


def trickle(what: str, gap: float = 0.05):
    def answer(path, conn):
        if path == "/robots.txt":
            return reply(conn, body=ROBOTS_OK, headers=["Content-Type: text/plain"])
        head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\n"
        if what == "body":
            conn.sendall(head)
        for byte in (head if what == "headers" else b"x" * 100000):
            conn.sendall(bytes([byte]))
            time.sleep(gap)
    return answer


@pytest.mark.parametrize("what", ["body", "headers"])
def test_a_trickling_server_cannot_hold_a_fetch(tmp_path, what):
    server = RawServer(trickle(what))
    outcome: list = []
    politeness = Politeness(delay=0, read_timeout=5, request_deadline=1.5, max_tries=3)

    def run():
        started = time.monotonic()
        try:
            fetch_url(server.base + "slow.html", kb_dir=tmp_path, politeness=politeness)
            outcome.append(("fetched", time.monotonic() - started))
        except KbError as exc:
            outcome.append((str(exc), time.monotonic() - started))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(30)
    server.close()
    assert not thread.is_alive(), "the fetch was still running after 30 s"
    message, seconds = outcome[0]
    assert message == f"{server.base}slow.html: no whole response within 1.5 s (the server is too slow); not retried"
    assert seconds < 5
    assert [p for p, _ in server.log].count("/slow.html") == 1  # not retried


def test_a_huge_crawl_delay_is_capped_and_said(tmp_path):
    def answer(path, conn):
        if path == "/robots.txt":
            return reply(conn, body=b"User-agent: *\nCrawl-delay: 100000\n", headers=["Content-Type: text/plain"])
        reply(conn, body=PAGE, headers=["Content-Type: text/html; charset=UTF-8"])

    server = RawServer(answer)
    politeness = Politeness(delay=0.01, max_crawl_delay=0.4)
    started = time.monotonic()
    report = crawl("mtg-jp", ["a/", "b/"], kb_dir=tmp_path, base_url=server.base, politeness=politeness)
    server.close()
    assert sorted(report.fetched) == [server.base + "a/", server.base + "b/"]
    assert time.monotonic() - started < 10
    pages = [t for p, t in server.log if p != "/robots.txt"]
    assert pages[1] - pages[0] >= 0.4  # still spaced, by the cap
    assert report.notes == [f"{server.base.rstrip('/')}/robots.txt asks for 100000 s between requests; kb waits 0.4 s, "
                            "its cap"]


def test_the_default_crawl_delay_cap_is_five_minutes():
    assert Politeness().max_crawl_delay == 300


def test_a_robots_redirect_loop_is_polite_and_ends_in_a_clear_failure(tmp_path):
    def answer(path, conn):
        target = "/robots2.txt" if path == "/robots.txt" else "/robots.txt"
        reply(conn, "301 Moved Permanently", headers=[f"Location: {target}"])

    server = RawServer(answer)
    result = kb(tmp_path / "kb", "fetch", "mtg-jp", "a/", "--base-url", server.base, "--delay", "0.2")
    server.close()
    assert "internal error" not in result.stderr and result.returncode == 1
    assert "robots.txt unavailable (more than 5 redirects); not crawling the site" in result.stderr
    times = [t for _, t in server.log]
    assert len(times) == 6  # the first request and 5 redirects, no more
    assert all(b - a >= 0.2 for a, b in zip(times, times[1:], strict=False))  # each redirect waited its turn


def test_credentials_in_a_url_are_refused_and_never_kept(tmp_path):
    def answer(path, conn):
        if path == "/robots.txt":
            return reply(conn, body=ROBOTS_OK, headers=["Content-Type: text/plain"])
        reply(conn, body=PAGE, headers=["Content-Type: text/html; charset=UTF-8"])

    server = RawServer(answer)
    secret_url = server.base.replace("http://", "http://alice:s3cret@") + "notes.html"
    kb_dir = tmp_path / "kb"
    result = kb(kb_dir, "ingest", secret_url)
    fetched = kb(kb_dir, "fetch", "mtg-jp", "a/", "--base-url", server.base.replace("http://", "http://alice:s3cret@"))
    seeded = kb(kb_dir, "fetch", "mtg-jp", secret_url, "--base-url", server.base)
    server.close()
    assert result.returncode == fetched.returncode == seeded.returncode == 1
    for run in (result, fetched, seeded):
        assert "the URL carries a user name or password" in run.stderr
        assert "s3cret" not in run.stdout + run.stderr and "alice" not in run.stdout + run.stderr
    assert server.log == []  # nothing was asked
    kept = [p for p in tmp_path.rglob("*") if "alice" in p.name or (p.is_file() and b"s3cret" in p.read_bytes())]
    assert kept == []
