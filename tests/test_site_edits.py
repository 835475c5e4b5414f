"""Edit builds (:mod:`kb.site.edits`): when all that changed since the previous build is the text of a few MTG Wiki
articles — the same nodes and names, the same unresolved references — the build makes those articles' pages, their
preview scripts, the static search and, for each entry they cite or mention otherwise (a rule, an article, a card),
the pages showing who cites it (``BuildReport.edit``); anything else is a full build. Either way, and for a full
build after an edit build, the site equals a fresh full build's byte for byte, the static search included
(:func:`assert_same_site`; but where a document was added, which keeps the number it was given, as in any
incremental build), and leaves no file of an earlier build's static search behind."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import KB_MAIN, REPO
from lxml import html as lxml_html
from search_files import kept, shard_data

from kb.errors import KbError
from kb.ids import card_id
from kb.pipeline import ingest_sources
from kb.site import build_site, builder, gather
from kb.site.builder import BuildReport
from kb.site.edits import EDIT_MAX, EDITS, edit_max
from kb.site.manifest import MANIFEST, load_record
from kb.site.search_cache import CACHE_DIR
from kb.store import Store
from kb.urls.paths import page_for_id, rule_page
from tests.test_site_per_page import ARTICLES, JA_CR, assert_same_site, page_of, wiki_page, write_wiki

PROSE = "竜巻ミョルニルの説明。"  # text with no reference: same links, same (CR:601.2f)
MORE_PROSE = "雷鳴の槌の補足。"
CARD_ARTICLE = "火力記事"  # an article mentioning a card, whose card page shows the sentence
CARD_SENTENCE = "《ショック/Shock》は2点のダメージを与える。"
RENAMED = "旧題記事"  # an article whose names change
CITER = "参照元記事"  # a second article linking to 対象記事 (after 連鎖記事 in the store's order)
NEIGHBOUR = "引用先記事"  # an article whose preview is in 引用記事's preview script (the same first character)
DATA = JA_CR.parent


def start(tmp_path: Path, store: Store, *more: Path) -> dict[str, Path]:
    """The sample's Japanese CR, :data:`ARTICLES`, :data:`CARD_ARTICLE`, :data:`RENAMED`, :data:`CITER`,
    :data:`NEIGHBOUR` and the sources ``more`` ingested and built into ``tmp_path/site`` (a first, full build); the
    articles' paths."""
    paths = write_wiki(tmp_path / "wiki", {**ARTICLES, CARD_ARTICLE: [], RENAMED: [], CITER: ["対象記事"], NEIGHBOUR: []})
    paths[CARD_ARTICLE].write_text(wiki_page(CARD_ARTICLE, [], CARD_SENTENCE), encoding="utf-8")
    assert not ingest_sources(store, [str(JA_CR), str(tmp_path / "wiki"), *map(str, more)], index=False).failed
    first = build_site(store, tmp_path / "site")
    assert not first.edit and page_of("引用記事") in first.rendered_pages
    return paths


def change(store: Store, path: Path, title: str, links: list[str], extra: str = "") -> None:
    """The article ``path`` rewritten (:func:`wiki_page`) and ingested again."""
    path.write_text(wiki_page(title, links, extra), encoding="utf-8")
    assert not ingest_sources(store, [str(path)], index=False).failed


def same_as_fresh(store: Store, site: Path, fresh: Path, *, search: bool = True, base_url: str | None = None) -> None:
    """A fresh full build of ``store`` into ``fresh`` (with ``base_url``) equals ``site``, the static search
    included unless a document was added since the first build (:func:`assert_same_site`: it keeps the number it
    was given then)."""
    report = build_site(store, fresh, base_url=base_url)
    assert not report.edit
    # no file of an earlier build's static search left behind: the delta meta.js names, the analyses a full build
    # keeps and those of the base records the delta stands for (search_files.kept)
    delta = shard_data(site / "search" / "meta.js", "meta").get("x")
    deltas = sorted(p.relative_to(site).as_posix() for p in site.glob("search/x/*"))
    assert deltas == ([f"search/{delta}.js"] if delta else [])
    assert {p.relative_to(site).as_posix() for p in site.glob(f"{CACHE_DIR}*")} == (
        {p.relative_to(fresh).as_posix() for p in fresh.glob(f"{CACHE_DIR}*")} | kept(site))
    assert_same_site(fresh, site, search=search)


