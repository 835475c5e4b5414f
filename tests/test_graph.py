"""The cross-source graph, on real stores: the bundled data/ (Japanese CR excerpt, the 唱える MTG Wiki article,
release notes, a Wisdom Guild page) ingested through the pipeline, then queried via the store, export and CLI."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from kb.cli import main
from kb.export import export_records
from kb.link.graph import CARDS_SOURCE, REF_TERM_ARTICLE
from kb.pipeline import ingest_sources
from kb.store import NodeKey, Store

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "data"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
WISDOM_GUILD_601 = FIXTURES / "wisdom_guild" / "cr_r_601.html"  # rule 601 with glossary-term links such as 唱え
JA = "20231117.0"
CAST = NodeKey("", "ja", "wiki:唱える")


@pytest.fixture(scope="module")
def kb_dir(tmp_path_factory) -> Path:
    kb_dir = tmp_path_factory.mktemp("graph") / "kb"
    with Store.open(kb_dir) as store:
        report = ingest_sources(store, [str(DATA / "JPN_CR_20231117_0.txt"), str(DATA / "mtgwiki"), str(DATA / "release-notes"),
                                        str(WISDOM_GUILD_601)], index=False)
    assert report.failed == []
    kb_dir.joinpath("report.json").write_text(json.dumps({"resolved": report.links.resolved,
                                                          "unresolved": report.links.unresolved}))
    return kb_dir


@pytest.fixture()
def store(kb_dir):
    with Store.open(kb_dir, create=False) as store:
        yield store


def refs_from(store, key, kind):
    return [sr for sr in store.refs_from(key) if sr.ref.kind == kind]


@pytest.mark.slow
def test_wiki_cr_references_resolve_to_rules(store):
    rules = refs_from(store, CAST, "rule")
    plain = next(sr for sr in rules if sr.ref.target == "601.2f" and sr.ref.version is None)
    assert plain.target_key == NodeKey(JA, "ja", "cr:601.2f")  # newest Japanese CR
    quoted = next(sr for sr in rules if sr.ref.target == "601.2a" and sr.ref.version == JA)
    assert quoted.target_key == NodeKey(JA, "ja", "cr:601.2a")  # the cited version
    missing = next(sr for sr in rules if sr.ref.target == "300.2a")
    assert missing.target_key is None  # kept, not dropped: the excerpt has no rule 300.2a


def test_rule_knows_the_article_that_cites_it(store):
    citing = {sr.source_key for sr in store.cited_by(NodeKey(JA, "ja", "cr:601.2f"))}
    assert CAST in citing
    records = {r["id"]: r for r in export_records(store, version=JA, lang="ja")}
    assert {"id": "wiki:唱える", "version": "", "lang": "ja", "kind": "rule"} in records["cr:601.2f"]["cited_by"]


def test_kb_links_lists_the_citing_article(kb_dir):
    result = CliRunner().invoke(main, ["--kb-dir", str(kb_dir), "links", "601.2f"])
    assert result.exit_code == 0, result.output
    cited_by = result.output.split("cited by:")[1]
    assert "wiki:唱える [- ja] 唱える" in cited_by
    as_json = CliRunner().invoke(main, ["--kb-dir", str(kb_dir), "links", "601.2f", "--json"])
    ja = next(item for item in json.loads(as_json.output) if item["lang"] == "ja")
    assert "wiki:唱える" in {c["id"] for c in ja["cited_by"]}


def test_glossary_term_links_reach_the_article_too(store):
    term_refs = [sr for sr in store.refs_from(NodeKey(JA, "ja", "cr:601.2")) if sr.ref.kind == "term" and sr.ref.target == "唱え"]
    assert term_refs and all(sr.target_key == NodeKey(JA, "ja", "gl:唱える") for sr in term_refs)  # the stem link
    derived = refs_from(store, NodeKey(JA, "ja", "cr:601.2"), REF_TERM_ARTICLE)
    assert len(derived) == len(term_refs)  # one article link beside each term link
    assert {(sr.ref.target, sr.target_key) for sr in derived} == {("唱える", CAST)}
    assert [(sr.ref.start, sr.ref.text) for sr in derived] == [(sr.ref.start, sr.ref.text) for sr in term_refs]
    citing_article = {sr.source_key.id for sr in store.cited_by(CAST) if sr.ref.kind == REF_TERM_ARTICLE}
    assert {"cr:601.2", "cr:601.2a", "cr:601.3"} <= citing_article


def test_card_entities(store):
    cards = {n.id: n for n in store.nodes(kinds=["card"])}
    dryad = cards["card:Dryad Arbor"]
    assert (dryad.title, dryad.english, dryad.version, dryad.lang) == ("ドライアドの東屋", "Dryad Arbor", "", "ja")
    assert store.document_of(NodeKey("", "ja", "card:Dryad Arbor")).source == CARDS_SOURCE
    shelter = cards["card:セジーリの防護"]  # the release notes name it in Japanese only
    assert shelter.english is None
    citing = {sr.source_key.id for sr in store.cited_by(NodeKey("", "ja", "card:セジーリの防護"))}
    assert citing == {"note:ゼンディカーの夜明け:両面カード"}
    card_refs = refs_from(store, CAST, "card")
    assert card_refs and all(sr.target_key is not None and sr.target_key.id.startswith("card:") for sr in card_refs)
    assert len([n for n in cards if n == "card:Dryad Arbor"]) == 1  # one entity however often it is cited


def test_unresolved_are_counted_and_outside_links_are_not(kb_dir, store):
    report = json.loads((kb_dir / "report.json").read_text())
    assert report["unresolved"]["wiki"] > 0  # links to articles not ingested, e.g. キーワード処理
    for outside in ("redlink", "external", "category"):
        assert outside not in report["unresolved"]
    wiki = [sr for sr in refs_from(store, CAST, "wiki") if sr.ref.target == "キーワード処理"]
    assert wiki and wiki[0].target_key is None  # still stored
    assert report["resolved"]["card"] > 30 and report["resolved"][REF_TERM_ARTICLE] > 0


def test_relinking_is_stable(kb_dir):
    with Store.open(kb_dir) as store:
        db = sqlite3.connect(store.path)
        before = db.execute("SELECT kind, COUNT(*), COUNT(resolved_id) FROM refs GROUP BY kind ORDER BY kind").fetchall()
        cards = db.execute("SELECT COUNT(*) FROM nodes WHERE kind='card'").fetchone()
        report = ingest_sources(store, [str(DATA / "mtgwiki"), str(DATA / "release-notes")], index=False)
        assert report.unchanged == 2
        after = db.execute("SELECT kind, COUNT(*), COUNT(resolved_id) FROM refs GROUP BY kind ORDER BY kind").fetchall()
        assert after == before
        assert db.execute("SELECT COUNT(*) FROM nodes WHERE kind='card'").fetchone() == cards


def test_mechanic_links_to_glossary_and_article(tmp_path):
    with Store.open(tmp_path / "kb") as store:
        ingest_sources(store, [str(FIXTURES / "graph" / "JPN_CR_party_excerpt.txt"),
                               str(FIXTURES / "graph" / "party_article.html"), str(DATA / "release-notes")], index=False)
        party = NodeKey("", "ja", "note:ゼンディカーの夜明け:パーティ")
        (mechanic,) = refs_from(store, party, "mechanic")
        assert mechanic.ref.target == "パーティ" and mechanic.target_key == NodeKey(JA, "ja", "gl:パーティー")  # ー or not
        (article,) = refs_from(store, party, REF_TERM_ARTICLE)
        assert article.target_key == NodeKey("", "ja", "wiki:パーティー")
        landfall = NodeKey("", "ja", "note:ゼンディカーの夜明け:上陸")
        assert refs_from(store, landfall, "mechanic")[0].target_key == NodeKey(JA, "ja", "gl:上陸")
        assert refs_from(store, landfall, REF_TERM_ARTICLE) == []  # no article about 上陸 ingested
        dfc = NodeKey("", "ja", "note:ゼンディカーの夜明け:両面カード")
        assert refs_from(store, dfc, "mechanic")[0].target_key is None  # neither glossary nor article: kept unresolved
        # the article names the card in Japanese and English: one entity, found from the notes' Japanese-only name too
        shelter = store.node(NodeKey("", "ja", "card:Sejiri Shelter"))
        assert (shelter.title, shelter.english) == ("セジーリの防護", "Sejiri Shelter")
        assert store.node(NodeKey("", "ja", "card:セジーリの防護")) is None
        citing = {sr.source_key.id for sr in store.cited_by(NodeKey("", "ja", "card:Sejiri Shelter"))}
        assert citing == {"wiki:パーティー", "note:ゼンディカーの夜明け:両面カード"}
