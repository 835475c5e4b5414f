"""What changed between two versions of the rules: every rule and glossary entry classified, with inline text diffs.

Entry point: :func:`diff_versions` (store, old, new) → :class:`VersionDiff`; :func:`diff_nodes` is the pure core.

Statuses: ``unchanged`` (same id, same text after whitespace normalisation), ``changed`` (same id, new text),
``moved`` (renumbered: the same or nearly the same text under another id), ``added``, ``removed``. A ``changed`` or
``moved`` node whose text differs says how (:attr:`Change.edit`): ``references`` when only the rule numbers written
in it differ (its citations were renumbered: ``rule 729`` → ``rule 730``), ``text`` for an edit of substance. A node's
*content* is its text with its examples (chapters and sections: their title); glossary ids carry the term, so a
renamed term with the same definition is ``moved``.

Renumbering is found by similarity: texts are whitespace-normalised and every rule number inside them masked
(a moved rule's own subrules and cross-references are renumbered with it), then compared as token sequences
(words and punctuation in English, characters in Japanese) with difflib. Nodes are matched level by level
(chapters, sections, rules, subrules, glossary), one to one, best ratio first, preferring a pair whose parents were
matched to each other. A pair qualifies with ratio ≥ :data:`MOVE_THRESHOLD` (0.9), or ≥
:data:`MOVE_THRESHOLD_SAME_PARENT` (0.8) when both sit under the same rule (kept or renumbered); a node left over
that sits at the same place under its renumbered parent (701.28g → 701.27g) is that rule rewritten, as is a
same-number pair left over. Candidates are the removed and added nodes *and* same-number pairs whose texts
share too little (or whose parents went different ways): in the real 2023-11-17 → 2025-11-14 change the keyword
actions 701.4–701.55 all shifted, so nearly every old number still exists holding another action ('Cast' went
from 701.4 to 701.5, 701.4 became 'Behold'; 'Amass' 701.44b and 'Explore' 701.44b read alike at 0.9 but belong
to different parents). Why these thresholds, from that diff: 347 of its 379 moves are exact after masking; the
edited moves score 0.90–0.99 ('Reveal' 701.16a → 701.20a 0.93), and the real ones between 0.8 and 0.9 all keep
their parent ('No game events can occur between turns, phases, or steps' 500.11 → 500.12, 0.85 after a word
swap; 719.9 → 722.9, 0.81). No removed node's best unrelated candidate scores above 0.65 there.

References that now point elsewhere: a rule reference in the new version that the node already made in the old
version, to a number whose old rule moved or disappeared (the citation was not renumbered), and rule references
from unversioned nodes (wiki articles, release notes: they resolve to the newest rules) to such numbers.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import marshal
import os
import re
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar
from weakref import WeakKeyDictionary

from kb import rulenum
from kb.ids import id_name, is_rule_id, rule_id
from kb.model import CHAPTER, GLOSSARY, RULE, SECTION, SUBRULE, UNVERSIONED, Node, Ref
from kb.store import Store
from kb.versions.catalog import VersionInfo

MOVE_THRESHOLD = 0.9
MOVE_THRESHOLD_SAME_PARENT = 0.8  # for a pair whose parents are the same rule (kept or renumbered)
CACHE_DIR = "diff-cache"
CACHE_FORMAT = 4  # bump when the classification changes
SUMMARY_FORMAT = 2  # bump when what a summary keeps changes (2: each change's edit)
EDIT_REFERENCES = "references"  # Change.edit: only the rule numbers cited in the text differ
EDIT_TEXT = "text"  # Change.edit: an edit of substance
CACHE_KEEP = 64  # entries: a full classification and a summary per version pair, and what is derived from them
STATUSES = ("added", "removed", "changed", "moved", "unchanged")
KIND_LEVELS = (CHAPTER, SECTION, RULE, SUBRULE, GLOSSARY)  # matched in this order so parents are known first
EXAMPLE_LABEL = {"en": "Example: ", "ja": "例："}
_RULE_NUMBER = re.compile(rf"(?<![\d.]){rulenum.SECTION}(?:\.\d{{1,3}}{rulenum.LETTER}?)?(?!\d)")
_EN_TOKEN = re.compile(r"\s+|\w+|[^\w\s]")
# a word (a rule number whole) with its spaces
_EN_DISPLAY_TOKEN = re.compile(rf"\d+(?:\.\d+{rulenum.LETTER}?)+\s*|\w+\s*|[^\w\s]\s*|\s+")


@dataclass(frozen=True)
class TextOp:
    """One run of an inline diff: ``equal``, ``delete`` (only in the old text) or ``insert`` (only in the new)."""

    op: str
    text: str


@dataclass(frozen=True)
class Change:
    status: str
    kind: str
    old_id: str | None
    new_id: str | None
    old_text: str | None  # content (see module doc), None when absent
    new_text: str | None
    similarity: float  # masked token ratio between the two contents; 1.0 when equal, 0.0 when one side is absent
    ops: tuple[TextOp, ...] = ()  # inline diff (see :func:`inline_ops`) when both contents exist and differ

    @property
    def text_changed(self) -> bool:
        old, new = self.old_text, self.new_text
        return old is not None and new is not None and old != new and _norm(old) != _norm(new)

    @cached_property
    def edit(self) -> str | None:
        """How the text differs: :data:`EDIT_REFERENCES` (only renumbered rule references), :data:`EDIT_TEXT`
        (anything else), None when it does not (or one side is absent). Kept in the diff cache with the change."""
        if not self.text_changed:
            return None
        assert self.old_text is not None and self.new_text is not None
        return EDIT_REFERENCES if masked_equal(self.old_text, self.new_text) else EDIT_TEXT

    @property
    def label(self) -> str:
        """'601.2f', '701.4 → 701.5', or a glossary term."""
        old, new = _label(self.old_id), _label(self.new_id)
        if self.status == "moved":
            return f"{old} → {new}"
        return new or old

    def to_json(self, *, with_text: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status, "kind": self.kind, "old": self.old_id, "new": self.new_id}
        if with_text:
            out |= {"old_text": self.old_text, "new_text": self.new_text, "similarity": round(self.similarity, 4),
                    "text_changed": self.text_changed, "edit": self.edit, "ops": [[o.op, o.text] for o in self.ops]}
        return out


@dataclass(frozen=True)
class RetargetedRef:
    """A rule reference whose number now names another rule (or none): the rule it named in the old version (``cr:``
    + target) is now ``moved_to``."""

    source_id: str
    source_version: str  # the new version, or '' for wiki articles and release notes
    source_lang: str
    target: str  # the rule number as cited
    moved_to: str | None  # where that node went in the new version (None: removed)
    now_at_target: str | None  # id of the node at that number in the new version, if any

    def to_json(self) -> dict:
        return {"source": self.source_id, "source_version": self.source_version, "source_lang": self.source_lang,
                "target": self.target, "moved_to": self.moved_to,
                "now_at_target": self.now_at_target}


@dataclass(frozen=True)
class VersionDiff:
    old: VersionInfo
    new: VersionInfo
    changes: tuple[Change, ...]
    retargeted: tuple[RetargetedRef, ...]
    omitted_unchanged: int = 0  # unchanged nodes left out of ``changes`` (a summary: :func:`diff_summary`)
    # a summary's file in the diff cache, named by its content address (see :func:`cached_derivation`)
    cached_as: Path | None = field(default=None, compare=False, repr=False)

    def counts(self) -> dict[str, int]:
        counts = dict.fromkeys(STATUSES, 0)
        for c in self.changes:
            counts[c.status] += 1
        counts["unchanged"] += self.omitted_unchanged
        return counts

    def edit_counts(self) -> dict[str, int]:
        """Changed and moved nodes whose text differs, by :attr:`Change.edit`."""
        counts = dict.fromkeys((EDIT_TEXT, EDIT_REFERENCES), 0)
        for c in self.changes:
            if c.edit:
                counts[c.edit] += 1
        return counts

    def to_json(self) -> dict:
        """Every node's classification (texts and inline ops for those that are not unchanged)."""
        return {"old": self.old.to_json(), "new": self.new.to_json(), "lang": self.new.lang, "counts": self.counts(),
                "edits": self.edit_counts(),
                "thresholds": [MOVE_THRESHOLD, MOVE_THRESHOLD_SAME_PARENT],
                "changes": [c.to_json(with_text=c.status != "unchanged") for c in self.changes],
                "retargeted_refs": [r.to_json() for r in self.retargeted]}


