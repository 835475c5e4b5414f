"""Second attack run, finding 8: a failed ``kb update`` (its ``--out`` names a folder not built by kb) still rewrote a
live index file: the update stages the index as hard links to the live files, and one of them was written in place.
Replayed with a real ``kb`` process: every file of the live index is byte for byte as before, and so is the store."""

from __future__ import annotations

import hashlib

import pytest
from hostile import SAMPLE_CR, kb

pytestmark = pytest.mark.slow  # processes, servers or several ingests each: out of the quick suite


def _digests(folder) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_an_update_failing_at_its_build_leaves_the_live_index_and_store_as_they_were(tmp_path):
    kb_dir, source = tmp_path / "kb", tmp_path / SAMPLE_CR.name
    source.write_bytes(SAMPLE_CR.read_bytes())
    assert kb(kb_dir, "ingest", "-q", str(source)).returncode == 0
    # the same file edited: the update re-indexes the scope the live index already has
    source.write_bytes(SAMPLE_CR.read_bytes().replace("マナ・コストだけ".encode(), "マナ・コストのみ".encode()))
    not_a_site = tmp_path / "mine"
    not_a_site.mkdir()
    (not_a_site / "notes.txt").write_text("mine", encoding="utf-8")
    before_index, before_db = _digests(kb_dir / "index"), hashlib.sha256((kb_dir / "kb.sqlite").read_bytes()).hexdigest()
    failed = kb(kb_dir, "update", str(source), "--out", str(not_a_site))
    assert failed.returncode == 1 and "is not a site built by kb" in failed.stderr
    assert _digests(kb_dir / "index") == before_index
    assert hashlib.sha256((kb_dir / "kb.sqlite").read_bytes()).hexdigest() == before_db
