"""The static search's delta (kb/site/search_delta.py): an incremental build writes the changed documents' ``p/``,
``g/`` and ``q/`` records into one small file the browser merges into each shard as it loads, leaving the base
shards alone, and folds it into them past its bound. The merge (Python's :func:`merged_shard`, the same as
``site.js``'s: checked against it in Chromium) of base and delta gives a full build's lists: on random lists
(hypothesis), and on real builds after an article changed, added and a rule removed, two builds in a row and a
compaction; a word an edit brings is found in real Chromium, a word it takes away is not, before and after the
compaction; a delta file or a delta document's base analysis gone means a full export."""

from __future__ import annotations

import json
from array import array
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from search_files import exported_files, merged_shards, shard_data
from test_site_per_page import ARTICLES, cr_and_wiki, page_of, wiki_page, write_wiki

from kb.pipeline import ingest_sources
from kb.site import build_site, search_export
from kb.site.gather import gather_site
from kb.site.search_cache import AnalysisCache
from kb.site.search_delta import PREFIXES, Delta, delta_file, merged_shard, read_delta, updated
from kb.site.search_export import export_search, fnv1a
from kb.site.search_shards import gap_coded, patched_shards, script
from kb.store import Store

MANIFEST = Path(".kb-build") / "manifest.marshal"


# -- the merge on random lists ------------------------------------------------------------------------------------
Corpus = dict[int, dict[str, tuple[int, ...]]]  # document → key → the items of its record (after the doc id)
KEYS = ["a", "b", "c", "d", "e", "f", "g"]
COUNT = 3  # shards per prefix


def _items(sizes: bool):
    return (st.lists(st.integers(0, 40), min_size=1, max_size=3).map(lambda p: (len(p), *p)) if sizes
            else st.integers(1, 99).map(lambda w: (w,)))


def _documents(sizes: bool):
    return st.dictionaries(st.sampled_from(KEYS), _items(sizes), max_size=4)


def _table(corpus: Corpus) -> dict[str, array[int]]:
    """key → records with absolute doc ids, ascending (as the export's tables)."""
    out: dict[str, array[int]] = {}
    for doc in sorted(corpus):
        for key, items in sorted(corpus[doc].items()):
            out.setdefault(key, array("q")).extend((doc, *items))
    return out


def _shards(table: dict[str, array[int]], sizes: bool) -> dict[int, dict[str, list[int]]]:
    out: dict[int, dict[str, list[int]]] = {}
    for key in sorted(table):
        out.setdefault(fnv1a(key) % COUNT, {})[key] = gap_coded(table[key], sizes)
    return out


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_base_and_delta_merged_are_a_full_rebuild_after_any_builds_and_after_a_compaction(data):
    prefix = data.draw(st.sampled_from(list(PREFIXES)))
    sizes = PREFIXES[prefix]
    base: Corpus = data.draw(st.dictionaries(st.integers(0, 25), _documents(sizes), max_size=12))
    base_shards = _shards(_table(base), sizes)
    now, delta = dict(base), Delta()
    for _ in range(data.draw(st.integers(1, 4))):  # builds: some documents changed, added or removed
        changed = data.draw(st.dictionaries(st.integers(0, 30), st.none() | _documents(sizes), min_size=1, max_size=5))
        for doc, records in changed.items():
            if records is None:
                now.pop(doc, None)
            else:
                now[doc] = records
        fresh = {doc: now[doc] for doc in changed if doc in now}
        delta = updated(delta, sorted(changed), {prefix: _table(fresh)})
        name, text = delta_file(delta, dict.fromkeys(PREFIXES, COUNT), fnv1a)
        assert read_delta(name, text) == delta  # the file holds the delta
        written = shard_data_of(name, text)
        full = _shards(_table(now), sizes)
        for shard in range(COUNT):
            assert merged_shard(base_shards.get(shard), written["d"], written[prefix].get(str(shard), {}),
                                sizes) == full.get(shard, {})
    # a compaction: the delta folded into the base shards by patched_shards (the shards of its documents' base and
    # current records), with the other shards as they were, is the full rebuild
    old = {doc: base[doc] for doc in delta.docs if doc in base}
    files = {f"search/{prefix}/{s}.js": script(f"{prefix}/{s}", lists) for s, lists in base_shards.items()}
    patched = patched_shards(prefix, delta.tables.get(prefix, {}), _table(old), COUNT, fnv1a, sizes, list(delta.docs),
                             files.get)
    full = _shards(_table(now), sizes)
    for shard in range(COUNT):
        name = f"{prefix}/{shard}"
        text = patched.get(name, files.get(f"search/{name}.js"))
        assert (json.loads(text[text.index(",") + 1:].rstrip().removesuffix(");")) if text else {}) == full.get(shard, {})