def diff_versions(store: Store, old: VersionInfo, new: VersionInfo) -> VersionDiff:
    """Compare two versions of one language in the store (the classification is cached, see :func:`cached_changes`)."""
    return _diff(store, old, new, cached_changes(store, old, new))


def diff_summary(store: Store, old: VersionInfo, new: VersionInfo) -> VersionDiff:
    """:func:`diff_versions` without the unchanged nodes (only counted), kept whole in ``<kb_dir>/diff-cache/`` under
    the pair's :func:`version_digest` s and the digest of the unversioned nodes (whose references are checked for
    retargeting): what a site rebuild reads for each version pair, recomputed only when one of them changed."""
    key = hashlib.sha256(json.dumps(["summary", SUMMARY_FORMAT, CACHE_FORMAT, MOVE_THRESHOLD, MOVE_THRESHOLD_SAME_PARENT,
                                     new.lang, version_digest(store, old.version, old.lang),
                                     version_digest(store, new.version, new.lang),
                                     version_digest(store, UNVERSIONED, new.lang)]).encode()).hexdigest()[:32]
    path = store.kb_dir / CACHE_DIR / f"summary-{key}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        os.utime(path)  # recently used: kept (see _write_cache)
        return VersionDiff(old, new, tuple(_change(row) for row in data["changes"]),
                           tuple(RetargetedRef(*row) for row in data["retargeted"]), data["unchanged"], path)
    except (FileNotFoundError, ValueError, TypeError, KeyError):
        pass
    full = _diff(store, old, new, cached_changes(store, old, new, keep=False))
    summary = VersionDiff(old, new, tuple(c for c in full.changes if c.status != "unchanged"), full.retargeted,
                          full.counts()["unchanged"], path)
    _write_cache(path, json.dumps({"changes": [_row(c) for c in summary.changes], "unchanged": summary.omitted_unchanged,
                                   "retargeted": [[r.source_id, r.source_version, r.source_lang, r.target, r.moved_to,
                                                   r.now_at_target] for r in summary.retargeted]}, ensure_ascii=False))
    return summary


