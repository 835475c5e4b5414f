"""Search quality: recall@1, recall@5 and MRR per query kind, kb against two baselines over the same documents.

    python bench/bench_search_quality.py [KB_DIR]

Without KB_DIR, a knowledge base of ``data/``, the MTG Wiki page 接死 (tests/fixtures) and the three English CRs
(``$KB_CORPUS_DIR``) is built in a temporary folder first. The queries are ``bench/search_quality_queries.jsonl``
(typos, readings, variant kanji, names the Japanese text gives, questions; each answer a node of the ingested text)
and ``tests/fixtures/search/eval.jsonl`` (the older set: inflection, compounds, katakana, widths, numbers, English),
its kinds prefixed ``basic-``; the first file adds queries of those kinds too (kind ``basic-…``), so that every kind
has at least :data:`MIN_PER_KIND` queries (fewer: an error). Each answer is the ``lang:id`` of a node the site's
current view shows (a rule number: today's; a node the view does not show is an error); a glossary entry's answer
also accepts the rule the entry cites first ("rule 117 参照": a whole-query name finds its rule first, then the
entry). A query is answered when the site
URL of one of its answers is among the first :data:`RANKED` distinct URLs a system returns (both languages of a node
share one URL; a long article's section is its URL with the heading's anchor).

The documents are the ones kb searches, the current view (:mod:`kb.search.view`): every rule and glossary node the
site's current pages show and every unversioned node, a long MTG Wiki article as its lead and one document per section
(:mod:`kb.search.sections`), each the node's number as shown today, title, aliases, English name and text, keyed by
the URL the site shows it at. Baselines, over these documents, answering URLs:

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
MIN_PER_KIND = 10  # queries of each kind: fewer say nothing about it
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


class View:
    """The documents kb searches, each with the site URL it is shown at, and the answers' URLs."""

    def __init__(self, store):
        from ingest.wikititle import element_id
        from kb.model import GLOSSARY, UNVERSIONED
        from kb.search.query import Searcher
        from kb.search.sections import section_id, split_node
        from kb.search.view import SHOWN_KINDS, current_shown, shown_rule_number
        from kb.store import NodeKey

        self.searcher = Searcher(store)
        locator = self.searcher.locator
        shown, number = current_shown(locator.view), shown_rule_number(locator)
        self.docs: list[tuple[str, str, str]] = []  # (key, URL, text)
        self.urls: dict[str, str] = {}  # "lang:id" of a node the current pages show → the URL they show it at
        self.cited: dict[str, str] = {}  # a glossary entry's "lang:id" → the URL of the rule it cites first
        self.texts: dict[str, str] = {}  # "lang:id" → its title and text (for --check)
        for node in store.nodes():
            key = NodeKey(node.version, node.lang, node.id)
            versioned = node.version != UNVERSIONED
            if versioned and (node.kind not in SHOWN_KINDS or not shown(key)):
                continue
            url = locator.url(key)
            if self.urls.setdefault(f"{node.lang}:{node.id}", url) != url:
                raise SystemExit(f"{node.lang}:{node.id}: two nodes of the current view have this id")
            self.texts[f"{node.lang}:{node.id}"] = f"{node.title or ''} {node.text}"
            cited = self.searcher._defining_rule(key) if node.kind == GLOSSARY else None  # as the site links it
            if cited is not None:
                self.cited[f"{node.lang}:{node.id}"] = locator.url(cited)
            lead, parts = split_node(node)
            today = number(key) if versioned else None
            for n, search_id, where in [(lead, node.id, url), *((part, section_id(node.id, s.anchor),
                                                                  f"{url}#{element_id(s.anchor)}") for s, part in parts)]:
                head = [today or n.number, n.title, *n.aliases, n.english]
                self.docs.append((f"{node.lang}:{search_id}\t{where}",
                                  where, "\n".join(x for x in (*head, n.text, *n.examples) if x)))

    def answer_urls(self, answers: frozenset[str], query: str) -> frozenset[str]:
        """The URLs of a query's answers (each the ``lang:id`` of a node the current pages show); one not shown:
        an error."""
        missing = sorted(a for a in answers if a not in self.urls)
        if missing:
            raise SystemExit(f"{QUERIES.name}: query {query!r}: answer {', '.join(missing)} is not in the current view")
        return frozenset(self.urls[a] for a in answers) | {self.cited[a] for a in answers if a in self.cited}


def distinct(urls: Iterator[str]) -> list[str]:
    """The first :data:`RANKED` distinct URLs, in order (both languages of a node share one URL)."""
    return list(dict.fromkeys(urls))[:RANKED]


