"""The manifest's file records, kept by path in a keyed file (:mod:`kb.site.manifest`, :mod:`kb.store.keyed`): a
build after one article changed reads the records it asks for and writes those it changed, not the records of
every file; read back, they are a full build's records; a keyed file missing, damaged or of another format reads as
no records (a full build)."""

from __future__ import annotations

import marshal
from pathlib import Path

import pytest

from kb.errors import KbError
from kb.pipeline import ingest_sources
from kb.site import build_site, builder, output
from kb.site.manifest import (
    FILE_RECORDS,
    MANIFEST_FORMAT,
    EditedFiles,
    StoredFiles,
    file_record,
    load_manifest,
    record_changes,
    removed_since,
)
from kb.store import Store
from kb.store.keyed import KeyedFile, apply_changes
from tests.test_site_per_page import ARTICLES, assert_same_site, cr_and_wiki, page_of, wiki_page


def stored(tmp_path: Path, records: dict) -> StoredFiles:
    apply_changes(tmp_path / "r.sqlite", "t", {rel: marshal.dumps(r) for rel, r in records.items()}, fresh=True)
    opened = KeyedFile.open(tmp_path / "r.sqlite", "t")
    assert opened is not None
    return StoredFiles(opened)


def test_a_keyed_file_applies_changes_once_and_again_alike_and_reads_by_key_prefix_and_whole(tmp_path):
    path = tmp_path / "r.sqlite"
    assert KeyedFile.open(path, "t") is None  # missing
    apply_changes(path, "t", {"a/1": b"x", "a/2": b"y", "b": b"z"})
    for _ in range(2):  # applied again (a build completing a killed one's journal): the same file
        apply_changes(path, "t", {"a/1": None, "a/3": b"w", "b": b"Z"})
        opened = KeyedFile.open(path, "t")
        assert opened is not None
        assert list(opened.items()) == [("a/2", b"y"), ("a/3", b"w"), ("b", b"Z")]
        assert opened.keys("a/") == ["a/2", "a/3"] and opened.get("a/1") is None and opened.get("b") == b"Z"
        opened.close()
    assert KeyedFile.open(path, "another format") is None
    apply_changes(path, "u", {"c": b"1"})  # another tag: made anew
    assert KeyedFile.open(path, "t") is None and KeyedFile.open(path, "u").keys() == ["c"]
    (tmp_path / "link.sqlite").symlink_to(path)
    assert KeyedFile.open(tmp_path / "link.sqlite", "u") is None  # a symbolic link: never read through, nor written
    with pytest.raises(KbError, match="symbolic link"):
        apply_changes(tmp_path / "link.sqlite", "u", {"e": b"3"})
    path.write_bytes(b"not a database at all" * 100)
    assert KeyedFile.open(path, "u") is None
    apply_changes(path, "u", {"d": b"2"}, fresh=True)
    assert KeyedFile.open(path, "u").keys() == ["d"]


def test_the_changes_are_the_records_new_changed_or_gone_and_a_record_read_twice_is_one_object(tmp_path):
    old = stored(tmp_path, {f"p{i}.html": {"hash": str(i)} for i in range(5)})
    assert old.get("p1.html") is old.get("p1.html") and "nope.html" not in old and len(old) == 5
    files = EditedFiles(old)
    files["p0.html"] = {"hash": "new"}
    files["p2.html"] = {"hash": "2"}  # rewritten the same: no change
    files["new.html"] = {"hash": "n"}
    del files["p1.html"]
    assert "p1.html" not in files and files["p3.html"] is old["p3.html"]
    assert removed_since(old, files) == ["p1.html"]
    changes = record_changes(old, files)
    assert {rel: None if data is None else marshal.loads(data) for rel, data in changes.items()} == {
        "p0.html": {"hash": "new"}, "new.html": {"hash": "n"}, "p1.html": None}
    whole = dict(old.items())  # a full build's: every record, from one read
    full = {**{rel: record for rel, record in whole.items() if rel != "p1.html"}, "p0.html": {"hash": "new"},
            "new.html": {"hash": "n"}}
    assert removed_since(old, full) == ["p1.html"] and record_changes(old, full) == changes
    assert sorted(files) == sorted(full)


@pytest.mark.slow  # the Japanese CR and four builds
def test_a_build_after_one_change_writes_the_changed_records_and_reads_back_a_full_builds(tmp_path, monkeypatch):
    paths, cr, _ = cr_and_wiki(tmp_path)
    site = tmp_path / "site"
    applied: list[dict] = []
    real_apply = output.apply_changes

    def apply(path, tag, changes, *, fresh=False):
        applied.append(changes)
        real_apply(path, tag, changes, fresh=fresh)

    monkeypatch.setattr(output, "apply_changes", apply)
    with Store.open(tmp_path / "kb") as store:
        assert not ingest_sources(store, [str(cr), str(tmp_path / "wiki")], index=False).failed
        build_site(store, site)
        total = len(load_manifest(site)["files"])
        for n, title in enumerate(["引用記事", "孤立記事"]):
            paths[title].write_text(wiki_page(title, ARTICLES[title], f"変更{n}。"), encoding="utf-8")
            assert not ingest_sources(store, [str(paths[title])], index=False).failed
            if n:  # the second applied by swapping the whole folder: the records copied into the new one
                monkeypatch.setattr(builder, "in_place_suits", lambda changed, total: False)
            report = build_site(store, site)
            assert page_of(title) in report.rendered_pages
            assert page_of(title) in applied[-1] and len(applied[-1]) * 10 < total  # the changed records alone
        build_site(store, tmp_path / "full")
    assert_same_site(tmp_path / "full", site)
    # the records of every file but the static search's (its shards and delta, its analysis files: an incremental
    # build's are another full build's, compared as the browser sees them by assert_same_site)
    assert page_records(site) == page_records(tmp_path / "full")


