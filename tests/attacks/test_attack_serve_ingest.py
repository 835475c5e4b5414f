"""Second attack run, finding 6 (its third part): ``kb serve`` dropped connections on ``/_search`` during an ingest
(28 of 1,595 requests) and after an ingest that changed a page. Replayed with a real server on 127.0.0.1, real client
threads and real ``kb ingest`` processes writing the same kb folder meanwhile: every request is answered 200, and
once the ingests are done the new page's words are found."""

from __future__ import annotations

import http.client
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import quote

import pytest
from hostile import DATA, kb, kb_process, wiki_page

from kb.pipeline import ingest_sources
from kb.site import build_site
from kb.site.serve import make_server
from kb.store import Store


@pytest.fixture()
def served(tmp_path):
    kb_dir = tmp_path / "kb"
    with Store.open(kb_dir) as store:
        ingest_sources(store, [str(DATA)])
        build_site(store, tmp_path / "site")
    srv = make_server(tmp_path / "site", host="127.0.0.1", port=0, kb_dir=str(kb_dir))
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv, kb_dir
    srv.shutdown()
    srv.server_close()


def _search(srv, query: str) -> tuple[int, list[str]]:
    conn = http.client.HTTPConnection("127.0.0.1", srv.server_address[1], timeout=60)
    try:
        conn.request("GET", "/_search?q=" + quote(query))
        resp = conn.getresponse()
        return resp.status, [r["id"] for r in json.loads(resp.read()).get("results", [])]
    finally:
        conn.close()


@pytest.mark.slow
def test_searches_during_ingests_are_all_answered_and_see_the_new_page(served, tmp_path):
    srv, kb_dir = served
    pages = []
    for i in range(3):
        page = tmp_path / f"新しい記事{i}.html"
        page.write_bytes(wiki_page(f"新しい記事{i}", f"<p>呪文とカードのコストについて。記事番号{i}は灯籠流し。</p>"))
        pages.append(page)
    answers: list[tuple[int, list[str]]] = []
    done = threading.Event()

    def ask() -> None:
        while not done.is_set():
            for query in ("呪文", "カード", "コスト", "唱えた"):
                answers.append(_search(srv, query))

    with ThreadPoolExecutor(max_workers=4) as pool:
        askers = [pool.submit(ask) for _ in range(4)]
        for page in pages:  # one ingest after another, each a new page: new segments, a new generation
            ingest = kb_process(kb_dir, "ingest", "-q", str(page))
            _, err = ingest.communicate(timeout=300)
            assert ingest.returncode == 0, err
        time.sleep(0.5)
        done.set()
        for asker in askers:
            asker.result()
    assert len(answers) > 20
    assert [status for status, _ in answers if status != 200] == []
    status, found = _search(srv, "灯籠流し")
    assert status == 200 and {f"wiki:新しい記事{i}" for i in range(3)} <= set(found)
    assert kb(kb_dir, "search", "灯籠流し").returncode == 0
