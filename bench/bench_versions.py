"""Benchmark what keeping history costs: 3 and 11 English CR versions stored, each figure a ratio within one run.

The versions: the three real files of the corpus (2023-11-17, 2025-11-14, 2026-01-16) and, for more, copies of the
2026-01-16 file as later versions (``effective as of February N, 2026``), each with one rule edited — written to a
temporary folder, never to the repository. Every ``kb`` command runs as its own process (what a user runs):

  * full: ``kb ingest`` of all versions (the newest in a process of its own, whose peak RSS is the ingest memory)
    + ``kb build``;
  * ``kb update FILE --out SITE`` after one rule of the newest version changed (median of 3 such changes): ratio of
    the full ingest + build (goal ≤ 10 % at both sizes);
  * ``kb build`` with nothing changed, as a new process (median of 3): ratio of the full build (goal ≤ 5 %);
  * search on the newest version, warm (one :class:`kb.search.Searcher`; and the ``kb.search.search()`` API, a store
    opened per call), p95 and p50 over a fixed query list, against the same with 1 version stored (goal: p95 at 11
    ≤ 1.2 × p95 at 1, and ≤ 30 ms);
  * peak RSS of ingesting the newest version with the others stored, against ingesting it alone (goal ≤ 2 ×).

Usage: .venv/bin/python bench/bench_versions.py [--sizes 3,11] [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import REPO, byte_compile, corpus_dir  # noqa: E402

REAL = ("MagicCompRules-2023-11-17.txt", "MagicCompRules-2025-11-14.txt", "MagicCompRules-2026-01-16.txt")
EFFECTIVE = "These rules are effective as of January 16, 2026."
EDITED_RULE = "Some static abilities create one-shot effects"
REPEAT = 3  # the no-change build and the one-rule update: median of this many runs
ONE_RULE_EDITS = ("one-time", "single-shot", "one-off")
QUERIES = ["cast a spell", "mana cost", "trample", "601.2f", "Manifest", "state-based actions", "combat damage",
           "token", "counter on a creature", "exile", "priority", "replacement effect", "702.19", "deathtouch",
           "hexproof", "copy of a spell", "casting", "library", "sacrifice", "commander"]


def versions(folder: Path, count: int) -> list[Path]:
    """``count`` English CR files, oldest first: the real ones, then dated copies of the newest, each edited."""
    source = corpus_dir()
    out = []
    for name in REAL[-count:] if count <= len(REAL) else REAL:
        out.append(folder / name)
        out[-1].write_bytes((source / name).read_bytes())
    newest = (source / REAL[-1]).read_text(encoding="utf-8-sig")
    assert EFFECTIVE in newest and EDITED_RULE in newest
    for day in range(1, count - len(REAL) + 1):
        text = newest.replace(EFFECTIVE, f"These rules are effective as of February {day}, 2026.")
        text = text.replace(EDITED_RULE, f"{EDITED_RULE} (revision {day})")
        out.append(folder / f"MagicCompRules-2026-02-{day:02}.txt")
        out[-1].write_text(text, encoding="utf-8")
    return out


def kb(kb_dir: Path, *args: str) -> tuple[float, int]:
    """Run ``kb --kb-dir KB_DIR ARGS…`` as a process of its own: (seconds, its peak RSS in bytes)."""
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # the child: kb, its output dropped
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.chdir(REPO)
        os.execv(sys.executable, [sys.executable, "-m", "kb.cli", "--kb-dir", str(kb_dir), *args])
    _, status, usage = os.wait4(pid, 0)
    if status:
        raise SystemExit(f"kb {' '.join(args)} failed (status {status}); run it by hand to see why")
    return time.perf_counter() - start, usage.ru_maxrss * 1024


def query_times(kb_dir: Path, rounds: int) -> dict[str, list[float]]:
    """Warm latencies (seconds) of every query: a Searcher kept open, and the search() API."""
    code = f"""
