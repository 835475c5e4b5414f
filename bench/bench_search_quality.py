"""Search quality: recall@1, recall@5 and MRR per query kind, kb against two baselines over the same documents.

    python bench/bench_search_quality.py [KB_DIR]

Without KB_DIR, a knowledge base of ``data/``, the MTG Wiki page 接死 (tests/fixtures) and the three English CRs
(``$KB_CORPUS_DIR``) is built in a temporary folder first. The queries are ``bench/search_quality_queries.jsonl``
(typos, readings, variant kanji, names the Japanese text gives, questions; each answer a node of the ingested text)
and ``tests/fixtures/search/eval.jsonl`` (the older set: inflection, compounds, katakana, widths, numbers, English),
its kinds prefixed ``basic-``. A query is answered when one of its answers (``lang:id``) is among the first results.

The documents are the ones kb searches: every node of the newest version of each language and the unversioned
ones, a long MTG Wiki article as its lead and one document per section (:mod:`kb.search.sections`), each the
node's number, title, aliases, English name and text. Baselines:

- **bigram BM25**: lower-cased character bigrams of the whole text (Whoosh ``NgramTokenizer(2, 2)``), a query as the
  OR of its bigrams, BM25F;
- **FTS5 trigram**: SQLite FTS5 with ``tokenize='trigram'``, a query as the OR of its NFKC-lower-cased trigrams
  (a word under three characters has none), ranked by ``bm25()``.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import tempfile
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import REPO, corpus_dir  # noqa: E402

QUERIES = REPO / "bench" / "search_quality_queries.jsonl"
BASIC = REPO / "tests" / "fixtures" / "search" / "eval.jsonl"
RANKED = 10
Search = Callable[[str], list[str]]  # a query → ranked "lang:id"


def load_queries() -> list[tuple[str, str, frozenset[str]]]:
    """(kind, query, answers) of every query."""
    out = []
    for line in QUERIES.read_text(encoding="utf-8").splitlines():
        if line.strip():
            case = json.loads(line)
            out.append((case["kind"], case["query"], frozenset(case["answers"])))
    for line in BASIC.read_text(encoding="utf-8").splitlines():
        if line.strip():
            case = json.loads(line)
            out.append((f"basic-{case['category']}", case["query"], frozenset([f"{case['lang']}:{case['id']}"])))
    return out


def documents(store) -> Iterator[tuple[str, str]]:
    """("lang:id", text) of every document kb searches (see the module doc)."""
    from kb.model import UNVERSIONED
    from kb.search.sections import section_id, split_node

    newest = {lang: store.versions(lang)[:1] for lang in ("ja", "en")}
    for node in store.nodes():
        if node.version != UNVERSIONED and node.version not in newest.get(node.lang, []):
            continue
        lead, parts = split_node(node)
        for n, search_id in [(lead, node.id), *((part, section_id(node.id, s.anchor)) for s, part in parts)]:
            head = [n.number, n.title, *n.aliases, n.english]
            yield f"{node.lang}:{search_id}", "\n".join(x for x in (*head, n.text, *n.examples) if x)


def kb_search(store) -> Search:
    from kb.search.query import Searcher

    searcher = Searcher(store)
    return lambda q: [f"{h.lang}:{h.id}" for h in searcher.search(q, limit=RANKED)]


def bigram_search(store, folder: Path) -> Search:
    from whoosh import index, scoring
    from whoosh import query as wq
    from whoosh.analysis import LowercaseFilter, NgramTokenizer
    from whoosh.fields import ID, TEXT, Schema

    analyzer = NgramTokenizer(2, 2) | LowercaseFilter()
    ix = index.create_in(folder, Schema(key=ID(stored=True), text=TEXT(analyzer=analyzer)))
    with ix.writer(limitmb=256) as writer:
        for key, text in documents(store):
            writer.add_document(key=key, text=text)
    searcher = ix.searcher(weighting=scoring.BM25F())

    def search(q: str) -> list[str]:
        grams = sorted({t.text for t in analyzer(q.replace('"', ""))})
        if not grams:
            return []
        return [hit["key"] for hit in searcher.search(wq.Or([wq.Term("text", g) for g in grams]), limit=RANKED)]

    return search


def trigram_search(store) -> Search:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE docs USING fts5(key UNINDEXED, text, tokenize='trigram')")
    db.executemany("INSERT INTO docs VALUES (?, ?)", documents(store))

    def search(q: str) -> list[str]:
        folded = unicodedata.normalize("NFKC", q).lower()
        grams = sorted({w[i:i + 3] for w in folded.split() for i in range(len(w) - 2)})
        if not grams:
            return []
        match = " OR ".join('"' + g.replace('"', '""') + '"' for g in grams)
        rows = db.execute("SELECT key FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT ?", (match, RANKED))
        return [r[0] for r in rows]

    return search


def scores(search: Search, queries: list[tuple[str, str, frozenset[str]]]) -> dict[str, tuple[float, float, float, int]]:
    """kind → (recall@1, recall@5, MRR over the first :data:`RANKED`, number of queries); kind "all" too."""
    by_kind: dict[str, list[int | None]] = defaultdict(list)
    for kind, query, answers in queries:
        ranked = search(query)
        rank = next((i for i, key in enumerate(ranked, 1) if key in answers), None)
        by_kind[kind].append(rank)
        by_kind["all"].append(rank)
    return {kind: (sum(r == 1 for r in ranks) / len(ranks), sum(r is not None and r <= 5 for r in ranks) / len(ranks),
                   sum(1 / r for r in ranks if r) / len(ranks), len(ranks)) for kind, ranks in by_kind.items()}


def build_kb(folder: Path) -> Path:
    from kb.pipeline import ingest_sources
    from kb.store import Store

    kb_dir = folder / "kb"
    sources = [str(REPO / "data"), str(REPO / "tests" / "fixtures" / "mtgwiki" / "deathtouch.html"),
               *(str(p) for p in sorted(corpus_dir().glob("MagicCompRules-*.txt")))]
    with Store.open(kb_dir) as store:
        ingest_sources(store, sources)
    return kb_dir


def main(argv: list[str]) -> None:
    from kb.store import Store

    queries = load_queries()
    with tempfile.TemporaryDirectory() as tmp:
        kb_dir = Path(argv[0]) if argv else build_kb(Path(tmp))
        with Store.open(kb_dir, create=False) as store:
            (Path(tmp) / "bigrams").mkdir()
            systems = {"kb": kb_search(store), "bigram BM25": bigram_search(store, Path(tmp) / "bigrams"),
                       "FTS5 trigram": trigram_search(store)}
            results = {name: scores(search, queries) for name, search in systems.items()}
    kinds = sorted(results["kb"], key=lambda k: (k == "all", k.startswith("basic-"), k))
    print(f"{len(queries)} queries; R@1 / R@5 / MRR (first {RANKED})")
    print("| kind | n | " + " | ".join(systems) + " |")
    print("| --- | --- | " + " | ".join("---" for _ in systems) + " |")
    for kind in kinds:
        cells = [f"{r1:.2f} / {r5:.2f} / {mrr:.2f}" for r1, r5, mrr, _ in (results[name][kind] for name in systems)]
        print(f"| {kind} | {results['kb'][kind][3]} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
