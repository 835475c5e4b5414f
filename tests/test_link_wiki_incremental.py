"""Incremental linking of wiki articles (kb.link.resolve.link with the rewritten unversioned nodes): an ingest that
changes, adds or removes one MTG Wiki page (or changes release notes) links that page, the references into it and
those naming what it is called (when what it is called changed) — and `kb export --format jsonl` then prints exactly
what a from-scratch ingest of the same sources prints."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from urllib.parse import quote

import pytest
from click.testing import CliRunner
from conftest import DATA, FIXTURES

from kb.cli import main
from kb.link.graph import DERIVED_KINDS
from kb.model import REFS_OUTSIDE_KB
from kb.pipeline import ingest_sources
from kb.store import NodeKey, Store

pytestmark = pytest.mark.slow  # processes, servers or several ingests each: out of the quick suite


def page(title: str, body: str, *, redirected_from: str | None = None) -> str:
    """An MTG Wiki article page as MediaWiki renders it (the markup of tests/fixtures/mtgwiki/deathtouch.html)."""
    came = (f'<span class="mw-redirectedfrom">（<a href="/index.php?title={quote(redirected_from)}&amp;redirect=no" '
            f'title="{redirected_from}">{redirected_from}</a>から転送）</span>') if redirected_from else ""
    return (f'<!DOCTYPE html><html lang="ja"><head><meta charset="UTF-8"><title>{title} - MTG Wiki</title></head>'
            f'<body class="mediawiki"><h1 id="firstHeading" class="firstHeading">{title}</h1>{came}'
            f'<div id="mw-content-text"><div class="mw-parser-output">{body}</div></div></body></html>')


def wiki_link(title: str, text: str | None = None) -> str:
    return f'<a href="/wiki/{quote(title)}" title="{title}">{text or title}</a>'


def export_lines(kb_dir: Path) -> list[str]:
    result = CliRunner().invoke(main, ["--kb-dir", str(kb_dir), "export", "--format", "jsonl"], catch_exceptions=False)
    assert result.exit_code == 0
    return result.output.splitlines()


def by_id(lines: list[str]) -> dict[tuple[str, str, str], dict]:
    records = [json.loads(line) for line in lines]
    return {(r["version"], r["lang"], r["id"]): r for r in records}


def from_scratch(kb_dir: Path, sources: Path) -> list[str]:
    """What ``kb export`` prints after one ingest of ``sources`` into a new kb folder (without the search index: the
    export does not read it)."""
    with Store.open(kb_dir) as store:
        ingest_sources(store, [str(sources)], index=False)
    return export_lines(kb_dir)


def test_one_wiki_page_changed_added_removed_links_as_a_whole_ingest(tmp_path, monkeypatch):
    sources = tmp_path / "sources"
    shutil.copytree(DATA, sources)
    wiki = sources / "mtgwiki"
    shutil.copy(FIXTURES / "mtgwiki" / "deathtouch.html", wiki / "接死.html")
    (wiki / "呪文.html").write_text(page("呪文", f"<p><b>呪文</b>/<i>Spell</i>は{wiki_link('唱える')}ことができる"
                                                  f"カード(CR:601.2f)。{wiki_link('優先権')}を得たときに"
                                                  f"{wiki_link('スタック')}に積む。《稲妻/Lightning Bolt》など。</p>",
                                        redirected_from="Spell"), encoding="utf-8")
    (wiki / "スペル.html").write_text(page("スペル", "<p>俗に呪文のこと。</p>", redirected_from="Spell"), encoding="utf-8")
    (wiki / "状況起因処理.html").write_text(page("状況起因処理", f"<p><b>状況起因処理</b>/<i>State-Based Actions</i>は"
                                                           f"{wiki_link('接死')}の処理(CR:704.5h)。</p>"),
                                         encoding="utf-8")
    (wiki / "キーワード能力.html").write_text(page("キーワード能力", f"<p>{wiki_link('接死')}、{wiki_link('状況起因処理')}、"
                                                         f"{wiki_link('Spell')}など。</p>"), encoding="utf-8")
    notes = sources / "release-notes" / "zendikar-rising.html"
    kb_dir = tmp_path / "kb"
    with Store.open(kb_dir) as store:
        ingest_sources(store, [str(sources)])
        total = sum(1 for _ in store.refs())
    spell = by_id(export_lines(kb_dir))[("", "ja", "wiki:呪文")]
    assert [r["resolved"] for r in spell["refs"] if r["target"] == "スタック"] == [False]  # no such article yet

    resolutions: list[int] = []
    set_resolutions = Store.set_resolutions

    def counting(self, rows):
        rows = list(rows)
        resolutions.append(len(rows))
        return set_resolutions(self, rows)

    monkeypatch.setattr(Store, "set_resolutions", counting)
    steps = [
        # changed: a link and a card more, the link to キーワード能力 gone
        (wiki / "接死.html", page("接死", f"<p><b>接死</b>/<i>Deathtouch</i>は{wiki_link('呪文')}などが持つ能力。"
                                         f"《ヴェノムの触手/Venom Tentacles》。</p>")),
        # added: a page whose title is a glossary term (rules' term links gain the article) and a redirect alias
        (wiki / "優先権.html", page("優先権", f"<p><b>優先権</b>/<i>Priority</i>は{wiki_link('スタック', '積む')}前に"
                                           f"得る。</p>", redirected_from="スタック")),
        # release notes changed: a mechanic now named as a glossary term with an article, a card renamed
        (notes, notes.read_text(encoding="utf-8").replace("上陸", "優先権").replace("玻璃池のミミック", "ヴェノムの触手")),
        # changed: a page sharing a redirect alias with another (the alias stays with the same one, the least title)
        (wiki / "スペル.html", page("スペル", f"<p>俗に{wiki_link('呪文')}を指す。</p>", redirected_from="Spell")),
        # removed: the page is gone from the wiki (nothing left to store), the article and its term links with it
        (wiki / "状況起因処理.html", "<!DOCTYPE html><html><body></body></html>"),
        # renamed: the old title's references become unresolved, the new title's resolve
        (wiki / "キーワード能力.html", page("キーワード", f"<p>{wiki_link('接死')}、{wiki_link('状況起因処理')}。</p>")),
    ]
    for number, (path, html) in enumerate(steps):
        path.write_text(html, encoding="utf-8")
        resolutions.clear()
        with Store.open(kb_dir) as store:
            report = ingest_sources(store, [str(path)])
        assert report.stored == 1
        assert 0 < sum(resolutions) < total / 10, f"step {number}: {sum(resolutions)} of {total} linked again"
        if number == 3:  # its names as they were: the references into it resolve as they did, and are left alone
            with Store.open(kb_dir) as store:
                key = NodeKey("", "ja", "wiki:スペル")
                assert [sr.source_key.id for sr in store.cited_by(key)] == ["wiki:キーワード能力"]
                own = [sr for sr in store.refs_from(key) if sr.ref.kind not in {*REFS_OUTSIDE_KB, *DERIVED_KINDS}]
            assert sum(resolutions) == len(own) > 0
        whole = from_scratch(tmp_path / f"whole-{number}", sources)
        stepwise = export_lines(kb_dir)
        assert by_id(stepwise) == by_id(whole), f"step {number}"
        assert sorted(stepwise) == sorted(whole)

    records = by_id(stepwise)
    cast = records[("", "ja", "wiki:呪文")]
    assert {"id": "wiki:優先権", "version": "", "lang": "ja"} in [r.get("node") for r in cast["refs"]]
    assert any(r["kind"] == "term-article" and r["node"]["id"] == "wiki:優先権"
               for key, rec in records.items() if key[0] for r in rec["refs"])  # a rule's term link: the new article
    assert not any(r.get("node", {}).get("id") == "wiki:状況起因処理" for rec in records.values() for r in rec["refs"])
    assert ("", "ja", "card:Venom Tentacles") in records
    assert ("", "ja", "card:玻璃池のミミック") not in records
    assert any(r["kind"] == "term-article" and r["node"]["id"] == "wiki:優先権"
               for key, rec in records.items() if key[2].startswith("note:") for r in rec["refs"])