def shard_data_of(name: str, text: str) -> dict:
    return json.loads(text[len(f'window.__kbSearch("{name}",'):].rstrip().removesuffix(");"))


def test_a_document_changed_in_two_builds_is_in_the_delta_once_with_its_newest_records():
    first = updated(Delta(), [3], {"p": {"a": array("q", [3, 7]), "b": array("q", [3, 1])}})
    second = updated(first, [1, 3], {"p": {"a": array("q", [1, 2, 3, 9])}})
    assert second.docs == (1, 3)
    assert {k: list(v) for k, v in second.tables["p"].items()} == {"a": [1, 2, 3, 9]}  # 3's "b" gone, its "a" new
    name, text = delta_file(second, dict.fromkeys(PREFIXES, 1), fnv1a)
    assert name.startswith("x/") and shard_data_of(name, text) == {"d": [1, 3], "p": {"0": {"a": [1, 2, 2, 9]}},
                                                                    "g": {}, "q": {}}
    assert delta_file(updated(Delta(), [1], {}), dict.fromkeys(PREFIXES, 1), fnv1a)[0] != name  # named by content


# -- real builds ------------------------------------------------------------------------------------------------------
def _lists(shards: dict[str, dict[str, list[int]]]) -> dict[str, dict[str, list[int]]]:
    """prefix → key → list, over every shard (so builds with other shard counts compare)."""
    out: dict[str, dict[str, list[int]]] = {prefix: {} for prefix in PREFIXES}
    for name, lists in shards.items():
        out[name[0]].update(lists)
    return out


def _state(site: Path) -> dict:
    import marshal

    return marshal.loads((site / MANIFEST).read_bytes())["search"]


def _full_lists(store: Store, site: Path, tmp: Path) -> dict[str, dict[str, list[int]]]:
    """The p/, g/ and q/ lists a full export of the store makes with the site's document ids (a full build numbers
    documents added since the first build otherwise)."""
    state = _state(site)
    tmp.mkdir(exist_ok=True)
    files, _ = export_search(gather_site(store), {"ids": state["ids"], "identity": state["identity"]},
                             lambda rel: None, AnalysisCache(tmp, lambda rel, data: None, lambda rel: False))
    return _lists({name[len("search/"):-3]: shard_data_of(name[len("search/"):-3], text)
                   for name, text in files.items() if name.split("/")[1] in PREFIXES})


def _check(store: Store, site: Path, tmp: Path, returned: list[str], delta: bool) -> None:
    """The site's lists, its delta merged in, are a full export's; with ``delta`` the build wrote a delta and no
    base shard but empty ones, else it has no delta (compacted)."""
    assert _lists(merged_shards(site)) == _full_lists(store, site, tmp)
    meta = shard_data(site / "search" / "meta.js", "meta")
    shards = [f for f in returned if f.split("/")[1] in PREFIXES]
    if delta:
        assert meta["x"] and f"search/{meta['x']}.js" in returned and (site / "search" / f"{meta['x']}.js").is_file()
        assert all(shard_data(site / f, f[len("search/"):-3]) == {} for f in shards)  # the base shards untouched
    else:
        assert "x" not in meta and not list((site / "search").glob("x/*")) and shards
    assert len(list((site / "search").glob("x/*"))) == (1 if delta else 0)  # the previous delta is gone


