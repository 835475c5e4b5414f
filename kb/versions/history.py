"""Each rule's and glossary entry's history across every ingested version of a language, following renumbering.

Entry points: :func:`histories` (every lineage of one language, for the site) and :func:`rule_history` (the one a
user names, for ``kb history``). Consecutive versions (by effective date) are compared with :mod:`kb.versions.diff`; a
lineage links a node to its counterpart in the next version (same rule, changed or renumbered), so ``701.40``
in 2025-11-14 (Manifest) leads back to ``701.34`` in 2023-11-17.
"""

from __future__ import annotations

from dataclasses import dataclass

from kb import rulenum
from kb.errors import KbError
from kb.model import GLOSSARY
from kb.store import NodeKey, Store
from kb.versions.catalog import VersionInfo, list_versions, resolve_version
from kb.versions.diff import KIND_LEVELS, Change, TextOp, VersionDiff, content, diff_versions


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

    @property
    def label(self) -> str:
        return self.node_id.split(":", 1)[1]

    def to_json(self) -> dict:
        return {"version": self.version, "effective_date": self.effective_date, "id": self.node_id, "status": self.status,
                "previous_id": self.previous_id, "text": self.text, "ops": [[o.op, o.text] for o in self.ops]}


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
    return versions, [diff_versions(store, a, b) for a, b in zip(versions, versions[1:])]


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
    for version, step in zip(versions[1:], steps):
        following: dict[str, list[HistoryEntry]] = {}
        for change in step.changes:
            entry = _entry(version, change)
            if change.status == "added":
                lineage = [entry]
                lineages.append(lineage)
            else:
                lineage = current[change.old_id]
                lineage.append(entry)
            if change.new_id:
                following[change.new_id] = lineage
        current = following
    out: dict[NodeKey, RuleHistory] = {}
    for lineage in lineages:
        history = RuleHistory(lang, tuple(lineage))
        for e in lineage:
            if e.status != "removed":
                out[NodeKey(e.version, lang, e.node_id)] = history
    return out


def rule_history(store: Store, name: str, *, lang: str | None = None, version: str | None = None) -> RuleHistory:
    """History of the rule number or glossary term ``name`` as found in ``version`` (default: newest that has it)."""
    number = rulenum.normalize(name)
    node_id = f"cr:{number}" if number else f"gl:{name.strip()}"
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


def _entry(version: VersionInfo, change: Change) -> HistoryEntry:
    if change.status == "removed":
        return HistoryEntry(version.version, version.effective_date, change.old_id, "removed", None, change.old_id)
    return HistoryEntry(version.version, version.effective_date, change.new_id, change.status, change.new_text,
                        change.old_id, change.ops)
