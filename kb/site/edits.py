"""Edit builds: when all that changed in the store since the previous build is the text of a few MTG Wiki articles —
the same nodes, each article keeping its names (title, English name, aliases) and its unresolved references, nothing
versioned changed, nor kb's code, the templates, the base URL, the search analysis or the user dictionary — the
pages that can differ from the previous build's are those articles' own pages, their preview scripts, the static
search's files of their documents, and, for each entry they now cite or mention otherwise than before (what each
node gives other pages: :data:`kb.site.records.Contribution`), the pages showing who cites it: its own page (an
article's, a card's, a term's), the rule parts showing it, the card index and its card's preview script. An edit
build makes those alone (:func:`kb.site.pages.edited_pages`), from a gather that reads the edited articles whole and
of the other articles their names only (:func:`kb.site.gather.gather_edited`), then links complete the entries it
shows again — reading every node citing one of them, but of the unversioned ones only the references of the spans
naming them (:func:`kb.site.gather.link_edited`): it costs what the edit changes and the pages that show it, not what
the wiki holds. Anything else — an article added, removed or renamed, more than :data:`EDIT_MAX` changed — is a
full build, whose groups of pages spare what is unchanged as before.

The record (:data:`EDITS`) a build leaves for the next: what it was made with (:func:`edit_base`, the user
dictionary), the digest of the store's versioned content (:meth:`kb.store.Store.versioned_digest`), for each
unversioned node its content hash, the digest of its names, its contribution and its page, each card's
:data:`kb.site.pages.CardFacts` (what the card index and the previews show of a card, which the edit build reads of
the cards it does not show again) and each rule's citations with their places in the store's order
(:data:`kb.site.records.Citation`: an edit build puts the edited nodes' in their places instead of reading every
node citing the rules it shows again — a section page lists every article citing one of its rules).

Contract: :func:`edits_record` makes the record of a build's site, :func:`edited_record` the record after an edit
build; :func:`edited_keys` finds the nodes an edit build would make again (None: a full build);
:func:`cited_otherwise` checks the gathered edited entries against the record and finds the entries they cite
otherwise (whose pages are made again too, :func:`kb.site.pages.edited_pages`).
"""

from __future__ import annotations

import hashlib
import marshal
from typing import Any

from kb.model import ARTICLE, UNVERSIONED, Node
from kb.site.manifest import MANIFEST_FORMAT
from kb.site.pages import CardFacts, card_facts
from kb.site.records import NO_CONTRIBUTION, Citation, Contribution, SiteData
from kb.store import NodeKey, Store

EDITS = ".kb-build/edits.marshal"
NodeFacts = tuple[str, bytes, Contribution, str]  # an unversioned node's content hash, names' digest, contribution
# and page (the record's "nodes", by (lang, id))
EDIT_MAX = 32  # edited nodes at most in an edit build (more: a full build, whose groups spare the rest as well)


def edit_base(render_key: str, analysis: dict[str, Any]) -> str:
    """What an edit build must share with the build before it (with the user dictionary: :func:`cited_otherwise`): kb's
    code, the templates and the base URL (``render_key``), the search analysis and the installed Sudachi
    (``analysis``)."""
    return hashlib.sha256(marshal.dumps((MANIFEST_FORMAT, render_key, sorted(analysis.items())), 2)).hexdigest()


def names_digest(node: Node) -> bytes:
    """A digest of what other pages read of an unversioned node besides its contribution: its kind and names."""
    return hashlib.sha1(marshal.dumps((node.kind, node.title, node.english, node.aliases), 2)).digest()


def edits_record(site: SiteData, base: str, versioned: str, inputs: str) -> dict[str, Any]:
    """The record a build of ``site`` leaves for the next (see the module doc); ``inputs``: the build's inputs
    fingerprint, which names the record as that build's (:func:`edited_keys`)."""
    digests = site.html.digests if site.html is not None else {}
    contributions = site.contributions
    nodes = {(lang, node.id): (digests.get((lang, node.id), ""), names_digest(node),
                               contributions.get((lang, node.id), NO_CONTRIBUTION), entry.url)
             for entry in site.others.values() for lang, node in entry.nodes.items()}
    return {"format": MANIFEST_FORMAT, "base": base, "versioned": versioned, "dictionary": site.splitter.dictionary_id,
            "inputs": inputs, "nodes": nodes, "cards": card_facts(site), "rules": _by_url(site.rule_citations)}


def edited_record(record: dict[str, Any], site: SiteData, cards: dict[str, CardFacts], inputs: str) -> dict[str, Any]:
    """``record`` after an edit build of ``site`` (``cards``: every card's facts now; ``inputs``: the build's inputs
    fingerprint): the edited nodes as they are."""
    nodes = dict(record["nodes"])
    digests = site.html.digests if site.html is not None else {}
    for node_id in site.edited:
        for lang, node in site.others[node_id].nodes.items():
            nodes[(lang, node_id)] = (digests.get((lang, node_id), ""), names_digest(node),
                                      site.contributions[(lang, node_id)], site.others[node_id].url)
    return {**record, "inputs": inputs, "nodes": nodes, "cards": cards,
            "rules": _by_url({**record["rules"], **site.rule_citations})}


def _by_url(citations: dict[str, list[Citation]]) -> dict[str, list[Citation]]:
    """The cited rules' citations by URL, in one order whatever build made them."""
    return {url: citations[url] for url in sorted(citations) if citations[url]}


def edited_keys(store: Store, record: dict[str, Any], base: str, previous: str | None) -> list[NodeKey] | None:
    """The unversioned nodes whose content changed since the build that left ``record``, when an edit build may
    make them (at most :data:`EDIT_MAX`, the same nodes stored, nothing versioned changed, made with ``base``, and
    that build the previous one: whose inputs fingerprint, in the site's stamp, is ``previous``); else None."""
    nodes: dict[tuple[str, str], NodeFacts] = record.get("nodes", {})
    if not nodes or not {"cards", "rules"} <= record.keys() or record.get("inputs") != previous or record.get("base") != base \
            or record.get("versioned") != store.versioned_digest():
        return None
    now = store.version_hashes(UNVERSIONED)
    if len(now) != len(nodes):
        return None
    changed = []
    for lang, node_id, digest in now:
        was = nodes.get((lang, node_id))
        if was is None:
            return None
        if was[0] != digest:
            changed.append(NodeKey(UNVERSIONED, lang, node_id))
    return changed if 0 < len(changed) <= EDIT_MAX else None


def pages_by_id(record: dict[str, Any]) -> dict[str, str]:
    """The page of each unversioned node id in ``record`` (an edit build makes none of them again)."""
    return {node_id: facts[3] for (_, node_id), facts in record["nodes"].items()}


def cited_otherwise(site: SiteData, record: dict[str, Any], edited: list[NodeKey]) -> set[str] | None:
    """The URLs of the entries the edited nodes of ``site`` (:func:`kb.site.gather.gather_edited`) now cite or
    mention otherwise than when ``record`` was made — each edited node an article shown on its own page, with its
    names, its unresolved references and the user dictionary as they were; else None (a full build)."""
    if site.splitter.dictionary_id != record.get("dictionary"):
        return None
    nodes = record["nodes"]
    changed: set[str] = set()
    for key in edited:
        entry = site.others.get(key.id)
        node = entry.nodes.get(key.lang) if entry else None
        if entry is None or node is None or len(entry.nodes) != 1 or entry.kind != ARTICLE:
            return None
        _, names, (old_cites, old_lines), _ = nodes[(key.lang, key.id)]
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