import json, time
from kb.search import Searcher, search
from kb.store import Store
queries = {QUERIES!r}
out = {{"searcher": [], "api": []}}
with Store.open({str(kb_dir)!r}, create=False) as store, Searcher(store) as s:
    for q in queries:
        s.search(q)
    for _ in range({rounds}):
        for q in queries:
            t = time.perf_counter(); s.search(q); out["searcher"].append(time.perf_counter() - t)
for q in queries:
    search({str(kb_dir)!r}, q)
for _ in range({rounds}):
    for q in queries:
        t = time.perf_counter(); search({str(kb_dir)!r}, q); out["api"].append(time.perf_counter() - t)
print(json.dumps(out))
"""
    import json

    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] if q < 100 else max(values)


def run_size(folder: Path, count: int, rounds: int) -> dict:
    (folder / f"cr-{count}").mkdir()
    files = versions(folder / f"cr-{count}", count)
    kb_dir, site = folder / f"kb-{count}", folder / f"site-{count}"
    t_older = kb(kb_dir, "ingest", "-q", *map(str, files[:-1]))[0] if len(files) > 1 else 0.0
    t_newest, rss = kb(kb_dir, "ingest", "-q", str(files[-1]))
    t_build = kb(kb_dir, "build", "--out", str(site))[0]
    t_noop = statistics.median(kb(kb_dir, "build", "--out", str(site))[0] for _ in range(REPEAT))
    updates, wording = [], "one-shot"
    for new_wording in ONE_RULE_EDITS:  # each a change of the same one rule
        text = files[-1].read_text(encoding="utf-8")
        files[-1].write_text(text.replace(f"create {wording} effects", f"create {new_wording} effects", 1), encoding="utf-8")
        wording = new_wording
        updates.append(kb(kb_dir, "update", str(files[-1]), "--out", str(site))[0])
    t_update = statistics.median(updates)
    times = query_times(kb_dir, rounds)
    return {"count": count, "full": t_older + t_newest + t_build, "ingest": t_older + t_newest, "build": t_build,
            "noop": t_noop, "update": t_update, "rss": rss, "times": times}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="3,11", help="numbers of versions stored (comma-separated)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds over the query list")
    args = parser.parse_args()
    byte_compile()
    sizes = [int(x) for x in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="kb-bench-versions-") as tmp:
        folder = Path(tmp)
        one = run_size(folder, 1, args.rounds)
        results = [run_size(folder, n, args.rounds) for n in sizes]
    base_p95 = p(one["times"]["searcher"], 95)
    print(f"1 version: ingest {one['ingest']:.1f} s, peak RSS {one['rss'] / 1e6:.0f} MB; "
          f"search p95 {base_p95 * 1000:.1f} ms, search() p50 {statistics.median(one['times']['api']) * 1000:.1f} ms")
    for r in results:
        p95 = p(r["times"]["searcher"], 95)
        print(f"{r['count']} versions:")
        print(f"  full ingest + build        {r['full']:7.1f} s  (ingest {r['ingest']:.1f} s, build {r['build']:.1f} s)")
        print(f"  one-rule kb update         {r['update']:7.1f} s  = {r['update'] / r['full'] * 100:5.1f} % of full "
              f"(goal ≤ 10 %)")
        print(f"  kb build, nothing changed  {r['noop']:7.2f} s  = {r['noop'] / r['build'] * 100:5.1f} % of the full build "
              f"(goal ≤ 5 %)")
        print(f"  search p95 (Searcher)      {p95 * 1000:7.1f} ms = {p95 / base_p95:5.2f} × p95 at 1 version "
              f"(goal ≤ 1.2 ×, ≤ 30 ms); search() p50 {statistics.median(r['times']['api']) * 1000:.1f} ms")
        print(f"  ingest peak RSS            {r['rss'] / 1e6:7.0f} MB = {r['rss'] / one['rss']:5.2f} × with 1 version "
              f"(goal ≤ 2 ×)")


if __name__ == "__main__":
    main()
