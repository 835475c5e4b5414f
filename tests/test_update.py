"""``kb update``: fetch (conditional requests against a real local HTTP server) → ingest → diff → rebuild, doing
nothing when nothing changed, and leaving the previous store and site whole when a stage fails or the process is
killed midway (a real subprocess, killed with SIGKILL)."""

from __future__ import annotations

import fcntl
import hashlib
import os
import sqlite3
import subprocess
import sys
import textwrap

import pytest
from click.testing import CliRunner
from conftest import DATA, REPO

from ingest.net.fetch import Politeness, crawl
from kb.cli import main
from kb.errors import KbError
from kb.pipeline import ingest_sources
from kb.site.builder import build_site
from kb.store import DB_NAME, Store
from kb.store.lock import LOCK_NAME
from kb.update import STAGING, run_update
from kb.versions.catalog import list_versions

JA = DATA / "JPN_CR_20231117_0.txt"
EDITED_RULE = ("通常、そのマナ・コストだけである。", "通常、そのマナ・コストのみである。")


def later_version_bytes() -> bytes:
    text = JA.read_text(encoding="utf-8-sig")
    assert EDITED_RULE[0] in text
    text = text.replace("和訳 20231117.0 版", "和訳 20240301.0 版").replace("2023-11-17", "2024-03-01")
    text = text.replace("2023-11-18", "2024-03-01")  # the translator line
    return text.replace(*EDITED_RULE).encode("utf-8")


def tree_digest(folder) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def db_digest(kb_dir) -> str:
    return hashlib.sha256((kb_dir / DB_NAME).read_bytes()).hexdigest()


@pytest.fixture()
def deployed(tmp_path):
    """A knowledge base holding the bundled Japanese sample and the site built from it; a later version on disk."""
    kb_dir, site = tmp_path / "kb", tmp_path / "site"
    with Store.open(kb_dir) as store:
        assert not ingest_sources(store, [str(JA)]).failed
        build_site(store, site)
    later = tmp_path / "JPN_CR_20240301.txt"
    later.write_bytes(later_version_bytes())
    return kb_dir, site, later


def versions_in(kb_dir) -> list[str]:
    with Store.open(kb_dir, create=False) as store:
        return [v.version for v in list_versions(store)]


def test_nothing_changed_touches_nothing(deployed):
    kb_dir, site, _ = deployed
    before_db, before_site = db_digest(kb_dir), tree_digest(site)
    stages = []
    result = run_update(kb_dir, sources=[str(JA)], out=site, on_stage=stages.append)
    assert not result.changed and result.diffs == [] and result.build is None
    assert stages == ["fetch", "ingest"]
    assert db_digest(kb_dir) == before_db and tree_digest(site) == before_site
    assert not (kb_dir / STAGING).exists()
    out = CliRunner().invoke(main, ["--kb-dir", str(kb_dir), "update", str(JA), "--out", str(site)])
    assert out.exit_code == 0 and "nothing changed" in out.output


def test_new_version_is_ingested_compared_and_published(deployed):
    kb_dir, site, later = deployed
    result = run_update(kb_dir, sources=[str(later)], out=site)
    assert result.changed and result.stored == 1
    [diff] = result.diffs
    assert (diff.old.version, diff.new.version) == ("20231117.0", "20240301.0")
    assert [c.old_id for c in diff.changes if c.status != "unchanged"] == ["cr:601.2f"]
    assert versions_in(kb_dir) == ["20240301.0", "20231117.0"]
    assert "20240301.0" in (site / "index.html").read_text(encoding="utf-8")
    page = (site / "changes" / "ja-20231117.0-20240301.0.html").read_text(encoding="utf-8")
    assert "<del>だけ</del><ins>のみ</ins>" in page
    feed = (site / "changes" / "feed.xml").read_text(encoding="utf-8")
    assert "ja-20231117.0-20240301.0.html" in feed and "<updated>2024-03-01T00:00:00+00:00</updated>" in feed
    assert "改訂履歴" in (site / "cr" / "601.2f.html").read_text(encoding="utf-8")
    assert not (kb_dir / STAGING).exists()
    with sqlite3.connect(kb_dir / DB_NAME) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    again = CliRunner().invoke(main, ["--kb-dir", str(kb_dir), "update", str(later), "--out", str(site)])
    assert again.exit_code == 0 and "nothing changed" in again.output


def test_a_failing_source_leaves_store_and_site_as_they_were(deployed, tmp_path):
    kb_dir, site, later = deployed
    broken = tmp_path / "broken.txt"
    broken.write_text("これは総合ルールではない。\n", encoding="utf-8")
    before_db, before_site = db_digest(kb_dir), tree_digest(site)
    with pytest.raises(KbError, match="broken.txt"):
        run_update(kb_dir, sources=[str(later), str(broken)], out=site)
    assert db_digest(kb_dir) == before_db and tree_digest(site) == before_site
    assert versions_in(kb_dir) == ["20231117.0"] and not (kb_dir / STAGING).exists()


