"""The store's one codec and what its writes return: a node comes back from every stored form as it went in; a write
returns the merged nodes it rewrote (no account kept in the store); a store opened to read refuses to write; a
snapshot holds one state of the database while another connection commits."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace

import pytest
from conftest import DATA
from hypothesis import given
from hypothesis import strategies as st

from ingest.cr_text import parse_cr_text
from kb.model import Document, Node, Ref
from kb.store import DB_NAME, NodeKey, Store, node_hash
from kb.store.codec import (
    decode_node,
    decode_payload,
    encode_node,
    node_columns,
    node_from_row,
    node_row,
    payload,
    row_fields,
)
from kb.store.filters import KEYED_MAX, where

JA = DATA / "JPN_CR_20231117_0.txt"
KEY = NodeKey("20231117.0", "ja", "cr:601.2f")
NODE = Node(id=KEY.id, kind="rule", lang=KEY.lang, version=KEY.version, text="呪文を唱える。", number="601.2f",
            title=None, parent="cr:601.2", order=7, examples=("例1",), aliases=("cast",), english="Cast",
            html="<p>x</p>", meta={"b": 1, "a": [1, 2]},
            refs=(Ref("rule", "601.2", "601.2", 0, 5), Ref("term", "唱える", "唱える", 1, 4, "20231117.0")))


def test_a_node_comes_back_from_its_payload_and_its_row_as_it_went_in():
    fields = encode_node(NODE)
    assert decode_payload(KEY, payload(fields)) == NODE
    row = node_row(KEY, 1, fields, node_hash(NODE))
    read = (*row[:3], *row[4:15])  # the columns node_columns() reads: all but doc_id and the content hash
    assert len(read) == len(node_columns().split(", "))
    refs = [r[:6] for r in fields["refs"]]
    assert decode_node(*row_fields(read, refs)) == NODE == node_from_row(read, refs)


TEXT = st.text(max_size=8)
NODES = st.builds(
    Node, id=TEXT, kind=st.sampled_from(["rule", "glossary", "article", "card"]), lang=st.sampled_from(["ja", "en"]),
    version=TEXT, text=TEXT, number=st.none() | TEXT, title=st.none() | TEXT, parent=st.none() | TEXT,
    order=st.integers(0, 10**6), examples=st.lists(TEXT, max_size=3).map(tuple),
    refs=st.lists(st.builds(Ref, st.sampled_from(["rule", "term"]), TEXT, TEXT, st.integers(0, 99), st.integers(0, 99),
                            st.none() | TEXT), max_size=3).map(tuple),
    aliases=st.lists(TEXT, max_size=3).map(tuple), english=st.none() | TEXT, html=st.none() | TEXT,
    meta=st.dictionaries(TEXT, st.integers() | TEXT | st.lists(st.integers(), max_size=2), max_size=3))


@given(NODES)
def test_a_row_read_in_one_step_is_the_node_the_two_step_decode_gives(node):
    key = NodeKey(node.version, node.lang, node.id)
    fields = encode_node(node)
    row = node_row(key, 1, fields, node_hash(node))
    read, refs = (*row[:3], *row[4:15]), [r[:6] for r in fields["refs"]]
    assert node_from_row(read, refs) == decode_node(*row_fields(read, refs)) == node


def test_the_content_hash_ignores_the_order_only():
    assert node_hash(replace(NODE, order=99)) == node_hash(NODE)
    for change in ({"text": "別"}, {"meta": {}}, {"refs": ()}, {"examples": ()}, {"html": None}):
        assert node_hash(replace(NODE, **change)) != node_hash(NODE), change


def test_one_filter_builder():
    assert where("n") == (" WHERE 1", [])
    assert where("n", kinds=[]) == (" WHERE 0", [])
    assert where("n", scopes=[]) == (" WHERE 0", [])
    clause, args = where("n", version="v", lang="ja", kinds=["rule"], scopes=[("v", "ja")], nodes=[KEY])
    assert clause.count("?") == len(args) == 8 and args[:3] == ["v", "ja", "rule"]
    too_many = [NodeKey("v", "ja", str(n)) for n in range(KEYED_MAX + 1)]
    assert where("n", nodes=too_many) == (" WHERE 1", [])  # the caller filters


def test_a_write_returns_the_nodes_it_rewrote(tmp_path):
    doc = parse_cr_text(JA.read_bytes(), str(JA))
    with Store.open(tmp_path) as store:
        first = store.put_document(doc)
        assert first.documents == 1 and len(first.rewritten) == len({n.id for n in doc.nodes})
        assert store.put_document(doc).documents == 0  # the same bytes: nothing written
        edited = replace(doc, content_hash="edited", nodes=tuple(
            replace(n, text=n.text + "。") if n.id == KEY.id else n for n in doc.nodes))
        assert store.put_document(edited).rewritten == {KEY}
        same_nodes = replace(doc, content_hash="again", nodes=edited.nodes)
        assert store.put_document(same_nodes) == replace(first, rewritten=frozenset())  # stored; no node changed
        removed = store.remove_document(str(JA))
        assert removed.documents == 1 and removed.rewritten == first.rewritten
        assert not hasattr(store, "take_rewritten")


def test_a_store_opened_to_read_never_writes(tmp_path):
    Store.open(tmp_path).close()
    with Store.open(tmp_path, create=False) as reader:
        with pytest.raises(TypeError, match="opened to read"):
            reader.put_document(Document("x", "cr-text", "ja", ()))
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            reader._db.execute("CREATE TABLE t (x)")  # the connection itself is read-only


def test_a_snapshot_holds_while_another_connection_commits(tmp_path):
    with Store.open(tmp_path) as writer, Store.open(tmp_path, create=False) as reader:
        writer.put_document(parse_cr_text(JA.read_bytes(), str(JA)))
        with reader.snapshot():
            before = len(reader.node_keys())
            with sqlite3.connect(tmp_path / DB_NAME) as other:
                other.execute("DELETE FROM nodes WHERE id=?", (KEY.id,))
            assert len(reader.node_keys()) == before and reader.node(KEY) is not None
            with reader.snapshot():  # re-entrant: the same snapshot
                assert reader.node(KEY) is not None
        assert len(reader.node_keys()) == before - 1 and reader.node(KEY) is None


@pytest.mark.parametrize("stored", ['{"lead": "x", "sections": [{"start": 0, "title": "見出し", "children": []}]}',
                                    '["a", "b"]', '{"reading": "とな\\u3048る"}', ' {"a": 1}', '{"a": 1} ', '"x"', "0"])
def test_a_stored_value_reads_as_json_loads_reads_it(stored):
    """The metadata and lists of a node row read as json.loads reads them (whitespace round a value included)."""
    _, fields = row_fields(("v", "ja", "id", "article", None, None, "", None, 0, "[]", "[]", None, None, stored))
    assert fields["meta"] == json.loads(stored)
    _, fields = row_fields(("v", "ja", "id", "article", None, None, "", None, 0, stored, "[]", None, None, "{}"))
    assert fields["examples"] == json.loads(stored)


@pytest.mark.parametrize("stored", ['{"a": 1}x', "{", "", '{"a": 1}{}', "nul"])
def test_a_damaged_stored_value_fails_as_json_loads_does(stored):
    with pytest.raises(json.JSONDecodeError) as raised:
        row_fields(("v", "ja", "id", "article", None, None, "", None, 0, "[]", "[]", None, None, stored))
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(stored)
    assert str(raised.value) == str(expected.value)
