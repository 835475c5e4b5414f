"""The site builder: every internal link and anchor resolves (checked here independently, by parsing the HTML with
lxml), --strict and atomic swap, incremental rebuilds equal to full builds, bilingual pages, the 2026-01-16 English CR."""

from __future__ import annotations

import filecmp
import json
import os
import shutil
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from conftest import copy_kb
from lxml import html as lxml_html
from search_files import BUILD_RECORDS, exported_files, kept, same_built_file

from kb.errors import KbError
from kb.pipeline import ingest_sources
from kb.site import build_site
from kb.site.pages import PAGE_PRODUCERS, Page
from kb.store import Store

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "data"
JA_CR = DATA / "JPN_CR_20231117_0.txt"


def site_links(site: Path) -> tuple[list[str], int]:
    """Broken internal links of a built site, found by parsing every page; and how many links were checked. Each
    (folder, path) is resolved and looked up once (the header's links repeat on every page of a folder)."""
    root = site.resolve()
    ids: dict[Path, set[str]] = {}
    links: list[tuple[Path, str]] = []
    for page in sorted(root.rglob("*.html")):
        tree = lxml_html.fromstring(page.read_bytes())
        ids[page] = set(tree.xpath("//@id"))
        links += [(page, link) for link in tree.xpath("//@href|//@src")]
    broken, checked = [], 0
    targets: dict[tuple[Path, str], Path] = {}
    inside: dict[Path, bool] = {}  # a file of the site
    for page, link in links:
        parts = urlsplit(link)
        if parts.scheme in ("http", "https", "mailto", "data"):
            continue
        checked += 1
        assert not link.startswith("/"), f"{page}: absolute link {link}"
        if not parts.path:
            target = page
        elif (target := targets.get((page.parent, parts.path))) is None:
            target = targets[page.parent, parts.path] = (page.parent / unquote(parts.path)).resolve()
        if (found := inside.get(target)) is None:
            found = inside[target] = target.is_file() and root in target.parents
        if not found:
            broken.append(f"{page.relative_to(root)}: {link}")
        elif parts.fragment and target.suffix == ".html" and unquote(parts.fragment) not in ids[target]:
            broken.append(f"{page.relative_to(root)}: {link} (anchor)")
    return broken, checked


@pytest.fixture(scope="module")
def sample_kb(tmp_path_factory, data_kb) -> Path:
    """data/ ingested, for this module (a copy of ``data_kb``)."""
    return copy_kb(data_kb, tmp_path_factory.mktemp("sample") / "kb")


@pytest.fixture(scope="module")
def sample_site(tmp_path_factory, data_site) -> Path:
    """The site of ``sample_kb``, for this module (a copy of ``data_site``, built from ``sample_kb``'s original: no
    broken link)."""
    return Path(shutil.copytree(data_site, tmp_path_factory.mktemp("sample-site") / "site"))


def test_sample_site_links_and_anchors_all_resolve(sample_site):
    broken, checked = site_links(sample_site)
    assert broken == []
    assert checked > 500


def test_sample_site_pages(sample_site):
    home = (sample_site / "index.html").read_text(encoding="utf-8")
    assert '<html lang="ja">' in home and "20231117.0" in home and "2023-11-17" in home
    section = lxml_html.fromstring((sample_site / "cr" / "601.html").read_bytes())
    rule = section.get_element_by_id("601.2f")
    assert "総コスト" in rule.text_content()
    # 601.2 links its reference 601.2a-d to 601.2a; the preview text of every rule of 601 is in previews/601.js
    ref = next(a for a in section.get_element_by_id("601.2").iter("a") if a.text == "601.2a-d")
    assert ref.get("href") == "../cr/601.html#601.2a"
    previews = (sample_site / "previews" / "601.js").read_text(encoding="utf-8")
    assert previews.startswith('window.__kbSearch("pv/601",')
    texts = json.loads(previews[len('window.__kbSearch("pv/601",'):].rstrip().removesuffix(");"))
    assert texts["601.2a"].startswith("呪文を唱えることを提示する場合") and texts["601"] == "呪文を唱えること"
    # what cites 601.2f: rules and the MTG Wiki article
    cited = " ".join(a.text_content() for a in rule.xpath('.//details[@class="cited"]//a'))
    assert "601.2b" in cited and "唱える" in cited
    assert (sample_site / "cr" / "601.2f.html").is_file()
    for page in sample_site.rglob("*.html"):
        tree = lxml_html.fromstring(page.read_bytes())
        assert tree.get("lang") == "ja"
        assert tree.findtext(".//title").strip()
        assert tree.xpath('//meta[@name="description"]/@content')[0].strip()
        for el in tree.xpath("//script[@src]|//link[@href]|//img[@src]"):
            src = el.get("src") or el.get("href")
            assert not urlsplit(src).scheme or src.startswith("data:"), f"{page}: loads {src} from outside"
    sitemap = (sample_site / "sitemap.xml").read_text(encoding="utf-8")
    assert "cr/601.html" in sitemap and "404.html" not in sitemap


