"""Build the static site, in phases: gather the store (:mod:`kb.site.gather`) → produce pages
(:mod:`kb.site.pages`) → render only the pages whose inputs changed (:mod:`kb.site.render`) → static files and the
sitemap (:mod:`kb.site.sitemap`) → the static search index (:mod:`kb.site.search_export`) → check every internal link
and anchor (:mod:`kb.site.linkcheck`) → put the new files in place (:mod:`kb.site.output`).

Incremental: the manifest (:mod:`kb.site.manifest`) records, for each file, the hash of its inputs
(:func:`kb.site.fingerprint.page_hash`: the page's record — its context holds the texts of the nodes it shows and the
URLs of those it links to — with all of kb's code, the templates and the base URL), and the links and ids it contains.
A page whose hash is unchanged is kept from the previous site instead of rendered; search shards, static files and the
sitemap are rewritten only when their content changes. The costly part of a page (an article's HTML, its links
pointed at our pages) is a :class:`~kb.site.page.Deferred`: the hash names it by its source (the node's content hash)
and the digest of the answers to the lookups its making did last time (kept in the manifest; asked again only when
the lookup tables are not the previous build's), so it is made only for the pages rendered — a build after one
article changed makes the HTML of the pages that show or cite it, not of every article. Pages are rendered and
written one by one as the producers yield them: none is held in memory.
A :class:`~kb.site.page.PageGroup` (an archived version's pages; the rule pages of each chapter, section and rule,
named by their own contexts: :func:`kb.site.pages.part_inputs`; the article pages in runs and the preview scripts,
named by their nodes' content hashes and what else they show: :func:`kb.site.pages.other_pages`,
:func:`kb.site.pages.preview_pages`; the redirect pages and the English redirect pages, named by what they read of
the site: :func:`kb.site.pages.redirect_inputs`) is recorded with the hash of the inputs it names and its files: when
that is unchanged its pages are neither made nor hashed — a build after one article changed makes again the rule
parts, article runs and preview scripts whose pages show it, not the 3,000 rule pages and 5,000 articles, and its
redirects only when the article changed what they show. When the inputs fingerprint
(:func:`kb.site.fingerprint.inputs_fingerprint`) equals the previous build's and its files are all there, nothing is
gathered or written at all: only the small stamp is read. When all that changed is the text of a few wiki articles,
the build is an edit build (:mod:`kb.site.edits`): no producer runs; it gathers those articles and the names of the
others, and makes the pages that can have changed (:func:`kb.site.pages.edited_pages`), keeping every other file.

Atomic: new files are written to a staging folder beside ``out``; only a complete, checked build is put in place —
the whole folder swapped, or, when few files changed, each new file renamed over its old copy under a journal that
a killed build's successor completes (:mod:`kb.site.output`) — so a failed build leaves the previous site whole. One
build at a time per knowledge base (the writer lock) and per output folder (:func:`kb.site.output.output_lock`).
"""

from __future__ import annotations

import gc
import hashlib
import marshal
import os
import time
from collections.abc import Iterable, Mapping, MutableMapping
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from kb.errors import KbError
from kb.model import Progress, no_progress
from kb.site.edits import (
    EDITS,
    MissingShard,
    RecordShards,
    cited_otherwise,
    edit_base,
    edited_files,
    edited_keys,
    edits_files,
    old_contributions,
    old_entry_citations,
    old_rule_citations,
    pages_by_id,
)
from kb.site.fingerprint import answers_digest, group_hash, inputs_fingerprint, page_hash, render_key
from kb.site.gather import gather_edited, gather_site, link_edited, names_record
from kb.site.linkcheck import check_links, page_links, resolve_links
from kb.site.manifest import (
    FILE_RECORDS,
    MANIFEST,
    MANIFEST_FORMAT,
    NAMES,
    STAMP,
    EditedFiles,
    FileRecord,
    StoredFiles,
    file_record,
    load_manifest,
    load_record,
    record_changes,
    removed_since,
)
from kb.site.output import RECORDS, KeyedRecords, Output, in_place_suits, output_lock, recover
from kb.site.page import Page, PageGroup
from kb.site.pages import EDITED_PRODUCERS, PAGE_PRODUCERS, Producer, card_facts, edited_pages, redirect_inputs, shown_again_in
from kb.site.records import SiteData
from kb.site.redirects import english_redirect_pages
from kb.site.render import TEMPLATES, Renderer
from kb.site.sitemap import sitemap_key, sitemap_xml
from kb.splitter import JapaneseSplitter
from kb.store import Store
from kb.store.keyed import KeyedFile
from kb.store.lock import writer_lock

