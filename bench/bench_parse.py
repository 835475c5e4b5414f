"""Parse and ingest speed for the 2026-01-16 English CR, as ratios to a plain read-and-split-lines of the same file.

Run: .venv/bin/python bench/bench_parse.py [--repeat N]
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import best_of, corpus_dir, peak_memory  # noqa: E402
from ingest.cr_text import parse_cr_text  # noqa: E402
from kb.link.resolve import link  # noqa: E402
from kb.pipeline import ingest_sources  # noqa: E402
from kb.store import Store  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    path = corpus_dir() / "MagicCompRules-2026-01-16.txt"

    def baseline():
        return re.split(r"\r\n|\r|\n", path.read_bytes().decode("utf-8-sig"))

    def parse():
        return parse_cr_text(path.read_bytes(), str(path))

    def parse_resolve_store():
        with tempfile.TemporaryDirectory() as d, Store.open(d) as store, store.transaction():
            store.put_document(parse())
            link(store)

    def ingest():  # what `kb ingest` does: the above plus the search-index update
        with tempfile.TemporaryDirectory() as d, Store.open(d) as store:
            ingest_sources(store, [str(path)])

    t_base = best_of(baseline, args.repeat)
    t_parse = best_of(parse, args.repeat)
    t_store = best_of(parse_resolve_store, max(1, args.repeat // 2))
    t_ingest = best_of(ingest, max(1, args.repeat // 2))
    m_base, m_parse = peak_memory(baseline), peak_memory(parse)
    doc = parse()
    print(f"file: {path.name} ({path.stat().st_size / 1e6:.2f} MB, {len(doc.nodes)} nodes)")
    print(f"read+split lines : {t_base * 1000:8.1f} ms   peak {m_base / 1e6:6.1f} MB")
    print(f"parse            : {t_parse * 1000:8.1f} ms   peak {m_parse / 1e6:6.1f} MB   ratio {t_parse / t_base:6.1f}x")
    print(f"parse+resolve+store: {t_store * 1000:8.1f} ms   ratio {t_store / t_base:6.1f}x  (resolve includes term links)")
    print(f"kb ingest (+ search index): {t_ingest * 1000:8.1f} ms   ratio {t_ingest / t_base:6.1f}x")


if __name__ == "__main__":
    main()
