"""The search index: Whoosh indexes in ``<kb_dir>/index/``, one per CR version and language, kept in step with the store.

Entry point :func:`update_index` (called by :func:`kb.pipeline.ingest_documents` after each ingest and by
``kb index``): it compares each node's content hash in the store with the hash recorded in the index and
(re)indexes only the nodes that are new or changed, and deletes those no longer stored.

Layout: one Whoosh index per *scope* — a (language, version) pair, unversioned nodes (wiki, notes, cards) in the
scope of their language and version ``""`` — in the folder :func:`scope_dir`, so that searching the newest version
reads only that version's postings and field lengths, and ingesting a version writes only its own index.
``index/state.json`` records the layout, the code and dictionaries that built the indexes (:func:`index_identity`:
a digest of all of kb's code, so no list of the modules that shape terms is kept by hand), the store's content
generation it was brought in line with (:func:`index_lag`), and, per scope, a digest of its nodes' keys and content
hashes: a scope whose digest matches the store is not opened at all. A writer rebuilds an index built by another
code, Sudachi or layout whole, with a one-line notice (:attr:`IndexReport.notice`), and brings a lagging or
missing index in line (:func:`heal_index`); a reader never writes: it answers from the index as it is and says in
one line why it is stale (:func:`reader_staleness`).

A new user dictionary (a glossary term or wiki title added or removed) costs the nodes that hold a word it changed
(:func:`dictionary_change`): they are found through the index — the ``grams`` postings of the word's bigrams — and
checked against the store, and only they are analysed again (:attr:`IndexReport.reanalysed`); the state names the
dictionary being moved to (:data:`TRANSITION`) until every scope has moved, and a move cut short is rebuilt whole.

One document per node key (version, lang, id). Fields:

- ``key`` — ``version\\tlang\\tid``, stored only (a hit is read from the store by it; an updated or removed
  node's document is found by it); ``kind`` — the exact value (a rule number is looked up in the current view's
  table, :mod:`kb.search.view`, so it is not indexed);
- ``title`` — title/term, aliases and English name, analysed by :func:`kb.search.analysis.text_analyzer`;
- ``body`` — text and examples, same analyzer;
- ``grams`` — the Japanese character bigrams of title, body and examples (:func:`kb.search.analysis.bigram_analyzer`);
- ``names`` — glossary entries only: :func:`kb.search.names.name_forms` of the term, aliases, English name and the reading its
  source gives (``meta['reading']``, ruby: ``よじ`` finds 予示) — whole-name lookup;
- ``hash`` — the store's content hash (stored only);
- ``section`` — a long article's section documents only: the heading's anchor (stored only; :mod:`kb.search.sections`:
  such an article is indexed as its lead and one document per section, all under its ``key``).

Building is the costly part of an ingest, so :func:`node_fields` analyses each text once and hands Whoosh the
terms (:class:`kb.search.analysis.PreAnalysed`); :class:`kb.search.codec.BulkWriter` writes them with
:class:`kb.search.codec.IndexCodec`.

Damage: Whoosh keeps no checksums, so each scope's update records the size and SHA-256 of its files in the scope's
``checksums.json`` (:data:`CHECKSUMS`); :func:`index_damage` compares the files with them. ``kb index``
(:func:`verify_index`) rebuilds a damaged index, and a search that fails on one says so and names the remedy
(:func:`damaged_index_error`).

Reading: :func:`shared_indexes` keeps, per process, the open indexes and Whoosh searchers (and so the field
lengths their readers load) of each index folder, and reopens them only when ``state.json`` changed. A searcher
over several scopes reads every scope's segments as its own leaves (:func:`_segment_readers`).
"""

from __future__ import annotations

import hashlib
import json
import marshal
import os
import pickle
import shutil
import threading
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from kb.codedigest import code_digest
from kb.errors import KbError
from kb.model import GLOSSARY, Node, Progress
from kb.search.userdict import changed_words, dictionary_path, intact, text_holds, word_grams
from kb.splitter import JapaneseSplitter
from kb.store import NodeKey, Store

