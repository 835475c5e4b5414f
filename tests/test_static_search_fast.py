"""The static search's loading (issue 23, item 4: first results fast on a cold cache, bytes below Pagefind's): the
vocabulary (with the English names of Japanese names) written into ``search/meta.js`` when small and in buckets
when not, both answering alike in real Chromium;
an incremental build rewriting only the buckets of new surfaces; a keystroke searched at once when no search is under
way; ``meta.js`` fetched on focus or with the pointer in the header, not with the page; and only the document chunks
of the results shown loaded. Sites are built from ``data/`` into real folders and opened from disk."""

from __future__ import annotations

import json
import marshal
from pathlib import Path

import pytest
from search_files import exported_files

from kb.pipeline import ingest_sources
from kb.site import build_site, search_export
from kb.site.search_export import CHUNK, fnv1a
from kb.store import Store

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "data"
JA_CR = DATA / "JPN_CR_20231117_0.txt"
QUERIES = ["唱えた", "マナ・コスト", "総コストを支払った", "予示", "lang:ja 唱える", "呪文を唱える", "豫示", "601.2f",
           "ﾏﾅ･ｺｽﾄ", "コスト 能力", "lang:ja 呪文"]
pytestmark = pytest.mark.slow  # each test builds sites or uses two built from data/ (tens of seconds)
SCRIPTS = "() => Array.from(document.querySelectorAll('script[src]'), s => s.getAttribute('src'))"


def _data(path: Path, name: str) -> dict:
    return json.loads(path.read_text(encoding="utf-8")[len(f'window.__kbSearch("{name}",'):].rstrip().removesuffix(");"))


def _bucketed():
    """Thresholds that put data/'s vocabulary in buckets of about 1 KiB."""
    patch = pytest.MonkeyPatch()
    patch.setattr(search_export, "VOCAB_INLINE_BYTES", 0)
    patch.setattr(search_export, "VOCAB_BUCKET_BYTES", 1024)
    return patch


@pytest.fixture(scope="module")
def sites(tmp_path_factory) -> tuple[Path, Path]:
    """data/'s site twice: as built (the vocabulary in meta.js) and with the vocabulary in buckets."""
    base = tmp_path_factory.mktemp("static-fast")
    with Store.open(base / "kb") as store:
        ingest_sources(store, [str(DATA)], index=False)
        build_site(store, base / "inline")
        patch = _bucketed()
        try:
            build_site(store, base / "buckets")
        finally:
            patch.undo()
    return base / "inline", base / "buckets"


def test_a_small_vocabulary_is_in_meta_and_a_large_one_in_buckets(sites):
    inline, buckets = sites
    small = _data(inline / "search" / "meta.js", "meta")
    assert small["vb"] == 0 and len(small["v"]) > 100 and not (inline / "search" / "v").exists()
    large = _data(buckets / "search" / "meta.js", "meta")
    count = large["vb"]
    assert count > 1 and "v" not in large
    assert sorted(p.name for p in (buckets / "search" / "v").iterdir()) == sorted(f"{b}.js" for b in range(count))
    union: dict = {}
    for b in range(count):
        table = _data(buckets / "search" / "v" / f"{b}.js", f"v/{b}")
        assert all(fnv1a(surface[0]) % count == b for surface in table)
        union.update(table)
    assert union == small["v"]  # the same vocabulary, only placed elsewhere
    # a Japanese name's English names are in the vocabulary (known with the terms), in no name shard
    assert any(key.endswith("\t") and names for key, names in small["v"].items())
    shards = list((inline / "search" / "n").iterdir())
    assert shards and not [p for p in shards if any(k.endswith("\t") for k in _data(p, f"n/{p.stem}"))]


def test_an_edit_rewrites_only_the_buckets_of_its_new_surfaces(tmp_path, monkeypatch):
    """Bucketed, a rule edited with a new word: the next build returns the buckets whose surfaces changed and no other;
    the vocabulary only grows. Inline, the new surfaces are in meta.js and no v/ file is written."""
    returned = exported_files(monkeypatch)
    source = tmp_path / JA_CR.name
    text = JA_CR.read_text(encoding="utf-8-sig")
    source.write_text(text, encoding="utf-8")
    old_text, new_text = "通常、そのマナ・コストだけである。", "通常、そのマナ・コストだけである。稲妻が轟く。"
    assert old_text in text
    for bucketed in (True, False):
        out = tmp_path / ("buckets" if bucketed else "inline")
        source.write_text(text, encoding="utf-8")
        patch = _bucketed() if bucketed else pytest.MonkeyPatch()
        try:
            with Store.open(tmp_path / f"kb-{bucketed}") as store:
                ingest_sources(store, [str(source)], index=False)
                build_site(store, out)
                before = _vocabulary(out)
                returned.clear()
                source.write_text(text.replace(old_text, new_text), encoding="utf-8")
                ingest_sources(store, [str(source)], index=False)
                build_site(store, out)
        finally:
            patch.undo()
        after = _vocabulary(out)
        new = {s: t for s, t in after.items() if before.get(s) != t}  # new surfaces (and any the edited rule
        assert set(before) <= set(after) and any("稲妻" in s or "轟" in s for s in new)  # maps to another term now)
        written = sorted(f for f in returned if f.startswith("search/v/"))
        if bucketed:
            count = _data(out / "search" / "meta.js", "meta")["vb"]
            assert count > 1
            assert written == sorted({f"search/v/{fnv1a(s[0]) % count}.js" for s in new})
        else:
            assert written == [] and "search/meta.js" in returned