NOT_PAGES = ("search/", "static/", RECORDS)  # the site's files that are no page


@dataclass
class BuildReport:
    out: Path
    pages: int = 0
    rendered: int = 0
    reused: int = 0
    rendered_pages: list[str] = field(default_factory=list)  # the pages rendered (written anew), in the build's order
    search_files: int = 0
    search_written: int = 0
    broken: list[str] = field(default_factory=list)  # "cr/601.html: ../cr/728.html#728 (no such page)"
    unresolved: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)  # one line each: work redone for a reason (a stale search index)
    edit: bool = False  # an edit build (kb.site.edits): only the edited articles' pages and search documents made
    seconds: float = 0.0


def build_site(store: Store, out: str | os.PathLike[str], *, strict: bool = False,
               producers: list[Producer] | None = None, templates: Path = TEMPLATES,
               base_url: str | None = None, splitter: JapaneseSplitter | None = None,
               progress: Progress | None = None) -> BuildReport:
    """Build the site for ``store`` into ``out``; raises KbError (leaving ``out`` untouched) when it cannot, or when
    ``strict`` and a link is broken or a reference unresolved. With ``base_url`` (where the site will be served,
    e.g. ``https://example.org/rules/``) the sitemap, the Atom feed, ``<link rel="canonical">`` and the 404 page use
    absolute URLs; links between pages stay relative. ``progress``: told of each stage (gather, render: pages done,
    search, check; :data:`kb.model.Progress`)."""
    # the objects alive before the build (a whole ingest's, in `kb update`) are left out of garbage collection
    # meanwhile: scanning them again and again was a large part of a small rebuild
    gc.freeze()
    try:
        # the store must not change under the build, nor two builds (of any knowledge bases) write one folder at once
        with writer_lock(store.kb_dir), output_lock(out):
            editable = producers is None and tuple(PAGE_PRODUCERS) == EDITED_PRODUCERS  # an edit build knows those
            producers = producers if producers is not None else [*PAGE_PRODUCERS, english_redirect_group]
            return _build(store, Path(out).resolve(), strict, producers, templates, normalize_base_url(base_url), splitter,
                          progress or no_progress, editable)
    finally:
        gc.unfreeze()


def english_redirect_group(site: SiteData) -> Iterable[PageGroup]:
    """Producer: :func:`kb.site.redirects.english_redirect_pages` as one group, named by what it reads
    (:func:`kb.site.pages.redirect_inputs`)."""
    yield PageGroup("english redirect pages", redirect_inputs(site), partial(english_redirect_pages, site))


def _build(store: Store, out: Path, strict: bool, producers: list[Producer], templates: Path,
           base_url: str | None, splitter: JapaneseSplitter | None, progress: Progress, editable: bool) -> BuildReport:
    started = time.perf_counter()
    _check_out(out)
    recover(out)  # a build killed while applying its files is completed before anything is read
    inputs = inputs_fingerprint(store, templates, producers, base_url)
    stamp = load_record(out, STAMP)
    if stamp.get("inputs") == inputs and _site_whole(out):
        return _unchanged(out, stamp, strict, started)
    previous = load_manifest(out)
    try:
        return _build_from(store, out, strict, producers, templates, base_url, splitter, progress, editable, inputs,
                           stamp, previous, started)
    finally:
        if isinstance(stored := previous.get("files"), StoredFiles):
            stored.close()


