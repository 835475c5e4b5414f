"""Second attack run, finding 4: two ``kb build`` s from two knowledge bases into the same ``--out`` (two different
writer locks) left a site mixed of both, and both exited 0. The output folder has its own lock now
(:func:`kb.site.output.output_lock`). Replayed with real ``kb build`` processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hostile import DATA, REPO, SAMPLE_CR, kb, kb_process, wait_for

pytestmark = pytest.mark.slow  # processes, servers or several ingests each: out of the quick suite


@pytest.fixture(scope="module")
def two_kbs(tmp_path_factory) -> tuple[Path, Path]:
    """Two knowledge bases that make different sites: the bundled sample, and its Japanese CR alone."""
    root = tmp_path_factory.mktemp("two-kbs")
    for kb_dir, source in ((root / "whole", DATA), (root / "rules", SAMPLE_CR)):
        done = kb(kb_dir, "ingest", "--quiet", str(source))
        assert done.returncode == 0, done.stderr
    return root / "whole", root / "rules"


@pytest.fixture(scope="module")
def references(two_kbs, tmp_path_factory) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """The site each knowledge base makes alone (:func:`site_files`)."""
    root = tmp_path_factory.mktemp("references")
    sites = []
    for n, kb_dir in enumerate(two_kbs):
        out = root / f"site{n}"
        done = kb(kb_dir, "build", "--out", str(out))
        assert done.returncode == 0, done.stderr
        sites.append(site_files(out))
    assert sites[0] != sites[1]
    return sites[0], sites[1]


def site_files(out: Path) -> dict[str, bytes]:
    """Every file's bytes by path, but kb's records and the static search (whose document ids and vocabulary an
    incremental build keeps from the previous one, by design: kb.site.search_export)."""
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and not p.relative_to(out).as_posix().startswith((".kb-build/", "search/"))}


def test_a_second_build_into_a_folder_being_built_waits_then_fails_in_one_line(two_kbs, references, tmp_path, monkeypatch):
    whole, rules = two_kbs
    out = tmp_path / "site"
    first = kb_process(whole, "build", "--out", str(out))
    wait_for(tmp_path / f".site.staging-{first.pid}", first)  # the first build is writing
    first.send_signal(signal.SIGSTOP)  # and stays there, holding what it holds, while the second one tries
    monkeypatch.setenv("KB_WRITER_WAIT", "0.5")
    try:
        second = kb(rules, "build", "--out", str(out))
        update = kb(rules, "update", "--out", str(out), str(DATA / "release-notes"))  # kb update takes it first
    finally:
        first.send_signal(signal.SIGCONT)
    monkeypatch.delenv("KB_WRITER_WAIT")
    stdout, stderr = first.communicate(timeout=300)
    assert first.returncode == 0, stderr
    assert second.returncode == 1, (second.stdout, second.stderr)
    assert second.stderr.strip().splitlines() == [
        f"kb: error: another kb is building {out.resolve()} (pid {first.pid}); try again when it has finished"]
    assert update.returncode == 1 and f"another kb is building {out.resolve()} (pid {first.pid})" in update.stderr
    assert site_files(out) == references[0]  # the first build's site, untouched by the second
    again = kb(rules, "build", "--out", str(out))
    assert again.returncode == 0, again.stderr
    assert site_files(out) == references[1]


def test_two_builds_from_two_knowledge_bases_at_once_leave_one_whole_site(two_kbs, references, tmp_path):
    out = tmp_path / "site"
    env = {**os.environ, "PYTHONPATH": str(REPO), "KB_WRITER_WAIT": "300"}
    procs = [subprocess.Popen([sys.executable, "-m", "kb.cli", "--kb-dir", str(kb_dir), "build", "--out", str(out)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, env=env)
             for kb_dir in two_kbs]
    results = [proc.communicate(timeout=600) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], results
    assert site_files(out) in references  # one of the two, whole: never a mix
    assert sorted(p.name for p in tmp_path.iterdir()) == [".site.lock", "site"]  # no staging folder left
