"""Second attack run, finding 15: a 0.4 MB MTG Wiki page of ``rule 601.2a-z、`` × 25,000 became 600,000 references
and a 140 MB database. Replayed with a real ``kb`` process: each node keeps at most MAX_REFS_PER_NODE references,
with a warning naming the node, and the rest of the page is stored as usual."""

from __future__ import annotations

import json

import pytest
from hostile import kb, wiki_page

from kb.pipeline import MAX_REFS_PER_NODE

pytestmark = pytest.mark.slow  # processes, servers or several ingests each: out of the quick suite


def test_a_page_of_600000_references_keeps_a_bounded_number_with_a_warning(tmp_path):
    page = tmp_path / "参照だらけ.html"
    page.write_bytes(wiki_page("参照だらけ", "<p>" + "rule 601.2a-z、" * 25_000 + "</p>"))
    result = kb(tmp_path / "kb", "ingest", str(page), timeout=300)
    assert result.returncode == 0, result.stderr
    assert f"wiki:参照だらけ: 600,000 references; only the first {MAX_REFS_PER_NODE:,} are kept" in result.stderr
    exported = [json.loads(line) for line in kb(tmp_path / "kb", "export").stdout.splitlines()]
    (article,) = [rec for rec in exported if rec["id"] == "wiki:参照だらけ"]
    assert len(article["refs"]) == MAX_REFS_PER_NODE
    assert article["refs"][0]["target"] == "601.2a" and article["text"].startswith("rule 601.2a-z、")