def _build_from(store: Store, out: Path, strict: bool, producers: list[Producer], templates: Path,
                base_url: str | None, splitter: JapaneseSplitter | None, progress: Progress, editable: bool,
                inputs: str, stamp: dict[str, Any], previous: dict[str, Any], started: float) -> BuildReport:
    """The build after its records are read: an edit build when it can be, else a full one."""
    from kb.search.index import installed_identity

    renderer = Renderer.for_templates(templates)
    key = render_key(renderer.template_hash, base_url)
    base = edit_base(key, installed_identity())
    record = load_record(out, EDITS) if editable else {}  # the previous build's record of what edits change
    names = load_record(out, NAMES)
    if editable and previous and stamp:
        edited = _edit_build(store, out, previous, stamp, record, inputs, base, strict, templates, base_url, splitter,
                             renderer, key, progress, started, names)
        if isinstance(edited, BuildReport):
            return edited
        names = edited  # the name table an edit build found it could not be made with, made already
    old_files: Mapping[str, FileRecord] = previous.get("files", {})
    if isinstance(old_files, StoredFiles):
        old_files.read_whole()  # a full build asks for nearly every record
    progress("gather", 0, None)
    site = gather_site(store, splitter, names)
    site.base_url = base_url
    output = Output(out)
    report = BuildReport(out, unresolved=list(site.unresolved))
    files: dict[str, FileRecord] = {}
    try:
        pages = _Pages(key, renderer, base_url, old_files, output, files, report, progress)
        pages.produce(site, producers, previous.get("groups", {}), frozenset(previous.get("tables", ())))
        report.pages = len(pages.seen)
        progress("render", report.pages, report.pages)
        _put_static(templates, old_files, output, files)
        _put_sitemap(pages.sitemap, base_url, previous, old_files, output, files)
        progress("search", 0, None)
        search_state = _export_search(site, previous, out, output, files, report)
        _keep_foreign(output, previous, old_files, files, report)  # last: every file kb makes is known
        progress("check", 0, None)
        broken = check_links(files, old_files if previous else None, previous.get("broken"))
        report.broken = [f"{path}: {link} ({reason})" for path, link, reason in broken]
        if strict:
            _fail_on_problems(report)
        output.write(NAMES, marshal.dumps(names_record(site), 2))  # format 2: the bytes of the values only
        if editable:  # (a build of other producers leaves no record: the next is no edit build of its site)
            for rel, data, same in edits_files(site, base, store.versioned_digest(), inputs, record):
                if not (same and output.keep(rel)):
                    output.write(rel, data)
        keyed = _write_records(output, old_files, inputs, report, files, {
            "format": MANIFEST_FORMAT, "search": search_state,
            "broken": [[path, link] for path, link, _ in broken], "sitemap": sitemap_key(pages.sitemap, base_url),
            "groups": pages.groups, "tables": sorted(pages.tables)})
        deleted = removed_since(old_files, files)
        # pages alone are counted (not the static search's files, nor the analysis files under the records)
        changed = pages.changed + sum(1 for rel in deleted if not rel.startswith(NOT_PAGES))
        old_pages = sum(1 for rel in old_files if not rel.startswith(NOT_PAGES))
        output.commit(deleted, in_place=bool(old_files) and in_place_suits(changed, old_pages), keyed=keyed)
    except BaseException:
        output.abort()
        raise
    report.seconds = time.perf_counter() - started
    return report


def _write_records(output: Output, old_files: Mapping[str, FileRecord], inputs: str, report: BuildReport,
                   files: Mapping[str, FileRecord], manifest: dict[str, Any]) -> KeyedRecords:
    """Write the stamp (what a build with nothing to do reads) and ``manifest``; the changes of the file records
    (from ``old_files``, the previous build's, to ``files``), for the output to apply."""
    output.write(STAMP, marshal.dumps({
        "format": MANIFEST_FORMAT, "inputs": inputs, "pages": report.pages, "broken": report.broken,
        "unresolved": report.unresolved, "search_files": report.search_files}))
    output.write(MANIFEST, marshal.dumps(manifest))
    return KeyedRecords(FILE_RECORDS, str(MANIFEST_FORMAT), record_changes(old_files, files),
                        fresh=not isinstance(old_files, StoredFiles))


