"""The incremental link of a changed wiki article (kb.link.resolve's ``_link_unversioned``) reads only what its few
references name — nodes and exact titles by key, card references counted by SQLite — and leaves the store, the link
report (its warnings too) and the search index exactly as a whole ingest of the same sources does: references found
by a folded name or an alias rather than a title, card entities whose Japanese name is decided by how often each
spelling is cited, and references that stay unresolved."""

from __future__ import annotations

import shutil

import pytest
from conftest import DATA
from test_link_incremental import every_ref
from test_link_wiki_incremental import page, wiki_link

from kb.link.resolve import stored_report
from kb.pipeline import ingest_sources
from kb.search.index import update_index
from kb.store import Store

pytestmark = pytest.mark.slow  # several ingests, one with the search index


def cards(store: Store) -> list[tuple]:
    return sorted((n.id, n.title, n.english, n.aliases, n.order) for n in store.nodes(kinds=["card"]))


def bolt_card(rows: list[tuple]) -> tuple | None:
    return next((row[1:4] for row in rows if row[0] == "card:Lightning Bolt"), None)


def report_of(store: Store) -> tuple:
    report = stored_report(store)
    return report.resolved, report.unresolved, [str(d) for d in report.diagnostics]


def test_a_changed_article_links_as_a_whole_ingest_does(tmp_path, monkeypatch):
    sources = tmp_path / "sources"
    shutil.copytree(DATA, sources)
    wiki = sources / "mtgwiki"
    (wiki / "スペル.html").write_text(page("スペル", "<p>俗に呪文のこと。</p>", redirected_from="Spell"), encoding="utf-8")
    bolt = wiki / "稲妻.html"
    bolt.write_text(page("稲妻", f"<p>《稲妻/Lightning Bolt》は{wiki_link('ｽﾍﾟﾙ')}。{wiki_link('spell')}。"
                                 f"{wiki_link('存在しない記事')}。</p>"), encoding="utf-8")
    (wiki / "火力.html").write_text(page("火力", "<p>《いなずま/Lightning Bolt》、《稲妻/Lightning Bolt》。</p>"),
                                   encoding="utf-8")
    kb_dir = tmp_path / "kb"
    with Store.open(kb_dir) as store:
        ingest_sources(store, [str(sources)])
        before = cards(store)
    assert bolt_card(before) == ("稲妻", "Lightning Bolt", ("いなずま",))
    steps = [
        # the other spelling cited more often now: the card entity's title changes, a reference by alias goes
        page("稲妻", f"<p>《いなずま/Lightning Bolt》《いなずま/Lightning Bolt》は{wiki_link('ｽﾍﾟﾙ')}。"
                   f"{wiki_link('存在しない記事')}、{wiki_link('もう一つない記事')}。</p>"),
        # no card reference left, a link to an article by its title only
        page("稲妻", f"<p>{wiki_link('スペル')}。</p>"),
    ]
    tables: list = []  # the linker's name tables of every article or card read (a name looked up that is no title)
    name_rows = Store.name_rows
    monkeypatch.setattr(Store, "name_rows", lambda self, *a, **k: (
        tables.append(k["kinds"]) if k.get("nodes") is None and list(k.get("kinds") or ()) in (["article"], ["card"])
        else None) or name_rows(self, *a, **k))
    for number, html in enumerate(steps):
        bolt.write_text(html, encoding="utf-8")
        tables.clear()
        with Store.open(kb_dir) as store:
            assert ingest_sources(store, [str(bolt)]).stored == 1
            stepwise = every_ref(store), report_of(store), cards(store)
            assert bool(tables) == (number == 0), f"step {number}: {tables}"  # step 1 names titles only
            index = update_index(store)  # every scope compared: the ingest left none out of date
            assert (index.added, index.updated, index.removed, index.notice) == (0, 0, 0, None), f"step {number}"
        with Store.open(tmp_path / f"whole-{number}") as whole:
            ingest_sources(whole, [str(sources)], index=False)
            assert stepwise == (every_ref(whole), report_of(whole), cards(whole)), f"step {number}"
        if number == 0:
            assert bolt_card(stepwise[2]) == ("いなずま", "Lightning Bolt", ("稲妻",))
            assert any("存在しない記事" in d for d in stepwise[1][2]) and any("もう一つない記事" in d for d in stepwise[1][2])
    assert not any("存在しない記事" in d for d in stepwise[1][2])
