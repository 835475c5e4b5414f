"""The current rules in both languages: which version is shown, and for each of its rules and glossary entries the
Japanese text that goes with it and how current that translation is.

Entry point: :func:`current_view` (store) → :class:`CurrentView`.

- The **shown version** is the one with the newest effective date among all stored versions (English first on a tie:
  it is complete, a translation may be an excerpt). Its English text is shown; when the newest version is Japanese
  with no English of that date, the Japanese version alone is shown.
- Each Japanese version (a translation) has an **English original** when it is stored: the English version whose
  date is nearest the date the translation claims (:func:`kb.versions.catalog.english_original`); the translation
  takes its original's effective date, so it never outranks it. A Japanese node pairs with its original's node
  (rules by number, glossary entries by the English name), and that node is followed through the English histories
  (:mod:`kb.versions.history`, which follows renumbering) to the shown version: the 2023-11-17 Japanese 701.34 予示
  pairs with the 2026-01-16 701.40.
- For each shown node the Japanese text comes from the newest translation that has it. Its ``ja_status``:
  ``current`` (the English original's text equals the shown English text, whitespace aside), ``outdated`` (the
  English changed since; :attr:`JaText.ops` is the inline diff of the English from the original to now) or
  ``missing`` (no translation has it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kb.errors import KbError
from kb.ids import id_name, is_glossary_id
from kb.model import GLOSSARY, RULE_KINDS, Node
from kb.store import NodeKey, Store
from kb.versions.catalog import VersionInfo, list_versions
from kb.versions.diff import TextOp, VersionDiff, content, inline_ops
from kb.versions.history import RuleHistory, changed_histories, consecutive_summaries, histories, rule_history

CURRENT, OUTDATED, MISSING = "current", "outdated", "missing"
JA_STATUSES = (CURRENT, OUTDATED, MISSING)
SHOWN_KINDS = (*RULE_KINDS, GLOSSARY)


@dataclass(frozen=True)
class JaText:
    """The Japanese node shown with a current node, and how current it is."""

    key: NodeKey  # the Japanese node (its id is the number or term of its own version: cr:701.34)
    status: str  # current | outdated
    original: NodeKey | None  # the English node it translates (in the translation's English original), if stored
    ops: tuple[TextOp, ...] = ()  # outdated: the English changes since that original (inline diff)


@dataclass(frozen=True)
class CurrentView:
    shown: VersionInfo | None  # the version whose rules are shown (None: no rules stored)
    english: VersionInfo | None  # the English version shown (None when only Japanese is shown)
    translation: VersionInfo | None  # the newest Japanese version
    original: VersionInfo | None  # the English original of the newest translation, when stored
    ja: dict[str, JaText] = field(default_factory=dict)  # shown node id → its Japanese text
    current_ids: dict[NodeKey, str] = field(default_factory=dict)  # Japanese node key → shown node id
    # (Japanese version, node id of its English original) → the shown node id, for every English original node
    # that was renumbered (None: removed) since — where a Japanese text's references to rules it lacks now point
    renumbered: dict[tuple[str, str], str | None] = field(default_factory=dict)

    def status(self, node_id: str) -> str:
        found = self.ja.get(node_id)
        return found.status if found else MISSING


def current_view(store: Store, english_steps: tuple[list[VersionInfo], list[VersionDiff]] | None = None) -> CurrentView:
    """The current view of ``store``; ``english_steps``: the English versions' consecutive diff summaries
    (:func:`kb.versions.history.consecutive_summaries`), when the caller has them already."""
    english_versions, translations = list_versions(store, "en"), list_versions(store, "ja")  # newest first
    if not english_versions and not translations:
        return CurrentView(None, None, None, None)
    newest_en = english_versions[0] if english_versions else None
    newest_ja = translations[0] if translations else None
    shown: VersionInfo | None
    english: VersionInfo | None
    if newest_en and (newest_ja is None or _date(newest_en) >= _date(newest_ja)):
        shown, english = newest_en, newest_en
    else:
        shown, english = newest_ja, None  # newer than every English version: its original is not stored
    # read only when a translation needs them: the shown English nodes, and the lineages that changed (cached summaries)
    english_nodes = _Nodes(store, english if translations else None)
    lineages: dict[NodeKey, RuleHistory] | None = None
    originals: dict[str, _Nodes] = {}  # English original version → its nodes
    none = _Nodes(store, None)
    ja: dict[str, JaText] = {}
    current_ids: dict[NodeKey, str] = {}
    renumbered: dict[tuple[str, str], str | None] = {}
    for translation in translations:
        original = _original(translation, english_versions)
        if original and english and original.version != english.version:
            if lineages is None:
                lineages = changed_histories("en", *(english_steps or consecutive_summaries(store, "en")))
            if original.version not in originals:
                originals[original.version] = _Nodes(store, original)
            renumbered.update(_renumbered(translation, original, english, lineages))
        by_english = _glossary_by_english(store, original) if original else {}
        for node in store.light_nodes(translation.version, "ja", SHOWN_KINDS):
            key = NodeKey(translation.version, "ja", node.id)
            if english is None:  # only Japanese is shown: the newest translation is the text
                if translation is shown:
                    ja[node.id] = JaText(key, CURRENT, None)
                    current_ids[key] = node.id
                continue
            original_id = by_english.get((node.english or "").casefold()) if node.kind == GLOSSARY else node.id
            paired: tuple[str, NodeKey | None, tuple[TextOp, ...]] | None = _follow(
                original, original_id, english, lineages or {}, english_nodes,
                originals.get(original.version, none) if original else none)
            if paired is None:  # no English original stored for it: the same number or term, if the version has it
                same = node.id if node.id in english_nodes else by_english.get((node.english or "").casefold())
                if same is None or same not in english_nodes:
                    continue
                status = CURRENT if _date(translation) >= _date(english) else OUTDATED
                paired = (same, None, ())
            else:
                status = OUTDATED if paired[2] else CURRENT
            shown_id, original_key, ops = paired
            current_ids.setdefault(key, shown_id)
            if shown_id not in ja:  # a newer translation has it already
                ja[shown_id] = JaText(key, status, original_key, ops)
    return CurrentView(shown, english, newest_ja, _original(newest_ja, english_versions) if newest_ja else None,
                       ja, current_ids, renumbered)


class _Nodes:
    """The rules and glossary entries of an English version by id: which ids it has (read at once, names only) and
    each node when asked (read then: the view needs the text of the few that changed, not of them all)."""

    def __init__(self, store: Store, version: VersionInfo | None):
        """``version`` None: no nodes (nothing needs them)."""
        self._store, self._version = store, version.version if version else ""
        self._ids = {id_ for id_, (kind, _, _) in store.node_names(version.version, "en").items()
                     if kind in SHOWN_KINDS} if version else set()

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._ids

    def __getitem__(self, node_id: str) -> Node:
        node = self._store.node(NodeKey(self._version, "en", node_id)) if node_id in self._ids else None
        if node is None:
            raise KeyError(node_id)
        return node


def _renumbered(translation: VersionInfo, original: VersionInfo, english: VersionInfo, lineages: dict
                ) -> dict[tuple[str, str], str | None]:
    out: dict[tuple[str, str], str | None] = {}
    for key, lineage in lineages.items():
        if key.version != original.version:
            continue
        now = next((e for e in lineage.entries if e.version == english.version), None)
        now_id = None if now is None or now.status == "removed" else now.node_id
        if now_id != key.id:
            out[(translation.version, key.id)] = now_id
    return out


def _follow(original: VersionInfo | None, original_id: str | None, english: VersionInfo,
            lineages: dict[NodeKey, RuleHistory], english_nodes: _Nodes, original_nodes: _Nodes
            ) -> tuple[str, NodeKey, tuple[TextOp, ...]] | None:
    """Where the English original's node ``original_id`` is in the shown English version, its key, and the
    English changes between the two (empty when the text is the same). ``lineages`` holds only the lineages in which
    something changed: a node of the original in none of them is the same node, unchanged, in the shown version."""
    if original is None or original_id is None:
        return None
    original_key = NodeKey(original.version, "en", original_id)
    lineage = lineages.get(original_key) if original.version != english.version else None
    if lineage is None:
        unchanged = original.version == english.version or original_id in original_nodes
        return (original_id, original_key, ()) if unchanged and original_id in english_nodes else None
    then = next((e for e in lineage.entries if e.version == original.version), None)
    now = next((e for e in lineage.entries if e.version == english.version and e.status != "removed"), None)
    if then is None or now is None or now.node_id not in english_nodes:
        return None
    # an entry that records no change carries no text: the original's own node has it
    old_text = then.text if then.text is not None else content(original_nodes[then.node_id])
    new_text = content(english_nodes[now.node_id])
    same = " ".join(old_text.split()) == " ".join(new_text.split())
    return now.node_id, original_key, () if same else inline_ops(old_text, new_text, "en")


def _original(translation: VersionInfo, english_versions: list[VersionInfo]) -> VersionInfo | None:
    """The English version a translation was made from, when stored (paired by :mod:`kb.versions.catalog`)."""
    return next((v for v in english_versions if v.version == translation.original), None)


def _glossary_by_english(store: Store, version: VersionInfo) -> dict[str, str]:
    """English glossary entries of ``version`` by their term, case-folded → node id."""
    return {(title or id_name(id_)).casefold(): id_ for id_, (kind, title, _) in store.node_names(version.version, "en").items()
            if kind == GLOSSARY}


def _date(version: VersionInfo) -> str:
    return version.effective_date or ""


def bilingual_history(store: Store, name: str, *, lang: str | None = None, version: str | None = None
                      ) -> list[RuleHistory]:
    """The histories of the rule number or term ``name`` in both languages, each followed by the history of its
    counterpart in the other language (a Japanese node pairs with the node of its English original, see the module
    doc). With ``lang`` only that language's history (:func:`kb.versions.history.rule_history`); with ``version``
    the history of ``name`` as numbered in that version and its counterparts. Without either, ``name`` as numbered in
    the newest version of each language that has it: ``701.34`` is Proliferate in 2026 and, in the 2023 Japanese,
    予示 (Manifest, now 701.40) — both are shown."""
    if lang is not None:
        return [rule_history(store, name, lang=lang, version=version)]
    english_versions, translations = list_versions(store, "en"), list_versions(store, "ja")
    if version is not None:
        starts = [rule_history(store, name, version=version)]
    else:
        starts = []
        for language, versions in (("en", english_versions), ("ja", translations)):
            if versions:
                try:
                    starts.append(rule_history(store, name, lang=language))
                except KbError:
                    continue
        if not starts:
            rule_history(store, name)  # raises the error naming what was asked for
    lineages = {language: histories(store, language) if versions else {}
                for language, versions in (("en", english_versions), ("ja", translations))}
    out: dict[tuple, RuleHistory] = {}  # by the lineage's language and (version, id) path: each shown once
    for start in starts:
        out.setdefault(_path(start), start)
        for entry in start.entries:
            if entry.status == "removed":
                continue
            other = "ja" if start.lang == "en" else "en"
            for key in _counterparts(store, entry.version, start.lang, entry.node_id, english_versions, translations):
                history = lineages[other].get(key)
                if history is not None:
                    out.setdefault(_path(history), history)
    return list(out.values())


def _path(history: RuleHistory) -> tuple[object, ...]:
    return (history.lang, *((e.version, e.node_id) for e in history.entries))


def _counterparts(store: Store, version: str, lang: str, node_id: str, english_versions: list[VersionInfo],
                  translations: list[VersionInfo]) -> list[NodeKey]:
    """The nodes of the other language that translate (or are translated by) the node (version, lang, node_id)."""
    out = []
    if lang == "en":
        for translation in translations:
            original = _original(translation, english_versions)
            if original is None or original.version != version:
                continue
            if is_glossary_id(node_id):
                node = store.node(NodeKey(version, "en", node_id))
                english = (node.title if node else None) or id_name(node_id)
                out += [NodeKey(translation.version, "ja", n.id) for n in store.nodes(translation.version, "ja", [GLOSSARY])
                        if (n.english or "").casefold() == english.casefold()]
            else:
                out.append(NodeKey(translation.version, "ja", node_id))
        return out
    of_version = next((t for t in translations if t.version == version), None)
    original = _original(of_version, english_versions) if of_version else None
    if original is None:
        return []
    if is_glossary_id(node_id):
        node = store.node(NodeKey(version, "ja", node_id))
        found = _glossary_by_english(store, original).get(((node.english if node else None) or "").casefold())
        return [NodeKey(original.version, "en", found)] if found else []
    return [NodeKey(original.version, "en", node_id)]