def test_glossary_in_gojuon_order_with_term_links(sample_site):
    index = lxml_html.fromstring((sample_site / "glossary" / "index.html").read_bytes())
    rows = {h.text: [a.text for a in h.getnext().iter("a")] for h in index.iter("h2")}
    assert list(rows) == sorted(rows, key="あかさたなはまやらわ".find)
    assert "裏向き" in rows["あ"] and "唱える" in rows["た"] and "総コスト" in rows["さ"]  # kanji by their reading
    assert rows["た"].index("特別な処理") < rows["た"].index("唱える")  # とく < となえる
    rule = lxml_html.fromstring((sample_site / "cr" / "701.html").read_bytes()).get_element_by_id("701.34a")
    terms = [a.get("href") for a in rule.xpath('.//a[contains(@class, "ref-term")]')]
    assert "../glossary/%E8%A3%8F%E5%90%91%E3%81%8D.html" in terms  # 裏向き


def test_wiki_links_point_here_or_to_mtgwiki(sample_site):
    article = lxml_html.fromstring((sample_site / "wiki" / "唱える.html").read_bytes())
    hrefs = [a.get("href") for a in article.xpath('//div[@class="article"]//a')]
    assert hrefs and all(h.startswith(("https://mtgwiki.com/wiki/", "../", "http", "#")) for h in hrefs)
    assert not article.xpath('//div[@class="article"]//img')


def _page(site: Path, href: str, from_folder: str) -> Path:
    return (site / from_folder / unquote(urlsplit(href).path)).resolve()


def test_wiki_links_stay_inside_the_site(sample_site):
    """What the site has, the article links here: glossary terms, cards, its own sections and footnotes; mtgwiki.com
    only for articles the site lacks."""
    path = sample_site / "wiki" / "唱える.html"
    article = lxml_html.fromstring(path.read_bytes()).xpath('//div[@class="article"]')[0]
    by_text = {a.text_content(): a.get("href") for a in article.iter("a")}
    for term in ("総コスト", "優先権"):
        assert _page(sample_site, by_text[term], "wiki") == (sample_site / "glossary" / f"{term}.html").resolve()
    card = by_text["ドライアドの東屋/Dryad Arbor"]
    assert _page(sample_site, card, "wiki").parent.name == "cards" and _page(sample_site, card, "wiki").is_file()
    outside = [unquote(h.split("/wiki/", 1)[1]) for h in by_text.values() if h.startswith("https://mtgwiki.com/wiki/")]
    assert outside and not {"総コスト", "優先権", "唱える"} & {t.replace("_", " ") for t in outside}
    # in-page links: section links and footnotes [1]–[4] and their ↑ back-links land on ids of this page
    ids = set(article.xpath("//@id"))
    in_page = [(a.text_content(), a.get("href")) for a in article.iter("a") if a.get("href", "").startswith("#")]
    assert {"[1]", "[2]", "[3]", "[4]", "↑", "定義"} <= {text for text, _ in in_page}
    assert all(unquote(h[1:]) in ids for _, h in in_page), in_page
    assert "定義" in ids and "cite_note-1" in ids and "cite_ref-4" in ids
    text = article.text_content()
    assert "’’’" not in text and "#定義" not in text and "呪文の提示(1-5)" in text


def test_glossary_term_and_article_link_both_ways(sample_site):
    term = lxml_html.fromstring((sample_site / "glossary" / "唱える.html").read_bytes())
    (to_article,) = term.xpath('//p[@class="see-also"]/a/@href')
    assert _page(sample_site, to_article, "glossary") == (sample_site / "wiki" / "唱える.html").resolve()
    article = lxml_html.fromstring((sample_site / "wiki" / "唱える.html").read_bytes())
    (to_term,) = article.xpath('//p[@class="see-also"]/a/@href')
    assert _page(sample_site, to_term, "wiki") == (sample_site / "glossary" / "唱える.html").resolve()


def test_release_notes_link_cards_and_have_titles(sample_site):
    notes = {p: lxml_html.fromstring(p.read_bytes()) for p in (sample_site / "notes").glob("*.html")}
    notes = {p: tree for p, tree in notes.items() if not tree.xpath('//meta[@http-equiv="refresh"]')}  # not redirects
    titles = [tree.findtext(".//h1") for tree in notes.values()]
    assert not [t for t in titles if "notes-" in t], titles  # no raw ids
    assert "ゼンディカーの夜明け：《玻璃池のミミック》について" in titles
    home = lxml_html.fromstring((sample_site / "index.html").read_bytes())
    assert not [a.text for a in home.iter("a") if "notes-" in (a.text or "")]
    (dfc,) = [tree for tree in notes.values() if tree.findtext(".//h1") == "両面カードに関する一般的な情報"]
    cards = {a.text: a.get("href") for a in dfc.xpath('//a[contains(@class, "ref-card")]')}
    assert set(cards) == {"セジーリの防護", "セジーリの氷河"}
    assert _page(sample_site, cards["セジーリの防護"], "notes") == (sample_site / "cards" / "セジーリの防護.html").resolve()


