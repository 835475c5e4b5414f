"""Look nodes up by what a user types (rule number, term, title) and list their links in both directions."""

from __future__ import annotations

from kb import rulenum
from kb.ids import article_id, card_id, glossary_id, rule_id
from kb.store import NodeKey, Store


def find_node_keys(store: Store, name: str, *, version: str | None = None, lang: str | None = None) -> list[NodeKey]:
    """Keys of the nodes ``name`` means, newest version first; one per language unless ``version`` is given."""
    number = rulenum.normalize(name)
    candidates = [rule_id(number)] if number else [name] if ":" in name else []
    candidates += [glossary_id(name), article_id(name), card_id(name)]
    keys: list[NodeKey] = []
    for cid in dict.fromkeys(candidates):  # a term can be a glossary entry, an article and a card at once
        rows = [k for k in store.keys_with_id(cid)
                if (version is None or k.version == version) and (lang is None or k.lang == lang)]
        rows.sort(key=lambda k: k.version, reverse=True)
        if version is None:  # the newest version in each language
            rows = list({k.lang: k for k in reversed(rows)}.values())
        keys += rows
    if not keys:  # glossary aliases / English names
        keys += store.glossary_named(name, by_title=False)[:1]
    return keys


def label(store: Store, key: NodeKey) -> str:
    node = store.node(key)
    if node is None:
        return key.id
    return " ".join(x for x in (node.number, node.title) if x) or node.id


def links_of(store: Store, key: NodeKey) -> dict:
    refers_to = []
    for sr in store.refs_from(key):
        item: dict[str, object] = {"kind": sr.ref.kind, "target": sr.ref.target, "text": sr.ref.text}
        if sr.target_key:
            item["node"] = {"id": sr.target_key.id, "version": sr.target_key.version, "lang": sr.target_key.lang}
        refers_to.append(item)
    cited, seen = [], set()
    for sr in store.cited_by(key):
        if sr.source_key in seen:
            continue
        seen.add(sr.source_key)
        cited.append({"id": sr.source_key.id, "version": sr.source_key.version, "lang": sr.source_key.lang,
                      "kind": sr.ref.kind, "label": label(store, sr.source_key)})
    return {"id": key.id, "version": key.version, "lang": key.lang, "label": label(store, key),
            "refers_to": refers_to, "cited_by": cited}
