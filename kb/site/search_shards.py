"""The static search's shard files as text, and the patch of their gap-coded lists in place.

A shard file is ``window.__kbSearch("<name>", <json>)`` (:func:`script`); the ``p/``, ``g/`` and ``q/`` shards hold a
JSON object of keys in sorted order, each mapped to a list of ints made of records that each begin with a document
id written as the gap from the previous record's (:mod:`kb.site.search_export`, :mod:`kb.site.search_phrases`).

A compaction of the delta (:mod:`kb.site.search_delta`) changes the records of a few documents in such a list.
:class:`ShardText` reads a shard's keys and keeps each value as its text (no int is decoded, and an unchanged value
is written back as it was read); :func:`splice` drops the records of the changed documents from a value's items and
inserts their new records, re-coding only the gap after each place it changes and copying the rest: it gives the
bytes that decoding the whole list, merging and encoding it again gives (``json.dumps`` with compact separators,
keys sorted). :func:`patched_shards` makes the changed shards of the ``p/``, ``g/`` and ``q/`` tables so (a
compaction), or whole in a first build."""

from __future__ import annotations

import json
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from itertools import accumulate
from operator import lt, sub


def script(name: str, data: object) -> str:
    """The file of shard ``name`` holding ``data``."""
    body = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f'window.__kbSearch("{name}",{body});\n'


def initial_shard(key: str) -> str:
    """The shard of ``key`` in the tables split by first character (``n/``, ``r/``): that character's code point in
    hex (as ``site.js`` names the shard it loads)."""
    return f"{ord(key[0]):x}"


def payload(name: str, text: str) -> str:
    """The JSON of the shard file ``text`` of shard ``name`` (what :func:`script` wrapped)."""
    return text[len(f'window.__kbSearch("{name}",'):].rstrip().removesuffix(");")


def read_shard(read_old: Callable[[str], str | None], name: str) -> dict:
    """The data of the previous build's shard ``name`` (``{}`` when there is none)."""
    text = read_old(f"search/{name}.js")
    return json.loads(payload(name, text)) if text else {}


class ShardText:
    """A shard of keys → int lists, each value kept as the text of its items (``"3,1,4"``), keys in sorted order."""

    def __init__(self, name: str, text: str | None):
        """``text``: the shard file (None or empty: a shard without keys)."""
        self.name = name
        self.keys: list[str] = []  # sorted
        self.coded: list[str] = []  # each key as JSON writes it, without its quotes
        self.values: list[str] = []
        data = payload(name, text) if text else "{}"
        body = data[1:-1]
        if not body:
            return
        parts = (body + ",").split('"')  # '', key, ':[items],', key, ':[items],', …: a key holds no quote unescaped
        coded = parts[1::2]
        keys = json.loads('["' + '","'.join(coded) + '"]') if '\\"' not in body else None
        if keys is not None and all(map(lt, keys, keys[1:])):  # in order (as every build writes them)
            self.keys, self.coded, self.values = keys, coded, [v[2:-2] for v in parts[2::2]]
            return
        items = sorted(json.loads(data).items())  # a key with a quote, or not in order: decoded whole
        self.keys = [k for k, _ in items]
        self.coded = [json.dumps(k, ensure_ascii=False)[1:-1] for k in self.keys]
        self.values = [",".join(map(str, v)) for _, v in items]

    def get(self, key: str) -> str:
        """The items of ``key``'s list (``""`` when it has none)."""
        i = bisect_left(self.keys, key)
        return self.values[i] if i < len(self.keys) and self.keys[i] == key else ""

    def put(self, key: str, items: str) -> None:
        """Set ``key``'s list to ``items`` (``""``: remove the key)."""
        i = bisect_left(self.keys, key)
        if i < len(self.keys) and self.keys[i] == key:
            if items:
                self.values[i] = items
            else:
                del self.keys[i], self.coded[i], self.values[i]
        elif items:
            self.keys.insert(i, key)
            self.coded.insert(i, json.dumps(key, ensure_ascii=False)[1:-1])
            self.values.insert(i, items)

    def render(self) -> str:
        """The shard file, as :func:`script` writes the same data."""
        body = ",".join(map('"{}":[{}]'.format, self.coded, self.values))
        return f'window.__kbSearch("{self.name}",{{{body}}});\n'


def records(flat: Sequence[int], sizes: bool) -> list[tuple[int, tuple[int, ...]]]:
    """``[doc, item…]…`` with absolute doc ids as ``(doc, the items after it)``: ``[doc, weight]`` pairs, or
    (``sizes``) ``[doc, n, n places]`` records."""
    out, i = [], 0
    while i < len(flat):
        end = i + 2 + (flat[i + 1] if sizes else 0)
        out.append((flat[i], tuple(flat[i + 1:end])))
        i = end
    return out