def test_old_urls_redirect_to_the_new_ones(sample_site):
    old = sample_site / "notes" / "ゼンディカーの夜明け~3a_パーティ.html"  # the previous scheme's name
    tree = lxml_html.fromstring(old.read_bytes())
    (refresh,) = tree.xpath('//meta[@http-equiv="refresh"]/@content')
    new = _page(sample_site, refresh.split("url=", 1)[1], "notes")
    assert new == (sample_site / "notes" / "ゼンディカーの夜明け_パーティ.html").resolve() and new.is_file()
    assert (sample_site / "cards" / "dryad-arbor.html").is_file() and (sample_site / "cards" / "_dryad-_arbor.html").is_file()
    sitemap = (sample_site / "sitemap.xml").read_text(encoding="utf-8")
    assert "dryad-arbor.html" in sitemap and "_dryad-_arbor" not in sitemap
    # the URL a person would type, when the name has punctuation: a redirect too
    typed = lxml_html.fromstring((sample_site / "cards" / "sigardas-aid.html").read_bytes())
    (refresh,) = typed.xpath('//meta[@http-equiv="refresh"]/@content')
    assert _page(sample_site, refresh.split("url=", 1)[1], "cards").name.startswith("sigardas-aid~")


def test_card_pages_show_each_mention_in_its_sentence(sample_site):
    card = lxml_html.fromstring((sample_site / "cards" / "セジーリの防護.html").read_bytes())
    mentions = card.xpath('//ul[@class="mentions"]/li')
    sentences = [li.xpath('string(p[@class="mention"])') for li in mentions]
    assert len(mentions) == 2
    assert "墓地の中では《セジーリの防護》の特性のみを持つ。" in sentences[0]
    assert all(li.xpath('p/mark')[0].text == "セジーリの防護" for li in mentions)
    assert all(_page(sample_site, li.xpath("a/@href")[0], "cards").parent.name == "notes" for li in mentions)
    # cards are listed on their own index, not on the home page
    home = lxml_html.fromstring((sample_site / "index.html").read_bytes())
    assert not home.xpath('//a[contains(@href, "cards/") and not(contains(@href, "cards/index.html"))]')
    index = lxml_html.fromstring((sample_site / "cards" / "index.html").read_bytes())
    assert "セジーリの防護" in [a.text for a in index.xpath('//a[contains(@class, "ref-card")]')]


def test_noop_rebuild_renders_nothing(sample_kb, sample_site):
    with Store.open(sample_kb) as store:
        report = build_site(store, sample_site)
    assert report.rendered == 0 and report.search_written == 0 and report.reused == report.pages


def broken_page(site):
    yield Page("broken.html", "404.html", "x", "x", {"site": {}})


def test_strict_failure_leaves_previous_site_untouched(sample_kb, tmp_path):
    out = tmp_path / "site"
    with Store.open(sample_kb) as store:
        build_site(store, out)
        before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
        # the 404 page links to index.html relative to the root: from a page one folder down it breaks
        with pytest.raises(KbError, match="strict"):
            build_site(store, out, strict=True, producers=[*PAGE_PRODUCERS, lambda s: [
                Page("cr/broken.html", "404.html", "x", "x", {})]])
        with pytest.raises(KbError, match="unresolved"):
            build_site(store, out, strict=True)  # the sample cites rules outside its excerpt
    after = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before
    assert [p.name for p in tmp_path.glob(".site.*")] == [".site.lock"]  # no staging folder left: only the lock


def test_refuses_to_replace_a_foreign_folder(sample_kb, tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "thesis.txt").write_text("precious")
    with Store.open(sample_kb) as store, pytest.raises(KbError, match="not a site built by kb"):
        build_site(store, tmp_path / "mine")
    assert (tmp_path / "mine" / "thesis.txt").read_text() == "precious"


