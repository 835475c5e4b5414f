"""What a new process would recompute from the store before its first search, kept on disk per store generation:
the current view (:func:`kb.versions.current.current_view`), the name table (:func:`kb.search.names.name_table`)
and the document tables (:func:`kb.search.view.doc_table`). ``kb search`` as a new process reads them instead.

Each is one file ``<kb>/search-cache/<what>.marshal`` holding ``(key, value)``; the key is :data:`FORMAT`, kb's code digest
(:func:`kb.codedigest.code_digest`), the store's :class:`kb.search.warm.Generation` (database file, content
generation, the index's state file) and what else the value depends on (the splitter's dictionary, the scopes). A
file whose key differs is a miss: the value is made as before and the file replaced (one file per kind and scope
set, so they never pile up). ``marshal``, not ``pickle``: loading a file runs no code, and a damaged file is a miss.
The first reader writes it into a temporary file renamed over the old one (atomic: a reader never sees half a
file); a kb folder that cannot be written is only not cached. The index itself is never written here.
"""

from __future__ import annotations

import hashlib
import marshal
import os
from collections.abc import Callable, Iterable
from dataclasses import astuple
from pathlib import Path
from typing import Any, TypeVar

from kb.codedigest import code_digest
from kb.store import NodeKey, Store

CACHE_DIR = "search-cache"  # beside kb.sqlite (not "cache": the fetch cache, ingest.net.cache)
FORMAT = 1  # bump when an encoding below changes shape
T = TypeVar("T")


def kept(store: Store, what: str, depends: tuple, make: Callable[[], T], encode: Callable[[T], Any],
         decode: Callable[[Any], T]) -> T:
    """The value ``make()`` would give for ``store``'s generation and ``depends``: read from the cache file when its
    key matches, else made and written there."""
    from kb.search.warm import generation_of

    generation = generation_of(store)
    key = (FORMAT, code_digest(), generation.database, generation.content, generation.index, depends)
    path = store.kb_dir / CACHE_DIR / f"{what}.marshal"
    found = _read(path, key)
    if found is not None:
        try:
            return decode(found[1])
        except (TypeError, ValueError, KeyError, IndexError):  # not what this code wrote: made again
            pass
    value = make()
    _write(path, (key, encode(value)))
    return value


def scope_name(prefix: str, scopes: Iterable[tuple[str, str]]) -> str:
    """A file name for ``prefix`` and a set of (version, lang) scopes (sorted, hashed)."""
    return f"{prefix}-{hashlib.sha256(repr(sorted(scopes)).encode()).hexdigest()[:16]}"


def _read(path: Path, key: tuple) -> tuple | None:
    try:
        data = marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    return data if isinstance(data, tuple) and len(data) == 2 and data[0] == key else None


def _write(path: Path, data: tuple) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        path.parent.mkdir(exist_ok=True)
        tmp.write_bytes(marshal.dumps(data))
        os.replace(tmp, path)
    except OSError:  # a folder the reader cannot write: nothing kept
        tmp.unlink(missing_ok=True)


# -- encodings (marshal: tuples, lists, dicts, str, int, None) ---------------------------------------------------------
def _key(key: NodeKey | None) -> tuple | None:
    return None if key is None else (key.version, key.lang, key.id)


def _node_key(t: tuple | None) -> NodeKey | None:
    return None if t is None else NodeKey(*t)


def encode_view(view: Any) -> tuple:
    versions = tuple(None if v is None else astuple(v) for v in (view.shown, view.english, view.translation,
                                                                  view.original))
    ja = [(node_id, _key(t.key), t.status, _key(t.original), [(op.op, op.text) for op in t.ops])
          for node_id, t in view.ja.items()]
    return (versions, ja, [(_key(k), v) for k, v in view.current_ids.items()], list(view.renumbered.items()))


def decode_view(data: tuple) -> Any:
    from kb.versions.catalog import VersionInfo
    from kb.versions.current import CurrentView, JaText
    from kb.versions.diff import TextOp

    versions, ja, current_ids, renumbered = data
    shown, english, translation, original = (None if v is None else VersionInfo(*v) for v in versions)
    return CurrentView(
        shown, english, translation, original,
        {node_id: JaText(NodeKey(*key), status, _node_key(orig), tuple(TextOp(*op) for op in ops))
         for node_id, key, status, orig, ops in ja},
        {NodeKey(*k): v for k, v in current_ids}, dict(renumbered))


def encode_names(table: Any) -> tuple:
    return (table.english, table.readings, table.rules)


def decode_names(data: tuple) -> Any:
    from kb.search.names import NameTable

    english, readings, rules = data
    if not all(isinstance(d, dict) for d in data):
        raise TypeError("not a name table")
    return NameTable(english, readings, rules)


def encode_table(table: Any) -> tuple:
    docs = [(n, _key(d.key), d.url, d.number, d.order, d.section) for n, d in table.docs.items()]
    return (docs, table.by_number, table.by_url)


def decode_table(data: tuple) -> Any:
    from kb.search.view import DocTable, ViewDoc

    rows, by_number, by_url = data
    docs = {n: ViewDoc(NodeKey(*key), url, number, order, section) for n, key, url, number, order, section in rows}
    return DocTable(docs, {d.key: n for n, d in docs.items() if d.section is None}, by_number, by_url)
