"""Findings 4 and 11: store and index must never stay apart, and a damaged index or database names its remedy.

4: killed or Ctrl-C'd during the index phase, an ingest left the data stored but documents missing from the index;
the next ingest said "unchanged" and searches stayed silently wrong; Ctrl-C printed "Aborted!" though the data was
stored. 11: a damaged index or database gave "internal error: …" without the remedy, and ``kb index`` called a
damaged index fine. Replayed with real ``kb`` processes, real signals and real damaged files."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from contextlib import closing

import pytest
from conftest import CTRL_C_AS_IN_A_TERMINAL, copy_kb
from hostile import DATA, REPO, SAMPLE_CR, kb, wait_for


def _search_ids(kb_dir, query="唱えた"):
    result = kb(kb_dir, "search", "--json", "--limit", "50", query)
    assert result.returncode == 0, result.stderr
    return sorted(h["id"] for h in json.loads(result.stdout))  # the same hits (scores vary with segments)


@pytest.fixture(scope="module")
def whole(tmp_path_factory, data_kb):
    """The sample ingested once (a copy of ``data_kb``), and what a search finds in it."""
    kb_dir = copy_kb(data_kb, tmp_path_factory.mktemp("whole") / "kb")
    return kb_dir, _search_ids(kb_dir)


# ``kb`` itself, held at the start of its index phase (the store committed, nothing indexed) until it is stopped: an
# index phase lasts a few hundredths of a second, too short to hit by polling for a file it makes
HELD_WHILE_INDEXING = CTRL_C_AS_IN_A_TERMINAL + """
import sys, time
from pathlib import Path

import kb.search.index as index

writing = index._update_scope


def held(store, path, *args, **kwargs):
    (Path(store.kb_dir) / "indexing").touch()
    time.sleep(120)
    return writing(store, path, *args, **kwargs)


index._update_scope = held
from kb.cli import main

