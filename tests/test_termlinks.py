"""Automatic glossary-term links (kb.link.termlinks): the Japanese sample CR, small Japanese cases (verb stems checked by
Sudachi, katakana word boundaries), the real 2026-01-16 English CR, idempotent re-linking, and the built site."""

from __future__ import annotations

from collections import Counter
from itertools import pairwise
from pathlib import Path
from urllib.parse import quote

import pytest
from lxml import html as lxml_html

from ingest.cr_text import parse_cr_text
from kb.link.resolve import link
from kb.link.termlinks import REF_AUTO_TERM
from kb.model import GLOSSARY, SUBRULE, Document, Node
from kb.site import build_site
from kb.store import NodeKey, Store

DATA = Path(__file__).resolve().parent.parent / "data"
JA_CR = DATA / "JPN_CR_20231117_0.txt"
JA = "20231117.0"


def ingest(store: Store, *paths: Path) -> None:
    with store.transaction():
        for path in paths:
            store.put_document(parse_cr_text(path.read_bytes(), str(path)))
        link(store)


def term_links(store: Store, key: NodeKey) -> list[tuple[str, str, str]]:
    """(surface, glossary id it resolved to, the resolved version+lang) of the node's automatic term links."""
    return [(sr.ref.text, sr.target_key.id, f"{sr.target_key.version} {sr.target_key.lang}") if sr.target_key else
            (sr.ref.text, None, "") for sr in store.refs_from(key) if sr.ref.kind == REF_AUTO_TERM]


def all_auto_refs(store: Store) -> list[tuple]:
    return sorted((sr.source_key.version, sr.source_key.lang, sr.source_key.id, sr.ref.target, sr.ref.text, sr.ref.start,
                   sr.ref.end, sr.target_key) for sr in store.refs() if sr.ref.kind == REF_AUTO_TERM)


def check_spans(store: Store) -> int:
    """Every automatic link names its surface exactly, overlaps no other reference, links a term once per node."""
    checked = 0
    for node in store.nodes():
        spans = sorted((r.start, r.end, r.kind) for r in node.refs if r.start >= 0)
        for (s1, e1, k1), (s2, e2, k2) in pairwise(spans):
            assert e1 <= s2 or REF_AUTO_TERM not in (k1, k2), f"{node.id}: {k1} {s1}-{e1} overlaps {k2} {s2}-{e2}"
        autos = [r for r in node.refs if r.kind == REF_AUTO_TERM]
        for ref in autos:
            assert node.text[ref.start:ref.end] == ref.text, node.id
        targets = Counter(r.target for r in autos)
        assert not [t for t, n in targets.items() if n > 1], node.id
        checked += len(autos)
    return checked


# -- the Japanese sample ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ja_store(tmp_path_factory):
    store = Store.open(tmp_path_factory.mktemp("ja-terms"))
    ingest(store, JA_CR)
    yield store
    store.close()


def test_japanese_total_cost_and_mana_cost(ja_store):
    links = term_links(ja_store, NodeKey(JA, "ja", "cr:601.2f"))
    assert ("総コスト", "gl:総コスト", f"{JA} ja") in links
    assert ("マナ・コスト", "gl:マナ・コスト", f"{JA} ja") in links
    assert [text for text, _, _ in links].count("総コスト") == 1  # the first occurrence only


def test_japanese_verb_stems_link_to_the_verb(ja_store):
    node = ja_store.node(NodeKey(JA, "ja", "cr:601.2b"))
    (cast,) = [r for r in node.refs if r.kind == REF_AUTO_TERM and r.target == "唱える"]
    assert cast.text == "唱え" and node.text[cast.end] in "たるらま"  # 唱えたり / 唱える / 唱えられ…
    assert ("唱え", "gl:唱える", f"{JA} ja") in term_links(ja_store, NodeKey(JA, "ja", "gl:総コスト"))
    assert term_links(ja_store, NodeKey(JA, "ja", "gl:唱える")) == []  # never a link to itself


def test_japanese_spans_are_exact_and_wisdom_guild_terms_are_not_doubled(ja_store):
    assert check_spans(ja_store) > 10


def test_japanese_relink_is_idempotent(ja_store):
    before = all_auto_refs(ja_store)
    with ja_store.transaction():
        link(ja_store)
    assert all_auto_refs(ja_store) == before


def _node(id_: str, text: str, order: int, **kw) -> Node:
    kind = GLOSSARY if id_.startswith("gl:") else SUBRULE
    return Node(id=id_, kind=kind, lang="ja", version="20990101.0", text=text, order=order,
                number=None if kind == GLOSSARY else id_[3:], title=id_[3:] if kind == GLOSSARY else None, **kw)


