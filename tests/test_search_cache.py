"""The static search's analysis cache out of the manifest (issue 24, :mod:`kb.site.search_cache`): one file per
document text under ``.kb-build/search/``, written with the build. A build killed while writing them or before its
commit, then the next build, gives a full build's site; a site whose manifest holds the analyses (an older kb), or
whose cache files are gone or damaged, builds — each time equal to a full build of the same store."""

from __future__ import annotations

import marshal
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from search_files import BUILD_RECORDS, kept, same_built_file

from kb.pipeline import ingest_sources
from kb.site import build_site
from kb.site import search_export as search_export_module
from kb.site.manifest import FILE_RECORDS, MANIFEST_FORMAT
from kb.site.search_cache import CACHE_DIR, AnalysisCache
from kb.store import Store
from kb.store.keyed import KeyedFile, apply_changes

REPO = Path(__file__).resolve().parent.parent
JA_CR = REPO / "data" / "JPN_CR_20231117_0.txt"
OLD = "プレイヤーはその呪文の総コストを決定する。"
NEW = "プレイヤーはその呪文の総コストを決定する。竜巻ミョルニル。"
MANIFEST = Path(".kb-build") / "manifest.marshal"


def records(site: Path) -> dict:
    return marshal.loads((site / MANIFEST).read_bytes())


def cache_files(site: Path) -> set[str]:
    return {p.name for p in (site / CACHE_DIR).iterdir()}


def assert_same_as_full(site: Path, full: Path) -> None:
    """Every file of the full build is in ``site`` as it is there (the vocabulary may only have grown, the ``p/``,
    ``g/``, ``q/`` shards compared with the delta merged in, the manifest aside: :func:`same_built_file`); the cache
    files are the same set but for the base analyses the delta keeps (:func:`search_files.kept`); outside
    ``search/`` (where an incremental build keeps emptied shards and its delta) ``site`` has no file more."""
    def listed(root: Path) -> set[Path]:
        return {p.relative_to(root) for p in root.rglob("*") if p.is_file()}

    extra = {Path(f) for f in kept(site)}
    mine, theirs = listed(site), listed(full)
    for rel in theirs:
        if rel.name not in BUILD_RECORDS:
            assert rel in mine and same_built_file(full / rel, site / rel, rel), rel
    assert {r for r in mine if r.parts[0] != "search"} - extra == {r for r in theirs if r.parts[0] != "search"}
    assert cache_files(site) - {p.name for p in extra} == cache_files(full) and extra <= mine


@pytest.fixture
def store_and_cr(tmp_path):
    cr = tmp_path / "JPN_CR_20231117_0.txt"
    text = JA_CR.read_text(encoding="utf-8-sig")
    assert OLD in text
    cr.write_text(text, encoding="utf-8")
    with Store.open(tmp_path / "kb") as store:
        assert not ingest_sources(store, [str(cr)], index=False).failed
        yield store, cr, text


def edit(store: Store, cr: Path, text: str) -> None:
    cr.write_text(text.replace(OLD, NEW), encoding="utf-8")
    assert not ingest_sources(store, [str(cr)], index=False).failed


def test_the_manifest_holds_no_analysis_and_each_text_has_its_file(store_and_cr, tmp_path):
    store, _, _ = store_and_cr
    site = tmp_path / "site"
    build_site(store, site)
    state = records(site)["search"]
    assert "cache" not in state
    assert cache_files(site) == {f"{k}.marshal" for k in state["keys"].values()}
    cache = AnalysisCache(site, lambda rel, data: None, lambda rel: False)
    k = next(iter(state["keys"].values()))
    assert set(marshal.loads(cache.read(k))) == {"t", "b", "g", "v", "q", "f"}  # an analysis, as analyse makes it


def test_a_missing_cache_file_of_an_unchanged_text_is_made_again(store_and_cr, tmp_path, monkeypatch):
    """Deleted by hand: the next build (another rule changed) analyses that text again for its file, and the site
    equals a full build."""
    store, cr, text = store_and_cr
    site = tmp_path / "site"
    build_site(store, site)
    keys = records(site)["search"]["keys"]
    gone = sorted(set(keys.values()))[0]
    (site / CACHE_DIR / f"{gone}.marshal").unlink()
    edit(store, cr, text)
    analysed: list[str] = []
    real = search_export_module.analyse
    monkeypatch.setattr(search_export_module, "analyse",
                        lambda splitter, doc: analysed.append(doc.url) or real(splitter, doc))
    report = build_site(store, site)
    assert not report.notices and 2 <= len(analysed) <= 3  # the changed rule's document and the one whose file went
    monkeypatch.undo()
    build_site(store, tmp_path / "full")
    assert_same_as_full(site, tmp_path / "full")


def test_a_damaged_cache_file_of_a_changed_document_means_a_full_export(store_and_cr, tmp_path):
    """The previous analysis of the changed rule is damaged: its old postings cannot be taken out, so every document
    is exported again, with a notice naming the file."""
    store, cr, text = store_and_cr
    site = tmp_path / "site"
    build_site(store, site)
    state = records(site)["search"]
    url = next(u for u in state["ids"] if u.endswith("#601.2f"))
    damaged = site / CACHE_DIR / f"{state['keys'][2 * state['ids'][url]]}.marshal"
    data = bytearray(damaged.read_bytes())
    data[-1] ^= 0xFF
    damaged.write_bytes(bytes(data))
    edit(store, cr, text)
    report = build_site(store, site)
    [notice] = report.notices
    assert notice.startswith("static search: exporting every document again (") and damaged.name in notice
    build_site(store, tmp_path / "full")
    assert_same_as_full(site, tmp_path / "full")