def previews(site: Path, script: str) -> dict[str, str]:
    """The texts of the preview script ``script`` (``previews/….js``) of ``site``: page file name → preview."""
    text = (site / script).read_text(encoding="utf-8")
    return json.loads(text[text.index(",") + 1:].rstrip().removesuffix(");"))


def edited_only(report: BuildReport, titles: list[str], site: Path, text: str) -> None:
    """``report`` is an edit build that rendered the pages of ``titles`` and their preview scripts alone, whose
    previews of them hold ``text`` (of their new prose)."""
    assert report.edit, report
    pages = {page_of(t) for t in titles}
    scripts = set(report.rendered_pages) - pages
    assert pages <= set(report.rendered_pages) and len(scripts) <= len(titles), report.rendered_pages
    assert all(p.startswith("previews/") for p in scripts), report.rendered_pages
    shown = {key: preview for script in scripts for key, preview in previews(site, script).items()}
    for page in pages:
        assert text in shown[Path(page).stem], shown
    assert report.rendered == len(report.rendered_pages) and report.reused == report.pages - report.rendered


def test_a_prose_edit_makes_its_page_and_preview_alone(tmp_path):
    site = tmp_path / "site"
    with Store.open(tmp_path / "kb") as store:
        paths = start(tmp_path, store)
        change(store, paths["引用記事"], "引用記事", ARTICLES["引用記事"], PROSE)
        report = build_site(store, site)
        edited_only(report, ["引用記事"], site, "竜巻ミョルニル")
        assert len(report.rendered_pages) == 2, report.rendered_pages
        # the script's other preview, of an article the edit build read the names of alone, is whole
        (script,) = [p for p in report.rendered_pages if p.startswith("previews/")]
        assert previews(site, script)[NEIGHBOUR] == f"{NEIGHBOUR}は、呪文を唱えるときの記事。(CR:601.2f)"
        assert "竜巻ミョルニル" in (site / page_of("引用記事")).read_text(encoding="utf-8")
        same_as_fresh(store, site, tmp_path / "fresh")


def test_a_cited_article_keeps_the_list_of_who_cites_it(tmp_path):
    site = tmp_path / "site"
    with Store.open(tmp_path / "kb") as store:
        paths = start(tmp_path, store)
        change(store, paths["対象記事"], "対象記事", ARTICLES["対象記事"], PROSE)
        edited_only(build_site(store, site), ["対象記事"], site, "竜巻ミョルニル")
        page = lxml_html.fromstring((site / page_of("対象記事")).read_bytes())
        # (in the store's order: a fresh build's, which the site equals)
        assert sorted(a.text_content() for a in page.xpath('//details[@class="cited"]//a')) == sorted(["連鎖記事", CITER])
        assert "竜巻ミョルニル" in page.text_content()
        same_as_fresh(store, site, tmp_path / "fresh")


def test_two_articles_edited_at_once(tmp_path):
    site = tmp_path / "site"
    with Store.open(tmp_path / "kb") as store:
        paths = start(tmp_path, store)
        for title in ("引用記事", "連鎖記事"):
            paths[title].write_text(wiki_page(title, ARTICLES[title], PROSE), encoding="utf-8")
        assert not ingest_sources(store, [str(paths["引用記事"]), str(paths["連鎖記事"])], index=False).failed
        report = build_site(store, site)
        edited_only(report, ["引用記事", "連鎖記事"], site, "竜巻ミョルニル")
        same_as_fresh(store, site, tmp_path / "fresh")


@pytest.mark.parametrize(("links", "extra", "shows"), [
    ([], PROSE + "(CR:601.3)", rule_page("601.3")),  # a new rule cited: the rule's page lists it
    (["孤立記事"], PROSE, page_of("孤立記事")),  # a new article linked: its page lists it among who cites it
], ids=["rule", "article"])
def test_an_edit_that_adds_a_citation_makes_the_cited_page_again(tmp_path, links, extra, shows):
    """A new citation (of a rule, of an article) is still an edit build: the page showing who cites what it cites
    now is made again, from the entry linked complete."""
    site = tmp_path / "site"
    with Store.open(tmp_path / "kb") as store:
        paths = start(tmp_path, store)
        change(store, paths["引用記事"], "引用記事", links, extra)
        report = build_site(store, site)
        assert report.edit
        assert shows in report.rendered_pages
        assert "引用記事" in (site / shows).read_text(encoding="utf-8")
        same_as_fresh(store, site, tmp_path / "fresh")


