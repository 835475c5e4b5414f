"""Finding 21.2: a killed ``kb update`` left a stale index that nothing healed. Killed after its database commit and
before its index swap, the index missed the new text and the next ``kb update`` said "already up to date"; killed
between moving the old index aside and the new one in, there was no index at all; an index folder deleted by hand
was not rebuilt by ``kb ingest``. The store now changes a content generation in the transaction of every content
change and the index records the one it holds: every writer that finds them apart, or no index, brings the index in
line first. Replayed with real ``kb`` processes killed with SIGKILL at those points."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys

import pytest
from hostile import REPO, SAMPLE_CR, kb, wait_for

pytestmark = pytest.mark.slow  # processes, servers or several ingests each: out of the quick suite

EDITED = ("通常、そのマナ・コストだけである。", "通常、そのマナ・コストのみである。")

# ``kb update`` of one source, stopped for good at a point of its commit: "before-swap" (the database committed,
# the new index still in the staging folder) or "between" (the old index moved aside, the new one not yet in)
HELD_IN_COMMIT = """
import os, sys, time
from pathlib import Path

import kb.update as update

where, kb_dir, source = sys.argv[1:4]


def held(folder, staging, sites):
    if where == "between":
        os.replace(folder / update.INDEX_DIR, folder / f".{update.INDEX_DIR}.old")
    (Path(folder) / "held").touch()
    time.sleep(120)


update._commit = held
update.run_update(kb_dir, sources=[source])
"""


def _later(tmp_path):
    text = SAMPLE_CR.read_text(encoding="utf-8-sig")
    assert EDITED[0] in text
    later = tmp_path / "JPN_CR_20240301.txt"
    later.write_text(text.replace("和訳 20231117.0 版", "和訳 20240301.0 版").replace("2023-11-17", "2024-03-01")
                     .replace(*EDITED), encoding="utf-8")
    return later


def _found(kb_dir, query="マナ・コスト") -> tuple[list[tuple[str, str]], str]:
    """(id, version) of the hits of ``query``, and what the search said on stderr."""
    result = kb(kb_dir, "search", "--json", "--limit", "50", query)
    assert result.returncode == 0, result.stderr
    return [(h["id"], h["version"]) for h in json.loads(result.stdout)], result.stderr


@pytest.mark.parametrize("where", ["before-swap", "between"])
@pytest.mark.parametrize("healer", ["update", "ingest", "index"])
def test_an_update_killed_in_its_commit_is_healed_by_the_next_writer(tmp_path, where, healer):
    kb_dir = tmp_path / "kb"
    assert kb(kb_dir, "ingest", "--quiet", str(SAMPLE_CR)).returncode == 0
    later = _later(tmp_path)
    proc = subprocess.Popen([sys.executable, "-c", HELD_IN_COMMIT, where, str(kb_dir), str(later)], cwd=REPO,
                            env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    wait_for(kb_dir / "held", proc)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    if where == "before-swap":  # the reader answers from the old index (without the new version), and says so
        hits, said = _found(kb_dir)
        assert ("cr:601.2f", "20240301.0") not in hits
        assert "the search index is stale (the store changed since it was indexed): run 'kb index'" in said
    else:
        assert not (kb_dir / "index").exists()
    if healer == "update":
        healed = kb(kb_dir, "update", str(later))
        assert healed.returncode == 0 and "nothing changed" in healed.stdout + healed.stderr
    elif healer == "ingest":
        healed = kb(kb_dir, "ingest", str(later))
        assert healed.returncode == 0 and "(0 stored, 1 unchanged)" in healed.stdout
    else:
        assert kb(kb_dir, "index").returncode == 0
    hits, said = _found(kb_dir)
    assert ("cr:601.2f", "20240301.0") in hits and "stale" not in said


@pytest.mark.parametrize("writer", [("ingest", str(SAMPLE_CR)), ("update", str(SAMPLE_CR)), ("index",)])
def test_a_deleted_index_is_rebuilt_by_every_writer(tmp_path, writer):
    kb_dir = tmp_path / "kb"
    assert kb(kb_dir, "ingest", "--quiet", str(SAMPLE_CR)).returncode == 0
    before, _ = _found(kb_dir, "唱えた")
    shutil.rmtree(kb_dir / "index")
    missing = kb(kb_dir, "search", "唱えた")
    assert missing.returncode == 1 and "no search index" in missing.stderr
    again = kb(kb_dir, *writer)
    assert again.returncode == 0, again.stderr
    after, said = _found(kb_dir, "唱えた")
    assert after == before and before and "stale" not in said
