"""``kb serve``: a preview server for the built site, on 127.0.0.1 unless told otherwise.

Serves files of the site folder only: the request path is percent-decoded once, must not contain NUL, backslashes
or dot-segments, may not name a hidden file (``.kb-build/``), and the resolved real path (symlinks followed) must lie
inside the site folder — otherwise 404. ``/_search?q=…`` answers live from the Whoosh index (``kb search``) as JSON
``{"query", "results": [{"url", "label", "snippet", "id", "version", "lang"}]}`` with site-relative URLs; a query
the search refuses (too long, unbalanced quotes, an unknown filter …) is a 400 ``{"query", "error"}``, a knowledge
base or index that cannot be searched a 503. A connection that sends nothing for ``idle_timeout`` seconds is closed.
Public entry: :func:`make_server` (tests) and :func:`serve_site` (the command).
"""

from __future__ import annotations

import json
import os
from functools import partial
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from kb.urls.paths import url_for

IDLE_TIMEOUT = 30.0  # seconds a connection may stay silent


class SiteHandler(SimpleHTTPRequestHandler):
    site_root: Path
    kb_dir: str | None

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

    def list_directory(self, path):
        self.send_error(HTTPStatus.NOT_FOUND)
        return None

    def do_GET(self) -> None:
        if urlsplit(self.path).path == "/_search":
            self._search()
            return
        super().do_GET()

    def send_error(self, code, message=None, explain=None):
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
        from kb.errors import KbError
        from kb.search.query import MAX_QUERY_CHARS, Searcher
        from kb.store import Store

        query = parse_qs(urlsplit(self.path).query).get("q", [""])[0]
        if not query.strip():
            status, payload = HTTPStatus.OK, {"query": query, "results": []}
        else:
            try:
                with Store.open(self.kb_dir, create=False) as store, Searcher(store) as searcher:
                    try:
                        hits = searcher.search(query, limit=20)
                        status, payload = HTTPStatus.OK, {"query": query, "results": [_result(hit) for hit in hits]}
                    except KbError as exc:  # the query's fault
                        status, payload = HTTPStatus.BAD_REQUEST, {"query": query[:MAX_QUERY_CHARS], "error": str(exc)}
            except KbError as exc:  # the knowledge base's or the index's
                status, payload = HTTPStatus.SERVICE_UNAVAILABLE, {"query": query, "error": str(exc)}
        body = json.dumps(payload, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):  # quiet: one line per request only with --verbose (not offered)
        pass


def _result(hit) -> dict:
    return {"url": url_for(hit.key), "label": " ".join(x for x in (hit.number, hit.title) if x) or hit.id,
            "snippet": hit.snippet, "id": hit.id, "version": hit.version, "lang": hit.lang}


def make_server(site_dir: str | os.PathLike, *, host: str = "127.0.0.1", port: int = 8000,
                kb_dir: str | None = None, idle_timeout: float = IDLE_TIMEOUT) -> ThreadingHTTPServer:
    root = Path(os.path.realpath(site_dir))
    handler = type("BoundSiteHandler", (SiteHandler,), {"site_root": root, "kb_dir": kb_dir, "timeout": idle_timeout})
    return ThreadingHTTPServer((host, port), partial(handler, directory=str(root)))


def serve_site(site_dir: str | os.PathLike, *, host: str, port: int, kb_dir: str | None, on_ready=None) -> None:
    server = make_server(site_dir, host=host, port=port, kb_dir=kb_dir)
    if on_ready:
        on_ready(server)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