def _edit_build(store: Store, out: Path, previous: dict[str, Any], stamp: dict[str, Any], record: dict[str, Any],
                inputs: str, base: str, strict: bool, templates: Path, base_url: str | None,
                splitter: JapaneseSplitter | None, renderer: Renderer, key: str, progress: Progress, started: float,
                names: dict[str, Any]) -> BuildReport | dict[str, Any]:
    """An edit build (:mod:`kb.site.edits`): the edited articles' pages, their preview scripts and the static search
    made again, every other file kept as the previous build left it (``record``: the previous build's record of
    edits; ``names``: its names record); when the store's changes are not an edit (a full build follows), the names
    record for it (:func:`~kb.site.gather.gather_site`: ``names``, or the one made for this build when it got so
    far)."""
    edited = edited_keys(store, record, base, stamp.get("inputs"))  # the record of the build before, no other's
    if edited is None:
        return names
    progress("gather", 0, None)
    site = gather_edited(store, splitter, names, edited, pages_by_id(record))
    table = {**site.names_record, "readings": site.readings}
    shards = RecordShards(out)
    try:
        targets = cited_otherwise(site, record, edited, old_contributions(shards, edited))
        if targets is None:
            return table
        again = shown_again_in(site, targets)  # their pages show who cites them: made again, from complete entries
        cited = old_rule_citations(shards, [entry.url for entry in again.entries if entry.number])
        mentioned = old_entry_citations(shards, sorted({entry.url for entry in again.entries if not entry.number}
                                                       | {site.others[node_id].url for node_id in site.edited}))
    except MissingShard:  # the record is not whole: what the edit changed cannot be told
        return table
    link_edited(store, site, again.entries, cited, mentioned)
    cards = {**record["cards"], **card_facts(site, again.entries)}
    site.base_url = base_url
    old_files: StoredFiles = previous["files"]
    # each kept file's record the previous build's, read when asked for (the same object: check_links tells them
    # so); the static search's files and its analyses (kb.site.search_cache) those the export keeps or writes
    files = EditedFiles(old_files)
    report = BuildReport(out, pages=stamp["pages"], unresolved=list(stamp["unresolved"]), edit=True)
    output = Output(out, scan=False)  # the few files it touches looked at one by one
    try:
        pages = _Pages(key, renderer, base_url, old_files, output, files, report, progress)
        old_groups: dict[str, dict[str, Any]] = previous.get("groups", {})
        old_tables = frozenset(previous.get("tables", ()))
        for item in edited_pages(site, again, cards):
            if isinstance(item, PageGroup):
                pages.group(item, old_groups.get(item.name))
            else:
                pages.page(item, "an edited article", old_tables)
        made = set(pages.seen)
        groups = {name: {**group, "hash": ""} if not made.isdisjoint(group["paths"]) else group  # named again by
                  for name, group in old_groups.items()}  # the next full build: its other pages' inputs are not here
        groups.update(pages.groups)
        progress("render", report.pages, report.pages)
        _put_static(templates, old_files, output, files)
        progress("search", 0, None)
        search_state = _export_search(site, previous, out, output, files, report, edit=True)
        progress("check", 0, None)  # every file it did not write has the previous build's record
        broken = check_links(files, old_files, previous.get("broken"), output.paths_written)
        report.broken = [f"{path}: {link} ({reason})" for path, link, reason in broken]
        if strict:
            _fail_on_problems(report)
        for rel, data, same in edited_files(shards, record, site, cards, inputs):
            if not (same and output.keep(rel)):
                output.write(rel, data)
        if site.names_record["key"] != names.get("key"):  # the table made again (its record was another's): kept
            # for the next build, with every reading known (an edit changes no name)
            output.write(NAMES, marshal.dumps({**table, "readings": {**site.readings, **site.readings_asked}}, 2))
        keyed = _write_records(output, old_files, inputs, report, files, {
            **{k: v for k, v in previous.items() if k != "files"}, "search": search_state,
            "broken": [[path, link] for path, link, _ in broken], "groups": groups})
        output.commit(removed_since(old_files, files), in_place=True, keyed=keyed)
    except BaseException:
        output.abort()
        raise
    report.reused = report.pages - report.rendered
    report.seconds = time.perf_counter() - started
    return report


