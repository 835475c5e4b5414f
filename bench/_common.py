"""Helpers shared by the bench scripts: where the corpus is, kb byte-compiled, timing with repeats, peak memory."""

from __future__ import annotations

import compileall
import os
import statistics
import time
import tracemalloc
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def corpus_dir() -> Path:
    path = Path(os.environ.get("KB_CORPUS_DIR") or REPO.parent / "shared" / "corpus" / "en-cr")
    if not (path / "MagicCompRules-2026-01-16.txt").is_file():
        raise SystemExit(f"English CR corpus not found in {path}; set KB_CORPUS_DIR")
    return path


def byte_compile(root: Path = REPO) -> None:
    """Byte-compile kb's modules under ``root`` (its ``kb/`` and ``ingest/``) as a first run leaves them on a machine
    that writes bytecode, before a bench times commands as new processes: this machine sets
    ``PYTHONDONTWRITEBYTECODE``, under which every process would compile each module it imports again (0.1–0.3 s)."""
    for package in ("kb", "ingest"):
        compileall.compile_dir(root / package, quiet=1)


def best_of(fn, repeat: int = 5) -> float:
    """Median wall time of ``repeat`` calls, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def peak_memory(fn) -> int:
    """Peak bytes allocated by Python while ``fn`` runs (tracemalloc)."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
