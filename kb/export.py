"""Export stored nodes as JSON records (the dataset shape documented in the README).

Rules and glossary entries of the version the site shows (:mod:`kb.versions.current`) carry ``ja_status``
(``current``/``outdated``/``missing``) and, when translated, ``ja`` (the Japanese node's id and version); the
Japanese nodes shown with them carry the same ``ja_status`` and ``current`` (the id they are shown under)."""

from __future__ import annotations

from collections.abc import Iterator

from kb.errors import KbError
from kb.model import NODE_KINDS
from kb.store import NodeKey, Store
from kb.versions.catalog import resolve_version
from kb.versions.current import SHOWN_KINDS, current_view


def export_records(store: Store, *, version: str | None = None, lang: str | None = None,
                   kinds: list[str] | None = None) -> Iterator[dict]:
    """One dict per node: kind, id, number, title/term, parent, text, examples, refs, cited_by, lang, version, source;
    all read in one snapshot of the store (an ingest committing meanwhile changes none of it). ``version``: a version
    id or effective date as ``kb versions`` lists them; an unknown one, or a kind not in :data:`kb.model.NODE_KINDS`,
    is a KbError naming the choices (checked at the call, before the first record)."""
    unknown = [k for k in kinds or () if k not in NODE_KINDS]
    if unknown:
        raise KbError(f"{unknown[0]}: no such kind of node; choose one of {', '.join(NODE_KINDS)}")
    if version is not None:
        version = resolve_version(store, version, lang).version
    return _snapshot_records(store, version, lang, kinds)


def _snapshot_records(store: Store, version: str | None, lang: str | None, kinds: list[str] | None) -> Iterator[dict]:
    with store.snapshot():
        yield from _records(store, version, lang, kinds)


def _records(store: Store, version: str | None, lang: str | None, kinds: list[str] | None) -> Iterator[dict]:
    sources = store.node_sources()
    refs_by: dict[NodeKey, list[dict]] = {}
    cited_by: dict[NodeKey, list[dict]] = {}
    for sr in store.refs():  # all of them: a rule of one version is cited by unversioned wiki articles and notes
        target = sr.target_key
        refs_by.setdefault(sr.source_key, []).append({
            "kind": sr.ref.kind, "target": sr.ref.target, "text": sr.ref.text, "resolved": target is not None,
            **({"node": _key_dict(target)} if target else {}),
            **({"cited_version": sr.ref.version} if sr.ref.version else {}),
        })
        if target:
            cited_by.setdefault(target, []).append(_key_dict(sr.source_key) | {"kind": sr.ref.kind})
    view = current_view(store)
    shown_version = view.english.version if view.english else view.shown.version if view.shown else None
    shown_lang = "en" if view.english else "ja"
    for node in store.nodes(version, lang, kinds):
        key = NodeKey(node.version, node.lang, node.id)
        rec: dict[str, object] = {
            "id": node.id, "kind": node.kind, "lang": node.lang, "version": node.version,
            "number": node.number, "title": node.title, "parent": node.parent, "order": node.order,
            "text": node.text, "examples": list(node.examples), "aliases": list(node.aliases),
            "english": node.english, "refs": refs_by.get(key, []), "cited_by": _dedupe(cited_by.get(key, [])),
            "source": sources.get(key),
        }
        if node.kind in SHOWN_KINDS and (node.version, node.lang) == (shown_version, shown_lang):
            rec["ja_status"] = view.status(node.id)
            if node.id in view.ja:
                rec["ja"] = _key_dict(view.ja[node.id].key)
        elif key in view.current_ids and view.ja[view.current_ids[key]].key == key:
            rec["ja_status"] = view.status(view.current_ids[key])
            rec["current"] = view.current_ids[key]
        if node.html is not None:
            rec["html"] = node.html
        if node.meta:
            rec["meta"] = node.meta
        yield rec


def _key_dict(key: NodeKey) -> dict:
    return {"id": key.id, "version": key.version, "lang": key.lang}


def _dedupe(items: list[dict]) -> list[dict]:
    seen, out = set(), []
    for item in items:
        k = (item["id"], item["version"], item["lang"])
        if k not in seen:
            seen.add(k)
            out.append(item)
    return out