def kb_search(view: View) -> Search:
    searcher = view.searcher
    return lambda q: distinct(h.url for h in searcher.search(q, limit=RANKED * 3))


def bigram_search(view: View, folder: Path) -> Search:
    from whoosh import index, scoring
    from whoosh import query as wq
    from whoosh.analysis import LowercaseFilter, NgramTokenizer
    from whoosh.fields import ID, TEXT, Schema

    analyzer = NgramTokenizer(2, 2) | LowercaseFilter()
    ix = index.create_in(folder, Schema(url=ID(stored=True), text=TEXT(analyzer=analyzer)))
    with ix.writer(limitmb=256) as writer:
        for _, url, text in view.docs:
            writer.add_document(url=url, text=text)
    searcher = ix.searcher(weighting=scoring.BM25F())

    def search(q: str) -> list[str]:
        grams = sorted({t.text for t in analyzer(q.replace('"', ""))})
        if not grams:
            return []
        hits = searcher.search(wq.Or([wq.Term("text", g) for g in grams]), limit=RANKED * 3)
        return distinct(hit["url"] for hit in hits)

    return search


def trigram_search(view: View) -> Search:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE docs USING fts5(url UNINDEXED, text, tokenize='trigram')")
    db.executemany("INSERT INTO docs VALUES (?, ?)", ((url, text) for _, url, text in view.docs))

    def search(q: str) -> list[str]:
        folded = unicodedata.normalize("NFKC", q).lower()
        grams = sorted({w[i:i + 3] for w in folded.split() for i in range(len(w) - 2)})
        if not grams:
            return []
        match = " OR ".join('"' + g.replace('"', '""') + '"' for g in grams)
        rows = db.execute("SELECT url FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT ?", (match, RANKED * 3))
        return distinct(r[0] for r in rows)

    return search


def scores(search: Search, queries: list[tuple[str, str, frozenset[str]]]) -> dict[str, tuple[float, float, float, int]]:
    """kind → (recall@1, recall@5, MRR over the first :data:`RANKED` distinct URLs, number of queries); "all" too.
    ``queries``: (kind, query, the answers' URLs)."""
    by_kind: dict[str, list[int | None]] = defaultdict(list)
    for kind, query, answers in queries:
        ranked = search(query)
        rank = next((i for i, url in enumerate(ranked, 1) if url in answers), None)
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
    """``[--check] [KB_DIR]``; ``--check`` prints each query's answers (URL and text) and every system's top 3."""
    from kb.store import Store

    check = "--check" in argv
    argv = [a for a in argv if a != "--check"]
    with tempfile.TemporaryDirectory() as tmp:
        kb_dir = Path(argv[0]) if argv else build_kb(Path(tmp))
        with Store.open(kb_dir, create=False) as store:
            view = View(store)
            queries = [(kind, q, view.answer_urls(answers, q)) for kind, q, answers in load_queries()]
            few = sorted(k for k in {k for k, _, _ in queries} if sum(k == kind for kind, _, _ in queries) < MIN_PER_KIND)
            if few:
                raise SystemExit(f"{QUERIES.name}: fewer than {MIN_PER_KIND} queries of kind {', '.join(few)}")
            (Path(tmp) / "bigrams").mkdir()
            systems = {"kb": kb_search(view), "bigram BM25": bigram_search(view, Path(tmp) / "bigrams"),
                       "FTS5 trigram": trigram_search(view)}
            if check:
                for (kind, q, urls), (_, _, answers) in zip(queries, load_queries(), strict=True):
                    print(f"{kind} {q!r}: " + "; ".join(f"{a} {view.urls[a]} {view.texts[a][:60]!r}" for a in sorted(answers)))
                    for name, search in systems.items():
                        top = search(q)
                        rank = next((i for i, u in enumerate(top, 1) if u in urls), None)
                        print(f"    {name}: rank {rank} top {top[:3]}")
            results = {name: scores(search, queries) for name, search in systems.items()}
    kinds = sorted(results["kb"], key=lambda k: (k == "all", k.startswith("basic-"), k))
    print(f"{len(queries)} queries; R@1 / R@5 / MRR over the first {RANKED} distinct site URLs")
    print("| kind | n | " + " | ".join(systems) + " |")
    print("| --- | --- | " + " | ".join("---" for _ in systems) + " |")
    for kind in kinds:
        cells = [f"{r1:.2f} / {r5:.2f} / {mrr:.2f}" for r1, r5, mrr, _ in (results[name][kind] for name in systems)]
        print(f"| {kind} | {results['kb'][kind][3]} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