@dataclass
class _Pages:
    """The pages of one build, each kept (its hash unchanged and its file there) or rendered and written as the
    producers yield it — none is held after its turn, so the build's memory does not grow with the pages; the
    groups (``{hash, paths, sitemap}``), the sitemap's paths in order and the deferred parts' lookup tables (their
    digests, :class:`~kb.site.page.Deferred`)."""

    key: str  # :func:`render_key`
    renderer: Renderer
    base_url: str | None
    old_files: Mapping[str, FileRecord]
    output: Output
    files: MutableMapping[str, FileRecord]
    report: BuildReport
    progress: Progress
    seen: dict[str, str] = field(default_factory=dict)  # path → what made it
    sitemap: list[str] = field(default_factory=list)
    groups: dict[str, dict[str, Any]] = field(default_factory=dict)
    tables: set[str] = field(default_factory=set)
    changed: int = 0  # pages written that differ from the previous build's (or are new)

    def produce(self, site: SiteData, producers: list[Producer], old_groups: dict[str, dict[str, Any]],
                old_tables: frozenset[str]) -> None:
        """Run the producers: pages, and groups made only when their hash changed or their files are gone.
        ``old_tables``: the previous build's lookup tables (:meth:`page`)."""
        for producer in producers:
            for item in producer(site):
                if isinstance(item, PageGroup):
                    self.group(item, old_groups.get(item.name))
                else:
                    self.page(item, item.title, old_tables)
                    if item.in_sitemap:
                        self.sitemap.append(item.path)

    def group(self, item: PageGroup, old: dict[str, Any] | None) -> None:
        if item.name in self.groups:
            raise KbError(f"page group {item.name!r}: produced twice")
        digest = group_hash(self.key, item)
        maker = f"page group {item.name!r}"
        same = old if old and old["hash"] == digest else None
        kept = set(same["paths"]) if same is not None else set()
        if same is not None and all(rel in self.old_files and self.output.has(rel) for rel in kept):
            if not self.seen.keys().isdisjoint(kept):  # (a set's isdisjoint would walk all of seen)
                self._claim(next(rel for rel in same["paths"] if rel in self.seen), maker)  # raises
            keep = self.output.keep
            for rel in same["paths"]:
                keep(rel)
            self.seen.update(dict.fromkeys(same["paths"], maker))
            self.files.update({rel: self.old_files[rel] for rel in same["paths"]})
            self.report.reused += len(same["paths"])
            self.groups[item.name] = {"hash": digest, "paths": same["paths"], "sitemap": same["sitemap"]}
        else:
            paths, sitemap = [], []
            for page in item.make():
                self.page(page, maker, frozenset())  # its records may be older than the previous build's
                paths.append(page.path)
                if page.in_sitemap:
                    sitemap.append(page.path)
            self.groups[item.name] = {"hash": digest, "paths": paths, "sitemap": sitemap}
        self.sitemap += self.groups[item.name]["sitemap"]

    def page(self, page: Page, maker: str, old_tables: frozenset[str]) -> None:
        """Keep the page when its hash is unchanged, else render it (making its deferred part first). A deferred
        part of the previous build's source is hashed with its lookups' answers: when its lookup tables are among
        ``old_tables`` (the previous build's, which checked its record), the digest its record keeps; else its
        record's lookups asked again."""
        self._claim(page.path, maker)
        if len(self.seen) % 50 == 0:
            self.progress("render", len(self.seen), None)
        old = self.old_files.get(page.path)
        deferred, answers = page.deferred, None
        if deferred:
            self.tables.add(deferred.tables)
            if old and old.get("source") == deferred.source:
                answers = old.get("answers") if deferred.tables in old_tables else None
                if answers is None:  # what the making looked up last time, asked again
                    answers = answers_digest(deferred.lookup(marshal.loads(old["lookups"])))
        digest = page_hash(self.key, page, answers)
        if old and old["hash"] == digest and (deferred is None or answers is not None) and self.output.keep(page.path):
            self.files[page.path] = old
            self.report.reused += 1
            return
        lookups: list[Any] = []
        if deferred:
            part, lookups = deferred.make()
            answers = answers_digest(deferred.lookup(lookups))
            digest = page_hash(self.key, page, answers)  # of the page without the part
            page = replace(page, context={**page.context, **part})
        html = self.renderer.render(page, {"base_url": self.base_url})
        self.output.write(page.path, html)
        links, ids = page_links(html)
        self.files[page.path] = file_record(digest, resolve_links(page.path, links), ids,
                                            (deferred.source, lookups, answers) if deferred and answers is not None else None)
        self.report.rendered += 1
        self.report.rendered_pages.append(page.path)
        self.changed += not (old and old["hash"] == digest)

    def _claim(self, path: str, maker: str) -> None:
        if path in self.seen:
            raise KbError(f"{path}: produced twice ({self.seen[path]} and {maker})")
        self.seen[path] = maker


