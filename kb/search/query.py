"""Query understanding and the search API: :func:`search` (one call) or :class:`Searcher` (many queries, warm).

A query searches the documents the site shows (:mod:`kb.search.view`: each node of the current view at its URL;
``version:V``: that version's nodes), the same documents, ranked the same way, as the static search and
``kb serve``. It is, in this order of precedence:

1. **Rule numbers** — the whole query (after filters) is a rule number in any width or prefix (``601.2f``,
   ``６０１．２ｆ``, ``CR:601.2f``, ``rule 601.2f``; a lone digit only with a prefix): a number means today's
   number (older numbering is ``version:``): that rule and its subrules (``120.4``), the rule alone with a
   trailing period (``120.4.``), or a range (``601.2a-d``, ``601.2a-601.2d``). ``702.6`` never matches ``702.60``.
2. **Glossary terms** — the whole query is a glossary term, alias or English name (``予示``, ``Manifest``,
   ``マナコスト``), its reading (``よし``), or a Japanese name whose English name is one (the wiki title ``接死`` →
   Deathtouch; :mod:`kb.search.names`): first the rules the Japanese rules text names so (``rule 605〔マナ能力〕``,
   :meth:`kb.search.names.NameTable.rules_named`), then for each entry the rule its texts cite first, then the
   entry (each in both languages, Japanese first).
3. **Words** — analysed by :func:`kb.search.analysis.query_terms`; each term the index knows is looked up in
   ``title`` and ``body``, the other Japanese words as bigrams of what was typed (of the whole word when Sudachi
   left a single character), and the documents ranked by :mod:`kb.search.ranking` (terms found, then score).
   Results of 1. and 2. come first, then these. ``"quoted phrases"`` (or 「…」) must occur as phrases (in the
   browser too: :mod:`kb.site.search_phrases`).

4. **Forgiving** — when the query holds words the index lacks (:mod:`kb.search.fuzzy`: an English typo, an IME
   slip of the same reading, a kana spelling, ``よじする``), it is also searched as rewritten into indexed terms;
   those hits (``Hit.corrected``) follow the hits of the whole query as a name and come before those of its words
   as typed (the static search alike, but for kanji IME slips, which need Sudachi's readings: ``混声マナ``; a kana
   run is read there with the exported readings, :mod:`kb.site.search_readings`). :meth:`Searcher.suggest` names
   the closest terms and the English name when nothing is found. In every surface alike: a question's asking words
   (:mod:`kb.search.questions`) are not looked up, and a long MTG Wiki article is its lead and one document per
   section (:mod:`kb.search.sections`), each section at its heading's anchor and weighted below a rule
   (:func:`kb.search.ranking.section_weight`).

Filters anywhere in the query: ``kind:rule`` (chapters, sections, rules, subrules), ``kind:glossary``,
``kind:article``, ``kind:note``, ``kind:card``; ``lang:ja``/``lang:en`` (the node's language); ``version:V``
(the versions equal to V or starting with ``V.``: ``20231117`` → the English 20231117 and the Japanese
20231117.0, each node at the URL the site shows it on, in the ``v/<version>/`` archive when not current).
Filters never change the ranking; unversioned nodes (wiki, notes, cards) are always searched.

Each :class:`Hit` carries kind, number/title, version, language, score, the URL of the page the site shows it on
(:class:`kb.urls.where.Locator`: a translated rule is shown under its current number, ``shown_as``; older
versions are in the ``v/<version>/`` archive), a snippet with highlight offsets, and the parent and section it sits
in. A rule and its translation are two hits (Japanese first) with one URL.
Bad queries (empty, longer than :data:`MAX_QUERY_CHARS`, unbalanced quotes, control characters) raise KbError.
"""

from __future__ import annotations

import logging
import os
import re
import unicodedata
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from functools import cached_property, lru_cache, partial
from itertools import islice
from typing import TYPE_CHECKING, Any

from kb import rulenum
from kb.errors import KbError
from kb.fold import fold
from kb.ids import rule_id
from kb.model import ARTICLE, CARD, GLOSSARY, NOTE, REF_RULE, RULE_KINDS, UNVERSIONED, Node
from kb.search import analysis, fuzzy, questions, ranking, view
from kb.search.sections import section_id, section_text, sections, split_section_id
from kb.search.view import DocTable, ViewDoc
from kb.splitter import JapaneseSplitter
from kb.store import NodeKey, Store

if TYPE_CHECKING:
    from kb.search.names import NameTable
    from kb.search.warm import WarmSearch

log = logging.getLogger("kb")

MAX_QUERY_CHARS = 500
SNIPPET_CHARS = 160
KIND_FILTERS = {"rule": RULE_KINDS, "glossary": (GLOSSARY,), "article": (ARTICLE,), "note": (NOTE,), "card": (CARD,)}
LANG_ORDER = {"ja": 0, "en": 1}

