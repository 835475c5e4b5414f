"""Finding 21.3: ``kb serve`` could not answer two searches at once. Request threads shared one Sudachi tokenizer
(``SudachiError: Tokenizer is already in use``: 12 of 40 unanswered at concurrency 2, some hanging), and with an
index that had to be rebuilt, concurrent requests all started rebuilding it (an index left empty). Replayed with a
real server on 127.0.0.1 and real client threads: every request is answered, with the hits a lone request gets, and
a stale index is searched as it is, never written."""

from __future__ import annotations

import http.client
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import quote

import pytest
from hostile import DATA

from kb.pipeline import ingest_sources
from kb.site import build_site
from kb.site.serve import make_server
from kb.store import Store

pytestmark = pytest.mark.slow  # processes, servers or several ingests each: out of the quick suite

QUERIES = ["唱えた", "呪文", "マナ・コスト", "601.2f", "カード", "コスト", "接死", "予示", "唱える 呪文", "lang:ja 対象"]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    base = tmp_path_factory.mktemp("served")
    kb_dir = base / "kb"
    with Store.open(kb_dir) as store:
        ingest_sources(store, [str(DATA)])
        build_site(store, base / "site")
    srv = make_server(base / "site", host="127.0.0.1", port=0, kb_dir=str(kb_dir))
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv, kb_dir
    srv.shutdown()
    srv.server_close()


def _search(srv, query: str) -> tuple[int, list[str]]:
    conn = http.client.HTTPConnection("127.0.0.1", srv.server_address[1], timeout=30)
    try:
        conn.request("GET", "/_search?q=" + quote(query))
        resp = conn.getresponse()
        body = json.loads(resp.read())
    finally:
        conn.close()
    return resp.status, [r["id"] for r in body.get("results", [])]


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