def splice(items: str, sizes: bool, drop: Sequence[int], new: list[tuple[int, tuple[int, ...]]]) -> str:
    """The items of a gap-coded list (``"gap,…"``; records of two items, or of ``[gap, n, n places]`` when
    ``sizes``) without the records of the documents in ``drop`` (ascending) and with those of ``new`` (ascending
    ``(doc, items after the doc)``, no doc kept from the old list)."""
    parts = items.split(",") if items else []
    if sizes:  # where each record starts, up to the first beyond every changed document: the rest is copied
        ints = json.loads(f"[{items}]")
        top = max(drop[-1] if drop else -1, new[-1][0] if new else -1)
        found: list[int] = []
        docs: list[int] = []
        i, doc, end = 0, 0, len(ints)
        while i < end:
            doc += ints[i]
            found.append(i)
            docs.append(doc)
            if doc > top:
                break
            i += 2 + ints[i + 1]
        starts: Sequence[int] = found
    else:
        starts = range(0, len(parts), 2)
        docs = list(accumulate(map(int, parts[0::2])))
    n = len(docs)
    if len(drop) * 8 < n:
        gone = [p for d in drop if (p := bisect_left(docs, d)) < n and docs[p] == d]
    else:
        dropped = set(drop)
        gone = [p for p, d in enumerate(docs) if d in dropped]
    events = sorted([(p, 1, docs[p], ()) for p in gone] + [(bisect_left(docs, d), 0, d, rest) for d, rest in new])
    out: list[str] = []
    last = k = 0  # the last doc written; the next old record to copy
    for pos, removal, doc, rest in events:
        if pos > k:  # old records k … pos - 1: the first one's gap re-coded, the rest as they were
            out.append(str(docs[k] - last))
            out += parts[starts[k] + 1:starts[pos] if pos < n else len(parts)]
            last, k = docs[pos - 1], pos
        if removal:
            k = pos + 1
        else:
            out.append(str(doc - last))
            out += map(str, rest)
            last = doc
    if k < n:
        out.append(str(docs[k] - last))
        out += parts[starts[k] + 1:]
    return ",".join(out)


def patched_shards(prefix: str, new: Mapping[str, Sequence[int]], old: Mapping[str, Sequence[int]], count: int,
                   shard_of: Callable[[str], int], sizes: bool, drop: Sequence[int],
                   read_old: Callable[[str], str | None] | None) -> dict[str, str]:
    """The ``<prefix>/<i>`` shards (name → file) whose lists changed, a key in shard ``shard_of(key) % count``:
    ``new`` (key → the records of the new and changed documents, absolute doc ids ascending; records of
    ``[doc, weight]``, or ``[doc, n, n items]`` when ``sizes``) replacing ``old`` (the same documents' previous
    records) and the records of the documents ``drop`` (ascending) in the previous build's shard (``read_old(path)``,
    patched as text: :func:`splice`). ``read_old`` None: a first build, every shard made from ``new`` alone."""
    new_parts, old_parts = _by_shard(new, count, shard_of), _by_shard(old, count, shard_of)
    out = {}
    for shard in new_parts.keys() | old_parts.keys():
        part, was = new_parts.get(shard, {}), old_parts.get(shard, {})
        if part == was:  # the changed documents' records are as they were
            continue
        name = f"{prefix}/{shard}"
        if read_old is None:
            out[name] = script(name, {key: gap_coded(part[key], sizes) for key in sorted(part)})
            continue
        coded = ShardText(name, read_old(f"search/{name}.js"))  # only a changed document's keys hold its records
        for key in part.keys() | was.keys():
            coded.put(key, splice(coded.get(key), sizes, drop, records(part.get(key, ()), sizes)))
        out[name] = coded.render()
    return out


def _by_shard(table: Mapping[str, Sequence[int]], count: int, shard_of: Callable[[str], int]
              ) -> dict[int, dict[str, Sequence[int]]]:
    parts: dict[int, dict[str, Sequence[int]]] = defaultdict(dict)
    for key, items in table.items():
        parts[shard_of(key) % count][key] = items
    return parts


def gap_coded(flat: Sequence[int], sizes: bool) -> list[int]:
    """Records with absolute doc ids, ascending (``[doc, weight]…``, or ``[doc, n, n items]…`` when ``sizes``), with
    each doc written as the gap from the previous record's (shorter numbers)."""
    out = list(flat)
    if not sizes:
        docs = out[0::2]
        out[0::2] = map(sub, docs, [0, *docs[:-1]])
        return out
    i, last = 0, 0
    while i < len(out):
        doc = out[i]
        out[i] -= last
        last = doc
        i += 2 + out[i + 1]
    return out
