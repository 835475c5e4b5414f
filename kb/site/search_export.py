"""The static search index: sharded files the browser loads with ``<script>`` tags (so it works from ``file://`` and
any static server), built from the same analysis as ``kb search`` (:mod:`kb.search.analysis`).

Layout under ``search/`` (each file is ``window.__kbSearch("<name>", <json>)``):

- ``meta.js``   — ``{"n": documents, "p": posting shards, "g": bigram shards, "q": pair shards, "c": document ids per
  chunk, "sections": the entries that are a long article's sections (:func:`kb.search.ranking.rank_key`), "k":
  constants, "s": the names of the v/ buckets and the n/ and r/ shards there are, "langs": the language of document
  ``2k + i`` at ``i``, "vb": vocabulary buckets, "v": the vocabulary when "vb" is 0, "f": the kana the analysis
  dropped (:mod:`kb.site.search_readings`; here, not a file, as every query with hiragana wants it)}``: ``k``
  (:func:`browser_constants`) is everything the browser's search and previews share with Python — stop words, the
  rule-number grammar, kind labels, preview shard
  prefixes and the query's bounds — defined here or below, never copied into ``site.js``.
- the vocabulary for query segmentation (:func:`_vocabulary`: in ``meta.js`` when small, so a query waits for no
  file more before its postings; else ``v/<b>.js``, the keys whose first character's FNV-1a hash modulo "vb" is
  ``b``): every folded surface that the index analysis turned into a term, mapped to that term (``1`` when the
  same), and each Japanese name form followed by a tab → its English names
  (:meth:`kb.search.names.NameTable.english_names`: their words are looked up too). The browser segments a Japanese
  query by longest match against it, so ``唱えた`` → ``唱え`` → ``唱える`` exactly as
  :func:`kb.search.analysis.query_terms` does; Latin words are folded and stemmed in the browser (a port of
  :func:`~kb.search.analysis.light_stem`).
- ``p/<i>.js`` — postings ``{term: [doc gap, weight, doc gap, weight, …]}`` (doc ids ascending, each written as the
  gap from the previous one) for the terms whose FNV-1a hash (of the UTF-8 bytes) modulo ``p`` is ``i``; weight:
  :func:`kb.search.ranking.term_weight` (fixed reference lengths, so one document's change rewrites only the shards
  of its terms).
- ``g/<i>.js`` — the same for character bigrams (:func:`~kb.search.analysis.bigram_terms`), the fallback for query
  text the vocabulary does not cover; weight :func:`kb.search.ranking.gram_weight`.
- ``n/<hex>.js`` — whole-query lookups: glossary names (folded, spaces and middle dots removed, or the query terms
  joined) → [the rule the entry cites first, the entry]; rule numbers
  (:func:`kb.search.view.asked_by`: ``601.2`` with its subrules, ``601.2.`` alone) → their rules: these come first,
  as in ``kb search``.
- ``q/<i>.js`` — where adjacent term pairs stand (:mod:`kb.site.search_phrases`), for quoted phrases.
- ``x/<hash>.js`` — the delta (:mod:`kb.site.search_delta`; named in ``meta.js`` as ``"x"``, by a hash of its
  content): the ``p/``, ``g/`` and ``q/`` records of every document changed since those shards were last written
  whole, and the ids of those documents, whose records in the shards are stale. The browser loads it with
  ``meta.js`` and merges it into each ``p/``, ``g/``, ``q/`` shard as it loads one, so every shard reads as a full
  build writes it.
- ``d/<i>.js`` — documents ``[url, label, snippet, kind, lang]`` with ids ``i*c … i*c+c-1`` (``null`` for none).
- ``r/<hex>.js`` — the reading table (:mod:`kb.site.search_readings`): reading → the term a kana query of that
  reading is rewritten to, loaded only for a kana run the vocabulary does not cover.
- ``l.js`` — the typo lexicon ``{term: frequency}`` (:class:`kb.site.search_readings.DocumentCounts`), loaded only
  when a Latin word of the query is no index term: the browser rewrites it as :func:`kb.search.fuzzy.corrected` does.

A document is one node at the URL the site shows it on (:mod:`kb.search.view`, the same documents as ``kb search``
ranks, scored by :mod:`kb.search.ranking`): entry ``k`` (``ids[url]``) has the documents ``2k`` (Japanese) and
``2k+1`` (English); a first build numbers the entries in :func:`kb.search.ranking.doc_order`, the tie-break.

Entry ids are stable across builds (kept in the build manifest), and the analysis of each document is cached by
its text's hash — one file per text under the site's ``.kb-build/search/`` (:mod:`kb.site.search_cache`), not in
the manifest, which keeps only each document's text hash — so an incremental build analyses only changed documents
(each once), reads and writes the cache files of those alone and rewrites only changed shards; a hash of each
document chunk's inputs (:func:`_inputs_digest`: an unversioned node by the content hash the store keeps, not its
text) and of each name shard, also kept, spares making the documents of an unchanged chunk and encoding unchanged
chunks and name shards; the anchors of each long article's sections, kept by its content hash
(:class:`kb.site.search_cache.SectionCache`), spare cutting an unchanged article again, and a hash of all the name
shards' inputs (:func:`_names_key`: the name table's key, the rules and glossary terms) spares making them when an
article changed. A first build (or any full export) analyses the documents chunk by
chunk, in id order, into compact tables (:class:`_Tables`: arrays of ints) and the lexicons' counts, writing each
text's cache file as it goes: it never holds every document's analysis. The state records the analysis and
dictionary that made it (:func:`kb.search.index.index_identity`); a build by another one exports everything again,
with a notice (as does a state whose analyses are in the manifest, from an older kb, or one whose cache file of a
changed document is missing or damaged) — but for another user dictionary alone (a glossary term or wiki title added
or removed) whose words and the old one's are known: then only the documents whose texts hold a word it changed are
analysed again (found in their texts, which the build has at hand: no analysis file is read for it), and
the vocabulary surfaces and name forms holding one are dropped, as a full build would not have them. Public
entry: :func:`export_search`. An incremental build leaves the ``p/``, ``g/`` and ``q/`` shards as they are and
writes the delta again, with the changed documents' records in place of theirs in it (an empty shard file where it
has records of a shard no build wrote, so the browser asks for no missing file); when the delta would pass
:data:`DELTA_SHARE` (1/32) of the shards' bytes — or the user dictionary changed — it is folded into the shards
(patched as text, :func:`kb.site.search_shards.patched_shards`: those holding a delta document's base or current
records, found from the analysis each one had when the shards were written, kept for that meanwhile) and the
delta is gone. The bound: a compaction rewrites at most every shard, once per 1/32 of their bytes of delta, so
spread over the builds that filled the delta it writes about 32 times their changed records, however many articles
there are; the delta itself, written whole by each build that changes a document, and loaded by the browser, stays
within 1/32 of the shards (a smaller share would compact more often, a larger one make that file larger) — and
within :data:`DELTA_MAX_BYTES` (256 KB) whatever their size: the browser loads it with ``meta.js`` before a first
query (a 1.2 MB delta at 5,000 articles doubled a cold query's 70 ms), so past a few thousand articles the delta is
folded more often than the writes alone would want.
"""

