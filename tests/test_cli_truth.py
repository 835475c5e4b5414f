"""The CLI tells the truth: ``kb --version``, help for every option and ``--quiet`` on every command, bad filters
and versions named with the choices, user mistakes as one-line errors (never "internal error"), ``kb links``
grouped and labelled, a folder read only for what it can identify, and progress — plain lines when stderr is not a
terminal, a rich bar when it is (a real pseudo-terminal), nothing with ``--quiet``."""

from __future__ import annotations

import io
import json
import os
import pty
import re
import select
import shutil
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from conftest import DATA, REPO, copy_kb

import kb
from kb.cli import main
from kb.cli.terminal import StageProgress
from kb.errors import KbError
from kb.export import export_records
from kb.model import NODE_KINDS
from kb.store import Store


def run(kb_dir: Path, *args: str):
    return CliRunner().invoke(main, ["--kb-dir", str(kb_dir), *args], catch_exceptions=False)


def run_process(kb_dir: Path, *args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    env = {**os.environ, "KB_HOME": str(kb_dir)}
    return subprocess.run([sys.executable, "-m", "kb.cli", *args], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=120)


@pytest.fixture(scope="module")
def sample_kb(tmp_path_factory, data_kb) -> Path:
    """The bundled sample (data/) ingested once for this module's readers (a copy of ``data_kb``)."""
    return copy_kb(data_kb, tmp_path_factory.mktemp("sample") / "kb")


def commands() -> list[tuple[str, click.Command]]:
    out = []

    def walk(command: click.Command, path: str) -> None:
        out.append((path, command))
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                walk(sub, f"{path} {name}")

    walk(main, "kb")
    return out


def test_version():
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0 and result.output == f"kb {kb.__version__}\n"


def test_every_option_has_help_and_every_command_a_quiet():
    found = commands()
    assert len(found) >= 13  # kb and its 12 commands
    missing = [f"{path} {'/'.join(p.opts)}" for path, command in found for p in command.params
               if isinstance(p, click.Option) and not (p.help or "").strip()]
    assert missing == []
    assert [path for path, command in found if not any("--quiet" in p.opts for p in command.params)] == []


def test_bad_export_filters_name_the_value_and_the_choices(sample_kb):
    result = run(sample_kb, "export", "--version", "2099")
    assert result.exit_code == 1
    assert result.output == "kb: error: 2099: no such version; known versions: 20231117.0\n"
    result = run(sample_kb, "export", "--kind", "bogus")
    assert result.exit_code == 2 and "'bogus' is not one of" in result.output
    assert all(repr(kind) in result.output for kind in NODE_KINDS)
    with Store.open(sample_kb, create=False) as store, pytest.raises(KbError, match="bogus: no such kind of node"):
        export_records(store, kinds=["bogus"])  # the library checks it at the call, not at the first record
    # a version named by its date digits is the version of that date
    lines = run(sample_kb, "export", "--version", "20231117", "--kind", "glossary").output.splitlines()
    assert len(lines) == 10 and {json.loads(line)["version"] for line in lines} == {"20231117.0"}


def test_export_says_when_nothing_matches_and_where_it_wrote(sample_kb, tmp_path):
    result = CliRunner().invoke(main, ["--kb-dir", str(sample_kb), "export", "--lang", "en"])
    assert result.exit_code == 0 and result.stdout == ""
    assert result.stderr == "notice: no node matches --lang en\n"
    out = tmp_path / "kb.json"
    result = CliRunner().invoke(main, ["--kb-dir", str(sample_kb), "export", "--format", "json", "-o", str(out)])
    assert result.stderr == f"exported {len(json.loads(out.read_text()))} nodes to {out}\n"
    quiet = CliRunner().invoke(main, ["--kb-dir", str(sample_kb), "export", "-q", "-o", str(out)])
    assert quiet.exit_code == 0 and quiet.stderr == ""


def test_links_blames_the_version_not_the_rule(sample_kb):
    result = run(sample_kb, "links", "--version", "2099", "601.2f")
    assert result.exit_code == 1
    assert result.output == "kb: error: 2099: no such version; known versions: 20231117.0\n"
    result = run(sample_kb, "links", "--version", "20231117", "601.2f")
    assert result.exit_code == 0 and result.output.startswith("cr:601.2f [20231117.0 ja] 601.2f\n")


def test_links_grouped_counted_and_external_labelled(sample_kb):
    full = json.loads(run(sample_kb, "links", "wiki:唱える", "--json").output)[0]
    kinds = Counter(r["kind"] for r in full["refers_to"])
    result = run(sample_kb, "links", "wiki:唱える")
    lines = result.output.splitlines()
    assert result.exit_code == 0
    assert lines[1] == f"  refers to: {len(full['refers_to'])} (" + ", ".join(
        f"{k} {n}" for k, n in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))) + ")"
    assert "(unresolved)" not in result.output
    externals = [r["target"] for r in full["refers_to"] if r["kind"] == "external"]
    assert externals and f"      {externals[0]} → external link" in lines
    # every target once; at most 10 per kind listed, the rest counted
    distinct = {(r["kind"], r["target"]) for r in full["refers_to"]}
    assert len(distinct) > 60 and len(lines) < 80
    assert any(line.startswith("      … and ") and line.endswith(" more (--all lists every one)") for line in lines)
    every = run(sample_kb, "links", "wiki:唱える", "--all").output.splitlines()
    assert sum(1 for line in every if " → " in line) == len(distinct)
    assert f"  cited by: {len(full['cited_by'])}" in every


