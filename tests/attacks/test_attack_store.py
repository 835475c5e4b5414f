"""Issue 21, findings 6 and 9 and the store's Low findings, replayed with real processes on real files:

- two first ingests into a new kb folder at once failed half the time ("empty file (0 bytes), not a kb database",
  "table meta already exists"): the database is made whole, once, under the writer lock;
- ``kb export`` during a re-ingest of a wiki page mixed the old and the new text, references and citers: an export
  reads in one snapshot;
- every reader failed in a read-only kb folder ("not a kb database (unable to open database file)"): readers open
  the database read-only, immutable when no write-ahead log is there (a read-only bind mount: root ignores file
  modes, not a read-only mount);
- a full disk during an ingest ended in ``cannot rollback - no transaction is active`` or ``OSError: No space
  left``, a ``kb.sqlite`` whose schema is 'abc' and a writer lock that is a folder or a FIFO in internal errors: each
  is one line naming the file and the remedy.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import copy_kb
from hostile import DATA, REPO, SAMPLE_CR, kb

from kb.store import DB_NAME, Store
from kb.store.lock import LOCK_NAME

pytestmark = pytest.mark.slow  # processes, servers or several ingests each: out of the quick suite

WIKI_PAGE = DATA / "mtgwiki" / "唱える.html"
WG_PAGE = DATA / "wisdom-guild" / "cr_r_701.34.html"


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), **extra}


def _one_error_line(result: subprocess.CompletedProcess, *parts: str) -> str:
    assert result.returncode == 1, (result.returncode, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kb: error: "), result.stderr
    for part in parts:
        assert part in lines[0]
    return lines[0]


# -- finding 6: two first ingests at once ------------------------------------------------------------------------
OPENER = textwrap.dedent("""
    import sys, time
    from kb.store import Store

    kb_dir, start = sys.argv[1], float(sys.argv[2])
    time.sleep(max(0.0, start - time.time()))  # both processes open the new store at the same moment
    Store.open(kb_dir).close()
    print("ok", flush=True)
""")


def test_two_processes_making_one_new_store_at_once_both_succeed(tmp_path):
    """Ten pairs of processes, each pair opening the same new kb folder at the same instant (before: a 0-byte file
    or a half-made schema seen by the second, about half of the pairs failing)."""
    pairs = []
    start = time.time() + 3.0  # every process started by then
    for n in range(10):
        pairs.append([subprocess.Popen([sys.executable, "-c", OPENER, str(tmp_path / f"kb{n}"), str(start)], cwd=REPO,
                                       env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                      for _ in range(2)])
    failures = []
    for pair in pairs:
        for proc in pair:
            _, err = proc.communicate(timeout=60)
            failures += [err.strip().splitlines()[-1]] if proc.returncode else []
    assert failures == []
    for n in range(10):
        with Store.open(tmp_path / f"kb{n}", create=False) as store:
            assert store.documents() == []
        assert sorted(p.name for p in (tmp_path / f"kb{n}").iterdir() if p.name.startswith(DB_NAME)) in (
            [DB_NAME], [DB_NAME, f"{DB_NAME}-shm", f"{DB_NAME}-wal"])  # no draft left behind


def test_two_first_ingests_into_a_new_folder_both_succeed(tmp_path):
    """The finding as a user meets it: two ``kb ingest`` of different sources into a new folder at once."""
    env = _env(KB_WRITER_WAIT="120")
    procs = [subprocess.Popen([sys.executable, "-m", "kb.cli", "--kb-dir", str(tmp_path / "kb"), "ingest", str(page)],
                              cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for page in (WIKI_PAGE, WG_PAGE)]
    errors = [proc.communicate(timeout=300)[1] for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], errors
    with Store.open(tmp_path / "kb", create=False) as store:
        assert {d.source for d in store.documents()} >= {str(WIKI_PAGE), str(WG_PAGE)}


def test_two_processes_migrating_one_older_store_at_once_both_succeed(tmp_path):
    """Five schema-1 stores, each opened by two processes at the same instant: the second migrator must find the
    store migrated (before: it ran the migrations again, "table contributions already exists")."""
    from kb.pipeline import ingest_sources

    with Store.open(tmp_path / "kb0") as store:
        ingest_sources(store, [str(WG_PAGE)])
    with sqlite3.connect(tmp_path / "kb0" / DB_NAME) as db:  # what a schema-1 kb left
        db.execute("DROP TABLE contributions")
        db.execute("ALTER TABLE documents DROP COLUMN authority")
        db.execute("UPDATE meta SET value='1' WHERE key='schema'")
    for n in range(1, 5):
        (tmp_path / f"kb{n}").mkdir()
        shutil.copy(tmp_path / "kb0" / DB_NAME, tmp_path / f"kb{n}" / DB_NAME)
    start = time.time() + 3.0
    procs = [subprocess.Popen([sys.executable, "-c", OPENER, str(tmp_path / f"kb{n}"), str(start)], cwd=REPO, env=_env(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for n in range(5) for _ in "ab"]
    failures = []
    for proc in procs:
        _, err = proc.communicate(timeout=60)
        failures += [err.strip().splitlines()[-1]] if proc.returncode else []
    assert failures == []
    for n in range(5):
        with sqlite3.connect(tmp_path / f"kb{n}" / DB_NAME) as db:
            assert db.execute("SELECT count(*) FROM contributions").fetchone()[0] > 0
            assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)


# -- finding 6: an export during a re-ingest ---------------------------------------------------------------------
PAUSING_EXPORT = textwrap.dedent("""
    import json, sys
    from kb.export import export_records
    from kb.store import Store

    class PausingStore(Store):
        # a real store that stalls once, after handing out every reference: where a re-ingest commits in the finding
        def refs(self, *args, **kwargs):
            yield from super().refs(*args, **kwargs)
            print("paused", flush=True)
            sys.stdin.readline()

    with PausingStore.open(sys.argv[1], create=False) as store:
        records = list(export_records(store))
    print(json.dumps(records, ensure_ascii=False, sort_keys=True), flush=True)
