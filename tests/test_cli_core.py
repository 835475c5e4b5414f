"""`kb ingest`, `kb export`, `kb links` as a user runs them: summaries, JSON shape, exit codes, one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from click.testing import CliRunner
from conftest import DATA, REPO

from kb.cli import main

JA = str(DATA / "JPN_CR_20231117_0.txt")


def run(tmp_path, *args):
    return CliRunner().invoke(main, ["--kb-dir", str(tmp_path / "kb"), *args], catch_exceptions=False)


def test_ingest_prints_a_summary(tmp_path):
    result = run(tmp_path, "ingest", JA)
    assert result.exit_code == 0
    assert "sources: 1 read (1 stored, 0 unchanged), 0 failed" in result.output
    assert "nodes: chapter 3, glossary 10, rule 10, section 4, subrule 24" in result.output
    assert "refers to rule 728, which does not exist" in result.output  # the excerpt's dangling refs are reported


def test_export_shape(tmp_path):
    run(tmp_path, "ingest", JA)
    result = run(tmp_path, "export", "--lang", "ja", "--format", "json")
    records = {r["id"]: r for r in json.loads(result.output)}
    r = records["cr:601.2f"]
    assert {k: r[k] for k in ("kind", "number", "parent", "lang", "version")} == {
        "kind": "subrule", "number": "601.2f", "parent": "cr:601.2", "lang": "ja", "version": "20231117.0"}
    assert r["source"].endswith("JPN_CR_20231117_0.txt")
    assert r["refs"] == [{"kind": "rule", "target": "601.2b", "text": "601.2b", "resolved": True,
                          "node": {"id": "cr:601.2b", "version": "20231117.0", "lang": "ja"}},
                         *({"kind": "auto-term", "target": term, "text": term, "resolved": True,  # kb/link/termlinks.py
                            "node": {"id": f"gl:{term}", "version": "20231117.0", "lang": "ja"}}
                           for term in ("総コスト", "マナ・コスト"))]
    assert {c["id"] for c in r["cited_by"]} >= {"cr:601.2", "cr:601.2b", "cr:601.2i", "cr:601.5", "gl:総コスト"}
    assert records["gl:唱える"]["english"] == "Cast"
    unresolved = [x for x in records["cr:601.2"]["refs"] if not x["resolved"]]
    assert [x["target"] for x in unresolved] == ["728"]
    lines = run(tmp_path, "export", "--kind", "glossary").output.splitlines()
    assert len(lines) == 10 and all(json.loads(line)["kind"] == "glossary" for line in lines)


def test_links_both_directions(tmp_path):
    run(tmp_path, "ingest", JA)
    result = run(tmp_path, "links", "６０１．２ｆ")
    assert result.exit_code == 0
    assert "cr:601.2f [20231117.0 ja]" in result.output
    assert "    rule: 1\n      601.2b → cr:601.2b [20231117.0 ja]\n" in result.output and "gl:総コスト" in result.output


def test_strict_fails(tmp_path):
    result = run(tmp_path, "ingest", "--strict", JA)
    assert result.exit_code == 1
    assert "--strict" in result.output


def test_bad_file_is_one_line_and_nonzero(tmp_path):
    bad = tmp_path / "notes.txt"
    bad.write_text("hello\n")
    env = {**os.environ, "KB_HOME": str(tmp_path / "kb")}
    proc = subprocess.run([sys.executable, "-m", "kb.cli", "ingest", str(bad)], capture_output=True, text=True, env=env, cwd=REPO)
    assert proc.returncode == 1
    assert f"error: {bad}:1: not a Comprehensive Rules text" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_missing_store_is_a_clear_error(tmp_path):
    env = {**os.environ, "KB_HOME": str(tmp_path / "nothing")}
    proc = subprocess.run([sys.executable, "-m", "kb.cli", "export"], capture_output=True, text=True, env=env, cwd=REPO)
    assert proc.returncode == 1
    assert proc.stderr.strip() == (f"kb: error: {tmp_path / 'nothing' / 'kb.sqlite'}: no knowledge base here; "
                                   f"run 'kb ingest' first (or pass --kb-dir)")