def test_incremental_rebuild_equals_full_build(tmp_path):
    cr = tmp_path / "JPN_CR_20231117_0.txt"
    text = JA_CR.read_text(encoding="utf-8-sig")
    cr.write_text(text, encoding="utf-8")
    kb_dir = tmp_path / "kb"
    with Store.open(kb_dir) as store:
        ingest_sources(store, [str(cr)], index=False)
        first = build_site(store, tmp_path / "site")
        old = "プレイヤーはその呪文の総コストを決定する。"
        assert old in text
        cr.write_text(text.replace(old, "プレイヤーはその呪文の総コストを決定する。竜巻ミョルニル。"), encoding="utf-8")
        ingest_sources(store, [str(cr)], index=False)
        second = build_site(store, tmp_path / "site")
        assert 0 < second.rendered <= 4  # the section page, the rule's page, its parent rule's page, the previews
        assert 0 < second.search_written < first.search_files / 4
        build_site(store, tmp_path / "full")  # a full build to compare the incremental one with
    assert "竜巻ミョルニル" in (tmp_path / "site" / "cr" / "601.html").read_text(encoding="utf-8")
    assert "竜巻ミョルニル" in (tmp_path / "site" / "cr" / "601.2f.html").read_text(encoding="utf-8")
    for path in (tmp_path / "full").rglob("*"):
        rel = path.relative_to(tmp_path / "full")
        if path.is_file() and path.name not in BUILD_RECORDS and rel.parts[:2] != ("search", "v"):
            assert same_built_file(path, tmp_path / "site" / rel, rel), rel
    for path in (tmp_path / "full" / "search").glob("v/*"):  # the vocabulary only grows between full builds
        assert (tmp_path / "site" / "search" / "v" / path.name).is_file()


@pytest.fixture(scope="module")
def english_site(corpus_dir, tmp_path_factory) -> Path:
    kb_dir = tmp_path_factory.mktemp("en-kb")
    with Store.open(kb_dir) as store:
        ingest_sources(store, [str(corpus_dir / "MagicCompRules-2026-01-16.txt")], index=False)
        out = tmp_path_factory.mktemp("en-site") / "site"
        report = build_site(store, out)
    assert report.pages > 3900  # 9 chapters, 146 sections, 3,114 rules, 725 terms and the index pages
    return out


@pytest.mark.slow
def test_english_cr_site_links_all_resolve(english_site):
    broken, checked = site_links(english_site)
    assert broken == []
    assert checked > 20000
    section = lxml_html.fromstring((english_site / "cr" / "601.html").read_bytes())
    assert "total cost" in section.get_element_by_id("601.2f").text_content()


def test_bilingual_rules_and_terms(corpus_dir, tmp_path):
    with Store.open(tmp_path / "kb") as store:
        ingest_sources(store, [str(JA_CR), str(corpus_dir / "MagicCompRules-2023-11-17.txt")], index=False)
        build_site(store, tmp_path / "site")
    site = tmp_path / "site"
    rule = lxml_html.fromstring((site / "cr" / "601.html").read_bytes()).get_element_by_id("601.2f")
    texts = {div.get("lang"): div.text_content() for div in rule.xpath('.//div[starts-with(@class, "text ")]')}
    assert "総コスト" in texts["ja"] and "total cost" in texts["en"]
    assert "secondary" in rule.xpath('.//div[starts-with(@class, "text ") and @lang="en"]')[0].get("class")
    term = lxml_html.fromstring((site / "glossary" / "唱える.html").read_bytes())
    assert "Cast" in term.findtext(".//h1/span") and term.xpath('//div[starts-with(@class, "text ") and @lang="en"]')
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "2023年11月17日発効の総合ルール" in home and "英語原文（公式）の版" in home  # dated, not a bare id


@pytest.mark.slow
def test_unchanged_inputs_touch_nothing_and_a_deleted_file_is_rebuilt(sample_kb, tmp_path):
    out = tmp_path / "site"
    with Store.open(sample_kb) as store:
        build_site(store, out)
        before = {p: p.stat().st_ino for p in out.rglob("*") if p.is_file()}
        again = build_site(store, out)
        assert {p: p.stat().st_ino for p in out.rglob("*") if p.is_file()} == before  # not even re-linked
        assert again.rendered == 0 and again.reused == again.pages
        (out / "cr" / "601.html").unlink()
        repaired = build_site(store, out)
    assert repaired.rendered == 1 and (out / "cr" / "601.html").is_file()


