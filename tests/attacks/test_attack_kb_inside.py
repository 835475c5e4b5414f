"""Second attack run, a Low finding: ``kb ingest`` of a folder that holds the kb folder read kb's own cache pages and
index files as sources. Replayed with a real ``kb`` process: a copy of data/ holding two knowledge bases — the
default hidden ``.kb/`` and a visible one named by ``--kb-dir`` — ingests the sample's files alone, twice."""

from __future__ import annotations

import shutil

import pytest
from conftest import copy_kb
from hostile import DATA, kb

pytestmark = pytest.mark.slow  # processes, servers or several ingests each: out of the quick suite


def _sources(result) -> str:
    return next(line for line in result.stdout.splitlines() if line.startswith("sources: "))


def test_a_folder_holding_kb_folders_ingests_only_its_own_files(tmp_path, data_kb):
    folder = tmp_path / "data"
    shutil.copytree(DATA, folder)
    files = sum(1 for p in DATA.rglob("*") if p.is_file() and not p.name.startswith("."))
    visible, hidden = folder / "mykb", folder / ".kb"
    first = kb(visible, "ingest", "-q", str(folder))
    assert first.returncode == 0, first.stderr
    copy_kb(data_kb, hidden)  # a second kb, with its index, inside the folder
    assert (visible / "kb.sqlite").is_file() and (hidden / "index").is_dir()
    again = kb(visible, "ingest", "-q", str(folder))
    assert again.returncode == 0, again.stderr
    assert _sources(first) == f"sources: {files} read ({files} stored, 0 unchanged), 0 failed, 0 gave nothing"
    assert _sources(again) == f"sources: {files} read (0 stored, {files} unchanged), 0 failed, 0 gave nothing"
