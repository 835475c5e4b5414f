"""The gather's link pass (:func:`kb.site.gather._link`, rewritten for speed: what a link needs of its target looked up
once per entry, a span decided on its first row) gives exactly what the pass it replaced gave — every entry's links,
cited-by list and card mentions, and the unresolved list, in the same order — on the sample, on the bilingual store
(three English CRs, a renumbered translation) and on a generated wiki of articles linking each other, cards, missing
pages and rules. The replaced pass is kept below, as it was in 2795056, only to compare with (with the
mention's sentence of today's gather: it changed only in how the sentence start is found). Also: the light node
read sorts its rows itself and gives the nodes in the document order :meth:`kb.store.Store.nodes` gives, and a gather
leaves the cycle collector as it found it."""

from __future__ import annotations

import gc
import random
import shutil
from collections import defaultdict
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from conftest import DATA

from kb.ids import id_name, is_glossary_id, rule_id
from kb.link.termlinks import REF_AUTO_TERM
from kb.model import CARD, GLOSSARY, REF_RULE, REF_SECTION, REF_TERM, REFS_OUTSIDE_SITE, UNVERSIONED
from kb.pipeline import ingest_sources
from kb.site.gather import MTGWIKI, _mention, gather_site
from kb.site.records import Entry, Link, Mention, SiteData
from kb.store import NodeKey, Store

JA_CR = DATA / "JPN_CR_20231117_0.txt"


def linked(site: SiteData) -> tuple[list[Any], list[str]]:
    """What the link pass fills: each entry's links, cited-by list and mentions, and the unresolved list."""
    entries = [*site.rules.values(), *site.terms.values(), *site.others.values()]
    return [(e.id, e.links, e.cited_by, e.mentions) for e in entries], list(site.unresolved)


def relinked_by_reference(store: Store, site: SiteData) -> tuple[list[Any], list[str]]:
    for entry in [*site.rules.values(), *site.terms.values(), *site.others.values()]:
        entry.links, entry.cited_by, entry.mentions = {}, [], []
    site.unresolved = []
    _reference_link(store, site, site.shown)
    return linked(site)


def assert_same_links(kb_dir: Path) -> tuple[list[Any], list[str]]:
    with Store.open(kb_dir, create=False) as store:
        site = gather_site(store)
        fast = linked(site)
        assert relinked_by_reference(store, site) == fast
        return fast


def test_the_sample_links_as_before(data_kb):
    entries, _ = assert_same_links(data_kb)
    assert any(links for _, links, _, _ in entries) and any(cited for _, _, cited, _ in entries)


@pytest.mark.slow  # three English CRs: a few seconds
def test_the_bilingual_store_links_as_before(bilingual_kb):
    entries, unresolved = assert_same_links(bilingual_kb)
    assert sum(len(links) for _, by_lang, _, _ in entries for links in by_lang.values()) > 1000


def wiki_article(title: str, rng: random.Random, titles: list[str]) -> str:
    """A MediaWiki page as the wiki serves it (the parts kb reads) whose text links other articles, cards, a missing
    page and rules, in sentences ended in every way a mention is cut at."""
    def a(target: str) -> str:
        return f'<a href="/wiki/{quote(target)}" title="{target}">{target}</a>'

    sentences = []
    for n in range(rng.randint(3, 9)):
        card = f"カード{rng.randint(0, 30)}/Card {rng.randint(0, 30)}"
        parts = ["とても長い説明が続く" * rng.randint(0, 12),
                 f"{a(rng.choice(titles))}は{a(card)}の話" + "。、"[n % 2] * rng.randint(0, 2),
                 f"(CR:{rng.choice(['601.2f', '601.2', '701.34a', '100.1', '728'])})",
                 "とても長い説明が続く" * rng.randint(0, 12),
                 f'<a href="/index.php?title={quote("無い記事" + str(rng.randint(0, 5)))}&amp;action=edit&amp;redlink=1"'
                 f' class="new" title="無い記事 (存在しないページ)">無い記事</a>',
                 rng.choice(["。", "！", "？", "<br>", ""])]
        sentences.append("".join(parts))
    return (f"<html><head><title>{title} - MTG Wiki</title></head><body>"
            f'<h1 id="firstHeading" class="firstHeading">{title}</h1><div id="bodyContent"><div id="mw-content-text">'
            + "".join(f"<p>{s}</p>" for s in sentences) + "</div></div></body></html>")