@pytest.mark.slow
def test_incremental_rebuild_equals_full_build_with_two_versions(tmp_path):
    """With histories and 更新履歴 pages in: editing one rule and one glossary entry of the newer version re-renders
    a few pages (the term's preview shard among them), and the result equals a full build."""
    text = JA_CR.read_text(encoding="utf-8-sig")
    later = text.replace("和訳 20231117.0 版", "和訳 20240301.0 版").replace("2023-11-17", "2024-03-01")
    later = later.replace("2023-11-18", "2024-03-01")  # the translator line
    newer = tmp_path / "JPN_CR_20240301.txt"
    newer.write_text(later.replace("通常、そのマナ・コストだけである。", "通常、そのマナ・コストのみである。"), encoding="utf-8")
    kb_dir, site = tmp_path / "kb", tmp_path / "site"
    with Store.open(kb_dir) as store:
        ingest_sources(store, [str(JA_CR), str(newer)], index=False)
        first = build_site(store, site)
        assert (site / "changes" / "feed.xml").is_file()
        term_old = "スタックに積み、コストを支払うこと。"
        edited = later.replace("通常、そのマナ・コストだけである。", "通常、そのマナ・コストのみになる。")
        newer.write_text(edited.replace(term_old, "スタックに置き、コストを支払うこと。"), encoding="utf-8")
        ingest_sources(store, [str(newer)], index=False)
        second = build_site(store, site)
        build_site(store, tmp_path / "full")  # a full build to compare the incremental one with
    # the rule's section and pages, the term's page, two preview shards, the 更新履歴 page, index and feed
    assert 0 < second.rendered <= 12 < first.pages / 5
    shard = (site / "previews" / f"gl-{ord('唱'):x}.js").read_text(encoding="utf-8")
    assert "スタックに置き" in json.loads(shard[shard.index(",") + 1:shard.rindex(")")])["唱える"]
    for path in (tmp_path / "full").rglob("*"):
        rel = path.relative_to(tmp_path / "full")
        if path.is_file() and path.name not in BUILD_RECORDS and rel.parts[:2] != ("search", "v"):
            assert same_built_file(path, site / rel, rel), rel


def test_another_producer_is_not_mistaken_for_unchanged_inputs(sample_kb, tmp_path):
    out = tmp_path / "site"
    with Store.open(sample_kb) as store:
        build_site(store, out, producers=[*PAGE_PRODUCERS, lambda s: [Page("extra.html", "404.html", "one", "x", {})]])
        again = build_site(store, out, producers=[*PAGE_PRODUCERS, lambda s: [Page("extra.html", "404.html", "two", "x", {})]])
    assert again.rendered == 1 and "two |" in (out / "extra.html").read_text(encoding="utf-8")

    def made_by_one_factory(title):  # the same code: only the value closed over differs
        return lambda s: [Page("extra.html", "404.html", title, "x", {})]

    with Store.open(sample_kb) as store:
        third = build_site(store, out, producers=[*PAGE_PRODUCERS, made_by_one_factory("three")])
        fourth = build_site(store, out, producers=[*PAGE_PRODUCERS, made_by_one_factory("four")])
    assert third.rendered == fourth.rendered == 1 and "four |" in (out / "extra.html").read_text(encoding="utf-8")


@pytest.mark.slow
def test_a_build_with_nothing_changed_is_recognised_by_another_process(sample_kb, tmp_path):
    """The inputs fingerprint is the same in every process (string hashing differs per process: PYTHONHASHSEED), so
    a second ``kb build`` as a new process takes the fast path and renders nothing."""
    import os
    import subprocess
    import sys

    out = tmp_path / "site"
    runs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-m", "kb.cli", "--kb-dir", str(sample_kb), "build", "--out", str(out)],
                              capture_output=True, text=True, env=env, cwd=REPO, timeout=300)
        assert done.returncode == 0, done.stderr
        runs.append(done.stdout)
    assert "0 rendered" not in runs[0] and "(0 rendered" in runs[1], runs
    inodes = {p: p.stat().st_ino for p in out.rglob("*") if p.is_file()}
    env = {**os.environ, "PYTHONHASHSEED": "3"}
    subprocess.run([sys.executable, "-m", "kb.cli", "--kb-dir", str(sample_kb), "build", "--out", str(out)],
                   check=True, capture_output=True, env=env, cwd=REPO, timeout=300)
    assert {p: p.stat().st_ino for p in out.rglob("*") if p.is_file()} == inodes  # the fast path: not even re-linked


def test_static_search_analyses_each_document_once_and_then_only_changed_ones(tmp_path, monkeypatch):
    """A counting wrapper around the real analysis: a first build analyses every search document once; after one rule's
    text changed, only that rule's document; a state recorded by another dictionary exports all again, with a notice."""
    import marshal

    from kb.site import search_export

    analysed: list[str] = []
    real = search_export.analyse
    monkeypatch.setattr(search_export, "analyse", lambda splitter, doc: analysed.append(doc.url) or real(splitter, doc))
    source = tmp_path / JA_CR.name
    source.write_bytes(JA_CR.read_bytes())
    out = tmp_path / "site"
    with Store.open(tmp_path / "kb") as store:
        ingest_sources(store, [str(source)], index=False)
        build_site(store, out)
        manifest = marshal.loads((out / ".kb-build" / "manifest.marshal").read_bytes())
        assert sorted(analysed) == sorted(manifest["search"]["ids"]) and len(set(analysed)) == len(analysed)
        analysed.clear()
        text = source.read_text(encoding="utf-8-sig")
        edited = text.replace("通常、そのマナ・コストだけである。", "通常、そのマナ・コストのみである。")
        source.write_text(edited, encoding="utf-8")
        ingest_sources(store, [str(source)], index=False)
        build_site(store, out)
        assert len(analysed) == 1 and "601.2f" in analysed[0]
        analysed.clear()
        manifest = marshal.loads((out / ".kb-build" / "manifest.marshal").read_bytes())
        manifest["search"]["identity"] = {**manifest["search"]["identity"], "dictionary": "sudachidict-core 20200101"}
        (out / ".kb-build" / "manifest.marshal").write_bytes(marshal.dumps(manifest))
        (out / ".kb-build" / "stamp.marshal").unlink()  # as if the inputs had changed
        report = build_site(store, out)
    assert len(analysed) == len(manifest["search"]["ids"])
    [notice] = report.notices
    assert notice.startswith("static search: exporting every document again (dictionary sudachidict-core 20200101 → "
                             "sudachidict-core ")


