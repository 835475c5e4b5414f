"""The store's reads for an edit build (:mod:`kb.site.edits`), each checked against the general read it narrows, on
the sample's Japanese CR and MTG Wiki articles: the names-only nodes, the references of some nodes, the nodes citing
some, the spans naming some, and the digest of the versioned content."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.model import UNVERSIONED
from kb.pipeline import ingest_sources
from kb.store import NodeKey, Store
from tests.test_site_per_page import ARTICLES, JA_CR, wiki_page, write_wiki


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    tmp = tmp_path_factory.mktemp("edit-reads")
    write_wiki(tmp / "wiki", ARTICLES)
    (tmp / "wiki" / "規則記事.html").write_text(wiki_page("規則記事", ["連鎖記事"], "(CR:601.3)(CR:999.9)"),
                                                encoding="utf-8")
    opened = Store.open(tmp / "kb")
    assert not ingest_sources(opened, [str(JA_CR), str(tmp / "wiki")], index=False).failed
    return opened


def test_named_nodes_are_the_light_nodes_with_the_text_of_the_whole_kinds_alone(store: Store):
    light = store.light_nodes(UNVERSIONED, "ja", None)
    named = store.named_nodes(UNVERSIONED, "ja", ["note"])
    assert [n.id for n in named] == [n.id for n in light] and len(light) >= 6
    for whole, names in zip(light, named, strict=True):
        assert (names.kind, names.title, names.aliases, names.english, names.order) == \
               (whole.kind, whole.title, whole.aliases, whole.english, whole.order)
        assert (names.text, names.examples, names.meta) == ("", (), {})  # articles: their names alone
    assert store.named_nodes(UNVERSIONED, "ja", ["article"]) == light


def test_ref_rows_of_some_nodes_are_their_rows_of_ref_rows(store: Store):
    every = store.ref_rows(UNVERSIONED)
    some = {NodeKey(UNVERSIONED, "ja", "wiki:連鎖記事"), NodeKey(UNVERSIONED, "ja", "wiki:規則記事")}
    expected = [row for row in every if (row[0], row[1]) in {(k.lang, k.id) for k in some}]
    assert expected and store.ref_rows_of(UNVERSIONED, some) == expected


def test_the_versioned_digest_changes_with_a_versioned_node_alone(store: Store, tmp_path: Path):
    before = store.versioned_digest()
    page = tmp_path / "孤立記事.html"
    page.write_text(wiki_page("孤立記事", [], "新しい説明。"), encoding="utf-8")
    assert not ingest_sources(store, [str(page)], index=False).failed
    assert store.versioned_digest() == before  # an article changed: nothing versioned
    cr = tmp_path / JA_CR.name
    cr.write_text(JA_CR.read_text(encoding="utf-8-sig").replace("呪文を唱える", "呪文を唱えるとき", 1), encoding="utf-8")
    assert not ingest_sources(store, [str(cr)], index=False).failed
    assert store.versioned_digest() != before
