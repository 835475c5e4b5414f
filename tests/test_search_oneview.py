"""One view for every search surface: the query set ``tests/fixtures/search_queries.jsonl`` (rule numbers in every
form and ranges, Japanese words and conjugations, kana spellings and readings, IME slips, English names, glossary
terms, names the Japanese text gives rules, keywords, quoted phrases, questions, filters, typos — each with the URL
of its answer and a piece of the answer's text) through ``kb search`` (the command, in process),
``kb serve``'s ``/_search`` and the static search in real Chromium over the site built from data/ plus the three
English CRs. The three must give the same top 5 (URLs, in order) for at least 95 % of the queries; the parity and
each surface's recall@5 of the answers are written to test-artifacts/search-oneview.json."""

from __future__ import annotations

import json
import threading
import unicodedata
import urllib.parse
import urllib.request
from collections import defaultdict
from pathlib import Path

import lxml.html
import pytest
from click.testing import CliRunner
from conftest import ARTIFACTS, FIXTURES

from kb.cli import main

pytestmark = [pytest.mark.slow, pytest.mark.browser]

CASES = [json.loads(line) for line in (FIXTURES / "search_queries.jsonl").read_text(encoding="utf-8").splitlines()
         if line.strip()]
TOP = 5
PARITY = 0.95


def _top(urls: list[str]) -> list[str]:
    """The first TOP distinct URLs (a rule and its translation are two hits with one URL)."""
    return list(dict.fromkeys(urls))[:TOP]


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def test_the_query_set_is_large_and_each_answer_is_on_the_site(bilingual_site):
    """≥ 80 queries of every kind; each answer is a page (or anchor) of the built site whose text holds the
    evidence, so the answers are grounded in the ingested text, not in what a search returned."""
    assert len(CASES) >= 150
    kinds = {c["kind"] for c in CASES}
    assert kinds >= {"number", "japanese", "english", "glossary", "keyword", "question", "filter", "typo", "reading",
                     "ime", "name", "phrase", "range"}
    pages: dict[str, lxml.html.HtmlElement] = {}
    for case in CASES:
        page, _, anchor = case["answer"].partition("#")
        path = Path(bilingual_site) / page
        assert path.is_file(), case
        root = pages.get(page)
        if root is None:
            root = pages[page] = lxml.html.parse(str(path)).getroot()
        element = root.get_element_by_id(anchor, None) if anchor else root
        assert element is not None, case
        assert _fold(case["evidence"]) in _fold(element.text_content()), case


@pytest.fixture(scope="module")
def kb_serve(bilingual_site, bilingual_kb):
    """``kb serve`` of the built site, with live search from the knowledge base, on 127.0.0.1."""
    from kb.site.serve import make_server

    server = make_server(bilingual_site, port=0, kb_dir=str(bilingual_kb))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.run_first
def test_cli_serve_and_static_search_give_the_same_top_5(browser, kb_serve, bilingual_kb):
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{kb_serve}/search.html")
    runner = CliRunner()
    rows = []
    for case in CASES:
        query = case["query"]
        result = runner.invoke(main, ["--kb-dir", str(bilingual_kb), "search", query, "--json", "--limit", "40"],
                               catch_exceptions=False)
        assert result.exit_code == 0, (query, result.output)
        cli = _top([hit["url"] for hit in json.loads(result.stdout)])
        with urllib.request.urlopen(f"{kb_serve}/_search?q={urllib.parse.quote(query)}") as response:
            serve = _top([hit["url"] for hit in json.load(response)["results"]])
        found = page.evaluate("([q, n]) => kbSearch(q, n)", [query, TOP])["results"]
        for language in ("ja", "en"):  # lang: filters the documents by their node's language in the browser too
            if f"lang:{language}" in query:
                assert {hit["lang"] for hit in found} <= {language}, (query, found)
        static = _top([hit["url"] for hit in found])
        rows.append({**case, "cli": cli, "serve": serve, "static": static})
    page.close()
    assert errors == []
    same = [r for r in rows if r["cli"] == r["serve"] == r["static"]]
    recall = {surface: sum(r["answer"] in r[surface] for r in rows) / len(rows) for surface in ("cli", "serve", "static")}
    by_kind: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        for surface in ("cli", "serve", "static"):
            by_kind[r["kind"]][surface].append(r["answer"] in r[surface])
    report = {"queries": len(rows), "same top 5": len(same), "parity": round(len(same) / len(rows), 4),
              "recall@5": {s: round(v, 4) for s, v in recall.items()},
              "recall@5 by kind": {k: {s: f"{sum(v)}/{len(v)}" for s, v in surfaces.items()} for k, surfaces in by_kind.items()},
              "different": [r for r in rows if not r["cli"] == r["serve"] == r["static"]]}
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "search-oneview.json").write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    assert all(r["cli"] == r["serve"] for r in rows), [r for r in rows if r["cli"] != r["serve"]]
    assert len(same) / len(rows) >= PARITY, report["different"]


def test_a_number_means_todays_number_and_version_searches_the_archive(bilingual_kb):
    """701.34 is today's Proliferate, not the 2023 Japanese 701.34 (Manifest, shown at 701.40); version:20231117
    searches that version, each node at the URL the site shows it on."""
    from kb.search import Searcher
    from kb.store import Store

    with Store.open(bilingual_kb, create=False) as store, Searcher(store) as searcher:
        today = searcher.search("701.34", limit=40)
        assert today[0].url == "cr/701.html#701.34" and "Proliferate" in today[0].snippet
        assert {h.url.split("#")[1] for h in today} <= {"701.34", *(f"701.34{x}" for x in "abcdefghijk")}
        assert all(h.version == "20260116" for h in today)
        old = searcher.search("version:20231117 lang:en 701.34")
        assert (old[0].version, old[0].url) == ("20231117", "v/20231117/cr/701.html#701.34")
        assert "Manifest" in old[0].snippet
        japanese = searcher.search("version:20231117 lang:ja 701.34")
        assert (japanese[0].id, japanese[0].url) == ("cr:701.34", "cr/701.html#701.40")
        english = searcher.search("lang:en 唱える", limit=40)
        assert english and {h.lang for h in english} == {"en"}
