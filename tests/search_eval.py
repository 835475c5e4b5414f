"""Search evaluation: recall@5 and MRR of ``kb.search`` against a plain character-bigram baseline.

The cases are ``tests/fixtures/search/eval.jsonl``: one query per line with the node (``lang``, ``id``) it must
return in its top 5 and the category it tests. Run over a store holding ``data/`` plus the English CR corpus:

    python tests/search_eval.py KB_DIR      # prints both scores and the misses

The baseline indexes the same nodes (number, names, text and examples in one field) as lower-cased character
bigrams, and answers a query with BM25 over the OR of its bigrams: what a search box without any Japanese
analysis or query understanding does.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

CASES = Path(__file__).resolve().parent / "fixtures" / "search" / "eval.jsonl"
TOP = 5
RANKED = 10


@dataclass(frozen=True)
class Case:
    query: str
    lang: str
    id: str
    category: str


@dataclass(frozen=True)
class Score:
    recall_at_5: float
    mrr: float
    misses: tuple[tuple[str, list[str]], ...]  # (query, the top results it got)


def load_cases(path: Path = CASES) -> list[Case]:
    return [Case(**json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def evaluate(search: Callable[[str], list[tuple[str, str]]], cases: list[Case]) -> Score:
    """``search(query)`` gives ranked (lang, id) pairs; recall@5 and MRR over the first :data:`RANKED` results."""
    found, reciprocal, misses = 0, 0.0, []
    for case in cases:
        ranked = search(case.query)[:RANKED]
        rank = next((i for i, r in enumerate(ranked, 1) if r == (case.lang, case.id)), None)
        if rank is not None and rank <= TOP:
            found += 1
        else:
            misses.append((case.query, [f"{lang}:{id_}" for lang, id_ in ranked[:TOP]]))
        if rank is not None:
            reciprocal += 1 / rank
    return Score(found / len(cases), reciprocal / len(cases), tuple(misses))


def ours(store) -> tuple[Callable[[str], list[tuple[str, str]]], Callable[[], None]]:
    """kb.search over ``store``: (search function, close)."""
    from kb.search.query import Searcher

    searcher = Searcher(store)
    return (lambda q: [(h.lang, h.id) for h in searcher.search(q, limit=RANKED)]), searcher.close


def baseline(store, folder: Path) -> tuple[Callable[[str], list[tuple[str, str]]], Callable[[], None]]:
    """A character-bigram index of the same nodes (the newest version of each language), built in ``folder``."""
    from whoosh import index, scoring
    from whoosh import query as wq
    from whoosh.analysis import LowercaseFilter, NgramTokenizer
    from whoosh.fields import ID, TEXT, Schema

    analyzer = NgramTokenizer(2, 2) | LowercaseFilter()
    folder.mkdir(parents=True, exist_ok=True)
    ix = index.create_in(folder, Schema(lang=ID(stored=True), id=ID(stored=True), text=TEXT(analyzer=analyzer)))
    newest = {lang: store.versions(lang)[:1] for lang in ("ja", "en")}
    with ix.writer(limitmb=256) as writer:
        for node in store.nodes():
            if node.version and node.version not in newest.get(node.lang, []):
                continue
            parts = (node.number, node.title, *node.aliases, node.english, node.text, *node.examples)
            text = "\n".join(x for x in parts if x)
            writer.add_document(lang=node.lang, id=node.id, text=text)
    searcher = ix.searcher(weighting=scoring.BM25F())

    def search(q: str) -> list[tuple[str, str]]:
        grams = sorted({t.text for t in analyzer(q.replace('"', ""))})
        if not grams:
            return []
        hits = searcher.search(wq.Or([wq.Term("text", g) for g in grams]), limit=RANKED)
        return [(hit["lang"], hit["id"]) for hit in hits]

    return search, searcher.close


def main(kb_dir: str) -> None:
    import tempfile

    from kb.store import Store

    cases = load_cases()
    with Store.open(kb_dir, create=False) as store, tempfile.TemporaryDirectory() as tmp:
        for name, (search, close) in (("kb.search", ours(store)), ("bigram baseline", baseline(store, Path(tmp)))):
            score = evaluate(search, cases)
            close()
            print(f"{name}: recall@5 {score.recall_at_5:.3f}  MRR {score.mrr:.3f}  ({len(cases)} queries)")
            for query, got in score.misses:
                print(f"    miss {query!r}: {', '.join(got) or 'nothing'}")


if __name__ == "__main__":
    main(sys.argv[1])
