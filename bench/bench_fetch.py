"""Benchmark kb fetch: per-page cost of fetch + cache + parse against a local server with the politeness delay at 0.

Figures are ratios against a baseline measured in the same run (this machine is noisy; crawls are best of 3):
  * baseline: a bare httpx GET of every page on one connection (no robots, cache or parsing);
  * first crawl: ``crawl`` (robots, conditional headers, atomic cache writes, link discovery) then
    ``ingest_from_cache`` (wisdom-guild parser, store, link) — pages/s and ratio to the baseline;
  * second crawl + ingest: every page answers 304 and nothing is re-parsed — time as a ratio to the first;
  * peak Python memory (tracemalloc) of the first crawl against the baseline.

Usage: .venv/bin/python bench/bench_fetch.py [--sections N]
"""

from __future__ import annotations

import argparse
import hashlib
import tempfile
import threading
import time
import tracemalloc
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from string import Template
from urllib.parse import unquote

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "fetch"
REPEAT = 3  # crawls are timed best of three (fresh cache folders for the first run)


def build_site(sections: int) -> dict[str, bytes]:
    section = Template((FIXTURES / "wg_section.html.tmpl").read_text(encoding="utf-8"))
    chapter = Template((FIXTURES / "wg_chapter.html.tmpl").read_text(encoding="utf-8"))
    rules = (FIXTURES / "wg_701_rules.html").read_text(encoding="utf-8")
    numbers = [700 + i for i in range(sections)]
    pages = {"/robots.txt": b"User-agent: *\nAllow: /\n",
             "/cr/": (FIXTURES / "wg_index.html").read_bytes(),
             "/cr/r/6/": chapter.substitute(chapter=6, title="呪文、能力、効果", sections="").encode()}
    links = "\n".join(f'<li><a href="/cr/r/{n}/">{n}.</a></li>' for n in numbers)
    pages["/cr/r/7/"] = chapter.substitute(chapter=7, title="その他のルール", sections=links).encode()
    for n in numbers:
        pages[f"/cr/r/{n}/"] = section.substitute(number=n, title="キーワード処理", chapter=7,
                                                  rules=rules.replace("701.", f"{n}.")).encode()
    return pages


def serve(pages: dict[str, bytes]) -> tuple[ThreadingHTTPServer, str]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        wbufsize = 1 << 16  # headers and body in one write (flushed after each request)
        disable_nagle_algorithm = True

        def log_message(self, *args):
            pass

        def do_GET(self):
            body = pages.get(unquote(self.path))
            if body is None:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            etag = f'"{hashlib.sha1(body).hexdigest()[:16]}"'
            if self.headers.get("If-None-Match") == etag:
                self.send_response(304)
                self.send_header("ETag", etag)
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/plain" if self.path.endswith(".txt") else "text/html; charset=UTF-8")
            self.send_header("ETag", etag)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def peak_memory(fn) -> int:
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def main() -> None:
    import httpx

    from ingest.net.fetch import Politeness, crawl
    from kb.pipeline import ingest_from_cache
    from kb.store import Store

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sections", type=int, default=200)
    args = parser.parse_args()
    pages = build_site(args.sections)
    server, base = serve(pages)
    page_paths = [p for p in pages if p != "/robots.txt"]
    n = len(page_paths)

    def bare():
        with httpx.Client() as client:
            return [client.get(base + p.lstrip("/")).content for p in page_paths]

    with tempfile.TemporaryDirectory() as tmp:
        kb_dir = Path(tmp) / "kb"

        def first_crawl(folder=kb_dir):
            return crawl("wisdom-guild", [], kb_dir=folder, base_url=base, politeness=Politeness(delay=0))

        def ingest():
            with Store.open(kb_dir) as store:
                return ingest_from_cache(store, "wisdom-guild", kb_dir=kb_dir)

        bare()  # warm up imports and the connection path
        t_bare = min(timed(bare)[1] for _ in range(REPEAT))
        t_crawl1 = min(timed(lambda i=i: first_crawl(Path(tmp) / f"kb-{i}"))[1] for i in range(REPEAT - 1))
        report1, t = timed(first_crawl)
        t_crawl1 = min(t_crawl1, t)
        ingest1, t_ingest1 = timed(ingest)
        report2, t_crawl2 = timed(first_crawl)
        t_crawl2 = min([t_crawl2] + [timed(first_crawl)[1] for _ in range(REPEAT - 1)])
        ingest2, t_ingest2 = timed(ingest)
        m_bare = peak_memory(bare)
        m_crawl1 = peak_memory(lambda: first_crawl(Path(tmp) / "kb-memory"))
    server.shutdown()

    assert len(report1.fetched) == n and len(report2.not_modified) == n, (report1, report2)
    first, second = t_crawl1 + t_ingest1, t_crawl2 + t_ingest2
    print(f"pages: {n} ({sum(len(pages[p]) for p in page_paths) / 1e3:.0f} kB), delay 0, local server")
    print(f"baseline bare httpx GET:    {n / t_bare:8.1f} pages/s")
    print(f"first crawl (fetch+cache):  {n / t_crawl1:8.1f} pages/s  = {t_crawl1 / t_bare:.2f}x baseline time")
    print(f"first ingest (parse+store): {n / t_ingest1:8.1f} pages/s  ({len(ingest1.documents)} parsed, "
          f"{len(ingest1.failed)} failed)")
    print(f"first run fetch+cache+parse:{n / first:8.1f} pages/s")
    print(f"second run (all 304, nothing re-parsed): crawl {t_crawl2 / t_crawl1:.2f}x, ingest {t_ingest2 / t_ingest1:.2f}x,"
          f" total {second / first:.2f}x the first run ({len(ingest2.documents)} parsed, {ingest2.unchanged} unchanged)")
    print(f"peak Python memory, first crawl vs bare GETs: {m_crawl1 / m_bare:.2f}x "
          f"({m_crawl1 / 1e6:.1f} MB vs {m_bare / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
