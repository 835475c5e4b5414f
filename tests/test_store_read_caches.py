"""Store reads that a ``kb update`` asks more than once, or that leave the wiki's rows out in SQL: the same answers as
reading everything, and a cached answer never outlives a write."""

from __future__ import annotations

from dataclasses import replace

from conftest import DATA

from ingest.mtgwiki import parse_mtgwiki
from kb.model import ARTICLE, GLOSSARY, UNVERSIONED
from kb.pipeline import IngestReport, ingest_documents, ingest_sources
from kb.store import Store

WIKI = DATA / "mtgwiki" / "唱える.html"


def test_versioned_documents_are_the_documents_of_a_version_in_order(tmp_path):
    store = Store.open(tmp_path)
    ingest_sources(store, [str(DATA)], index=False)
    every = store.documents()
    assert any(d.version == UNVERSIONED for d in every) and any(d.version != UNVERSIONED for d in every)
    assert store.versioned_documents() == [d for d in every if d.version != UNVERSIONED]


def test_name_digest_is_kept_until_a_write_and_changes_with_a_title(tmp_path):
    store = Store.open(tmp_path)
    ingest_sources(store, [str(DATA)], index=False)
    kinds = (GLOSSARY, ARTICLE)
    first = store.name_digest("ja", kinds)
    assert store.name_digest("ja", kinds) == first
    assert store.name_digest("ja", [GLOSSARY]) != first  # a cached digest answers only for its own kinds
    doc = parse_mtgwiki(WIKI.read_bytes(), str(WIKI))
    renamed = replace(doc, content_hash="renamed", nodes=tuple(
        replace(node, title="唱えること") if node.kind == ARTICLE else node for node in doc.nodes))
    ingest_documents(store, [renamed], IngestReport(), index=False)
    changed = store.name_digest("ja", kinds)
    assert changed != first
    with Store.open(tmp_path) as fresh:  # what a reader of the file computes, with no cache
        assert fresh.name_digest("ja", kinds) == changed