def page_records(site: Path) -> dict:
    return {rel: record for rel, record in load_manifest(site)["files"].items()
            if not rel.startswith(("search/", ".kb-build/"))}


@pytest.mark.parametrize("damage", ["missing", "damaged", "another format"])
def test_records_missing_damaged_or_of_another_format_read_as_none_and_the_next_build_is_a_full_one(tmp_path, damage):
    _, cr, _ = cr_and_wiki(tmp_path)
    site = tmp_path / "site"
    with Store.open(tmp_path / "kb") as store:
        assert not ingest_sources(store, [str(tmp_path / "wiki")], index=False).failed
        build_site(store, site)
        assert load_manifest(site)["files"]
        records = site / FILE_RECORDS
        if damage == "missing":
            records.unlink()
        elif damage == "damaged":
            records.write_bytes(b"\0" * 4096)
        else:
            apply_changes(records, str(MANIFEST_FORMAT - 1), {"index.html": b""})
        assert load_manifest(site) == {}
        report = build_site(store, site)  # nothing changed in the store: yet the site is made whole again
        assert report.pages and not report.edit
        assert KeyedFile.open(records, str(MANIFEST_FORMAT)) is not None
        assert build_site(store, site).rendered == 0
        build_site(store, tmp_path / "full")
    assert page_records(site) == page_records(tmp_path / "full")


@pytest.mark.parametrize("change", ["loses its anchor", "is gone"])
def test_an_edit_builds_link_check_finds_a_kept_page_linking_a_target_it_lost_from_the_records_unread(tmp_path, change):
    """The pages that may link a lost target are found by a scan of the keyed file (no record read whole), and only
    their links are checked."""
    from kb.site.linkcheck import check_links

    old = stored(tmp_path, {"a.html": file_record("1", ["b.html#s1", "c.html"]), "b.html": file_record("2", [], ["s1"]),
                            "c.html": file_record("3", ["c.html#top"], ["top"]), "search/x/1.js": file_record("4")})
    files = EditedFiles(old)
    if change == "is gone":
        del files["b.html"]
    else:
        files["b.html"] = file_record("5", [], ["s2"])
    files["search/x/2.js"] = file_record("6")  # and the static search's delta renamed, as every edit build does
    del files["search/x/1.js"]
    rewritten = [rel for rel, record in files.changes.items() if record is not None]
    found = check_links(files, old, [], rewritten)
    assert found == [("a.html", "b.html#s1", "no such page" if change == "is gone" else "no such anchor")]
    assert not old._whole and "c.html" not in old._records  # read: the page linking the target alone


def test_records_that_are_a_symbolic_link_are_never_written_through(tmp_path):
    """The file records replaced by a symbolic link to a file outside the site, then an article edited: the records
    are not read, and the build that follows (a full one, not an edit build, which would have written them) refuses
    the link, the file it points at untouched."""
    from kb.errors import KbError

    paths, _, _ = cr_and_wiki(tmp_path)
    site = tmp_path / "site"
    with Store.open(tmp_path / "kb") as store:
        assert not ingest_sources(store, [str(tmp_path / "wiki")], index=False).failed
        build_site(store, site)
        outside = tmp_path / "outside.sqlite"
        (site / FILE_RECORDS).replace(outside)
        (site / FILE_RECORDS).symlink_to(outside)
        before = outside.read_bytes()
        paths["孤立記事"].write_text(wiki_page("孤立記事", ARTICLES["孤立記事"], "変更。"), encoding="utf-8")
        assert not ingest_sources(store, [str(paths["孤立記事"])], index=False).failed
        assert load_manifest(site) == {}
        with pytest.raises(KbError, match="symbolic link"):
            build_site(store, site)
    assert outside.read_bytes() == before


def test_records_removed_while_a_build_swaps_the_folder_fail_it_with_one_line(tmp_path, monkeypatch):
    """The file records the build read are gone when it swaps the whole folder: it fails with a one-line error (its
    changes alone would be partial records), and the site is as it was but for them."""
    paths, _, _ = cr_and_wiki(tmp_path)
    site = tmp_path / "site"
    real_commit = output.Output.commit

    def commit(self, deleted, *, in_place, keyed=None):
        (site / FILE_RECORDS).unlink()
        real_commit(self, deleted, in_place=in_place, keyed=keyed)

    with Store.open(tmp_path / "kb") as store:
        assert not ingest_sources(store, [str(tmp_path / "wiki")], index=False).failed
        build_site(store, site)
        page = site / page_of("孤立記事")
        before = page.read_bytes()
        paths["孤立記事"].write_text(wiki_page("孤立記事", ARTICLES["孤立記事"], "変更。"), encoding="utf-8")
        assert not ingest_sources(store, [str(paths["孤立記事"])], index=False).failed
        monkeypatch.setattr(builder, "in_place_suits", lambda changed, total: False)
        monkeypatch.setattr(builder, "EDITED_PRODUCERS", ())  # a full build, which swaps the folder
        monkeypatch.setattr(output.Output, "commit", commit)
        with pytest.raises(KbError, match="files.sqlite: removed during the build; build again"):
            build_site(store, site)
    assert page.read_bytes() == before
