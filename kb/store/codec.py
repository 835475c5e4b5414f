"""The store's one codec: how a node and a reference become stored values and come back.

A node is encoded once, by :func:`encode_node`, into its *fields* (a JSON-ready dict); from the fields come the three
stored forms: a source's contribution (:func:`payload`, the JSON of the fields), the merged node's row
(:func:`node_row`, its references apart as :func:`ref_row`\\ s) and its content hash (:func:`node_hash`). Every
stored form decodes through :func:`decode_node`: a contribution's JSON as it is, a node row through
:func:`row_fields`. Column lists for reading are here too (:func:`node_columns`, :data:`REF_COLUMNS`), so the order
of the values a decoder takes is defined next to it.
"""

from __future__ import annotations

import hashlib
import json
import json.scanner
from collections.abc import Sequence
from typing import Any

from kb.model import Node, Ref
from kb.store.records import NodeKey, StoredRef

_PAYLOAD_ENCODER = json.JSONEncoder(ensure_ascii=False)  # json.dumps(…, ensure_ascii=False), made once

NODE_COLUMNS = ("version", "lang", "id", "kind", "number", "title", "text", "parent", "ord", "examples", "aliases",
                "english", "html", "meta")  # what row_fields reads, in its order
REF_COLUMNS = ("version, lang, node_id, seq, kind, target, text, start, end_, cited_version, resolved_version,"
               " resolved_lang, resolved_id")  # what stored_ref reads, in its order


def encode_ref(ref: Ref) -> list[Any]:
    """A reference's stored values: [kind, target, text, start, end, cited version] (``Ref(*values)`` decodes)."""
    return [ref.kind, ref.target, ref.text, ref.start, ref.end, ref.version]


def encode_node(node: Node) -> dict[str, Any]:
    """The fields of a node as stored (its key — version, language, id — is stored beside them)."""
    return {"kind": node.kind, "number": node.number, "title": node.title, "text": node.text, "parent": node.parent,
            "order": node.order, "examples": list(node.examples), "aliases": list(node.aliases),
            "english": node.english, "html": node.html, "meta": node.meta,
            "refs": [encode_ref(r) for r in node.refs]}


def payload(fields: dict[str, Any]) -> str:
    """A node's fields as one source gave them: the JSON stored in ``contributions.node``."""
    return _PAYLOAD_ENCODER.encode(fields)


def node_hash_of(fields: dict[str, Any]) -> str:
    """The content hash of a node's fields: every field but its order (a node moved keeps its hash)."""
    hashed = [value for name, value in fields.items() if name != "order"]
    return hashlib.sha256(json.dumps(hashed, ensure_ascii=False, sort_keys=True, default=list).encode()).hexdigest()[:20]


def node_hash(node: Node) -> str:
    """The content hash of a node (see :func:`node_hash_of`)."""
    return node_hash_of(encode_node(node))


def node_row(key: NodeKey, doc_id: int, fields: dict[str, Any], digest: str) -> tuple[Any, ...]:
    """The ``nodes`` row of a merged node (its references are :func:`ref_row`\\ s)."""
    return (key.version, key.lang, key.id, doc_id, fields["kind"], fields["number"], fields["title"], fields["text"],
            fields["parent"], fields["order"], _dump(fields["examples"]), _dump(fields["aliases"]), fields["english"],
            fields["html"], _dump(fields["meta"]), digest)


def ref_row(key: NodeKey, seq: int, ref: Ref, target: NodeKey | None = None) -> tuple[Any, ...]:
    """The ``refs`` row of the ``seq``-th reference of the node ``key``, resolved to ``target`` (None: not)."""
    resolved = (target.version, target.lang, target.id) if target else (None, None, None)
    return (key.version, key.lang, key.id, seq, *encode_ref(ref), *resolved)


def node_columns(table: str = "", *, html: bool = True) -> str:
    """The columns :func:`row_fields` reads, of ``table`` (an alias) when given; without ``html``, NULL for it (a
    light read: the HTML of wiki pages is most of their size)."""
    prefix = f"{table}." if table else ""
    return ", ".join("NULL" if name == "html" and not html else prefix + name for name in NODE_COLUMNS)


def row_fields(row: Sequence[Any], refs: Sequence[Sequence[Any]] = ()) -> tuple[NodeKey, dict[str, Any]]:
    """The key and fields of a row of :func:`node_columns`, with its references' :func:`encode_ref` values."""
    version, lang, id_, kind, number, title, text, parent, order, examples, aliases, english, html, meta = row
    return NodeKey(version, lang, id_), {
        "kind": kind, "number": number, "title": title, "text": text, "parent": parent, "order": order,
        "examples": _load_list(examples), "aliases": _load_list(aliases), "english": english, "html": html,
        "meta": {} if meta == "{}" else _load(meta), "refs": refs}


def node_from_row(row: Sequence[Any], refs: Sequence[Sequence[Any]] = ()) -> Node:
    """The node of a row of :func:`node_columns`, with its references' :func:`encode_ref` values: what
    ``decode_node(*row_fields(row, refs))`` gives, made in one step (a read decodes tens of thousands of rows)."""
    version, lang, id_, kind, number, title, text, parent, order, examples, aliases, english, html, meta = row
    return Node(id_, kind, lang, version, text, number, title, parent, order,
                () if examples == "[]" else tuple(_load(examples)), tuple(Ref(*r) for r in refs) if refs else (),
                () if aliases == "[]" else tuple(_load(aliases)), english, html, {} if meta == "{}" else _load(meta))


def decode_node(key: NodeKey, fields: dict[str, Any]) -> Node:
    """The node of ``key`` with these fields (from :func:`row_fields`, or a contribution's JSON)."""
    return Node(id=key.id, kind=fields["kind"], lang=key.lang, version=key.version, text=fields["text"],
                number=fields["number"], title=fields["title"], parent=fields["parent"], order=fields["order"],
                examples=tuple(fields["examples"]), refs=tuple(Ref(*r) for r in fields["refs"]),
                aliases=tuple(fields["aliases"]), english=fields["english"], html=fields["html"], meta=fields["meta"])


def decode_payload(key: NodeKey, stored: str) -> Node:
    """The node a contribution stores (see :func:`payload`)."""
    return decode_node(key, json.loads(stored))


def stored_ref(row: Sequence[Any]) -> StoredRef:
    """The stored reference of a row of :data:`REF_COLUMNS`."""
    target = NodeKey(row[10], row[11], row[12]) if row[12] is not None else None
    return StoredRef(NodeKey(row[0], row[1], row[2]), row[3], Ref(*row[4:10]), target)


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _load_list(stored: str) -> list[Any]:
    return [] if stored == "[]" else _load(stored)  # most nodes have none: no parse


# json.loads' parser (in C), without its two Python frames (typeshed types its argument as a scanner: it is a decoder)
_SCAN = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]


def _load(stored: str) -> Any:
    """``json.loads(stored)``, in one call into its parser when ``stored`` is one JSON value and nothing else, as this
    codec writes them (a node read decodes thousands: every article's metadata); anything else through json.loads,
    which gives the same value or its error."""
    try:
        value, end = _SCAN(stored, 0)
    except StopIteration:  # not a value where it starts (the parser's signal): json.loads says what is wrong
        return json.loads(stored)
    return value if end == len(stored) else json.loads(stored)
