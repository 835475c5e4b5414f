"""The rule pages are a page group per part (a chapter's page; a section's; a rule's with its subrules'), named by its
pages' own contexts (:func:`kb.site.pages.part_inputs`): a change makes again the parts whose pages it changes and no other
— an article citing a new rule or one rule less, a rule changed in the CR, a renumbered rule (whose neighbours in the
next section show it) — and the site equals a full build's byte for byte after each. The link check of a build that
rewrote a few pages checks only their new links and those broken before, and finds what a whole check finds."""

from __future__ import annotations

import marshal
import random
from pathlib import Path

import pytest

from kb.pipeline import ingest_sources
from kb.site import build_site
from kb.site.gather import gather_site
from kb.site.linkcheck import check_links
from kb.site.manifest import MANIFEST, file_record, load_record
from kb.site.pages import _rule_parts, part_inputs
from kb.store import Store
from kb.urls.paths import rule_page
from tests.test_site_per_page import assert_same_site, cr_and_wiki, wiki_page


def _rule_groups(site: Path) -> dict[str, str]:
    return {name: group["hash"] for name, group in load_record(site, MANIFEST)["groups"].items()
            if name.startswith("rule pages ")}


def _parts(store: Store) -> dict[str, tuple[bytes, bytes]]:
    """Each part's inputs and its pages whole (every field, the context in full), marshalled."""
    return {name: (marshal.dumps(part_inputs(pages, shared), 2),
                   marshal.dumps([(p.path, p.template, p.title, p.description, p.in_sitemap, p.context) for p in pages], 2))
            for name, pages, shared in _rule_parts(gather_site(store))}


@pytest.mark.slow  # the Japanese CR, five incremental builds and five full ones
def test_a_change_makes_again_the_rule_parts_it_changes_and_no_other(tmp_path):
    paths, cr, text = cr_and_wiki(tmp_path)  # each cites 601.2f
    site = tmp_path / "site"
    with Store.open(tmp_path / "kb") as store:
        assert not ingest_sources(store, [str(cr), str(tmp_path / "wiki")], index=False).failed
        build_site(store, site)
        groups = _rule_groups(site)
        assert {"rule pages 1", "rule pages 6", "rule pages 100", "rule pages 601", "rule pages 701"} <= set(groups)
        parts = _parts(store)
        step = 0

        def rebuild(expected: list[str]) -> list[str]:
            """Build; the rule parts made again are ``expected``; a part's inputs changed exactly when its pages
            did; the site equals a full build's. The rule pages rendered."""
            nonlocal groups, parts, step
            report = build_site(store, site)
            now = _rule_groups(site)
            assert sorted(n for n in now.keys() | groups.keys() if now.get(n) != groups.get(n)) == expected
            new_parts = _parts(store)
            for name in new_parts.keys() & parts.keys():
                assert (new_parts[name][0] == parts[name][0]) == (new_parts[name][1] == parts[name][1]), name
            groups, parts, step = now, new_parts, step + 1
            build_site(store, tmp_path / f"full{step}")
            assert_same_site(tmp_path / f"full{step}", site, search=False)
            return [p for p in report.rendered_pages if p.startswith("cr/")]

        # an article cites a new rule (a subrule: its page, its rule's and its section's show the citation)
        paths["引用記事"].write_text(wiki_page("引用記事", [], "(CR:701.34c)"), encoding="utf-8")
        assert not ingest_sources(store, [str(paths["引用記事"])], index=False).failed
        rendered = rebuild(["rule pages 701", "rule pages 701.34"])
        assert set(rendered) == {rule_page("701.34c"), rule_page("701.34"), "cr/701.html"}
        assert "引用記事" in (site / rule_page("701.34c")).read_text(encoding="utf-8")

        # it cites one rule less (601.2f stays): the same parts again, the citation gone
        paths["引用記事"].write_text(wiki_page("引用記事", [], "竜巻ミョルニル。"), encoding="utf-8")
        assert not ingest_sources(store, [str(paths["引用記事"])], index=False).failed
        rebuild(["rule pages 701", "rule pages 701.34"])
        assert "引用記事" not in (site / rule_page("701.34c")).read_text(encoding="utf-8")

        # a rule changed in the CR: its rule's part and its section's (the chapter's page shows no subrule)
        old = "プレイヤーはその呪文の総コストを決定する。"
        assert old in text
        text = text.replace(old, old + "竜巻ミョルニル。")
        cr.write_text(text, encoding="utf-8")
        assert not ingest_sources(store, [str(cr)], index=False).failed
        rendered = rebuild(["rule pages 601", "rule pages 601.2"])
        assert rule_page("601.2f") in rendered and not [p for p in rendered if not p.startswith("cr/601")]

        # a renumbered rule (601.7 → 601.8, the last of its section): its part gone and new, its section's, and the
        # parts of its neighbours, 601.6 and 701.34 (the first rule of the next section), whose pages link it
        assert text.count("\n601.7. ") == 1
        cr.write_text(text.replace("\n601.7. ", "\n601.8. "), encoding="utf-8")
        assert not ingest_sources(store, [str(cr)], index=False).failed
        rendered = rebuild(["rule pages 601", "rule pages 601.6", "rule pages 601.7", "rule pages 601.8",
                            "rule pages 701.34"])
        assert rule_page("701.34") in rendered and rule_page("601.8") in rendered
        assert not (site / rule_page("601.7")).exists()
        assert rule_page("601.8") in (site / rule_page("701.34")).read_text(encoding="utf-8")

        # nothing changed: no part
        assert rebuild([]) == []