def _diff(store: Store, old: VersionInfo, new: VersionInfo, changes: list[Change]) -> VersionDiff:
    # only a reference to a rule renumbered or removed can be retargeted (see find_retargeted): those alone are read
    gone = sorted({id_name(c.old_id) for c in changes if c.old_id and c.old_id != c.new_id and is_rule_id(c.old_id)})
    refs: dict[tuple[str, str], dict[str, list[Ref]]] = defaultdict(lambda: defaultdict(list))
    for version, lang in dict.fromkeys(((old.version, old.lang), (new.version, new.lang), (UNVERSIONED, new.lang))):
        for sr in store.rule_refs_naming(version, lang, gone) if gone else ():
            ref = sr.ref
            refs[(version, lang)][sr.source_key.id].append(Ref(ref.kind, ref.target, ref.text, version=ref.version))
    retargeted = find_retargeted(changes, refs[(old.version, old.lang)], refs[(new.version, new.lang)],
                                 refs[(UNVERSIONED, new.lang)], new)
    return VersionDiff(old, new, tuple(changes), tuple(retargeted))


_DIGESTS: WeakKeyDictionary[Store, tuple[tuple[int, int], dict[tuple[str, str], str]]] = WeakKeyDictionary()


def version_digest(store: Store, version: str, lang: str) -> str:
    """A hash of one version's nodes (ids and content hashes, which cover the references parsed from them); computed
    once per version until the store is written (:meth:`kb.store.Store.generation`)."""
    generation = store.generation()
    memo = _DIGESTS.get(store)
    if memo is None or memo[0] != generation:
        memo = _DIGESTS[store] = (generation, {})
    digest = memo[1].get((version, lang))
    if digest is None:
        rows = store.content_hashes(version, lang)
        digest = memo[1][(version, lang)] = hashlib.sha256(json.dumps([version, lang, rows]).encode()).hexdigest()[:32]
    return digest