@pytest.mark.slow  # eight builds of the sample CR and five wiki articles
def test_the_merged_lists_are_a_full_exports_through_changes_additions_removals_and_a_compaction(tmp_path, monkeypatch):
    returned = exported_files(monkeypatch)
    paths, cr, text = cr_and_wiki(tmp_path)
    site = tmp_path / "site"
    monkeypatch.setattr(search_export, "DELTA_SHARE", 0)  # never compacted but when asked below
    with Store.open(tmp_path / "kb") as store:
        assert not ingest_sources(store, [str(tmp_path / "wiki"), str(cr)], index=False).failed
        build_site(store, site)
        assert "x" not in shard_data(site / "search" / "meta.js", "meta")  # a first build has no delta

        def build(delta: bool = True) -> None:
            returned.clear()
            build_site(store, site)
            _check(store, site, tmp_path / "ref", returned, delta)

        paths["引用記事"].write_text(wiki_page("引用記事", ["孤立記事"], "竜巻ミョルニルの説明。"), encoding="utf-8")
        assert not ingest_sources(store, [str(paths["引用記事"])], index=False).failed
        build()  # one article changed
        first = _state(site)["delta"]
        new = tmp_path / "wiki" / "new.html"
        new.write_text(wiki_page("新しい記事", ["引用記事"], "稲妻の新記事。"), encoding="utf-8")
        assert not ingest_sources(store, [str(new)], index=False).failed
        build()  # one added
        assert set(first) < set(_state(site)["delta"])
        line = next(line for line in text.splitlines() if line.startswith("601.2i "))
        cr.write_text(text.replace(line + "\n", ""), encoding="utf-8")
        assert not ingest_sources(store, [str(cr)], index=False).failed
        build()  # a rule removed (its documents in the delta with no record)
        for extra in ("雷鳴の再編集。", "雷鳴の再編集と霧。"):  # the same document twice, then with another
            paths["引用記事"].write_text(wiki_page("引用記事", [], extra), encoding="utf-8")
            assert not ingest_sources(store, [str(paths["引用記事"])], index=False).failed
            build()
        paths["孤立記事"].write_text(wiki_page("孤立記事", [], "別の記事の霧。"), encoding="utf-8")
        assert not ingest_sources(store, [str(paths["孤立記事"])], index=False).failed
        build()
        docs = _state(site)["delta"]
        monkeypatch.setattr(search_export, "DELTA_SHARE", 10 ** 9)  # any delta passes its bound
        paths["対象記事"].write_text(wiki_page("対象記事", [], "圧縮の前の記事。"), encoding="utf-8")
        assert not ingest_sources(store, [str(paths["対象記事"])], index=False).failed
        build(delta=False)  # compacted: the delta's documents folded into the base shards
        state = _state(site)
        assert state["delta"] == {} and state["x"] is None and len(docs) >= 4
        monkeypatch.setattr(search_export, "DELTA_SHARE", 0)
        paths["対象記事"].write_text(wiki_page("対象記事", [], "圧縮の後の記事。"), encoding="utf-8")
        assert not ingest_sources(store, [str(paths["対象記事"])], index=False).failed
        build()  # a delta again, on the compacted shards
        assert len(_state(site)["delta"]) <= 2


# -- in Chromium ------------------------------------------------------------------------------------------------------
SEARCH = "(q) => kbSearch(q, 20).then(r => r.results.map(x => x.url))"


def _open(browser, site: Path):
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto((site / "index.html").as_uri())
    return page, errors


def _browser_shards(browser, site: Path) -> dict[str, dict[str, list[int]]]:
    """Every p/, g/ and q/ shard as site.js has it (kbSearch.shard: the delta merged in)."""
    meta = shard_data(site / "search" / "meta.js", "meta")
    names = [f"{prefix}/{shard}" for prefix in PREFIXES for shard in range(meta[prefix])
             if (site / "search" / prefix / f"{shard}.js").is_file()]
    page, errors = _open(browser, site)
    got = page.evaluate("(names) => Promise.all(names.map(n => kbSearch.shard(n)))", names)
    page.close()
    assert errors == []
    return {name: lists for name, lists in zip(names, got, strict=True) if lists}


