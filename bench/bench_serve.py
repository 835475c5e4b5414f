"""Benchmark ``kb serve`` under load: the realistic case (data/ + the three English CRs, the site built), served by
``kb serve`` as a new process, asked N requests at concurrency C by client threads of this process.

The mix: 70 % site pages (any page of the built site, drawn at random) and 30 % ``/_search?q=…`` with realistic
queries drawn from a pool — the evaluation set (tests/fixtures/search/eval.jsonl: Japanese words and conjugations,
full-width numbers, English phrases), rule numbers, English and Japanese glossary terms and conjugated verbs
(``--distinct``: every search a query not asked before, so no answer can come from a cache).
Reported for pages and searches apart: p50/p95/p99 latency, errors (an HTTP status other than 200) and dropped
connections (reset, closed without an answer, timed out); requests per second over the whole run. ``--ingest``:
``kb ingest`` of new wiki pages runs (as processes) during the load, one after another.

Goal (issue 21 item 7): p99 ≤ 200 ms, 0 errors, 0 dropped connections at concurrency 32.

Usage: .venv/bin/python bench/bench_serve.py [--requests 2000] [--concurrency 32] [--distinct] [--ingest]
                                            [--kb DIR --site DIR]   (reuse a built kb and site)
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, unquote

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import REPO, corpus_dir  # noqa: E402

KB = str(REPO / ".venv" / "bin" / "kb")
CONJUGATED = ["唱えた", "唱えない", "唱えれば", "唱えられた", "引いた", "引かない", "捨てた", "捨てられる", "支払った",
              "支払わない", "生け贄に捧げた", "追放した", "追放される", "破壊された", "破壊できない", "タップした",
              "アンタップしない", "戦場に出た", "戦場を離れた", "墓地に置かれた", "対象にできない", "選んだ", "公開した",
              "打ち消された", "解決した", "起動した", "誘発した", "攻撃した", "ブロックされなかった", "予示した"]
PAGE_SHARE = 0.7


@dataclass(frozen=True)
class Result:
    kind: str  # page | search
    path: str
    seconds: float
    status: int | None  # None: the connection was dropped
    error: str = ""


def build(base: Path) -> tuple[Path, Path]:
    kb_dir, site = base / "kb", base / "site"
    corpus = sorted(str(p) for p in corpus_dir().glob("MagicCompRules-*.txt"))
    subprocess.run([KB, "--kb-dir", str(kb_dir), "ingest", "-q", str(REPO / "data"), *corpus], check=True,
                   capture_output=True)
    subprocess.run([KB, "--kb-dir", str(kb_dir), "build", "--out", str(site)], check=True, capture_output=True)
    return kb_dir, site


def query_pool(kb_dir: Path, rng: random.Random) -> list[list[str]]:
    """Realistic queries in five kinds, each drawn as often: the evaluation set, rule numbers, English and Japanese
    glossary terms, conjugated verbs."""
    from kb.model import GLOSSARY, RULE_KINDS
    from kb.store import Store

    evaluation = [json.loads(line)["query"] for line in (REPO / "tests/fixtures/search/eval.jsonl").read_text()
                  .splitlines() if line.strip()]
    with Store.open(kb_dir, create=False) as store:
        numbers = sorted({n.number for n in store.light_nodes(store.versions("en")[0], "en", RULE_KINDS) if n.number})
        terms = {lang: sorted({n.title for v in store.versions(lang)[:1]
                               for n in store.light_nodes(v, lang, [GLOSSARY]) if n.title}) for lang in ("en", "ja")}
    kinds = [evaluation, rng.sample(numbers, min(len(numbers), 400)), rng.sample(terms["en"], min(len(terms["en"]), 400)),
             rng.sample(terms["ja"], min(len(terms["ja"]), 400)), CONJUGATED]
    return [[q for q in dict.fromkeys(kind) if q.strip()] for kind in kinds]


def plan(site: Path, pool: list[list[str]], n: int, distinct: bool, rng: random.Random) -> list[tuple[str, str]]:
    pages = sorted("/" + p.relative_to(site).as_posix() for p in site.rglob("*.html") if ".kb-build" not in p.parts)
    searches = round(n * (1 - PAGE_SHARE))
    if distinct:
        every = list(dict.fromkeys(q for kind in pool for q in kind))
        if searches > len(every):
            raise SystemExit(f"--distinct: {searches} searches but only {len(every)} distinct queries")
        queries = rng.sample(every, searches)
    else:
        queries = [rng.choice(rng.choice(pool)) for _ in range(searches)]
    requests = [("search", "/_search?q=" + quote(q)) for q in queries]
    requests += [("page", quote(rng.choice(pages))) for _ in range(n - searches)]
    rng.shuffle(requests)
    return requests


def ask(port: int, kind: str, path: str, timeout: float) -> Result:
    start = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        response.read()
        return Result(kind, path, time.perf_counter() - start, response.status)
    except (OSError, http.client.HTTPException) as error:
        return Result(kind, path, time.perf_counter() - start, None, f"{type(error).__name__}: {error}")
    finally:
        conn.close()


def start_server(kb_dir: Path, site: Path) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen([KB, "--kb-dir", str(kb_dir), "serve", "--dir", str(site), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    found = re.search(r"http://[^:]+:(\d+)/", line)
    if not found:
        proc.kill()
        raise SystemExit(f"kb serve did not start: {line!r}")
    return proc, int(found.group(1))


def ingest_loop(kb_dir: Path, base: Path, stop: threading.Event, runs: list[int]) -> None:
    """New wiki pages ingested one after another by ``kb ingest`` processes until ``stop``."""
    sys.path.insert(0, str(REPO / "tests" / "attacks"))
    from hostile import wiki_page

    i = 0
    while not stop.is_set():
        page = base / f"負荷記事{i}.html"
        page.write_bytes(wiki_page(f"負荷記事{i}", f"<p>呪文とカードのコストについて。記事{i}。</p>"))
        runs.append(subprocess.run([KB, "--kb-dir", str(kb_dir), "ingest", "-q", str(page)], capture_output=True
                                   ).returncode)
        i += 1


def server_cpu(pid: int) -> float:
    """CPU seconds (user + system) so far of process ``pid`` and every process under it, from /proc."""
    def own(p: int) -> float:
        fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def children(p: int) -> list[int]:
        return [int(c) for task in Path(f"/proc/{p}/task").iterdir()
                for c in (task / "children").read_text().split()]

    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        try:
            total += own(p)
            todo += children(p)
        except OSError:  # ended meanwhile
            continue
    return total


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))] if ordered else float("nan")


def report(results: list[Result], wall: float) -> None:
    print(f"{len(results)} requests in {wall:.2f} s = {len(results) / wall:.0f} req/s")
    for kind in ("page", "search", "all"):
        of = [r for r in results if kind in ("all", r.kind)]
        times = [r.seconds * 1000 for r in of]
        errors = sum(1 for r in of if r.status is not None and r.status != 200)
        dropped = sum(1 for r in of if r.status is None)
        print(f"  {kind:6} n {len(of):5}  p50 {statistics.median(times):6.1f} ms  p95 {percentile(times, .95):6.1f} ms"
              f"  p99 {percentile(times, .99):6.1f} ms  max {max(times):6.1f} ms  errors {errors}  dropped {dropped}")
    slowest = sorted((r for r in results if r.kind == "search"), key=lambda r: -r.seconds)[:5]
    print("  slowest searches: " + ", ".join(f"{unquote(r.path.split('=', 1)[1])!r} {r.seconds * 1000:.0f} ms"
                                             for r in slowest))
    for r in [r for r in results if r.status != 200][:5]:
        print(f"    e.g. {r.kind} {r.status} {r.error}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--distinct", action="store_true", help="every search a new query (no answer cached)")
    parser.add_argument("--ingest", action="store_true", help="kb ingest processes run during the load")
    parser.add_argument("--kb", type=Path, help="a built kb folder to serve (default: build one)")
    parser.add_argument("--site", type=Path, help="its built site")
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument("--timeout", type=float, default=30.0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        if args.kb and args.site:
            kb_dir, site = args.kb, args.site
            if args.ingest:  # the ingests write: serve a copy
                subprocess.run(["cp", "-a", str(args.kb), str(base / "kb")], check=True)
                kb_dir = base / "kb"
        else:
            kb_dir, site = build(base)
        requests = plan(site, query_pool(kb_dir, rng), args.requests, args.distinct, rng)
        server, port = start_server(kb_dir, site)
        stop, runs = threading.Event(), []
        ingests = threading.Thread(target=ingest_loop, args=(kb_dir, base, stop, runs)) if args.ingest else None
        try:
            if ingests:
                ingests.start()
            cpu_before = server_cpu(server.pid)
            start = time.perf_counter()
            with ThreadPoolExecutor(max_workers=args.concurrency) as pool:
                results = list(pool.map(lambda r: ask(port, *r, args.timeout), requests))
            wall = time.perf_counter() - start
            cpu = server_cpu(server.pid) - cpu_before
        finally:
            stop.set()
            if ingests:
                ingests.join()
            server.terminate()
            server.wait(timeout=30)
        print(f"kb serve, {os.cpu_count()} cores, concurrency {args.concurrency},"
              f" {'distinct' if args.distinct else 'drawn'} queries" + (f", {len(runs)} ingests during the load"
                                                                        f" (exit codes {sorted(set(runs))})" if ingests else ""))
        report(results, wall)
        print(f"  kb serve (all its processes) used {cpu:.2f} s of CPU during the load ({wall:.2f} s)")


if __name__ == "__main__":
    main()