from __future__ import annotations

import hashlib
import json
import marshal
from array import array
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from ingest.wikititle import element_id
from kb import rulenum
from kb.model import ARTICLE, CHAPTER, GLOSSARY, RULE_KINDS, SECTION
from kb.search import ranking
from kb.search.ranking import MAX_LOOKUPS
from kb.search.sections import Section, lead_node, section_id, section_node, sections
from kb.search.userdict import text_holds
from kb.search.view import asked_by, place
from kb.site.records import Entry, SiteData
from kb.site.render import without_controls
from kb.site.search_cache import AnalysisCache, SectionCache
from kb.site.search_delta import PREFIXES, Delta, absolute, delta_file, read_delta, shards_of, updated
from kb.site.search_learned import learned_rules
from kb.site.search_phrases import BODY, TITLE, PairTable, field_pairs, shard_count
from kb.site.search_readings import DocumentCounts, dropped_kana, export_readings
from kb.site.search_shards import initial_shard, patched_shards, records
from kb.site.search_shards import read_shard as _read_shard
from kb.site.search_shards import script as _script
from kb.splitter import JapaneseSplitter

CHUNK = 16  # entries per document chunk (two documents each: Japanese, English)
LANG_SLOT = {"ja": 0, "en": 1}
POSTINGS_PER_SHARD = 700
VOCAB_INLINE_BYTES = 48 * 1024  # a vocabulary up to this size is written into meta.js (one round trip less per query)
VOCAB_BUCKET_BYTES = 16 * 1024  # else it is split in buckets of about this size
SNIPPET_CHARS = 70
DELTA_SHARE = 32  # the delta is folded into the base shards when it would pass 1/32 of their bytes (see docs/site.md)
DELTA_MAX_BYTES = 256 * 1024  # or when it would pass this: the browser loads it before a first query


KIND_LABELS = {"rule": "ルール", "glossary": "用語", "article": "記事", "note": "リリースノート", "card": "カード"}
# bounds of one query in the browser: what it may load and how far a vocabulary match may reach (a 3,000-kanji query
# loaded 3,021 scripts; 3,000 × 唱 froze the tab for 75 s)
MAX_VOCAB_SHARDS = 32  # distinct first characters whose vocabulary shard one query loads; the rest is read as bigrams
MAX_SURFACE_CHARS = 48  # the longest vocabulary surface a query is matched against


def browser_constants() -> dict:
    """The constants ``site.js`` reads from ``search/meta.js`` (see the module doc): one definition, in Python."""
    from kb.search.analysis import ENGLISH_STOP_WORDS
    from kb.search.fuzzy import MAX_READING_CHARS, MIN_FUZZY_CHARS, TWO_EDITS_CHARS
    from kb.search.query import MAX_QUERY_CHARS
    from kb.search.questions import MIN_CONTENT_TERMS, QUESTION_TERMS
    from kb.search.variants import VARIANTS
    from kb.site.pages import PREVIEW_SHARDS

    return {"stop": sorted(ENGLISH_STOP_WORDS), "letters": rulenum.LETTERS, "letter": rulenum.LETTER,
            "rule": rulenum.RULE, "number": rulenum.NUMBER, "parts": rulenum.NUMBER_PARTS,
            "prefix": rulenum.QUERY_PREFIX, "dash": rulenum.RANGE_DASH, "kinds": KIND_LABELS,
            "previews": PREVIEW_SHARDS, "maxQuery": MAX_QUERY_CHARS, "maxVocab": MAX_VOCAB_SHARDS,
            "maxLookups": MAX_LOOKUPS, "cover": ranking.COVER_SCALE, "idfScale": ranking.IDF_SCALE,
            "termShare": ranking.TERM_SHARE, "gramShare": ranking.GRAM_SHARE, "maxSurface": MAX_SURFACE_CHARS,
            "variants": VARIANTS, "question": sorted(QUESTION_TERMS), "minContent": MIN_CONTENT_TERMS,
            "minFuzzy": MIN_FUZZY_CHARS, "twoEdits": TWO_EDITS_CHARS, "maxReading": MAX_READING_CHARS,
            "rangeEnd": rulenum.RANGE_END, "ruleSpan": rulenum.MAX_RULE_SPAN, "sectionSpan": rulenum.MAX_SECTION_SPAN}


@dataclass(frozen=True)
class SearchDoc:
    url: str
    label: str
    snippet: str
    title: str
    body: str
    kind: str = ""  # the kb search kind filter it answers to: rule, glossary, article, note, card
    lang: str = ""  # the language of its text: "ja" or "en"


def fnv1a(text: str) -> int:
    h = 0x811C9DC5
    for byte in text.encode():
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


def search_entries(site: SiteData) -> list[Entry]:
    """What the index has documents for: each rule, section, glossary term and unversioned node (a long MTG Wiki
    article as its lead and one document per section, at the heading's anchor: :mod:`kb.search.sections`), in the
    order :mod:`kb.search.view` numbers them (:func:`kb.search.ranking.doc_order`)."""
    cut: dict[str, list[Section]] = {}
    return [_entry(item, cut) for item in _ordered(_items(site, SectionCache({})))]


