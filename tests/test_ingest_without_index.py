"""``ingest_sources(store, paths, index=False)``: the sources are stored and linked, the search index is not touched
and is left pending (:data:`kb.pipeline.INDEX_PENDING`), as after an interrupted index update; the next ingest or
``kb index`` builds it, and it then answers as an index built by the ingest itself."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import DATA

from kb.cli import main
from kb.pipeline import INDEX_PENDING, ingest_sources
from kb.search import search
from kb.search.index import indexed_scopes
from kb.store import Store

pytestmark = pytest.mark.slow  # processes, servers or several ingests each: out of the quick suite

QUERY = "唱えた"


def _hits(store: Store) -> list[str]:
    return sorted(hit.id for hit in search(store, QUERY, limit=50))


def test_an_ingest_without_index_leaves_it_pending_for_the_next_writer(tmp_path: Path):
    with Store.open(tmp_path / "indexed") as store:
        assert ingest_sources(store, [str(DATA)]).index is not None
        expected = _hits(store)
    assert expected and not (tmp_path / "indexed" / INDEX_PENDING).exists()

    with Store.open(tmp_path / "later") as store:
        report = ingest_sources(store, [str(DATA)], index=False)
        assert report.stored == 4 and report.index is None and report.links.total_resolved > 0
        assert indexed_scopes(store) == [] and (store.kb_dir / INDEX_PENDING).is_file()
        nothing_new = ingest_sources(store, [str(DATA)])  # nothing to store, but the index is pending: built whole
        assert nothing_new.stored == 0 and nothing_new.index is not None
        assert nothing_new.index.added == nothing_new.index.total > 0
        assert not (store.kb_dir / INDEX_PENDING).exists()
        assert _hits(store) == expected


def test_kb_index_builds_what_an_ingest_left_pending(tmp_path: Path):
    kb_dir = tmp_path / "kb"
    with Store.open(kb_dir) as store:
        ingest_sources(store, [str(DATA)], index=False)
    result = CliRunner().invoke(main, ["--kb-dir", str(kb_dir), "index"])
    assert result.exit_code == 0, result.output
    assert " 0 updated, 0 removed" in result.output and not (kb_dir / INDEX_PENDING).exists()
    with Store.open(kb_dir) as store:
        assert _hits(store)
        again = ingest_sources(store, [str(DATA)])  # no longer pending: nothing to do
        assert again.stored == 0 and again.index is None
