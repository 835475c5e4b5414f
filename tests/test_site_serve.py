"""``kb serve``: the preview server answers pages and live search, and never a path outside the site folder."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import threading

import pytest
from conftest import copy_kb

from kb.site.serve import make_server


@pytest.fixture(scope="module")
def server(tmp_path_factory, data_kb, data_site):
    """data/ ingested and built (copies of ``data_kb`` and ``data_site``), served with a file and a folder outside the
    site linked into it."""
    base = tmp_path_factory.mktemp("serve")
    kb_dir = copy_kb(data_kb, base / "kb")
    shutil.copytree(data_site, base / "site")
    (base / "secret.txt").write_text("outside the site")
    os.symlink(base / "secret.txt", base / "site" / "link-out.txt")
    os.symlink(base, base / "site" / "dir-out")
    srv = make_server(base / "site", host="127.0.0.1", port=0, kb_dir=str(kb_dir))
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def get(srv, path: str) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", srv.server_address[1], timeout=60)
    conn.putrequest("GET", path, skip_host=False, skip_accept_encoding=True)  # the path goes out exactly as given
    conn.endheaders()
    resp = conn.getresponse()
    body = resp.read()
    conn.close()
    return resp.status, body


def test_serves_pages_on_loopback(server):
    assert server.server_address[0] == "127.0.0.1"
    status, body = get(server, "/")
    assert status == 200 and b'<html lang="ja">' in body
    status, body = get(server, "/cr/601.html")
    assert status == 200 and b'id="601.2f"' in body
    status, body = get(server, "/glossary/%E5%94%B1%E3%81%88%E3%82%8B.html")
    assert status == 200


@pytest.mark.parametrize("path", [
    "/../secret.txt", "/%2e%2e/secret.txt", "/cr/%2E%2E/%2e%2e/secret.txt", "/..%2fsecret.txt", "/%2e%2e%2fsecret.txt",
    "/cr/..%5c..%5csecret.txt", "/link-out.txt", "/dir-out/secret.txt", "/.kb-build/manifest.marshal", "/%00",
    "/static/../../secret.txt", "//etc/passwd", "/%c0%ae%c0%ae/secret.txt", "/cr/",
])
def test_nothing_outside_the_site_is_readable(server, path):
    status, body = get(server, path)
    assert status == 404
    assert b"outside the site" not in body and b"root:" not in body


def test_live_search_from_the_index(server):
    status, body = get(server, "/_search?q=%E5%94%B1%E3%81%88%E3%81%9F")  # 唱えた
    assert status == 200
    results = json.loads(body)["results"]
    urls = [r["url"] for r in results]
    assert "cr/601.html#601.2" in urls
    assert all(not u.startswith("/") for u in urls)