def _vocabulary(site: Path) -> dict:
    meta = _data(site / "search" / "meta.js", "meta")
    if not meta["vb"]:
        return meta["v"]
    out: dict = {}
    for b in range(meta["vb"]):
        out.update(_data(site / "search" / "v" / f"{b}.js", f"v/{b}"))
    return out


def _open(browser, site: Path, page_name: str = "index.html"):
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto((site / page_name).as_uri())
    return page, errors


def test_the_bucketed_vocabulary_answers_as_the_inline_one(browser, sites):
    inline, buckets = sites
    answers = []
    for site in sites:
        page, errors = _open(browser, site)
        answers.append([page.evaluate("([q, n]) => kbSearch(q, n).then(r => r.results.map(x => x.url))", [q, 9])
                        for q in QUERIES])
        page.close()
        assert errors == []
    assert answers[0] == answers[1]
    assert [q for q, found in zip(QUERIES, answers[0], strict=True) if not found] == []


def test_a_keystroke_is_searched_at_once_when_no_search_is_under_way(browser, sites):
    """Shards loaded, the results of a keystroke are in the box before any timer could fire (no debounce)."""
    page, errors = _open(browser, sites[0])
    expected = page.evaluate("(q) => kbSearch(q, 8).then(r => r.results.map(x => x.url))", "唱えた")
    shown = page.evaluate("""(q) => new Promise((resolve) => {
      const input = document.querySelector(".search-form .search-input");
      input.value = q;
      input.dispatchEvent(new Event("input", {bubbles: true}));
      setTimeout(() => resolve(Array.from(document.querySelectorAll(".search-results a:not(.all)"),
                                          a => a.getAttribute("href"))), 0);
    })""", "唱えた")
    page.close()
    assert expected and shown == expected and errors == []


def test_keystrokes_during_a_search_end_with_the_last_query(browser, sites):
    page, errors = _open(browser, sites[0])
    page.evaluate("""() => {
      const input = document.querySelector(".search-form .search-input");
      for (const q of ["唱", "唱え", "唱えた"]) { input.value = q; input.dispatchEvent(new Event("input", {bubbles: true})); }
    }""")
    expected = page.evaluate("(q) => kbSearch(q, 8).then(r => r.results.map(x => x.url))", "唱えた")
    page.wait_for_function("""(want) => JSON.stringify(Array.from(document.querySelectorAll(
      ".search-results a:not(.all)"), a => a.getAttribute("href"))) === JSON.stringify(want)""", arg=expected,
                           timeout=5000)
    page.close()
    assert expected and errors == []


def test_meta_is_fetched_on_focus_or_with_the_pointer_in_the_header_not_with_the_page(browser, sites):
    page, errors = _open(browser, sites[0])
    page.wait_for_timeout(200)
    assert not [s for s in page.evaluate(SCRIPTS) if "search/" in s]  # the page alone loads no search file
    page.hover(".site-header .brand")
    page.wait_for_function("() => document.querySelector('script[src$=\"search/meta.js\"]') !== null", timeout=3000)
    page.close()
    page, more = _open(browser, sites[0])
    page.focus(".search-form .search-input")
    page.wait_for_function("() => document.querySelector('script[src$=\"search/meta.js\"]') !== null", timeout=3000)
    page.close()
    assert errors == more == []


@pytest.mark.parametrize("query", ["唱えた", "lang:ja 唱える", "総コストを支払った", "呪文 能力", "601.2f"])
def test_only_the_chunks_of_the_results_shown_are_loaded(browser, sites, query):
    site = sites[0]
    ids = marshal.loads((site / ".kb-build" / "manifest.marshal").read_bytes())["search"]["ids"]
    page, errors = _open(browser, site)
    urls = page.evaluate("([q, n]) => kbSearch(q, n).then(r => r.results.map(x => x.url))", [query, 9])
    chunks = {s.rsplit("/", 1)[1] for s in page.evaluate(SCRIPTS) if "search/d/" in s}
    page.close()
    assert urls and errors == []
    assert chunks == {f"{ids[url] // CHUNK}.js" for url in urls}
