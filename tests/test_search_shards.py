"""The static search's shards patched as text (kb/site/search_shards.py): the splice of a gap-coded list, and a
shard read, edited and written again, give the bytes of decoding everything, merging and encoding it again."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from kb.site.search_shards import ShardText, records, script, splice


def _gap_code(by_doc: dict[int, list[int]], sizes: bool) -> list[int]:
    out, last = [], 0
    for doc in sorted(by_doc):
        out += [doc - last, *([len(by_doc[doc])] if sizes else []), *by_doc[doc]]
        last = doc
    return out


def _decode(coded: list[int], sizes: bool) -> dict[int, list[int]]:
    out, i, doc = {}, 0, 0
    while i < len(coded):
        doc += coded[i]
        end = i + 2 + (coded[i + 1] if sizes else 0)
        out[doc] = coded[i + 1 + sizes:end]
        i = end
    return out


def _absolute(by_doc: dict[int, list[int]], sizes: bool) -> list[int]:
    return [x for doc in sorted(by_doc) for x in (doc, *([len(by_doc[doc])] if sizes else []), *by_doc[doc])]


def _reference(old: list[int], sizes: bool, drop: set[int], new: dict[int, list[int]]) -> str:
    """Decode the whole list, merge, encode it again (what the export did before the splice)."""
    kept = {d: items for d, items in _decode(old, sizes).items() if d not in drop}
    return ",".join(map(str, _gap_code({**kept, **new}, sizes)))


docs = st.sets(st.integers(0, 3000), max_size=60)
weight = st.lists(st.integers(0, 10**6), min_size=1, max_size=1)
places = st.lists(st.integers(0, 5000), min_size=1, max_size=4)


@settings(max_examples=400, deadline=None)
@given(st.data(), st.booleans())
def test_the_splice_equals_decode_merge_encode(data, sizes):
    items = places if sizes else weight
    old_docs = data.draw(docs)
    old = {d: data.draw(items) for d in old_docs}
    changed = data.draw(st.sets(st.one_of(st.sampled_from(sorted(old_docs) or [0]), st.integers(0, 3100)), max_size=70))
    new = {d: data.draw(items) for d in sorted(changed) if data.draw(st.booleans())}
    coded = _gap_code(old, sizes)
    spliced = splice(",".join(map(str, coded)), sizes, sorted(changed),
                     records(_absolute(new, sizes), sizes))
    assert spliced == _reference(coded, sizes, changed, new)


keys = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=6)
lists = st.lists(st.integers(0, 99), min_size=1, max_size=5)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(keys, lists, max_size=12), st.dictionaries(keys, st.one_of(st.just([]), lists), max_size=6))
def test_a_shard_edited_as_text_is_the_shard_written_again(table, edits):
    """Keys with quotes, backslashes, tabs and control characters; keys added, changed and removed."""
    text = script("p/3", dict(sorted(table.items())))
    shard = ShardText("p/3", text)
    assert shard.render() == text  # read and written back unchanged
    for key, value in table.items():
        assert shard.get(key) == ",".join(map(str, value))
    for key, value in edits.items():
        shard.put(key, ",".join(map(str, value)))
    merged = {k: v for k, v in {**table, **edits}.items() if v}
    assert shard.render() == script("p/3", dict(sorted(merged.items())))
    assert json.loads(shard.render()[len('window.__kbSearch("p/3",'):-3]) == dict(sorted(merged.items()))


def test_a_shard_out_of_order_or_missing_is_read_as_its_data():
    unsorted = 'window.__kbSearch("g/0",{"b":[1,2],"a":[3,4]});\n'
    shard = ShardText("g/0", unsorted)
    assert (shard.get("a"), shard.get("b"), shard.get("c")) == ("3,4", "1,2", "")
    assert shard.render() == script("g/0", {"a": [3, 4], "b": [1, 2]})
    empty = ShardText("g/1", None)
    empty.put("x", "5,6")
    assert empty.render() == script("g/1", {"x": [5, 6]})
    empty.put("x", "")
    assert empty.render() == script("g/1", {})
