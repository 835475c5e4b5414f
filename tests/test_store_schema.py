"""The store's schema version: an older kb store is migrated; an empty, foreign, damaged or newer database is refused
with one clear line and left exactly as it was (issue 15, finding 6)."""

from __future__ import annotations

import hashlib
import sqlite3

import pytest
from click.testing import CliRunner
from conftest import DATA

from kb.cli import main
from kb.errors import KbError
from kb.pipeline import ingest_sources
from kb.store import DB_NAME, SCHEMA_VERSION, NodeKey, Store
from tests.test_site_per_page import wiki_page

JA = DATA / "JPN_CR_20231117_0.txt"
PAGE = DATA / "wisdom-guild" / "cr_r_701.34.html"


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def refused(kb_dir, *args) -> str:
    """Run a kb command that must refuse the database; return its one error line."""
    result = CliRunner().invoke(main, ["--kb-dir", str(kb_dir), *args])
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kb: error: ") and "Traceback" not in result.output
    return lines[0]


@pytest.mark.parametrize("command", [["ingest", str(JA)], ["build", "--out", "SITE"], ["versions"], ["index"],
                                     ["search", "唱える"], ["export"]])
def test_an_empty_database_is_refused_never_reinitialised(tmp_path, command):
    kb_dir = tmp_path / "kb"
    kb_dir.mkdir()
    (kb_dir / DB_NAME).write_bytes(b"")
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("the site built before", encoding="utf-8")
    line = refused(kb_dir, *[str(site) if a == "SITE" else a for a in command])
    assert f"{kb_dir / DB_NAME}: empty file (0 bytes), not a kb database" in line
    assert (kb_dir / DB_NAME).stat().st_size == 0
    assert [p.name for p in site.iterdir()] == ["index.html"]


def test_a_foreign_sqlite_database_is_refused(tmp_path):
    db = tmp_path / DB_NAME
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT)")
    before = digest(db)
    with pytest.raises(KbError, match=r"not a kb database \(an SQLite file kb did not make: photos\)"):
        Store.open(tmp_path)
    assert "not a kb database" in refused(tmp_path, "ingest", str(JA))
    assert digest(db) == before


def test_a_store_missing_a_table_is_refused(tmp_path):
    with Store.open(tmp_path) as store:
        ingest_sources(store, [str(JA)])
    with sqlite3.connect(tmp_path / DB_NAME) as conn:
        conn.execute("DROP TABLE refs")
    with pytest.raises(KbError, match=r"damaged kb database \(table refs missing\)"):
        Store.open(tmp_path)


def test_a_store_from_a_newer_kb_is_refused(tmp_path):
    Store.open(tmp_path).close()
    with sqlite3.connect(tmp_path / DB_NAME) as conn:
        conn.execute("UPDATE meta SET value=? WHERE key='schema'", (str(SCHEMA_VERSION + 1),))
    with pytest.raises(KbError, match=f"made by a newer kb \\(store schema {SCHEMA_VERSION + 1}; this kb reads up to"):
        Store.open(tmp_path)


def test_not_a_file_that_exists_is_created(tmp_path):
    with pytest.raises(KbError, match="no knowledge base here"):
        Store.open(tmp_path / "none", create=False)
    assert not (tmp_path / "none" / DB_NAME).exists()


def test_a_schema_1_store_is_migrated_and_keeps_its_nodes(tmp_path):
    """Schema 1 had no contributions table: one merged row per node, owned by the winning document."""
    with Store.open(tmp_path) as store:
        ingest_sources(store, [str(JA), str(PAGE)])
        nodes_before = set(store.node_keys())
        manifest = store.node(NodeKey("20231117.0", "ja", "cr:701.34a"))
    with sqlite3.connect(tmp_path / DB_NAME) as conn:  # what a schema-1 kb left
        conn.execute("DROP TABLE contributions")
        conn.execute("ALTER TABLE documents DROP COLUMN authority")
        conn.execute("UPDATE meta SET value='1' WHERE key='schema'")
    with Store.open(tmp_path) as store:
        assert set(store.node_keys()) == nodes_before
        assert store.node(manifest_key := NodeKey("20231117.0", "ja", "cr:701.34a")) == manifest
        assert [d.kind for d in store.contributors(manifest_key)] == ["cr-text"]  # as schema 1 recorded it
        # the migrated store takes further ingests as any other
        report = ingest_sources(store, [str(PAGE)])
        assert report.unchanged == 1 and store.node(manifest_key) == manifest
    with sqlite3.connect(tmp_path / DB_NAME) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone() == (str(SCHEMA_VERSION),)
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_a_schema_2_store_gets_the_authority_it_merged_with(tmp_path):
    """Schema 3 records each document's authority (given by the ingest from ingest/kinds.py); a schema-2 store had
    the store's own table of ranks: CR text 2, Wisdom Guild 1."""
    with Store.open(tmp_path) as store:
        ingest_sources(store, [str(JA), str(PAGE)])
    manifest_key = NodeKey("20231117.0", "ja", "cr:701.34a")
    with sqlite3.connect(tmp_path / DB_NAME) as conn:
        recorded = dict(conn.execute("SELECT kind, authority FROM documents WHERE kind != 'cards'"))
        conn.execute("ALTER TABLE documents DROP COLUMN authority")
        conn.execute("UPDATE meta SET value='2' WHERE key='schema'")
    assert recorded == {"cr-text": 2, "wisdom-guild": 1}
    with Store.open(tmp_path) as store:
        assert [d.kind for d in store.contributors(manifest_key)] == ["cr-text", "wisdom-guild"]
        store.remove_document(str(JA))  # re-merged from what remains, by the migrated ranks
        assert [d.kind for d in store.contributors(manifest_key)] == ["wisdom-guild"]
    with sqlite3.connect(tmp_path / DB_NAME) as conn:
        assert dict(conn.execute("SELECT kind, authority FROM documents WHERE kind != 'cards'")) == {"wisdom-guild": 1}


