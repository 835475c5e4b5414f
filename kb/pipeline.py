"""Library API for ingesting: gather sources, parse each (pure), store them all in one transaction, then link.

:func:`ingest_sources` is the entry point; :func:`ingest_from_cache` parses what ``kb fetch`` cached. Source kinds
(detection, parsers, authority) are the registry :mod:`ingest.kinds`. One bad source is reported and skipped; the
rest go in.

Memory: the sources stream through — each is read, parsed and stored before the next is read, and only its shell
(the document without its nodes: source, kind, diagnostics) stays in the report — so an ingest holds one parsed
document at a time, whatever the number of sources; linking and the index then read what they need from the store.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ingest import MAX_BYTES
from ingest.kinds import authority, kinds_of_site, parse_source, unrecognised
from kb.errors import KbError
from kb.link.graph import CARD_LANG, WatchedNodes
from kb.link.resolve import LinkReport, link, stored_report
from kb.model import CHAPTER, UNVERSIONED, Diagnostic, Document, Progress, no_progress
from kb.splitter import JapaneseSplitter
from kb.store import DB_NAME, NodeKey, Store, default_kb_dir
from kb.store.lock import writer_lock

if TYPE_CHECKING:
    from kb.search.index import IndexReport


@dataclass
class IngestReport:
    documents: list[Document] = field(default_factory=list)  # each document stored, without its nodes (a shell)
    node_kinds: Counter = field(default_factory=Counter)  # the nodes of those documents, by kind
    stored: int = 0  # documents whose content was new or changed
    changed: set[tuple[str, str]] = field(default_factory=set)  # the (version, lang) of those documents
    unchanged: int = 0
    failed: list[str] = field(default_factory=list)  # one line per source that could not be read or parsed
    skipped: list[str] = field(default_factory=list)  # one line per file of a folder no source kind recognises
    warnings: list[Diagnostic] = field(default_factory=list)
    links: LinkReport = field(default_factory=LinkReport)
    index: IndexReport | None = None  # the search-index update that followed

    @property
    def nodes_by_kind(self) -> Counter:
        return self.node_kinds


def gather(sources: Iterable[str]) -> list[str]:
    """Expand folders to the files in them (sorted); keep files and URLs as given. Inside a folder, hidden files and
    folders (``.kb/``, ``.git/``) and any kb folder (one holding a ``kb.sqlite``: its cache pages and index files are
    kb's own) are left out."""
    out: list[str] = []
    for s in sources:
        if "://" in s:
            out.append(s)
            continue
        p = Path(s)
        if p.is_dir():
            out += [str(f) for f in _folder_files(p)]
        else:
            out.append(s)
    return out


def gather_named(sources: Iterable[str]) -> list[tuple[str, bool]]:
    """:func:`gather`, each file with whether it was found in a folder (rather than named): a folder's files are read
    only when a source kind recognises them (:func:`ingest.kinds.unrecognised`)."""
    return [(file, file != source) for source in sources for file in gather([source])]


def _folder_files(folder: Path) -> list[Path]:
    files = []
    for parent, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".") and not os.path.exists(os.path.join(parent, d, DB_NAME))]
        files += [Path(parent, name) for name in names if not name.startswith(".") and Path(parent, name).is_file()]
    return sorted(files)


