"""Edit builds: when all that changed in the store since the previous build is the text of a few MTG Wiki articles —
the same nodes, each article keeping its names (title, English name, aliases) and its unresolved references, nothing
versioned changed, nor kb's code, the templates, the base URL, the search analysis or the user dictionary — the
pages that can differ from the previous build's are those articles' own pages, their preview scripts, the static
search's files of their documents, and, for each entry they now cite or mention otherwise than before (what each
node gives other pages: :data:`kb.site.records.Contribution`), the pages showing who cites it: its own page (an
article's, a card's, a term's), the rule parts showing it, the card index and its card's preview script. An edit
build makes those alone (:func:`kb.site.pages.edited_pages`), from a gather that reads the edited articles whole and
of the other articles their names only (:func:`kb.site.gather.gather_edited`), then links complete the entries it
shows again — who cites each is the record's, with the edited nodes' citations in their places
(:func:`kb.site.gather.link_edited`): it costs what the edit changes and the pages that show it, not what the wiki
holds. Anything else — an article added, removed or renamed, more than :func:`edit_max` changed — is a full build,
whose groups of pages spare what is unchanged as before.

The record (:data:`EDITS`) a build leaves for the next: what it was made with (:func:`edit_base`, the user
dictionary), the digest of the store's versioned content (:meth:`kb.store.Store.versioned_digest`), the inputs
fingerprint of the build that left it (an edit build follows that build alone), for each unversioned node its
content hash, the digest of its names and its page, and each card's :data:`kb.site.pages.CardFacts` (what the card
index and the previews show of a card, which the edit build reads of the cards it does not show again); and, in
shards under :data:`EDITS_DIR` read and written only where an edit build needs them (a whole record was 57 MB at
20,000 articles), what each node gives other pages, each rule's citations with their places in the store's order
(:data:`kb.site.records.Citation`: an edit build puts the edited nodes' in their places instead of reading every
node citing the rules it shows again — a section page lists every article citing one of its rules) and every
other cited entry's citations alike, with a card's mentions (:data:`kb.site.records.EntryCitations`: an article's
page lists every article citing it, a card's page the sentence of every node mentioning it).

Contract: :func:`edits_files` makes the record of a build's site, :func:`edited_files` the record after an edit
build; :func:`edited_keys` finds the nodes an edit build would make again (None: a full build);
:func:`cited_otherwise` checks the gathered edited entries against the record (:func:`old_contributions`) and finds
the entries they cite otherwise (whose pages are made again too, :func:`kb.site.pages.edited_pages`, the rules'
citations from :func:`old_rule_citations`, the others' from :func:`old_entry_citations`).
"""

from __future__ import annotations

import hashlib
import marshal
from collections.abc import Callable
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import Any

from kb.model import ARTICLE, UNVERSIONED, Node
from kb.site.manifest import MANIFEST_FORMAT, load_record
from kb.site.pages import CardFacts, card_facts
from kb.site.records import NO_CONTRIBUTION, Citation, Contribution, Entry, EntryCitations, SiteData
from kb.store import NodeKey, Store

EDITS = ".kb-build/edits.marshal"
NodeFacts = tuple[str, bytes, str]  # an unversioned node's content hash, names' digest and page (the record's
# "nodes", by (lang, id); what it gives other pages is in a shard: EDITS_DIR)
EDITS_SHAPE = 5  # the record's shape (3: contributions, with their mentions' texts, and rule citations in shards;
# 5: and every other entry's citations, with a card's mentions)
EDIT_MAX = 32  # edited nodes at most in an edit build (more: a full build, whose groups spare the rest as well) ...
EDIT_SHARE = 100  # ... or one in this many of the wiki's nodes, when that is more: a full build costs more as the wiki
# grows, an edit build about the same per edit (32 prose edits at 5,000 articles: 3.8 s, against 5.4 s for 33)


