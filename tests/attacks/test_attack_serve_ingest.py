"""Second attack run, finding 6 (its third part): ``kb serve`` dropped connections on ``/_search`` during an ingest
(28 of 1,595 requests) and after an ingest that changed a page. Replayed with a real server on 127.0.0.1, real client
threads and real ``kb ingest`` processes writing the same kb folder meanwhile: every request is answered 200, and
once the ingests are done the new page's words are found."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from hostile import kb, kb_process, served_search, serving_sample, wiki_page


@pytest.fixture()
def served(tmp_path, data_kb, data_site):
    with serving_sample(tmp_path, data_kb, data_site) as served:
        yield served


_search = served_search


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
        during = len(answers)  # answered while the ingests ran (fewer when they are quick)
        deadline = time.monotonic() + 60
        while len(answers) <= 20 and time.monotonic() < deadline:  # and more after, on the new generation
            time.sleep(0.05)
        time.sleep(0.5)
        done.set()
        for asker in askers:
            asker.result()
    assert during >= 4 and len(answers) > 20, (during, len(answers))
    assert [status for status, _ in answers if status != 200] == []
    status, found = _search(srv, "灯籠流し")
    assert status == 200 and {f"wiki:新しい記事{i}" for i in range(3)} <= set(found)
    assert kb(kb_dir, "search", "灯籠流し").returncode == 0
