"""Shared fixtures. ``browser``: Debian's Chromium driven by Playwright (``$KB_CHROMIUM`` to point elsewhere;
missing: skip, or fail under CI=true). The real English CR corpus is read from $KB_CORPUS_DIR or ../shared/corpus/en-cr beside the
checkout; never copied into the repo. Missing corpus: skip with a reason, or fail under CI=true."""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

import pytest
from hypothesis import settings

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "data"
FIXTURES = Path(__file__).resolve().parent / "fixtures"

# A shell runs a background job (``.ci/run &``) with SIGINT ignored, and every process it starts inherits that: the kb
# processes some tests stop with SIGINT (Ctrl-C) would never see it. A handler of the tests' own becomes the default
# again in each process they start.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
# … and a process a test stops with SIGINT makes Ctrl-C what it is in a terminal itself, first: once in CI a test
# process started kb with SIGINT ignored or blocked all the same (kb never saw it: no output, no exit in 60 s). The
# first lines of a ``python -c`` script.
CTRL_C_AS_IN_A_TERMINAL = """import signal
signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])
signal.signal(signal.SIGINT, signal.default_int_handler)
"""
KB_MAIN = CTRL_C_AS_IN_A_TERMINAL + "from kb.cli import main\nmain()\n"  # ``python -m kb.cli``, stopped by SIGINT
# Hypothesis' deadline (200 ms an example) fails tests by the machine's load, not by their code: on 2 cores shared by
# several runs, one example of test_site_paths took 271 ms once and 0.03 ms when replayed. The examples' count stays.
settings.register_profile("kb", deadline=None)
settings.load_profile("kb")
ARTIFACTS = REPO / "test-artifacts"  # screenshots the browser tests take
CHROMIUM = os.environ.get("KB_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
CORPUS_FILES = ("MagicCompRules-2023-11-17.txt", "MagicCompRules-2025-11-14.txt", "MagicCompRules-2026-01-16.txt")


def pytest_xdist_auto_num_workers(config):
    """``-n auto`` (pyproject's addopts): a worker per core and one more: the tests spend part of their time waiting
    for the kb processes, servers and Chromium they start (on 2 cores: 3 workers 137 s, 2 workers 143–153 s)."""
    return (os.cpu_count() or 1) + 1


# fixtures that make a test slow or a browser test wherever it uses them (directly or through another fixture): the
# real English CRs (a whole rules text to parse, link and render: seconds per test), and Chromium
SLOW_FIXTURES = frozenset({"corpus_dir"})


def pytest_collection_modifyitems(items):
    """Every test using the ``browser`` fixture is marked ``browser``, every test using a fixture of
    :data:`SLOW_FIXTURES` ``slow`` (the others are marked ``slow`` where they are defined, by measurement:
    ``--durations``); so ``-m "not slow and not browser"`` is the quick suite. Then tests marked ``run_first`` first
    (a stable sort: otherwise in the usual order), so that a minute-long test does not start last and leave the other
    pytest-xdist workers idle at the end."""
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        if "browser" in used:
            item.add_marker(pytest.mark.browser)
        if used & SLOW_FIXTURES:
            item.add_marker(pytest.mark.slow)
    items.sort(key=lambda item: item.get_closest_marker("run_first") is None)


def _corpus_dir() -> Path:
    if os.environ.get("KB_CORPUS_DIR"):
        return Path(os.environ["KB_CORPUS_DIR"])
    return REPO.parent / "shared" / "corpus" / "en-cr"


def shared_tmp(tmp_path_factory) -> Path:
    """A folder of this test run shared by its pytest-xdist workers (the run's own temporary folder without xdist)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session", autouse=True)
def shared_user_dictionaries(tmp_path_factory):
    """Each knowledge base still gets its Sudachi user dictionary in its own folder, but one compiled dictionary per
    word list per run, copied from ``$KB_USERDICT_CACHE`` (see kb.search.userdict), instead of ~100 compilations
    of 3 s each of the sample's glossary. Set in the environment, so the ``kb`` processes tests start share it too."""
    from kb.search.userdict import SHARED_ENV

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(SHARED_ENV, str(shared_tmp(tmp_path_factory) / "userdict-cache"))
        yield


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """Folder holding the three real English CR files."""
    path = _corpus_dir()
    missing = [f for f in CORPUS_FILES if not (path / f).is_file()]
    if missing:
        message = f"English CR corpus missing in {path}: {', '.join(missing)} (set KB_CORPUS_DIR)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return path


def built_once(tmp_path_factory, name: str, build) -> Path:
    """``build(folder)`` run once per test run however many pytest-xdist workers ask (the others wait for it, then
    use its result): only for what the tests that use it read and never write."""
    from filelock import FileLock

    folder = shared_tmp(tmp_path_factory) / name
    with FileLock(f"{folder}.lock"):
        if not (folder / ".built").is_file():
            shutil.rmtree(folder, ignore_errors=True)  # a build that failed halfway
            folder.mkdir()
            build(folder)
            (folder / ".built").touch()
    return folder


@pytest.fixture(scope="session")
def data_built(tmp_path_factory) -> Path:
    """data/ ingested with its search index into ``kb/`` and built into ``site/`` (once per run; nothing writes it
    afterwards: ``data_kb`` and ``data_site``)."""
    from kb.pipeline import ingest_sources
    from kb.site import build_site
    from kb.store import Store

    def make(folder: Path) -> None:
        with Store.open(folder / "kb") as store:
            report = ingest_sources(store, [str(DATA)])
            assert not report.failed and report.index.added == report.index.total > 0
            assert build_site(store, folder / "site").broken == []

    return built_once(tmp_path_factory, "data", make)


@pytest.fixture(scope="session")
def data_kb(data_built) -> Path:
    """The knowledge base of ``data_built``: only to copy (:func:`copy_kb`), since even a search writes into a kb
    folder (its search cache)."""
    return data_built / "kb"


@pytest.fixture(scope="session")
def data_site(data_built) -> Path:
    """The site of ``data_built``, read-only (copy it with ``shutil.copytree`` to change it)."""
    return data_built / "site"


def copy_kb(kb_dir: Path, to: Path) -> Path:
    """A kb folder of one's own: a copy of ``kb_dir`` without its search cache (what a reader of the original wrote)."""
    from kb.search.coldcache import CACHE_DIR

    return Path(shutil.copytree(kb_dir, to, ignore=shutil.ignore_patterns(CACHE_DIR)))


@pytest.fixture(scope="session")
def bilingual_kb(corpus_dir, tmp_path_factory) -> Path:
    """data/ (the 2023-11-17 Japanese excerpt), the MTG Wiki page 接死/Deathtouch and the three English CRs
    (built once per run, read-only: the tests open it with ``create=False``, search and export it)."""
    from kb.pipeline import ingest_sources
    from kb.store import Store

    def ingest(folder: Path) -> None:
        with Store.open(folder / "kb") as store:
            ingest_sources(store, [str(DATA), str(FIXTURES / "mtgwiki" / "deathtouch.html"),
                                   *(str(corpus_dir / name) for name in CORPUS_FILES)])

    return built_once(tmp_path_factory, "bilingual-kb", ingest) / "kb"


@pytest.fixture(scope="session")
def bilingual_site(bilingual_kb, tmp_path_factory) -> Path:
    """The site built from ``bilingual_kb`` (once per run, read-only)."""
    from kb.site import build_site
    from kb.store import Store

    def build(folder: Path) -> None:
        with Store.open(bilingual_kb, create=False) as store:
            report = build_site(store, folder / "site")
        assert report.broken == []

    return built_once(tmp_path_factory, "bilingual-site", build) / "site"


@pytest.fixture(scope="session")
def browser():
    """One headless Chromium per test process (each pytest-xdist worker), shared by every browser test: each opens
    its own pages (a new browser context each), which it closes."""
    if not Path(CHROMIUM).is_file() and not shutil.which("chromium"):
        if os.environ.get("CI") == "true":
            pytest.fail(f"Chromium not found at {CHROMIUM}")
        pytest.skip(f"Chromium not found at {CHROMIUM} (set KB_CHROMIUM)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()
