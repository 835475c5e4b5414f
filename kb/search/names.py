"""Japanese names with their English names and readings: how a Japanese query reaches English-only text.

Every pair a source gives is used: a Japanese glossary entry and its English name (``予示``/``Manifest``), an MTG
Wiki article's title and English name (``接死``/``Deathtouch``), a card's Japanese and English names
(``ドライアドの東屋``/``Dryad Arbor``), and the names the Japanese rules text gives a rule it cites
(:func:`text_names`: ``rule 605〔マナ能力〕`` names section 605, ``連繋(rule 702.47 参照)`` names 702.47; their
English name is the title of that rule in the English version the translation translates: ``Mana Abilities``,
``Splice``). :func:`name_table` reads them from the store (every version; the newest wins nothing here: a name is
a name). A name's reading is the one its source gives (a glossary term's ruby), else
Sudachi's where Sudachi knows it (:func:`reading_of`), as katakana (:func:`reading_form`): ``よじ`` finds 予示.

Contract: :meth:`NameTable.english_names` of a query (its whole text, matched by
:func:`name_forms`) and :meth:`NameTable.japanese_names` of a reading are what ``kb search`` and the
static search use; nothing else decides which English names a Japanese query stands for.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from kb import rulenum
from kb.ids import rule_id
from kb.model import ARTICLE, CARD, GLOSSARY, RULE_KINDS
from kb.search import analysis
from kb.splitter import JapaneseSplitter
from kb.store import NodeKey, Store

NAME_KINDS = (GLOSSARY, ARTICLE, CARD)  # the kinds whose Japanese names a name table is made from (name_inputs)
_HIRAGANA = re.compile(r"[\u3041-\u3096]")
_KANA_ONLY = re.compile(r"^[\u3041-\u3096\u30a1-\u30fa\u30fc]+$")
# a name the Japanese text gives a cited rule: "rule 605〔マナ能力〕" or "連繋(rule 702.47 参照)" (a run of kanji,
# katakana and middle dots right before the parenthesis; hiragana ends a name)
_BRACKETED_NAME = re.compile(rf"rule\s*({rulenum.NUMBER})(?![0-9.])\s*〔([^〔〕、。()（）]{{2,24}})〕")
_NAME_BEFORE_REF = re.compile(rf"([\u4e00-\u9fff\u3005\u30a1-\u30fa\u30fc・]{{2,16}})[(（]rule\s*({rulenum.NUMBER})\s*参照[)）]")
_ENGLISH_NAME = re.compile(r"^[A-Za-z][A-Za-z' ,-]{1,40}$")  # a rule's one-line English text that is a name ("Splice")


@dataclass(frozen=True)
class NameTable:
    english: dict[str, tuple[str, ...]] = field(default_factory=dict)  # name form of a Japanese name → English names
    readings: dict[str, tuple[str, ...]] = field(default_factory=dict)  # reading form → Japanese names
    rules: dict[str, tuple[str, ...]] = field(default_factory=dict)  # name form of a name the text gives → rule numbers

    def rules_named(self, splitter: JapaneseSplitter, text: str) -> tuple[str, ...]:
        """The numbers of the rules a Japanese rules text names ``text`` (or the name whose reading it is)."""
        names = [text, *self.japanese_names(text)]
        found = [r for name in names for form in sorted(name_forms(splitter, name)) for r in self.rules.get(form, ())]
        return tuple(dict.fromkeys(found))

    def english_names(self, splitter: JapaneseSplitter, text: str) -> tuple[str, ...]:
        """The English names of the Japanese name ``text`` is (or whose reading it is)."""
        names = [text, *self.japanese_names(text)]
        found = [e for name in names for form in sorted(name_forms(splitter, name)) for e in self.english.get(form, ())]
        return tuple(dict.fromkeys(found))

    def japanese_names(self, text: str) -> tuple[str, ...]:
        """The Japanese names whose reading ``text`` is (kana; None of them when ``text`` is not all kana)."""
        form = reading_form(text)
        return self.readings.get(form, ()) if form else ()


def name_forms(splitter: JapaneseSplitter, text: str) -> set[str]:
    """The forms a whole name or a whole query is matched by in ``names``: the folded text without spaces and
    middle dots, and its query terms joined (``マナ・コスト``, ``マナコスト`` → ``マナコスト``; ``唱えた`` → ``唱える``)."""
    folded = re.sub(r"[\s・･]", "", analysis.fold(text))
    forms = {folded} if folded else set()
    joined = "".join(analysis.query_terms(splitter, text))
    if joined:
        forms.add(joined)
    return forms


@dataclass(frozen=True)
class NameInputs:
    """What a name table is made from (besides the splitter): the Japanese names with their English names as the
    store gives them (glossary terms, articles, cards), the names the rules text gives (:func:`text_names`) and the
    readings sources give (:func:`source_readings`). Plain data: a builder names a table by them."""

    rows: tuple[tuple[str, str], ...]  # (Japanese title, English name or ''), each once
    learned: tuple[tuple[str, str, str], ...]
    given: tuple[tuple[str, str], ...]


def name_inputs(store: Store) -> NameInputs:
    """The inputs of ``store``'s name table, in an order of their own (sorted, not the store's: an article stored
    again moves there, and its names would move in the table's lists)."""
    rows = sorted({(title or "", english_name or "") for _key, _kind, title, _aliases, english_name
                   in store.name_rows(lang="ja", kinds=NAME_KINDS)})
    return NameInputs(tuple(rows), tuple(text_names(store)), tuple(sorted(source_readings(store).items())))


