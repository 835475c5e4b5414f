"""The search index: a Whoosh index in ``<kb_dir>/index/`` holding every stored node, kept in step with the store.

Entry point :func:`update_index` (called by :func:`kb.pipeline.ingest_documents` after each ingest and by
``kb index``): it compares each node's content hash in the store with the hash recorded in the index and
(re)indexes only the nodes that are new or changed, and deletes those no longer stored.

One document per node key (version, lang, id). Fields:

- ``key`` — ``version\\tlang\\tid``, stored only (a hit is read from the store by it; an updated or removed
  node's document is found by it); ``kind``, ``number`` — exact values; ``scope`` — ``lang:version`` (the version
  and language filter; ``ja:`` for unversioned Japanese nodes);
- ``title`` — title/term, aliases and English name, analysed by :func:`kb.search.analysis.text_analyzer`;
- ``body`` — text and examples, same analyzer;
- ``grams`` — the Japanese character bigrams of title, body and examples (:func:`kb.search.analysis.bigram_analyzer`);
- ``names`` — glossary entries only: :func:`name_forms` of the term, aliases, English name and the reading its
  source gives (``meta['reading']``, ruby: ``よじ`` finds 予示) — whole-name lookup;
- ``hash`` — the store's content hash (stored only).

Building is the costly part of an ingest, so :func:`node_fields` analyses each text once and hands Whoosh the
terms (:class:`kb.search.analysis.PreAnalysed`); :class:`kb.search.codec.BulkWriter` writes them with
:class:`kb.search.codec.IndexCodec`. An index an older kb wrote (other fields or formats) is rebuilt.

Whoosh keeps no checksums, so each update records the size and SHA-256 of every index file in
``index/checksums.json`` (:data:`CHECKSUMS`); :func:`index_damage` compares the files with it. A damaged index
(a file missing, cut or changed since kb wrote it) is rebuilt by :func:`update_index`, and a search that fails on
one says so and names the remedy (:func:`damaged_index_error`).
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import re
from dataclasses import dataclass
from pathlib import Path

from kb.errors import KbError
from kb.model import GLOSSARY, Node
from kb.store import NodeKey, Store

INDEX_DIR = "index"
INDEX_NAME = "nodes"
CHECKSUMS = "checksums.json"


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
    from whoosh.fields import ID, KEYWORD, STORED, Schema

    from kb.search.analysis import bigram_analyzer, text_analyzer

    return Schema(
        key=STORED(),
        kind=ID(),
        scope=ID(),
        number=ID(),
        title=_text_field(text_analyzer()),
        body=_text_field(text_analyzer()),
        grams=_text_field(bigram_analyzer()),
        names=KEYWORD(),
        hash=STORED(),
    )


def _text_field(analyzer):
    """A phrase-searchable text field that also takes pre-analysed values (see :func:`node_fields`)."""
    from whoosh.fields import TEXT

    from kb.search.analysis import PreAnalysedPositions

    field = TEXT(analyzer=analyzer, phrase=True)
    field.format = PreAnalysedPositions(field_boost=field.format.field_boost)
    return field


def key_string(key: NodeKey) -> str:
    return f"{key.version}\t{key.lang}\t{key.id}"


def scope(version: str, lang: str) -> str:
    """The ``scope`` field: which version of which language a node belongs to (one term to filter on)."""
    return f"{lang}:{version}"


def node_fields(node: Node, content_hash: str) -> dict:
    """The index document of one node, its text fields analysed here (each text once) and handed to Whoosh as
    :class:`kb.search.analysis.PreAnalysed` terms."""
    from kb.search import analysis

    names = [x for x in (node.title, *node.aliases, node.english) if x]
    body = "\n".join([node.text, *node.examples])
    fields = dict(key=key_string(NodeKey(node.version, node.lang, node.id)), kind=node.kind,
                  scope=scope(node.version, node.lang), hash=content_hash)
    grams = analysis.bigram_pairs("\n".join([*names, body]))
    if grams:
        fields["grams"] = grams
    if node.number:
        fields["number"] = node.number
    if names:
        fields["title"] = analysis.index_pairs("\n".join(names))
        if node.kind == GLOSSARY:
            looked_up = names + [node.meta["reading"]] if node.meta.get("reading") else names
            fields["names"] = " ".join(sorted({form for name in looked_up for form in name_forms(name)}))
    if body.strip():
        fields["body"] = analysis.index_pairs(body)
    return fields


def open_index(store: Store):
    """The index for ``store`` (KbError when there is none yet, or it was written by an older kb)."""
    path = index_dir(store)
    try:
        ix = _open_existing(path)
    except KbError as error:
        raise damaged_index_error(store, error) or error from error.__cause__
    if ix is None:
        raise KbError(f"{path}: no search index; run 'kb index' (or 'kb ingest' again)")
    return ix


def _open_existing(path: Path):
    """The index in ``path``, None when there is none; KbError when it cannot be read (written by an older kb)."""
    from whoosh import index

    try:
        return index.open_dir(path, indexname=INDEX_NAME) if index.exists_in(path, INDEX_NAME) else None
    except (AttributeError, ImportError, EOFError, pickle.UnpicklingError, index.IndexError) as error:
        raise KbError(f"{path}: the search index was written by an older kb; run 'kb index --rebuild'") from error


def index_damage(store: Store) -> str | None:
    """Why the index files differ from what the last index update wrote (a file missing, cut or changed), or
    None when they are as written (or there is no index)."""
    path = index_dir(store)
    try:
        recorded = json.loads((path / CHECKSUMS).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None if not any(path.glob("*.toc")) else f"{path / CHECKSUMS} is missing"
    except (OSError, ValueError) as error:
        return f"{path / CHECKSUMS} cannot be read ({error})"
    if not isinstance(recorded, dict):
        return f"{path / CHECKSUMS} is not what kb writes"
    for name, (size, digest) in sorted(recorded.items()):
        file = path / name
        try:
            if file.stat().st_size != size:
                return f"{file} has {file.stat().st_size} bytes, not {size}"
            if _sha256(file) != digest:
                return f"{file} changed since kb wrote it"
        except FileNotFoundError:
            return f"{file} is missing"
    return None


def damaged_index_error(store: Store, error: BaseException) -> KbError | None:
    """The error to raise when reading the index failed with ``error`` because the index is damaged; None when
    the files are as written (then ``error`` is a bug, not damage)."""
    why = index_damage(store)
    if why is None:
        return None
    return KbError(f"{index_dir(store)}: the search index is damaged ({why}); run 'kb index' to rebuild it")


def _sha256(file: Path) -> str:
    digest = hashlib.sha256()
    with open(file, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _record_checksums(path: Path) -> None:
    """Write :data:`CHECKSUMS` for the index files in ``path`` now (Whoosh's lock file aside)."""
    files = {f.name: [f.stat().st_size, _sha256(f)] for f in sorted(path.iterdir())
             if f.is_file() and f.name != CHECKSUMS and not f.name.endswith("_WRITELOCK") and not f.name.startswith(".")}
    tmp = path / f".{CHECKSUMS}.{os.getpid()}"
    tmp.write_text(json.dumps(files, indent=0), encoding="utf-8")
    os.replace(tmp, path / CHECKSUMS)


@dataclass(frozen=True)
class IndexCheck:
    """What :func:`verify_index` found: the damage it repaired (None when there was none) and the update."""

    damage: str | None
    report: IndexReport


def verify_index(store: Store) -> IndexCheck:
    """``kb index``: check the index files against their checksums and every indexed document against the store;
    a damaged index is rebuilt, missing or stale documents are (re)indexed."""
    damage = index_damage(store)
    if damage is None:
        try:
            return IndexCheck(None, update_index(store))
        except Exception as error:  # unreadable although the files are as written: say what Whoosh said
            damage = f"{type(error).__name__}: {error}"
    return IndexCheck(damage, update_index(store, rebuild=True))


def update_index(store: Store, *, rebuild: bool = False) -> IndexReport:
    """Bring the index in line with the store, touching only nodes whose content hash changed.

    An index written with other fields or field formats (an older kb), or damaged (:func:`index_damage`), is
    rebuilt whole."""
    from whoosh import index

    from kb.search.codec import BulkWriter, IndexCodec

    path = index_dir(store)
    os.makedirs(path, exist_ok=True)
    current = schema()
    try:
        ix = None if rebuild or index_damage(store) else _open_existing(path)
    except KbError:  # unreadable: outdated
        ix = None
    if ix is None or ix.schema != current:  # new, asked for, damaged or outdated
        for stale in path.glob("*"):  # a damaged index's files would otherwise linger beside the new one
            if stale.is_file() and not stale.name.endswith("_WRITELOCK"):
                stale.unlink()
        ix = index.create_in(path, current, indexname=INDEX_NAME)
        indexed: dict[str, str] = {}
    else:
        with ix.searcher() as searcher:
            indexed = {f["key"]: f["hash"] for f in searcher.all_stored_fields()}
    wanted = {key_string(k): h for k, h in store.node_keys()}
    changed = {k for k, h in wanted.items() if indexed.get(k) != h}
    removed = [k for k in indexed if k not in wanted]
    if not changed and not removed:
        if not (path / CHECKSUMS).exists():
            _record_checksums(path)
        return IndexReport(0, 0, 0, len(wanted))
    writer = BulkWriter(ix, limitmb=256, codec=IndexCodec())
    try:
        if indexed:  # drop the documents of changed and removed nodes (found by their stored key)
            for docnum, stored in writer.searcher().reader().iter_docs():
                if stored["key"] in changed or stored["key"] not in wanted:
                    writer.delete_document(docnum)
        for node in store.nodes():
            k = key_string(NodeKey(node.version, node.lang, node.id))
            if k in changed:
                writer.add_document(**node_fields(node, wanted[k]))
    except BaseException:
        writer.cancel()
        raise
    (path / CHECKSUMS).unlink(missing_ok=True)  # from here until recorded again, the files are in flux
    writer.commit()
    _record_checksums(path)
    updated = sum(1 for k in changed if k in indexed)
    return IndexReport(len(changed) - updated, updated, len(removed), len(wanted))