main(sys.argv[1:], prog_name="kb")
"""


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_an_ingest_stopped_while_indexing_is_completed_by_the_next(tmp_path, whole, sig):
    kb_dir = tmp_path / "kb"
    proc = subprocess.Popen([sys.executable, "-c", HELD_WHILE_INDEXING, "--kb-dir", str(kb_dir), "ingest", "--quiet",
                             str(DATA)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    wait_for(kb_dir / "indexing", proc)  # the store is committed: the index phase has begun
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode != 0
    if sig == signal.SIGINT:  # says what happened, and what to do
        assert "Aborted!" not in err
        assert "interrupted while updating the search index; the sources are stored" in err and "'kb index'" in err
    again = kb(kb_dir, "ingest", str(DATA))
    assert again.returncode == 0, again.stderr
    assert "(0 stored, 4 unchanged)" in again.stdout  # nothing new to store …
    added = int(again.stdout.split("search index: ")[1].split(" added")[0])
    assert added > 0  # … but the index was completed
    assert _search_ids(kb_dir) == whole[1]


@pytest.mark.slow
def test_kb_index_completes_an_index_missing_documents(tmp_path, whole):
    """The state an interrupted index phase leaves, made by hand: the index of an earlier, smaller ingest."""
    kb_dir = tmp_path / "kb"
    assert kb(kb_dir, "ingest", "--quiet", str(SAMPLE_CR)).returncode == 0
    shutil.copytree(kb_dir / "index", tmp_path / "small-index")
    assert kb(kb_dir, "ingest", "--quiet", str(DATA)).returncode == 0
    shutil.rmtree(kb_dir / "index")
    shutil.copytree(tmp_path / "small-index", kb_dir / "index")
    checked = kb(kb_dir, "index")
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout.startswith("index: ") and " 0 added" not in checked.stdout
    assert _search_ids(kb_dir) == whole[1]


DAMAGE = {
    "segment cut": lambda index: _truncate(next(index.rglob("*.seg")), 1000),
    "segment overwritten": lambda index: _overwrite(next(index.rglob("*.seg")), 3000),
    "segment missing": lambda index: next(index.rglob("*.seg")).unlink(),
    "table of contents cut": lambda index: _truncate(next(index.rglob("*.toc")), 100),
}


def _truncate(path, size):
    with open(path, "r+b") as f:
        f.truncate(size)


def _overwrite(path, at):
    with open(path, "r+b") as f:
        f.seek(at)
        f.write(b"\0" * 1000)


@pytest.mark.slow
@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_index_names_its_remedy_and_kb_index_rebuilds_it(tmp_path, whole, damage):
    kb_dir = tmp_path / "kb"
    shutil.copytree(whole[0], kb_dir)
    DAMAGE[damage](kb_dir / "index")
    searched = kb(kb_dir, "search", "唱えた")
    if searched.returncode != 0:  # when a search notices, it says so and names the remedy
        assert searched.stderr.startswith(f"kb: error: {kb_dir / 'index'}: the search index is damaged (")
        assert searched.stderr.rstrip().endswith("run 'kb index' to rebuild it")
    checked = kb(kb_dir, "index")
    assert checked.returncode == 0, checked.stderr
    said = _said(checked.stderr)
    assert said[0].startswith("index: damaged (") and said[-1].endswith("rebuilt"), checked.stderr
    assert _search_ids(kb_dir) == whole[1]
    assert _said(kb(kb_dir, "index").stderr) == []  # whole again


def _said(stderr: str) -> list[str]:
    """The lines of ``stderr`` but the progress lines a stage that runs long writes for a log (``kb index: …``,
    kb.cli.terminal.StageProgress: on a loaded machine a rebuild takes long enough to have them)."""
    return [line for line in stderr.splitlines() if not line.startswith("kb index: ")]


READERS = (["search", "唱えた"], ["export"], ["links", "601.2f"])
TEXT = "かつて、呪文を唱えること".encode()  # from rule 601.1


def _node_pages(path) -> list[int]:
    """Byte offsets of the leaf pages of the store's ``nodes`` table (SQLite's dbstat)."""
    with closing(sqlite3.connect(path)) as db:
        size = db.execute("PRAGMA page_size").fetchone()[0]
        return [(n - 1) * size for (n,) in db.execute(
            "SELECT pageno FROM dbstat WHERE name = 'nodes' AND pagetype = 'leaf' ORDER BY pageno")]


def _schema_pages(path, db: bytes) -> tuple[int, int]:
    return 100, 4096  # page 1 after the file header: the table of tables


def _a_table_page(path, db: bytes) -> tuple[int, int]:
    page = _node_pages(path)[0]
    return page, page + 8  # the b-tree page header of a page of nodes


def _inside_a_text(path, db: bytes) -> tuple[int, int]:
    at = next(db.index(TEXT, page) for page in _node_pages(path) if TEXT in db[page:page + 4096]) + 4
    return at, at + 1  # one byte in the middle of a character


@pytest.mark.parametrize("where, commands", [
    (_schema_pages, (*READERS, ["ingest", str(DATA)])),  # refused when the store opens
    (_a_table_page, (["export"],)),  # found while reading (export reads every node)
    (_inside_a_text, (["export"],)),  # a text no longer UTF-8
])
def test_a_damaged_database_names_its_remedy(tmp_path, whole, where, commands):
    kb_dir = tmp_path / "kb"
    shutil.copytree(whole[0], kb_dir)
    db = (kb_dir / "kb.sqlite").read_bytes()
    start, end = where(kb_dir / "kb.sqlite", db)
    (kb_dir / "kb.sqlite").write_bytes(db[:start] + b"\xff" * (end - start) + db[end:])
    for args in commands:
        result = kb(kb_dir, *args)
        assert result.returncode == 1, (args, result.stderr)
        line = result.stderr.strip()
        assert "\n" not in line and line.startswith(f"kb: error: {kb_dir / 'kb.sqlite'}: damaged kb database ("), line
        assert line.endswith("restore it from a backup, or move it away and ingest again"), (args, line)