def cached_changes(store: Store, old: VersionInfo, new: VersionInfo, *, keep: bool = True) -> list[Change]:
    """:func:`diff_nodes` of two stored versions, kept in ``<kb_dir>/diff-cache/`` under a hash of both versions' node
    hashes (so a rebuild after an unrelated change does not compare the versions again); ``keep=False``: read from
    the cache, but not written to it (a caller that keeps a summary of its own)."""
    key = json.dumps([CACHE_FORMAT, MOVE_THRESHOLD, MOVE_THRESHOLD_SAME_PARENT, new.lang,
                      version_digest(store, old.version, old.lang), version_digest(store, new.version, new.lang)])
    path = store.kb_dir / CACHE_DIR / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.json"
    try:
        changes = [_change(row) for row in json.loads(path.read_text(encoding="utf-8"))]
        os.utime(path)  # recently used: kept (see _write_cache)
        return changes
    except (FileNotFoundError, ValueError, TypeError):
        pass
    # light nodes: the texts, titles and parents compared, without decoding references and metadata
    changes = diff_nodes(store.light_nodes(old.version, old.lang, KIND_LEVELS),
                         store.light_nodes(new.version, new.lang, KIND_LEVELS), new.lang)
    if keep:
        _write_cache(path, json.dumps([_row(c) for c in changes], ensure_ascii=False))
    return changes


T = TypeVar("T")


def cached_derivation(name: str, diffs: Sequence[VersionDiff], params: object, make: Callable[[], T]) -> T:
    """``make()``, kept in the diff cache (marshal format) under ``name``, the content addresses of the cached
    summaries ``diffs`` it is derived from and ``params`` (JSON-able: whatever else it depends on); computed every
    time when a diff is not a cached summary (:func:`diff_summary`) or there is none."""
    files = [d.cached_as for d in diffs if d.cached_as is not None]
    if not files or len(files) < len(diffs):
        return make()
    key = json.dumps([name, CACHE_FORMAT, [f.name for f in files], params])
    path = files[0].parent / f"{name}-{hashlib.sha256(key.encode()).hexdigest()[:32]}.marshal"
    try:
        value = marshal.loads(path.read_bytes())
        os.utime(path)  # recently used: kept (see _write_cache)
        return value
    except (OSError, ValueError, EOFError, TypeError):
        pass
    value = make()
    _write_cache(path, marshal.dumps(value))  # type: ignore[arg-type]  # make() gives marshal's types (see the doc)
    return value


def _row(c: Change) -> list[Any]:
    return [c.status, c.kind, c.old_id, c.new_id, c.old_text, c.new_text, c.similarity, [[o.op, o.text] for o in c.ops],
            c.edit]


def _change(row: list[Any]) -> Change:
    status, kind, old_id, new_id, old_text, new_text, similarity = row[:7]
    change = Change(status, kind, old_id, new_id, old_text, new_text, similarity, tuple(TextOp(*op) for op in row[7]))
    if len(row) > 8:  # entries written before Change.edit was kept compute it when asked
        change.__dict__["edit"] = row[8]  # what cached_property would store
    return change


def _write_cache(path: Path, content: str | bytes) -> None:
    """Write atomically, keeping the :data:`CACHE_KEEP` most recently written or read entries."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "wb") as f:
        f.write(content.encode("utf-8") if isinstance(content, str) else content)
    os.replace(tmp, path)
    entries = sorted((p for p in path.parent.iterdir() if p.suffix in (".json", ".marshal")),
                     key=lambda p: p.stat().st_mtime, reverse=True)
    for stale in entries[CACHE_KEEP:]:
        stale.unlink(missing_ok=True)


def content(node: Node) -> str:
    """What is compared: a chapter's or section's title; a rule's text and examples; a glossary definition."""
    if node.kind in (CHAPTER, SECTION):
        return node.title or ""
    label = EXAMPLE_LABEL.get(node.lang, "Example: ")
    return "\n".join([node.text, *(label + e for e in node.examples)]).strip()


