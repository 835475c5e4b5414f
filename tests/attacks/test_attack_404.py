"""Finding 1: script injection through ``404.html``. Built without ``--base-url``, the 404 page finds the site's
root by probing folders above the requested path; a path such as ``//OTHER-HOST/a/b`` or ``/\\OTHER-HOST/a/b`` once
made it probe, and then load ``static/site.js`` from, the other host. Replayed in real Chromium against ``kb serve``
and a plain static host serving the site under ``/sub/``, with a second server on 127.0.0.1 playing the attacker:
the page must never ask anything outside its own origin, and must still work at any depth of its own site."""

from __future__ import annotations

import functools
import http.server
import shutil
import threading
from pathlib import Path

import pytest

from kb.site.serve import make_server


def _serve(srv):
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


@pytest.fixture(scope="module")
def site(data_site) -> Path:
    """The sample site, built without ``--base-url`` (read-only)."""
    return data_site


@pytest.fixture(scope="module")
def attacker():
    """Another origin that answers every HEAD/GET with 200: a stylesheet, and a script that marks the page."""
    asked: list[str] = []

    class Evil(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_HEAD(self):
            self._answer(with_body=False)

        def do_GET(self):
            self._answer(with_body=True)

        def _answer(self, *, with_body):
            asked.append(self.path)
            body = b"document.documentElement.setAttribute('data-pwned', '1');" if self.path.endswith(".js") \
                else b"body { background: red }"
            self.send_response(200)
            self.send_header("Content-Type", "text/javascript" if self.path.endswith(".js") else "text/css")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Access-Control-Allow-Origin", "*")
            self.end_headers()
            if with_body:
                self.wfile.write(body)

    srv = _serve(http.server.ThreadingHTTPServer(("127.0.0.1", 0), Evil))
    yield f"127.0.0.1:{srv.server_address[1]}", asked
    srv.shutdown()
    srv.server_close()


@pytest.fixture(scope="module")
def kb_serve(site):
    srv = _serve(make_server(site, host="127.0.0.1", port=0))
    yield f"http://127.0.0.1:{srv.server_address[1]}", ""
    srv.shutdown()
    srv.server_close()


@pytest.fixture(scope="module")
def static_host(site, tmp_path_factory):
    """A static host like most: the site under /sub/, and /sub/404.html for every missing path."""
    root = tmp_path_factory.mktemp("host")
    shutil.copytree(site, root / "sub")
    page_404 = (root / "sub" / "404.html").read_bytes()

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

    srv = _serve(http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(NotFound, directory=str(root))))
    yield f"http://127.0.0.1:{srv.server_address[1]}", "/sub"
    srv.shutdown()
    srv.server_close()


@pytest.fixture(params=["kb_serve", "static_host"])
def host(request):
    return request.getfixturevalue(request.param)


@pytest.mark.parametrize("attack", ["//{evil}/a/b", "/\\{evil}/a/b", "//{evil}/static/x", "///{evil}/a/b/c.html",
                                    "/%2F{evil}/a/b", "{prefix}//{evil}/a/b"])
def test_404_never_leaves_its_origin(browser, host, attacker, attack):
    origin, prefix = host
    evil, asked = attacker
    asked.clear()
    page = browser.new_page()
    outside: list[str] = []
    page.on("request", lambda r: None if r.url.startswith((origin + "/", "data:")) else outside.append(r.url))
    response = page.goto(origin + attack.format(evil=evil, prefix=prefix))
    assert response.status == 404 and "ページが見つかりません" in page.title()
    page.wait_for_load_state("load")
    assert page.evaluate("document.documentElement.getAttribute('data-pwned')") is None
    assert outside == [] and asked == []
    # the page stays on its own site: its links and base, if any, are on the page's origin
    assert page.evaluate("new URL(document.baseURI).origin") == origin
    assert page.locator("main a", has_text="目次へ").evaluate("a => a.href").startswith(origin + "/")
    page.close()


@pytest.mark.parametrize("missing", ["/cr/nope/x.html", "/a/b/c/d/", "//cr//nope.html"])
def test_404_still_finds_its_root(browser, host, missing):
    origin, prefix = host
    page = browser.new_page()
    outside: list[str] = []
    page.on("request", lambda r: None if r.url.startswith((origin + "/", "data:")) else outside.append(r.url))
    response = page.goto(origin + prefix + missing)
    assert response.status == 404
    assert page.evaluate("[...document.styleSheets].some(s => s.href && s.href.endsWith("
                         f"'{prefix}/static/site.css') && s.cssRules.length > 10)")
    assert page.locator("main a", has_text="目次へ").evaluate("a => a.href") == f"{origin}{prefix}/index.html"
    assert outside == []
    page.close()
