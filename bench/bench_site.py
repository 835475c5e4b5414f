"""Static site build of the English CR (2026-01-16): full build speed and peak memory; rebuild after changing one
rule, one glossary entry and nothing, as ratios to the full build in the same run; and bytes a browser downloads for
one query with our sharded search versus Pagefind indexing the same built site (both measured in real headless
Chromium, cold cache, top 5 results with their snippets), with recall@5 of both on the English evaluation queries.

Run: .venv/bin/python bench/bench_site.py [--repeat 3] [--no-browser]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import http.server
import json
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import corpus_dir, peak_memory  # noqa: E402
from kb.pipeline import ingest_sources  # noqa: E402
from kb.site import build_site  # noqa: E402
from kb.store import Store  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
EVAL = REPO / "tests" / "fixtures" / "search" / "eval.jsonl"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
RULE_LINE = "601.2f The player determines the total cost of the spell."
GLOSSARY_LINE = "To take a card from where it is (usually the hand)"


def build_speed(work: Path, repeat: int) -> dict:
    source = corpus_dir() / "MagicCompRules-2026-01-16.txt"
    cr = work / "MagicCompRules-2026-01-16.txt"
    original = source.read_text(encoding="utf-8-sig")
    assert RULE_LINE in original and GLOSSARY_LINE in original, "corpus changed: update RULE_LINE/GLOSSARY_LINE"
    cr.write_text(original, encoding="utf-8", newline="")
    store = Store.open(work / "kb")
    ingest_sources(store, [str(cr)])

    fulls, pages = [], 0
    for i in range(repeat):
        out = work / f"full-{i}"
        report = build_site(store, out)
        fulls.append(report.seconds)
        pages = report.pages
    memory = peak_memory(lambda: build_site(store, work / "full-mem"))
    site = work / "full-0"

    def rebuild_after(edit: str | None) -> float:
        if edit is not None:
            cr.write_text(edit, encoding="utf-8", newline="")
            ingest_sources(store, [str(cr)])
        report = build_site(store, site)
        return report.seconds, report.rendered, report.search_written

    results = {}
    for name, variants in (
        ("nothing", [None] * repeat),
        ("one rule", [original.replace(RULE_LINE, RULE_LINE + f" (edit {i})") if i % 2 == 0 else original
                      for i in range(repeat)]),
        ("one glossary entry", [original.replace(GLOSSARY_LINE, GLOSSARY_LINE + f" (edit {i})") if i % 2 == 0 else original
                                for i in range(repeat)]),
    ):
        runs = [rebuild_after(v) for v in variants]
        results[name] = {"seconds": statistics.median(r[0] for r in runs), "pages rendered": runs[0][1],
                         "search files written": runs[0][2]}
    full = statistics.median(fulls)
    store.close()
    return {"pages": pages, "full seconds": full, "pages/s": pages / full, "peak MiB": memory / 2**20,
            "rebuild": {k: {**v, "ratio to full": v["seconds"] / full} for k, v in results.items()}, "site": site}


def english_cases() -> list[tuple[str, str]]:
    cases = []
    for line in EVAL.read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        if case["lang"] == "en" and case["category"] != "number":
            cases.append((case["query"].replace('"', ""), case["id"]))
    return cases


def url_to_id(url: str) -> str:
    path, _, anchor = url.lstrip("./").partition("#")
    if anchor:
        return f"cr:{anchor}"
    if path.startswith("cr/"):
        return "cr:" + path[3:].removesuffix(".html")
    return path


PAGEFIND_PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>pagefind bench</title></head><body>
<script type="module">
window.runQuery = async (q) => {
  const pf = await import("./pagefind/pagefind.js");
  const r = await pf.search(q);
  const top = await Promise.all(r.results.slice(0, 5).map((x) => x.data()));
  return top.map((d) => (d.sub_results && d.sub_results[0] ? d.sub_results[0].url : d.url));
};
</script></body></html>"""


async def pagefind_index(site: Path) -> float:
    from pagefind.index import PagefindIndex

    start = time.perf_counter()
    async with PagefindIndex({"output_path": str(site / "pagefind")}) as index:
        await index.add_directory(str(site))
    return time.perf_counter() - start


def query_bytes(site: Path, verbose: bool = False) -> dict:
    from playwright.sync_api import sync_playwright

    seconds = asyncio.run(pagefind_index(site))
    (site / "pagefind-bench.html").write_text(PAGEFIND_PAGE, encoding="utf-8")
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    cases = english_cases()
    stats = {"ours": {"bytes": [], "found": 0}, "pagefind": {"bytes": [], "found": 0}}
    site_js = (site / "static" / "site.js").stat().st_size
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            for query, want in cases:
                for name, page_url, prefix, script in (
                    ("ours", "/search.html", "/search/", "kbSearch(q, 5).then(r => r.results.map(x => x.url))"),
                    ("pagefind", "/pagefind-bench.html", "/pagefind/", "runQuery(q)"),
                ):
                    context = browser.new_context()  # cold cache for every query
                    page = context.new_page()
                    sizes: list[int] = []
                    page.on("requestfinished", lambda r, sizes=sizes, prefix=prefix: sizes.append(
                        r.sizes()["responseBodySize"]) if prefix in r.url else None)
                    page.goto(base + page_url)
                    urls = page.evaluate(f"(q) => {script}", query)
                    page.wait_for_timeout(50)
                    total = sum(sizes) + (site_js if name == "ours" else 0)
                    stats[name]["bytes"].append(total)
                    stats[name]["found"] += want in [url_to_id(u) for u in urls]
                    if verbose:
                        print(f"  {name:8} {query!r}: {total / 1024:.1f} KiB, want {want}, got {[url_to_id(u) for u in urls]}")
                    context.close()
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    out = {"queries": len(cases), "pagefind index seconds": seconds}
    for name, s in stats.items():
        out[name] = {"median bytes/query": statistics.median(s["bytes"]), "max bytes/query": max(s["bytes"]),
                     "recall@5": s["found"] / len(cases)}
    out["bytes ratio ours/pagefind"] = out["ours"]["median bytes/query"] / out["pagefind"]["median bytes/query"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-browser", action="store_true", help="Skip the bytes-per-query comparison.")
    parser.add_argument("--verbose", action="store_true", help="Print each query's results and bytes.")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-site-"))
    try:
        speed = build_speed(work, args.repeat)
        site = speed.pop("site")
        print(f"full build: {speed['pages']} pages in {speed['full seconds']:.2f} s "
              f"({speed['pages/s']:.0f} pages/s), peak {speed['peak MiB']:.0f} MiB (tracemalloc)")
        for name, r in speed["rebuild"].items():
            print(f"rebuild after changing {name:18}: {r['seconds']:.3f} s = {100 * r['ratio to full']:.1f} % of full "
                  f"({r['pages rendered']} pages rendered, {r['search files written']} search files written)")
        if not args.no_browser:
            q = query_bytes(site, args.verbose)
            print(f"search, {q['queries']} English evaluation queries, cold browser cache, top 5 with snippets:")
            for name in ("ours", "pagefind"):
                print(f"  {name:8}: median {q[name]['median bytes/query'] / 1024:.1f} KiB/query "
                      f"(max {q[name]['max bytes/query'] / 1024:.1f} KiB), recall@5 {q[name]['recall@5']:.2f}")
            print(f"  bytes ratio ours/pagefind: {q['bytes ratio ours/pagefind']:.2f} "
                  f"(pagefind indexed the site in {q['pagefind index seconds']:.1f} s)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
