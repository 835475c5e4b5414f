"""An ingest streams its sources (issue 24 item 3): each is parsed only after the one before it is stored, and the
report keeps each document's shell (source, kind, warnings) and its node counts, not its nodes."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from conftest import DATA

from ingest.kinds import parse_source
from kb.errors import KbError
from kb.pipeline import IngestReport, gather, ingest_documents, ingest_sources
from kb.store import Store


def test_each_source_is_stored_before_the_next_is_parsed_and_the_report_keeps_shells(tmp_path):
    sources = gather([str(DATA)])
    assert len(sources) >= 4
    stored_when_parsed = []
    with Store.open(tmp_path) as store:
        def parsed():
            for source in sources:
                stored_when_parsed.append(len(store.documents()))
                yield parse_source(source, Path(source).read_bytes())

        report = ingest_documents(store, parsed(), IngestReport(), index=False)
        assert stored_when_parsed == list(range(len(sources)))  # the k-th is parsed when k-1 are stored
        assert [d.source for d in report.documents] == sources and all(not d.nodes for d in report.documents)
        given = Counter(node.kind for source in sources for node in parse_source(source, Path(source).read_bytes()).nodes)
        assert report.nodes_by_kind == given and sum(given.values()) > 50  # what the sources gave (before merging)


def test_a_source_that_fails_under_strict_stores_none_of_those_read_before_it(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("not a rules text, nor any other kind\n", encoding="utf-8")
    with Store.open(tmp_path / "kb") as store:
        with pytest.raises(KbError, match=r"--strict: 1 sources failed; first: .*bad\.txt"):
            ingest_sources(store, [str(DATA / "JPN_CR_20231117_0.txt"), str(bad)], strict=True, index=False)
        assert store.documents() == []