if TYPE_CHECKING:
    from kb.search.analysis import PreAnalysed

INDEX_DIR = "index"
INDEX_NAME = "nodes"
STATE_FILE = "state.json"
CHECKSUMS = "checksums.json"  # in each scope's folder: its files' sizes and SHA-256 as last written
# 1: one index for everything (before state.json); 2: one index per scope; 3: the node key indexed (deleted by term),
# each scope's node hashes in HASHES; 4: the identity's "analysis" is the digest of all of kb's code; 5: a long
# article as its lead and one document per section (kb.search.sections), the section's anchor stored; 6: no
# ``number`` field (never searched: a rule number is found in the current view's table)
LAYOUT = 6
HASHES = "hashes.marshal"  # in each scope's folder: the content hash of each node indexed (its key → hash)
FEW_CHANGES = 200  # up to this many changed nodes of a scope are read from the store one by one
USER_DICTIONARY = "user dictionary"  # the identity's entry naming the user dictionary (kb.search.userdict digest)
TRANSITION = "dictionary transition"  # in the state while the index moves to another user dictionary: its digest


@dataclass(frozen=True)
class IndexReport:
    added: int
    updated: int
    removed: int
    total: int
    notice: str | None = None  # why the whole index was rebuilt, when it was rebuilt for being stale
    reanalysed: int = 0  # of ``updated``: nodes whose text had not changed, analysed again for a new user dictionary


def index_identity(splitter: JapaneseSplitter) -> dict[str, str]:
    """What the index terms depend on besides the texts: the code (:func:`kb.codedigest.code_digest`: every module
    of kb, so any that can shape a term — the analysis, the names, the fold, the rule numbers — is covered), the
    Sudachi dictionary and tokenizer versions, and the user dictionary ``splitter`` splits with
    (:mod:`kb.search.userdict`: the store's glossary terms and wiki titles). Recorded with the Whoosh indexes and the
    site's static search."""
    return {**installed_identity(), USER_DICTIONARY: splitter.dictionary_id or "none"}


@lru_cache(maxsize=1)
def installed_identity() -> dict[str, str]:
    """The part of :func:`index_identity` fixed for the life of a process: the code and the Sudachi packages."""
    from kb.search.userdict import installed_version

    return {"analysis": code_digest()[:16],
            "dictionary": f"sudachidict-core {installed_version('sudachidict-core', 'sudachidict_core')}, "
                          f"sudachipy {installed_version('sudachipy', 'sudachipy')}"}


def recorded_user_dictionary(store: Store) -> str:
    """The user dictionary (:mod:`kb.search.userdict` digest; '' for none) the index was built with."""
    recorded = _read_state(index_dir(store)).get("identity", {}).get(USER_DICTIONARY, "none")
    return "" if recorded == "none" else recorded


def stale_reason(recorded: dict, current: dict) -> str | None:
    """Why an index recorded with ``recorded`` (:func:`index_identity`) is stale now; None when it is not."""
    changed = [f"{k} {recorded.get(k) or 'unknown'} → {current[k]}" for k in current if recorded.get(k) != current[k]]
    return "; ".join(changed) or None


def index_dir(store: Store) -> Path:
    return store.kb_dir / INDEX_DIR


def scope_dir(root: Path, version: str, lang: str) -> Path:
    """The folder of one scope's index (names quoted: injective and safe on every file system)."""
    return root / quote(f"{lang}-{version or '_'}", safe="")


def schema(splitter: JapaneseSplitter) -> Any:
    from whoosh.fields import ID, KEYWORD, STORED, Schema

    from kb.search.analysis import bigram_analyzer, text_analyzer

    return Schema(
        key=ID(stored=True),
        kind=ID(),
        title=_text_field(text_analyzer(splitter)),
        body=_text_field(text_analyzer(splitter)),
        grams=_text_field(bigram_analyzer()),
        names=KEYWORD(),
        hash=STORED(),
        section=STORED(),
    )