def _files(pages: dict[str, tuple[list[str], list[str]]]) -> dict[str, dict]:
    return {path: file_record("h", links, ids) for path, (links, ids) in pages.items()}


def test_the_link_check_after_a_few_pages_changed_finds_what_a_whole_check_finds():
    before = {"a.html": (["b.html#x", "b.html#gone", "c.html"], ["top"]),
              "b.html": (["a.html#top", "nowhere.html"], ["x", "y"]),
              "c.html": (["a.html", "b.html#y", "lost.html"], []),
              "d.html": (["b.html#x"], ["d"]), "search/s.js": ([], [])}
    old = _files(before)
    old_broken = [[path, link] for path, link, _ in check_links(old)]
    assert [pair[1] for pair in old_broken] == ["b.html#gone", "nowhere.html", "lost.html"]
    cases = {
        "a page gains a broken link and an anchor the others may link": {
            "a.html": (["b.html#x", "b.html#gone", "c.html", "b.html#z", "d.html#d"], ["top", "more"])},
        "a page mends a broken link and keeps another": {"b.html": (["a.html#top", "a.html"], ["x", "y"])},
        "a page keeps its links, one broken (rewritten for another reason)": {"c.html": before["c.html"]},
        "a page drops its broken link, twice over another": {"c.html": (["a.html", "b.html#y", "b.html#y"], [])},
        "a search file rewritten": {"search/s.js": ([], [])},
        "a page loses an anchor another links (a whole check)": {"b.html": (["a.html#top"], ["y"])},
        "a new page with a broken link": {"e.html": (["a.html#top", "f.html"], [])},
        "a page without links gains some": {"search/s.js": (["a.html#top", "b.html#no"], [])},
    }
    for name, changed in cases.items():
        files = {**old, **_files(changed)}
        assert check_links(files, old, old_broken) == check_links(files), name
    gone = {path: record for path, record in old.items() if path != "c.html"}  # a.html (kept) links it
    assert check_links(gone, old, old_broken) == check_links(gone) != []


def test_the_link_check_of_random_changes_finds_what_a_whole_check_finds():
    rng = random.Random(24)
    paths = [f"p{i}.html" for i in range(12)]

    def page() -> tuple[list[str], list[str]]:
        links = [rng.choice(paths) + rng.choice(["", "#a", "#b", "#c"]) for _ in range(rng.randrange(5))]
        return links, rng.sample(["a", "b", "c"], rng.randrange(4))

    for _ in range(300):
        old = _files({path: page() for path in paths if rng.random() < 0.9})
        old_broken = [[path, link] for path, link, _ in check_links(old)]
        files = {path: (_files({path: page()})[path] if rng.random() < 0.2 else record)
                 for path, record in old.items() if rng.random() < 0.95}
        files |= _files({path: page() for path in paths if path not in old and rng.random() < 0.5})
        assert check_links(files, old, old_broken) == check_links(files)
