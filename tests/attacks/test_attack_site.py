"""Findings 14 and 15. 14: a killed build left ``.site.staging-PID/`` folders that were never cleaned, and the swap
of the new site left a moment with no site. 15: ``kb serve`` answered bad ``/_search`` queries with 503 instead of
400, and never timed out idle connections. Replayed with real ``kb build`` processes, a real poller process and a
real ``kb serve``."""

from __future__ import annotations

import http.client
import json
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest
from conftest import copy_kb
from hostile import kb, kb_process, wait_for

from kb.site.serve import make_server


@pytest.fixture(scope="module")
def sample(tmp_path_factory, data_kb):
    """data/ ingested (a copy of ``data_kb``)."""
    return copy_kb(data_kb, tmp_path_factory.mktemp("site") / "kb")


def test_a_killed_build_leaves_nothing_behind(sample, tmp_path):
    out = tmp_path / "site"
    proc = kb_process(sample, "build", "--out", str(out))
    staging = tmp_path / f".site.staging-{proc.pid}"
    wait_for(staging, proc)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    assert staging.is_dir()  # what the attack left
    again = kb(sample, "build", "--out", str(out))
    assert again.returncode == 0, again.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [".site.lock", "site"]  # the output lock (kb.site.output)
    assert (out / "index.html").is_file()


POLLER = """
import os, sys
site, stop = sys.argv[1], sys.argv[2]
seen = missing = 0
while not os.path.exists(stop):
    seen += 1
    if not os.path.isfile(site + "/index.html"):
        missing += 1
print(seen, missing)
"""


@pytest.mark.slow
def test_a_reader_always_finds_a_whole_site(sample, tmp_path):
    out = tmp_path / "site"
    assert kb(sample, "build", "--out", str(out)).returncode == 0
    stop = tmp_path / "stop"
    poller = subprocess.Popen([sys.executable, "-c", POLLER, str(out), str(stop)], stdout=subprocess.PIPE, text=True)
    for n in range(4):  # each --base-url changes every page: a full rebuild and a swap
        built = kb(sample, "build", "--out", str(out), "--base-url", f"https://example.org/{n}/")
        assert built.returncode == 0, built.stderr
    stop.touch()
    seen, missing = map(int, poller.communicate(timeout=60)[0].split())
    assert seen > 1000 and missing == 0


@pytest.fixture(scope="module")
def server(sample, tmp_path_factory):
    out = tmp_path_factory.mktemp("served") / "site"
    assert kb(sample, "build", "--out", str(out)).returncode == 0
    srv = make_server(out, host="127.0.0.1", port=0, kb_dir=str(sample), idle_timeout=1.0)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv
    srv.shutdown()
    srv.server_close()


def _search(srv, query: str) -> tuple[int, dict]:
    from urllib.parse import quote

    # a long timeout: the first search of a process loads the dictionaries and the index (seconds on a loaded machine)
    conn = http.client.HTTPConnection("127.0.0.1", srv.server_address[1], timeout=60)
    conn.request("GET", "/_search?q=" + quote(query))
    resp = conn.getresponse()
    body = json.loads(resp.read())
    conn.close()
    return resp.status, body


@pytest.mark.slow
@pytest.mark.parametrize("query", ['"呪文を', "kind:nonsense 唱える", "lang:fr 唱える", "x" * 5000, "唱える\x07"])
def test_a_bad_query_is_a_400(server, query):
    status, body = _search(server, query)
    assert status == 400 and body["error"] and "results" not in body


def test_a_good_query_still_answers(server):
    status, body = _search(server, "唱えた")
    assert status == 200 and body["results"]


@pytest.mark.slow
def test_no_index_is_a_503(tmp_path, data_kb, data_site):
    kb_dir = copy_kb(data_kb, tmp_path / "kb")  # data/ ingested and built
    shutil.copytree(data_site, tmp_path / "site")
    shutil.rmtree(kb_dir / "index")
    srv = make_server(tmp_path / "site", host="127.0.0.1", port=0, kb_dir=str(kb_dir))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        status, body = _search(srv, "唱えた")
    finally:
        srv.shutdown()
        srv.server_close()
    assert status == 503 and "kb index" in body["error"]


def test_an_idle_connection_is_closed(server):
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", server.server_address[1])) as sock:
        sock.settimeout(15)
        assert sock.recv(100) == b""  # the server hung up on a client that said nothing
    assert time.monotonic() - started < 10
