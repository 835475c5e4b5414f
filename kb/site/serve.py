"""``kb serve``: a preview server for the built site, on 127.0.0.1 unless told otherwise.

Serves files of the site folder only: the request path is percent-decoded once, must not contain NUL, backslashes
or dot-segments, may not name a hidden file (``.kb-build/``), and the resolved real path (symlinks followed) must lie
inside the site folder — otherwise 404. ``/_search?q=…`` answers live from the Whoosh index (``kb search``) as JSON
``{"query", "results": [{"url", "label", "snippet", "id", "version", "lang"}]}`` with site-relative URLs; a query
the search refuses (too long, unbalanced quotes, an unknown filter …) is a 400 ``{"query", "error"}``, a knowledge
base or index that cannot be searched a 503. A connection that sends nothing for ``idle_timeout`` seconds is closed.
Public entry: :func:`make_server` (tests) and :func:`serve_site` (the command).

Searches run in parallel, in :data:`SEARCH_PROCESSES` worker processes (:class:`SearchProcesses`: searching is
CPU-bound Python, so the request threads that serve pages never wait behind one for the interpreter lock, and both
cores answer). Each process is a :class:`LiveSearch`: one Searcher and store connection, made again when the store
or the index changed (:mod:`kb.search.warm`, which computes the current view and the name table once per store
generation), and the answers it made, kept per (store generation, query). :func:`serve_site` says it serves once
every process has answered a first query. The server only reads: a stale index is searched as it is (said on
stderr once per process), never rebuilt.
"""

from __future__ import annotations

import itertools
import json
import multiprocessing
import os
import signal
import sys
import threading
import zlib
from collections import OrderedDict
from concurrent.futures import Future
from functools import partial
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit

if TYPE_CHECKING:
    from collections.abc import Callable
    from multiprocessing.connection import Connection

    from kb.search.query import Hit

IDLE_TIMEOUT = 30.0  # seconds a connection may stay silent
SEARCH_LIMIT = 20
ANSWERS = 2048  # answers kept (by each search process)
SEARCH_PROCESSES = 2  # processes answering searches (each its own interpreter: the cores answer at once)
# what each search process answers first, before any request: each builds what later queries of its kind need (a
# Japanese phrase: the current view, the name table and the document table; a rule number; an unknown English
# word: the typo lexicon)
WARM_QUERIES = ("呪文を唱える", "601.2f", "deathtuch")
WARM_TIMEOUT = 120.0  # seconds the command waits for warm searchers before saying it serves
IMBALANCE = 4  # requests waiting on a query's own process beyond the least busy one's, before another answers it
ANSWER_TIMEOUT = 60.0  # seconds a request waits for its search process


class LiveSearch:
    """The ``/_search`` answers of one knowledge base, made in the thread that asks (a search process's): its
    Searcher is kept (:class:`kb.search.warm.WarmSearch`, which also keeps the current view and the name table
    once per store generation) until the store or the index changes. Answers are kept (:data:`ANSWERS` of them,
    least recently asked dropped first) under the generation they were made in and the query: a store or index
    that changed asks again."""

    def __init__(self, kb_dir: str | None) -> None:
        from kb.search.warm import WarmSearch
        from kb.splitter import JapaneseSplitter

        self.kb_dir = kb_dir
        self.splitter = JapaneseSplitter()
        self._warm = WarmSearch()
        self._answers: OrderedDict[tuple, tuple[HTTPStatus, dict]] = OrderedDict()
        self._told: set[str] = set()

    def answer(self, query: str) -> tuple[HTTPStatus, dict]:
        """The status and JSON payload for ``query``."""
        from kb.errors import KbError
        from kb.search.query import MAX_QUERY_CHARS
        try:
            searcher, generation = self._warm.searcher_at(self.kb_dir, splitter=self.splitter, notify=self._tell)
            key = (generation, query)
        except (KbError, OSError) as exc:  # the knowledge base's or the index's
            return HTTPStatus.SERVICE_UNAVAILABLE, {"query": query, "error": str(exc)}
        kept = self._answers.get(key)
        if kept is not None:
            self._answers.move_to_end(key)
            return kept
        answer: tuple[HTTPStatus, dict]
        try:
            hits = searcher.search(query, limit=SEARCH_LIMIT)
        except KbError as exc:  # the query's fault
            answer = HTTPStatus.BAD_REQUEST, {"query": query[:MAX_QUERY_CHARS], "error": str(exc)}
        else:
            answer = HTTPStatus.OK, {"query": query, "results": [_result(hit) for hit in hits]}
        self._answers[key] = answer
        while len(self._answers) > ANSWERS:
            self._answers.popitem(last=False)
        return answer

    def close(self) -> None:
        self._warm.close()

    def _tell(self, message: str) -> None:
        """A notice (a stale index) on stderr, once per search process."""
        if message not in self._told:
            self._told.add(message)
            print(f"notice: {message}", file=sys.stderr, flush=True)


class SearchProcesses:
    """The ``/_search`` answers of one knowledge base made by :data:`SEARCH_PROCESSES` worker processes (spawned:
    searching is CPU-bound Python, and threads of one process share one interpreter lock), each a
    :class:`LiveSearch` of its own. A query goes to the same process (by a hash of its text), whose kept answers
    hold it, unless that one is much busier than another. A process that ends fails the requests it had with a 503
    and is started again."""

    def __init__(self, kb_dir: str | None, processes: int = SEARCH_PROCESSES) -> None:
        self._processes = [_SearchProcess(kb_dir) for _ in range(processes)]

    def answer(self, query: str) -> tuple[HTTPStatus, dict]:
        """The answer of the query's own process — or of the least busy one, when its own has
        :data:`IMBALANCE` more requests waiting (a burst of new queries on one process)."""
        own = self._processes[zlib.crc32(query.encode("utf-8", "surrogatepass")) % len(self._processes)]
        idlest = min(self._processes, key=lambda p: p.waiting)
        return (idlest if own.waiting - idlest.waiting > IMBALANCE else own).answer(query)

    def wait_ready(self, timeout: float = WARM_TIMEOUT) -> None:
        """Start every process and wait until each answers warm (at most ``timeout`` seconds)."""
        for process in self._processes:
            process.start()
        for process in self._processes:
            process.ready.wait(timeout)

    def close(self) -> None:
        for process in self._processes:
            process.close()


