"""Query understanding and the search API: :func:`search` (one call) or :class:`Searcher` (many queries, warm).

A query is, in this order of precedence:

1. **Rule numbers** — the whole query (after filters) is a rule number in any width or prefix (``601.2f``,
   ``６０１．２ｆ``, ``CR:601.2f``, ``rule 601.2f``): that rule and its subrules (``120.4``), the rule alone with a
   trailing period (``120.4.``), or a range (``601.2a-d``, ``601.2a-601.2d``). ``702.6`` never matches ``702.60``.
2. **Glossary terms** — the whole query is a glossary term, alias or English name (``予示``, ``Manifest``,
   ``マナコスト``), its reading (``よし``), or a Japanese name whose English name is one (the wiki title ``接死`` →
   Deathtouch; :mod:`kb.search.names`): the rule that defines it (the entry's first rule reference) first, then the
   entry, in each language; Japanese first. The English names of a Japanese name (a card's too) are also searched
   as phrases after the words, so Japanese queries reach English-only rules.
3. **Words** — analysed by :func:`kb.search.analysis.query_terms`; a node must hold every term (in ``title`` or
   ``body``; a term the index does not know is looked up as a bigram phrase of what was typed in ``grams`` — of
   the whole word when Sudachi left a single character), ranked by BM25F with title hits boosted; nodes holding
   only some of the terms follow. Results of 1. and 2. come first, then these. ``"quoted phrases"`` (or 「…」) must occur as
   phrases.

4. **Forgiving** — when the query holds words the index lacks (:mod:`kb.search.fuzzy`: an English typo, an IME
   slip of the same reading, a kana spelling, ``よじする``), it is also searched as rewritten into indexed terms;
   those hits (``Hit.corrected``) follow the hits that matched every word as typed. A question's asking words
   (:mod:`kb.search.questions`) are not required, and a long MTG Wiki article is searched by section
   (:mod:`kb.search.sections`). :meth:`Searcher.suggest` names the closest terms and the English name when nothing
   is found.

Filters anywhere in the query: ``kind:rule`` (chapters, sections, rules, subrules), ``kind:glossary``,
``kind:article``, ``kind:note``, ``kind:card``; ``lang:ja``/``lang:en``; ``version:V``. Versions: the newest of each
language by default; ``V`` picks the versions equal to V or starting with ``V.`` (``20231117`` → the English
20231117 and the Japanese 20231117.0); unversioned nodes (wiki, notes, cards) are always searched.

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
from kb.ids import rule_id, rule_number
from kb.model import ARTICLE, CARD, GLOSSARY, NOTE, REF_RULE, RULE_KINDS, UNVERSIONED, Node
from kb.search import analysis, fuzzy, questions
from kb.search.sections import element_id, section_id, section_score, section_text, sections, split_section_id
from kb.splitter import JapaneseSplitter
from kb.store import NodeKey, Store

if TYPE_CHECKING:
    from kb.search.names import NameTable
    from kb.search.warm import WarmSearch

log = logging.getLogger("kb")

MAX_QUERY_CHARS = 500
TITLE_BOOST = 3.0
NUMBER_BOOST = 5.0
SNIPPET_CHARS = 160
KIND_FILTERS = {"rule": RULE_KINDS, "glossary": (GLOSSARY,), "article": (ARTICLE,), "note": (NOTE,), "card": (CARD,)}
LANG_ORDER = {"ja": 0, "en": 1}

_FILTER = re.compile(r"(?<!\S)(kind|lang|version):(\S*)", re.I)
_PHRASE = re.compile(r"\"([^\"]*)\"|「([^」]*)」|“([^”]*)”")
_RANGE = re.compile(rf"^(.+?)\s*[-–~〜]\s*({rulenum.LETTER}|[0-9][0-9.]*{rulenum.LETTER}?)$")


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
        and the name table of the store's generation are kept (:mod:`kb.search.warm`; None: computed here)."""
        from kb.search import userdict
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
        self.locator = Locator(kept.view(store) if kept else current_view(store))
        self.snippets = SnippetMemo(self.splitter)

    @cached_property
    def names(self) -> NameTable:
        """The store's Japanese names with their English names and readings, made when a query first needs them
        (a rule number does not)."""
        from kb.search.names import name_table

        return self._kept.names(self.store, self.splitter) if self._kept else name_table(self.store, self.splitter)

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
        scopes = self._scopes(q, self._chosen_versions(q))
        self.indexes.refresh()
        ws = self.indexes.searcher(scopes)
        if ws is None:
            return None
        if scopes not in self.indexes.lexicons:
            self.indexes.lexicons[scopes] = fuzzy.lexicon(ws.reader(), self.splitter, self.names)
        return self.indexes.lexicons[scopes], ws.reader()

    def _forgiving(self, q: ParsedQuery, hits: list[Hit], limit: int) -> list[Hit]:
        """``hits`` and, when the query holds words the index lacks, the hits of the query as
        :func:`kb.search.fuzzy.corrected` rewrites it (typos, readings): after the hits that matched every word,
        before those that matched some (each hit of the rewrite says what it was found as, ``corrected``)."""
        if q.numbers or q.phrases or not q.text:
            return hits
        with self.indexes.lock:
            self.indexes.refresh()
            ws = self.indexes.searcher(self._scopes(q, self._chosen_versions(q)))
            if ws is None or not fuzzy.needs_correction(lambda t: self._known(ws, t), self.splitter, q.text):
                return hits
            found = self._lexicon(q)
            if found is None:
                return hits
            text = fuzzy.corrected(*found, self.splitter, q.text)
        if text is None or text == q.text:
            return hits
        better = [replace(h, corrected=text) for h in self._search(replace(q, text=text), limit)]
        ordered = [*(h for h in hits if h.match != "some words"), *better, *(h for h in hits if h.match == "some words")]
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
        versions = self._chosen_versions(q)
        english = () if q.numbers or q.phrases else self.names.english_names(self.splitter, q.text)
        scopes = self._scopes(q, versions)
        with self.indexes.lock:
            self.indexes.refresh()
            ws = self.indexes.searcher(scopes)
            found: list[tuple[NodeKey, float, str]] = []
            if q.numbers:
                found = self._by_number(q, versions, limit)
            if ws is not None and not found and not q.phrases:
                found = self._by_term(ws, q, versions, english)
            words = [] if ws is None or (q.numbers and found) else self._by_words(ws, scopes, q, limit + len(found))
            for name in english if ws is not None else ():  # the English names of a Japanese name reach English text
                words += self._by_words(ws, scopes, ParsedQuery("", (name,), q.kinds, q.lang, q.version), limit)
        seen = {k for k, _, _ in found}
        for f in words:
            if f[0] not in seen:
                seen.add(f[0])
                found.append(f)
        terms = set() if q.numbers else set(analysis.query_terms(self.splitter, " ".join([q.text, *q.phrases, *english])))
        hits = (self._hit(key, score, match, terms, q, english) for key, score, match in found)
        return list(islice((hit for hit in hits if hit is not None), limit))

    # versions ---------------------------------------------------------------------------------------------------
    @staticmethod
    def _scopes(q: ParsedQuery, versions: set[tuple[str, str]]) -> frozenset[tuple[str, str]]:
        """The index scopes a query with these ``versions`` reads: they and the unversioned nodes of its languages."""
        return frozenset(versions | {(UNVERSIONED, lg) for lg in LANG_ORDER if not q.lang or lg == q.lang})

    def _chosen_versions(self, q: ParsedQuery) -> set[tuple[str, str]]:
        """(version, lang) pairs to search; unversioned nodes are added by the callers."""
        chosen = set()
        for lang, versions in self._versions.items():
            if q.lang and lang != q.lang:
                continue
            if q.version:
                chosen |= {(v, lang) for v in versions if v == q.version or v.startswith(q.version + ".")}
            elif versions:
                chosen.add((versions[0], lang))
        if q.version and not chosen:
            known = sorted({v for vs in self._versions.values() for v in vs})
            raise KbError(f"version {q.version}: not in the knowledge base (have: {', '.join(known) or 'none'})")
        return chosen

    def _allowed(self, key: NodeKey, kind: str | None, q: ParsedQuery, versions: set[tuple[str, str]]) -> bool:
        """Whether a node is in the query's scope (``kind`` None: ignore the kind filter)."""
        if kind is not None and q.kinds and kind not in q.kinds:
            return False
        if q.lang and key.lang != q.lang:
            return False
        return key.version == UNVERSIONED or (key.version, key.lang) in versions

    # 1. rule numbers ---------------------------------------------------------------------------------------------
    def _by_number(self, q: ParsedQuery, versions: set[tuple[str, str]], limit: int) -> list[tuple[NodeKey, float, str]]:
        rows = []
        for number in q.numbers:
            pattern = None
            if q.with_subrules:
                parsed = rulenum.parse(number)
                pattern = {"chapter": f"{number}[0-9][0-9]*", "section": f"{number}.*",
                           "rule": f"{number}{rulenum.LETTER}"}.get(parsed.kind) if parsed else None
            for key, kind, order in self.store.keys_numbered(number, pattern=pattern):
                if self._allowed(key, kind, q, versions):
                    rows.append((LANG_ORDER.get(key.lang, 9), key.version, order, key))
        rows.sort(key=lambda r: r[:3])
        return [(key, 1.0, "number") for *_, key in rows[:limit]]

    # 2. glossary terms -------------------------------------------------------------------------------------------
    def _by_term(self, ws: Any, q: ParsedQuery, versions: set[tuple[str, str]],
                 english: tuple[str, ...]) -> list[tuple[NodeKey, float, str]]:
        """The glossary entries the whole query names — in Japanese, in English, by reading, or through the English
        name of a Japanese name (``接死`` → Deathtouch) — each after the rule that defines it."""
        from whoosh import query as wq

        from kb.search.names import name_forms

        forms = {f for name in (q.text, *self.names.japanese_names(q.text), *english) for f in name_forms(self.splitter, name)}
        lookup = wq.And([wq.Term("kind", GLOSSARY), wq.Or([wq.Term("names", f) for f in sorted(forms)])])
        entries = [_key(ws.stored_fields(n)["key"]) for n in ws.docs_for_query(lookup)]
        entries = sorted((k for k in entries if self._allowed(k, None, q, versions)),
                         key=lambda k: (LANG_ORDER.get(k.lang, 9), k.id))
        found = self._named_rules(q, versions, english)
        for entry in entries:
            rule = self._defining_rule(entry)
            if rule is not None and self._allowed(rule, self._kind_of(rule), q, versions):
                found.append((rule, 1.0, "term"))
            if self._allowed(entry, GLOSSARY, q, versions):
                found.append((entry, 1.0, "term"))
        return list({f[0]: f for f in found}.values())  # each node once, at its first place

    def _named_rules(self, q: ParsedQuery, versions: set[tuple[str, str]],
                     english: tuple[str, ...]) -> list[tuple[NodeKey, float, str]]:
        """The rules the Japanese rules text names as the whole query (``マナ能力`` → 605, :mod:`kb.search.names`):
        in Japanese, and in English where the rule of that number still bears the English name (not renumbered)."""
        found: list[tuple[NodeKey, float, str]] = []
        names = {n.casefold() for n in english}
        for number in self.names.rules_named(self.splitter, q.text):
            for version, lang in sorted(versions, key=lambda v: LANG_ORDER.get(v[1], 9)):
                key = NodeKey(version, lang, rule_id(number))
                node = self.store.node(key)
                if node is None or not self._allowed(key, node.kind, q, versions):
                    continue
                if lang == "ja" or (node.title or node.text.strip()).casefold() in names:
                    found.append((key, 1.0, "term"))
        return found

    def _defining_rule(self, entry: NodeKey) -> NodeKey | None:
        target = next((sr.ref.target for sr in self.store.refs_from(entry) if sr.ref.kind == REF_RULE), None)
        if target is None:
            return None
        key = NodeKey(entry.version, entry.lang, rule_id(target))
        return key if self._kind_of(key) else None

    def _kind_of(self, key: NodeKey) -> str | None:
        return self.store.kind_of(key)

    # 3. words ------------------------------------------------------------------------------------------------------
    def _by_words(self, ws: Any, scopes: frozenset, q: ParsedQuery, limit: int) -> list[tuple[NodeKey, float, str]]:
        from whoosh import query as wq

        typed = _unique(analysis.analyze(self.splitter, q.text, index=False))
        words = questions.content_terms(typed)
        # a question: the rule answers, a wiki section explains it (among the hits matching as many words)
        order = (lambda f: (split_section_id(f[0].id)[1] is not None, -f[1])) if len(words) < len(typed) else (lambda f: -f[1])
        groups = [self._term_query(ws, term, q.text) for term in words]
        phrases = [self._phrase_query(ws, p) for p in q.phrases]
        if not groups and not phrases:
            return []
        restrict = self._kind_docs(ws, scopes, q.kinds) if q.kinds else None
        if restrict is not None and not restrict:  # Whoosh reads an empty filter as no filter
            return []
        found: list[tuple[NodeKey, float, str]] = []
        seen: set[str] = set()
        strict = wq.And(groups + phrases)
        near = questions.nearness([w.text for w in words if self._known(ws, w.text)])
        strict = strict if near is None else wq.AndMaybe(strict, near)
        for hit in ws.search(strict, filter=restrict, limit=limit):
            seen.add(_doc_key(hit))
            found.append((_key(_doc_key(hit)), section_score(hit.score, hit.get("section")), "words"))
        found.sort(key=order)
        if len(groups) > 1 and len(found) < limit:
            loose = wq.And([wq.Or(groups)] + phrases) if phrases else wq.Or(groups)
            some = [(_key(_doc_key(hit)), section_score(hit.score, hit.get("section")), "some words")
                    for hit in ws.search(loose, filter=restrict, limit=limit) if _doc_key(hit) not in seen]
            found = sorted(found + some, key=order) if len(words) < len(typed) else found + sorted(some, key=order)
        return found

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

    def _term_query(self, ws: Any, term: analysis.Term, text: str) -> Any:
        from whoosh import query as wq

        if self._known(ws, term.text):
            parts = [wq.Term("title", term.text, boost=TITLE_BOOST), wq.Term("body", term.text)]
            if rulenum.parse(term.text):
                parts.append(wq.Term("number", term.text, boost=NUMBER_BOOST))
            return wq.Or(parts)
        surface = text[term.start:term.end]
        if len(surface) < 2:  # a one-character piece: look for the whole word it came from
            surface = next(m.group(0) for m in re.finditer(r"\S+", text) if m.start() <= term.start < m.end())
        return _grams_query(surface) or wq.Term("body", term.text)

    def _phrase_query(self, ws: Any, phrase: str) -> Any:
        from whoosh import query as wq

        words = analysis.analyze(self.splitter, phrase, index=False)
        if not words or not all(self._known(ws, w.text) for w in words):
            return _grams_query(phrase) or wq.NullQuery
        if len(words) == 1:
            return wq.Or([wq.Term("title", words[0].text, boost=TITLE_BOOST), wq.Term("body", words[0].text)])
        texts = [w.text for w in words]
        return wq.Or([wq.Phrase("title", texts, slop=1, boost=TITLE_BOOST), wq.Phrase("body", texts, slop=1)])

    # results ---------------------------------------------------------------------------------------------------
    def _hit(self, key: NodeKey, score: float, match: str, terms: set[str], q: ParsedQuery,
             english: tuple[str, ...] = ()) -> Hit | None:
        """The result for one node (or one section of a long article); None when the store no longer has it (an
        index not yet updated)."""
        node_id, anchor = split_section_id(key.id)
        node = self.store.node(NodeKey(key.version, key.lang, node_id))
        if node is None:
            return None
        if anchor is not None:
            return self._section_hit(node, anchor, score, match, terms, q, english)
        parent = self.store.node(NodeKey(key.version, key.lang, node.parent)) if node.parent else None
        section = parent
        while section is not None and not section.title and section.parent:
            section = self.store.node(NodeKey(key.version, key.lang, section.parent))
        snippet, highlights = make_snippet(self.splitter, node, terms, [] if q.numbers else [*q.phrases, q.text, *english],
                                           self.snippets)
        shown = self.locator.shown_id(key)
        shown_number = rule_number(shown) if shown else None
        return Hit(kind=node.kind, id=node.id, number=node.number, title=node.title, version=node.version,
                   lang=node.lang, score=round(score, 4), url=self.locator.url(key, node.kind), snippet=snippet,
                   highlights=highlights, shown_as=shown_number if shown_number != node.number else None,
                   parent_number=parent.number if parent else None,
                   parent_title=(parent.title or _first_line(parent.text)) if parent else None,
                   section=f"{section.number or ''} {section.title}".strip() if section and section.title else None,
                   match=match)


    def _section_hit(self, node: Node, anchor: str, score: float, match: str, terms: set[str], q: ParsedQuery,
                     english: tuple[str, ...]) -> Hit | None:
        """The result for one section of a long article: the section's text, at the article's URL and the heading's
        anchor, titled ``<article> § <heading>``."""
        section = next((s for s in sections(node) if s.anchor == anchor), None)
        if section is None:
            return None
        part = replace(node, text=section_text(node, section), examples=())
        snippet, highlights = make_snippet(self.splitter, part, terms, [*q.phrases, q.text, *english], self.snippets)
        key = NodeKey(node.version, node.lang, node.id)
        return Hit(kind=node.kind, id=section_id(node.id, anchor), number=None, title=f"{node.title} § {section.title}",
                   version=node.version, lang=node.lang, score=round(score, 4),
                   url=f"{self.locator.url(key, node.kind)}#{element_id(anchor)}", snippet=snippet,
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
    spans = [(t.start, t.end) for t in memo.terms(window) if t.text in terms]
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


def _doc_key(hit: Any) -> str:
    """The key of a Whoosh hit's node, a long article's section as ``<article id>#<anchor>`` (kb.search.sections)."""
    anchor = hit.get("section")
    return section_id(hit["key"], anchor) if anchor else hit["key"]


def _key(key: str) -> NodeKey:
    version, lang, id_ = key.split("\t", 2)
    return NodeKey(version, lang, id_)


def _first_line(text: str) -> str | None:
    line = text.split("\n", 1)[0].strip()
    return (line[:40] + "…" if len(line) > 40 else line) or None
