"""Automatic glossary-term links in CR rule text and glossary definitions: a step of :func:`kb.link.resolve.link`.

Public entry: :func:`link_terms`. For every rule node (chapter/section/rule/subrule) and glossary entry of a CR
version, it finds the names of that same version's and language's glossary entries in the node's text and stores
one reference per found term: kind :data:`REF_AUTO_TERM` (``"auto-term"``), target = the entry's title, text =
the surface as written (``text[start:end]``), resolved by the ordinary term resolver to the glossary entry. The
distinct kind marks them as **derived**: they are deleted and recomputed on every link, so re-ingesting is
idempotent and a glossary change relinks unchanged rules; the site renders them like the ``term`` links parsed from
Wisdom Guild pages.

Matching, per node: longest match first, leftmost, never overlapping a reference already in the text (rule numbers,
Wisdom Guild term links, "See X." links), each term at most once per node (its first occurrence; a term the node
already links counts). A term is not linked in its own glossary entry, nor in the title of the rule its entry
points to (``702.19 Trample``: a rule whose whole text has no sentence end).

Names skipped: obsolete entries (``During``, ``Legend``, ``Permanently``… describe old card wording, and the words
are common in current text with their ordinary meaning); one-character names (``X``, ``Y``: letters of mana
symbols and variables); names with placeholders (``Partner with [name]``); and the function words
:data:`FUNCTION_WORDS` (``You``/``Your``, ``If``, ``Unless``, ``Becomes``, also by the English name of a Japanese
entry: ``あなた``) — they occur in almost every rule, and a link there tells the reader nothing.

English: case-insensitive on word boundaries (``\\w`` runs; a hyphen matches a space, ``’`` matches ``'``), the
glossary names plus aliases, and regular inflections: a noun's plural on its last word (``creatures``,
``activated abilities``); for a verb entry (a sense defined "To …") also ``-s``/``-ed``/``-ing`` forms of its first
word (``casts``, ``casting``, ``tapped``, ``assigns combat damage``). Exact names win over inflected forms
(``tapped`` is the entry ``Tapped``, not ``Tap``). Subtype entries (defined "An enchantment subtype", "A creature
type", a basic land type) match only capitalised, as the rules write subtypes: ``Case`` but not "in some cases".

Japanese: the titles and aliases as written; a verb entry (ending in a u-row kana: ``唱える``, ``戦場に出る``,
``予示する``) also by its stem (``唱え`` in ``唱えた``/``唱え始める``, ``予示`` in ``予示された``), as Wisdom Guild
links them, when Sudachi confirms that the word there is that verb (``戦場に出した`` is 出す, not 出る). A name
starting (ending) with katakana never starts after (ends before) another katakana letter — no ``ス`` inside
``スタック`` — while ``・`` separates words, so ``カード`` in ``クリーチャー・カード`` is linked, as Wisdom Guild
does; a one-character name is not linked next to a letter of its own script.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Collection, Iterator
from dataclasses import dataclass

from kb.fold import fold
from kb.ids import id_name, rule_id
from kb.link.index import LinkIndex
from kb.model import GLOSSARY, REF_AUTO_TERM, REF_TERM, RULE_KINDS, Ref
from kb.splitter import JapaneseSplitter
from kb.store import NodeKey, Scopes, Store

FUNCTION_WORDS = frozenset({"you", "your", "if", "unless", "becomes"})
LINKED_KINDS = (*RULE_KINDS, GLOSSARY)

_WORD = re.compile(r"\w+")
_VERB_SENSE = re.compile(r"(?:^|\n)(?:\d+\.\s*)?To ")
_SUBTYPE_SENSE = re.compile(r"^(?:\d+\.\s*)?(?:An? (?!card )\w+ (?:sub)?type\b|One of the five basic land types)")
_SENTENCE_END = re.compile(r"[.。:：]")
_KATAKANA = re.compile(r"[ァ-ヺー]")
_HIRAGANA = re.compile(r"[ぁ-ゖ]")
_KANJI = re.compile(r"[\u3400-\u9fff々〆]")
_U_ROW = set("うくぐすつぬぶむる")
_IRREGULAR_PAST = {"pay": ("paid",), "draw": ("drew", "drawn")}


@dataclass(frozen=True)
class _Term:
    id: str
    title: str
    defined_in: frozenset[str]  # ids of the rules the entry points to


@dataclass(frozen=True)
class _Form:
    text: str  # as matched: folded (English) or as written (Japanese)
    term: _Term
    stem_of: str | None = None  # Japanese verb stems: the verb's last word (dictionary form), checked with Sudachi


def link_terms(store: Store, index: LinkIndex, scopes: Scopes = None, nodes: Collection[NodeKey] | None = None, *,
               splitter: JapaneseSplitter | None = None) -> int:
    """Replace the derived term references of every CR node (of the (version, lang) ``scopes``, when given: a
    version's term links depend on that version alone); return how many were stored. ``nodes``: only these nodes,
    just rewritten by the store (so without derived references), get term links. Call from
    :func:`kb.link.resolve.link` before resolving, so the new references are resolved with the others. ``splitter``:
    the command's (its system dictionary checks Japanese verb stems); one is made when None."""
    if nodes is None:
        store.delete_refs([REF_AUTO_TERM], scopes)
    elif not nodes:
        return 0
    glossaries = _glossaries(store, scopes, splitter or JapaneseSplitter())
    spans, linked = _existing_refs(store, index, scopes, nodes)
    rows = []
    for key, kind, text in store.texts(LINKED_KINDS, scopes, nodes):
        matcher = glossaries.get((key.version, key.lang))
        if matcher is None or not text:
            continue
        is_title = kind != GLOSSARY and not _SENTENCE_END.search(text)
        rows += [(key, ref, None) for ref in matcher.find(text, key.id, is_title, spans.get(key, []), linked.get(key, set()))]
    return store.add_refs(rows)


def _existing_refs(store: Store, index: LinkIndex, scopes: Scopes, nodes: Collection[NodeKey] | None
                   ) -> tuple[dict[NodeKey, list[tuple[int, int]]], dict[NodeKey, set[str]]]:
    """Spans already taken in each node's text (of ``nodes``, when given), and the glossary entries each node already
    links."""
    spans: dict[NodeKey, list[tuple[int, int]]] = defaultdict(list)
    linked: dict[NodeKey, set[str]] = defaultdict(set)
    for key, kind, target, start, end in store.ref_spans(scopes, nodes):
        if start >= 0:
            spans[key].append((start, end))
        if kind == REF_TERM:
            found = index.find_glossary(key.version, key.lang, target)
            if found:
                linked[key].add(found)
    return spans, linked


def _glossaries(store: Store, scopes: Scopes, splitter: JapaneseSplitter) -> dict[tuple[str, str], _Matcher]:
    defined_in: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for entry, target in store.glossary_rule_targets(scopes):
        defined_in[(entry.version, entry.lang, entry.id)].add(rule_id(target))
    entries: dict[tuple[str, str], list] = defaultdict(list)
    for key, title, aliases, english, text, meta in store.glossary_rows(scopes):
        version, lang, node_id = key.version, key.lang, key.id
        if meta.get("obsolete") or (english or title or "").casefold() in FUNCTION_WORDS:
            continue
        term = _Term(node_id, title or id_name(node_id), frozenset(defined_in[(version, lang, node_id)]))
        names = [n for n in [title, *aliases] if n and len(n) > 1 and "[" not in n
                 and n.casefold() not in FUNCTION_WORDS]
        entries[(version, lang)].append((term, names, bool(_VERB_SENSE.search(text)), bool(_SUBTYPE_SENSE.search(text))))
    return {(version, lang): _EnglishMatcher(items) if lang == "en" else _JapaneseMatcher(items, splitter)
            for (version, lang), items in entries.items()}


class _Matcher:
    """Finds one glossary's terms in texts (see the module docstring)."""

    def find(self, text: str, node_id: str, is_title: bool, taken: list[tuple[int, int]], linked: set[str]) -> list[Ref]:
        linked = set(linked)
        out = []
        for start, end, term in self.matches(text):
            if term.id in linked or term.id == node_id or (is_title and node_id in term.defined_in):
                continue  # the span stays consumed: no shorter term is linked inside a longer one
            if any(s < end and start < e for s, e in taken):
                continue
            linked.add(term.id)
            out.append(Ref(REF_AUTO_TERM, term.title, text[start:end], start, end))
        return out

    def matches(self, text: str) -> Iterator[tuple[int, int, _Term]]:  # pragma: no cover - overridden
        raise NotImplementedError


def _fold_en(text: str) -> str:
    """The one fold, plus English matching's own rules: curly apostrophes, hyphens as spaces, one space."""
    return " ".join(fold(text).replace("’", "'").replace("-", " ").split())


class _EnglishMatcher(_Matcher):
    def __init__(self, items: list[tuple[_Term, list[str], bool, bool]]):
        self.forms: dict[str, _Term] = {}
        self.word_keys: set[str] = set()  # the forms' words joined by one space
        self.longest: dict[str, int] = {}  # first word → most words in a form starting with it
        self.capitalised: set[str] = set()  # subtypes: 'Case' is the enchantment subtype, 'in some cases' is not
        inflected: list[tuple[str, _Term]] = []
        for term, names, is_verb, is_subtype in items:
            for name in names:
                spans = [m.span() for m in _WORD.finditer(name)]
                if not spans:
                    continue
                folded = _fold_en(name[spans[0][0]:spans[-1][1]])  # 'For Mirrodin!' is matched as 'for mirrodin'
                forms = [folded, *_inflections(folded, is_verb)]
                self._add(folded, term)
                inflected += [(form, term) for form in forms[1:]]
                if is_subtype:
                    self.capitalised.update(forms)
        for form, term in inflected:  # exact names first: 'tapped' is the entry Tapped, not a form of Tap
            self._add(form, term)

    def _add(self, form: str, term: _Term) -> None:
        words = _WORD.findall(form)
        if form in self.forms or not words:
            return
        self.forms[form] = term
        self.word_keys.add(" ".join(words))
        self.longest[words[0]] = max(self.longest.get(words[0], 0), len(words))

    def matches(self, text: str) -> Iterator[tuple[int, int, _Term]]:
        words = [(m.start(), m.end(), fold(m.group())) for m in _WORD.finditer(text)]
        i = 0
        while i < len(words):
            most = self.longest.get(words[i][2])
            found = None
            for n in range(min(most or 0, len(words) - i), 0, -1):
                if n > 1 and " ".join(w[2] for w in words[i:i + n]) not in self.word_keys:
                    continue  # cheap test on the words alone before comparing what lies between them
                start, end = words[i][0], words[i + n - 1][1]
                form = _fold_en(text[start:end]) if n > 1 else words[i][2]
                term = self.forms.get(form)
                if term is not None and not (form in self.capitalised and text[start].islower()):
                    found = (start, end, term, n)
                    break
            if found:
                yield found[:3]
                i += found[3]
            else:
                i += 1


def _inflections(name: str, is_verb: bool) -> list[str]:
    words = name.split(" ")
    forms = []
    if not is_verb or len(words) > 1:  # noun phrases: plural of the last word
        forms.append(" ".join([*words[:-1], _plural(words[-1])]))
    if is_verb:
        forms += [" ".join([verb, *words[1:]]) for verb in _verb_forms(words[0])]
    return [f for f in forms if f != name]


def _plural(word: str) -> str:
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and len(word) > 1 and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def _verb_forms(word: str) -> list[str]:
    forms = [_plural(word)]
    if word.endswith("e"):
        forms += [word + "d", word[:-1] + "ing"]
    elif word.endswith("y") and word[-2:-1] not in ("", *"aeiou"):
        forms += [word[:-1] + "ied", word + "ing"]
    else:
        forms += [word + "ed", word + "ing"]
        if re.search(r"(?:^|[^aeiou])[aeiou][bdgklmnprt]$", word) and not word.endswith(("en", "er", "on")):
            forms += [word + word[-1] + "ed", word + word[-1] + "ing"]  # tap → tapped, tapping
    forms += _IRREGULAR_PAST.get(word, ())
    return forms


class _JapaneseMatcher(_Matcher):
    def __init__(self, items: list[tuple[_Term, list[str], bool, bool]], splitter: JapaneseSplitter):
        self.splitter = splitter
        by_first: dict[str, list[_Form]] = defaultdict(list)
        exact: set[str] = set()
        for term, names, *_ in items:
            for name in names:
                exact.add(name)
                by_first[name[0]].append(_Form(name, term))
        for term, names, *_ in items:
            for name in names:
                stem, last_word = _verb_stem(name, splitter)
                if stem and stem not in exact:
                    by_first[stem[0]].append(_Form(stem, term, last_word))
        self.by_first = {c: sorted(forms, key=lambda f: (-len(f.text), f.stem_of is not None)) for c, forms in by_first.items()}
        self.starts = re.compile("[" + "".join(re.escape(c) for c in self.by_first) + "]") if self.by_first else None

    def matches(self, text: str) -> Iterator[tuple[int, int, _Term]]:
        if self.starts is None:
            return
        pos = 0
        words = None  # Sudachi morphemes of ``text``, made when a stem needs checking
        while True:
            m = self.starts.search(text, pos)
            if m is None:
                return
            at = m.start()
            found = None
            for form in self.by_first[text[at]]:
                end = at + len(form.text)
                if not text.startswith(form.text, at) or not _bounded(text, at, end, form.text):
                    continue
                if form.stem_of is not None:
                    if words is None:
                        words = _morphemes(text, self.splitter)
                    if not _is_verb_at(words, end, form.stem_of):
                        continue
                found = (at, end, form.term)
                break
            if found:
                yield found
                pos = found[1]
            else:
                pos = at + 1


def _bounded(text: str, start: int, end: int, name: str) -> bool:
    """False when the match would cut a katakana word, or a one-character name sits inside a word of its script."""
    before, after = text[start - 1:start], text[end:end + 1]
    if _KATAKANA.match(name[0]) and before and _KATAKANA.match(before):
        return False
    if _KATAKANA.match(name[-1]) and after and _KATAKANA.match(after):
        return False
    if len(name) == 1:
        script = _KANJI if _KANJI.match(name) else _KATAKANA if _KATAKANA.match(name) else _HIRAGANA
        return not ((before and script.match(before)) or (after and script.match(after)))
    return True


def _verb_stem(name: str, splitter: JapaneseSplitter) -> tuple[str | None, str | None]:
    """('唱え', '唱える') for '唱える', ('予示', 'する') for '予示する'; (None, None) when ``name`` is no verb."""
    if len(name) < 2 or name[-1] not in _U_ROW or not _HIRAGANA.match(name[-1]):
        return None, None
    if name.endswith("する") and len(name) > 2:
        return name[:-2], "する"
    last = _morphemes(name, splitter)
    return name[:-1], (last[-1][2] if last else name)


def _morphemes(text: str, splitter: JapaneseSplitter) -> list[tuple[int, int, str]]:
    """Sudachi's words of ``text``: (start, end, dictionary form). The system dictionary alone: verb stems are the
    same with or without the search's user dictionary, and links must not depend on which one a splitter has."""
    return [(offset + m.begin(), offset + m.end(), m.dictionary_form())
            for offset, m in splitter.words(text, system=True)]


def _is_verb_at(words: list[tuple[int, int, str]], stem_end: int, verb: str) -> bool:
    """Is the word covering the stem's last character (or, for a する verb, the word right after it) ``verb``?"""
    for start, end, dictionary_form in words:
        if start < stem_end <= end and dictionary_form == verb:
            return True
        if start == stem_end:
            return verb == "する" and dictionary_form == verb
    return False