class _Item(NamedTuple):  # one per document pair, tens of thousands per build: a tuple is made faster than a dataclass
    """A search entry before it is made (:func:`_entry`): the site's ``entry`` (``part`` -1), or — a long article
    whose sections' anchors ``cuts`` (:class:`kb.site.search_cache.SectionCache`) are not () — its lead (-1) or its
    ``part``-th section, at ``url``; ``hashes``: each node's (language, stored content hash) when the store gave them all (the
    unversioned nodes, :class:`kb.site.records.StoredHtml`), else None."""

    entry: Entry
    url: str
    part: int
    cuts: tuple[str, ...]
    hashes: tuple[tuple[str, str], ...] | None


_Groups = list[tuple[list[_Item], bool]]  # the rules, the glossary terms, the unversioned nodes; whether unversioned


def _items(site: SiteData, section_cache: SectionCache) -> _Groups:
    """:func:`search_entries` as :class:`_Item` s, by group, each in the site's order (:func:`_ordered` puts them in
    the search's): an article's sections are found (from ``section_cache`` when it has them) but not made."""
    digests = site.html.digests if site.html is not None else {}
    others = []
    for entry in site.others.values():  # plain loops: tens of thousands of items a build
        hashes: tuple[tuple[str, str], ...] | None = ()
        for lang, node in entry.nodes.items():
            digest = digests.get((lang, node.id))
            hashes = (*hashes, (lang, digest)) if digest and hashes is not None else None
        cuts: tuple[str, ...] = ()
        if entry.kind == ARTICLE and len(entry.nodes) == 1:
            cuts = section_cache.of(node, hashes[0][1] if hashes else None)
        others.append(_Item(entry, entry.url, -1, cuts, hashes or None))
        for i, anchor in enumerate(cuts):
            others.append(_Item(entry, f"{entry.url}#{element_id(anchor)}", i, cuts, hashes or None))
    return [([_Item(e, e.url, -1, (), None) for e in site.rules.values()], False),
            ([_Item(e, e.url, -1, (), None) for e in site.terms.values()], False), (others, True)]


def _ordered(groups: _Groups) -> list[_Item]:
    """The items of ``groups`` in the order :mod:`kb.search.view` numbers them (:func:`kb.search.ranking.doc_order`):
    group by group, each sorted by :func:`kb.search.view.place` (stable: the order of the items of one place kept)."""
    def ordered(items: list[_Item], unversioned: bool) -> list[_Item]:
        return sorted(items, key=lambda item: place(item.url, item.entry.number, unversioned))

    return [item for items, unversioned in groups for item in ordered(items, unversioned)]


def _entry(item: _Item, cut: dict[str, list[Section]]) -> Entry:
    """The entry of an item: the site's, or an article's lead or section as an entry of its own (``cut``: the
    sections of the articles made so far, by URL, so an article is cut once for all its items)."""
    entry = item.entry
    if not item.cuts:
        return entry
    (lang, node), = entry.nodes.items()
    found = cut.get(entry.url)
    if found is None:
        found = cut[entry.url] = sections(node)
    if item.part < 0:
        return replace(entry, nodes={lang: lead_node(node, found[0])})
    section = found[item.part]
    return replace(entry, id=section_id(entry.id, section.anchor), url=item.url,
                   label=f"{entry.label} § {section.title}", nodes={lang: section_node(node, section)})


def search_doc(entry: Entry) -> list[SearchDoc]:
    """The documents of one entry, as the site shows it: one per language (Japanese first), each with the fields
    the index gives that node (:func:`kb.search.index.node_fields`)."""
    nodes = [entry.nodes[lang] for lang in ("ja", "en") if lang in entry.nodes]
    first = nodes[0]
    label = entry.label if entry.kind not in (CHAPTER, SECTION) or not first.title else f"{entry.number}. {first.title}"
    if entry.kind == GLOSSARY:
        label = entry.label + (f" / {first.english}" if first.english else "")
    kind = "rule" if entry.kind in RULE_KINDS else entry.kind
    docs = []
    for node in nodes:
        names = [x for x in (node.title, *node.aliases, node.english) if x]
        snippet = " ".join((node.text or node.title or "").split())[:SNIPPET_CHARS]
        docs.append(SearchDoc(entry.url, without_controls(label), without_controls(snippet), "\n".join(names),
                              "\n".join([node.text, *node.examples]), kind, node.lang))
    return docs


def _holding(previous: dict, read_old: Callable[[str], str | None], words: frozenset[str]) -> set[int] | None:
    """The documents of the previous build's static search that can hold one of ``words`` (those of another user
    dictionary, :func:`kb.search.userdict.text_holds`): those whose bigrams (its ``g/`` shards, with its delta)
    hold every bigram of one of them (:func:`kb.search.userdict.word_grams`); None when a word's bigrams cannot
    find it (every document is looked at). A document's bigrams do not depend on the dictionary."""
    from kb.search.userdict import word_grams

    grams_of = [grams for grams in map(word_grams, words) if grams is not None]
    if len(grams_of) < len(words):
        return None
    delta = Delta()
    if previous["x"]:
        text = read_old(f"search/{previous['x']}.js")
        if text is None:
            return None
        delta = read_delta(previous["x"], text)
    stale = set(delta.docs)
    added = delta.tables.get("g", {})
    shards: dict[str, dict] = {}

    def having(gram: str) -> set[int]:
        name = f"g/{fnv1a(gram) % previous['g']}"
        if name not in shards:
            shards[name] = _read_shard(read_old, name)
        based = {doc for doc, _ in records(absolute(shards[name].get(gram, ()), False), False)} - stale
        return based | {doc for doc, _ in records(added.get(gram, ()), False)}

    found: set[int] = set()
    for grams in grams_of:
        found |= set.intersection(*map(having, sorted(grams)))
    return found