def test_a_new_title_is_a_full_build(tmp_path):
    site = tmp_path / "site"
    with Store.open(tmp_path / "kb") as store:
        paths = start(tmp_path, store)
        change(store, paths[RENAMED], "新題記事", [], PROSE)  # the same file: the node wiki:旧題記事 is gone
        report = build_site(store, site)
        assert not report.edit and page_of("新題記事") in report.rendered_pages
        assert not (site / page_of(RENAMED)).exists()
        same_as_fresh(store, site, tmp_path / "fresh", search=False)  # 新題記事 is a new document


def test_a_new_english_name_is_a_full_build(tmp_path):
    """The same node (wiki:旧題記事), its prose and now an English name: its names changed, a full build."""
    site = tmp_path / "site"
    with Store.open(tmp_path / "kb") as store:
        paths = start(tmp_path, store)
        page = wiki_page(RENAMED, [], PROSE).replace(f"<b>{RENAMED}</b>は", f"<b>{RENAMED}</b>/<i>Old Title</i>は")
        paths[RENAMED].write_text(page, encoding="utf-8")
        assert not ingest_sources(store, [str(paths[RENAMED])], index=False).failed
        report = build_site(store, site)
        assert not report.edit and page_of(RENAMED) in report.rendered_pages
        assert "Old Title" in (site / page_of(RENAMED)).read_text(encoding="utf-8")
        same_as_fresh(store, site, tmp_path / "fresh")


def test_a_full_build_after_an_edit_build_makes_the_groups_it_touched(tmp_path):
    """The edit build left the run of article pages it made with no hash; a new article citing the edited one: a
    full build, which names every group again and shows the new citation on the edited article's page."""
    site = tmp_path / "site"
    with Store.open(tmp_path / "kb") as store:
        paths = start(tmp_path, store)
        change(store, paths["引用記事"], "引用記事", ARTICLES["引用記事"], PROSE)
        assert build_site(store, site).edit
        new = write_wiki(tmp_path / "new", {"新しい記事": ["引用記事"]})
        assert not ingest_sources(store, [str(new["新しい記事"])], index=False).failed
        report = build_site(store, site)
        assert not report.edit and {page_of("新しい記事"), page_of("引用記事")} <= set(report.rendered_pages)
        assert all(group["hash"] for group in load_record(site, MANIFEST)["groups"].values())
        page = lxml_html.fromstring((site / page_of("引用記事")).read_bytes())
        assert sorted(a.text_content() for a in page.xpath('//details[@class="cited"]//a')) == ["新しい記事", "連鎖記事"]
        same_as_fresh(store, site, tmp_path / "fresh", search=False)  # a new document


def test_a_full_build_after_an_edit_build_reverting_it_shows_the_old_text(tmp_path):
    """The edit build's prose taken back in a full build (with a new article: a full build): the run of article
    pages holding it is as it was before the edit build, which a full build must not take for unchanged."""
    site = tmp_path / "site"
    with Store.open(tmp_path / "kb") as store:
        paths = start(tmp_path, store)
        change(store, paths["引用記事"], "引用記事", ARTICLES["引用記事"], PROSE)
        assert build_site(store, site).edit
        paths["引用記事"].write_text(wiki_page("引用記事", ARTICLES["引用記事"]), encoding="utf-8")
        new = write_wiki(tmp_path / "new", {"新しい記事": []})
        assert not ingest_sources(store, [str(paths["引用記事"]), str(new["新しい記事"])], index=False).failed
        report = build_site(store, site)
        assert not report.edit and page_of("引用記事") in report.rendered_pages
        assert "竜巻ミョルニル" not in (site / page_of("引用記事")).read_text(encoding="utf-8")
        same_as_fresh(store, site, tmp_path / "fresh", search=False)  # 新しい記事 is a new document


def test_a_changed_card_mention_sentence_makes_the_card_page_again(tmp_path):
    """The sentence around a card's name changed: an edit build making the card's page (its mentions cut from the
    texts of every node citing it) and the card index again."""
    site = tmp_path / "site"
    card = page_for_id(card_id("Shock"))
    with Store.open(tmp_path / "kb") as store:
        paths = start(tmp_path, store)
        assert "2点のダメージ" in (site / card).read_text(encoding="utf-8")
        change(store, paths[CARD_ARTICLE], CARD_ARTICLE, [], CARD_SENTENCE.replace("2点", "3点"))
        report = build_site(store, site)
        assert report.edit and card in report.rendered_pages
        assert "3点のダメージ" in (site / card).read_text(encoding="utf-8")
        same_as_fresh(store, site, tmp_path / "fresh")