@pytest.mark.slow
@pytest.mark.browser
def test_site_js_merges_as_python_does_and_finds_a_new_word_and_not_an_old_one(browser, tmp_path, monkeypatch):
    paths, cr, text = cr_and_wiki(tmp_path)
    site = tmp_path / "site"
    monkeypatch.setattr(search_export, "DELTA_SHARE", 0)
    with Store.open(tmp_path / "kb") as store:
        paths["引用記事"].write_text(wiki_page("引用記事", [], "古語ヴォルカノンの記事。"), encoding="utf-8")
        assert not ingest_sources(store, [str(tmp_path / "wiki"), str(cr)], index=False).failed
        build_site(store, site)
        page, errors = _open(browser, site)
        assert page_of("引用記事") in page.evaluate(SEARCH, "ヴォルカノン")
        page.close()
        paths["引用記事"].write_text(wiki_page("引用記事", [], "新語ミョルニルの記事。"), encoding="utf-8")
        assert not ingest_sources(store, [str(paths["引用記事"])], index=False).failed
        paths["孤立記事"].write_text(wiki_page("孤立記事", [], "ミョルニルの別記事。"), encoding="utf-8")
        assert not ingest_sources(store, [str(paths["孤立記事"])], index=False).failed
        build_site(store, site)
        assert shard_data(site / "search" / "meta.js", "meta").get("x")  # a delta, not compacted
        assert _browser_shards(browser, site) == merged_shards(site)  # site.js merges as merged_shard does
        for compacted in (False, True):
            page, more = _open(browser, site)
            found = page.evaluate(SEARCH, "ミョルニル")
            assert page_of("引用記事") in found and page_of("孤立記事") in found, found
            assert page_of("引用記事") not in page.evaluate(SEARCH, "ヴォルカノン")
            assert page_of("引用記事") in page.evaluate(SEARCH, '"新語ミョルニル"')  # a phrase: the q/ delta
            page.close()
            assert errors == more == []
            if not compacted:
                monkeypatch.setattr(search_export, "DELTA_SHARE", 10 ** 9)
                paths["対象記事"].write_text(wiki_page("対象記事", [], "圧縮。"), encoding="utf-8")
                assert not ingest_sources(store, [str(paths["対象記事"])], index=False).failed
                build_site(store, site)
                assert "x" not in shard_data(site / "search" / "meta.js", "meta")


# -- a delta's files gone ---------------------------------------------------------------------------------------------
@pytest.fixture
def delta_site(tmp_path, monkeypatch):
    """A wiki site built, 引用記事 changed and built again (its delta written): (store, paths, site)."""
    paths = write_wiki(tmp_path / "wiki", ARTICLES)
    site = tmp_path / "site"
    monkeypatch.setattr(search_export, "DELTA_SHARE", 0)
    with Store.open(tmp_path / "kb") as store:
        assert not ingest_sources(store, [str(tmp_path / "wiki")], index=False).failed
        build_site(store, site)
        paths["引用記事"].write_text(wiki_page("引用記事", [], "竜巻ミョルニル。"), encoding="utf-8")
        assert not ingest_sources(store, [str(paths["引用記事"])], index=False).failed
        build_site(store, site)
        assert _state(site)["x"]
        yield store, paths, site


def _change_and_build(store: Store, paths: dict[str, Path], site: Path):
    paths["孤立記事"].write_text(wiki_page("孤立記事", [], "稲妻の記事。"), encoding="utf-8")
    assert not ingest_sources(store, [str(paths["孤立記事"])], index=False).failed
    return build_site(store, site)


@pytest.mark.slow  # four builds
def test_a_delta_file_deleted_by_hand_means_a_full_export(delta_site, tmp_path):
    store, paths, site = delta_site
    (site / "search" / f"{_state(site)['x']}.js").unlink()
    _change_and_build(store, paths, site)
    assert _state(site)["x"] is None and _state(site)["delta"] == {}  # exported whole: no delta
    assert _lists(merged_shards(site)) == _full_lists(store, site, tmp_path / "ref")


@pytest.mark.slow  # four builds
def test_a_missing_base_analysis_of_a_delta_document_means_a_full_export_with_a_notice(delta_site, tmp_path):
    store, paths, site = delta_site
    state = _state(site)
    gone = next(k for k in state["delta"].values() if k and k not in state["keys"].values())
    (site / AnalysisCache.path(gone)).unlink()
    report = _change_and_build(store, paths, site)
    assert [n for n in report.notices if gone in n], report.notices
    assert _state(site)["x"] is None
    assert _lists(merged_shards(site)) == _full_lists(store, site, tmp_path / "ref")
