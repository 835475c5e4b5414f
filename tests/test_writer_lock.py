"""One writer at a time per kb folder, with real concurrent processes: a second writer waits briefly, then fails with
"another kb is writing <kb dir> (pid N)"; an ingest during `kb update` is refused or waits, never lost (issue 15,
finding 3); the update's commit is safe while readers have the database open."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
import time

import pytest
from conftest import DATA, REPO

from kb.pipeline import ingest_sources
from kb.store import DB_NAME, Store
from kb.versions.catalog import list_versions

JA = DATA / "JPN_CR_20231117_0.txt"
WIKI = DATA / "mtgwiki"
PAGE = DATA / "wisdom-guild" / "cr_r_701.34.html"

HOLDER = textwrap.dedent("""
    import sys
    from kb.store.lock import writer_lock

    with writer_lock(sys.argv[1], wait=0):
        print("held", flush=True)
        sys.stdin.readline()
""")

UPDATER = textwrap.dedent("""
    import sys
    from kb.update import run_update

    kb_dir, source, pause_at = sys.argv[1:]

    def on_stage(name):
        print(name, flush=True)
        if name == pause_at:
            sys.stdin.readline()

    result = run_update(kb_dir, sources=[source], on_stage=on_stage)
    print("finished", result.changed, flush=True)
""")

READER = textwrap.dedent("""
    import sqlite3, sys

    db = sqlite3.connect(sys.argv[1], isolation_level=None)
    db.execute("BEGIN")
    count = lambda: db.execute("SELECT count(*) FROM nodes").fetchone()[0]
    print(count(), flush=True)
    sys.stdin.readline()
    print(count(), flush=True)  # the same snapshot, whatever was committed meanwhile
    db.execute("COMMIT")
    print(count(), db.execute("PRAGMA integrity_check").fetchone()[0], flush=True)
""")


def env(wait: float) -> dict[str, str]:
    return {**os.environ, "KB_WRITER_WAIT": str(wait), "PYTHONPATH": str(REPO)}


def start(script: str, *args: str, wait: float = 0) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", script, *map(str, args)], cwd=REPO, env=env(wait), text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def kb(kb_dir, *args: str, wait: float) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kb.cli", "--kb-dir", str(kb_dir), *map(str, args)], cwd=REPO,
                          env=env(wait), capture_output=True, text=True, timeout=300)


def later_version(tmp_path):
    text = JA.read_text(encoding="utf-8-sig").replace("和訳 20231117.0 版", "和訳 20240301.0 版")
    later = tmp_path / "JPN_CR_20240301.txt"
    later.write_text(text.replace("2023年11月17日", "2024年3月1日"), encoding="utf-8")
    return later


def versions_in(kb_dir) -> list[str]:
    with Store.open(kb_dir, create=False) as store:
        return [v.version for v in list_versions(store)]


def kinds_in(kb_dir) -> set[str]:
    with Store.open(kb_dir, create=False) as store:
        return {d.kind for d in store.documents() if d.source != "kb:cards"}


def release(proc: subprocess.Popen) -> str:
    out, err = proc.communicate("\n", timeout=300)
    assert proc.returncode == 0, err
    return out


@pytest.mark.parametrize("command", [["ingest", str(JA)], ["index"], ["build", "--out", "SITE"],
                                     ["fetch", "mtgwiki", "唱える"], ["update", str(JA)]])
@pytest.mark.slow
def test_a_second_writer_fails_naming_the_first(tmp_path, command):
    kb_dir = tmp_path / "kb"
    with Store.open(kb_dir) as store:
        ingest_sources(store, [str(PAGE)])
    holder = start(HOLDER, kb_dir)
    assert holder.stdout.readline() == "held\n"
    try:
        started = time.monotonic()
        done = kb(kb_dir, *[str(tmp_path / "site") if a == "SITE" else a for a in command], wait=0.5)
        waited = time.monotonic() - started
    finally:
        release(holder)
    assert done.returncode == 1, done.stderr
    assert done.stderr == f"kb: error: another kb is writing {kb_dir.resolve()} (pid {holder.pid}); try again when it " \
                          f"has finished\n"
    assert waited >= 0.5
    assert kinds_in(kb_dir) == {"wisdom-guild"} and not (tmp_path / "site").exists() and not (kb_dir / "cache").exists()
    assert kb(kb_dir, "ingest", "--quiet", JA, wait=0.5).returncode == 0  # the lock went with its holder
    assert kinds_in(kb_dir) == {"wisdom-guild", "cr-text"}


def test_a_second_writer_waits_for_the_first_to_finish(tmp_path):
    kb_dir = tmp_path / "kb"
    holder = start(HOLDER, kb_dir)
    assert holder.stdout.readline() == "held\n"
    waiting = subprocess.Popen([sys.executable, "-m", "kb.cli", "--kb-dir", str(kb_dir), "ingest", "--quiet", str(JA)],
                               cwd=REPO, env=env(60), text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(1.0)
    assert waiting.poll() is None  # still waiting
    release(holder)
    out, err = waiting.communicate(timeout=300)
    assert waiting.returncode == 0, err
    assert versions_in(kb_dir) == ["20231117.0"]


@pytest.mark.slow
def test_an_ingest_during_an_update_is_refused_not_lost(tmp_path):
    kb_dir = tmp_path / "kb"
    with Store.open(kb_dir) as store:
        ingest_sources(store, [str(JA)])
    updater = start(UPDATER, kb_dir, later_version(tmp_path), "diff")
    assert [updater.stdout.readline() for _ in range(3)] == ["fetch\n", "ingest\n", "diff\n"]  # paused, staged
    refused = kb(kb_dir, "ingest", "--quiet", WIKI, wait=0.3)
    assert refused.returncode == 1
    assert f"another kb is writing {kb_dir.resolve()} (pid {updater.pid})" in refused.stderr
    # a patient ingest waits for the update to commit, then goes in on top of it
    patient = subprocess.Popen([sys.executable, "-m", "kb.cli", "--kb-dir", str(kb_dir), "ingest", "--quiet", str(WIKI)],
                               cwd=REPO, env=env(120), text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(0.5)
    assert release(updater).splitlines()[-2:] == ["commit", "finished True"]
    out, err = patient.communicate(timeout=300)
    assert patient.returncode == 0, err
    assert versions_in(kb_dir) == ["20240301.0", "20231117.0"]
    assert kinds_in(kb_dir) == {"cr-text", "mtgwiki"}  # nothing lost: both the update and the ingest are in the store


def test_the_update_commit_is_safe_with_a_reader_open(tmp_path):
    kb_dir = tmp_path / "kb"
    with Store.open(kb_dir) as store:
        ingest_sources(store, [str(JA)])
        before = len(store.node_keys())
    reader = start(READER, kb_dir / DB_NAME)
    assert int(reader.stdout.readline()) == before
    with Store.open(kb_dir) as store:  # a write after the reader's snapshot: its pages stay in the write-ahead log
        ingest_sources(store, [str(PAGE)])
    from kb.update import run_update

    assert run_update(kb_dir, sources=[str(later_version(tmp_path))]).changed
    lines = release(reader).split()
    assert lines[0] == str(before)  # its snapshot held through the commit
    with Store.open(kb_dir, create=False) as store:
        after = len(store.node_keys())
        assert {d.kind for d in store.documents()} >= {"cr-text", "wisdom-guild"}
    assert after > before and lines[1:] == [str(after), "ok"]
    assert versions_in(kb_dir) == ["20240301.0", "20231117.0"]
    with sqlite3.connect(kb_dir / DB_NAME) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