class _SearchProcess:
    """One search process, and the thread that hands its answers to the requests waiting for them."""

    def __init__(self, kb_dir: str | None) -> None:
        self.kb_dir = kb_dir
        self.ready = threading.Event()
        self._lock = threading.Lock()
        self._pending: dict[int, Future] = {}
        self._ids = itertools.count()
        self._closed = False
        self._started = False

    @property
    def waiting(self) -> int:
        """Requests sent and not yet answered."""
        return len(self._pending)

    def _start(self) -> None:
        context = multiprocessing.get_context("spawn")
        ours, theirs = context.Pipe()
        self._process = context.Process(target=_search_process, args=(theirs, self.kb_dir), daemon=True,
                                        name="kb-search")
        self._process.start()
        theirs.close()
        self._conn = ours
        threading.Thread(target=self._read, args=(ours,), daemon=True, name="kb-search-answers").start()

    def start(self) -> None:
        """Start the process, unless it was started (the first search does)."""
        with self._lock:
            if not self._started and not self._closed:
                self._started = True
                self._start()

    def answer(self, query: str) -> tuple[HTTPStatus, dict]:
        self.start()
        future: Future = Future()
        with self._lock:
            number = next(self._ids)
            self._pending[number] = future
            try:
                self._conn.send((number, query))
            except (OSError, ValueError):  # the process ended: its reader starts another
                self._pending.pop(number, None)
                return _unavailable(query, "the search process ended; ask again")
        try:
            return future.result(timeout=ANSWER_TIMEOUT)
        except TimeoutError:
            with self._lock:
                self._pending.pop(number, None)
            return _unavailable(query, f"no answer from the search process in {ANSWER_TIMEOUT:.0f} s")

    def _read(self, conn: Connection) -> None:
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                break
            if message == "ready":
                self.ready.set()
                continue
            number, (status, payload) = message
            with self._lock:
                future = self._pending.pop(number, None)
            if future is not None:
                future.set_result((HTTPStatus(status), payload))
        conn.close()
        with self._lock:  # the process ended (or was closed): fail what it had, start another if it ever answered
            pending, self._pending = self._pending, {}
            restart = not self._closed and self.ready.is_set()
            if restart:
                self.ready = threading.Event()
                self._start()
        for future in pending.values():
            future.set_result(_unavailable("", "the search process ended; ask again"))

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if not self._started:
                return
            self._conn.close()
        self._process.terminate()
        self._process.join(timeout=10)


def _unavailable(query: str, reason: str) -> tuple[HTTPStatus, dict]:
    return HTTPStatus.SERVICE_UNAVAILABLE, {"query": query, "error": reason}


def _search_process(conn: Connection, kb_dir: str | None) -> None:
    """A search process: warm up, say so, then answer each (number, query) received until the pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the server's to handle: it ends this process
    live = LiveSearch(kb_dir)
    for query in WARM_QUERIES:
        live.answer(query)
    try:
        conn.send("ready")
        while True:
            number, query = conn.recv()
            status, payload = live.answer(query)
            conn.send((number, (int(status), payload)))
    except (EOFError, OSError):
        pass
    finally:
        live.close()


class SiteHandler(SimpleHTTPRequestHandler):
    site_root: Path
    live_search: SearchProcesses

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
    return {"url": hit.url, "label": " ".join(x for x in (hit.number, hit.title) if x) or hit.id,
            "snippet": hit.snippet, "id": hit.id, "version": hit.version, "lang": hit.lang}


class SiteServer(ThreadingHTTPServer):
    """A thread per connection; the searches go to the search processes (or threads), stopped with the server."""

    live_search: SearchProcesses
    request_queue_size = 128  # the listen backlog (socketserver's 5 reset connections at concurrency 32)
    daemon_threads = True

    def server_close(self) -> None:
        super().server_close()
        if hasattr(self, "live_search"):  # a bind that fails closes the server before it has its searches
            self.live_search.close()


def make_server(site_dir: str | os.PathLike, *, host: str = "127.0.0.1", port: int = 8000,
                kb_dir: str | None = None, idle_timeout: float = IDLE_TIMEOUT) -> SiteServer:
    """A server of ``site_dir``, not yet serving; its search processes start with the first search
    (:func:`serve_site` starts them at once and waits until they answer warm)."""
    root = Path(os.path.realpath(site_dir))
    live_search = SearchProcesses(kb_dir)
    handler = type("BoundSiteHandler", (SiteHandler,), {"site_root": root, "live_search": live_search,
                                                        "timeout": idle_timeout})
    server = SiteServer((host, port), partial(handler, directory=str(root)))
    server.live_search = live_search
    return server


def serve_site(site_dir: str | os.PathLike, *, host: str, port: int, kb_dir: str | None,
               on_ready: Callable[[SiteServer], None] | None = None) -> None:
    server = make_server(site_dir, host=host, port=port, kb_dir=kb_dir)
    server.live_search.wait_ready()
    if on_ready:
        on_ready(server)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