@pytest.fixture(scope="module")
def generated_kb(tmp_path_factory) -> Path:
    """The sample's Japanese CR and 40 generated MTG Wiki articles (ids that sort differently by kana, kanji and
    Latin letters), ingested."""
    folder = tmp_path_factory.mktemp("generated")
    rng = random.Random(24)
    titles = [f"{stem}{i}" for i, stem in enumerate(["記事", "きじ", "Article ", "キジ", "記事/Article "] * 8)]
    wiki = folder / "wiki"
    wiki.mkdir()
    for title in titles:
        (wiki / f"{quote(title, safe='')}.html").write_text(wiki_article(title, rng, titles), encoding="utf-8")
    shutil.copy(JA_CR, folder / JA_CR.name)
    with Store.open(folder / "kb") as store:
        report = ingest_sources(store, [str(folder / JA_CR.name), str(wiki)], index=False)
        assert not report.failed
    return folder / "kb"


def test_a_generated_wiki_links_as_before(generated_kb):
    entries, unresolved = assert_same_links(generated_kb)
    mentions = [m for _, _, _, ms in entries for m in ms]
    assert len(mentions) > 40 and any(m["before"].startswith("…") for m in mentions)
    assert any(m["after"].endswith("…") for m in mentions) and any(m["before"] == "" for m in mentions)
    assert any(quote("無い記事") in link.target for _, by_lang, _, _ in entries for links in by_lang.values() for link in links
               if link.target and link.target.startswith(MTGWIKI))


def test_light_nodes_are_in_document_order(generated_kb):
    with Store.open(generated_kb, create=False) as store:
        for version, lang in [(UNVERSIONED, "ja"), ("20231117.0", "ja")]:
            full = list(store.nodes(version, lang))
            light = store.light_nodes(version, lang, None)
            assert len(full) > 30
            assert [n.id for n in light] == [n.id for n in full]  # SQLite's ORDER BY ord, id
            assert [(n.kind, n.title, n.text, n.order, n.meta) for n in light] == \
                   [(n.kind, n.title, n.text, n.order, n.meta) for n in full]
            assert all(n.refs == () and n.html is None for n in light)
        orders = [n.order for n in store.light_nodes(UNVERSIONED, "ja", None)]
        assert len(set(orders)) < len(orders)  # ties, ordered by id


@pytest.mark.parametrize("enabled", [True, False])
def test_a_gather_leaves_the_collector_as_it_was(data_kb, enabled):
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        with Store.open(data_kb, create=False) as store:
            gather_site(store)
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


def test_a_gather_inside_a_freeze_leaves_what_it_made_frozen(data_kb):
    """Under the builder's gc.freeze the gathered objects join the frozen ones (no collection scans them during the
    build); without one nothing is frozen."""
    assert gc.get_freeze_count() == 0
    with Store.open(data_kb, create=False) as store:
        gather_site(store)
        assert gc.get_freeze_count() == 0
        gc.freeze()
        try:
            before = gc.get_freeze_count()
            site = gather_site(store)
            assert gc.get_freeze_count() > before + len(site.shown)
        finally:
            gc.unfreeze()


# -- the link pass as it was in 2795056 (kb/site/gather.py), to compare with --------------------------------------------