def read_source(source: str, kb_dir: Path | None = None) -> bytes:
    """The bytes of a file, or of a URL fetched politely into the cache of the kb folder ``kb_dir`` (None: the default
    one, :func:`kb.store.default_kb_dir`). A file must be a regular file (not a FIFO or a device such as /dev/zero)
    of at most :data:`ingest.MAX_BYTES`, as a fetched response must."""
    if "://" in source:
        from ingest.net.fetch import fetch_url

        return fetch_url(source, kb_dir=default_kb_dir(kb_dir))
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO opens at once instead of waiting for a writer
    except FileNotFoundError:
        raise KbError(f"{source}: no such file") from None
    except OSError as exc:
        raise KbError(f"{source}: cannot read ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as f:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise KbError(f"{source}: is a folder")
        if not stat.S_ISREG(mode):
            what = "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
            raise KbError(f"{source}: not a regular file ({what}); give a file or a folder")
        size = os.fstat(fd).st_size
        if size > MAX_BYTES:
            raise KbError(f"{source}: {size / 1e6:.1f} MB, over the {MAX_BYTES / 1e6:g} MB a source may have")
        try:
            data = f.read(MAX_BYTES + 1)
        except OSError as exc:
            raise KbError(f"{source}: cannot read ({exc.strerror})") from None
    if len(data) > MAX_BYTES:  # it grew while we read
        raise KbError(f"{source}: over the {MAX_BYTES / 1e6:g} MB a source may have")
    return data


INDEX_PENDING = ".index-pending"  # in the kb folder from an ingest's commit until its index update is done


def ingest_documents(store: Store, documents: Iterable[Document], report: IngestReport, *, strict: bool = False,
                     force: bool = False, splitter: JapaneseSplitter | None = None, index: bool = True,
                     progress: Progress | None = None) -> IngestReport:
    """Store parsed documents (each as it comes: ``documents`` may be a generator that parses them) and link what
    they changed in one transaction, then update the search index — and
    when an earlier ingest stopped between its commit and the end of its index update (killed, Ctrl-C: the file
    :data:`INDEX_PENDING` says so), reconcile the whole index with the store, also when nothing changed now: every
    node missing from the index or stale in it is indexed again; so is an index that lags the store (missing, or
    left behind by a killed writer: :func:`kb.search.index.index_lag`). All of it holding the kb folder's writer
    lock. A rules text that would replace the newest version of its language while incomplete or far smaller
    (:mod:`kb.versions.guard`) is not stored but reported as failed, unless ``force``. ``splitter``: the command's
    Japanese splitter (for the term links and the index); one is made when None. ``index=False``: no index update;
    the index is left pending as after an interrupted one (:data:`INDEX_PENDING`), for the next ingest or
    ``kb index`` to bring up to date. ``progress``: told of each stage (store, link, index; :data:`kb.model.Progress`)."""
    with writer_lock(store.kb_dir):
        return _ingest_documents(store, documents, report, strict, force, splitter or JapaneseSplitter(), index,
                                 progress or no_progress)


MAX_REFS_PER_NODE = 5_000  # the real sources' most: ~410 (an MTG Wiki decklist page); the English CR's glossary: < 60


def _bounded(doc: Document) -> Document:
    """The document with at most :data:`MAX_REFS_PER_NODE` references per node (the first ones), and a warning
    naming each node cut: a hostile page of 25,000 ``rule 601.2a-z`` would otherwise store 600,000 references."""
    over = [node for node in doc.nodes if len(node.refs) > MAX_REFS_PER_NODE]
    if not over:
        return doc
    cut = {node.id for node in over}
    return replace(doc, nodes=tuple(replace(node, refs=node.refs[:MAX_REFS_PER_NODE]) if node.id in cut else node
                                    for node in doc.nodes),
                   diagnostics=doc.diagnostics + tuple(
                       Diagnostic(doc.source, node.id, f"{len(node.refs):,} references; only the first "
                                                       f"{MAX_REFS_PER_NODE:,} are kept") for node in over))


class _Guard:
    """Which rules texts :func:`kb.versions.guard.replacement_refusal` refuses (unless ``force``), each judged
    against the versions stored before this ingest began (as when every source was parsed before any was stored)."""

    def __init__(self, store: Store, force: bool):
        self.store, self.force = store, force
        self._stored: list | None = None

    def start(self) -> None:
        """Read the versions stored: call before storing anything."""
        from kb.versions.catalog import list_versions

        self._stored = [] if self.force else list_versions(self.store)

    def refusal(self, doc: Document) -> str | None:
        """Why ``doc`` may not be stored (a failed line), or None."""
        from ingest.cr_text import incompleteness
        from kb.versions.guard import RULES_KIND, replacement_refusal

        if self.force or doc.kind != RULES_KIND or self._stored is None:
            return None
        return replacement_refusal(doc, self._stored, incomplete=incompleteness(doc), chapters=lambda v: {
            node.number or "" for node in self.store.light_nodes(v.version, v.lang, [CHAPTER])})


def _ingest_documents(store: Store, documents: Iterable[Document], report: IngestReport, strict: bool, force: bool,
                      splitter: JapaneseSplitter, index: bool, progress: Progress,
                      failed_sources: tuple[list[str], str] | None = None) -> IngestReport:
    """:func:`ingest_documents`. ``failed_sources``: the list the ``documents`` generator adds the sources it could
    not read or parse to, and what they are called (``sources``): with ``strict``, any of them refuses the ingest."""
    from kb.search.index import index_lag, update_index

    changed = report.changed  # (version, lang) of the documents stored
    pending = store.kb_dir / INDEX_PENDING
    lagging = pending.exists() or index_lag(store) is not None  # an earlier writer stopped before its index was done
    ranks = authority()
    rewritten: set[NodeKey] = set()  # the merged nodes that changed: only they (and what names them) are linked again
    watched = WatchedNodes()  # their card references and names: the card entities are made again only when the
    # references changed, the references into a node only when its names did
    guard = _Guard(store, force)
    with store.transaction():
        guard.start()
        for done, doc in enumerate(documents):  # one at a time: stored, then only its shell is kept
            progress("store", done, None)
            doc = _bounded(doc)
            report.warnings += doc.diagnostics
            refusal = guard.refusal(doc)
            if refusal is not None:
                report.failed.append(refusal)
                continue
            report.documents.append(replace(doc, nodes=()))
            report.node_kinds.update(node.kind for node in doc.nodes)
            if doc.version == UNVERSIONED:
                watched.watch(store, doc)
            written = store.put_document(doc, ranks.get(doc.kind, 0))
            rewritten |= written.rewritten
            if written.documents:
                report.stored += 1
                changed.add((doc.version, doc.lang))
            else:
                report.unchanged += 1
        if strict and failed_sources and failed_sources[0]:  # nothing is stored: the transaction is rolled back
            failed, what = failed_sources
            raise KbError(f"--strict: {len(failed)} {what} failed; first: {failed[0]}")
        if not report.stored:  # the store is as it was: so are its links
            report.links = stored_report(store)
        else:  # only the changed CR versions, unless an unversioned source (wiki, notes) changed: see kb.link.resolve
            progress("link", 0, None)
            report.links = link(store, None if any(version == UNVERSIONED for version, _ in changed) else changed,
                                rewritten, splitter=splitter, watched=watched)
        refused = _refused_by_strict(report) if strict else []
        if refused:
            raise KbError(f"--strict: {len(report.warnings) + len(report.links.diagnostics)} warnings and "
                          f"{len(report.failed)} failed sources" + ("; nothing was stored" if report.stored else "")
                          + f"; first: {refused[0]}")
        if report.stored:
            pending.touch()  # committed with the store; removed once the index has caught up
    if not index or (not report.stored and not lagging):
        return report  # the index is left for later, or the store is as it was and so is its search index
    try:  # after the commit: the changed versions' nodes are compared, all of them after an interrupted ingest
        # an unversioned source changed: the link may have rewritten card entities too (their own scope)
        wiki = {(UNVERSIONED, CARD_LANG)} if any(v == UNVERSIONED for v, _ in changed) else set()
        report.index = update_index(store, scopes=None if lagging else changed | wiki, splitter=splitter,
                                    progress=progress)
    except KeyboardInterrupt:
        raise KbError(f"{store.path}: interrupted while updating the search index; the sources are stored: "
                      "run 'kb index' (or 'kb ingest' again) to complete the index") from None
    pending.unlink(missing_ok=True)
    return report


def _refused_by_strict(report: IngestReport) -> list[str]:
    """What ``--strict`` refuses: every failed source and every warning about a source (records skipped, a rules
    text cut short or an excerpt: :data:`ingest.cr_text.INCOMPLETE`), and every unresolved reference — but those a
    whole official rules text makes itself: its own errors, which no ingest can mend (the official glossary's "Map"
    cites rule 110.10 for 111.10). They are reported like any other."""
    from ingest.cr_text import incompleteness

    whole = {d.source for d in report.documents if d.kind == "cr-text" and incompleteness(d) is None}
    return [*report.failed, *map(str, report.warnings),
            *(str(d) for d in report.links.diagnostics if d.source not in whole)]


def ingest_sources(store: Store, sources: Iterable[str], *, kind: str | None = None, strict: bool = False,
                   progress: Progress | None = None, force: bool = False,
                   splitter: JapaneseSplitter | None = None, index: bool = True) -> IngestReport:
    """Parse every source (files, folders, URLs) and store them; see :class:`IngestReport`. Holds the kb folder's
    writer lock throughout (URL sources are fetched into its cache). ``force``, ``splitter``, ``index``,
    ``progress`` (here also each source read): see :func:`ingest_documents`."""
    with writer_lock(store.kb_dir):
        return _ingest_sources(store, sources, kind, strict, progress, force, splitter, index)


def _ingest_sources(store: Store, sources: Iterable[str], kind: str | None, strict: bool,
                    progress: Progress | None, force: bool,
                    splitter: JapaneseSplitter | None, index: bool) -> IngestReport:
    report = IngestReport()
    failed: list[str] = []
    progress = progress or no_progress
    gathered = gather_named(sources)

    def parsed() -> Iterator[Document]:
        for done, (source, in_folder) in enumerate(gathered):
            progress("read", done, len(gathered))
            try:
                data = read_source(source, store.kb_dir)
                if kind is None and in_folder and (reason := unrecognised(source, data)):
                    report.skipped.append(f"{source}: {reason}")  # a folder's stray file is no source: it is left out
                    continue
                if kind is None and store.has_document(source, hashlib.sha256(data).hexdigest()):
                    report.unchanged += 1  # the same bytes were ingested from here before: nothing to parse
                    continue
                document = parse_source(source, data, kind)
            except KbError as exc:
                report.failed.append(str(exc))
                failed.append(str(exc))
                continue
            del data
            yield document
        progress("read", len(gathered), len(gathered))

    return _ingest_documents(store, parsed(), report, strict, force, splitter or JapaneseSplitter(), index, progress,
                             (failed, "sources"))


def remove_sources(store: Store, sources: Iterable[str], *, splitter: JapaneseSplitter | None = None) -> IngestReport:
    """Remove what each source (file path or URL, as ingested) gave — exactly its contribution — then link again and
    update the search index. A source never ingested is reported as failed."""
    report = IngestReport()
    splitter = splitter or JapaneseSplitter()
    with writer_lock(store.kb_dir):
        with store.transaction():
            for source in sources:
                if not store.remove_document(source).documents:
                    report.failed.append(f"{source}: not in the knowledge base")
            report.links = link(store, splitter=splitter)
        from kb.search.index import update_index

        report.index = update_index(store, splitter=splitter)
    return report


def ingest_from_cache(store: Store, site: str | None, *, kb_dir: Path | str | None = None,
                      strict: bool = False, force: bool = False, progress: Progress | None = None,
                      splitter: JapaneseSplitter | None = None) -> IngestReport:
    """Parse the cached pages of ``site`` (all sites when None) whose bytes changed since they were last ingested,
    store them with :func:`ingest_documents`, and return its :class:`IngestReport`. Holds the writer lock of
    ``kb_dir`` (whose cache records what was ingested) and of the store's folder. ``progress``, ``splitter``: see
    :func:`ingest_documents` (here also the cached pages read)."""
    folder = default_kb_dir(kb_dir)
    with writer_lock(folder), writer_lock(store.kb_dir):
        return _ingest_from_cache(store, site, folder, strict, force, progress or no_progress,
                                  splitter or JapaneseSplitter())


def _ingest_from_cache(store: Store, site: str | None, folder: Path, strict: bool, force: bool,
                       progress: Progress, splitter: JapaneseSplitter) -> IngestReport:
    from ingest.net.cache import CACHE_DIR, SiteCache, bytes_for_parser, cached_sites  # the cache only when it is read
    from ingest.net.sites import PAGE

    sites = cached_sites(folder)
    if site is not None and site not in sites:
        raise KbError(f"{folder / CACHE_DIR / site}: nothing cached for {site!r}; run 'kb fetch {site}' first")
    if not sites:
        raise KbError(f"{folder / CACHE_DIR}: nothing cached; run 'kb fetch SITE' first")
    report = IngestReport()
    stored_sources = {d.source for d in store.documents()}
    new_hashes: dict[str, dict[str, str]] = {}  # site → URL → content hash of the pages parsed now
    failed: list[str] = []

    def parsed() -> Iterator[Document]:
        for name in [site] if site else sites:
            cache = SiteCache(folder, name)
            done = cache.ingested()
            among = kinds_of_site(name)
            entries = [entry for entry in cache.entries() if entry.role == PAGE]
            for count, entry in enumerate(entries):
                progress("read", count, len(entries))
                if done.get(entry.url) == entry.content_hash and entry.url in stored_sources:
                    report.unchanged += 1
                    continue
                body = cache.body(entry)
                try:
                    if body is None:
                        raise KbError(f"{entry.url}: cached body missing or damaged; run 'kb fetch {name}' again")
                    document = parse_source(entry.url, bytes_for_parser(entry, body), among=among or None)
                except KbError as exc:
                    report.failed.append(str(exc))
                    failed.append(str(exc))
                    continue
                new_hashes.setdefault(name, {})[entry.url] = entry.content_hash
                yield document

    with writer_lock(store.kb_dir):
        _ingest_documents(store, parsed(), report, strict, force, splitter, True, progress,
                          (failed, "cached pages"))
    for name, hashes in new_hashes.items():
        cache = SiteCache(folder, name)
        cache.save_ingested({**cache.ingested(), **hashes})
    return report
