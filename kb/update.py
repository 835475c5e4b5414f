"""``kb update``: fetch → ingest → diff → rebuild, all or nothing. Entry point: :func:`run_update`.

Stages (``on_stage(name)`` is called as each starts): ``fetch`` re-crawls each ``--site`` as it was last fetched
(conditional requests, via :func:`ingest.net.fetch.crawl`); ``ingest`` opens one write transaction on the database and
ingests in it, with the search index copied into ``<kb_dir>/.update-staging/`` (URL sources through
:func:`ingest.net.fetch.fetch_url`, cached pages through :func:`kb.pipeline.ingest_from_cache`, whose record of what it
ingested is staged too; the content-addressed diff cache and user dictionaries are shared); when no source's content
changed, nothing else happens. ``diff`` compares each new or changed version with the one before it; ``build``
renders the site from the uncommitted store (the builder swaps its own staging folder in only when complete);
``commit`` commits the transaction — other readers of the database see the old content until then, and the new
content whole after (SQLite's write-ahead log) — then swaps in the search index and the cache's ingest records.

A failure or kill before ``commit`` rolls the transaction back and leaves the previous store, index and site untouched
(the next run clears the stale staging folder). Killed after the site swap but before the database commit, the site is
newer than the store; the next ``kb update`` re-ingests the same bytes, finds them new to the store, and completes. It
holds the kb folder's writer lock (:mod:`kb.store.lock`) from start to end, so an ingest, fetch, build or index run
meanwhile waits briefly, then fails with "another kb is writing …" instead of being overwritten by the commit.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kb.errors import KbError
from kb.search.index import INDEX_DIR
from kb.splitter import JapaneseSplitter
from kb.store import DB_NAME, Store, default_kb_dir
from kb.store.lock import writer_lock
from kb.versions.catalog import list_versions, previous_version
from kb.versions.diff import CACHE_DIR as DIFF_CACHE
from kb.versions.diff import VersionDiff, diff_summary

if TYPE_CHECKING:
    from ingest.net.fetch import CrawlReport, Politeness
    from kb.model import Document
    from kb.site import BuildReport

STAGES = ("fetch", "ingest", "diff", "build", "commit")
STAGING = ".update-staging"
CACHE_RECORDS = ("ingested.json",)  # per-site files ingest_from_cache rewrites


@dataclass
class UpdateResult:
    changed: bool = False
    stored: int = 0  # sources whose content was new or changed
    crawls: list[CrawlReport] = field(default_factory=list)  # one per site
    warnings: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # files of a folder no source kind recognises, with the reason
    diffs: list[VersionDiff] = field(default_factory=list)
    build: BuildReport | None = None  # when a site was rebuilt


def run_update(kb_dir: str | os.PathLike | None, *, sources: Iterable[str] = (), sites: Iterable[str] = (),
               out: str | os.PathLike | None = None, strict: bool = False, delay: float | None = None,
               contact: str | None = None, base_url: str | None = None,
               on_stage: Callable[[str], None] | None = None, force: bool = False) -> UpdateResult:
    """Bring the knowledge base (and the site in ``out``, when given) up to date; see the module doc. A rules text
    that is incomplete or far smaller than the newest version it would replace fails the update unless ``force``
    (:mod:`kb.versions.guard`)."""
    folder = default_kb_dir(kb_dir)
    folder.mkdir(parents=True, exist_ok=True)
    stage = on_stage or (lambda name: None)
    result = UpdateResult()
    sources, sites = list(sources), list(sites)
    network = bool(sites) or any("://" in source for source in sources)
    politeness = _politeness(delay, contact) if network else None  # the fetcher (httpx) is loaded only to fetch
    splitter = JapaneseSplitter()  # the update's one: its ingest, index and build split Japanese with it
    with writer_lock(folder), _site_lock(out):
        staging = folder / STAGING
        shutil.rmtree(staging, ignore_errors=True)  # left by an update that was killed
        _heal_index(folder, splitter)
        stage("fetch")
        for site in sites:
            result.crawls.append(_recrawl(folder, site, politeness))
        stage("ingest")
        try:
            staged = _stage(folder, staging, sites)
            try:
                with staged.transaction():  # committed at the end of the block, or never
                    touched = _ingest(staged, staging, sources, sites, folder, politeness, strict, force, result,
                                      splitter)
                    result.changed = result.stored > 0
                    if not result.changed:
                        return result
                    stage("diff")
                    result.diffs = _diffs(folder, staged, touched)
                    if out is not None:
                        stage("build")
                        from kb.site.builder import build_site

                        result.build = build_site(staged, out, strict=strict, base_url=base_url, splitter=splitter)
                    stage("commit")
            finally:
                staged.close()
            _commit(folder, staging, sites)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return result


def _site_lock(out: str | os.PathLike | None) -> AbstractContextManager[None]:
    """The output folder's lock (:func:`kb.site.output.output_lock`) when there is a site to build, from before
    staging to after the commit."""
    if out is None:
        return nullcontext()
    from kb.site.output import output_lock

    return output_lock(out)


def _heal_index(folder: Path, splitter: JapaneseSplitter) -> None:
    """The live index brought in line with the live store when it lags (an update killed after its commit and
    before its index swap, or between moving the old index aside and the new one in; an index deleted): first, so
    that "already up to date" is true of the index too (:func:`kb.search.index.heal_index`)."""
    if (folder / DB_NAME).is_file():
        from kb.search.index import heal_index

        with Store(folder / DB_NAME) as live:
            heal_index(live, splitter)


def _politeness(delay: float | None, contact: str | None) -> Politeness:
    from ingest.net.fetch import Politeness

    base = Politeness()
    return Politeness(delay=base.delay if delay is None else delay, contact=contact)


def _recrawl(folder: Path, site: str, politeness: Politeness | None) -> CrawlReport:
    from ingest.net.cache import SiteCache
    from ingest.net.fetch import Politeness, crawl

    state = SiteCache(folder, site).load_state()
    if state is None:
        raise KbError(f"{site}: never fetched into {folder}; run 'kb fetch {site} …' once, then 'kb update --site {site}'")
    spec = state.spec
    report = crawl(site, list(spec["seeds"]), kb_dir=folder, base_url=spec["base"], depth=spec.get("depth"),
                   politeness=politeness or Politeness())
    if report.failed:
        url, reason = next(iter(report.failed.items()))
        raise KbError(f"{url}: fetch failed ({reason}); {len(report.failed)} URL(s) failed, nothing was updated")
    return report


def _stage(folder: Path, staging: Path, sites: list[str]) -> Store:
    """The live database, its search index copied into the staging folder (hard links: Whoosh never rewrites a file,
    it writes new ones) with the sites' ingest records; the content-addressed caches (version diffs, user
    dictionaries) are shared, not copied."""
    from kb.search.userdict import FOLDER as USER_DICTIONARIES

    staging.mkdir(parents=True)
    if (folder / INDEX_DIR).is_dir():
        shutil.copytree(folder / INDEX_DIR, staging / INDEX_DIR, copy_function=_link_or_copy)
    for shared in (DIFF_CACHE, USER_DICTIONARIES):  # written atomically, named by their content
        (folder / shared).mkdir(exist_ok=True)
        (staging / shared).symlink_to((folder / shared).resolve(), target_is_directory=True)
    for site in sites:
        real, mirror = _site_folder(folder, site), _site_folder(staging, site)
        mirror.mkdir(parents=True)
        (mirror / "pages").symlink_to((real / "pages").resolve(), target_is_directory=True)
        for name in CACHE_RECORDS + ("state.json",):
            if (real / name).exists():
                shutil.copy2(real / name, mirror / name)
    return Store(folder / DB_NAME, kb_dir=staging)


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def _site_folder(folder: Path, site: str) -> Path:
    from ingest.net.cache import CACHE_DIR

    return folder / CACHE_DIR / site


def _ingest(staged: Store, staging: Path, sources: list[str], sites: list[str], folder: Path,
            politeness: Politeness | None, strict: bool, force: bool, result: UpdateResult,
            splitter: JapaneseSplitter) -> set[tuple[str, str]]:
    """Ingest the sources and the sites' cached pages into ``staged``; the (version, lang) of the documents stored."""
    from ingest.kinds import parse_source, unrecognised
    from kb.pipeline import IngestReport, gather_named, ingest_documents, ingest_from_cache, read_source

    reports = []
    if sources:
        def parsed() -> Iterator[Document]:  # each source parsed as the ingest stores the one before (kb ingest's way)
            for source, in_folder in gather_named(sources):
                if "://" in source:
                    from ingest.net.fetch import fetch_url

                    data = fetch_url(source, kb_dir=folder, politeness=politeness)
                else:
                    data = read_source(source)
                if in_folder and (reason := unrecognised(source, data)):
                    result.skipped.append(f"{source}: {reason}")  # as kb ingest does: a stray file is no source
                    continue
                yield parse_source(source, data)

        reports.append(ingest_documents(staged, parsed(), IngestReport(), strict=strict, force=force,
                                        splitter=splitter))
    for site in sites:
        reports.append(ingest_from_cache(staged, site, kb_dir=staging, strict=strict, force=force, splitter=splitter))
    touched: set[tuple[str, str]] = set()
    for report in reports:
        if report.failed:
            raise KbError(f"{report.failed[0]} ({len(report.failed)} source(s) failed; nothing was updated)")
        result.stored += report.stored
        touched |= report.changed
        result.warnings += [str(w) for w in report.warnings] + [str(d) for d in report.links.diagnostics]
    return touched


def _diffs(folder: Path, staged: Store, touched: set[tuple[str, str]]) -> list[VersionDiff]:
    """Each new or re-ingested version against the version before it: the summaries (changed nodes and counts) the
    site build reads next from the diff cache."""
    out = []
    for info in list_versions(staged):
        if (info.version, info.lang) in touched:
            before = previous_version(staged, info)
            if before is not None:
                out.append(diff_summary(staged, before, info))
    return out


def _commit(folder: Path, staging: Path, sites: list[str]) -> None:
    """After the database's commit: swap in the staged search index and the cache's ingest records."""
    if (staging / INDEX_DIR).is_dir():
        old = folder / f".{INDEX_DIR}.old"
        shutil.rmtree(old, ignore_errors=True)
        if (folder / INDEX_DIR).exists():
            os.replace(folder / INDEX_DIR, old)
        os.replace(staging / INDEX_DIR, folder / INDEX_DIR)
        shutil.rmtree(old, ignore_errors=True)
    for site in sites:
        for name in CACHE_RECORDS:
            staged_record = _site_folder(staging, site) / name
            if staged_record.exists():
                os.replace(staged_record, _site_folder(folder, site) / name)