def _text_field(analyzer: Any) -> Any:
    """A phrase-searchable text field that also takes pre-analysed values (see :func:`node_fields`)."""
    from whoosh.fields import TEXT

    from kb.search.analysis import PreAnalysedPositions

    field = TEXT(analyzer=analyzer, phrase=True)
    field.format = PreAnalysedPositions(field_boost=field.format.field_boost)
    return field


def key_string(key: NodeKey) -> str:
    return f"{key.version}\t{key.lang}\t{key.id}"


def node_documents(splitter: JapaneseSplitter, node: Node, content_hash: str) -> list[dict[str, str | PreAnalysed]]:
    """The index documents of one node: :func:`node_fields`; a long article's of its lead and of each section
    (:func:`kb.search.sections.split_node`: same ``key``, so deleting the node deletes them, and the section's
    ``section`` anchor)."""
    from kb.search.sections import split_node

    lead, parts = split_node(node)
    return [node_fields(splitter, lead, content_hash),
            *({**node_fields(splitter, part, content_hash), "section": s.anchor} for s, part in parts)]


def node_fields(splitter: JapaneseSplitter, node: Node, content_hash: str) -> dict[str, str | PreAnalysed]:
    """The index document of one node, its text fields analysed here (each text once) and handed to Whoosh as
    :class:`kb.search.analysis.PreAnalysed` terms."""
    from kb.search import analysis
    from kb.search.names import name_forms

    names = [x for x in (node.title, *node.aliases, node.english) if x]
    body = "\n".join([node.text, *node.examples])
    fields: dict[str, str | PreAnalysed] = dict(key=key_string(NodeKey(node.version, node.lang, node.id)),
                                                kind=node.kind, hash=content_hash)
    grams = analysis.bigram_pairs("\n".join([*names, body]))
    if grams:
        fields["grams"] = grams
    if names:
        fields["title"] = analysis.index_pairs(splitter, "\n".join(names))
        if node.kind == GLOSSARY:
            looked_up = names + [node.meta["reading"]] if node.meta.get("reading") else names
            fields["names"] = " ".join(sorted({form for name in looked_up for form in name_forms(splitter, name)}))
    if body.strip():
        fields["body"] = analysis.index_pairs(splitter, body)
    return fields


def open_index(store: Store, version: str, lang: str) -> Any:
    """The index of one scope (KbError when there is none yet, or it was written by an older kb)."""
    path = scope_dir(index_dir(store), version, lang)
    ix = _open_existing(path)
    if ix is None:
        raise KbError(f"{path}: no search index; run 'kb index' (or 'kb ingest' again)")
    return ix


def indexed_scopes(store: Store) -> list[tuple[str, str]]:
    """The (version, lang) scopes the index holds, as its state records them."""
    return [(info[0], info[1]) for info in _read_state(index_dir(store)).get("scopes", {}).values()]


def _storage(path: Path) -> Any:
    """The Whoosh storage of one scope's index, its files read with plain reads, not mapped: Whoosh copies each
    part of a mapped segment it opens into memory (``BytesIO`` of the map), so every reader of a scope cost a copy
    of its postings — 0.2 s and 450 MiB at 5,000 articles, for each search process and each update."""
    from whoosh.filedb.filestore import FileStorage

    return FileStorage(str(path), supports_mmap=False)


def _open_existing(path: Path) -> Any:
    """The index in ``path``, None when there is none; KbError when it cannot be read (written by an older kb)."""
    from whoosh import index

    if not path.is_dir():
        return None
    try:
        return _storage(path).open_index(INDEX_NAME)
    except index.EmptyIndexError:
        return None
    except (AttributeError, ImportError, EOFError, pickle.UnpicklingError, index.IndexError) as error:
        raise KbError(f"{path}: the search index was written by an older kb; run 'kb index --rebuild'") from error


def _exists(path: Path) -> bool:
    try:
        return _open_existing(path) is not None
    except KbError:
        return False