def diff_nodes(old_nodes: Iterable[Node], new_nodes: Iterable[Node], lang: str) -> list[Change]:
    """Classify every node of both versions (see module doc); result in new-version order, removed nodes in place."""
    old = {n.id: n for n in old_nodes}
    new = {n.id: n for n in new_nodes}
    old_content = {i: content(n) for i, n in old.items()}
    new_content = {i: content(n) for i, n in new.items()}
    tokens = _Tokens(lang)
    pair_of: dict[str, str] = {}  # old id → new id
    similarity: dict[str, float] = {}  # old id → similarity of its pair
    for kind in KIND_LEVELS:  # parents first, so a subrule can tell whether its parent stayed
        olds = [i for i, n in old.items() if n.kind == kind]
        loose_old = {i for i in olds if i not in new}
        loose_new = {i for i, n in new.items() if n.kind == kind and i not in old}
        for i in olds:
            if i not in new:
                continue
            same_parent = pair_of.get(old[i].parent or "") == new[i].parent if old[i].parent else new[i].parent is None
            equal = old_content[i] == new_content[i] or _norm(old_content[i]) == _norm(new_content[i])
            similarity[i] = 1.0 if equal else tokens.ratio(old_content[i], new_content[i])
            if same_parent and similarity[i] >= MOVE_THRESHOLD:
                pair_of[i] = i
            else:  # another rule now holds this number (or its parent moved away): may be a renumbering
                loose_old.add(i)
                loose_new.add(i)
        moves = _match_moves(old, new, old_content, new_content, loose_old, loose_new, pair_of, tokens)
        for o, (n, ratio) in moves.items():
            pair_of[o], similarity[o] = n, ratio
        paired_new = set(pair_of.values())
        for o in sorted(loose_old - set(pair_of)):  # the same place under a renumbered parent: one rule, rewritten
            parent, new_parent = old[o].parent, pair_of.get(old[o].parent or "")
            renamed = new_parent + o[len(parent):] if parent and new_parent and new_parent != parent else None
            if renamed is not None and renamed in loose_new and renamed not in paired_new:
                pair_of[o], similarity[o] = renamed, tokens.ratio(old_content[o], new_content[renamed])
                paired_new.add(renamed)
        for i in loose_old & loose_new:  # a same-number pair neither side of which moved: one rule, rewritten
            if i not in pair_of and i not in paired_new:
                pair_of[i] = i
    changes: list[Change] = []
    for o, n in pair_of.items():
        # renumbered citations count: similarity masks them
        differ = old_content[o] != new_content[n] and _norm(old_content[o]) != _norm(new_content[n])
        status = "moved" if o != n else "changed" if differ else "unchanged"
        ops = inline_ops(old_content[o], new_content[n], lang) if differ else ()
        changes.append(Change(status, new[n].kind, o, n, old_content[o], new_content[n], similarity[o], ops))
    paired_new = set(pair_of.values())
    changes += [Change("removed", old[o].kind, o, None, old_content[o], None, 0.0) for o in old if o not in pair_of]
    changes += [Change("added", new[n].kind, None, n, None, new_content[n], 0.0) for n in new if n not in paired_new]
    changes.sort(key=_position)
    return changes


def inline_ops(old: str, new: str, lang: str) -> tuple[TextOp, ...]:
    """Inline diff of two texts: characters in Japanese, words (with spaces and punctuation) in English."""
    a, b = _display_tokens(old, lang), _display_tokens(new, lang)
    ops: list[TextOp] = []

    def emit(op: str, text: str) -> None:
        if not text:
            return
        if ops and ops[-1].op == op:
            ops[-1] = TextOp(op, ops[-1].text + text)
        else:
            ops.append(TextOp(op, text))

    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            emit("equal", "".join(a[i1:i2]))
        else:
            emit("delete", "".join(a[i1:i2]))
            emit("insert", "".join(b[j1:j2]))
    return tuple(ops)


def find_retargeted(changes: list[Change], old_refs: dict[str, list[Ref]], new_refs: dict[str, list[Ref]],
                    unversioned_refs: dict[str, list[Ref]], new: VersionInfo) -> list[RetargetedRef]:
    """References (rule references by citing node id) whose rule number now names another rule (see module doc).
    Only the references to a rule renumbered or removed (``old_id`` ≠ ``new_id``) count: others may be left out."""
    where_now = {c.old_id: c.new_id for c in changes if c.old_id and c.old_id != c.new_id}
    if not where_now:
        return []
    new_ids = {c.new_id for c in changes if c.new_id}
    survivor = {c.old_id: c.new_id for c in changes if c.old_id}
    out: list[RetargetedRef] = []

    def report(node_id: str, source_version: str, targets: Iterable[str]) -> None:
        for target in dict.fromkeys(targets):
            rid = rule_id(target)
            if rid in where_now:
                out.append(RetargetedRef(node_id, source_version, new.lang, target, where_now[rid],
                                         rid if rid in new_ids else None))

    for change in changes:
        if not change.new_id or not change.old_id or change.new_id not in new_refs:
            continue
        # a citation written the same way as before, whose old target went elsewhere and was not followed
        before = old_refs.get(change.old_id, [])
        cited_before = {(r.target, r.text) for r in before}
        followed = {survivor.get(rule_id(r.target)) for r in before}
        report(change.new_id, new.version, (r.target for r in new_refs[change.new_id]
                                            if (r.target, r.text) in cited_before and rule_id(r.target) not in followed))
    for node_id, refs in unversioned_refs.items():
        report(node_id, UNVERSIONED, (r.target for r in refs if not r.version))
    return out