@pytest.mark.parametrize("sentence", ["《ショック/Shock》は3点のダメージを与える。",  # the mention changed
                                      "ショックは出てこない。",  # the mention gone (the card still cited by others)
                                      "《ショック/Shock》は速い。《ショック/Shock》は安い。"])  # two mentions now
def test_a_card_mentioned_by_many_takes_the_others_mentions_from_the_record(tmp_path, monkeypatch, sentence):
    """A card three articles mention, the middle one (in the store's order) edited: its page is made again with
    the others' citations and sentences as the previous build recorded them (their nodes are not read whole, as
    they were when every article mentioning a card was) and the edited one's in its place — as a full build makes
    it."""
    site = tmp_path / "site"
    card = page_for_id(card_id("Shock"))
    others = write_wiki(tmp_path / "more", {"ア記事": [], "龍記事": []})
    others["ア記事"].write_text(wiki_page("ア記事", [], "《ショック/Shock》は赤い。"), encoding="utf-8")
    others["龍記事"].write_text(wiki_page("龍記事", [], "《ショック/Shock》は軽い。"), encoding="utf-8")
    with Store.open(tmp_path / "kb") as store:
        paths = start(tmp_path, store, tmp_path / "more")
        page = (site / card).read_text(encoding="utf-8")
        assert page.index("赤い") < page.index("2点のダメージ") < page.index("軽い")  # in the store's order
        change(store, paths[CARD_ARTICLE], CARD_ARTICLE, [], sentence)
        read: list[str] = []  # the nodes link_edited reads whole

        def link_edited(store, site, *args):  # type: ignore[no-untyped-def]
            whole_node = site.whole_node
            site.whole_node = lambda key: (read.append(key.id), whole_node(key))[1]
            gather.link_edited(store, site, *args)
            site.whole_node = whole_node

        monkeypatch.setattr(builder, "link_edited", link_edited)
        report = build_site(store, site)
        assert report.edit and card in report.rendered_pages
        assert not {"wiki:ア記事", "wiki:龍記事"} & set(read), read
        monkeypatch.undo()
        same_as_fresh(store, site, tmp_path / "fresh")
        # and a second edit build takes the first's record
        change(store, paths[CARD_ARTICLE], CARD_ARTICLE, [], CARD_SENTENCE)
        assert build_site(store, site).edit
        same_as_fresh(store, site, tmp_path / "fresh2")


def test_prose_away_from_a_card_mention_is_an_edit(tmp_path):
    """The sentence around the card is the same (the new prose is a sentence of its own after it): an edit build,
    and the card page, kept, still equals a full build's."""
    site = tmp_path / "site"
    with Store.open(tmp_path / "kb") as store:
        paths = start(tmp_path, store)
        change(store, paths[CARD_ARTICLE], CARD_ARTICLE, [], CARD_SENTENCE + PROSE)
        report = build_site(store, site)
        edited_only(report, [CARD_ARTICLE], site, "竜巻ミョルニル")
        assert page_for_id(card_id("Shock")) not in report.rendered_pages
        same_as_fresh(store, site, tmp_path / "fresh")