def test_a_schema_3_store_gets_the_rule_number_index(tmp_path):
    """Schema 4 indexes rule numbers: a search by number reads the index, not every version's nodes."""
    with Store.open(tmp_path) as store:
        ingest_sources(store, [str(JA)])
    with sqlite3.connect(tmp_path / DB_NAME) as conn:  # what a schema-3 kb left
        conn.execute("DROP INDEX nodes_number")
        conn.execute("UPDATE meta SET value='3' WHERE key='schema'")
    with Store.open(tmp_path) as store:
        assert [key.id for key, _, _ in store.keys_numbered("601.2")] == ["cr:601.2"]
    with sqlite3.connect(tmp_path / DB_NAME) as conn:
        plan = conn.execute("EXPLAIN QUERY PLAN SELECT id FROM nodes WHERE number = '601.2'").fetchall()
        assert "nodes_number" in " ".join(str(step[-1]) for step in plan)
        assert conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone() == (str(SCHEMA_VERSION),)


def test_a_schema_4_store_gets_the_version_and_kind_index(tmp_path):
    """Schema 5 counts each version's nodes from an index (the versions list read every node of every version)."""
    with Store.open(tmp_path) as store:
        ingest_sources(store, [str(JA)])
        counts = store.node_counts()
    with sqlite3.connect(tmp_path / DB_NAME) as conn:  # what a schema-4 kb left
        conn.execute("DROP INDEX nodes_scope_kind")
        conn.execute("UPDATE meta SET value='4' WHERE key='schema'")
    with Store.open(tmp_path) as store:
        assert store.node_counts() == counts and counts[("20231117.0", "ja")]["rule"] > 0
    with sqlite3.connect(tmp_path / DB_NAME) as conn:
        sql = "SELECT version, lang, kind, COUNT(*) FROM nodes WHERE version != '' GROUP BY version, lang, kind"
        plan = " ".join(str(step[-1]) for step in conn.execute("EXPLAIN QUERY PLAN " + sql))
        assert "COVERING INDEX nodes_scope_kind" in plan and "TEMP B-TREE" not in plan
        assert conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone() == (str(SCHEMA_VERSION),)


def test_storing_a_document_reads_its_keys_contributions_by_index(tmp_path):
    """Storing one document merges its nodes' contributions: each statement joining the connection's keys table
    reads the contributions and nodes of those keys by index, never every contribution (a scan of every one was
    54 ms a document at 20,000 articles)."""
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    page = wiki / "連鎖記事.html"
    page.write_text(wiki_page("連鎖記事", ["唱える"]), encoding="utf-8")
    with Store.open(tmp_path / "kb") as store:
        ingest_sources(store, [str(JA), str(wiki)], index=False)
        page.write_text(wiki_page("連鎖記事", ["唱える"], "竜巻の説明。"), encoding="utf-8")
        statements: list[str] = []
        store._db.set_trace_callback(statements.append)
        ingest_sources(store, [str(page)], index=False)
        store._db.set_trace_callback(None)
        joins = sorted({s for s in statements if "FROM temp.keys k" in s and s.lstrip().upper().startswith("SELECT")})
        assert any("contributions c" in s for s in joins) and any("nodes n" in s for s in joins)
        for sql in joins:
            plan = " ".join(str(step[-1]) for step in store._db.execute("EXPLAIN QUERY PLAN " + sql))
            assert "SCAN c" not in plan and "SCAN n" not in plan and "SCAN r" not in plan, (sql, plan)