# -- matching ------------------------------------------------------------------------------------------------------

class _Tokens:
    """Masked, whitespace-free token sequences for similarity, cached per text."""

    def __init__(self, lang: str):
        self.lang = lang
        self.cache: dict[str, tuple[str, ...]] = {}

    def __call__(self, text: str) -> tuple[str, ...]:
        seq = self.cache.get(text)
        if seq is None:
            masked = _RULE_NUMBER.sub("#", text)
            seq = tuple(masked.replace(" ", "").replace("\n", "").replace("\u3000", "")) if self.lang == "ja" \
                else tuple(t for t in _EN_TOKEN.findall(masked) if not t.isspace())
            self.cache[text] = seq
        return seq

    def ratio(self, a: str, b: str) -> float:
        return difflib.SequenceMatcher(None, self(a), self(b), autojunk=False).ratio()


def _match_moves(old: dict[str, Node], new: dict[str, Node], old_content: dict[str, str], new_content: dict[str, str],
                 loose_old: set[str], loose_new: set[str], pair_of: dict[str, str], tokens: _Tokens
                 ) -> dict[str, tuple[str, float]]:
    """Pair loose old nodes with loose new nodes (one kind) whose masked texts are similar, best pairs first."""
    olds = sorted(loose_old, key=lambda i: old[i].order)
    news = sorted(loose_new, key=lambda i: new[i].order)

    def parents_match(o: str, n: str) -> bool:
        parent = old[o].parent
        return parent is not None and pair_of.get(parent) == new[n].parent

    def accept(o: str, n: str, ratio: float) -> None:
        same_parent = parents_match(o, n)
        if ratio >= MOVE_THRESHOLD or (same_parent and ratio >= MOVE_THRESHOLD_SAME_PARENT):
            candidates.append(((-ratio, not same_parent, abs(old[o].order - new[n].order)), o, n, ratio))

    candidates: list[tuple[tuple, str, str, float]] = []
    exact: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for n in news:
        exact[tokens(new_content[n])].append(n)
    fuzzy_news = [(n, tokens(new_content[n])) for n in news]
    lowest = MOVE_THRESHOLD_SAME_PARENT
    lowest_length_ratio = lowest / (2 - lowest)  # ratio = 2M/(a+b) ≤ 2·min/(min+max)
    for o in olds:
        seq = tokens(old_content[o])
        if not seq:
            continue
        same = exact.get(seq)
        if same:
            for n in same:
                if n != o:
                    accept(o, n, 1.0)
            continue
        matcher = difflib.SequenceMatcher(None, autojunk=False)
        matcher.set_seq2(seq)
        for n, other in fuzzy_news:
            if n == o or not other or min(len(seq), len(other)) / max(len(seq), len(other)) < lowest_length_ratio:
                continue
            matcher.set_seq1(other)
            if matcher.real_quick_ratio() < lowest or matcher.quick_ratio() < lowest:
                continue
            accept(o, n, matcher.ratio())
    candidates.sort()
    moves: dict[str, tuple[str, float]] = {}
    taken_new: set[str] = set()
    for _, o, n, ratio in candidates:
        if o not in moves and n not in taken_new:
            moves[o] = (n, ratio)
            taken_new.add(n)
    return moves


def _norm(text: str) -> str:
    return " ".join(text.split())


def masked_equal(a: str, b: str) -> bool:
    """Whether two texts are the same once whitespace is normalised and every rule number masked."""
    return _RULE_NUMBER.sub("#", _norm(a)) == _RULE_NUMBER.sub("#", _norm(b))


def _display_tokens(text: str, lang: str) -> list[str]:
    return list(text) if lang == "ja" else _EN_DISPLAY_TOKEN.findall(text)


def _label(node_id: str | None) -> str:
    return id_name(node_id) if node_id else ""


def _position(change: Change) -> tuple:
    """Rules by number (the new one, else the old), then glossary entries by term."""
    label = _label(change.new_id or change.old_id)
    if change.kind == GLOSSARY:
        return (1, (label.casefold(),), 0)
    return (0, rulenum.sort_key(label), 0 if change.new_id else 1)