def _untouched(site: SiteData, items: list[_Item], ids: dict[str, int], chunks: set[int]) -> set[int]:
    """Of ``chunks`` (each with documents in this build and the last), those of an edit build (:mod:`kb.site.edits`)
    whose documents are the same as last time without looking: they hold no document of an edited article, nor the
    place of one gone (a section cut no more). Only an edited article's search documents can change in an edit
    build, which keeps every other node, name and order. Empty for any other build."""
    if site.whole_node is None:
        return set()
    current = {item.url for item in items}
    touched = {ids[item.url] // CHUNK for item in items if item.entry.id in site.edited}
    touched.update(i // CHUNK for url, i in ids.items() if url not in current)
    return chunks - touched


def _inputs_digest(slots: list[_Item | None]) -> bytes:
    """A hash of all that :func:`search_doc` reads of a chunk's entries (``None`` for an empty slot): per item its
    URL, the entry's label, kind and number, which part of it it is, and its nodes — by their stored content hashes
    when it has them (each covers the node's text, title, aliases, English name, examples, kind and ``meta``, so its
    sections too), else by the language, title, aliases, English name, text and examples of the nodes of the entry
    it makes (:func:`_entry`: a section's own)."""
    flat: list = []  # per item one 6-tuple: unambiguous
    cut: dict[str, list[Section]] = {}
    for item in slots:
        if item is None:
            flat.append(None)
            continue
        entry = item.entry
        nodes: tuple = item.hashes or tuple((n.lang, n.title, n.aliases, n.english, n.text, n.examples)
                                            for n in _entry(item, cut).nodes.values())
        flat.append((item.url, entry.label, entry.kind, entry.number, item.part, nodes))
    return _digest(flat)


def _digest(data: Any) -> bytes:
    """A hash of plain data (marshal format 2 writes no back-references, so equal data gives equal bytes)."""
    return hashlib.sha1(marshal.dumps(data, 2)).digest()


def analyse(splitter: JapaneseSplitter, doc: SearchDoc) -> dict[str, Any]:
    """Index terms of the title and body, bigrams, adjacent term pairs (:mod:`kb.site.search_phrases`) and the
    surface → term vocabulary of one document."""
    from kb.search.analysis import MIDDLE_DOTS, analyze, bigram_terms, fold

    vocab: dict[str, str] = {}
    fields: dict[str, Any] = {}
    analysed, dropped = [], set()
    for name, text in (("t", doc.title), ("b", doc.body)):
        terms = analyze(splitter, text, index=True) if text.strip() else []
        fields[name] = [t.text for t in terms]
        analysed.append((TITLE if name == "t" else BODY, terms))
        dropped |= dropped_kana(text, terms)
        for t in terms:
            surface = fold(text[t.start:t.end])
            if surface and not surface.isascii():
                vocab.setdefault(surface, t.text)
                if any(c in MIDDLE_DOTS for c in surface):  # マナコスト typed for マナ・コスト, as Sudachi reads it
                    vocab.setdefault("".join(c for c in surface if c not in MIDDLE_DOTS), t.text)
    fields["g"] = bigram_terms("\n".join(x for x in (doc.title, doc.body) if x))
    fields["v"] = vocab
    fields["q"] = field_pairs(analysed)
    fields["f"] = sorted(dropped)
    return fields


def _text_key(doc: SearchDoc) -> str:
    return hashlib.sha1((doc.title + "\0" + doc.body).encode()).hexdigest()


class _StaleCache(Exception):
    """The previous build's cache file of a text an incremental export must know the analysis of is missing or
    damaged."""


def export_search(site: SiteData, previous: dict, read_old: Callable[[str], str | None], cache: AnalysisCache,
                  notify: Callable[[str], None] | None = None) -> tuple[dict[str, str], dict]:
    """Files of the static index that must be (re)written (path under the site → content), and the state to keep
    for the next build. Files of the previous build not returned are unchanged and kept.

    ``previous`` is the state the last build returned (empty for a first build): stable document ids, each
    document's text hash (its analysis is that text's file in ``cache``, :mod:`kb.site.search_cache`, which this
    reads, keeps and writes), a hash of each document chunk's inputs and of each name shard, the sections' anchors
    of each long article and the name shards' key (see the module doc), the shard counts and the list of files (the
    state's ``files`` lists every file of the index, written or kept); ``read_old(path)`` returns a file of the
    previous build. Only the documents of chunks whose inputs changed are made again; only
    shards whose content changes are returned; the ``p/``, ``g/`` and ``q/`` shards are left alone, the changed
    documents' records going into the delta (:func:`_delta`), unless it is folded into them. (The vocabulary only
    grows between full builds: a surface whose last document went away still maps to its term.) A previous state
    made by another analysis or dictionary, kept by an older kb (its analyses in the manifest), or whose cache file
    of a changed document is missing or damaged, is dropped (``notify`` is told why). A full export analyses the
    documents chunk by chunk, adding each to compact tables and writing its text's cache file: no build holds every
    document's analysis.
    """
    from kb.search.index import index_identity, stale_reason

    def dropped(reason: str) -> dict:
        if notify:
            notify(f"static search: exporting every document again ({reason})")
        return {}

    identity = index_identity(site.splitter)
    words: frozenset[str] = frozenset()  # of another user dictionary: a document holding one is analysed again
    if "cache" in previous:
        previous = dropped("its analyses are in the manifest of an older kb's build")
    if previous and (reason := stale_reason(previous.get("identity", {}), identity)):
        move = _dictionary_move(site, previous.get("identity", {}), identity)
        if move is None:
            previous = dropped(reason)
        words = move or frozenset()
    try:
        return _export(site, previous, read_old, cache, identity, words)
    except _StaleCache as stale:
        return _export(site, dropped(str(stale)), read_old, cache, identity, frozenset())


def _export(site: SiteData, previous: dict, read_old: Callable[[str], str | None], cache: AnalysisCache,
            identity: dict, words: frozenset[str]) -> tuple[dict[str, str], dict]:
    """:func:`export_search` from a state of this analysis (``words``: those of a changed user dictionary); raises
    _StaleCache when the previous analysis of a document it must know is missing or damaged (the files it wrote to
    ``cache`` until then are of this build's texts, and written again by the full export that follows)."""
    per_chunk = 2 * CHUNK
    section_cache = SectionCache(previous.get("sections", {}))
    groups = _items(site, section_cache)
    ids: dict[str, int] = dict(previous.get("ids", {}))
    old_keys = ({int(i): k for i, k in previous.get("keys", {}).items()}
                if previous.get("p") and "vb" in previous and "base" in previous else {})
    incremental = bool(old_keys)

    def old_analysis(k: str) -> bytes:
        found = cache.read(k)
        if found is None:
            raise _StaleCache(f"{cache.out / cache.path(k)}: missing or damaged")
        return found

    next_id = max(ids.values(), default=-1) + 1
    for item in _ordered([([i for i in items if i.url not in ids], unversioned) for items, unversioned in groups]):
        if item.url not in ids:  # the new entries numbered in the search's order (only they need sorting)
            ids[item.url] = next_id
            next_id += 1
    items = [item for group, _ in groups for item in group]  # the last of a URL in the search's order holds its slot
    slots: dict[int, list[_Item | None]] = defaultdict(lambda: [None] * CHUNK)
    parts: set[int] = set()  # the documents of a long article's sections
    glossary: set[int] = set()  # the documents of a glossary term
    for item in items:
        doc_id = ids[item.url]
        slots[doc_id // CHUNK][doc_id % CHUNK] = item
        if item.part >= 0:
            parts.update((2 * doc_id, 2 * doc_id + 1))
        elif item.entry.kind == GLOSSARY:
            glossary.update((2 * doc_id, 2 * doc_id + 1))
    # the documents whose text holds a word of a changed user dictionary, read otherwise now: analysed again (the
    # unchanged ones found through the previous build's bigrams, then in the texts at hand, no analysis file read),
    # and their chunks made again; a new or changed text holding one is analysed (not taken from the cache) below
    cut: dict[str, list[Section]] = {}  # the articles made (_entry)
    whole = site.whole  # an edit build's unedited articles hold their names alone

    def holds_word(doc: SearchDoc) -> bool:
        return text_holds(doc.title + "\n" + doc.body, words)

    found = _holding(previous, read_old, words) if incremental and words else None
    again = {2 * ids[i.url] + LANG_SLOT[doc.lang] for i in items
             if found is None or not found.isdisjoint((2 * ids[i.url], 2 * ids[i.url] + 1))
             for doc in search_doc(_entry(i._replace(entry=whole(i.entry)), cut)) if holds_word(doc)} if words else set()
    forced = {i // per_chunk for i in again}
    old_latin = _read_shard(read_old, "l") if incremental and read_old("search/l.js") else None
    old_readings = previous.get("readings", {}) if incremental else {}
    every_again = incremental and (old_latin is None or not {"counts", "dropped"} <= old_readings.keys())
    old_chunks: dict[int, bytes] = previous.get("chunks", {}) if incremental else {}
    old_by_chunk: dict[int, dict[int, str]] = defaultdict(dict)
    for i, k in old_keys.items():
        old_by_chunk[i // per_chunk][i] = k
    chunks: dict[int, bytes] = {}
    keys: dict[int, str] = {}  # document id → its text's hash
    untouched = _untouched(site, items, ids, slots.keys() & old_chunks.keys()) if incremental and not forced else set()
    for chunk in untouched:  # an edit build's chunks of no edited article: as the previous build left them
        chunks[chunk] = old_chunks[chunk]
        keys.update(old_by_chunk[chunk])
        cache.kept(old_by_chunk[chunk].values())
    for chunk, chunk_entries in slots.items():  # a chunk of the same documents as last time keeps their files
        if chunk in untouched:
            continue
        chunks[chunk] = digest = _inputs_digest(chunk_entries)  # (one whose file is gone is made again)
        if (digest == old_chunks.get(chunk) and chunk not in forced
                and cache.keep_all(old_by_chunk[chunk].values())):
            keys.update(old_by_chunk[chunk])
    same = {i // per_chunk for i in keys}
    reuse = set(old_keys.values())  # the texts whose analysis the previous build kept

    tables = _Tables(parts, glossary)  # of the new and changed documents (every one in a first build)
    counts = None if every_again else DocumentCounts(
        Counter(old_latin or {}), Counter(old_readings.get("counts", {})), Counter(old_readings.get("dropped", {})))
    files: dict[str, str] = {}
    made: dict[str, bytes] = {}  # the analyses written, when every document is counted again (below)
    changed: set[int] = set()
    for chunk in sorted(chunks.keys() - same):  # in document order, each document analysed at most once
        rows: list[list[str] | None] = [None] * per_chunk
        for j, slot in enumerate(slots[chunk]):
            for doc in search_doc(_entry(slot._replace(entry=whole(slot.entry)), cut)) if slot else ():
                row = 2 * j + LANG_SLOT[doc.lang]
                i = chunk * per_chunk + row
                rows[row] = [doc.url, doc.label, doc.snippet, doc.kind, doc.lang]
                k = keys[i] = _text_key(doc)
                moved = i in again or (bool(words) and k != old_keys.get(i) and holds_word(doc))
                if k == old_keys.get(i) and not moved and cache.keep(k):
                    continue
                data = cache.read(k) if k in reuse and not moved else None
                fields = marshal.loads(data) if data is not None else analyse(site.splitter, doc)
                if data is None or not cache.keep(k):
                    data = data if data is not None else marshal.dumps(fields, 2)
                    cache.put(k, data)
                if counts is None:
                    made[k] = data
                if k != old_keys.get(i) or moved:
                    tables.add(i, fields)
                    if counts is not None:
                        counts.add(fields)
                    changed.add(i)
        files[f"search/d/{chunk}.js"] = _script(f"d/{chunk}", rows)
    ids = {url: i for url, i in ids.items() if 2 * i in keys or 2 * i + 1 in keys}
    changed |= set(old_keys) - set(keys)
    old_fields = {i: marshal.loads(old_analysis(old_keys[i])) for i in sorted(changed) if i in old_keys}
    if counts is not None:
        for fields in old_fields.values():
            counts.add(fields, -1)
    del old_fields

    drop = sorted(changed)  # the documents whose old entries go from each list they are in
    p_count: int = previous["p"] if incremental else max(1, sum(map(len, tables.postings.values())) // (2 * POSTINGS_PER_SHARD))
    g_count: int = previous["g"] if incremental else max(1, sum(map(len, tables.grams.values())) // (2 * POSTINGS_PER_SHARD))
    q_count: int = previous["q"] if incremental else shard_count(tables.pairs, POSTINGS_PER_SHARD)
    counts_of = {"p": p_count, "g": g_count, "q": q_count}
    new_tables = {"p": tables.postings, "g": tables.grams, "q": tables.pairs.places}
    if incremental:
        delta_state = _delta(previous, old_keys, drop, new_tables, counts_of, read_old, cache, files, bool(words),
                             lambda docs: _base_tables(docs, parts, glossary, old_analysis))
    else:  # a first build makes every shard
        for prefix, sizes in PREFIXES.items():
            files.update({f"search/{name}.js": text for name, text in patched_shards(  # kb.site.search_shards
                prefix, new_tables[prefix], {}, counts_of[prefix], fnv1a, sizes, [], None).items()})
        shards = tuple(f"search/{prefix}/" for prefix in PREFIXES)
        delta_state = {"x": None, "delta": {}, "base": sum(len(text.encode()) for f, text in files.items()
                                                           if f.startswith(shards))}
    vocab = tables.vocab
    del tables, new_tables  # the names and lexicons need none of them
    names_key = _names_key(site, ids)
    english: dict[str, list[str]] | None = None  # None: as the previous build's vocabulary has them
    if incremental and not words and names_key is not None and names_key == previous.get("names_key"):
        name_cache, name_digests = previous["names"], previous["name_digests"]  # the name shards as they are
    else:
        english, name_cache, name_digests = _name_files(site, ids, previous if incremental else {}, words, files)
    v_count, inline = _vocabulary(vocab, english, previous["vb"] if incremental else None, read_old, files, words)
    if counts is None:  # a site from before the lexicons' counts: every document's analysis, one at a time
        counts = DocumentCounts()
        for k in keys.values():
            counts.add(marshal.loads(made[k] if k in made else old_analysis(k)))
    latin = dict(sorted((+counts.latin).items()))  # the typo lexicon
    if old_latin is None or old_latin != latin:
        files["search/l.js"] = _script("l", latin)
    changed_readings, readings = export_readings(site.splitter, site.names, old_readings, counts)
    files.update({f"search/{name}.js": _script(name, table) for name, table in changed_readings.items()})
    kept_files = set(previous.get("files", [])) if incremental else set()
    if incremental and previous["x"] != delta_state["x"]:  # the previous delta goes
        kept_files.discard(f"search/{previous['x']}.js")
    every_file = sorted(kept_files | set(files) | {"search/meta.js"})
    files["search/meta.js"] = _script("meta", {"n": len(keys), "p": p_count, "g": g_count, "q": q_count, "c": per_chunk,
                                               "sections": sorted({d // 2 for d in parts}),
                                               "k": browser_constants(), "s": _listed(every_file),
                                               "langs": sorted(LANG_SLOT, key=LANG_SLOT.__getitem__), "vb": v_count,
                                               "f": sorted(readings["dropped"]),
                                               **({"x": delta_state["x"]} if delta_state["x"] else {}),
                                               **({"v": inline} if inline is not None else {})})
    return files, {"ids": ids, "keys": keys, "p": p_count, "g": g_count, "q": q_count,
                   "vb": v_count, "files": every_file, "names": name_cache, "names_key": names_key, "chunks": chunks,
                   "name_digests": name_digests, "sections": section_cache.state, "identity": identity, "readings": readings,
                   **delta_state}


def _delta(previous: dict, old_keys: dict[int, str], drop: list[int], new: dict[str, Any], counts: dict[str, int],
           read_old: Callable[[str], str | None], cache: AnalysisCache, files: dict[str, str], compact: bool,
           base_tables: Callable[[dict[int, str]], dict[str, Any]]) -> dict:
    """The ``p/``, ``g/`` and ``q/`` files of an incremental build (added to ``files``) and their state: the
    previous delta (:mod:`kb.site.search_delta`) with the documents ``drop`` (ascending: the changed ones) and their
    records ``new`` (prefix → key → records) in it, written as the new delta (with an empty base shard where it has
    records of a shard no build wrote); or, when it would grow past :data:`DELTA_SHARE` of the base shards' bytes
    or past :data:`DELTA_MAX_BYTES` (or ``compact``), folded into the base shards
    (:func:`kb.site.search_shards.patched_shards`: the shards holding a delta document's base or current records,
    found from each one's base analysis, ``base_tables``) and no delta. The state: the delta's name (``x``), each
    delta document's base text key (``delta``; "" for none: its base records are those of that text), about how many
    bytes the base shards hold (``base``)."""
    state = {"x": previous["x"], "delta": previous["delta"], "base": previous["base"]}
    if not drop and not compact:  # the delta as it was
        return state
    bases: dict[int, str] = {**{i: old_keys.get(i, "") for i in drop}, **previous["delta"]}
    old = Delta()
    if previous["x"]:
        text = read_old(f"search/{previous['x']}.js")
        if text is None:
            raise _StaleCache(f"search/{previous['x']}.js: missing")
        old = read_delta(previous["x"], text)
    delta = updated(old, drop, new)
    name, text = delta_file(delta, counts, fnv1a)
    size = len(text.encode())
    if not compact and size * DELTA_SHARE <= state["base"] and size <= DELTA_MAX_BYTES:
        for k in bases.values():  # the base records of a delta document are those of this text: kept for a compaction
            if k and not cache.keep(k):
                raise _StaleCache(f"{cache.out / cache.path(k)}: missing")
        files[f"search/{name}.js"] = text
        listed = set(previous.get("files", []))
        for shard in shards_of(delta, counts, fnv1a) - {f[len("search/"):-3] for f in listed}:
            files[f"search/{shard}.js"] = _script(shard, {})  # a shard the browser merges the delta into
        return {**state, "x": name, "delta": bases}
    sizes: dict[str, int] = {}

    def measured(path: str) -> str | None:
        text = read_old(path)
        sizes[path] = len(text.encode()) if text else 0
        return text

    base = base_tables(bases)
    for prefix, sized in PREFIXES.items():
        files.update({f"search/{name}.js": text for name, text in patched_shards(
            prefix, delta.tables.get(prefix, {}), base[prefix], counts[prefix], fnv1a, sized, list(delta.docs),
            measured).items()})
    grown = sum(len(files[path].encode()) - size for path, size in sizes.items())
    return {"x": None, "delta": {}, "base": state["base"] + grown}


def _base_tables(bases: dict[int, str], parts: set[int], glossary: set[int],
                 analysis: Callable[[str], bytes]) -> dict[str, Any]:
    """The records the base shards hold of the delta documents ``bases`` (document → its base text key, "" for
    none), prefix → key → records."""
    base = _Tables(parts, glossary)
    for i, k in sorted(bases.items()):
        if k:
            base.add(i, marshal.loads(analysis(k)))
    return {"p": base.postings, "g": base.grams, "q": base.pairs.places}


def _dictionary_move(site: SiteData, recorded: dict, identity: dict) -> frozenset[str] | None:
    """When the previous export differs from this one only by its user dictionary and the words of both are known
    (:func:`kb.search.userdict.words_changed_in`): the words added, removed or read otherwise. Else None."""
    from kb.search.index import USER_DICTIONARY
    from kb.search.userdict import words_changed_in

    if [k for k in identity if recorded.get(k) != identity[k]] != [USER_DICTIONARY] or not site.splitter.user_dictionary:
        return None
    old = recorded.get(USER_DICTIONARY) or "none"
    return words_changed_in(site.splitter.user_dictionary.parent, "" if old == "none" else old, site.splitter.dictionary_id)


def _listed(paths: list[str]) -> dict[str, list[str]]:
    """The vocabulary, name and reading shards there are (``meta.js``'s ``s``): the browser asks only for those (a
    query's first character without a shard would be a request for a missing file, a 404 in the console)."""
    return {prefix: [p[len(f"search/{prefix}/"):-3] for p in paths if p.startswith(f"search/{prefix}/")]
            for prefix in ("v", "n", "r")}


def _vocabulary(surfaces: dict[str, str | int], english: dict[str, list[str]] | None, count: int | None,
                read_old: Callable[[str], str | None], files: dict[str, str],
                words: frozenset[str] | None) -> tuple[int, dict[str, Any] | None]:
    """The vocabulary's files: ``(bucket count, the vocabulary written into meta.js or None)``; bucket files are
    added to ``files``. ``surfaces``: the changed documents' vocabulary (every document's when
    ``count`` is None, a full build, which chooses the count: 0, in meta.js, when the whole vocabulary is at most
    :data:`VOCAB_INLINE_BYTES`, so a query needs no round trip for it; else buckets of about
    :data:`VOCAB_BUCKET_BYTES`, a key in bucket ``fnv1a(its first character) % count``). ``english``: each Japanese
    name form followed by a tab → its English names (:func:`_names`), so a query's English names are known with its
    terms and their postings fetched with the terms'. An incremental build keeps the count and merges the new
    surfaces into the old files (the vocabulary only grows, but for ``words``: a changed user dictionary's words, whose
    old surfaces, and surfaces made of them, go, as in a full build); the English names replace the old ones (None:
    the old ones stay, and a bucket that gains no surface is not read)."""
    def merged(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
        kept = {k: v for k, v in old.items()
                if not (english is not None and k.endswith("\t")) and not (words and text_holds(k, words))}
        return dict(sorted({**kept, **new}.items()))

    full = count is None
    names = english or {}
    if count is None:
        size = len(json.dumps({**surfaces, **names}, ensure_ascii=False, separators=(",", ":")).encode())
        count = 0 if size <= VOCAB_INLINE_BYTES else -(-size // VOCAB_BUCKET_BYTES)
    if count == 0:
        return 0, merged({} if full else _read_shard(read_old, "meta").get("v", {}), {**surfaces, **names})
    buckets: dict[int, dict[str, Any]] = {b: {} for b in range(count)}
    for key, value in [*surfaces.items(), *names.items()]:
        buckets[fnv1a(key[0]) % count][key] = value
    for b, table in buckets.items():
        if english is None and not table:
            continue  # as it was
        old = {} if full else _read_shard(read_old, f"v/{b}")
        new = merged(old, table)
        if full or new != old:
            files[f"search/v/{b}.js"] = _script(f"v/{b}", new)
    return count, None


def _names_key(site: SiteData, ids: dict[str, int]) -> bytes | None:
    """A hash of all the name shards (:func:`_name_files`) are made from: the name table's key (the builder's record
    of its inputs, splitter and code: ``kb.site.gather._names``; None when there is none, and then no key), and of
    each rule (in order) and glossary term its key in the site, URL, document id and, per node, its language, number,
    title, English name, aliases, text and the target of its first rule link. The articles are not in it (their
    names are in the table): an article changed leaves the key as it was. The name forms are a function of the name
    and the splitter, both covered."""
    table_key = site.names_record.get("key") if site.names is not None else None
    if not isinstance(table_key, str):
        return None
    flat: list = [table_key]
    for group in (site.rules, site.terms):
        flat.append(None)
        for key, entry in group.items():
            flat.append((key, entry.url, ids.get(entry.url)))
            for lang, node in entry.nodes.items():  # a 7-tuple per node after its entry's 3-tuple
                rule = None
                for link in entry.links.get(lang, ()):
                    if link.kind == "rule" and link.target:
                        rule = link.target
                        break
                flat.append((lang, node.number, node.title, node.english, node.aliases, node.text, rule))
    return _digest(flat)


def _name_files(site: SiteData, ids: dict[str, int], previous: dict, words: frozenset[str], files: dict[str, str]
                ) -> tuple[dict[str, list[str]], dict[str, list[str]], dict[str, bytes]]:
    """The name shards (``n/``: :func:`_names` with the rules the rules text names first,
    :func:`kb.site.search_learned.learned_rules`), added to ``files`` when changed since ``previous`` (an
    incremental build's state, else empty): (each Japanese form followed by a tab → its English names, for the
    vocabulary; the name forms to keep; each shard's hash)."""
    forms_of, name_cache = _name_forms(site, {name: forms for name, forms in previous.get("names", {}).items()
                                              if not (words and text_holds(name, words))})
    names = _names(site, ids, forms_of)
    for form, first in learned_rules(site, lambda entry: entry_docs(ids, entry), forms_of).items():
        table = names[initial_shard(form)]
        table[form] = list(dict.fromkeys([*first, *table.get(form, [])]))
    english = {form: table.pop(form) for table in names.values() for form in [f for f in table if f.endswith("\t")]}
    # a name shard that lost its last name stays, empty
    names.update({f[len("search/n/"):-3]: {} for f in previous.get("files", [])
                  if f.startswith("search/n/") and f[len("search/n/"):-3] not in names})
    old_name_digests: dict[str, bytes] = previous.get("name_digests", {})
    name_digests = {}
    for hex_code, table in names.items():
        pairs = sorted(table.items())
        name_digests[hex_code] = digest = _digest(pairs)
        if digest != old_name_digests.get(hex_code):
            files[f"search/n/{hex_code}.js"] = _script(f"n/{hex_code}", dict(pairs))
    return english, name_cache, name_digests


def _name_forms(site: SiteData, cache: dict[str, list[str]]) -> tuple[Callable[[str], list[str]], dict[str, list[str]]]:
    """The name forms of a name (:func:`kb.search.names.name_forms`, sorted), from ``cache`` (the previous build's,
    by name) when there, and the cache to keep: those asked for, as they are asked."""
    from kb.search.names import name_forms

    used: dict[str, list[str]] = {}

    def forms_of(name: str) -> list[str]:
        forms = used.get(name)
        if forms is None:
            forms = used[name] = cache.get(name) or sorted(name_forms(site.splitter, name))
        return forms

    return forms_of, used


def _names(site: SiteData, ids: dict[str, int], forms_of: Callable[[str], list[str]]) -> dict:
    """Whole-query lookup, as ``kb search`` does it, by the form's first character: each name form of a glossary
    term (title, English name, alias; :func:`kb.search.names.name_forms`) → [the rule the entry cites first, the
    entry]; each Japanese name with an English name (:mod:`kb.search.names`: a wiki title, a card) and each known
    reading (katakana) → the same for the entries of those names; each rule number → its rule (so the browser
    offers a jump only to a rule that has a page, at the URL the site gives it); ``forms_of``: :func:`_name_forms`."""
    tables: dict[str, dict[str, list]] = defaultdict(dict)

    def add(form: str, docs: list[int]) -> None:  # docs: without repeats, and not changed afterwards
        table = tables[initial_shard(form)]
        old = table.get(form)
        table[form] = docs if old is None else list(dict.fromkeys([*old, *docs]))

    by_url = {entry.url: entry for entry in [*site.rules.values(), *site.terms.values()]}
    by_form: dict[str, list[int]] = {}
    for entry in site.terms.values():
        docs = []
        for lang in ("ja", "en"):
            rule = next((link.target for link in entry.links.get(lang, []) if link.kind == "rule" and link.target), None)
            if rule and rule in by_url and rule in ids:
                docs += [d for d in entry_docs(ids, by_url[rule]) if d not in docs]
        docs += entry_docs(ids, entry)
        for node in entry.nodes.values():
            for name in (node.title, node.english, *node.aliases):
                if name:
                    for form in forms_of(name):
                        by_form.setdefault(form, docs)
    for form, docs in by_form.items():
        add(form, docs)
    names = site.names
    english_of: dict[str, list[str]] = {}
    if names is not None:
        for form, english in names.english.items():
            english_of[form] = list(english)
            docs = [d for name in english for f in forms_of(name) for d in by_form.get(f, [])]
            if docs:
                add(form, list(dict.fromkeys(docs)))
        for reading, japanese in names.readings.items():
            docs = [d for name in japanese for f in forms_of(name) for d in tables[initial_shard(f)].get(f, [])]
            if docs:
                add(reading, list(dict.fromkeys(docs)))
            read = [e for name in japanese for f in sorted(forms_of(name)) for e in names.english.get(f, ())]
            if read:
                english_of[reading] = list(dict.fromkeys([*english_of.get(reading, []), *read]))
    for form, names_of_form in english_of.items():  # a form has no whitespace: the tab sets these keys apart
        tables[initial_shard(form)][form + "\t"] = names_of_form
    for number, entry in site.rules.items():  # in rule order
        for asked in asked_by(number):
            add(asked, entry_docs(ids, entry))
    return tables


def entry_docs(ids: dict[str, int], entry: Entry) -> list[int]:
    """The documents of an entry (``ids``: entry ids by URL): Japanese, English."""
    return [2 * ids[entry.url] + LANG_SLOT[lang] for lang in ("ja", "en") if lang in entry.nodes]


class _Tables:
    """Postings and bigram postings (term → ``[doc, weight, …]``, compact arrays), vocabulary (surface → term, ``1``
    when the same) and adjacent pairs (:class:`kb.site.search_phrases.PairTable`) of the documents added, in ascending
    id order (``parts``: those that are a long article's sections, :func:`kb.search.ranking.section_weight`;
    ``glossary``: glossary entries, :func:`kb.search.ranking.entry_weight`)."""

    def __init__(self, parts: set[int], glossary: set[int]):
        self.parts, self.glossary = parts, glossary
        self.postings: dict[str, array[int]] = {}
        self.grams: dict[str, array[int]] = {}
        self.vocab: dict[str, str | int] = {}
        self.pairs = PairTable()

    def add(self, doc_id: int, fields: dict) -> None:
        section, entry = doc_id in self.parts, doc_id in self.glossary
        title, body = Counter(fields["t"]), Counter(fields["b"])
        terms = title.keys() | body.keys()
        for term in terms:
            weight = ranking.term_weight(body[term], len(fields["b"]), title[term], len(fields["t"]))
            _append(self.postings, term, doc_id, ranking.entry_weight(ranking.section_weight(weight, section), entry))
        for gram, tf in Counter(fields["g"]).items():
            weight = ranking.section_weight(ranking.gram_weight(tf, len(fields["g"])), section)
            _append(self.grams, gram, doc_id, ranking.entry_weight(weight, entry))
        vocab = self.vocab
        for surface, term in fields["v"].items():
            vocab.setdefault(surface, 1 if surface == term else term)
        for term in terms:  # a Japanese term as typed in its own form (積む, where the texts have only 積み, 積まれた):
            if len(term) > 1 and not term.isascii():  # the analysis reads it so
                vocab.setdefault(term, 1)
        self.pairs.add(doc_id, fields.get("q", {}))


def _append(table: dict[str, array[int]], key: str, doc_id: int, weight: int) -> None:
    entries = table.get(key)
    if entries is None:
        entries = table[key] = array("q")
    entries.append(doc_id)
    entries.append(weight)