_FILTER = re.compile(r"(?<!\S)(kind|lang|version):(\S*)", re.I)
_PHRASE = re.compile(r"\"([^\"]*)\"|「([^」]*)」|“([^”]*)”")
_RANGE = re.compile(rf"^(.+?)\s*{rulenum.RANGE_DASH}\s*({rulenum.RANGE_END})$")


@dataclass(frozen=True)
class ParsedQuery:
    text: str  # the words, filters and phrases removed
    phrases: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    lang: str | None = None
    version: str | None = None
    numbers: tuple[str, ...] = ()  # rule numbers asked for directly
    with_subrules: bool = False  # '120.4' (True) vs '120.4.' or a range (False)


@dataclass(frozen=True)
class Suggestions:
    """What a query that found nothing may have meant (:meth:`Searcher.suggest`)."""

    terms: tuple[str, ...]  # indexed terms nearest its words
    english: tuple[str, ...]  # the English names the sources give the Japanese name it is


@dataclass(frozen=True)
class Hit:
    kind: str
    id: str
    number: str | None
    title: str | None
    version: str
    lang: str
    score: float  # BM25F for word matches; 1.0 for number and term matches, which always come first
    url: str  # site-relative: where the site shows the node (kb.urls.where; older versions: the v/<version>/ archive)
    snippet: str
    highlights: tuple[tuple[int, int], ...]  # offsets into ``snippet``
    parent_number: str | None
    parent_title: str | None
    section: str | None  # '601 呪文を唱えること': the nearest titled ancestor
    match: str  # 'number' | 'term' | 'words' | 'some words'
    shown_as: str | None = None  # the number the site shows the rule under, when the node's differs (a translation)
    corrected: str | None = None  # the query it was found as, when not as typed (kb.search.fuzzy: a typo, a reading)

    @property
    def key(self) -> NodeKey:
        """The stored node's key (a section's article: :mod:`kb.search.sections`)."""
        return NodeKey(self.version, self.lang, split_section_id(self.id)[0])

    def to_dict(self) -> dict:
        d = asdict(self)
        d["highlights"] = [list(h) for h in self.highlights]
        return d


