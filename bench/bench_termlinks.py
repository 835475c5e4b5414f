"""Speed of automatic term linking (kb.link.termlinks) on the 2026-01-16 English CR, as a ratio to storing and linking
the same file (parse + store + every link step, term links included) in the same run.

Run: .venv/bin/python bench/bench_termlinks.py [--repeat N]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import best_of, corpus_dir, peak_memory  # noqa: E402
from ingest.cr_text import parse_cr_text  # noqa: E402
from kb.link.resolve import LinkIndex, link  # noqa: E402
from kb.link.termlinks import REF_AUTO_TERM, link_terms  # noqa: E402
from kb.store import Store  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    path = corpus_dir() / "MagicCompRules-2026-01-16.txt"

    def ingest(folder: str) -> Store:
        store = Store.open(folder)
        with store.transaction():
            store.put_document(parse_cr_text(path.read_bytes(), str(path)))
            link(store)
        return store

    def ingest_fresh() -> None:
        with tempfile.TemporaryDirectory() as d:
            ingest(d).close()

    with tempfile.TemporaryDirectory() as d:
        store = ingest(d)
        index = LinkIndex.build(store)

        def terms() -> None:
            with store.transaction():
                link_terms(store, index)

        t_ingest = best_of(ingest_fresh, args.repeat)
        t_terms = best_of(terms, args.repeat)
        m_ingest, m_terms = peak_memory(ingest_fresh), peak_memory(terms)
        auto_terms = list(store.refs(kinds=[REF_AUTO_TERM]))
        count, nodes = len(auto_terms), len({sr.source_key.id for sr in auto_terms})
        store.close()
    print(f"file: {path.name} ({path.stat().st_size / 1e6:.2f} MB): {count} term links in {nodes} nodes")
    print(f"parse+store+link : {t_ingest * 1000:8.1f} ms   peak {m_ingest / 1e6:6.1f} MB")
    print(f"term links only  : {t_terms * 1000:8.1f} ms   peak {m_terms / 1e6:6.1f} MB"
          f"   ratio {t_terms / t_ingest:5.2f}x time, {m_terms / m_ingest:5.2f}x memory")


if __name__ == "__main__":
    main()
