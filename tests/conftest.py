"""Shared fixtures. ``browser``: Debian's Chromium driven by Playwright (``$KB_CHROMIUM`` to point elsewhere;
missing: skip, or fail under CI=true). The real English CR corpus is read from $KB_CORPUS_DIR or ../shared/corpus/en-cr beside the
checkout; never copied into the repo. Missing corpus: skip with a reason, or fail under CI=true."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "data"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
ARTIFACTS = REPO / "test-artifacts"  # screenshots the browser tests take
CHROMIUM = os.environ.get("KB_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
CORPUS_FILES = ("MagicCompRules-2023-11-17.txt", "MagicCompRules-2025-11-14.txt", "MagicCompRules-2026-01-16.txt")


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


@pytest.fixture(scope="session")
def bilingual_kb(corpus_dir, tmp_path_factory) -> Path:
    """data/ (the 2023-11-17 Japanese excerpt), the MTG Wiki page 接死/Deathtouch and the three English CRs."""
    from kb.pipeline import ingest_sources
    from kb.store import Store

    kb_dir = tmp_path_factory.mktemp("bilingual") / "kb"
    with Store.open(kb_dir) as store:
        ingest_sources(store, [str(DATA), str(FIXTURES / "mtgwiki" / "deathtouch.html"),
                               *(str(corpus_dir / name) for name in CORPUS_FILES)])
    return kb_dir


@pytest.fixture(scope="session")
def bilingual_site(bilingual_kb) -> Path:
    from kb.site import build_site
    from kb.store import Store

    out = bilingual_kb.parent / "site"
    with Store.open(bilingual_kb) as store:
        report = build_site(store, out)
    assert report.broken == []
    return out


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).is_file() and not shutil.which("chromium"):
        if os.environ.get("CI") == "true":
            pytest.fail(f"Chromium not found at {CHROMIUM}")
        pytest.skip(f"Chromium not found at {CHROMIUM} (set KB_CHROMIUM)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()
