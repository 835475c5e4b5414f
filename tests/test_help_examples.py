"""Every ``Example:`` line of every command's ``--help`` runs, as written, in a folder holding what the examples name
(``data/``, the English CR of 2026-01-16, the Japanese CR files, a saved Wisdom Guild page) with the English CRs
ingested. The examples that name a web site run against a real HTTP server on 127.0.0.1 standing in for it (the
host in a URL is replaced, ``--base-url`` is added, ``--delay 0``); ``kb serve`` and ``python -m http.server`` run
as processes on a free port and must answer. Examples are read from the commands themselves, so a new example is
run without touching this file."""

from __future__ import annotations

import os
import shlex
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from conftest import CORPUS_FILES, DATA, FIXTURES
from test_fetch import LocalSite, mtgwiki, wisdom_guild

from kb.cli import main

SITE_HOSTS = ("https://mtg-jp.com/", "https://mjmj.info/")
FETCHING = {"fetch", "update"}


def examples() -> list[tuple[str, str]]:
    """(command path, example line) for every Example line of every command, in the order --help shows them."""
    out = []

    def walk(command: click.Command, path: list[str]) -> None:
        text = command.help or ""
        if "Example:" in text:
            for line in text.split("Example:", 1)[1].strip().splitlines():
                line = line.split("  #")[0].strip()
                if line:
                    out.append((" ".join(path), line))
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                walk(sub, [*path, name])

    walk(main, ["kb"])
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    import threading

    site = LocalSite()
    wisdom_guild(site)
    mtgwiki(site)
    site.page("/robots.txt", "User-agent: *\nAllow: /\n", "text/plain")
    site.page("/data/docs/JPN_CR_20260116_0.txt", (DATA / "JPN_CR_20231117_0.txt").read_bytes(), "text/plain; charset=UTF-8")
    site.page("/gameplay/rules/docs/0000000/", (FIXTURES / "cr_html" / "mtg_jp_rules_doc.html").read_bytes())
    thread = threading.Thread(target=site.server.serve_forever, daemon=True)
    thread.start()
    yield site
    site.server.shutdown()
    site.server.server_close()


@pytest.fixture(scope="module")
def workspace(tmp_path_factory, corpus_dir) -> Path:
    ws = tmp_path_factory.mktemp("examples")
    (ws / "data").symlink_to(DATA, target_is_directory=True)
    (ws / "MagicCompRules-20260116.txt").symlink_to(corpus_dir / "MagicCompRules-2026-01-16.txt")
    (ws / "JPN_CR_20231117_0.txt").symlink_to(DATA / "JPN_CR_20231117_0.txt")
    (ws / "JPN_CR_20250725_0.rb.html").symlink_to(FIXTURES / "cr_html" / "JPN_CR_20250725_0.rb.html")
    (ws / "saved").mkdir()
    shutil.copy(DATA / "wisdom-guild" / "cr_r_701.34.html", ws / "saved" / "701.34.html")
    result = CliRunner().invoke(main, ["--kb-dir", str(ws / ".kb"), "ingest", "-q",
                                       *(str(corpus_dir / name) for name in CORPUS_FILES)])
    assert result.exit_code == 0, result.output
    return ws


def localised(line: str, base: str) -> list[str]:
    """The example's words, its web sites replaced by the local server."""
    for host in SITE_HOSTS:
        line = line.replace(host, base)
    words = shlex.split(line)
    if words[:2] == ["kb", "fetch"]:
        if "--base-url" not in words:
            words += ["--base-url", base]
        words += ["--delay", "0"]
    if words[:2] == ["kb", "update"] and "--site" in words:
        words += ["--delay", "0"]
    return words


def run_server_example(words: list[str], ws: Path, port: int) -> None:
    """Start a serving example as a process, check that it answers, stop it."""
    env = dict(os.environ, KB_HOME=str(ws / ".kb"))
    if words[0] == "kb":
        command = [sys.executable, "-m", "kb.cli", *words[1:]]
    else:
        command = [sys.executable if words[0] == "python" else words[0], *words[1:]]
    proc = subprocess.Popen(command, cwd=ws, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/index.html", timeout=2) as response:
                    assert response.status == 200 and b"<html" in response.read(2000).lower()
                    return
            except OSError as error:
                if proc.poll() is not None or time.monotonic() > deadline:
                    proc.terminate()
                    output = proc.communicate(timeout=10)[0].decode()[-500:]
                    raise AssertionError(f"{' '.join(words)} did not answer: {output}") from error
                time.sleep(0.2)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.slow
@pytest.mark.run_first
def test_every_help_example_runs(workspace, server, monkeypatch):
    found = examples()
    assert len(found) >= 30 and {path for path, _ in found} >= {"kb ingest", "kb history", "kb serve", "kb fetch"}
    monkeypatch.chdir(workspace)
    monkeypatch.setenv("KB_HOME", str(workspace / ".kb"))
    runner = CliRunner()
    failures = []
    for path, line in found:
        for part in line.split("&&"):
            words = localised(part.strip(), server.base)
            if words[:2] == ["kb", "serve"] or words[:3] == ["python", "-m", "http.server"]:
                port = free_port()
                if "--port" in words:
                    words[words.index("--port") + 1] = str(port)
                elif words[0] == "kb":
                    words += ["--port", str(port)]
                else:
                    words += ["--bind", "127.0.0.1", str(port)]
                run_server_example(words, workspace, port)
                continue
            assert words[0] == "kb", f"{path}: an example that is not a kb command: {line}"
            result = runner.invoke(main, words[1:])
            if result.exit_code != 0:
                failures.append(f"{path}: {line!r} → exit {result.exit_code}: {result.output[-400:]}")
    assert failures == []
    # what the examples did is there: the fetched pages, the sites built, the export written
    assert (workspace / "site" / "index.html").is_file() and (workspace / "public" / "sitemap.xml").is_file()
    assert (workspace / "kb.json").stat().st_size > 1000
