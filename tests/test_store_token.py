"""The store's content token (:meth:`kb.store.Store.content_token`), what a site build's inputs fingerprint holds of
the store: made anew by every write of documents, nodes or references, left as it is by an ingest that changes
nothing, and, for a store no write of this kb has marked, a digest of the content."""

from __future__ import annotations

import sqlite3

from conftest import DATA

from kb.model import REF_TERM_ARTICLE, Ref
from kb.pipeline import ingest_sources, remove_sources
from kb.store import DB_NAME, NodeKey, Store

WIKI = DATA / "mtgwiki"


def test_every_write_makes_a_new_token_and_no_change_keeps_it(tmp_path):
    page = next(WIKI.glob("*.html"))
    with Store.open(tmp_path / "kb") as store:
        empty = store.content_token()
        ingest_sources(store, [str(page)], index=False)
        tokens = [empty, store.content_token()]
        assert ingest_sources(store, [str(page)], index=False).stored == 0
        assert store.content_token() == tokens[-1]  # nothing written
        key = next(NodeKey("", "ja", n.id) for n in store.light_nodes("", "ja", ["article"]))
        writes = [
            lambda: store.add_refs([(key, Ref(REF_TERM_ARTICLE, "x", "x", 0, 1), None)]),
            lambda: store.delete_refs_of([REF_TERM_ARTICLE], [key]),
            lambda: store.set_resolutions([(key, 0, None)]),
            lambda: store.delete_refs([REF_TERM_ARTICLE]),
            lambda: remove_sources(store, [str(page)]),
        ]
        for write in writes:
            write()
            tokens.append(store.content_token())
    assert len(set(tokens)) == len(tokens), tokens


def test_a_store_no_write_marked_is_told_apart_by_its_content(tmp_path):
    pages = [next(WIKI.glob("*.html")), next((DATA / "release-notes").glob("*.html"))]
    tokens = []
    for page in pages:
        kb_dir = tmp_path / page.stem
        with Store.open(kb_dir) as store:
            ingest_sources(store, [str(page)], index=False)
        with sqlite3.connect(kb_dir / DB_NAME) as db:  # what a kb before the token left
            db.execute("DELETE FROM meta WHERE key='generation'")
        with Store.open(kb_dir) as store:
            assert store.content_generation() == ""
            tokens.append(store.content_token())
            assert store.content_token() == tokens[-1]
    assert tokens[0] != tokens[1]
