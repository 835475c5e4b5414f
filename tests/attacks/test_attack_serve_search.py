"""Finding 21.3: ``kb serve`` could not answer two searches at once. Request threads shared one Sudachi tokenizer
(``SudachiError: Tokenizer is already in use``: 12 of 40 unanswered at concurrency 2, some hanging), and with an
index that had to be rebuilt, concurrent requests all started rebuilding it (an index left empty). Replayed with a
real server on 127.0.0.1 and real client threads: every request is answered, with the hits a lone request gets, and
a stale index is searched as it is, never written."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest
from hostile import served_search, serving_sample

pytestmark = pytest.mark.slow  # processes, servers or several ingests each: out of the quick suite

QUERIES = ["唱えた", "呪文", "マナ・コスト", "601.2f", "カード", "コスト", "接死", "予示", "唱える 呪文", "lang:ja 対象"]


@pytest.fixture(scope="module")
def served(tmp_path_factory, data_kb, data_site):
    with serving_sample(tmp_path_factory.mktemp("served"), data_kb, data_site) as served:
        yield served


def _search(srv, query: str) -> tuple[int, list[str]]:
    return served_search(srv, query, timeout=30)


def test_forty_searches_at_concurrency_eight_are_all_answered_as_alone(served):
    srv, _ = served
    alone = {q: _search(srv, q) for q in QUERIES}
    assert all(status == 200 for status, _ in alone.values())
    assert alone["唱えた"][1] and alone["601.2f"][1][0] == "cr:601.2f"
    asked = [QUERIES[i % len(QUERIES)] for i in range(40)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(lambda q: (q, _search(srv, q)), asked))
    assert len(answers) == 40
    assert [(q, status) for q, (status, _) in answers if status != 200] == []
    assert [q for q, answer in answers if answer != alone[q]] == []


def test_a_stale_index_is_searched_as_it_is_by_concurrent_requests_and_never_rebuilt(served):
    srv, kb_dir = served
    expected = _search(srv, "唱えた")
    state_path = kb_dir / "index" / "state.json"
    state = json.loads(state_path.read_text(encoding="utf-8"))
    stale = {**state, "identity": {**state["identity"], "analysis": "0" * 16}}
    state_path.write_text(json.dumps(stale), encoding="utf-8")
    files = sorted(p.name for p in (kb_dir / "index").rglob("*") if p.is_file())
    try:
        with ThreadPoolExecutor(max_workers=16) as pool:
            answers = list(pool.map(lambda _: _search(srv, "唱えた"), range(16)))
        assert answers == [expected] * 16
        assert json.loads(state_path.read_text(encoding="utf-8")) == stale  # not rebuilt, not written
        assert sorted(p.name for p in (kb_dir / "index").rglob("*") if p.is_file()) == files
    finally:
        state_path.write_text(json.dumps(state), encoding="utf-8")