def test_user_mistakes_are_one_line_errors(sample_kb, tmp_path):
    bad = tmp_path / "MagicCompRules-20260230.txt"
    bad.write_text("Magic: The Gathering Comprehensive Rules\nThese rules are effective as of February 30, 2026.\n\n"
                   "100.1. These Magic rules apply to any Magic game.\n", encoding="utf-8")
    proc = run_process(tmp_path / "kb", "ingest", str(bad))
    assert proc.returncode == 1
    assert f"error: {bad}:2: the effective date 'February 30, 2026' is not a date\n" in proc.stderr
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "index.html").write_text("<html></html>")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = run_process(sample_kb, "serve", "--dir", str(tmp_path / "site"), "--port", str(port))
    assert proc.returncode == 1
    assert proc.stderr == (f"kb: error: 127.0.0.1:{port}: the port is in use (another 'kb serve'?); choose another "
                           "with --port, or --port 0 for any free one\n")
    result = run(sample_kb, "fetch", "mtgwiki", "--quiet")
    assert result.exit_code == 2 and "mtgwiki: nothing to fetch; give TITLE_OR_URL arguments or --titles-file" in \
        result.output
    result = run(sample_kb, "links", " ")
    assert result.exit_code == 2 and "NODE is empty" in result.output


def test_a_folder_is_read_for_what_it_can_identify(tmp_path):
    folder = tmp_path / "sources"
    folder.mkdir()
    (folder / "page.html").write_text("<html><head><title>Page</title></head><body><p>hello</p></body></html>")
    (folder / "notes.txt").write_text("my notes\n")
    shutil.copy(DATA / "mtgwiki" / "唱える.html", folder / "article.html")  # known by its MediaWiki markup
    result = CliRunner().invoke(main, ["--kb-dir", str(tmp_path / "kb"), "ingest", str(folder)])
    assert result.exit_code == 0, result.output
    reason = "not recognised as any source kind (mtgwiki, cr-text, wisdom-guild, release-notes); give the file " \
             "itself, with --kind if need be, to read it anyway"
    assert f"skipped: {folder / 'notes.txt'}: {reason}\n" in result.stderr
    assert f"skipped: {folder / 'page.html'}: {reason}\n" in result.stderr
    assert "sources: 1 read (1 stored, 0 unchanged), 0 failed, 0 gave nothing, 2 files skipped" in result.stdout
    titles = [json.loads(line)["title"] for line in run(tmp_path / "kb", "export", "--kind", "article").output.splitlines()]
    assert titles == ["唱える"]
    updated = CliRunner().invoke(main, ["--kb-dir", str(tmp_path / "kb2"), "update", str(folder)])
    assert updated.exit_code == 0, updated.output
    assert f"skipped: {folder / 'page.html'}: {reason}\n" in updated.stderr  # kb update reads a folder the same way
    with Store.open(tmp_path / "kb2", create=False) as store:
        assert [d.source for d in store.documents() if d.source != "kb:cards"] == [str(folder / "article.html")]
    # a file named by the user is read (as the docs say: HTML as an MTG Wiki page)
    named = run(tmp_path / "kb", "ingest", str(folder / "page.html"))
    assert "sources: 1 read (1 stored" in named.output


