"""kb.search.codec: the bulk writer writes the segment Whoosh's own writer writes with the same codec, byte for byte
(so the index answers the same), whether its pool stays in memory or spills to runs, and through a segment merge."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import DATA
from whoosh import index as whoosh_index
from whoosh.writing import SegmentWriter

from kb.pipeline import ingest_sources
from kb.search import userdict
from kb.search.codec import BulkWriter, IndexCodec
from kb.search.index import INDEX_NAME, node_documents, schema
from kb.splitter import JapaneseSplitter
from kb.store import Store


@pytest.fixture(scope="module")
def documents(tmp_path_factory) -> tuple[JapaneseSplitter, list[dict]]:
    """The index documents of data/ (every node, a long article's sections too), three times over: terms in more
    than one block of postings (128) as well as terms in one document (inlined)."""
    kb_dir = tmp_path_factory.mktemp("codec-kb")
    with Store.open(kb_dir) as store:
        ingest_sources(store, [str(DATA)])
        splitter = userdict.prepare(store, JapaneseSplitter())
        docs = [doc for node in store.nodes() for doc in node_documents(splitter, node, "hash")]
    return splitter, docs * 3


def _write(path: Path, splitter: JapaneseSplitter, batches: list[tuple[list[dict], list[int]]], bulk: bool,
           limitmb: int = 256) -> dict[str, bytes]:
    """Write ``batches`` (documents to add, document numbers to delete first) as one commit each, with
    :class:`BulkWriter` or with Whoosh's own ``SegmentWriter``; the files of the last segment, by extension."""
    path.mkdir()
    ix = whoosh_index.create_in(path, schema(splitter), indexname=INDEX_NAME)
    for docs, deleted in batches:
        writer = (BulkWriter(ix, limitmb=limitmb, codec=IndexCodec(), compound=False) if bulk
                  else SegmentWriter(ix, limitmb=limitmb, codec=IndexCodec(), compound=False))
        for docnum in deleted:
            writer.delete_document(docnum)
        for doc in docs:
            writer.add_document(**doc)
        writer.commit(optimize=True)  # the earlier segments merged into this one: Whoosh's merge through the pool
    (segment,) = ix._segments()
    prefix = segment.segment_id()  # the index name and the segment's random id
    files = {f.name[len(prefix):]: f.read_bytes() for f in path.iterdir() if f.name.startswith(prefix)}
    assert {".trm", ".pst"} <= files.keys(), files.keys()
    return files


def test_bulk_writer_writes_whoosh_bytes(documents, tmp_path):
    splitter, docs = documents
    batches = [(docs, [])]
    assert _write(tmp_path / "bulk", splitter, batches, True) == _write(tmp_path / "whoosh", splitter, batches, False)


def test_spilled_pool_writes_the_same(documents, tmp_path):
    """limitmb=0: the pool goes to a run after every document; the runs merged give the same segment."""
    splitter, docs = documents
    batches = [(docs[:150], [])]
    spilled = _write(tmp_path / "bulk", splitter, batches, True, limitmb=0)
    assert spilled == _write(tmp_path / "whoosh", splitter, batches, False)


def test_merged_segments_write_the_same(documents, tmp_path):
    """A second commit that deletes documents and merges the first segment into its own."""
    splitter, docs = documents
    half = len(docs) // 2
    batches = [(docs[:half], []), (docs[half:], [0, 3, half - 1])]
    assert _write(tmp_path / "bulk", splitter, batches, True) == _write(tmp_path / "whoosh", splitter, batches, False)
