"""The static search's first results after typing, on a cold cache, measured in headless Chromium.

    python bench/bench_static_search.py [--queries N] [--pagefind] [--compare OTHER_SITE] [SITE_DIR]

Without SITE_DIR, a knowledge base of ``data/`` and the three English CRs (``$KB_CORPUS_DIR``) is ingested and its
site built in a temporary folder first. The site is served on 127.0.0.1 (``http.server``); each query gets a new
browser context (an empty HTTP cache), opens the home page, waits for it to load, then sets the header search box
to the query and fires its ``input`` event (the last keystroke of typing it). The time is from that event to the
first result link (or the "nothing found" line) in the header's result box, as the page's ``performance.now()``
sees it (a MutationObserver on the box); the bytes are the bodies of every ``search/`` file the page fetched, from
opening it to the results; the round trips are the longest chain of search/ files each asked for after the one
before it had arrived (from the page's resource timings: a file asked for before any other arrived is 1, one asked
for after a file of chain n arrived is n + 1; the debounce and the machine's load do not change it). The queries
are ``bench/search_quality_queries.jsonl`` then ``tests/fixtures/search/eval.jsonl`` (the first N, default all).
Prints the median and p95 of each.

``--compare OTHER_SITE`` measures a second site (another build, e.g. of an older commit) in the same run: each query
on both, in turns (A then B, then B then A), so a machine's load weighs on both alike; it prints both and the
ratios of their medians and p95.

``--pagefind`` also indexes the same site with Pagefind (the ``pagefind`` package, if installed) and measures its
bytes per query as ``bench/bench_site.py`` does (the ``pagefind/`` files fetched for the top 5 with their data).
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import statistics
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import REPO, corpus_dir  # noqa: E402

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
TYPED = """(q) => new Promise((resolve) => {
  const input = document.querySelector(".search-form .search-input");
  const box = document.querySelector(".search-form .search-results");
  let start = 0;
  const seen = new MutationObserver(() => {
    if (box.querySelector("a, .none")) { seen.disconnect(); resolve(performance.now() - start); }
  });
  seen.observe(box, {childList: true, subtree: true});
  input.focus();
  input.value = q;
  start = performance.now();
  input.dispatchEvent(new Event("input", {bubbles: true}));
})"""


def queries() -> list[str]:
    out = []
    for path in (REPO / "bench" / "search_quality_queries.jsonl", REPO / "tests" / "fixtures" / "search" / "eval.jsonl"):
        out += [json.loads(line)["query"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return out


def build(folder: Path) -> Path:
    from kb.pipeline import ingest_sources
    from kb.site import build_site
    from kb.store import Store

    sources = [str(REPO / "data"), *(str(p) for p in sorted(corpus_dir().glob("MagicCompRules-*.txt")))]
    with Store.open(folder / "kb") as store:
        ingest_sources(store, sources)
        build_site(store, folder / "site")
    return folder / "site"


@contextmanager
def served(site: Path) -> Iterator[str]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


Run = tuple[str, float, int, int, int]
TRIPS = """() => {
  const files = performance.getEntriesByType("resource").filter((e) => e.name.includes("/search/"))
    .sort((a, b) => a.startTime - b.startTime);
  const depth = files.map(() => 1);
  files.forEach((e, i) => files.slice(0, i).forEach((f, j) => {
    if (f.responseEnd <= e.startTime) { depth[i] = Math.max(depth[i], depth[j] + 1); }
  }));
  return Math.max(0, ...depth);
}"""


def measure(bases: list[str], asked: list[str]) -> list[list[Run]]:
    """Per site (``bases``): (query, ms from the input event to the first result, search/ bytes fetched, search/
    requests, round trips) per query; each query is run on every site in turn, the order reversed from one query to
    the next."""
    from playwright.sync_api import sync_playwright

    out: list[list[Run]] = [[] for _ in bases]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        for n, q in enumerate(asked):
            order = list(range(len(bases)))
            for i in order[::-1] if n % 2 else order:
                context = browser.new_context()  # an empty HTTP cache for every query
                page = context.new_page()
                sizes: list[int] = []
                page.on("requestfinished", lambda r, sizes=sizes: sizes.append(r.sizes()["responseBodySize"])
                        if "/search/" in r.url else None)
                page.goto(bases[i] + "/index.html", wait_until="load")
                ms = page.evaluate(TYPED, q)
                page.wait_for_timeout(50)  # the last requestfinished events
                out[i].append((q, ms, sum(sizes), len(sizes), page.evaluate(TRIPS)))
                context.close()
        browser.close()
    return out


def report(name: str, runs: list[Run], verbose: bool) -> dict[str, list[float]]:
    figures = {"ms": [r[1] for r in runs], "bytes": [r[2] for r in runs], "requests": [r[3] for r in runs],
               "trips": [r[4] for r in runs]}
    if verbose:
        for q, ms, size, requests, trips in runs:
            print(f"  {ms:6.1f} ms {size / 1024:7.1f} KiB {requests:3} requests {trips:2} round trips  {q!r}")
    print(f"{name}: static search, {len(runs)} queries, a new browser context each (cold HTTP cache):")
    print(f"  first results after the input event: median {statistics.median(figures['ms']):.0f} ms, "
          f"p95 {p95(figures['ms']):.0f} ms, max {max(figures['ms']):.0f} ms")
    print(f"  search/ bytes per query: median {statistics.median(figures['bytes']) / 1024:.1f} KiB, "
          f"p95 {p95(figures['bytes']) / 1024:.1f} KiB; requests: median {statistics.median(figures['requests']):.0f}, "
          f"max {max(figures['requests'])}")
    print(f"  round trips: median {statistics.median(figures['trips']):.0f}, p95 {p95(figures['trips']):.0f}, "
          f"max {max(figures['trips'])}")
    return figures


def pagefind_bytes(site: Path, base: str, asked: list[str]) -> list[int]:
    import asyncio

    from playwright.sync_api import sync_playwright

    from bench.bench_site import PAGEFIND_PAGE, pagefind_index

    asyncio.run(pagefind_index(site))
    (site / "pagefind-bench.html").write_text(PAGEFIND_PAGE, encoding="utf-8")
    out = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        for q in asked:
            context = browser.new_context()
            page = context.new_page()
            sizes: list[int] = []
            page.on("requestfinished", lambda r, sizes=sizes: sizes.append(r.sizes()["responseBodySize"])
                    if "/pagefind/" in r.url else None)
            page.goto(base + "/pagefind-bench.html")
            page.evaluate("(q) => runQuery(q)", q)
            page.wait_for_timeout(50)
            out.append(sum(sizes))
            context.close()
        browser.close()
    return out


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", nargs="?", type=Path)
    parser.add_argument("--queries", type=int, default=0, help="Only the first N queries.")
    parser.add_argument("--pagefind", action="store_true")
    parser.add_argument("--compare", type=Path, metavar="OTHER_SITE", help="Also measure this site, in turns.")
    parser.add_argument("--verbose", action="store_true", help="Print each query's time, bytes and requests.")
    args = parser.parse_args(argv)
    asked = queries()[:args.queries or None]
    with tempfile.TemporaryDirectory() as tmp:
        site = args.site or build(Path(tmp))
        with served(site) as base, (served(args.compare) if args.compare else nullcontext("")) as other:
            runs = measure([base, other] if other else [base], asked)
            ours = report(str(site), runs[0], args.verbose)
            if other:
                theirs = report(str(args.compare), runs[1], args.verbose)
                for figure in ("ms", "bytes", "trips"):
                    print(f"  {figure}: {site.name} / {args.compare.name}: median "
                          f"{statistics.median(ours[figure]) / statistics.median(theirs[figure]):.2f}, "
                          f"p95 {p95(ours[figure]) / p95(theirs[figure]):.2f}")
            if args.pagefind:
                pagefind = pagefind_bytes(site, base, asked)
                print(f"  pagefind/ bytes per query: median {statistics.median(pagefind) / 1024:.1f} KiB, "
                      f"p95 {p95(pagefind) / 1024:.1f} KiB")


if __name__ == "__main__":
    main(sys.argv[1:])