def test_unresolved_references_listed_first_ten_or_all_with_verbose(tmp_path):
    first = CliRunner().invoke(main, ["--kb-dir", str(tmp_path / "a"), "ingest", str(DATA)])
    unresolved = int(first.stdout.split(" resolved, ")[1].split(" unresolved")[0])
    listed = [line for line in first.stderr.splitlines() if ", which does not exist" in line]
    assert len(listed) == 10 and unresolved > 100
    assert f"warning: … and {unresolved - 10} more unresolved references (--verbose lists every one)" in first.stderr
    every = CliRunner().invoke(main, ["--kb-dir", str(tmp_path / "b"), "ingest", "--verbose", str(DATA)])
    assert sum(1 for line in every.stderr.splitlines() if ", which does not exist" in line) == unresolved


def test_quiet_ingest_prints_only_the_summary_and_what_is_never_silent(tmp_path):
    quiet = CliRunner().invoke(main, ["--kb-dir", str(tmp_path / "kb"), "-q", "ingest", str(DATA)])
    assert quiet.exit_code == 0
    assert [line.split(": ", 1)[0] for line in quiet.stderr.splitlines()] == ["warning"]
    assert "incomplete: the document has no chapter" in quiet.stderr  # the one warning --quiet keeps
    assert quiet.stdout.startswith("sources: 4 read (4 stored, 0 unchanged)")


class Clock:
    """Seconds that pass when the test says so."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_without_a_terminal_only_long_stages_are_reported():
    stream, clock = io.StringIO(), Clock()
    with StageProgress("kb build", stream=stream, clock=clock) as progress:
        progress("gather", 0, None)
        clock.now = 1.0  # a quick stage: not a word
        for done in range(0, 5000, 50):
            progress("render", done, 5000)
            clock.now += 0.25
        progress("check", 0, None)
        clock.now += 7.5
    assert stream.getvalue().splitlines() == [
        "kb build: rendering pages 1,000/5,000 (5 s)", "kb build: rendering pages 2,000/5,000 (10 s)",
        "kb build: rendering pages 3,000/5,000 (15 s)", "kb build: rendering pages 4,000/5,000 (20 s)",
        "kb build: rendering pages done in 25.0 s", "kb build: checking links done in 7.5 s"]
    silent, clock = io.StringIO(), Clock()
    with StageProgress("kb build", quiet=True, stream=silent, clock=clock) as progress:
        progress("render", 0, 3)
        clock.now = 60.0
        progress("render", 1, 3)
    assert silent.getvalue() == ""


def read_pty(fd: int, proc: subprocess.Popen, limit: float = 120) -> str:
    out, deadline = b"", time.monotonic() + limit
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the other side closed
                break
            if not chunk:
                break
            out += chunk
        elif proc.poll() is not None:
            break
    return out.decode("utf-8", "replace")


def _on_a_terminal(args: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    """``kb ARGS`` with stderr on a real pseudo-terminal: (exit code, stdout, what the terminal was sent)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "kb.cli", *args], stdout=subprocess.PIPE, stderr=slave, env=env,
                            cwd=REPO)
    os.close(slave)
    try:
        screen = read_pty(master, proc)
        stdout = proc.communicate(timeout=60)[0].decode()
    finally:
        os.close(master)
    return proc.returncode, stdout, screen


@pytest.mark.slow
def test_a_terminal_gets_a_progress_bar(sample_kb, tmp_path):
    """``kb build`` with stderr on a real pseudo-terminal: rich draws each stage with its bar and count."""
    env = {**os.environ, "KB_HOME": str(sample_kb), "COLUMNS": "120", "TERM": "xterm"}
    returncode, stdout, screen = _on_a_terminal(["build", "--quiet", "--out", str(tmp_path / "site")], env)
    assert returncode == 0 and stdout.startswith(f"site: {tmp_path / 'site'} — ")
    assert screen == ""  # --quiet: no bar either
    returncode, stdout, screen = _on_a_terminal(["build", "--out", str(tmp_path / "site2")], env)
    assert returncode == 0
    rendered = int(stdout.split(" pages (")[1].split(" rendered")[0])  # a new site: every page
    lines = [line.strip() for line in re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen).replace("\r", "\n").split("\n")]
    done = [line for line in lines if line.startswith("✓ ")]
    assert [line.split("━")[0].strip() for line in done[-4:]] == [
        "✓ reading the store", "✓ rendering pages", "✓ writing the search files", "✓ checking links"]
    assert f"━ {rendered:,}/{rendered:,} " in done[-3]
