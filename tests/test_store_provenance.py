"""Provenance: each source's contribution to a node is kept apart; the merged node follows source authority, and
re-ingesting or removing a source replaces exactly its contribution."""

from __future__ import annotations

from conftest import DATA

from kb.pipeline import ingest_sources, remove_sources
from kb.store import NodeKey, Store

JA = DATA / "JPN_CR_20231117_0.txt"
PAGE = DATA / "wisdom-guild" / "cr_r_701.34.html"
MANIFEST = NodeKey("20231117.0", "ja", "cr:701.34a")
BAAI_LINK = '<a href="/cr/glossary/%E5%A0%B4%E5%90%88/">場合</a>'  # the page's term link 場合 in 701.34a


def term_links(store: Store, key: NodeKey = MANIFEST) -> list[tuple[str, int, int]]:
    node = store.node(key)
    return [(r.target, r.start, r.end) for r in node.refs if r.kind == "term"]


def page_terms_of_701_34a() -> list[tuple[str, int, int]]:
    from ingest.wisdom_guild import parse_wisdom_guild

    node = next(n for n in parse_wisdom_guild(PAGE.read_bytes(), str(PAGE)).nodes if n.id == MANIFEST.id)
    return [(r.target, r.start, r.end) for r in node.refs if r.kind == "term"]


def edit_another_rule(cr_file) -> None:
    """Change rule 601.7 of the CR text in place: same source and version, new bytes."""
    cr_file.write_bytes(JA.read_bytes().replace("601.7. コストを変える".encode(), "601.7. コストを変更する".encode()))


def test_reingesting_a_changed_cr_text_keeps_the_wisdom_guild_term_links(tmp_path):
    expected = sorted(set(page_terms_of_701_34a()))
    assert len(expected) >= 10
    for name, cr_first in (("cr-first", True), ("page-first", False)):
        cr = tmp_path / name / JA.name
        cr.parent.mkdir()
        cr.write_bytes(JA.read_bytes())
        store = Store.open(tmp_path / name / "kb")
        ingest_sources(store, [str(cr), str(PAGE)] if cr_first else [str(PAGE), str(cr)], index=False)
        assert sorted(set(term_links(store))) == expected, name
        edit_another_rule(cr)
        report = ingest_sources(store, [str(cr)], index=False)
        assert report.stored == 1
        assert store.node(NodeKey("20231117.0", "ja", "cr:601.7")).text.startswith("コストを変更する")
        assert store.document_of(MANIFEST).kind == "cr-text"
        assert sorted(set(term_links(store))) == expected, name  # was: all but 3 of them lost
        assert [d.kind for d in store.contributors(MANIFEST)] == ["cr-text", "wisdom-guild"]


def test_a_link_the_source_removes_is_gone_from_the_merged_node(tmp_path):
    store = Store.open(tmp_path / "kb")
    ingest_sources(store, [str(JA), str(PAGE)], index=False)
    assert "場合" in {t for t, _, _ in term_links(store)}
    html = PAGE.read_text(encoding="utf-8")
    edited = tmp_path / PAGE.name
    edited.write_text(html.replace(BAAI_LINK, "場合"), encoding="utf-8")
    ingest_sources(store, [str(edited)], index=False)  # another source name: a second page giving the same nodes
    store.remove_document(str(PAGE))
    after = term_links(store)
    assert sorted(set(after)) == sorted({t for t in page_terms_of_701_34a() if t[0] != "場合"})


def test_the_same_page_reingested_without_a_link_loses_it(tmp_path):
    page = tmp_path / "page" / PAGE.name
    page.parent.mkdir()
    page.write_bytes(PAGE.read_bytes())
    store = Store.open(tmp_path / "kb")
    ingest_sources(store, [str(JA), str(page)], index=False)
    before = term_links(store)
    page.write_text(PAGE.read_text(encoding="utf-8").replace(BAAI_LINK, "場合"), encoding="utf-8")
    report = ingest_sources(store, [str(page)], index=False)
    assert report.stored == 1
    after = term_links(store)
    assert [t for t in before if t[0] != "場合"] == after and len(after) < len(before)


def test_removing_a_source_removes_exactly_its_contribution(tmp_path):
    alone = Store.open(tmp_path / "alone")
    ingest_sources(alone, [str(JA)], index=False)
    cr_only = alone.node(MANIFEST)
    store = Store.open(tmp_path / "both")
    ingest_sources(store, [str(PAGE), str(JA)], index=False)
    assert term_links(store)
    assert remove_sources(store, [str(PAGE)]).failed == []
    assert store.node(MANIFEST).refs == cr_only.refs and store.node(MANIFEST).text == cr_only.text
    assert [d.kind for d in store.contributors(MANIFEST)] == ["cr-text"]
    # and the other way round: without the CR text, the page's own node is what remains
    assert remove_sources(store, [str(JA), "never-ingested.txt"]).failed == ["never-ingested.txt: not in the knowledge base"]
    assert store.node(MANIFEST) is None and store.documents()[0].source == "kb:cards"
    ingest_sources(store, [str(PAGE)], index=False)
    assert sorted(set(term_links(store))) == sorted(set(page_terms_of_701_34a()))
    assert store.document_of(MANIFEST).kind == "wisdom-guild"


def test_of_two_copies_of_a_page_the_one_changed_last_is_shown(tmp_path):
    """Two copies of one MTG Wiki page under other names (a saved file and a crawled one, or one folder reached by two
    paths) give the same article with the same authority: the copy whose content changed last is the article, not
    the copy first ingested last — which showed an edit of the other copy never."""
    from test_link_wiki_incremental import page

    first, second = tmp_path / "saved" / "呪文.html", tmp_path / "crawled" / "呪文.html"
    for path, text in ((first, "一つ目の写し。"), (second, "二つ目の写し。")):
        path.parent.mkdir()
        path.write_text(page("呪文", f"<p>{text}</p>"), encoding="utf-8")
    key = NodeKey("", "ja", "wiki:呪文")
    store = Store.open(tmp_path / "kb")
    ingest_sources(store, [str(first)], index=False)
    ingest_sources(store, [str(second)], index=False)
    assert "二つ目" in store.node(key).text
    first.write_text(page("呪文", "<p>一つ目の写しを直した。</p>"), encoding="utf-8")
    assert ingest_sources(store, [str(first)], index=False).stored == 1
    assert "直した" in store.node(key).text  # was: the second copy's text, the edit nowhere
    assert [d.source for d in store.contributors(key)] == [str(first), str(second)]
    assert ingest_sources(store, [str(second)], index=False).stored == 0  # unchanged: it does not win back
    assert "直した" in store.node(key).text
    assert remove_sources(store, [str(first)]).failed == []
    assert "二つ目" in store.node(key).text