def test_static_search_remakes_only_the_changed_documents_chunk_and_its_shards(tmp_path, monkeypatch):
    """After one rule's edit the export makes again only the documents of that rule's chunk, and returns that chunk,
    shards of the rule's terms and meta.js: no other chunk, no name shard (their inputs are the same)."""
    from kb.site import search_export

    made: list[str] = []
    real_doc = search_export.search_doc
    monkeypatch.setattr(search_export, "search_doc", lambda entry: made.append(entry.url) or real_doc(entry))
    returned = exported_files(monkeypatch)
    source = tmp_path / JA_CR.name
    text = JA_CR.read_text(encoding="utf-8-sig")
    source.write_text(text, encoding="utf-8")
    with Store.open(tmp_path / "kb") as store:
        ingest_sources(store, [str(source)], index=False)
        first = build_site(store, tmp_path / "site")
        assert len(made) == len(set(made)) > search_export.CHUNK and len(returned) == first.search_files
        made.clear()
        returned.clear()
        source.write_text(text.replace("通常、そのマナ・コストだけである。", "通常、そのマナ・コストのみである。"),
                          encoding="utf-8")
        ingest_sources(store, [str(source)], index=False)
        build_site(store, tmp_path / "site")
    assert any("601.2f" in url for url in made) and len(made) <= search_export.CHUNK
    assert [f for f in returned if f.startswith("search/d/")] == [f"search/d/{_chunk_of(tmp_path / 'site', made[0])}.js"]
    assert not [f for f in returned if f.startswith("search/n/")]
    assert "search/meta.js" in returned


def _chunk_of(site: Path, url: str) -> int:
    """The document chunk of ``url`` in a built site's static search."""
    import marshal

    from kb.site.search_export import CHUNK

    return marshal.loads((site / ".kb-build" / "manifest.marshal").read_bytes())["search"]["ids"][url] // CHUNK


def _edit_rule_and_reingest(store: Store, cr: Path, text: str, mark: str) -> None:
    old = "プレイヤーはその呪文の総コストを決定する。"
    cr.write_text(text.replace(old, old + mark), encoding="utf-8")
    assert not ingest_sources(store, [str(cr)], index=False).failed


def test_a_small_rebuild_is_applied_in_place_and_a_large_one_swapped(tmp_path):
    """Few changed pages: renamed over their old copies in the same folder (no new folder of links), and a page
    deleted by hand written again; every page changed (another base URL): a new folder swapped in whole. Both end
    equal to a full build."""
    cr = tmp_path / "JPN_CR_20231117_0.txt"
    text = JA_CR.read_text(encoding="utf-8-sig")
    cr.write_text(text, encoding="utf-8")
    site = tmp_path / "site"
    with Store.open(tmp_path / "kb") as store:
        assert not ingest_sources(store, [str(cr)], index=False).failed
        build_site(store, site)
        folder, kept = site.stat().st_ino, (site / "glossary" / "index.html").stat().st_ino
        gone = next(p for p in sorted((site / "cr").iterdir()) if not p.name.startswith("601"))
        gone.unlink()  # a page deleted by hand is written again, though its inputs did not change
        _edit_rule_and_reingest(store, cr, text, "竜巻ミョルニル。")
        small = build_site(store, site)
        assert 0 < small.rendered <= 5 and gone.is_file()
        assert site.stat().st_ino == folder  # the same folder: applied in place
        assert (site / "glossary" / "index.html").stat().st_ino == kept  # an unchanged page is not touched
        assert "竜巻ミョルニル" in (site / "cr" / "601.2f.html").read_text(encoding="utf-8")
        large = build_site(store, site, base_url="https://example.org/rules/")
        assert large.rendered == large.pages
        assert site.stat().st_ino != folder  # a new folder, swapped in
        build_site(store, tmp_path / "full", base_url="https://example.org/rules/")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith((".site.staging-", ".site.old-"))]
    for path in (tmp_path / "full").rglob("*"):
        rel = path.relative_to(tmp_path / "full")
        if path.is_file() and path.name not in BUILD_RECORDS and rel.parts[:2] != ("search", "v"):
            assert same_built_file(path, site / rel, rel), rel