# -- parsing ----------------------------------------------------------------------------------------------------
def parse_query(query: str, *, kind: str | None = None, lang: str | None = None,
                version: str | None = None) -> ParsedQuery:
    """Validate and take a query apart (KbError with a one-line reason when it cannot be searched)."""
    if query is None or not query.strip():
        raise KbError("empty query: give words, a rule number (601.2f) or a term (唱える)")
    if len(query) > MAX_QUERY_CHARS:
        raise KbError(f"query is {len(query)} characters long; the limit is {MAX_QUERY_CHARS}")
    bad = next((c for c in query if unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co") and c not in "\t\n\r"), None)
    if bad is not None:
        raise KbError(f"query contains the control character U+{ord(bad):04X} at position {query.index(bad) + 1}")
    query = query.replace("\t", " ").replace("\n", " ").replace("\r", " ")
    for opening, closing in (("「", "」"), ("“", "”")):
        if query.count(opening) != query.count(closing):
            raise KbError(f"unbalanced quotes in the query: {query.count(opening)} '{opening}' but "
                          f"{query.count(closing)} '{closing}'")
    if query.count('"') % 2:
        raise KbError("unbalanced quotes in the query: an odd number of '\"'")
    if kind and kind not in KIND_FILTERS:
        raise KbError(f"unknown kind {kind!r}; choose one of {', '.join(KIND_FILTERS)}")
    kinds = list(KIND_FILTERS[kind]) if kind else []
    for name, value in _FILTER.findall(query):
        name, value = name.lower(), value.lower() if name.lower() != "version" else value
        if name == "kind":
            if value not in KIND_FILTERS:
                raise KbError(f"kind:{value}: unknown kind; choose one of {', '.join(KIND_FILTERS)}")
            kinds += [k for k in KIND_FILTERS[value] if k not in kinds]
        elif name == "lang":
            if value not in LANG_ORDER:
                raise KbError(f"lang:{value}: unknown language; choose ja or en")
            lang = value
        elif value:
            version = value
    if lang and lang not in LANG_ORDER:
        raise KbError(f"unknown language {lang!r}; choose ja or en")
    rest = _FILTER.sub(" ", query)
    phrases = tuple(p for groups in _PHRASE.findall(rest) for p in groups if p.strip())
    text = " ".join(_PHRASE.sub(" ", rest).split())
    if not text and not phrases:
        if kinds or lang or version:
            raise KbError("the query has filters but nothing to search for")
        raise KbError("empty query: give words, a rule number (601.2f) or a term (唱える)")
    numbers, with_subrules = _rule_numbers(text) if not phrases else ((), False)
    return ParsedQuery(text, phrases, tuple(kinds), lang, version, numbers, with_subrules)


def _rule_numbers(text: str) -> tuple[tuple[str, ...], bool]:
    folded = fold(text).strip()
    number = rulenum.normalize(folded)
    if number and (folded[0].isdigit() and "." not in number and len(number) == 1):
        return (), False  # a lone digit is a chapter only with a prefix (CR:6), as in the browser
    if number:
        return (number,), not folded.endswith(".")
    m = _RANGE.match(folded)
    if m:
        first = rulenum.normalize(m.group(1))
        if first:
            return tuple(rulenum.expand_range(first, m.group(2).rstrip("."))), False
    return (), False


# -- searching --------------------------------------------------------------------------------------------------
class Searcher:
    """Searches one knowledge base; keep one around to answer many queries warm. Close it (or use ``with``).

    Only the indexes of the versions a query searches are read (:mod:`kb.search.index` keeps one per version and
    language); the open Whoosh searchers, with the field lengths they load, are shared by every Searcher of the
    process (:func:`kb.search.index.shared_indexes`) and reopened only when the index changed."""

    def __init__(self, store: Store, notify: Callable[[str], None] | None = None, *,
                 splitter: JapaneseSplitter | None = None, kept: WarmSearch | None = None):
        """``notify``: told in one line when the index is stale (it is searched as it is, never rebuilt: a reader
        does not write; default: a logged warning). ``splitter``: the command's (one is made when None); queries
        are split with the user dictionary the index recorded, as the index was. ``kept``: where the current view
        and the name table of the store's generation are kept (:mod:`kb.search.warm`; None: read from the kb folder,
        :mod:`kb.search.coldcache`)."""
        from kb.search import coldcache, userdict
        from kb.search.index import reader_staleness, recorded_user_dictionary, shared_indexes
        from kb.urls.where import Locator
        from kb.versions.current import current_view

        self.splitter = userdict.recorded(store, recorded_user_dictionary(store), splitter or JapaneseSplitter())
        self.store = store
        try:
            self.indexes = shared_indexes(store)
        except Exception as error:
            damaged = self._damaged(error)
            if damaged is None:
                raise
            raise damaged from error
        stale = reader_staleness(store, self.splitter)
        if stale:
            (notify or log.warning)(f"{self.indexes.root}: the search index is stale ({stale}): run 'kb index'")
        self._versions = {lang: store.versions(lang) for lang in LANG_ORDER}
        self._kept = kept
        self.locator = Locator(kept.view(store) if kept else coldcache.kept(
            store, "view", (), lambda: current_view(store), coldcache.encode_view, coldcache.decode_view))
        self.snippets = SnippetMemo(self.splitter)
        self._tables: dict[frozenset, tuple[Any, DocTable]] = {}  # scopes → (the Whoosh searcher, its documents)

    @cached_property
    def names(self) -> NameTable:
        """The store's Japanese names with their English names and readings, made when a query first needs them
        (a rule number does not)."""
        from kb.search import coldcache
        from kb.search.names import name_table

        if self._kept:
            return self._kept.names(self.store, self.splitter)
        return coldcache.kept(self.store, "names", (self.splitter.dictionary_id,),
                              lambda: name_table(self.store, self.splitter), coldcache.encode_names,
                              coldcache.decode_names)

    def close(self) -> None:
        """Nothing of the store's is held; the shared Whoosh searchers stay open for the next Searcher."""

    def __enter__(self) -> Searcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def search(self, query: str, *, limit: int = 10, kind: str | None = None, lang: str | None = None,
               version: str | None = None) -> list[Hit]:
        if limit < 1:
            raise KbError(f"--limit {limit}: give at least 1")
        q = parse_query(query, kind=kind, lang=lang, version=version)
        try:
            return self._forgiving(q, self._search(q, limit), limit)
        except Exception as error:
            damaged = self._damaged(error)
            if damaged is None:
                raise
            raise damaged from error

    def suggest(self, query: str, *, lang: str | None = None, version: str | None = None) -> Suggestions:
        """What to say when ``query`` found nothing: the indexed terms nearest its words (:func:`kb.search.fuzzy.closest`)
        and the English names the sources give the Japanese name it is (``接死`` → Deathtouch)."""
        q = parse_query(query, lang=lang, version=version)
        english = self.names.english_names(self.splitter, q.text)
        with self.indexes.lock:
            found = self._lexicon(q)
            terms = () if found is None else fuzzy.closest(*found, self.splitter, q.text)
        return Suggestions(terms, english)

    def _lexicon(self, q: ParsedQuery) -> tuple[fuzzy.Lexicon, Any] | None:
        """The lexicon and reader of the indexes ``q`` searches (made once per open searcher); call under the lock."""
        scopes = self._scopes(q)
        self.indexes.refresh()
        ws = self.indexes.searcher(scopes)
        if ws is None:
            return None
        if scopes not in self.indexes.lexicons:
            self.indexes.lexicons[scopes] = fuzzy.lexicon(ws.reader(), self.splitter, self.names)
        return self.indexes.lexicons[scopes], ws.reader()

    def _forgiving(self, q: ParsedQuery, hits: list[Hit], limit: int) -> list[Hit]:
        """``hits`` and, when the query holds words the index lacks, the hits of the query as
        :func:`kb.search.fuzzy.corrected` rewrites it (typos, readings): after the hits of the whole query as a
        number or a name, before those of its words as typed — a word the index lacks is looked up as bigrams, and a
        document holding them all holds them by chance (``ついほう``: つい, 方) — each hit of the rewrite saying
        what it was found as (``corrected``)."""
        if q.numbers or q.phrases or not q.text:
            return hits
        with self.indexes.lock:
            self.indexes.refresh()
            ws = self.indexes.searcher(self._scopes(q))
            if ws is None or not fuzzy.needs_correction(lambda t: self._known(ws, t), self.splitter, q.text):
                return hits
            found = self._lexicon(q)
            if found is None:
                return hits
            text = fuzzy.corrected(*found, self.splitter, q.text)
        if text is None or text == q.text:
            return hits
        better = [replace(h, corrected=text) for h in self._search(replace(q, text=text), limit)]
        typed = ("words", "some words")
        ordered = [*(h for h in hits if h.match not in typed), *better, *(h for h in hits if h.match in typed)]
        out: dict[tuple[str, str, str], Hit] = {}
        for h in ordered:
            out.setdefault((h.version, h.lang, h.id), h)
        return list(out.values())[:limit]

    def _damaged(self, error: Exception) -> KbError | None:
        """The damaged index ``error`` comes from, naming the remedy; None when the index files are as kb wrote
        them (then ``error`` is what it says)."""
        from kb.search.index import damaged_index_error

        return damaged_index_error(self.store, error)

    def _search(self, q: ParsedQuery, limit: int) -> list[Hit]:
        scopes = self._scopes(q)
        english = () if q.numbers or q.phrases else self.names.english_names(self.splitter, q.text)
        with self.indexes.lock:
            self.indexes.refresh()
            ws = self.indexes.searcher(scopes)
            if ws is None:
                return []
            table = self._table(ws, scopes, q.version)
            ranked: list[tuple[int, float, str]] = []
            if q.numbers:  # today's numbers (or version:V's): the rules, with their subrules unless told
                asked = [n if q.with_subrules else n + "." for n in q.numbers]
                ranked = [(d, 1.0, "number") for d in dict.fromkeys(d for n in asked for d in table.by_number.get(n, []))]
            if not ranked and not q.phrases:
                ranked = [(d, 1.0, "term") for d in self._by_term(ws, table, q, english)]
            if not (q.numbers and ranked):
                first = {d for d, _, _ in ranked}
                ranked += [r for r in self._by_words(ws, table, q, english) if r[0] not in first]
            kinds = self._kind_docs(ws, scopes, q.kinds) if q.kinds else None
            chosen = [(table.docs[d], score, match) for d, score, match in ranked
                      if (kinds is None or d in kinds) and (not q.lang or table.docs[d].key.lang == q.lang)]
        by_url: dict[str, list[tuple[ViewDoc, float, str]]] = {}
        for doc, score, match in chosen:  # one URL: its documents together, Japanese first
            by_url.setdefault(doc.url, []).append((doc, score, match))
        terms = set() if q.numbers else set(analysis.query_terms(self.splitter, " ".join([q.text, *q.phrases, *english])))
        found = (d for group in by_url.values() for d in sorted(group, key=lambda x: LANG_ORDER.get(x[0].key.lang, 9)))
        hits = (self._hit(doc, score, match, terms, q, english) for doc, score, match in found)
        return list(islice((hit for hit in hits if hit is not None), limit))

    # the documents ranked ------------------------------------------------------------------------------------
    def _scopes(self, q: ParsedQuery) -> frozenset[tuple[str, str]]:
        """The (version, lang) indexes a query ranks over, whatever its filters (so the filters never change the
        ranking): the current view's, or version V's; unversioned nodes always."""
        if q.version:
            chosen = {(v, lang) for lang, versions in self._versions.items() for v in versions
                      if v == q.version or v.startswith(q.version + ".")}
            if not chosen:
                known = sorted({v for vs in self._versions.values() for v in vs})
                raise KbError(f"version {q.version}: not in the knowledge base (have: {', '.join(known) or 'none'})")
        else:
            shown = self.locator.view
            chosen = {(ja.key.version, "ja") for ja in shown.ja.values()}
            if shown.english is not None:
                chosen.add((shown.english.version, "en"))
            elif shown.shown is not None:
                chosen.add((shown.shown.version, shown.shown.lang))
        return frozenset(chosen | {(UNVERSIONED, lang) for lang in LANG_ORDER})

    def _table(self, ws: Any, scopes: frozenset, version: str | None) -> DocTable:
        """The documents of ``ws`` a query ranks (made once per open Whoosh searcher, kept on disk per store
        generation: :mod:`kb.search.coldcache`)."""
        from kb.search import coldcache

        kept = self._tables.get(scopes)
        if kept is not None and kept[0] is ws:
            return kept[1]

        def make() -> DocTable:
            if version:
                return view.doc_table(ws, lambda key: True, lambda key: self.locator.url(key), view.own_rule_number)
            return view.doc_table(ws, view.current_shown(self.locator.view), lambda key: self.locator.url(key),
                                  view.shown_rule_number(self.locator))

        archived = bool(version)
        table = coldcache.kept(self.store, coldcache.scope_name("archive" if archived else "docs", scopes),
                               (sorted(scopes), archived, ws.doc_count_all()), make, coldcache.encode_table,
                               coldcache.decode_table)
        self._tables[scopes] = (ws, table)
        return table

    # 2. glossary terms -------------------------------------------------------------------------------------------
    def _by_term(self, ws: Any, table: DocTable, q: ParsedQuery, english: tuple[str, ...]) -> list[int]:
        """The glossary entries the whole query names — in Japanese, in English, by reading, or through the English
        name of a Japanese name (``接死`` → Deathtouch) — each after the rule that defines it; first the rules the
        Japanese rules text names so (:meth:`_named_rules`)."""
        from whoosh import query as wq

        from kb.search.names import name_forms

        forms = {f for name in (q.text, *self.names.japanese_names(q.text), *english) for f in name_forms(self.splitter, name)}
        lookup = wq.And([wq.Term("kind", GLOSSARY), wq.Or([wq.Term("names", f) for f in sorted(forms)])])
        entries = sorted((d for d in ws.docs_for_query(lookup) if d in table.docs),
                         key=lambda d: (LANG_ORDER.get(table.docs[d].key.lang, 9), table.docs[d].key.id))
        found = self._named_rules(table, q, english)
        for url in dict.fromkeys(table.docs[d].url for d in entries):  # an entry: the rules its texts cite first,
            docs = table.by_url[url]  # then the entry, each in both languages
            rules = [table.by_key.get(rule) for d in docs if (rule := self._defining_rule(table.docs[d].key))]
            for doc in [d for r in rules if r is not None for d in table.by_url[table.docs[r].url]] + docs:
                if doc not in found:
                    found.append(doc)
        return found

    def _named_rules(self, table: DocTable, q: ParsedQuery, english: tuple[str, ...]) -> list[int]:
        """The documents of the rules the Japanese rules text names as the whole query (``マナ能力`` → 605,
        :mod:`kb.search.names`): the Japanese rule of that number shown, with the English rule shown beside it; else
        the English rule of that number where it still bears the English name (not renumbered)."""
        found: list[int] = []
        scopes = sorted((v, lang) for v, lang in self._scopes(q) if v != UNVERSIONED)
        names = {n.casefold() for n in english}
        for number in self.names.rules_named(self.splitter, q.text):
            docs = [d for v, lang in scopes if lang == "ja" and (d := table.by_key.get(NodeKey(v, lang, rule_id(number))))
                    is not None]
            if not docs:
                docs = [d for v, lang in scopes if lang == "en" and (d := table.by_key.get(NodeKey(v, lang, rule_id(number))))
                        is not None and self._titled(table.docs[d].key, names)]
            for doc in docs:
                found += [d for d in table.by_url[table.docs[doc].url] if d not in found]
        return found

    def _titled(self, key: NodeKey, names: set[str]) -> bool:
        """Whether the node of ``key`` is titled (or, untitled, says) one of ``names`` (casefolded)."""
        node = self.store.node(key)
        return node is not None and (node.title or node.text.strip()).casefold() in names

    def _defining_rule(self, entry: NodeKey) -> NodeKey | None:
        """The rule an entry cites first; a translation's rule the current view lacks is the shown rule its
        reference leads to (renumbered, or of the same number), as the site links it."""
        target = next((sr.ref.target for sr in self.store.refs_from(entry) if sr.ref.kind == REF_RULE), None)
        if target is None:
            return None
        key = NodeKey(entry.version, entry.lang, rule_id(target))
        cv = self.locator.view
        if key not in cv.current_ids and cv.english is not None and entry.version != cv.english.version:
            shown = cv.renumbered.get((key.version, key.id), key.id)
            return NodeKey(cv.english.version, "en", shown) if shown else None
        return key

    # 3. words ------------------------------------------------------------------------------------------------------
    def _by_words(self, ws: Any, table: DocTable, q: ParsedQuery, english: tuple[str, ...]) -> list[tuple[int, float, str]]:
        """Every document holding a looked-up term or bigram, in the order of :mod:`kb.search.ranking`; with
        phrases, only documents holding them."""
        lookups, question = self._lookups(ws, " ".join([q.text, *q.phrases]), english)
        if not lookups:
            return []
        allowed = None
        if q.phrases:
            from whoosh import query as wq

            allowed = set(ws.docs_for_query(wq.And([self._phrase_query(ws, p) for p in q.phrases])))
        reader = ws.reader()
        entries = self._kind_docs(ws, self._scopes(q), (GLOSSARY,))
        scores: dict[int, list[int]] = {}
        names: dict[int, dict[int, list[int]]] = {}  # English name → document → [its terms held, their score]
        for field, text, grams, name in lookups:
            held = {d: ranking.entry_weight(w, d in entries) for d, w in self._postings(reader, table, field, text).items()}
            weight = ranking.idf(table.size, len(held)) * (ranking.GRAM_SHARE if grams else ranking.TERM_SHARE)
            cover = ranking.gram_cover(grams) if grams else ranking.COVER_SCALE
            for doc, w in held.items():
                entry = names.setdefault(name, {}).setdefault(doc, [0, 0]) if name else scores.setdefault(doc, [0, 0])
                entry[0] += 1 if name else cover
                entry[1] += weight * w
        for name, held_by in names.items():  # an English name counts where all its words are
            size = sum(1 for lookup in lookups if lookup[3] == name)
            for doc, (count, score) in held_by.items():
                if count == size:
                    entry = scores.setdefault(doc, [0, 0])
                    entry[0] += ranking.COVER_SCALE
                    entry[1] += score
        full = (sum(ranking.gram_cover(grams) if grams else ranking.COVER_SCALE for _, _, grams, name in lookups if not name)
                + ranking.COVER_SCALE * len({lookup[3] for lookup in lookups if lookup[3]}))
        ranked = sorted((d for d in scores if allowed is None or d in allowed),
                        key=lambda d: ranking.rank_key(scores[d][0], scores[d][1], table.docs[d].order,
                                                       question and table.docs[d].section is not None))
        scale = ranking.IDF_SCALE * ranking.WEIGHT_SCALE * ranking.TERM_SHARE
        return [(d, scores[d][1] / scale, "words" if scores[d][0] >= full else "some words") for d in ranked]

    def _lookups(self, ws: Any, text: str, english: tuple[str, ...] = ()) -> tuple[list[tuple[str, str, int, int]], bool]:
        """(field, term, bigrams of its piece — 0 for an index term, English name — 0 for none) to look up for
        ``text``: the index terms of its words, those of each English name the whole text stands for
        (``ドライアドの東屋`` → Dryad Arbor: name 1, 2 …), then the bigrams of each Japanese word the index has no
        term for (of the whole word when Sudachi left a single character); at most
        :data:`kb.search.ranking.MAX_LOOKUPS`, as the browser; and whether ``text`` is a question (asking words
        dropped: :mod:`kb.search.questions`)."""
        terms: list[tuple[str, str, int, int]] = []
        grams: list[tuple[str, str, int, int]] = []
        for term in _unique(analysis.analyze(self.splitter, text, index=False)):
            surface = text[term.start:term.end]
            if self._known(ws, term.text) or surface.isascii():
                terms.append(("body", term.text, 0, 0))
                continue
            if len(surface) < 2:
                surface = next(m.group(0) for m in re.finditer(r"\S+", text) if m.start() <= term.start < m.end())
            piece = analysis.bigram_terms(surface)
            grams += [("grams", g, len(piece), 0) for g in piece]
        asked = questions.content_terms([t[1] for t in terms])  # asking words not required, as in the browser
        question = len(asked) < len(terms)
        terms = [t for t in terms if t[1] in asked]
        for number, name in enumerate(english, 1):
            terms += [("body", t, 0, number) for t in dict.fromkeys(analysis.query_terms(self.splitter, name))]
        return (terms + grams)[:ranking.MAX_LOOKUPS], question

    @staticmethod
    def _postings(reader: Any, table: DocTable, field: str, text: str) -> dict[int, int]:
        """Document → stored weight (:mod:`kb.search.ranking`) of a term (``field`` body: title and body) or bigram
        (a long article's section's: :func:`kb.search.ranking.section_weight`)."""
        if field == "grams":
            if ("grams", text) not in reader:
                return {}
            m = reader.postings("grams", text)
            out = {}
            while m.is_active():
                d = m.id()
                if d in table.docs:
                    weight = ranking.gram_weight(int(m.weight()), reader.doc_field_length(d, "grams") or 0)
                    out[d] = ranking.section_weight(weight, table.docs[d].section is not None)
                m.next()
            return out
        tfs: dict[int, list[int]] = {}
        for slot, name in enumerate(("title", "body")):
            if (name, text) in reader:
                m = reader.postings(name, text)
                while m.is_active():
                    d = m.id()
                    if d in table.docs:
                        tfs.setdefault(d, [0, 0])[slot] = int(m.weight())
                    m.next()
        return {d: ranking.section_weight(ranking.term_weight(body, reader.doc_field_length(d, "body") or 0, title,
                                                              reader.doc_field_length(d, "title") or 0),
                                          table.docs[d].section is not None) for d, (title, body) in tfs.items()}

    def _kind_docs(self, ws: Any, scopes: frozenset, kinds: tuple[str, ...]) -> set[int]:
        """Document numbers of the given kinds in the searcher of ``scopes``, computed once per open searcher."""
        from whoosh import query as wq

        key = (scopes, kinds)
        if key not in self.indexes.filters:
            self.indexes.filters[key] = set(ws.docs_for_query(wq.Or([wq.Term("kind", k) for k in kinds])))
        return self.indexes.filters[key]

    @staticmethod
    def _known(ws: Any, term: str) -> bool:
        return bool(ws.doc_frequency("title", term) or ws.doc_frequency("body", term))

    def _phrase_query(self, ws: Any, phrase: str) -> Any:
        from whoosh import query as wq

        words = analysis.analyze(self.splitter, phrase, index=False)
        if not words or not all(self._known(ws, w.text) for w in words):
            return _grams_query(phrase) or wq.NullQuery
        if len(words) == 1:
            return wq.Or([wq.Term("title", words[0].text), wq.Term("body", words[0].text)])
        texts = [w.text for w in words]
        return wq.Or([wq.Phrase("title", texts, slop=1), wq.Phrase("body", texts, slop=1)])

    # results ---------------------------------------------------------------------------------------------------
    def _hit(self, doc: ViewDoc, score: float, match: str, terms: set[str], q: ParsedQuery,
             english: tuple[str, ...] = ()) -> Hit | None:
        """The result for one document (a node, or one section of a long article); None when the store no longer
        has its node (an index not yet updated)."""
        key = doc.key
        node = self.store.node(key)
        if node is None:
            return None
        if doc.section is not None:
            return self._section_hit(node, doc, score, match, terms, q, english)
        parent = self.store.node(NodeKey(key.version, key.lang, node.parent)) if node.parent else None
        section = parent
        while section is not None and not section.title and section.parent:
            section = self.store.node(NodeKey(key.version, key.lang, section.parent))
        snippet, highlights = make_snippet(self.splitter, node, terms, [] if q.numbers else [*q.phrases, q.text, *english],
                                           self.snippets)
        return Hit(kind=node.kind, id=node.id, number=node.number, title=node.title, version=node.version,
                   lang=node.lang, score=round(score, 4), url=doc.url, snippet=snippet,
                   highlights=highlights, shown_as=doc.number if doc.number != node.number and not q.version else None,
                   parent_number=parent.number if parent else None,
                   parent_title=(parent.title or _first_line(parent.text)) if parent else None,
                   section=f"{section.number or ''} {section.title}".strip() if section and section.title else None,
                   match=match)

    def _section_hit(self, node: Node, doc: ViewDoc, score: float, match: str, terms: set[str], q: ParsedQuery,
                     english: tuple[str, ...]) -> Hit | None:
        """The result for one section of a long article: the section's text, at the article's URL and the heading's
        anchor, titled ``<article> § <heading>``."""
        section = next((s for s in sections(node) if s.anchor == doc.section), None)
        if section is None:
            return None
        part = replace(node, text=section_text(node, section), examples=())
        snippet, highlights = make_snippet(self.splitter, part, terms, [*q.phrases, q.text, *english], self.snippets)
        return Hit(kind=node.kind, id=section_id(node.id, section.anchor), number=None,
                   title=f"{node.title} § {section.title}", version=node.version, lang=node.lang, score=round(score, 4),
                   url=doc.url, snippet=snippet,
                   highlights=highlights, parent_number=None, parent_title=node.title, section=section.title, match=match)


def search(store_or_kb_dir: Store | str | os.PathLike | None, query: str, *, limit: int = 10, kind: str | None = None,
           lang: str | None = None, version: str | None = None) -> list[Hit]:
    """Search a knowledge base (a :class:`Store` or its folder); see the module docstring for the syntax. A folder is
    searched by this thread's Searcher of it, kept from call to call while the store and index stay the same
    (:mod:`kb.search.warm`); a Store's view and name table are kept the same way."""
    from kb.search.warm import PROCESS

    if isinstance(store_or_kb_dir, Store):
        with Searcher(store_or_kb_dir, kept=PROCESS) as searcher:
            return searcher.search(query, limit=limit, kind=kind, lang=lang, version=version)
    return PROCESS.searcher(store_or_kb_dir).search(query, limit=limit, kind=kind, lang=lang, version=version)


# -- snippets -----------------------------------------------------------------------------------------------------
def make_snippet(splitter: JapaneseSplitter, node: Node, terms: set[str], surfaces: list[str],
                 memo: SnippetMemo | None = None) -> tuple[str, tuple[tuple[int, int], ...]]:
    """Up to :data:`SNIPPET_CHARS` of the node's text around the first match, with the matched words' offsets.

    The window starts a little before the first place a query term (or a query word as typed) appears in the
    folded text; within it, a word is highlighted when one of its index terms is a query term, and query words
    the analysis could not match are highlighted where they occur as folded substrings (the bigram fallback).
    ``memo``: where the analysis and folding of texts already seen are kept (the same answer, sooner)."""
    memo = memo or SnippetMemo(splitter, 0)
    text = "\n".join(x for x in (node.text, *node.examples) if x) or node.title or ""
    words = [w for s in surfaces for w in s.split()]
    begin, end = 0, len(text)
    if len(text) > SNIPPET_CHARS:
        finder = memo.finder(text)
        places = [span[0] for n in [t if len(t) <= 2 else t[:-1] for t in terms] + words for span in finder.find(n)[:1]]
        first = min(places) if places else 0
        begin = max(0, min(first - SNIPPET_CHARS // 4, len(text) - SNIPPET_CHARS))
        end = begin + SNIPPET_CHARS
    window = text[begin:end]
    spans = [(t.start, t.end) for t in memo.terms(window) if t.text in terms] if terms else []  # none: no analysis
    finder = memo.finder(window)
    spans += [span for w in words if len(w) >= 2 and not w.isascii() for span in finder.find(w)]
    prefix = "…" if begin > 0 else ""
    suffix = "…" if end < len(text) else ""
    return prefix + window + suffix, tuple((s + len(prefix), e + len(prefix)) for s, e in _merge(spans))


class SnippetMemo:
    """The query-independent work of snippets — a text's analysis, a text folded for finding words — kept for the
    ``size`` texts seen last (0: none kept). One per :class:`Searcher` (its splitter's analysis)."""

    def __init__(self, splitter: JapaneseSplitter, size: int = 4096):
        self.terms: Callable[[str], list[analysis.Term]] = lru_cache(maxsize=size)(
            partial(analysis.analyze, splitter))
        self.finder: Callable[[str], _Finder] = lru_cache(maxsize=size)(_Finder)


class _Finder:
    """Finds words in a text once both are folded, ignoring middle dots; spans are in the original text."""

    def __init__(self, text: str):
        folded, self.starts, self.ends = analysis.fold_with_offsets(text)
        self.kept = [i for i, c in enumerate(folded) if c not in analysis.MIDDLE_DOTS]
        self.stripped = "".join(folded[i] for i in self.kept)

    def find(self, word: str) -> list[tuple[int, int]]:
        needle = re.sub(f"[{analysis.MIDDLE_DOTS}]", "", analysis.fold(word))
        if not needle:
            return []
        return [(self.starts[self.kept[m.start()]], self.ends[self.kept[m.end() - 1]])
                for m in re.finditer(re.escape(needle), self.stripped)]


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


# -- helpers ------------------------------------------------------------------------------------------------------
def _grams_query(surface: str) -> Any:
    from whoosh import query as wq

    grams = analysis.bigram_terms(surface)
    if not grams:
        return None
    if len(grams) == 1:
        return wq.Term("grams", grams[0])
    return wq.Phrase("grams", grams, slop=1)


def _unique(terms: list[analysis.Term]) -> list[analysis.Term]:
    seen, out = set(), []
    for t in terms:
        if t.text not in seen:
            seen.add(t.text)
            out.append(t)
    return out




def _first_line(text: str) -> str | None:
    line = text.split("\n", 1)[0].strip()
    return (line[:40] + "…" if len(line) > 40 else line) or None
