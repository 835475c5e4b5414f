"""Helpers of the attack corpus: run ``kb`` as a real process, and write hostile sources."""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "data"
SAMPLE_CR = DATA / "JPN_CR_20231117_0.txt"  # the bundled Japanese CR excerpt


def kb(kb_dir: Path, *args: str, timeout: float = 600, **kwargs) -> subprocess.CompletedProcess:
    """``python -m kb.cli --kb-dir KB_DIR ARGS…`` as a user runs it: its exit code, stdout and stderr."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "kb.cli", "--kb-dir", str(kb_dir), *args], capture_output=True,
                          text=True, cwd=REPO, env=env, timeout=timeout, **kwargs)


def wiki_page(title: str, body_html: str) -> bytes:
    """An MTG Wiki article page (MediaWiki's markup, as saved from the site) with ``body_html`` as its content."""
    return f"""<!DOCTYPE html>
<html class="client-nojs" lang="ja" dir="ltr"><head><meta charset="UTF-8"><title>{title} - MTG Wiki</title></head>
<body class="mediawiki ltr sitedir-ltr ns-0 ns-subject page-{title} skin-vector action-view">
<main id="content" class="mw-body"><h1 id="firstHeading" class="firstHeading">{title}</h1>
<div id="bodyContent" class="vector-body"><div id="mw-content-text" class="mw-body-content">
<div class="mw-content-ltr mw-parser-output" lang="ja" dir="ltr">
{body_html}
</div></div></div></main></body></html>""".encode()


def kb_process(kb_dir: Path, *args: str) -> subprocess.Popen:
    """``kb`` started as a real process (to be interrupted or killed), its output captured."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-m", "kb.cli", "--kb-dir", str(kb_dir), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=REPO, env=env)


def wait_for(path: Path, proc: subprocess.Popen, timeout: float = 120) -> None:
    """Wait until ``path`` exists (the process reached the phase that makes it), polling every millisecond."""
    import time

    deadline = time.monotonic() + timeout
    while not path.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"{path} never appeared (exit {proc.returncode}): {proc.communicate()}")
        time.sleep(0.001)


@contextmanager
def serving_sample(base: Path, data_kb: Path, data_site: Path):
    """The sample ingested and built (conftest's ``data_kb`` and ``data_site``, copied into ``base/kb`` and
    ``base/site``) and served by ``kb serve``'s server on a free port of 127.0.0.1: yields (server, kb folder)."""
    import shutil
    import threading

    from conftest import copy_kb

    from kb.site.serve import make_server

    kb_dir = copy_kb(data_kb, base / "kb")
    shutil.copytree(data_site, base / "site")
    srv = make_server(base / "site", host="127.0.0.1", port=0, kb_dir=str(kb_dir))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield srv, kb_dir
    finally:
        srv.shutdown()
        srv.server_close()


def served_search(srv, query: str, timeout: float = 60) -> tuple[int, list[str]]:
    """``/_search?q=QUERY`` on ``srv``: the status and the ids of the hits."""
    import http.client
    import json
    from urllib.parse import quote

    conn = http.client.HTTPConnection("127.0.0.1", srv.server_address[1], timeout=timeout)
    try:
        conn.request("GET", "/_search?q=" + quote(query))
        resp = conn.getresponse()
        return resp.status, [r["id"] for r in json.loads(resp.read()).get("results", [])]
    finally:
        conn.close()
