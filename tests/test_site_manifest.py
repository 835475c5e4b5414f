"""The manifest's file records as a base and a delta (:mod:`kb.site.manifest`): a build after one article changed
writes the delta of the records it changed, not the records of every file; the base is written again when the delta
grows past its share; read back as one, they are a full build's records; a delta of another base is ignored."""

from __future__ import annotations

import marshal
from pathlib import Path

import pytest

from kb.pipeline import ingest_sources
from kb.site import build_site, builder
from kb.site.manifest import DELTA_MAX_SHARE, FILES, FILES_DELTA, MANIFEST_FORMAT, load_manifest, load_record, manifest_files
from kb.store import Store
from tests.test_site_per_page import ARTICLES, assert_same_site, cr_and_wiki, page_of, wiki_page


def test_the_delta_holds_the_changed_records_and_the_base_is_written_again_past_its_share():
    base_files = {f"p{i}.html": {"hash": str(i)} for i in range(40)}
    manifest = {"format": MANIFEST_FORMAT, "files": base_files, "groups": {}}
    first = dict(manifest_files({}, manifest))  # no base yet: a base, an empty delta
    base = marshal.loads(first[FILES])
    assert base["files"] == base_files and marshal.loads(first[FILES_DELTA]) == {
        "format": MANIFEST_FORMAT, "base": base["token"], "files": {}}
    previous = {**manifest, "base": {**base, "size": len(first[FILES])}}
    files = {**base_files, "p0.html": {"hash": "new"}, "new.html": {"hash": "n"}}
    del files["p1.html"]
    second = dict(manifest_files(previous, {**manifest, "files": files}))
    assert FILES not in second  # the base stays
    assert marshal.loads(second[FILES_DELTA]) == {"format": MANIFEST_FORMAT, "base": base["token"], "files": {
        "p0.html": {"hash": "new"}, "new.html": {"hash": "n"}, "p1.html": None}}
    assert len(second[FILES_DELTA]) * DELTA_MAX_SHARE <= len(first[FILES])
    changed = {rel: {"hash": "x" * 20} for rel in list(base_files)[:10]}  # a delta past its share of the base
    third = dict(manifest_files(previous, {**manifest, "files": {**base_files, **changed}}))
    assert marshal.loads(third[FILES])["files"] == {**base_files, **changed}
    assert marshal.loads(third[FILES])["token"] != base["token"]
    assert marshal.loads(third[FILES_DELTA])["files"] == {}


@pytest.mark.slow  # the Japanese CR and four builds
def test_a_build_after_one_change_writes_a_delta_and_reads_back_a_full_builds_records(tmp_path, monkeypatch):
    paths, cr, _ = cr_and_wiki(tmp_path)
    site = tmp_path / "site"
    with Store.open(tmp_path / "kb") as store:
        assert not ingest_sources(store, [str(cr), str(tmp_path / "wiki")], index=False).failed
        build_site(store, site)
        base = (site / FILES).read_bytes()
        assert load_record(site, FILES_DELTA)["files"] == {}
        for n, title in enumerate(["引用記事", "孤立記事"]):  # two builds: the delta holds both builds' changes
            paths[title].write_text(wiki_page(title, ARTICLES[title], f"変更{n}。"), encoding="utf-8")
            assert not ingest_sources(store, [str(paths[title])], index=False).failed
            if n:  # the second applied by swapping the whole folder: the base is carried into the new one
                monkeypatch.setattr(builder, "in_place_suits", lambda changed, total: False)
            report = build_site(store, site)
            assert page_of(title) in report.rendered_pages
        assert (site / FILES).read_bytes() == base  # the base was not written again
        delta = load_record(site, FILES_DELTA)["files"]
        assert {page_of("引用記事"), page_of("孤立記事")} <= delta.keys()
        assert len((site / FILES_DELTA).read_bytes()) * DELTA_MAX_SHARE <= len(base)
        build_site(store, tmp_path / "full")
    assert_same_site(tmp_path / "full", site)
    # the records of every file but the static search's (its shards and delta, its analysis files: an incremental
    # build's are another full build's, compared as the browser sees them by assert_same_site)
    assert page_records(site) == page_records(tmp_path / "full")


def page_records(site: Path) -> dict:
    return {rel: record for rel, record in load_manifest(site)["files"].items()
            if not rel.startswith(("search/", ".kb-build/"))}


def test_a_delta_of_another_base_is_ignored(tmp_path):
    paths, cr, _ = cr_and_wiki(tmp_path)
    site = tmp_path / "site"
    with Store.open(tmp_path / "kb") as store:
        assert not ingest_sources(store, [str(tmp_path / "wiki")], index=False).failed
        build_site(store, site)
        files = load_manifest(site)["files"]
        (site / FILES_DELTA).write_bytes(marshal.dumps(
            {"format": MANIFEST_FORMAT, "base": "another", "files": {rel: None for rel in files}}))
        assert load_manifest(site)["files"] == files
        (site / FILES).unlink()  # no base: no manifest at all (a full build)
        assert load_manifest(site) == {}