""")


def _export(kb_dir: Path) -> list[dict]:
    result = kb(kb_dir, "export", "--format", "jsonl")
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_an_export_during_a_reingest_sees_one_state_of_the_store(tmp_path):
    """The export reads the references, a re-ingest of the wiki page (new text, a new reference target) commits,
    then the export reads the nodes: it must show the page as it was before the re-ingest, whole — never the new
    text with the old references (before: 13 of 45 exports mixed)."""
    page = tmp_path / WIKI_PAGE.name
    shutil.copy(WIKI_PAGE, page)
    kb_dir = tmp_path / "kb"
    assert kb(kb_dir, "ingest", str(page)).returncode == 0
    before = _export(kb_dir)
    reader = subprocess.Popen([sys.executable, "-c", PAUSING_EXPORT, str(kb_dir)], cwd=REPO, env=_env(), text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert reader.stdout is not None and reader.stdout.readline().strip() == "paused", reader.stderr
    page.write_bytes(WIKI_PAGE.read_bytes().replace(b"601.2h", b"601.2i"))
    ingest = kb(kb_dir, "ingest", str(page))
    assert ingest.returncode == 0 and "1 stored" in ingest.stdout + ingest.stderr, ingest.stdout + ingest.stderr
    out, err = reader.communicate("\n", timeout=120)
    assert reader.returncode == 0, err
    after = _export(kb_dir)
    assert after != before  # the re-ingest changed what an export shows …
    assert json.loads(out) == json.loads(json.dumps(before, ensure_ascii=False, sort_keys=True))  # … not this one


# -- finding 9: a read-only kb folder ----------------------------------------------------------------------------
def _read_only(folder: Path, *command: str) -> subprocess.CompletedProcess:
    """``command`` run with ``folder`` mounted read-only over itself (a private mount namespace: nothing else sees
    it), as a kb folder on a read-only disk or share."""
    script = 'mount --bind -o ro "$1" "$1" && shift && exec "$@"'
    return subprocess.run(["unshare", "-m", "sh", "-c", script, "sh", str(folder), *command], cwd=REPO, env=_env(),
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def read_only_mounts(tmp_path_factory) -> None:
    probe = tmp_path_factory.mktemp("probe")
    if shutil.which("unshare") is None or _read_only(probe, "true").returncode != 0:
        pytest.skip("needs unshare and mount (a private mount namespace) for a read-only bind mount")
    written = _read_only(probe, "touch", str(probe / "x"))
    assert written.returncode != 0 and "Read-only file system" in written.stderr  # the mount is really read-only


READERS = [["export", "--format", "jsonl"], ["versions"], ["links", "601.2f"], ["history", "601.2f"], ["search", "唱える"]]


@pytest.fixture(scope="module")
def ingested(tmp_path_factory) -> Path:
    """The Japanese sample CR ingested by ``kb ingest`` once; each test works on a copy of its own (``copy_kb``)."""
    kb_dir = tmp_path_factory.mktemp("ingested") / "kb"
    assert kb(kb_dir, "ingest", str(SAMPLE_CR)).returncode == 0
    return kb_dir


@pytest.mark.parametrize("command", READERS, ids=[" ".join(c) for c in READERS])
def test_readers_work_in_a_read_only_kb_folder(tmp_path, read_only_mounts, ingested, command):
    kb_dir = copy_kb(ingested, tmp_path / "kb")
    assert not (kb_dir / f"{DB_NAME}-wal").exists()  # the last writer folded its log in: nothing to recover
    writable = kb(kb_dir, *command)
    assert writable.returncode == 0, writable.stderr
    files = {p.name: p.read_bytes() for p in kb_dir.iterdir() if p.is_file()}
    result = _read_only(kb_dir, sys.executable, "-m", "kb.cli", "--kb-dir", str(kb_dir), *command)
    assert result.returncode == 0, result.stderr
    assert result.stdout == writable.stdout
    assert {p.name: p.read_bytes() for p in kb_dir.iterdir() if p.is_file()} == files


def test_a_read_only_folder_with_a_log_still_open_is_read_whole(tmp_path, read_only_mounts, ingested):
    """A kb folder copied (or mounted read-only) while its write-ahead log still held the last ingest: the reader
    reads through the log (an immutable open would miss it)."""
    kb_dir = copy_kb(ingested, tmp_path / "kb")
    keeper = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import sqlite3, sys
        db = sqlite3.connect(sys.argv[1], isolation_level=None)
        db.execute("PRAGMA wal_autocheckpoint = 0")
        db.execute("UPDATE nodes SET text = 'changed in the log' WHERE id = 'cr:601.2f'")
        print("written", flush=True)
        sys.stdin.readline()
    """), str(kb_dir / DB_NAME)], cwd=REPO, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert keeper.stdout is not None and keeper.stdout.readline().strip() == "written"
        assert (kb_dir / f"{DB_NAME}-wal").stat().st_size > 0
        result = _read_only(kb_dir, sys.executable, "-m", "kb.cli", "--kb-dir", str(kb_dir), "export", "--format",
                            "jsonl")
    finally:
        keeper.communicate("\n", timeout=60)
    assert result.returncode == 0, result.stderr
    texts = {rec["id"]: rec["text"] for rec in map(json.loads, result.stdout.splitlines())}
    assert texts["cr:601.2f"] == "changed in the log"


