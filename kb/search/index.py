"""The search index: a Whoosh index in ``<kb_dir>/index/`` holding every stored node, kept in step with the store.

Entry point :func:`update_index` (called by :func:`kb.pipeline.ingest_documents` after each ingest and by
``kb index``): it compares each node's content hash in the store with the hash recorded in the index and
(re)indexes only the nodes that are new or changed, and deletes those no longer stored.

One document per node key (version, lang, id). Fields:

- ``key`` — ``version\\tlang\\tid`` (unique); ``kind``, ``number`` — exact values; ``scope`` — ``lang:version``
  (the version and language filter; ``ja:`` for unversioned Japanese nodes); ``id``, ``version``, ``lang`` — stored;
- ``title`` — title/term, aliases and English name, analysed by :func:`kb.search.analysis.text_analyzer`;
- ``body`` — text and examples, same analyzer;
- ``grams`` — the Japanese character bigrams of title, body and examples (:func:`kb.search.analysis.bigram_analyzer`);
- ``names`` — :func:`name_forms` of the title, aliases and English name (whole-name lookup: glossary terms);
- ``hash`` — the store's content hash (stored only).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from kb.errors import KbError
from kb.model import Node
from kb.store import NodeKey, Store

INDEX_DIR = "index"
INDEX_NAME = "nodes"


@dataclass(frozen=True)
class IndexReport:
    added: int
    updated: int
    removed: int
    total: int


def name_forms(text: str) -> set[str]:
    """The forms a whole name or a whole query is matched by in ``names``: the folded text without spaces and
    middle dots, and its query terms joined (``マナ・コスト``, ``マナコスト`` → ``マナコスト``; ``唱えた`` → ``唱える``)."""
    from kb.search import analysis

    folded = re.sub(r"[\s・･]", "", analysis.fold(text))
    forms = {folded} if folded else set()
    joined = "".join(analysis.query_terms(text))
    if joined:
        forms.add(joined)
    return forms


def index_dir(store: Store) -> Path:
    return store.path.parent / INDEX_DIR


def schema():
    from whoosh.fields import ID, KEYWORD, STORED, TEXT, Schema

    from kb.search.analysis import bigram_analyzer, text_analyzer

    return Schema(
        key=ID(stored=True, unique=True),
        id=STORED(),
        kind=ID(stored=True),
        version=STORED(),
        lang=STORED(),
        scope=ID(),
        number=ID(stored=True),
        title=TEXT(analyzer=text_analyzer(), phrase=True),
        body=TEXT(analyzer=text_analyzer(), phrase=True),
        grams=TEXT(analyzer=bigram_analyzer(), phrase=True),
        names=KEYWORD(),
        hash=STORED(),
    )


def key_string(key: NodeKey) -> str:
    return f"{key.version}\t{key.lang}\t{key.id}"


def scope(version: str, lang: str) -> str:
    """The ``scope`` field: which version of which language a node belongs to (one term to filter on)."""
    return f"{lang}:{version}"


def node_fields(node: Node, content_hash: str) -> dict:
    """The index document of one node."""
    names = [x for x in (node.title, *node.aliases, node.english) if x]
    body = "\n".join([node.text, *node.examples])
    fields = dict(key=key_string(NodeKey(node.version, node.lang, node.id)), id=node.id, kind=node.kind,
                  version=node.version, lang=node.lang, scope=scope(node.version, node.lang), hash=content_hash,
                  grams="\n".join([*names, body]))
    if node.number:
        fields["number"] = node.number
    if names:
        fields["title"] = "\n".join(names)
        fields["names"] = " ".join(sorted({form for name in names for form in name_forms(name)}))
    if body.strip():
        fields["body"] = body
    return fields


def open_index(store: Store):
    """The index for ``store`` (KbError when there is none yet)."""
    from whoosh import index

    path = index_dir(store)
    if not index.exists_in(path, INDEX_NAME):
        raise KbError(f"{path}: no search index; run 'kb index' (or 'kb ingest' again)")
    return index.open_dir(path, indexname=INDEX_NAME)


def update_index(store: Store, *, rebuild: bool = False) -> IndexReport:
    """Bring the index in line with the store, touching only nodes whose content hash changed.

    An index written with other fields (an older kb) is rebuilt whole."""
    from whoosh import index

    path = index_dir(store)
    os.makedirs(path, exist_ok=True)
    current = schema()
    ix = index.open_dir(path, indexname=INDEX_NAME) if index.exists_in(path, INDEX_NAME) else None
    if rebuild or ix is None or sorted(ix.schema.names()) != sorted(current.names()):  # new, asked for, or outdated
        ix = index.create_in(path, current, indexname=INDEX_NAME)
        indexed: dict[str, str] = {}
    else:
        with ix.searcher() as searcher:
            indexed = {f["key"]: f["hash"] for f in searcher.all_stored_fields()}
    wanted = {key_string(k): h for k, h in store.node_keys()}
    changed = {k for k, h in wanted.items() if indexed.get(k) != h}
    removed = [k for k in indexed if k not in wanted]
    if not changed and not removed:
        return IndexReport(0, 0, 0, len(wanted))
    writer = ix.writer(limitmb=256)
    try:
        for k in removed:
            writer.delete_by_term("key", k)
        for node in store.nodes():
            k = key_string(NodeKey(node.version, node.lang, node.id))
            if k not in changed:
                continue
            if k in indexed:
                writer.update_document(**node_fields(node, wanted[k]))
            else:
                writer.add_document(**node_fields(node, wanted[k]))
    except BaseException:
        writer.cancel()
        raise
    writer.commit()
    updated = sum(1 for k in changed if k in indexed)
    return IndexReport(len(changed) - updated, updated, len(removed), len(wanted))