def _keep_foreign(output: Output, previous: dict[str, Any], old_files: Mapping[str, FileRecord],
                  files: dict[str, FileRecord], report: BuildReport) -> None:
    """Keep the files someone added to the site (``CNAME``, ``.htaccess``, a verification page: in ``out`` but made
    by no build of kb) unless a page now takes their place; they are not kb's, so they stay out of the manifest.
    Without the previous build's records nothing tells them apart: the site is made whole, and the notice says what
    goes."""
    foreign = sorted(rel for rel in output.existing if rel not in old_files and not rel.startswith(RECORDS))
    if not previous:
        if foreign:
            report.notices.append(f"{output.out}: no records of a previous build of this kb version; the site is "
                                  f"made again whole, without the {len(foreign)} file(s) kb does not make "
                                  f"(first: {foreign[0]})")
        return
    for rel in foreign:
        if rel not in files:
            output.keep(rel)


def _put_static(templates: Path, old_files: Mapping[str, FileRecord], output: Output,
                files: MutableMapping[str, FileRecord]) -> None:
    for path in sorted((templates / "static").rglob("*")):
        if path.is_file():
            _put(output, "static/" + path.relative_to(templates / "static").as_posix(), path.read_bytes(), old_files, files)


def _put_sitemap(paths: list[str], base_url: str | None, previous: dict[str, Any], old_files: Mapping[str, FileRecord],
                 output: Output, files: MutableMapping[str, FileRecord]) -> None:
    if previous.get("sitemap") == sitemap_key(paths, base_url) and "sitemap.xml" in old_files \
            and output.keep("sitemap.xml"):
        files["sitemap.xml"] = old_files["sitemap.xml"]  # the same pages listed: not written again
    else:
        _put(output, "sitemap.xml", sitemap_xml(paths, base_url), old_files, files)


def _put(output: Output, rel: str, data: str | bytes, old_files: Mapping[str, FileRecord],
         files: MutableMapping[str, FileRecord]) -> None:
    """A file that is not a page (static, sitemap): written when its content changed."""
    digest = hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()[:24]
    old = old_files.get(rel)
    if not (old and old["hash"] == digest and output.keep(rel)):
        output.write(rel, data)
    files[rel] = file_record(digest)


def normalize_base_url(base_url: str | None) -> str | None:
    """``base_url`` checked (http or https, a host, no query or fragment) and ending with ``/``; None stays None."""
    if not base_url:
        return None
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        raise KbError(f"--base-url {base_url}: not an http(s) URL of a folder (e.g. https://example.org/rules/)")
    return base_url if base_url.endswith("/") else base_url + "/"