KILLER = textwrap.dedent("""
    import os, signal, sys
    from kb.update import run_update

    kb_dir, source, site, when = sys.argv[1:]

    def die():
        os.kill(os.getpid(), signal.SIGKILL)

    def on_stage(name):
        print(name, flush=True)
        if when == name:
            die()

    if when == "during-ingest":  # the new version is written (not committed), its search index not updated yet
        import kb.search.index

        kb.search.index.update_index = lambda *args, **kwargs: die()

    run_update(kb_dir, sources=[source], out=site, on_stage=on_stage)
    print("finished")
""")


@pytest.mark.slow
@pytest.mark.parametrize("when", ["during-ingest", "diff", "build"])
def test_an_update_killed_midway_leaves_store_and_site_whole(deployed, when):
    kb_dir, site, later = deployed
    before_db, before_site = db_digest(kb_dir), tree_digest(site)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-c", KILLER, str(kb_dir), str(later), str(site), when],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == -9, proc.stdout + proc.stderr
    assert proc.stdout.split()[-1] == when.replace("during-", "")  # killed in that stage
    assert (kb_dir / STAGING).exists()  # it was working on its copy
    assert db_digest(kb_dir) == before_db and tree_digest(site) == before_site
    with sqlite3.connect(kb_dir / DB_NAME) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert versions_in(kb_dir) == ["20231117.0"]
    # the next run clears what the killed one left and completes
    result = run_update(kb_dir, sources=[str(later)], out=site)
    assert result.changed and versions_in(kb_dir) == ["20240301.0", "20231117.0"]
    assert (site / "changes" / "ja-20231117.0-20240301.0.html").exists()


def test_one_update_at_a_time(deployed, monkeypatch):
    kb_dir, site, later = deployed
    monkeypatch.setenv("KB_WRITER_WAIT", "0.2")
    with open(kb_dir / LOCK_NAME, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(KbError, match="another kb is writing"):
            run_update(kb_dir, sources=[str(later)], out=site)
    assert versions_in(kb_dir) == ["20231117.0"]


@pytest.mark.slow
def test_site_update_uses_conditional_requests(tmp_path, httpserver):
    """Fetched once with 'kb fetch'; then each 'kb update --site' asks with If-None-Match and gets 304 until the
    file changes."""
    from werkzeug import Response

    served = {"body": JA.read_bytes(), "etag": '"v1"'}
    seen: list[tuple[str | None, int]] = []

    def cr_file(request):
        if request.headers.get("If-None-Match") == served["etag"]:
            seen.append((request.headers.get("If-None-Match"), 304))
            return Response(status=304, headers={"ETag": served["etag"]})
        seen.append((request.headers.get("If-None-Match"), 200))
        return Response(served["body"], headers={"ETag": served["etag"], "Content-Type": "text/plain; charset=utf-8"})

    httpserver.expect_request("/robots.txt").respond_with_data("User-agent: *\nAllow: /\n")
    httpserver.expect_request("/data/CR/JPN_CR_20231117_0.txt").respond_with_handler(cr_file)
    kb_dir = tmp_path / "kb"
    report = crawl("mjmj", ["20231117"], kb_dir=kb_dir, base_url=httpserver.url_for("/data/CR/"), politeness=Politeness(delay=0))
    assert len(report.fetched) == 1 and seen == [(None, 200)]

    first = run_update(kb_dir, sites=["mjmj"], delay=0)
    assert first.changed and versions_in(kb_dir) == ["20231117.0"]
    assert seen[-1] == ('"v1"', 304)  # the page came from the cache after a 304
    second = run_update(kb_dir, sites=["mjmj"], delay=0)
    assert not second.changed and seen[-1] == ('"v1"', 304)
    served.update(body=later_version_bytes(), etag='"v2"')
    third = run_update(kb_dir, sites=["mjmj"], delay=0)
    assert third.changed and seen[-1] == ('"v1"', 200)
    assert versions_in(kb_dir) == ["20240301.0", "20231117.0"]
    [diff] = third.diffs
    assert [c.new_id for c in diff.changes if c.status == "changed"] == ["cr:601.2f"]


def test_site_never_fetched_is_an_error(tmp_path):
    with pytest.raises(KbError, match="never fetched"):
        run_update(tmp_path / "kb", sites=["mjmj"])


def test_update_publishes_under_the_base_url(deployed):
    kb_dir, site, later = deployed
    result = CliRunner().invoke(main, ["--kb-dir", str(kb_dir), "update", str(later), "--out", str(site),
                                       "--base-url", "https://example.org/rules"])
    assert result.exit_code == 0, result.output
    sitemap = (site / "sitemap.xml").read_text(encoding="utf-8")
    assert "<loc>https://example.org/rules/cr/601.2f.html</loc>" in sitemap
    feed = (site / "changes" / "feed.xml").read_text(encoding="utf-8")
    assert "https://example.org/rules/changes/ja-20231117.0-20240301.0.html" in feed
