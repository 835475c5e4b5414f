"""``kb serve``: a preview server for the built site, on 127.0.0.1 unless told otherwise.

Serves files of the site folder only: the request path is percent-decoded once, must not contain NUL, backslashes
or dot-segments, may not name a hidden file (``.kb-build/``), and the resolved real path (symlinks followed) must lie
inside the site folder — otherwise 404. ``/_search?q=…`` answers live from the Whoosh index (``kb search``) as JSON
``{"query", "results": [{"url", "label", "snippet", "id", "version", "lang"}]}`` with site-relative URLs; a query
the search refuses (too long, unbalanced quotes, an unknown filter …) is a 400 ``{"query", "error"}``, a knowledge
base or index that cannot be searched a 503. A connection that sends nothing for ``idle_timeout`` seconds is closed.
Public entry: :func:`make_server` (tests) and :func:`serve_site` (the command).

Searches run in parallel (:class:`LiveSearch`): request threads hand them to :data:`SEARCH_WORKERS` worker threads,
each with its own :class:`kb.search.Searcher` and store connection (made again when the store changed), all sharing
one :class:`kb.splitter.JapaneseSplitter` (a Sudachi tokenizer per thread) and the process's open Whoosh searchers.
The server only reads: a stale index is searched as it is (said once on stderr), never rebuilt.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit

from kb.urls.paths import url_for

if TYPE_CHECKING:
    from collections.abc import Callable

    from kb.search.query import Hit, Searcher

IDLE_TIMEOUT = 30.0  # seconds a connection may stay silent
SEARCH_WORKERS = 4  # threads answering searches at once (Sudachi and SQLite release the GIL for part of the work)
SEARCH_LIMIT = 20


class LiveSearch:
    """The ``/_search`` answers of one knowledge base, made by worker threads: each keeps a Searcher of its own
    (SQLite connections stay in the thread that opened them) until the store changes; all share one splitter."""

    def __init__(self, kb_dir: str | None, workers: int = SEARCH_WORKERS) -> None:
        from kb.splitter import JapaneseSplitter

        self.kb_dir = kb_dir
        self.splitter = JapaneseSplitter()
        self._workers = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="kb-search")
        self._own = threading.local()  # each worker's (searcher, store generation)
        self._told: set[str] = set()

    def answer(self, query: str) -> tuple[HTTPStatus, dict]:
        """The status and JSON payload for ``query`` (made by a worker; waits for it)."""
        return self._workers.submit(self._answer, query).result()

    def close(self) -> None:
        self._workers.shutdown(wait=False, cancel_futures=True)

    def _answer(self, query: str) -> tuple[HTTPStatus, dict]:
        from kb.errors import KbError
        from kb.search.query import MAX_QUERY_CHARS

        try:
            searcher = self._searcher()
        except KbError as exc:  # the knowledge base's or the index's
            return HTTPStatus.SERVICE_UNAVAILABLE, {"query": query, "error": str(exc)}
        try:
            hits = searcher.search(query, limit=SEARCH_LIMIT)
        except KbError as exc:  # the query's fault
            return HTTPStatus.BAD_REQUEST, {"query": query[:MAX_QUERY_CHARS], "error": str(exc)}
        return HTTPStatus.OK, {"query": query, "results": [_result(hit) for hit in hits]}

    def _searcher(self) -> Searcher:
        from kb.search.query import Searcher
        from kb.store import Store

        own = getattr(self._own, "searcher", None)
        if own is not None:
            searcher, generation = own
            if searcher.store.generation() == generation:
                return searcher
            searcher.store.close()
            self._own.searcher = None
        store = Store.open(self.kb_dir, create=False)
        try:
            searcher = Searcher(store, self._tell, splitter=self.splitter)
        except BaseException:
            store.close()
            raise
        self._own.searcher = (searcher, store.generation())
        return searcher

    def _tell(self, message: str) -> None:
        """A notice (a stale index) on stderr, once per server."""
        if message not in self._told:
            self._told.add(message)
            print(f"notice: {message}", file=sys.stderr, flush=True)


class SiteHandler(SimpleHTTPRequestHandler):
    site_root: Path
    live_search: LiveSearch

    def translate_path(self, path: str) -> str:
        """The file for a URL path, or a path that does not exist when it would leave the site folder."""
        refused = str(self.site_root / ".kb-build" / "refused")
        try:
            raw = unquote(urlsplit(path).path, errors="strict")
        except UnicodeDecodeError:
            return refused
        if "\0" in raw or "\\" in raw:
            return refused
        parts = [p for p in raw.split("/") if p]
        if any(p in (".", "..") or p.startswith(".") for p in parts):
            return refused
        candidate = self.site_root.joinpath(*parts)
        real = Path(os.path.realpath(candidate))
        if real != self.site_root and self.site_root not in real.parents:
            return refused
        return str(real)

    def list_directory(self, path: str | os.PathLike[str]) -> None:
        self.send_error(HTTPStatus.NOT_FOUND)
        return None

    def do_GET(self) -> None:
        if urlsplit(self.path).path == "/_search":
            self._search()
            return
        super().do_GET()

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        if code == HTTPStatus.NOT_FOUND and (self.site_root / "404.html").is_file():
            body = (self.site_root / "404.html").read_bytes()
            self.send_response(code)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)
            return
        super().send_error(code, message, explain)

    def _search(self) -> None:
        query = parse_qs(urlsplit(self.path).query).get("q", [""])[0]
        if not query.strip():
            status, payload = HTTPStatus.OK, {"query": query, "results": []}
        else:
            status, payload = self.live_search.answer(query)
        body = json.dumps(payload, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # quiet: one line per request only with --verbose (not offered)
        pass


def _result(hit: Hit) -> dict:
    return {"url": url_for(hit.key), "label": " ".join(x for x in (hit.number, hit.title) if x) or hit.id,
            "snippet": hit.snippet, "id": hit.id, "version": hit.version, "lang": hit.lang}


class SiteServer(ThreadingHTTPServer):
    """A thread per connection; the searches go to the :class:`LiveSearch` workers, stopped with the server."""

    live_search: LiveSearch
    request_queue_size = 128  # the listen backlog (socketserver's 5 reset connections at concurrency 32)
    daemon_threads = True

    def server_close(self) -> None:
        super().server_close()
        if hasattr(self, "live_search"):  # a bind that fails closes the server before it has its searches
            self.live_search.close()


def make_server(site_dir: str | os.PathLike, *, host: str = "127.0.0.1", port: int = 8000,
                kb_dir: str | None = None, idle_timeout: float = IDLE_TIMEOUT) -> SiteServer:
    root = Path(os.path.realpath(site_dir))
    live_search = LiveSearch(kb_dir)
    handler = type("BoundSiteHandler", (SiteHandler,), {"site_root": root, "live_search": live_search,
                                                        "timeout": idle_timeout})
    server = SiteServer((host, port), partial(handler, directory=str(root)))
    server.live_search = live_search
    return server


def serve_site(site_dir: str | os.PathLike, *, host: str, port: int, kb_dir: str | None,
               on_ready: Callable[[SiteServer], None] | None = None) -> None:
    server = make_server(site_dir, host=host, port=port, kb_dir=kb_dir)
    if on_ready:
        on_ready(server)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