@pytest.mark.parametrize("text, expected", [
    ("それを戦場に出た状態にする。", [("戦場に出", "戦場に出る")]),
    ("それを戦場に出した。", []),  # 出す, not 出る (Sudachi)
    ("クリーチャー・カードを唱え始める。", [("カード", "カード"), ("唱え", "唱える")]),
    ("カードゲームやスタックを見る。", []),  # inside longer katakana words
    ("予示されたパーマネント。", [("予示", "予示する")]),
])
def test_japanese_boundaries_and_stems(tmp_path, text, expected):
    nodes = [_node("cr:100.1a", text, 0), _node("gl:戦場に出る", "戦場に移動すること。", 1),
             _node("gl:唱える", "呪文を唱えること。", 2), _node("gl:カード", "ゲームの構成要素。", 3),
             _node("gl:予示する", "裏向きにすること。", 4), _node("gl:ス", "一文字の用語。", 5)]
    with Store.open(tmp_path) as store:
        with store.transaction():
            store.put_document(Document("test", "cr-text", "ja", tuple(nodes), version="20990101.0", content_hash="x"))
            report = link(store)
        found = [(text_, target[3:]) for text_, target, _ in term_links(store, NodeKey("20990101.0", "ja", "cr:100.1a"))]
    assert found == expected
    assert report.unresolved[REF_AUTO_TERM] == 0


# -- the real English CR ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def en_store(corpus_dir, tmp_path_factory):
    store = Store.open(tmp_path_factory.mktemp("en-terms"))
    ingest(store, corpus_dir / "MagicCompRules-2026-01-16.txt")
    store.version = store.versions("en")[0]
    yield store
    store.close()


@pytest.mark.slow
def test_english_total_cost_and_mana_cost(en_store):
    v = en_store.version
    links = term_links(en_store, NodeKey(v, "en", "cr:601.2f"))
    assert ("total cost", "gl:Total Cost", f"{v} en") in links
    assert ("mana cost", "gl:Mana Cost", f"{v} en") in links
    assert all(target and where == f"{v} en" for _, target, where in links)


def test_english_inflections_and_longest_match(en_store):
    v = en_store.version
    cast = dict((text.casefold(), target) for text, target, _ in term_links(en_store, NodeKey(v, "en", "cr:601.2")))
    assert cast["cast"] == "gl:Cast"
    trample = dict((t.casefold(), g) for t, g, _ in term_links(en_store, NodeKey(v, "en", "cr:702.19a")))
    assert trample["attacking creature"] == "gl:Attacking Creature"  # not 'attacking' → Attack
    forms = Counter((sr.ref.text.casefold(), sr.target_key.id) for sr in en_store.refs(v, "en") if sr.ref.kind == REF_AUTO_TERM)
    assert forms[("creatures", "gl:Creature")] > 10 and forms[("casting", "gl:Cast")] > 10
    assert forms[("tapped", "gl:Tapped")] > 0 and forms[("tapped", "gl:Tap")] == 0
    cases = [sr.ref.text for sr in en_store.refs(v, "en") if sr.ref.kind == REF_AUTO_TERM and sr.target_key.id == "gl:Case"]
    assert cases and all(text[0] == "C" for text in cases)  # the subtype, not 'in some cases'


def test_english_skips_titles_self_links_obsolete_and_function_words(en_store):
    v = en_store.version
    assert term_links(en_store, NodeKey(v, "en", "cr:702.19")) == []  # the title 'Trample' of the rule defining it
    assert "gl:Cast" not in {t for _, t, _ in term_links(en_store, NodeKey(v, "en", "gl:Cast"))}
    targets = Counter(sr.target_key.id for sr in en_store.refs(v, "en") if sr.ref.kind == REF_AUTO_TERM)
    for skipped in ("gl:During", "gl:Legend", "gl:You", "gl:If", "gl:X", "gl:Y"):
        assert targets[skipped] == 0, skipped
    assert targets["gl:Player"] > 500 and len(targets) > 500


@pytest.mark.slow
def test_english_spans_and_idempotent_relink(en_store):
    assert check_spans(en_store) > 10000
    before = all_auto_refs(en_store)
    with en_store.transaction():
        report = link(en_store)
    assert all_auto_refs(en_store) == before
    assert report.resolved[REF_AUTO_TERM] == len(before) and report.unresolved[REF_AUTO_TERM] == 0


# -- the site --------------------------------------------------------------------------------------------


def test_site_shows_term_links(ja_store, tmp_path):
    build_site(ja_store, tmp_path / "site")
    page = lxml_html.fromstring((tmp_path / "site" / "cr" / "601.html").read_bytes())
    rule = page.get_element_by_id("601.2f")
    hrefs = {a.text: a.get("href") for a in rule.xpath('.//a[contains(@class, "ref-term")]')}
    assert hrefs["総コスト"] == "../glossary/" + quote("総コスト") + ".html"
    assert hrefs["マナ・コスト"] == "../glossary/" + quote("マナ・コスト") + ".html"