@pytest.mark.slow
def test_a_build_stopped_while_applying_in_place_is_completed_by_the_next(tmp_path, monkeypatch):
    """The journal decides: a build that stops after putting one new page in place (the others still staged) leaves
    its staging folder; the next build completes it first, and then has nothing left to do."""
    import kb.site.output as output

    cr = tmp_path / "JPN_CR_20231117_0.txt"
    text = JA_CR.read_text(encoding="utf-8-sig")
    cr.write_text(text, encoding="utf-8")
    site = tmp_path / "site"

    def stop_after_one(staging, out, journal):
        name, rel = journal["written"][0]
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        os.replace(staging / name, out / rel)  # one new page in place, the others still staged
        raise OSError("disk full")

    with Store.open(tmp_path / "kb") as store:
        assert not ingest_sources(store, [str(cr)], index=False).failed
        build_site(store, site)
        _edit_rule_and_reingest(store, cr, text, "竜巻ミョルニル。")
        monkeypatch.setattr(output, "_apply", stop_after_one)
        with pytest.raises(OSError, match="disk full"):
            build_site(store, site)
        monkeypatch.undo()
        staged = [p for p in tmp_path.iterdir() if p.name.startswith(".site.staging-")]
        assert len(staged) == 1 and (staged[0] / output.JOURNAL).is_file()
        stamp = (site / ".kb-build" / "stamp.marshal").read_bytes()
        again = build_site(store, site)  # completes the journal: the stamp is the stopped build's, nothing to do
        assert again.rendered == 0 and (site / ".kb-build" / "stamp.marshal").read_bytes() != stamp
        build_site(store, tmp_path / "full")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith((".site.staging-", ".site.old-"))]
    assert "竜巻ミョルニル" in (site / "cr" / "601.2f.html").read_text(encoding="utf-8")
    for path in (tmp_path / "full").rglob("*"):
        rel = path.relative_to(tmp_path / "full")
        if path.is_file() and path.name not in BUILD_RECORDS and rel.parts[:2] != ("search", "v"):
            assert same_built_file(path, site / rel, rel), rel


@pytest.mark.slow
def test_a_rule_removed_in_place_loses_its_page_and_every_link_to_it(tmp_path):
    """An in-place build deletes the pages its predecessor wrote and it does not (a rule gone from the rules text),
    and the site it leaves equals a full build of the same store."""
    cr = tmp_path / "JPN_CR_20231117_0.txt"
    text = JA_CR.read_text(encoding="utf-8-sig")
    cr.write_text(text, encoding="utf-8")
    site = tmp_path / "site"
    line = next(line for line in text.splitlines() if line.startswith("601.2i "))
    with Store.open(tmp_path / "kb") as store:
        assert not ingest_sources(store, [str(cr)], index=False).failed
        build_site(store, site)
        folder = site.stat().st_ino
        assert (site / "cr" / "601.2i.html").is_file()
        cr.write_text(text.replace(line + "\n", ""), encoding="utf-8")
        assert not ingest_sources(store, [str(cr)], index=False).failed
        build_site(store, site)
        build_site(store, tmp_path / "full")
    assert site.stat().st_ino == folder  # applied in place
    assert not (site / "cr" / "601.2i.html").exists()
    def pages(root: Path) -> list[Path]:  # the search shards aside: an incremental export keeps emptied ones
        return sorted(p.relative_to(root) for p in root.rglob("*") if p.is_file() and p.relative_to(root).parts[0] != "search")

    assert [p for p in pages(site) if p.as_posix() not in kept(site)] == pages(tmp_path / "full")  # (the search
    broken, checked = site_links(site)  # delta's base analyses aside)
    assert checked > 0 and broken == []


