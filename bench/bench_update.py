"""Benchmark rules updates on the real English CR: the version diff, and full build versus rebuild.

Figures are ratios against baselines measured in the same run (this machine is noisy):
  * diff 2025-11-14 → 2026-01-16 (and 2023-11-17 → 2025-11-14, the big renumbering), uncached: ``diff_nodes`` on the
    two versions' nodes, against the baseline of reading those nodes from the store; cached (``diff_versions`` with
    the result kept in the diff cache, what a rebuild pays); peak Python memory of the uncached diff against the read;
  * site: a full build of the English CR site (three versions ingested, so rule histories and 更新履歴 pages are
    in), then ``kb update`` after changing one rule, then one glossary entry (a copy of the 2026-01-16 file edited in a
    temporary folder), and a rebuild with nothing changed. Each as a ratio of the full build; for the updates the
    builder's own time (pages rendered/reused) and the whole update (copy, ingest, index, diff, build, commit).

Usage: .venv/bin/python bench/bench_update.py [--repeat N]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import best_of, corpus_dir, peak_memory  # noqa: E402
from kb.pipeline import ingest_sources  # noqa: E402
from kb.site.builder import build_site  # noqa: E402
from kb.store import Store  # noqa: E402
from kb.update import run_update  # noqa: E402
from kb.versions.catalog import resolve_pair  # noqa: E402
from kb.versions.diff import KIND_LEVELS, diff_nodes, diff_versions  # noqa: E402

FILES = ("MagicCompRules-2023-11-17.txt", "MagicCompRules-2025-11-14.txt", "MagicCompRules-2026-01-16.txt")
RULE_EDIT = ("Some static abilities create one-shot effects", "Some static abilities create one-time effects")
GLOSSARY_EDIT = ("To blight N means to put N -1/-1 counters", "To blight N means to place N -1/-1 counters")


def bench_diff(store: Store, old: str, new: str, repeat: int) -> None:
    a, b = resolve_pair(store, old, new)

    def read():
        return list(store.nodes(a.version, a.lang, KIND_LEVELS)), list(store.nodes(b.version, b.lang, KIND_LEVELS))

    old_nodes, new_nodes = read()
    t_read = best_of(read, repeat)
    t_diff = best_of(lambda: diff_nodes(old_nodes, new_nodes, b.lang), repeat)
    diff_versions(store, a, b)  # fills the cache
    t_cached = best_of(lambda: diff_versions(store, a, b), repeat)
    m_read = peak_memory(read)
    m_diff = peak_memory(lambda: diff_nodes(old_nodes, new_nodes, b.lang))
    counts = diff_versions(store, a, b).counts()
    print(f"diff {old} → {new}: {counts}")
    print(f"  read both versions (baseline) {t_read * 1000:7.0f} ms")
    print(f"  diff, uncached                {t_diff * 1000:7.0f} ms  = {t_diff / t_read:5.2f} × read")
    print(f"  diff_versions, cached         {t_cached * 1000:7.0f} ms  = {t_cached / t_read:5.2f} × read")
    print(f"  peak memory: read {m_read / 1e6:.1f} MB, diff {m_diff / 1e6:.1f} MB = {m_diff / m_read:.2f} × read")


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8-sig")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def bench_site(work: Path) -> None:
    kb_dir, site = work / "kb", work / "site"
    sources = work / "cr"
    sources.mkdir()
    for name in FILES:
        shutil.copyfile(corpus_dir() / name, sources / name)
    with Store.open(kb_dir) as store:
        ingest_sources(store, [str(sources)])
        full = build_site(store, site)
        print(f"site: full build {full.seconds:.2f} s, {full.pages} pages ({full.pages / full.seconds:.0f} pages/s)")
        nothing = build_site(store, site)
    rows = [("rebuild, nothing changed", nothing.seconds, nothing, None)]
    latest = sources / FILES[-1]
    for label, (old, new) in (("update, one rule changed", RULE_EDIT), ("update, one glossary entry changed", GLOSSARY_EDIT)):
        edit(latest, old, new)
        started = time.perf_counter()
        result = run_update(kb_dir, sources=[str(latest)], out=site)
        total = time.perf_counter() - started
        assert result.changed and result.build is not None
        rows.append((label, result.build.seconds, result.build, total))
    started = time.perf_counter()
    unchanged = run_update(kb_dir, sources=[str(latest)], out=site)
    rows.append(("update, nothing changed", 0.0, None, time.perf_counter() - started))
    assert not unchanged.changed
    for label, seconds, build, total in rows:
        line = f"  {label:36}"
        if build is not None:
            line += (f" build {seconds:6.2f} s = {seconds / full.seconds:6.1%} of full ({build.rendered} rendered,"
                     f" {build.reused} reused)")
        if total is not None:
            line += f"; whole update {total:6.2f} s = {total / full.seconds:6.1%} of full build"
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kb-bench-update-") as tmp:
        work = Path(tmp)
        with Store.open(work / "diffkb") as store:
            ingest_sources(store, [str(corpus_dir() / name) for name in FILES])
            bench_diff(store, "2025-11-14", "2026-01-16", args.repeat)
            bench_diff(store, "2023-11-17", "2025-11-14", args.repeat)
        bench_site(work)


if __name__ == "__main__":
    main()