def _read_state(root: Path) -> dict:
    try:
        state = json.loads((root / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


def _write_state(root: Path, state: dict) -> None:
    tmp = root / f".{STATE_FILE}.{os.getpid()}"
    tmp.write_text(json.dumps(state, ensure_ascii=False, sort_keys=True), encoding="utf-8")
    os.replace(tmp, root / STATE_FILE)


def check_freshness(store: Store, splitter: JapaneseSplitter) -> str | None:
    """Why the index must be rebuilt whole (another analysis, dictionary or layout built it than ``splitter`` and
    this code would), or None."""
    root = index_dir(store)
    state = _read_state(root)
    if not state:
        return "it was written by an older kb" if root.is_dir() and any(root.iterdir()) else None
    if state.get("layout") != LAYOUT:
        return f"layout {state.get('layout')} → {LAYOUT}"
    if state.get(TRANSITION):
        return f"its move to the user dictionary {state[TRANSITION]} did not finish"
    return stale_reason(state.get("identity", {}), index_identity(splitter))


def dictionary_change(store: Store, splitter: JapaneseSplitter) -> frozenset[str] | None:
    """When the index is stale only for its user dictionary (:func:`check_freshness`: it was built with another one
    than ``splitter``'s) and the words of both are known (:func:`kb.search.userdict.lexicon_words`): the words
    added, removed or read otherwise — only a text holding one of them is analysed otherwise now. Else None."""
    state = _read_state(index_dir(store))
    if not state or state.get("layout") != LAYOUT or state.get(TRANSITION):
        return None
    recorded, current = state.get("identity", {}), index_identity(splitter)
    if [k for k in current if recorded.get(k) != current[k]] != [USER_DICTIONARY]:
        return None
    return changed_words(store, recorded_user_dictionary(store), splitter.dictionary_id)


def index_lag(store: Store) -> str | None:
    """Why the index may not hold what the store holds, or None: there is no index; another layout, code or Sudachi
    wrote it; or it was last brought in line with another generation of the store's content
    (:meth:`kb.store.Store.content_generation`, changed in the transaction of every content change: a writer killed
    after its commit and before its index update — or before ``kb update`` swapped its new index in — left the two
    apart); or the user dictionary it was built with is missing or damaged (:func:`kb.search.userdict.intact`). What
    every writer checks first."""
    state = _read_state(index_dir(store))
    if not state:
        return "there is no search index"
    if state.get("layout") != LAYOUT:
        return f"layout {state.get('layout')} → {LAYOUT}"
    if (reason := stale_reason(state.get("identity", {}), installed_identity())):
        return reason
    if state.get("generation") != store.content_generation():
        return "the store changed since it was indexed"
    recorded = recorded_user_dictionary(store)
    if recorded and not intact(dictionary_path(store, recorded)):
        return f"its user dictionary {recorded} is missing or damaged"
    return None


def reader_staleness(store: Store, splitter: JapaneseSplitter) -> str | None:
    """What a reader says of the index it answers from, or None when it is fresh: built by other code, another
    Sudachi or with another user dictionary than a writer would use now (:func:`check_freshness`, with the
    dictionary the index recorded), its user dictionary file missing, or behind the store (:func:`index_lag`).
    Readers never write: ``kb index`` (or any writer) brings it up to date."""
    recorded = recorded_user_dictionary(store)
    if recorded and splitter.dictionary_id != recorded:
        return f"its user dictionary {recorded} is missing or damaged"
    return check_freshness(store, splitter) or index_lag(store)


def _scope_digest(hashes: dict[str, str]) -> str:
    digest = hashlib.sha256()
    for key in sorted(hashes):
        digest.update(f"{key}\0{hashes[key]}\n".encode())
    return digest.hexdigest()[:24]


def update_index(store: Store, *, rebuild: bool = False, scopes: Collection[tuple[str, str]] | None = None,
                 splitter: JapaneseSplitter | None = None, progress: Progress | None = None) -> IndexReport:
    """Bring the index in line with the store, touching only the scopes, and in them the nodes, whose content changed.
    ``scopes``: the only (version, lang) pairs that may have changed since the last update (an ingest's); the others
    are not compared with the store. Pass them only when the index was in line with the store before that change
    (:func:`index_lag` checked before it: after it the generation differs anyway; :mod:`kb.pipeline` does); else every
    scope is compared. Call holding the writer lock.

    An index built by another analysis, dictionary or layout is rebuilt whole (the report's ``notice`` says why);
    the store's user dictionary is brought up to date and used first (:func:`kb.search.userdict.prepare`, with
    ``splitter``, the command's: one is made when None). The state records the store's content generation.
    ``progress``: told of the nodes compared so far (stage ``index``; :data:`kb.model.Progress`)."""
    from kb.search import userdict

    splitter = userdict.prepare(store, splitter or JapaneseSplitter())
    generation = store.content_generation()
    root = index_dir(store)
    stale = None if rebuild else check_freshness(store, splitter)
    words = dictionary_change(store, splitter) if stale else None
    if words is not None:  # another user dictionary: only the texts holding a word it changed are analysed again
        stale = None
    if words:
        scopes = None
    notice = f"{root}: rebuilding the search index ({stale})" if stale else None
    state = {} if rebuild or stale else _read_state(root)
    if not state:
        shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True, exist_ok=True)
    recorded: dict[str, list] = state.get("scopes", {})
    wanted: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
    result: dict[str, list] = {}  # the state's scopes after this update
    if scopes is None or not state:
        for k, h in store.node_keys():
            wanted[(k.version, k.lang)][key_string(k)] = h
    else:  # the scopes named, read from the store; the others stay as recorded
        for version, lang in scopes:
            for node_id, h in store.content_hashes(version, lang):
                wanted[(version, lang)][key_string(NodeKey(version, lang, node_id))] = h
        result = {name: info for name, info in recorded.items() if (info[0], info[1]) not in set(scopes)}
    added = updated = removed = reanalysed = 0
    if words is not None:  # until every scope has moved, the index is in neither dictionary's analysis
        _write_state(root, {**state, TRANSITION: splitter.dictionary_id or "none"})
    for name, info in recorded.items():  # scopes no longer stored
        version, lang = info[0], info[1]
        if (version, lang) not in wanted and name not in result:
            shutil.rmtree(scope_dir(root, version, lang), ignore_errors=True)
            removed += info[3]
    compared, to_compare = 0, sum(map(len, wanted.values()))
    for (version, lang), hashes in sorted(wanted.items()):
        if progress:
            progress("index", compared, to_compare)
        compared += len(hashes)
        name = scope_dir(root, version, lang).name
        digest = _scope_digest(hashes)
        if (not words and name in recorded and recorded[name][2] == digest
                and _exists(scope_dir(root, version, lang))):
            result[name] = recorded[name]
            continue
        a, u, r, again = _update_scope(store, scope_dir(root, version, lang), version, lang, hashes, splitter, words)
        added, updated, removed, reanalysed = added + a, updated + u, removed + r, reanalysed + again
        result[name] = [version, lang, digest, len(hashes)]
    if progress:
        progress("index", compared, to_compare)
    total = sum(info[3] for info in result.values())
    if result != recorded or not state or state.get("generation") != generation or words is not None:
        _write_state(root, {"layout": LAYOUT, "identity": index_identity(splitter), "scopes": result,
                            "generation": generation})
    return IndexReport(added, updated, removed, total, notice, reanalysed)


def heal_index(store: Store, splitter: JapaneseSplitter | None = None) -> IndexReport | None:
    """A writer's first step: when the index lags the store (:func:`index_lag`: missing, or another generation),
    bring every scope in line; the report, or None when it did not lag. Call holding the writer lock."""
    if index_lag(store) is None:
        return None
    return update_index(store, splitter=splitter)


def _update_scope(store: Store, path: Path, version: str, lang: str, wanted: dict[str, str],
                  splitter: JapaneseSplitter, words: frozenset[str] | None = None) -> tuple[int, int, int, int]:
    """Bring one scope's index in line with its nodes' hashes, and the nodes whose texts hold one of ``words`` (a
    new user dictionary's changed words, :func:`dictionary_change`) with ``splitter``'s analysis; (added, updated,
    removed, re-analysed for the words)."""

    from kb.search.codec import BulkWriter, IndexCodec

    os.makedirs(path, exist_ok=True)
    current = schema(splitter)
    try:
        ix = _open_existing(path)
    except KbError:  # unreadable: outdated
        ix = None
    recorded = _recorded_checksums(path)
    if ix is None or ix.schema != current:  # new, or outdated
        ix = _storage(path).create_index(current, indexname=INDEX_NAME)
        indexed: dict[str, str] = {}
        recorded = {}  # a new index may reuse an old file name
    else:
        indexed = _indexed_hashes(ix, path, recorded)
    changed = {k for k, h in wanted.items() if indexed.get(k) != h}
    gone = [k for k in indexed if k not in wanted]
    again = _holding(store, ix, version, lang, words, (wanted.keys() & indexed.keys()) - changed) if words else set()
    changed |= again
    if not changed and not gone:
        return 0, 0, 0, 0
    writer = BulkWriter(ix, limitmb=256, codec=IndexCodec())
    try:
        _delete_keys(writer, [k for k in sorted(changed | set(gone)) if k in indexed])  # changed and removed nodes
        few = len(changed) <= FEW_CHANGES
        for node in store.index_nodes(version, lang, [_key(k) for k in sorted(changed)] if few else None):
            k = key_string(NodeKey(node.version, node.lang, node.id))
            if k in changed:
                for doc in node_documents(splitter, node, wanted[k]):
                    writer.add_document(**doc)
    except BaseException:
        writer.cancel()
        raise
    (path / CHECKSUMS).unlink(missing_ok=True)  # from here until recorded again, the files are in flux
    writer.commit()
    # recorded in the checksums with the index files; a new file, never written in place: ``kb update`` stages the
    # index as hard links to the live files, which an in-place write would change under the live index
    tmp = path / f".{HASHES}.{os.getpid()}"
    tmp.write_bytes(marshal.dumps(dict(wanted)))
    os.replace(tmp, path / HASHES)
    _record_checksums(path, recorded)
    updated = sum(1 for k in changed if k in indexed)
    return len(changed) - updated, updated, len(gone), len(again)


def _holding(store: Store, ix: Any, version: str, lang: str, words: frozenset[str], among: set[str]) -> set[str]:
    """The keys of ``among`` whose node's texts hold one of ``words`` (:func:`holds`): the candidates are found
    through the index — the documents with every character bigram of a word (the ``grams`` field) — and the
    glossary readings of the scope (the ``names`` field's), then checked against the stored node."""
    if not among:
        return set()
    grams_of = [grams for grams in map(word_grams, words) if grams is not None]
    if len(grams_of) < len(words):  # a word its bigrams cannot find: every node is looked at
        candidates = set(among)
    else:
        with ix.reader() as reader:
            def having(gram: str) -> set[int]:
                return set(reader.postings("grams", gram).all_ids()) if ("grams", gram) in reader else set()

            found: set[int] = set()
            for grams in grams_of:
                found |= set.intersection(*map(having, grams))
            candidates = {reader.stored_fields(docnum)["key"] for docnum in found}
    if version:
        candidates |= {key_string(key) for key, *_, meta in store.glossary_rows([(version, lang)])
                       if meta.get("reading") and text_holds(meta["reading"], words)}
    return {key_string(NodeKey(node.version, node.lang, node.id))
            for node in store.index_nodes(version, lang, [_key(k) for k in sorted(candidates & among)])
            if holds(node, words)}


def holds(node: Node, words: Collection[str]) -> bool:
    """Whether a text of ``node`` that the index analyses with the user dictionary (:func:`node_fields`: title,
    aliases, English name, text, examples; a glossary entry's reading) holds one of ``words``
    (:func:`kb.search.userdict.text_holds`)."""
    texts = [node.title, *node.aliases, node.english, node.text, *node.examples,
             node.meta.get("reading") if node.kind == GLOSSARY else None]
    return text_holds("\n".join(x for x in texts if x), words)


def _delete_keys(writer: Any, keys: list[str]) -> None:
    """Delete the documents of these node keys: Whoosh's ``delete_by_term`` for each, read from the writer's own
    postings without loading Whoosh's query and search modules (about 25 ms of a one-rule update's index update)."""
    with writer.reader() as reader:
        for k in keys:
            if ("key", k) in reader:
                for docnum in reader.postings("key", k).all_ids():
                    writer.delete_document(docnum)


def _recorded_checksums(path: Path) -> dict[str, list]:
    """The sizes and SHA-256 of one scope's files as its last update recorded them ({} when none can be read)."""
    try:
        recorded = json.loads((path / CHECKSUMS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return recorded if isinstance(recorded, dict) else {}


def _indexed_hashes(ix: Any, path: Path, recorded: dict[str, list]) -> dict[str, str]:
    """Each indexed node's key → content hash: from :data:`HASHES` when the ``recorded`` checksums vouch for it,
    else read from the index's stored fields."""
    try:
        data = (path / HASHES).read_bytes()
        if recorded.get(HASHES) == [len(data), hashlib.sha256(data).hexdigest()]:
            hashes = marshal.loads(data)
            if isinstance(hashes, dict):
                return hashes
    except (OSError, ValueError, EOFError, TypeError, AttributeError):
        pass
    with ix.searcher() as searcher:
        return {f["key"]: f["hash"] for f in searcher.all_stored_fields()}


def _sha256(file: Path) -> str:
    digest = hashlib.sha256()
    with open(file, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _index_files(path: Path) -> list[Path]:
    """The files of one scope's index (Whoosh's lock file and kb's own files aside)."""
    return [f for f in sorted(path.iterdir()) if f.is_file() and f.name != CHECKSUMS
            and not f.name.endswith("_WRITELOCK") and not f.name.startswith(".")]


def _record_checksums(path: Path, recorded: dict[str, list]) -> None:
    """Record the size and SHA-256 of each file of one scope's index. A Whoosh file already ``recorded`` (by the
    update that wrote it) is not read again: Whoosh never rewrites a file, it writes new ones."""
    files = {}
    for f in _index_files(path):
        size, known = f.stat().st_size, recorded.get(f.name)
        reuse = f.name != HASHES and isinstance(known, list) and len(known) == 2 and known[0] == size
        files[f.name] = known if reuse else [size, _sha256(f)]
    tmp = path / f".{CHECKSUMS}.{os.getpid()}"
    tmp.write_text(json.dumps(files, indent=0), encoding="utf-8")
    os.replace(tmp, path / CHECKSUMS)


def index_damage(store: Store) -> str | None:
    """Why the index files differ from what the last update of their scope wrote (a file missing, cut or changed,
    or no checksums recorded), or None when every scope's files are as written (or there is no index)."""
    root = index_dir(store)
    for info in _read_state(root).get("scopes", {}).values():
        path = scope_dir(root, info[0], info[1])
        try:
            recorded = json.loads((path / CHECKSUMS).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return f"{path / CHECKSUMS} is missing"
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
    its files are as written (then ``error`` is what it says)."""
    why = index_damage(store)
    if why is None:
        return None
    return KbError(f"{index_dir(store)}: the search index is damaged ({why}); run 'kb index' to rebuild it")


@dataclass(frozen=True)
class IndexCheck:
    """What :func:`verify_index` found: the damage it repaired (None when there was none) and the update."""

    damage: str | None
    report: IndexReport


def verify_index(store: Store, splitter: JapaneseSplitter | None = None, progress: Progress | None = None) -> IndexCheck:
    """``kb index``: check every scope's files against their checksums and every indexed document against the
    store; a damaged index is rebuilt, missing or stale documents are (re)indexed (``progress``: as for
    :func:`update_index`)."""
    damage = index_damage(store)
    if damage is None:
        try:
            return IndexCheck(None, update_index(store, splitter=splitter, progress=progress))
        except Exception as error:  # unreadable although the files are as written: say what Whoosh said
            damage = f"{type(error).__name__}: {error}"
    return IndexCheck(damage, update_index(store, rebuild=True, splitter=splitter, progress=progress))


def _key(key: str) -> NodeKey:
    version, lang, id_ = key.split("\t", 2)
    return NodeKey(version, lang, id_)


class SharedIndexes:
    """The open scope indexes of one index folder and Whoosh searchers over sets of them, shared by every
    :class:`kb.search.Searcher` of the process (their readers load field lengths once). :meth:`searcher` reopens
    everything when the folder's ``state.json`` changed (an ingest or a rebuild). Use under :attr:`lock`."""

    def __init__(self, root: Path):
        self.root = root
        self.lock = threading.RLock()
        self._stamp: tuple | None = None
        self._searchers: dict[frozenset, Any] = {}
        self.filters: dict[tuple, set[int]] = {}  # (scopes, kinds) → document numbers (kb.search.query)
        self.lexicons: dict[frozenset, Any] = {}  # scopes → kb.search.fuzzy.Lexicon, made when a query needs one

    def _current_stamp(self) -> tuple | None:
        try:
            st = os.stat(self.root / STATE_FILE)
        except OSError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def refresh(self) -> None:
        """Forget what is open when the index changed since it was opened."""
        stamp = self._current_stamp()
        if stamp != self._stamp:
            self.close()
            self._stamp = stamp

    def searcher(self, scopes: frozenset[tuple[str, str]]) -> Any:
        """A Whoosh searcher (BM25F) over the indexes of ``scopes`` that exist; None when none does."""
        from whoosh import scoring
        from whoosh.reading import MultiReader
        from whoosh.searching import Searcher as WhooshSearcher

        if scopes not in self._searchers:
            indexes = [ix for v, lang in sorted(scopes) if (ix := _open_existing(scope_dir(self.root, v, lang)))]
            if not indexes:
                self._searchers[scopes] = None
            elif len(indexes) == 1:
                self._searchers[scopes] = indexes[0].searcher(weighting=scoring.BM25F())
            else:  # over the segments: each sub-searcher atomic (see _segment_readers)
                reader = MultiReader([leaf for ix in indexes for leaf in _segment_readers(ix)])
                self._searchers[scopes] = WhooshSearcher(reader, weighting=scoring.BM25F())
        return self._searchers[scopes]

    def close(self) -> None:
        for searcher in self._searchers.values():
            if searcher is not None:
                searcher.close()
        self._searchers.clear()
        self.filters.clear()
        self.lexicons.clear()


def _segment_readers(ix: Any) -> list[Any]:
    """The readers of each segment of ``ix``. A Whoosh searcher gives each reader of a ``MultiReader`` its own
    sub-searcher and expects it atomic: a scope's own ``MultiReader`` there (once its index has two segments) hands
    its collector a ``MultiMatcher``, which cannot skip blocks by quality (``NotImplementedError: MultiMatcher`` as
    soon as a search holds ``limit`` hits)."""
    reader = ix.reader()
    return [leaf for leaf, _ in reader.leaf_readers()] if not reader.is_atomic() else [reader]


_SHARED: dict[Path, SharedIndexes] = {}
_SHARED_LOCK = threading.Lock()


def shared_indexes(store: Store) -> SharedIndexes:
    """The process's :class:`SharedIndexes` of ``store``'s index folder, as it is: a reader never rebuilds an index
    (see :func:`reader_staleness` for what it tells the user instead)."""
    root = index_dir(store).resolve()
    if not (root / STATE_FILE).is_file():
        raise KbError(f"{root}: no search index; run 'kb index' (or 'kb ingest' again)")
    with _SHARED_LOCK:
        shared = _SHARED.get(root)
        if shared is None:
            shared = _SHARED[root] = SharedIndexes(root)
    with shared.lock:
        shared.refresh()
    return shared
