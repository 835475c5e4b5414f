"""Each rule's and glossary entry's history across every ingested version of a language, following renumbering.

Entry points: :func:`histories` (every lineage of one language), :func:`rule_history` (the one a user names, for
``kb history``) and :func:`changed_histories` (only the lineages in which something happened, from the cached
summaries of each version pair, for the site: its cost follows the number of changes, not of nodes times versions).
Consecutive versions (by effective date) are compared with :mod:`kb.versions.diff`; a lineage links a node to its
counterpart in the next version (same rule, changed or renumbered), so ``701.40`` in 2025-11-14 (Manifest) leads back
to ``701.34`` in 2023-11-17.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from kb import rulenum
from kb.errors import KbError
from kb.ids import glossary_id, id_name, rule_id
from kb.store import NodeKey, Store
from kb.versions.catalog import VersionInfo, list_versions, resolve_version
from kb.versions.diff import KIND_LEVELS, Change, TextOp, VersionDiff, content, diff_summary, diff_versions


@dataclass(frozen=True)
class HistoryEntry:
    """The node in one version: ``status`` says how it came from the previous version (``first`` for the oldest
    version ingested; ``removed`` when it is gone, ``node_id`` then being its last id)."""

    version: str
    effective_date: str | None
    node_id: str
    status: str  # first | added | unchanged | changed | moved | removed
    text: str | None
    previous_id: str | None = None  # the id in the previous version (renumbered: differs from node_id)
    ops: tuple[TextOp, ...] = ()
    edit: str | None = None  # how the text changed: 'references' (renumbered citations only) or 'text' (Change.edit)

    @property
    def label(self) -> str:
        return id_name(self.node_id)

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version, "effective_date": self.effective_date, "id": self.node_id, "status": self.status,
                "previous_id": self.previous_id, "text": self.text, "edit": self.edit,
                "ops": [[o.op, o.text] for o in self.ops]}


@dataclass(frozen=True)
class RuleHistory:
    lang: str
    entries: tuple[HistoryEntry, ...]  # oldest version first; nothing before the node first appears

    @property
    def changed(self) -> bool:
        """True when anything happened after the node first appeared."""
        return any(e.status not in ("first", "unchanged") for e in self.entries[1:]) or \
            (bool(self.entries) and self.entries[0].status == "added")

    def to_json(self) -> dict:
        return {"lang": self.lang, "entries": [e.to_json() for e in self.entries]}


def consecutive_diffs(store: Store, lang: str) -> tuple[list[VersionInfo], list[VersionDiff]]:
    """The versions of ``lang``, oldest first, and the diff between each one and the next."""
    versions = sorted(list_versions(store, lang), key=VersionInfo.sort_key)
    return versions, [diff_versions(store, a, b) for a, b in pairwise(versions)]


def histories(store: Store, lang: str, diffs: tuple[list[VersionInfo], list[VersionDiff]] | None = None
              ) -> dict[NodeKey, RuleHistory]:
    """The history of every rule and glossary node of ``lang``, keyed by each (version, lang, id) it passes through."""
    versions, steps = diffs or consecutive_diffs(store, lang)
    if not versions:
        return {}
    lineages: list[list[HistoryEntry]] = []
    current: dict[str, list[HistoryEntry]] = {}  # id in the version just processed → its lineage
    first = versions[0]
    if steps:
        firsts = [(c.old_id, c.old_text) for c in steps[0].changes if c.old_id]
    else:
        firsts = [(n.id, content(n)) for n in store.nodes(first.version, lang, KIND_LEVELS)]
    for node_id, text in firsts:
        lineage = [HistoryEntry(first.version, first.effective_date, node_id, "first", text)]
        lineages.append(lineage)
        current[node_id] = lineage
    for version, step in zip(versions[1:], steps, strict=True):
        following: dict[str, list[HistoryEntry]] = {}
        for change in step.changes:
            entry = _entry(version, change)
            if change.status == "added":
                lineage = [entry]
                lineages.append(lineage)
            else:
                assert change.old_id is not None  # every change but an addition has an old node
                lineage = current[change.old_id]
                lineage.append(entry)
            if change.new_id:
                following[change.new_id] = lineage
        current = following
    return _by_node(lang, lineages)


def consecutive_summaries(store: Store, lang: str) -> tuple[list[VersionInfo], list[VersionDiff]]:
    """The versions of ``lang``, oldest first, and the :func:`kb.versions.diff.diff_summary` of each one and the next."""
    versions = sorted(list_versions(store, lang), key=VersionInfo.sort_key)
    return versions, [diff_summary(store, a, b) for a, b in pairwise(versions)]


def changed_histories(lang: str, versions: list[VersionInfo], steps: list[VersionDiff]) -> dict[NodeKey, RuleHistory]:
    """The lineages of :func:`histories` in which something happened after the node first appeared, keyed the same
    way, made from diffs that may leave unchanged nodes out (:func:`kb.versions.diff.diff_summary`). A node that is
    in no lineage yet when a change names it is the oldest version's, unchanged since; entries that record no change
    carry no text."""
    if not versions:
        return {}
    first = versions[0]
    lineages: list[list[HistoryEntry]] = []
    current: dict[str, list[HistoryEntry]] = {}  # id in the version just processed → its lineage (tracked ones)
    for k, (version, step) in enumerate(zip(versions[1:], steps, strict=True), start=1):
        following: dict[str, list[HistoryEntry]] = {}
        moved_on = set()
        for change in step.changes:
            if change.status == "unchanged":
                continue
            entry = _entry(version, change)
            if change.status == "added":
                lineage = [entry]
                lineages.append(lineage)
            else:
                assert change.old_id is not None
                moved_on.add(change.old_id)
                tracked = current.get(change.old_id)
                if tracked is None:  # untouched since the oldest version
                    tracked = [HistoryEntry(first.version, first.effective_date, change.old_id, "first", None)]
                    tracked += [HistoryEntry(v.version, v.effective_date, change.old_id, "unchanged", None, change.old_id)
                                for v in versions[1:k]]
                    lineages.append(tracked)
                lineage = tracked
                lineage.append(entry)
            if change.new_id:
                following[change.new_id] = lineage
        for node_id, lineage in current.items():
            if node_id not in moved_on:
                lineage.append(HistoryEntry(version.version, version.effective_date, node_id, "unchanged", None, node_id))
                following[node_id] = lineage
        current = following
    return _by_node(lang, lineages)


def rule_history(store: Store, name: str, *, lang: str | None = None, version: str | None = None) -> RuleHistory:
    """History of the rule number or glossary term ``name`` as found in ``version`` (default: newest that has it)."""
    number = rulenum.normalize(name)
    node_id = rule_id(number) if number else glossary_id(name.strip())
    candidates = [resolve_version(store, version, lang)] if version else list_versions(store, lang)
    for info in candidates:  # newest first
        key = NodeKey(info.version, info.lang, node_id)
        if store.node(key) is None and not number:
            key = _glossary_key(store, info, name) or key
        if store.node(key) is not None:
            return histories(store, info.lang)[key]
    where = f" in version {version}" if version else ""
    raise KbError(f"{name}: no such rule or glossary term{where} (see 'kb versions')")


def _glossary_key(store: Store, info: VersionInfo, name: str) -> NodeKey | None:
    found = store.glossary_named(name.strip(), version=info.version, lang=info.lang)
    return found[0] if found else None


def _by_node(lang: str, lineages: list[list[HistoryEntry]]) -> dict[NodeKey, RuleHistory]:
    """Each lineage's history under the key of every node in it that still exists in its version."""
    out: dict[NodeKey, RuleHistory] = {}
    for lineage in lineages:
        history = RuleHistory(lang, tuple(lineage))
        for e in lineage:
            if e.status != "removed":
                out[NodeKey(e.version, lang, e.node_id)] = history
    return out


def _entry(version: VersionInfo, change: Change) -> HistoryEntry:
    if change.status == "removed":
        assert change.old_id is not None  # a removed node has its old id
        return HistoryEntry(version.version, version.effective_date, change.old_id, "removed", None, change.old_id)
    assert change.new_id is not None  # any other change has a new id
    return HistoryEntry(version.version, version.effective_date, change.new_id, change.status, change.new_text,
                        change.old_id, change.ops, change.edit)