@pytest.mark.slow
def test_an_archived_version_is_made_again_only_when_its_nodes_change(tmp_path, monkeypatch):
    """An older version's pages (``v/<version>/``) are one page group: a rebuild after the newer version changed does
    not read or make them (their files stay, equal to a full build's); editing the older version makes them again."""
    import kb.site.pages as pages

    made = []
    make = pages._archive_pages
    monkeypatch.setattr(pages, "_archive_pages", lambda archive, ctx: made.append(archive.version) or make(archive, ctx))
    text = JA_CR.read_text(encoding="utf-8-sig")
    older, newer = tmp_path / "JPN_CR_20231117_0.txt", tmp_path / "JPN_CR_20240301.txt"
    older.write_text(text, encoding="utf-8")
    later = text.replace("和訳 20231117.0 版", "和訳 20240301.0 版").replace("2023-11-17", "2024-03-01")
    later = later.replace("2023-11-18", "2024-03-01")  # the translator line
    newer.write_text(later, encoding="utf-8")
    kb_dir, site = tmp_path / "kb", tmp_path / "site"
    archived = site / "v" / "20231117.0" / "cr" / "601.html"
    with Store.open(kb_dir) as store:
        ingest_sources(store, [str(older), str(newer)], index=False)
        build_site(store, site)
        assert made == ["20231117.0"] and "通常、そのマナ・コストだけである。" in archived.read_text(encoding="utf-8")
        inode = archived.stat().st_ino
        edited = later.replace("通常、そのマナ・コストだけである。", "通常、そのマナ・コストのみである。")
        newer.write_text(edited, encoding="utf-8")
        ingest_sources(store, [str(newer)], index=False)
        second = build_site(store, site)
        assert made == ["20231117.0"] and archived.stat().st_ino == inode  # neither made nor written
        build_site(store, tmp_path / "full")
        for path in (tmp_path / "full" / "v").rglob("*.html"):
            assert filecmp.cmp(path, site / path.relative_to(tmp_path / "full"), shallow=False)
        assert second.pages == len([p for p in site.rglob("*") if p.is_file() and ".kb-build" not in p.parts
                                    and p.parts[len(site.parts)] not in ("search", "static")]) - 1  # the sitemap
        older.write_text(text.replace("通常、そのマナ・コストだけである。", "通常、そのマナ・コストである。"), encoding="utf-8")
        ingest_sources(store, [str(older)], index=False)
        build_site(store, site)
    assert made[-1] == "20231117.0" and len(made) == 3  # the full build's, and this one
    assert "通常、そのマナ・コストである。" in archived.read_text(encoding="utf-8")


def test_a_rebuild_checks_the_links_that_can_have_changed_and_finds_what_a_full_check_finds(sample_kb, tmp_path):
    """With no page gone and no rewritten page losing an id, a rebuild checks only the rewritten pages' links and the
    links broken before: a link mended by a new page, or broken by a page that lost its anchor, is still found."""
    from kb.site.chrome import site_context as _site_context
    from kb.site.linkcheck import check_links
    from kb.site.manifest import load_manifest

    def producer(anchors):
        ctx = {"toc": [], "archive": {"name": "n", "version": "v", "lang": "ja", "index": "index.html",
                                      "changes": None, "glossary": None},
               "blocks": [{"number": a, "kind": "rule", "title": None, "text": "t", "examples": []} for a in anchors or ()]}
        return lambda site: [Page("x/a.html", "redirect.html", "a", "a", {"target": "x/b.html#b1"}),
                             *([Page("x/b.html", "archive.html", "b", "b", ctx | {"site": _site_context(site)})]
                               if anchors is not None else [])]

    out = tmp_path / "site"
    seen = []
    with Store.open(sample_kb) as store:
        for anchors in (None, ["b1"], ["b2"], ["b2", "b3"], ["b1", "b2", "b3"]):
            report = build_site(store, out, producers=[*PAGE_PRODUCERS, producer(anchors)])
            files = load_manifest(out)["files"]
            assert report.broken == [f"{p}: {link} ({why})" for p, link, why in check_links(files)]  # a full check
            seen.append({b for b in report.broken if b.startswith("x/")})  # the link and the canonical URL
    assert seen == [{"x/a.html: x/b.html#b1 (no such page)"}, set(), {"x/a.html: x/b.html#b1 (no such anchor)"},
                    {"x/a.html: x/b.html#b1 (no such anchor)"}, set()]


def test_a_change_to_any_module_of_kb_renders_every_page_again(sample_kb, tmp_path):
    """The site's identity is derived from all of kb's code (kb.codedigest), not from a list: a copy of the package
    whose sanitiser (a module no list of the builder named) differs by one line makes the next build render every
    page again, where an unchanged copy renders nothing."""
    import re
    import shutil
    import subprocess
    import sys

    copy = tmp_path / "checkout"
    for part in ("kb", "ingest", "site_templates"):
        shutil.copytree(REPO / part, copy / part, ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path / "site"

    def build() -> tuple[int, int]:
        done = subprocess.run([sys.executable, "-m", "kb.cli", "--kb-dir", str(sample_kb), "build", "--out", str(out)],
                              capture_output=True, text=True, cwd=copy, timeout=300,
                              env={**os.environ, "PYTHONPATH": str(copy)})
        assert done.returncode == 0, done.stderr
        found = re.search(r"(\d+) pages \((\d+) rendered", done.stdout)
        assert found, done.stdout
        return int(found[1]), int(found[2])

    pages, _ = build()
    assert build() == (pages, 0)
    sanitizer = copy / "kb" / "sanitize.py"
    sanitizer.write_text(sanitizer.read_text(encoding="utf-8") + "\nNOTHING_ELSE = None\n", encoding="utf-8")
    assert build() == (pages, pages)
    assert build() == (pages, 0)