def _site_whole(out: Path) -> bool:
    """Every file the previous build's records list is still there (a deleted file is rebuilt, not trusted); False
    without records."""
    stored = KeyedFile.open(out / FILE_RECORDS, str(MANIFEST_FORMAT))
    if stored is None:
        return False
    try:
        base = str(out)
        return all(os.path.isfile(f"{base}/{rel}") for rel in stored.keys())  # noqa: SIM118 (a KeyedFile)
    finally:
        stored.close()


def _unchanged(out: Path, stamp: dict, strict: bool, started: float) -> BuildReport:
    report = BuildReport(out, pages=stamp["pages"], reused=stamp["pages"], broken=list(stamp["broken"]),
                         unresolved=list(stamp["unresolved"]), search_files=stamp["search_files"])
    if strict:
        _fail_on_problems(report)
    report.seconds = time.perf_counter() - started
    return report


def _fail_on_problems(report: BuildReport) -> None:
    if report.broken or report.unresolved:
        problems = report.broken or report.unresolved
        raise KbError(f"{report.out}: build failed (--strict): {len(report.broken)} broken links, "
                      f"{len(report.unresolved)} unresolved references; first: {problems[0]}")


def _check_out(out: Path) -> None:
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / MANIFEST).parent.is_dir())):
        raise KbError(f"{out}: exists and is not a site built by kb; choose another --out or remove it")


class _StaleSite(Exception):
    """A file the previous manifest lists cannot be read: fall back to a full export."""


def _export_search(site: SiteData, previous: dict[str, Any], out: Path, output: Output,
                   files: MutableMapping[str, FileRecord], report: BuildReport, *, edit: bool = False) -> dict[str, Any]:
    """The static search exported into ``output`` and its files' records put in ``files``; its state. ``edit``: an
    edit build's, whose ``files`` hold the previous build's records (:class:`~kb.site.manifest.EditedFiles`): the
    files it does not write stay as those list them, unlooked at, and those it no longer has are removed."""
    from kb.site.search_cache import CACHE_DIR, AnalysisCache
    from kb.site.search_export import export_search

    old_files: Mapping[str, FileRecord] = previous.get("files", {})
    cache = AnalysisCache(out, output.write, lambda rel: rel in old_files and output.keep(rel))  # written as it goes

    def read_old(rel: str) -> str | None:
        if rel not in old_files:
            return None
        try:
            return (out / rel).read_text(encoding="utf-8")
        except OSError:
            raise _StaleSite(rel) from None

    try:
        written, state = export_search(site, previous.get("search", {}), read_old, cache, report.notices.append)
    except _StaleSite:
        written, state = export_search(site, {}, read_old, cache)
    report.search_files = len(state["files"])
    had = set(previous.get("search", {}).get("files", ())) if edit else set()
    # a full build's every file; an edit build's those it wrote and any new one it did not (missing: raises)
    listed = [*written, *(rel for rel in state["files"] if rel not in had and rel not in written)] if edit \
        else state["files"]
    for rel in listed:
        old = old_files.get(rel)
        if rel in written:
            digest = hashlib.sha256(written[rel].encode()).hexdigest()[:24]
            if not (old and old["hash"] == digest and output.keep(rel)):
                output.write(rel, written[rel])
                report.search_written += 1
        elif old and output.keep(rel):
            digest = old["hash"]
        else:
            raise KbError(f"{out / rel}: missing from the previous site; rebuild after deleting {out}")
        files[rel] = file_record(digest)
    if edit:  # the files it no longer has removed, the new analyses added
        assert isinstance(old_files, StoredFiles)  # (an edit build follows a build that left its records)
        for rel in [*had.difference(state["files"]), *(rel for rel in old_files.paths_under(CACHE_DIR)
                                                      if rel not in cache.files)]:
            del files[rel]
        files.update({rel: file_record(digest) for rel, digest in cache.files.items() if digest})
    else:
        files.update({rel: file_record(digest) if digest else old_files[rel] for rel, digest in cache.files.items()})
    return state
