"""What a process keeps between searches of a kb folder, so that :func:`kb.search.search` and ``kb serve`` answer
warm: made once per store generation, never per call.

- :class:`Generation`: the database file, the store's content generation (:meth:`kb.store.Store.content_generation`,
  changed by every content change) and the index's state file. What everything below is kept under.
- The current view (:func:`kb.versions.current.current_view`) and the name table (:func:`kb.search.names.name_table`)
  of a generation: computed once, shared by every thread (both are read only once made).
- A :class:`kb.search.Searcher` per thread and kb folder (a store connection stays in the thread that opened it),
  made again when the generation changed; at most :data:`KEEP` folders per thread (the oldest is closed).

A reader only: nothing is rebuilt (a stale index is searched as it is, said by the Searcher); the view and names are
also kept on disk for the next process (:mod:`kb.search.coldcache`: the only files a reader writes).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from kb.store import Store, default_kb_dir

if TYPE_CHECKING:
    from collections.abc import Callable

    from kb.search.names import NameTable
    from kb.search.query import Searcher
    from kb.splitter import JapaneseSplitter
    from kb.versions.current import CurrentView

T = TypeVar("T")
KEEP = 4  # kb folders a thread keeps a Searcher of
KEEP_DERIVED = 8  # (folder, generation) pairs whose view and names are kept


@dataclass(frozen=True)
class Generation:
    database: tuple[int, int]  # (device, inode) of kb.sqlite: a database replaced whole is another one
    content: str  # Store.content_generation()
    index: tuple[int, int, int] | None  # the index's state file (inode, mtime, size); None: no index


def generation_of(store: Store) -> Generation:
    from kb.search.index import STATE_FILE, index_dir

    db = os.stat(store.path)
    try:
        st = os.stat(index_dir(store) / STATE_FILE)
        index: tuple[int, int, int] | None = (st.st_ino, st.st_mtime_ns, st.st_size)
    except OSError:
        index = None
    return Generation((db.st_dev, db.st_ino), store.content_generation(), index)


class WarmSearch:
    """The kept views, name tables and per-thread Searchers of a process (see the module doc)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._views: OrderedDict[tuple[Path, tuple[int, int], str], CurrentView] = OrderedDict()
        self._names: OrderedDict[tuple[Path, tuple[int, int], str, str], NameTable] = OrderedDict()
        self._own = threading.local()  # kb folder → (Searcher, Generation), this thread's

    def view(self, store: Store) -> CurrentView:
        """The current view of ``store``'s generation, computed once."""
        from kb.search import coldcache
        from kb.versions.current import current_view

        generation = generation_of(store)
        return self._kept(self._views, (store.kb_dir.resolve(), generation.database, generation.content),
                          lambda: coldcache.kept(store, "view", (), lambda: current_view(store), coldcache.encode_view,
                                                 coldcache.decode_view))

    def names(self, store: Store, splitter: JapaneseSplitter) -> NameTable:
        """The name table of ``store``'s generation as split by ``splitter``'s dictionaries, computed once."""
        from kb.search import coldcache
        from kb.search.names import name_table

        generation = generation_of(store)
        key = (store.kb_dir.resolve(), generation.database, generation.content, splitter.dictionary_id)
        return self._kept(self._names, key, lambda: coldcache.kept(
            store, "names", (splitter.dictionary_id,), lambda: name_table(store, splitter), coldcache.encode_names,
            coldcache.decode_names))

    def _kept(self, table: OrderedDict[tuple, T], key: tuple, make: Callable[[], T]) -> T:
        with self._lock:
            if key in table:
                table.move_to_end(key)
                return table[key]
        made = make()  # outside the lock: two threads may both make it; the same either way
        with self._lock:
            table[key] = made
            while len(table) > KEEP_DERIVED:
                table.popitem(last=False)
        return made

    def searcher(self, kb_dir: str | os.PathLike[str] | None, *, splitter: JapaneseSplitter | None = None,
                 notify: Callable[[str], None] | None = None) -> Searcher:
        """This thread's Searcher of ``kb_dir``, made again when its generation changed (KbError: no kb there)."""
        return self.searcher_at(kb_dir, splitter=splitter, notify=notify)[0]

    def searcher_at(self, kb_dir: str | os.PathLike[str] | None, *, splitter: JapaneseSplitter | None = None,
                    notify: Callable[[str], None] | None = None) -> tuple[Searcher, Generation]:
        """:meth:`searcher`, with the store generation it searches (read once, for what is kept under it)."""
        from kb.search.query import Searcher

        folder = default_kb_dir(kb_dir).resolve()
        own: OrderedDict[Path, tuple[Searcher, Generation]] | None = getattr(self._own, "searchers", None)
        if own is None:
            own = self._own.searchers = OrderedDict()
        kept = own.pop(folder, None)
        if kept is not None:
            searcher, generation = kept
            try:
                current = generation_of(searcher.store)
            except OSError:  # the database is gone: open what is there now
                current = None
            if current == generation:
                own[folder] = kept
                return kept
            searcher.store.close()
        store = Store.open(folder, create=False)
        try:
            generation = generation_of(store)
            searcher = Searcher(store, notify, splitter=splitter, kept=self)
        except BaseException:
            store.close()
            raise
        own[folder] = (searcher, generation)
        while len(own) > KEEP:
            old, _ = own.popitem(last=False)[1]
            old.store.close()
        return searcher, generation

    def close(self) -> None:
        """Close this thread's Searchers (other threads close theirs when they end)."""
        for searcher, _ in getattr(self._own, "searchers", {}).values():
            searcher.store.close()
        self._own.searchers = OrderedDict()


PROCESS = WarmSearch()  # the process's: kb.search.search(kb_dir, …) answers from it
