"""Schema 8 (kb/store/schema.py): a schema-7 store is migrated to read a scope's content hashes, the card references'
spellings and the unresolved references' kinds from indexes (not from the rows, after their long texts), and answers
as before."""

from __future__ import annotations

import sqlite3

from conftest import DATA

from kb.pipeline import ingest_sources
from kb.store import DB_NAME, SCHEMA_VERSION, Store


def plan(conn: sqlite3.Connection, sql: str, args: tuple) -> str:
    return " ".join(str(step[-1]) for step in conn.execute("EXPLAIN QUERY PLAN " + sql, args))


def test_a_schema_7_store_gets_the_hash_reference_text_and_kind_indexes(tmp_path):
    with Store.open(tmp_path) as store:
        ingest_sources(store, [str(DATA / "mtgwiki"), str(DATA / "release-notes")], index=False)  # card references
        hashes, cards, missed = store.content_hashes("", "ja"), store.ref_target_counts("card"), store.unresolved_refs()
    assert hashes and cards and missed
    with sqlite3.connect(tmp_path / DB_NAME) as conn:  # what a schema-7 kb left
        conn.execute("DROP INDEX nodes_hash")
        conn.execute("DROP INDEX refs_kind_target")
        conn.execute("CREATE INDEX refs_kind_target ON refs(kind, target)")
        conn.execute("DROP INDEX refs_resolved")
        conn.execute("CREATE INDEX refs_resolved ON refs(resolved_id, resolved_version, resolved_lang)")
        conn.execute("UPDATE meta SET value='7' WHERE key='schema'")
    with Store.open(tmp_path) as store:
        assert (store.content_hashes("", "ja"), store.ref_target_counts("card"), store.unresolved_refs()) == (
            hashes, cards, missed)
    with sqlite3.connect(tmp_path / DB_NAME) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone() == (str(SCHEMA_VERSION),)
        assert "COVERING INDEX nodes_hash" in plan(
            conn, "SELECT id, content_hash FROM nodes WHERE version=? AND lang=? ORDER BY id", ("", "ja"))
        assert "COVERING INDEX refs_kind_target" in plan(
            conn, "SELECT target, text, count(*) FROM refs WHERE kind=? GROUP BY target, text", ("card",))
        assert "COVERING INDEX refs_resolved" in plan(
            conn, "SELECT count(*) FROM refs WHERE resolved_id IS NULL AND kind NOT IN (?)", ("redlink",))