def name_table(store: Store, splitter: JapaneseSplitter) -> NameTable:
    return names_from(name_inputs(store), splitter)


def names_from(inputs: NameInputs, splitter: JapaneseSplitter) -> NameTable:
    """The name table of ``inputs`` as ``splitter`` splits them (:func:`name_forms`, :func:`reading_of`)."""
    english: dict[str, list[str]] = defaultdict(list)
    readings: dict[str, list[str]] = defaultdict(list)
    rules: dict[str, list[str]] = defaultdict(list)
    given = dict(inputs.given)
    for name, _english, number in inputs.learned:
        for form in name_forms(splitter, name):
            if number not in rules[form]:
                rules[form].append(number)
    for title, english_name in [*inputs.rows, *((name, english_name) for name, english_name, _ in inputs.learned)]:
        if not title or not english_name:
            continue
        if title.casefold() == english_name.casefold():
            continue
        for form in name_forms(splitter, title):
            if english_name not in english[form]:
                english[form].append(english_name)
        reading = given.get(title) or reading_of(splitter, title)
        if reading and title not in readings[reading]:
            readings[reading].append(title)
    return NameTable({k: tuple(v) for k, v in english.items()}, {k: tuple(v) for k, v in readings.items()},
                     {k: tuple(v) for k, v in rules.items()})


def text_names(store: Store) -> list[tuple[str, str, str]]:
    """(Japanese name, English name, rule number) of each rule a Japanese rules text names where it cites it (``rule 605〔マナ
    能力〕``, ``連繋(rule 702.47 参照)``): the English name is the cited rule's title (or its one-line text, ``Splice``)
    in the English version the translation translates (:func:`kb.versions.catalog.list_versions`)."""
    from kb.versions.catalog import list_versions

    out: dict[tuple[str, str, str], None] = {}
    for version in list_versions(store, "ja"):
        if version.original is None:
            continue
        english: dict[str, str | None] = {}
        for _key, _kind, text in store.texts(RULE_KINDS, scopes=[(version.version, "ja")]):
            for number, name in [*_BRACKETED_NAME.findall(text), *((n, m) for m, n in _NAME_BEFORE_REF.findall(text))]:
                if number not in english:
                    english[number] = _english_name(store, NodeKey(version.original, "en", rule_id(number)))
                if english[number]:
                    out[(name.strip(), english[number] or "", number)] = None
    return list(out)


def _english_name(store: Store, key: NodeKey) -> str | None:
    node = store.node(key)
    if node is None:
        return None
    if node.title:
        return node.title
    return node.text.strip() if _ENGLISH_NAME.match(node.text.strip()) else None


def source_readings(store: Store) -> dict[str, str]:
    """Japanese glossary terms → the reading their source gives (ruby), as a reading form."""
    out: dict[str, str] = {}
    for _key, title, _aliases, _english, _text, meta in store.glossary_rows(lang="ja"):
        form = reading_form(meta.get("reading") or "") if title else None
        if form and title:
            out.setdefault(title, form)
    return out


def reading_of(splitter: JapaneseSplitter, name: str) -> str | None:
    """The reading of a Japanese name as a reading form (katakana, no spaces or dots), when it is known: the name
    is kana, or Sudachi's system dictionary holds each of its parts as a word of two or more characters (a lone
    kanji's reading is a guess: 瞬速 is not マドカソク); else None."""
    parts = []
    for morpheme in splitter.tokenizer(system=True).tokenize(analysis.fold(name)):
        surface, reading = morpheme.surface(), morpheme.reading_form()
        if not any(c.isalnum() for c in surface):
            continue
        if _KANA_ONLY.match(surface):
            parts.append(surface)
        elif reading and not morpheme.is_oov() and len(surface) >= 2:
            parts.append(reading)
        else:
            return None
    return reading_form("".join(parts))


def reading_form(text: str) -> str | None:
    """Kana folded to katakana, spaces and middle dots removed; None unless ``text`` is all kana."""
    folded = re.sub(rf"[\s{analysis.MIDDLE_DOTS}]", "", analysis.fold(text))
    katakana = _HIRAGANA.sub(lambda m: chr(ord(m.group(0)) + 0x60), folded)
    return katakana if katakana and _KANA_ONLY.match(katakana) else None