def test_a_site_with_its_analyses_in_the_manifest_builds_with_a_notice(store_and_cr, tmp_path):
    """A site an older kb built (the analyses in the manifest's search state, no cache files): the next build exports
    every document again, says so, and gives a full build's site."""
    store, cr, text = store_and_cr
    site = tmp_path / "site"
    build_site(store, site)
    manifest = records(site)
    cache = AnalysisCache(site, lambda rel, data: None, lambda rel: False)
    manifest["search"]["cache"] = {k: cache.read(k) for k in manifest["search"]["keys"].values()}
    stored = KeyedFile.open(site / FILE_RECORDS, str(MANIFEST_FORMAT))
    apply_changes(site / FILE_RECORDS, str(MANIFEST_FORMAT), dict.fromkeys(stored.keys(CACHE_DIR)))
    stored.close()
    for path in (site / CACHE_DIR).iterdir():
        path.unlink()
    (site / MANIFEST).write_bytes(marshal.dumps(manifest))
    (site / ".kb-build" / "stamp.marshal").unlink()
    edit(store, cr, text)
    report = build_site(store, site)
    assert report.notices == ["static search: exporting every document again (its analyses are in the manifest of an "
                              "older kb's build)"]
    build_site(store, tmp_path / "full")
    assert_same_as_full(site, tmp_path / "full")
    assert "cache" not in records(site)["search"]


KILLED_BUILD = """
import os, signal, sys
from kb.site import output, search_cache
from kb.site.builder import build_site
from kb.store import Store

kb_dir, site, where = sys.argv[1:]
if where == "cache":  # killed after it wrote some analysis files (a changed rule's and others)
    real_put, puts = search_cache.AnalysisCache.put, []
    def put(self, key, analysis):
        real_put(self, key, analysis)
        puts.append(key)
        if len(puts) == 3:
            os.kill(os.getpid(), signal.SIGKILL)
    search_cache.AnalysisCache.put = put
elif where == "records":  # killed while applying its journal: the files in place, the file records not yet
    output.apply_changes = lambda *args, **kwargs: os.kill(os.getpid(), signal.SIGKILL)
else:  # killed with everything written, before the commit
    output.Output.commit = lambda self, *args, **kwargs: os.kill(os.getpid(), signal.SIGKILL)
with Store.open(kb_dir) as store:
    build_site(store, site)
"""


@pytest.mark.slow
@pytest.mark.parametrize("where", ["cache", "commit"])
def test_a_build_killed_then_the_next_build_gives_the_full_build(store_and_cr, tmp_path, where):
    """A real process killed (SIGKILL) after writing some cache files, or before its commit: the site is left as
    the previous build made it, and the next build equals a full build of the changed store."""
    store, cr, text = store_and_cr
    site = tmp_path / "site"
    build_site(store, site)
    before = {p.relative_to(site): p.read_bytes() for p in site.rglob("*") if p.is_file()}
    # changed cache files: a new rule text (601.2f), and every text when the first build's files are gone
    for path in sorted((site / CACHE_DIR).iterdir())[:5]:
        path.unlink()
        del before[path.relative_to(site)]
    edit(store, cr, text)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, "-c", KILLED_BUILD, str(tmp_path / "kb"), str(site), where], env=env,
                         capture_output=True, timeout=300)
    assert run.returncode == -signal.SIGKILL, run.stderr.decode()
    assert {p.relative_to(site): p.read_bytes() for p in site.rglob("*") if p.is_file()} == before
    assert [p.name for p in tmp_path.glob(".site.staging-*")]  # the killed build's staging folder, left behind
    with Store.open(tmp_path / "kb") as again:
        build_site(again, site)
        build_site(again, tmp_path / "full")
    assert not list(tmp_path.glob(".site.staging-*"))
    assert_same_as_full(site, tmp_path / "full")


@pytest.mark.slow
def test_a_build_killed_while_applying_its_file_records_is_completed_by_the_next(store_and_cr, tmp_path):
    """A real process killed (SIGKILL) after its journal put the new files in place, before the file records' changes
    were applied: the next build applies the journal again (the records too) and finds nothing left to do."""
    from kb.site.output import JOURNAL

    store, cr, text = store_and_cr
    site = tmp_path / "site"
    build_site(store, site)
    edit(store, cr, text)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, "-c", KILLED_BUILD, str(tmp_path / "kb"), str(site), "records"], env=env,
                         capture_output=True, timeout=300)
    assert run.returncode == -signal.SIGKILL, run.stderr.decode()
    [staging] = tmp_path.glob(".site.staging-*")
    assert (staging / JOURNAL).is_file()  # decided: in place, and left to complete
    with Store.open(tmp_path / "kb") as again:
        assert build_site(again, site).rendered == 0  # completed first: the records are the killed build's
        build_site(again, tmp_path / "full")
    assert not list(tmp_path.glob(".site.staging-*"))
    assert_same_as_full(site, tmp_path / "full")