def test_a_writer_in_a_read_only_kb_folder_fails_in_one_line(tmp_path, read_only_mounts, ingested):
    kb_dir = copy_kb(ingested, tmp_path / "kb")
    result = _read_only(kb_dir, sys.executable, "-m", "kb.cli", "--kb-dir", str(kb_dir), "ingest", str(WG_PAGE))
    _one_error_line(result, str(kb_dir), "read-only", "writable")


# -- Low: a full disk, a schema that is no number, a writer lock that is no file ---------------------------------
@pytest.mark.parametrize("size", ["160k", "220k", "400k", "1m"])
def test_a_full_disk_during_an_ingest_is_one_line(tmp_path, read_only_mounts, size):
    """The kb folder on a small disk (a tmpfs of ``size``): full while the store is written, or the search index
    after it (before: ``cannot rollback - no transaction is active`` or ``OSError: No space left``)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    script = f'mount -t tmpfs -o size={size} tmpfs "$1" && shift && exec "$@"'
    result = subprocess.run(["unshare", "-m", "sh", "-c", script, "sh", str(disk), sys.executable, "-m", "kb.cli",
                             "--kb-dir", str(disk / "kb"), "ingest", str(SAMPLE_CR)],
                            cwd=REPO, env=_env(), capture_output=True, text=True, timeout=300)
    line = _one_error_line(result, "free some space and run the command again")
    assert str(disk / "kb") in line


def test_a_store_whose_schema_is_no_number_is_refused_in_one_line(tmp_path):
    kb_dir = tmp_path / "kb"
    assert kb(kb_dir, "ingest", str(WG_PAGE)).returncode == 0
    with sqlite3.connect(kb_dir / DB_NAME) as db:
        db.execute("UPDATE meta SET value='abc' WHERE key='schema'")
    for command in (["ingest", str(WG_PAGE)], ["export"]):
        _one_error_line(kb(kb_dir, *command), f"{kb_dir / DB_NAME}: damaged kb database (store schema 'abc' is not a "
                                              "number)")


@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_a_writer_lock_that_is_no_file_is_one_line(tmp_path, kind):
    kb_dir = tmp_path / "kb"
    kb_dir.mkdir()
    if kind == "folder":
        (kb_dir / LOCK_NAME).mkdir()
    else:
        os.mkfifo(kb_dir / LOCK_NAME)
    line = _one_error_line(kb(kb_dir, "ingest", str(WG_PAGE), timeout=60), str(kb_dir / LOCK_NAME))
    assert "remove" in line
    assert not (kb_dir / DB_NAME).exists()
