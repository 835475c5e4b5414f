"""The SQLite store: idempotent re-ingest, versions and languages side by side, all-or-nothing ingests."""

from __future__ import annotations

import sqlite3

import pytest
from conftest import DATA

from ingest.cr_text import parse_cr_text
from kb.errors import KbError
from kb.pipeline import IngestReport, ingest_documents, ingest_sources
from kb.store import NodeKey, Store

JA = DATA / "JPN_CR_20231117_0.txt"


def counts(store: Store) -> tuple[int, int, int]:
    with sqlite3.connect(store.path) as db:  # the file as any reader sees it
        return tuple(db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("documents", "nodes", "refs"))


def test_reingest_is_idempotent(tmp_path):
    store = Store.open(tmp_path)
    first = ingest_sources(store, [str(JA)], index=False)
    before = counts(store)
    second = ingest_sources(store, [str(JA)], index=False)
    assert (first.stored, second.stored, second.unchanged) == (1, 0, 1)
    assert counts(store) == before
    assert store.versions() == ["20231117.0"]


def test_changed_source_replaces_its_nodes(tmp_path):
    store = Store.open(tmp_path)
    ingest_sources(store, [str(JA)], index=False)
    changed = tmp_path / "JPN_CR_20231117_0.txt"
    changed.write_bytes(JA.read_bytes().replace("601.7. コストを変える".encode(), "601.7. コストを変更する".encode()))
    ingest_sources(store, [str(changed)], index=False)
    node = store.node(NodeKey("20231117.0", "ja", "cr:601.7"))
    assert node.text.startswith("コストを変更する")
    assert len(store.keys_with_id("cr:601.7")) == 1


def test_versions_and_languages_coexist(tmp_path, corpus_dir):
    store = Store.open(tmp_path)
    ingest_sources(store, [str(JA), str(corpus_dir / "MagicCompRules-2023-11-17.txt"),
                           str(corpus_dir / "MagicCompRules-2026-01-16.txt")], index=False)
    assert store.versions() == ["20260116", "20231117.0", "20231117"]
    assert store.versions("ja") == ["20231117.0"]
    keys = {(k.version, k.lang) for k, _ in store.node_keys() if k.id == "cr:601.2f"}
    assert keys == {("20231117.0", "ja"), ("20231117", "en"), ("20260116", "en")}
    # references resolve within their own version and language
    ja_refs = [sr for sr in store.refs_from(NodeKey("20231117.0", "ja", "cr:601.2")) if sr.target_key]
    assert ja_refs and all((t.target_key.version, t.target_key.lang) == ("20231117.0", "ja") for t in ja_refs)


def test_failed_ingest_leaves_the_store_untouched(tmp_path):
    store = Store.open(tmp_path)
    ingest_sources(store, [str(JA)], index=False)
    before = counts(store)
    good = parse_cr_text(JA.read_bytes().replace("和訳 20231117.0".encode(), "和訳 20240209.0".encode()), "v2.txt")

    class Boom(Exception):
        pass

    original = store.set_resolutions

    def fail_midway(resolutions):
        original(resolutions)
        raise Boom("disk full")

    store.set_resolutions = fail_midway
    with pytest.raises(Boom):
        ingest_documents(store, [good], IngestReport())
    store.set_resolutions = original
    assert counts(store) == before
    assert store.versions() == ["20231117.0"]
    # the file on disk agrees (another connection sees the same committed state)
    other = sqlite3.connect(store.path)
    assert other.execute("SELECT count(*) FROM nodes").fetchone()[0] == before[1]


def test_strict_stores_nothing_when_there_are_warnings(tmp_path):
    store = Store.open(tmp_path)
    with pytest.raises(KbError, match="--strict"):
        ingest_sources(store, [str(JA)], strict=True, index=False)  # the excerpt cites rules it does not contain
    assert counts(store) == (0, 0, 0)


def test_one_bad_source_does_not_stop_the_rest(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("これはルールではない\n", encoding="utf-8")
    store = Store.open(tmp_path / "kb")
    report = ingest_sources(store, [str(bad), str(JA), str(tmp_path / "missing.txt")], index=False)
    assert report.stored == 1
    assert [f.split(":")[0] for f in report.failed] == [str(bad), str(tmp_path / "missing.txt")]
    assert store.versions() == ["20231117.0"]


def test_not_a_database(tmp_path):
    (tmp_path / "kb.sqlite").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(KbError, match="not a kb database"):
        Store.open(tmp_path)


def test_cr_text_outranks_a_wisdom_guild_page_of_the_same_version(tmp_path):
    page = DATA / "wisdom-guild" / "cr_r_701.34.html"
    for order in ([page, JA], [JA, page]):
        store = Store.open(tmp_path / str(len(order) * id(order)))
        ingest_sources(store, [str(p) for p in order], index=False)
        doc = store.document_of(NodeKey("20231117.0", "ja", "cr:701.34a"))
        assert doc.kind == "cr-text", order
        assert {"cr-text", "wisdom-guild"} <= {d.kind for d in store.documents()}
        # same text on both: the page's glossary-term links are kept on the CR text's node
        node = store.node(NodeKey("20231117.0", "ja", "cr:701.34a"))
        terms = [r for r in node.refs if r.kind == "term"]
        assert terms and all(node.text[r.start : r.end] == r.text for r in terms)


def test_unchanged_sources_are_not_parsed_or_linked_again(tmp_path):
    store = Store.open(tmp_path)
    first = ingest_sources(store, [str(JA)], index=False)
    again = ingest_sources(store, [str(JA)], index=False)
    assert (again.documents, again.unchanged, again.stored) == ([], 1, 0)
    # the summary still tells the truth about the store's references
    assert again.links.resolved == first.links.resolved and again.links.unresolved == first.links.unresolved
    assert [str(d) for d in again.links.diagnostics] == [str(d) for d in first.links.diagnostics]
