"""One analysis, two implementations: the shared vectors (tests/fixtures/search/analysis_vectors.json, input → query
terms) against :func:`kb.search.analysis.query_terms` and against the JavaScript port the static search runs
(``kbAnalyse`` in site_templates/static/site.js) in real Chromium, over the site built from data/, the MTG Wiki page
接死 and the English CRs, with the Sudachi user dictionary of that knowledge base."""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES

from kb.search import analysis, userdict
from kb.splitter import JapaneseSplitter
from kb.store import Store

VECTORS = json.loads((FIXTURES / "search" / "analysis_vectors.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def with_user_dictionary(bilingual_kb):
    with Store.open(bilingual_kb, create=False) as store:
        splitter = userdict.prepare(store, JapaneseSplitter())
    assert splitter.dictionary_id
    return splitter


@pytest.mark.slow
@pytest.mark.parametrize("vector", VECTORS, ids=[v["input"] for v in VECTORS])
def test_python_analysis(with_user_dictionary, vector):
    assert analysis.query_terms(with_user_dictionary, vector["input"]) == vector["terms"], vector["why"]


def test_javascript_port_in_chromium(browser, bilingual_site):
    page = browser.new_page()
    page.goto((bilingual_site / "search.html").as_uri())
    got = {v["input"]: page.evaluate("(q) => kbAnalyse(q).then(a => a.terms)", v["input"]) for v in VECTORS}
    page.close()
    assert got == {v["input"]: v["terms"] for v in VECTORS}