def _reference_link(store: Store, site: SiteData, shown: dict[NodeKey, Entry]) -> None:
    """Turn every stored reference of a shown node into a :class:`Link`, and fill each entry's cited-by list.

    The references of one span of a node (rows of :meth:`kb.store.Store.ref_rows`, in order) make one link: the first
    that names an entry of the site is its link (and cites that entry); none, the span is an outside or unresolved
    link. One loop over the rows, with no call per reference where the target is a shown node: tens of thousands of
    references per build."""
    by_title: dict[tuple[str, str], Entry] = {}
    for entry in [*site.terms.values(), *site.others.values()]:
        for node in entry.nodes.values():
            for name in (node.title, node.english):
                if name:
                    by_title.setdefault((entry.kind, name.casefold()), entry)
    by_key = {(key.version, key.lang, key.id): entry for key, entry in shown.items()}  # plain tuples hash fast
    cited: dict[int, dict[str, str]] = defaultdict(dict)
    mentions: dict[int, list[Mention]] = defaultdict(list)
    unresolved = site.unresolved
    shown_pairs = sorted({(key.version, key.lang) for key in shown if key.version != UNVERSIONED})
    for version, lang in [(UNVERSIONED, None), *shown_pairs]:  # the store's order (version, lang, node, seq)
        # rows (lang, node id, kind, target, start, end, resolved version, lang, id), one source node after another
        for (s_lang, node_id), rows in groupby(store.ref_rows(version, lang), key=_SOURCE):
            source_key = (version, s_lang, node_id)
            source = by_key.get(source_key)
            if source is None:
                continue
            spans: dict[tuple[int, int], list[Any]] = {}  # (start, end) → [first row, its target or None]
            for row in rows:
                span = spans.get((row[4], row[5]))
                if span is not None and span[1] is not None:
                    continue  # the span's link is found: the later references of it are not looked at
                target = by_key.get((row[6], row[7], row[8])) if row[8] is not None else None
                if target is None:
                    target = _reference_target_entry(site, by_title, row, source_key)
                if span is None:
                    spans[(row[4], row[5])] = [row, target]
                elif target is not None:
                    span[1] = target
            links = source.links.setdefault(s_lang, [])
            for (start, end), (first, target) in spans.items():
                ref_kind = first[2]
                if target is None:
                    if ref_kind not in REFS_OUTSIDE_SITE:
                        unresolved.append(f"{source.label} [{s_lang}] refers to {ref_kind} {first[3]}")
                    if start < 0 or ref_kind == REF_TERM:  # an unknown term is just a word
                        continue
                    outside = (MTGWIKI + quote(first[3].replace(" ", "_"), safe="/:()")
                               if ref_kind in ("wiki", "redlink") else None)
                    links.append(Link(start, end, outside, ref_kind))
                    continue
                if target is not source:
                    cited[id(target)].setdefault(source.url, source.label)
                    if start >= 0 and target.kind == CARD:
                        mentions[id(target)].append(_mention(source, s_lang, start, end))
                if start >= 0:  # terms found in the text look like parsed ones
                    links.append(Link(start, end, target.url, REF_TERM if ref_kind == REF_AUTO_TERM else ref_kind))
            if not links:
                del source.links[s_lang]
    for entry in [*site.rules.values(), *site.terms.values(), *site.others.values()]:
        entry_id = id(entry)
        if entry_id in cited:
            entry.cited_by = list(cited[entry_id].items())
        if entry_id in mentions:
            entry.mentions = list({(m["url"], m["before"], m["name"], m["after"]): m for m in mentions[entry_id]}.values())
        for links in entry.links.values():  # by start, a longer span first (two stable sorts, keyed in C)
            links.sort(key=_END, reverse=True)
            links.sort(key=_START)


_SOURCE, _START, _END = itemgetter(0, 1), itemgetter(0), itemgetter(1)


def _reference_target_entry(site: SiteData, by_title: dict, row: tuple[Any, ...], source_key: tuple[str, str, str]
                  ) -> Entry | None:
    """The entry a reference (a row of :meth:`kb.store.Store.ref_rows`: its kind and target, resolved to a node the
    site does not show, or to none) of the node ``source_key`` points at. A rule cited by an older translation is the
    rule its number meant then."""
    kind, key = row[2], row[8]
    if kind in (REF_RULE, REF_SECTION):
        number = id_name(key) if key is not None else row[3]
        renumbered = site.view.renumbered if site.view else {}
        if (source_key[0], rule_id(number)) in renumbered:
            now = renumbered[(source_key[0], rule_id(number))]
            return site.rules.get(id_name(now)) if now else None
        return site.rules.get(number)
    if key is not None and is_glossary_id(key):  # resolved into a version the site does not show: by name
        return by_title.get((GLOSSARY, id_name(key).casefold()))
    return None
