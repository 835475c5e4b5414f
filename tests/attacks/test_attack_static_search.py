"""Second attack run, finding 14: the static search threw a TypeError on the query ``constructor`` (a key looked up
on a plain object), loaded 3,021 scripts for a query of 3,000 distinct kanji, and froze the tab for 75 s on
3,000 × 唱 (the server caps queries at 500 characters; the page did not). Replayed in real Chromium on the sample
site from disk: object-property names are words like any other, a query over the bound is refused in one line as
kb search refuses it, and a query at the bound loads a bounded number of scripts and answers at once. Also: site.js
copies no constant of Python's (issue 20: they come from search/meta.js)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from kb.search.query import MAX_QUERY_CHARS
from kb.site.search_export import MAX_LOOKUPS, MAX_VOCAB_SHARDS, browser_constants

SITE_JS = Path(__file__).resolve().parents[2] / "site_templates" / "static" / "site.js"
SCRIPTS = "() => document.querySelectorAll('script[src]').length"


@pytest.fixture(scope="module")
def site(data_site) -> Path:
    """The sample site (read-only)."""
    return data_site


@pytest.fixture()
def page(browser, site):
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto((site / "search.html").as_uri())
    yield page
    page.close()
    assert errors == []


def _search(page, query: str) -> dict:
    return page.evaluate("(q) => kbSearch(q, 8)", query)


@pytest.mark.parametrize("query", ["constructor", "__proto__", "hasOwnProperty", "toString", "valueOf 唱える"])
def test_object_property_names_are_plain_words(page, query):
    result = _search(page, query)
    assert isinstance(result["results"], list) and "error" not in result
    if query.endswith("唱える"):
        assert result["results"], "the other word still finds its rules"


def test_a_query_over_the_bound_is_refused_at_once(page):
    _search(page, "唱える")  # search/meta.js loaded
    started = time.monotonic()
    for query in ("唱" * 3000, "".join(chr(0x4E00 + i) for i in range(3000))):
        before = page.evaluate(SCRIPTS)
        result = _search(page, query)
        assert result["results"] == [] and result["error"] == f"検索語が長すぎます（{MAX_QUERY_CHARS}文字まで）"
        assert page.evaluate(SCRIPTS) == before  # nothing more loaded
    assert time.monotonic() - started < 10


def test_a_query_at_the_bound_loads_a_bounded_number_of_scripts_and_answers(page):
    page.evaluate("(q) => kbSearch(q, 8)", "唱える")  # meta and the shards of a first query loaded
    before = page.evaluate(SCRIPTS)
    distinct = "".join(chr(0x4E00 + i * 7) for i in range(MAX_QUERY_CHARS))
    started = time.monotonic()
    result = _search(page, distinct)
    assert "error" not in result
    # vocabularies, term and bigram shards, name shards and document chunks of at most 8 results
    assert page.evaluate(SCRIPTS) - before <= MAX_VOCAB_SHARDS + MAX_LOOKUPS + 3 + 8
    repeated = _search(page, "唱" * MAX_QUERY_CHARS)
    assert "error" not in repeated
    assert time.monotonic() - started < 20


def test_site_js_copies_no_python_constant():
    js = re.sub(r"/\*.*?\*/|//[^\n]*", "", SITE_JS.read_text(encoding="utf-8"), flags=re.S)  # the code, no comments
    k = browser_constants()
    copies = [value for value in (" ".join(k["stop"]), k["letters"], k["letter"], k["prefix"], k["dash"],
                                  *k["kinds"].values(), *(f'"{v}"' for v in k["previews"].values()))
              if value in js]
    copies += [f"the number {n}" for n in (MAX_QUERY_CHARS, MAX_VOCAB_SHARDS, MAX_LOOKUPS)
               if re.search(rf"(?<![\w.]){n}(?![\w.])", js)]
    assert copies == [], f"site.js writes these constants of Python's itself: {copies}"
    assert json.loads(json.dumps(k)) == k  # what meta.js carries is plain JSON