def test_kb_update_of_one_prose_edited_article(tmp_path):
    kb_dir, site = tmp_path / "kb", tmp_path / "site"
    with Store.open(kb_dir) as store:
        paths = start(tmp_path, store)
    paths["引用記事"].write_text(wiki_page("引用記事", ARTICLES["引用記事"], PROSE), encoding="utf-8")
    proc = subprocess.run([sys.executable, "-c", KB_MAIN, "--kb-dir", str(kb_dir), "update", str(paths["引用記事"]),
                           "--out", str(site)], capture_output=True, text=True, timeout=120, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "stored 1 changed source(s);" in proc.stdout, proc.stdout
    assert f"in {site.resolve()} (2 rendered, " in proc.stdout, proc.stdout  # the page and its preview script
    # the edit build marked the run of article pages it made again (hash ""): the next full build names it again
    groups = load_record(site, MANIFEST)["groups"]
    assert [name for name, group in groups.items() if group["hash"] == ""] == ["article pages 0"], groups.keys()
    assert "竜巻ミョルニル" in (site / page_of("引用記事")).read_text(encoding="utf-8")
    with Store.open(kb_dir) as store:
        same_as_fresh(store, site, tmp_path / "fresh")


def test_two_edit_builds_in_a_row(tmp_path):
    site = tmp_path / "site"
    with Store.open(tmp_path / "kb") as store:
        paths = start(tmp_path, store)
        steps = ((PROSE, "竜巻ミョルニル"), (PROSE + MORE_PROSE, "雷鳴の槌"), ("", "記事。(CR:601.2f)"))  # then back
        for step, (prose, new) in enumerate(steps):
            change(store, paths["引用記事"], "引用記事", ARTICLES["引用記事"], prose)
            edited_only(build_site(store, site), ["引用記事"], site, new)
            same_as_fresh(store, site, tmp_path / f"fresh{step}")


def test_successive_edits_of_two_articles_make_each_once(tmp_path):
    """An edit build leaves the record of what it made: the next edit build (another article) makes the other
    article alone, and a build with nothing changed after it makes nothing."""
    site = tmp_path / "site"
    with Store.open(tmp_path / "kb") as store:
        paths = start(tmp_path, store)
        change(store, paths["引用記事"], "引用記事", ARTICLES["引用記事"], PROSE)
        edited_only(build_site(store, site), ["引用記事"], site, "竜巻ミョルニル")
        change(store, paths["孤立記事"], "孤立記事", ARTICLES["孤立記事"], MORE_PROSE)
        second = build_site(store, site)
        edited_only(second, ["孤立記事"], site, "雷鳴の槌")
        assert page_of("引用記事") not in second.rendered_pages
        again = build_site(store, site)
        assert not again.edit and again.rendered_pages == [] and again.search_written == 0
        same_as_fresh(store, site, tmp_path / "fresh")


SECTION = '<a name="tatsumaki" id="tatsumaki"></a><h2><span class="mw-headline" id="tatsumaki">竜巻の節</span></h2>'
REAL_EDITS = {  # the sample's MTG Wiki page 唱える: (what is replaced, by what)
    "sentence": ("これらの手順を完了することで、呪文は唱えられたことになる。",
                 "これらの手順を完了することで、呪文は唱えられたことになる。" + PROSE),
    "section": ('<a name=".E5.94.B1', f"{SECTION}<p>{PROSE}</p>\n" + '<a name=".E5.94.B1'),  # before 唱える領域…
}
NEW_DOCUMENT = {"section"}  # the edits that add a document to the static search (the new section)


@pytest.mark.parametrize("edit", REAL_EDITS)
def test_a_long_real_article_edited(tmp_path, edit):
    """The sample's MTG Wiki page 唱える (sections, each a document of the static search; many links; the glossary
    term 唱える paired with it): a sentence added to a paragraph, or a new section, is an edit build."""
    site = tmp_path / "site"
    real = tmp_path / "real" / "唱える.html"
    real.parent.mkdir()
    page = (DATA / "mtgwiki" / "唱える.html").read_text(encoding="utf-8")
    real.write_text(page, encoding="utf-8")
    was, now = REAL_EDITS[edit]
    assert page.count(was) == 1
    with Store.open(tmp_path / "kb") as store:
        start(tmp_path, store, real)
        real.write_text(page.replace(was, now), encoding="utf-8")
        assert not ingest_sources(store, [str(real)], index=False).failed
        report = build_site(store, site)
        assert report.edit and page_of("唱える") in report.rendered_pages, report
        assert "竜巻ミョルニル" in (site / page_of("唱える")).read_text(encoding="utf-8")
        same_as_fresh(store, site, tmp_path / "fresh", search=edit not in NEW_DOCUMENT)


def test_a_release_note_edit_is_a_full_build(tmp_path):
    """Only articles' pages are made by an edit build: a release note's prose changed is a full build."""
    site = tmp_path / "site"
    note = tmp_path / "notes" / "zendikar-rising.html"
    note.parent.mkdir()
    page = (DATA / "release-notes" / "zendikar-rising.html").read_text(encoding="utf-8")
    note.write_text(page, encoding="utf-8")
    with Store.open(tmp_path / "kb") as store:
        start(tmp_path, store, note)
        sentence = "この条件は、あなたのパーティーを構成しているクリーチャーの総数が４体である場合に成立する。"
        assert page.count(sentence) == 1
        note.write_text(page.replace(sentence, sentence + PROSE), encoding="utf-8")
        assert not ingest_sources(store, [str(note)], index=False).failed
        report = build_site(store, site)
        assert not report.edit and any(p.startswith("notes/") for p in report.rendered_pages), report
        same_as_fresh(store, site, tmp_path / "fresh")


def test_more_edited_articles_than_an_edit_build_makes_is_a_full_build(tmp_path):
    """:data:`kb.site.edits.EDIT_MAX` articles edited: an edit build; one more: a full build. (Each edit swaps one
    sentence for another as long: an incremental build keeps the static search's shard counts, which a fresh build
    of much more text would choose otherwise.)"""
    site = tmp_path / "site"
    titles = [f"一括記事{i:02}" for i in range(EDIT_MAX + 1)]
    bulk = write_wiki(tmp_path / "bulk", dict.fromkeys(titles, []))
    for title in titles:
        bulk[title].write_text(wiki_page(title, [], MORE_PROSE), encoding="utf-8")
    with Store.open(tmp_path / "kb") as store:
        start(tmp_path, store, tmp_path / "bulk")
        for count, prose, edit in ((EDIT_MAX, "竜巻ミョルニル。", True), (EDIT_MAX + 1, "旋風ミョルニル。", False)):
            for title in titles[:count]:
                bulk[title].write_text(wiki_page(title, [], prose), encoding="utf-8")
            assert not ingest_sources(store, [str(bulk[t]) for t in titles[:count]], index=False).failed
            report = build_site(store, site)
            assert report.edit == edit
            if edit:
                edited_only(report, titles[:count], site, prose)
            same_as_fresh(store, site, tmp_path / f"fresh{count}")


def test_a_new_base_url_is_a_full_build(tmp_path):
    """An edit build needs the previous build's base URL: with another (and a prose edit), a full build."""
    site = tmp_path / "site"
    with Store.open(tmp_path / "kb") as store:
        paths = start(tmp_path, store)
        change(store, paths["引用記事"], "引用記事", ARTICLES["引用記事"], PROSE)
        report = build_site(store, site, base_url="https://example.org/rules/")
        assert not report.edit
        change(store, paths["引用記事"], "引用記事", ARTICLES["引用記事"], MORE_PROSE)
        edited_only(build_site(store, site, base_url="https://example.org/rules/"), ["引用記事"], site, "雷鳴の槌")
        assert 'href="https://example.org/rules/' in (site / page_of("引用記事")).read_text(encoding="utf-8")
        same_as_fresh(store, site, tmp_path / "fresh", base_url="https://example.org/rules/")


def test_a_rules_block_is_shown_on_the_parts_near_it_alone(tmp_path):
    """An edit build looks for the rule parts showing a rule among its chapter's, section's and family's
    (``pages._parts_near``): every rule part of the sample CR shows only rules it is near."""
    from kb.site import pages
    from kb.site.gather import gather_site

    with Store.open(tmp_path / "kb") as store:
        assert not ingest_sources(store, [str(JA_CR)], index=False).failed
        site = gather_site(store)
    above = pages._ancestry(site)
    shown: set[str] = set()
    for name, made, _ in pages._rule_parts(site):
        for number in pages._numbers_shown(made):
            assert name in pages._parts_near(above, number), (name, number)
            shown.add(number)
    assert shown == set(site.rules)  # every rule's block is on some page


def test_an_edit_build_follows_only_the_build_whose_record_it_reads(tmp_path):
    """A build of other producers leaves no edit record, and its stamp is another: the next build (an edit since the
    record's build, not since this one) is a full build — an edit build from a record older than the site would keep
    the pages the builds between changed."""
    from kb.site.builder import english_redirect_group
    from kb.site.pages import PAGE_PRODUCERS

    site = tmp_path / "site"
    with Store.open(tmp_path / "kb") as store:
        paths = start(tmp_path, store)
        change(store, paths["引用記事"], "引用記事", [*ARTICLES["引用記事"], "孤立記事"], PROSE)
        other = build_site(store, site, producers=[*PAGE_PRODUCERS, english_redirect_group])
        assert not other.edit and page_of("孤立記事") in other.rendered_pages
        change(store, paths["引用記事"], "引用記事", ARTICLES["引用記事"], PROSE)  # 孤立記事 no longer cited
        report = build_site(store, site)
        assert not report.edit and page_of("孤立記事") in report.rendered_pages
        same_as_fresh(store, site, tmp_path / "fresh")


def test_a_missing_shard_of_the_record_makes_a_full_build(tmp_path):
    """What an edited article gave other pages is in a shard of the record: without it nothing tells which pages the
    edit changed, so the build is a full one (and the site whole)."""
    from kb.site.edits import EDITS_DIR

    site = tmp_path / "site"
    with Store.open(tmp_path / "kb") as store:
        paths = start(tmp_path, store)
        shards = sorted((site / EDITS_DIR).glob("n-*.marshal"))
        assert len(shards) == 256
        for shard in shards:  # every node's: the edited article's among them
            shard.unlink()
        change(store, paths["引用記事"], "引用記事", [*ARTICLES["引用記事"], "孤立記事"], PROSE)
        report = build_site(store, site)
        assert not report.edit and page_of("孤立記事") in report.rendered_pages
        same_as_fresh(store, site, tmp_path / "fresh")


def test_an_edit_build_writes_nothing_through_a_symbolic_link_on_its_way(tmp_path):
    """An edit build looks at the files it touches one by one instead of scanning the site: a folder it writes in
    that became a symbolic link is refused all the same, and nothing is written through it."""
    with Store.open(tmp_path / "kb") as store:
        paths = start(tmp_path, store)
        site, outside = tmp_path / "site", tmp_path / "outside"
        folder = (site / page_of("引用記事")).parent
        folder.rename(outside)
        folder.symlink_to(outside, target_is_directory=True)
        before = {p: p.read_bytes() for p in outside.rglob("*") if p.is_file()}
        change(store, paths["引用記事"], "引用記事", [], PROSE)
        with pytest.raises(KbError, match=r": a symbolic link inside the site; kb writes nothing through one"):
            build_site(store, site)
        assert {p: p.read_bytes() for p in outside.rglob("*") if p.is_file()} == before
        folder.unlink()
        outside.rename(folder)
        assert build_site(store, site).edit


REMOVED_SECTION = re.compile(r'<a name="\.E5\.94\.B1[^"]*" id="[^"]*"></a><h2>.*?</h2>', re.S)  # 唱える領域…: its
# text joins the section before it


@pytest.mark.parametrize("edit", [*REAL_EDITS, "section removed"])
def test_an_edit_builds_static_search_is_a_full_builds_from_the_same_site(tmp_path, edit):
    """An edit build takes the static search's chunks holding no document of an edited article as the previous
    build left them, unlooked at: its search files and state are those a full build from the same site makes (the
    record of edits taken away: the same previous build, so the same document numbers), whether the edit adds,
    keeps or removes a section (a document)."""
    site, other = tmp_path / "site", tmp_path / "other"
    real = tmp_path / "real" / "唱える.html"
    real.parent.mkdir()
    page = (DATA / "mtgwiki" / "唱える.html").read_text(encoding="utf-8")
    real.write_text(page, encoding="utf-8")
    if edit == "section removed":
        edited, removed = REMOVED_SECTION.subn("", page)
        assert removed == 1
    else:
        was, now = REAL_EDITS[edit]
        edited = page.replace(was, now)
    with Store.open(tmp_path / "kb") as store:
        start(tmp_path, store, real)
        real.write_text(edited, encoding="utf-8")
        assert not ingest_sources(store, [str(real)], index=False).failed
        shutil.copytree(site, other)
        (other / EDITS).unlink()
        assert build_site(store, site).edit and not build_site(store, other).edit
    ours = {p.relative_to(site) for p in site.rglob("search/**/*") if p.is_file()}
    assert ours == {p.relative_to(other) for p in other.rglob("search/**/*") if p.is_file()}
    assert all((site / rel).read_bytes() == (other / rel).read_bytes() for rel in ours)
    assert load_record(site, MANIFEST)["search"] == load_record(other, MANIFEST)["search"]


def test_a_larger_wiki_takes_more_edits_in_an_edit_build():
    """A full build costs more as the wiki grows, an edit build about the same per edit: up to one edited node in a
    hundred of the wiki's (at 20,000 articles 200 prose edits took 15–25 s as an edit build, 252 took 33 s as a full
    one), never fewer than EDIT_MAX."""
    assert edit_max(0) == edit_max(3_200) == EDIT_MAX
    assert edit_max(6_326) == 63 and edit_max(25_145) == 251
