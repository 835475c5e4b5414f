"""Benchmark search: index build, warm query latency, cold start of ``kb search``.

Figures, each against a baseline measured in the same run (this machine is noisy):
  * index build (``update_index(rebuild=True)``) over the 2026-01-16 English CR plus data/, as a ratio of one
    SudachiPy mode-C tokenisation pass over the same text (names, text and examples of every node; goal ≤ 3×),
    and our analysis alone (the same fields, no Whoosh) on the same scale, in wall and in CPU time (what a loaded
    machine inflates less); then one changed node (the MTG Wiki article of data/ edited) brought into the index,
    wall and CPU; peak Python memory (tracemalloc);
  * query latency over the evaluation set (tests/fixtures/search/eval.jsonl), warm, median and p95 (goal p95 ≤ 30 ms),
    beside the plain character-bigram baseline of tests/search_eval.py on the same nodes;
  * cold start of ``kb search 唱えた`` as a process (goal ≤ 1.5 s), against ``kb --help`` as a process;
  * the one-call API ``kb.search.search(kb_dir, q)`` in a warm process on the realistic case (data/ + the three
    English CRs; goal p95 ≤ 30 ms: the current view and the Searcher are kept per store generation, kb.search.warm),
    and ``kb search`` as a process there (goal ≤ 0.5 s median).

Usage: .venv/bin/python bench/bench_search.py [--repeat N] [--build-only]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from search_eval import baseline, load_cases  # noqa: E402

from bench._common import REPO, best_of, corpus_dir, peak_memory  # noqa: E402
from kb.pipeline import ingest_sources  # noqa: E402
from kb.search import userdict  # noqa: E402
from kb.search.index import node_fields, update_index  # noqa: E402
from kb.search.query import Searcher  # noqa: E402
from kb.search.query import search as search_once  # noqa: E402
from kb.splitter import JapaneseSplitter  # noqa: E402
from kb.store import Store  # noqa: E402

KB = str(REPO / ".venv" / "bin" / "kb")


def sudachi_pass(texts: list[str]) -> None:
    from sudachipy import Dictionary, SplitMode

    tokenizer = Dictionary().tokenizer()
    for text in texts:
        for line in text.split("\n"):
            if line:
                tokenizer.tokenize(line, SplitMode.C)


def analyse_all(nodes, splitter: JapaneseSplitter) -> None:
    """The analysis the index build does (every field of every node: :func:`node_fields`), without Whoosh."""
    for node in nodes:
        node_fields(splitter, node, "")


def latencies(search, queries: list[str], rounds: int, clock=time.perf_counter) -> list[float]:
    """Each query's time over ``rounds`` after one warm-up pass, sorted; ``clock=time.process_time`` gives CPU seconds
    of this process (what a loaded machine does not inflate)."""
    for q in queries:  # warm
        search(q)
    times = []
    for _ in range(rounds):
        for q in queries:
            start = clock()
            search(q)
            times.append(clock() - start)
    return sorted(times)


def p95(times: list[float]) -> float:
    return times[min(len(times) - 1, int(len(times) * 0.95))]


def wall_and_cpu(fn, repeat: int) -> tuple[float, float]:
    """Median wall and median CPU seconds (of this process) of ``repeat`` calls."""
    walls, cpus = [], []
    for _ in range(repeat):
        start, cpu = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def one_node_update(store: Store, splitter: JapaneseSplitter, folder: Path, repeat: int) -> tuple[float, float]:
    """Median wall and CPU seconds of the index update after one node changed: the MTG Wiki article of data/ stored
    with one word more, then as it was (each ingested without its index update, then ``update_index`` timed)."""
    article = next((REPO / "data" / "mtgwiki").glob("*.html"))
    edited = folder / article.name
    html = article.read_text(encoding="utf-8")
    walls, cpus = [], []
    for i in range(2 * repeat):
        if i % 2 == 0:
            edited.write_text(html.replace("</p>", "呪文</p>", 1), encoding="utf-8")
        else:
            shutil.copyfile(article, edited)
        ingest_sources(store, [str(edited)], index=False, splitter=splitter)
        start, cpu = time.perf_counter(), time.process_time()
        report = update_index(store, splitter=splitter)
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
        assert report.updated == 1 and report.added == report.removed == 0, report
    return statistics.median(walls), statistics.median(cpus)


def process_time(args: list[str], repeat: int) -> float:
    return best_of(lambda: subprocess.run(args, check=True, capture_output=True), repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--build-only", action="store_true", help="only the index build and the one-node update")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(tmp)
        ingest_sources(store, [str(REPO / "data"), str(corpus_dir() / "MagicCompRules-2026-01-16.txt")])
        nodes = list(store.nodes())
        texts = ["\n".join(x for x in (n.title, *n.aliases, n.english, n.text, *n.examples) if x) for n in nodes]
        print(f"{len(nodes)} nodes, {sum(map(len, texts)):,} characters")

        splitter = userdict.prepare(store, JapaneseSplitter())  # the store's user dictionary, as the index build uses
        sudachi_pass(texts[:10])  # load the dictionary outside the timing
        t_sudachi, c_sudachi = wall_and_cpu(lambda: sudachi_pass(texts), args.repeat)
        t_analysis, c_analysis = wall_and_cpu(lambda: analyse_all(nodes, splitter), args.repeat)
        t_build, c_build = wall_and_cpu(lambda: update_index(store, rebuild=True, splitter=splitter), args.repeat)
        print("index build           wall (median)            CPU (median)")
        print(f"  Sudachi pass (baseline) {t_sudachi * 1000:6.0f} ms               {c_sudachi * 1000:6.0f} ms")
        print(f"  our analysis alone      {t_analysis * 1000:6.0f} ms = {t_analysis / t_sudachi:4.2f} × Sudachi"
              f"  {c_analysis * 1000:6.0f} ms = {c_analysis / c_sudachi:4.2f} × Sudachi")
        print(f"  update_index(rebuild)   {t_build * 1000:6.0f} ms = {t_build / t_sudachi:4.2f} × Sudachi"
              f"  {c_build * 1000:6.0f} ms = {c_build / c_sudachi:4.2f} × Sudachi (goal ≤ 3)")
        t_one, c_one = one_node_update(store, splitter, Path(tmp), args.repeat)
        print(f"  one changed node        {t_one * 1000:6.0f} ms = {t_one / t_build:5.1%} of the build"
              f"   {c_one * 1000:6.0f} ms = {c_one / c_build:5.1%}")
        if args.build_only:
            store.close()
            return
        m_sudachi = peak_memory(lambda: sudachi_pass(texts))
        m_build = peak_memory(lambda: update_index(store, rebuild=True, splitter=splitter))
        print(f"  peak memory: Sudachi {m_sudachi / 1e6:.1f} MB, build {m_build / 1e6:.1f} MB"
              f" = {m_build / max(m_sudachi, 1):.1f} ×")

        queries = [c.query for c in load_cases()]
        with Searcher(store) as searcher:
            ours = latencies(lambda q: searcher.search(q, limit=10), queries, args.repeat)
        search, close = baseline(store, Path(tmp) / "baseline")
        theirs = latencies(search, queries, args.repeat)
        close()
        print(f"query latency, warm, {len(queries)} queries × {args.repeat}")
        print(f"  bigram baseline  median {statistics.median(theirs) * 1000:6.1f} ms  p95 {p95(theirs) * 1000:6.1f} ms")
        print(f"  kb.search        median {statistics.median(ours) * 1000:6.1f} ms  p95 {p95(ours) * 1000:6.1f} ms"
              f"  (goal p95 ≤ 30 ms; {p95(ours) / p95(theirs):.1f} × baseline p95)")
        store.close()

        t_help = process_time([KB, "--help"], args.repeat)
        t_search = process_time([KB, "--kb-dir", tmp, "search", "唱えた"], args.repeat)
        t_number = process_time([KB, "--kb-dir", tmp, "search", "601.2f"], args.repeat)
        print("cold start (process)")
        print(f"  kb --help (baseline)  {t_help * 1000:6.0f} ms")
        print(f"  kb search 唱えた       {t_search * 1000:6.0f} ms  = {t_search / t_help:4.1f} × --help (goal ≤ 1.5 s)")
        print(f"  kb search 601.2f      {t_number * 1000:6.0f} ms  = {t_number / t_help:4.1f} × --help")

    with tempfile.TemporaryDirectory() as real:
        corpus = sorted(str(p) for p in corpus_dir().glob("MagicCompRules-*.txt"))
        with Store.open(real) as store:
            ingest_sources(store, [str(REPO / "data"), *corpus])
        start = time.perf_counter()
        search_once(real, "唱えた")
        first = time.perf_counter() - start
        api = latencies(lambda q: search_once(real, q), queries, args.repeat)
        print(f"realistic case: data/ + {len(corpus)} English CRs")
        print(f"  kb.search.search(kb_dir, q)  first call {first * 1000:6.0f} ms; warm, {len(queries)} queries ×"
              f" {args.repeat}: median {statistics.median(api) * 1000:5.1f} ms  p95 {p95(api) * 1000:5.1f} ms"
              f" (goal p95 ≤ 30 ms)")
        cpu = latencies(lambda q: search_once(real, q), queries, args.repeat, time.process_time)
        print(f"  the same in CPU time: median {statistics.median(cpu) * 1000:5.1f} ms  p95 {p95(cpu) * 1000:5.1f} ms")
        t_real = process_time([KB, "--kb-dir", real, "search", "唱えた"], args.repeat)
        t_real_number = process_time([KB, "--kb-dir", real, "search", "601.2f"], args.repeat)
        print(f"  kb search 唱えた (process)   {t_real * 1000:6.0f} ms median (goal ≤ 0.5 s)")
        print(f"  kb search 601.2f (process)  {t_real_number * 1000:6.0f} ms median")


if __name__ == "__main__":
    main()