def edit_max(nodes: int) -> int:
    """How many edited nodes an edit build makes at most, of a wiki of ``nodes`` unversioned nodes."""
    return max(EDIT_MAX, nodes // EDIT_SHARE)


def edit_base(render_key: str, analysis: dict[str, Any]) -> str:
    """What an edit build must share with the build before it (with the user dictionary: :func:`cited_otherwise`): kb's
    code, the templates and the base URL (``render_key``), the search analysis and the installed Sudachi
    (``analysis``)."""
    return hashlib.sha256(marshal.dumps((MANIFEST_FORMAT, render_key, sorted(analysis.items())), 2)).hexdigest()


def names_digest(node: Node) -> bytes:
    """A digest of what other pages read of an unversioned node besides its contribution: its kind and names."""
    return hashlib.sha1(marshal.dumps((node.kind, node.title, node.english, node.aliases), 2)).digest()


def edits_files(site: SiteData, base: str, versioned: str, inputs: str, previous: dict[str, Any]) -> list[RecordFile]:
    """The record a build of ``site`` leaves for the next (see the module doc), as files; ``inputs``: the build's
    inputs fingerprint, which names the record as that build's (:func:`edited_keys`); ``previous``: the last
    build's record (its shards kept where unchanged)."""
    facts = _node_facts(site)
    nodes = {(lang, node.id): facts(entry, lang) for entry in site.others.values() for lang, node in entry.nodes.items()}
    given = {key: site.contributions.get(key, NO_CONTRIBUTION) for key in nodes}
    record = {"format": MANIFEST_FORMAT, "shape": EDITS_SHAPE, "base": base, "versioned": versioned,
              "dictionary": site.splitter.dictionary_id, "inputs": inputs, "nodes": nodes, "cards": card_facts(site)}
    shards = previous.get("shards", {}) if previous.get("shape") == EDITS_SHAPE else {}
    return _files(record, shards, _sharded(given, NODE_SHARD), _sharded(site.rule_citations, RULE_SHARD),
                  _sharded(site.entry_citations, CITED_SHARD))


def edited_files(shards: RecordShards, record: dict[str, Any], site: SiteData, cards: dict[str, CardFacts],
                 inputs: str) -> list[RecordFile]:
    """The record after an edit build of ``site`` (``cards``: every card's facts now; ``inputs``: the build's inputs
    fingerprint), as files: the main record, and the shards holding the edited nodes' contributions and the
    citations of the entries the build showed again, those of the previous record (``shards``) updated."""
    nodes = dict(record["nodes"])
    facts = _node_facts(site)
    keys = [(lang, node_id) for node_id in sorted(site.edited) for lang in site.others[node_id].nodes]
    given = shards.copies({NODE_SHARD.of(key) for key in keys})
    for lang, node_id in keys:
        nodes[(lang, node_id)] = facts(site.others[node_id], lang)
        given[NODE_SHARD.of((lang, node_id))][(lang, node_id)] = site.contributions[(lang, node_id)]
    citations = shards.copies({RULE_SHARD.of(url) for url in site.rule_citations})
    for url, cited in site.rule_citations.items():
        citations[RULE_SHARD.of(url)][url] = cited
    entry_citations = shards.copies({CITED_SHARD.of(url) for url in site.entry_citations})
    for url, (cited, said) in site.entry_citations.items():
        entry_citations[CITED_SHARD.of(url)][url] = (cited, said) if cited else ()  # cited by none: left out
    return _files({**record, "inputs": inputs, "nodes": nodes, "cards": cards}, record["shards"], given, citations,
                  entry_citations)


def _node_facts(site: SiteData) -> Callable[[Entry, str], NodeFacts]:
    """What the record keeps of an unversioned entry's node of a language (:data:`NodeFacts`)."""
    digests = site.html.digests if site.html is not None else {}

    def facts(entry: Entry, lang: str) -> NodeFacts:
        node = entry.nodes[lang]
        return digests.get((lang, node.id), ""), names_digest(node), entry.url

    return facts


def old_contributions(shards: RecordShards, edited: list[NodeKey]) -> dict[tuple[str, str], Contribution]:
    """What the edited nodes gave other pages at the previous build (its record's ``shards``)."""
    keys = [(key.lang, key.id) for key in edited]
    read = shards.get({NODE_SHARD.of(key) for key in keys})
    return {key: read[NODE_SHARD.of(key)].get(key, NO_CONTRIBUTION) for key in keys}


def old_rule_citations(shards: RecordShards, urls: list[str]) -> dict[str, list[Citation]]:
    """The citations of the rules at ``urls`` at the previous build (its record's ``shards``)."""
    read = shards.get({RULE_SHARD.of(url) for url in urls})
    return {url: read[RULE_SHARD.of(url)].get(url, []) for url in urls}


def old_entry_citations(shards: RecordShards, urls: list[str]) -> dict[str, EntryCitations]:
    """Who cited (and mentioned) the entries at ``urls`` at the previous build (its record's ``shards``)."""
    read = shards.get({CITED_SHARD.of(url) for url in urls})
    return {url: read[CITED_SHARD.of(url)].get(url, ([], [])) for url in urls}


EDITS_DIR = ".kb-build/edits/"  # the record's shards: n-<hex>.marshal (contributions, by node id), r-<hex>.marshal
# (rule citations, by the rule's page): each read and written only by the builds that need it


@dataclass(frozen=True)
class _Shards:
    """A part of the record in ``count`` shard files named ``<prefix>-<hex>``: a value's shard by a hash of the name
    ``name_of`` gives its key."""

    prefix: str
    count: int
    name_of: Callable[[Any], str]

    def of(self, key: Any) -> str:
        digest = hashlib.sha1(self.name_of(key).encode()).digest()
        return f"{self.prefix}-{int.from_bytes(digest[:4], 'big') % self.count:02x}"

    def every(self) -> list[str]:
        return [f"{self.prefix}-{i:02x}" for i in range(self.count)]


NODE_SHARD = _Shards("n", 256, itemgetter(1))  # contributions, by (lang, node id): by node id
RULE_SHARD = _Shards("r", 256, lambda url: url.partition("#")[0])  # rule citations, by URL: by page (a page's rules
# together)
CITED_SHARD = _Shards("c", 256, str)  # who cites and mentions an entry (not a rule), by its URL


def _sharded(values: dict[Any, Any], shards: _Shards) -> dict[str, dict[Any, Any]]:
    """``values`` by shard (every shard, the empty ones too)."""
    out: dict[str, dict[Any, Any]] = {name: {} for name in shards.every()}
    for key, value in values.items():
        out[shards.of(key)][key] = value
    return out


class MissingShard(Exception):
    """A shard of the previous build's record is missing or damaged: the build is a full one."""


@dataclass(frozen=True)
class RecordShards:
    """The shards of the record a build in ``out`` left, each read once: an edit build reads a shard to find what
    the edit changed, then updates it."""

    out: Path
    read: dict[str, dict[Any, Any]] = field(default_factory=dict)

    def get(self, names: set[str]) -> dict[str, dict[Any, Any]]:
        """The shards ``names``; raises :class:`MissingShard` when one is not there."""
        for name in sorted(names - self.read.keys()):
            values = load_record(self.out, f"{EDITS_DIR}{name}.marshal").get("values")
            if not isinstance(values, dict):
                raise MissingShard(f"{self.out / EDITS_DIR}{name}.marshal")
            self.read[name] = values
        return {name: self.read[name] for name in names}

    def copies(self, names: set[str]) -> dict[str, dict[Any, Any]]:
        """The shards ``names``, each a copy to update."""
        return {name: dict(values) for name, values in self.get(names).items()}


RecordFile = tuple[str, bytes, bool]  # a file of the record: its path under the site, its bytes, and whether the
# previous build left the same (kept when it is there)


def _files(record: dict[str, Any], previous: dict[str, str], *shards: dict[str, dict[Any, Any]]) -> list[RecordFile]:
    """The main record and ``shards`` as files, each shard's values in one order whatever build made them (a rule
    cited by none left out); the main record names each shard's digest, and a shard of the digest ``previous`` (the
    last record's) names is the same (written only when it is not there)."""
    files: list[RecordFile] = []
    digests = dict(previous)
    for group in shards:
        for name, values in group.items():
            kept = {key: values[key] for key in sorted(values) if values[key]}
            data = marshal.dumps({"format": MANIFEST_FORMAT, "values": kept}, 2)
            digests[name] = digest = hashlib.sha1(data).hexdigest()
            files.append((f"{EDITS_DIR}{name}.marshal", data, previous.get(name) == digest))
    return [(EDITS, marshal.dumps({**record, "shards": digests}, 2), False), *files]


def edited_keys(store: Store, record: dict[str, Any], base: str, previous: str | None) -> list[NodeKey] | None:
    """The unversioned nodes whose content changed since the build that left ``record``, when an edit build may
    make them (at most :func:`edit_max`, the same nodes stored, nothing versioned changed, made with ``base``, and
    that build the previous one: whose inputs fingerprint, in the site's stamp, is ``previous``); else None."""
    nodes: dict[tuple[str, str], NodeFacts] = record.get("nodes", {})
    if not nodes or record.get("shape") != EDITS_SHAPE or "shards" not in record or record.get("inputs") != previous \
            or record.get("base") != base \
            or record.get("versioned") != store.versioned_digest():
        return None
    now = store.version_hashes(UNVERSIONED)
    if len(now) != len(nodes):
        return None
    changed = []
    for lang, node_id, digest in now:
        was = nodes.get((lang, node_id))
        if not (isinstance(was, tuple) and len(was) == 3):  # gone, or a record of another shape
            return None
        if was[0] != digest:
            changed.append(NodeKey(UNVERSIONED, lang, node_id))
    return changed if 0 < len(changed) <= edit_max(len(nodes)) else None


def pages_by_id(record: dict[str, Any]) -> dict[str, str]:
    """The page of each unversioned node id in ``record`` (an edit build makes none of them again)."""
    return {node_id: facts[2] for (_, node_id), facts in record["nodes"].items()}


def cited_otherwise(site: SiteData, record: dict[str, Any], edited: list[NodeKey],
                    given: dict[tuple[str, str], Contribution]) -> set[str] | None:
    """The URLs of the entries the edited nodes of ``site`` (:func:`kb.site.gather.gather_edited`) now cite or
    mention otherwise than when ``record`` was made (``given``: what they gave then, :func:`old_contributions`) —
    each edited node an article shown on its own page, with its names, its unresolved references and the user
    dictionary as they were; else None (a full build)."""
    if site.splitter.dictionary_id != record.get("dictionary"):
        return None
    nodes = record["nodes"]
    changed: set[str] = set()
    for key in edited:
        entry = site.others.get(key.id)
        node = entry.nodes.get(key.lang) if entry else None
        if entry is None or node is None or len(entry.nodes) != 1 or entry.kind != ARTICLE:
            return None
        _, names, _ = nodes[(key.lang, key.id)]
        old_cites, old_lines = given[(key.lang, key.id)]
        new_cites, new_lines = site.contributions.get((key.lang, key.id), NO_CONTRIBUTION)
        if names != names_digest(node) or old_lines != new_lines:
            return None
        old, new = _by_target(old_cites), _by_target(new_cites)
        changed |= {url for url in old.keys() | new.keys() if old.get(url) != new.get(url)}
    return changed


def _by_target(cites: tuple[tuple[str, Any], ...]) -> dict[str, list[Any]]:
    """A contribution's citations by the URL cited: its mentions there (a citation without one counts once)."""
    out: dict[str, list[Any]] = {}
    for url, mention in cites:
        mentions = out.setdefault(url, [])
        if mention is not None:
            mentions.append(mention)
    return out
