"""How the index is written: Whoosh's own codec (``W3Codec``) and segment format, written by one loop per term.

:class:`IndexCodec`:

- The postings of a term found in one document only (most rule numbers, rare words) are kept in the term
  table instead of a block of their own: Whoosh's inlining, which in Whoosh 2.7 calls a method its term info
  lacks (``set_inline`` for ``set_inlined``) and is therefore off by default.
- Posting blocks are not zlib-compressed (compressing them took a large share of the commit; the index of the
  English CR plus data/ grows from 4.5 to 5.5 MB).
- Field lengths are read once per field into a list: Whoosh reads the length column (and checks that its file
  exists) once per posting while it writes a segment, and once per scored document while it searches.

Segments record their codec (pickled with the table of contents), so these classes must stay importable here.
Reading is Whoosh's own: an index written with this codec reads like any other Whoosh 2.7 index.

:class:`BulkWriter`: Whoosh's ``SegmentWriter`` that writes the same segment files, byte for byte, as Whoosh's
own ``add_document`` and commit with this codec (``tests/test_search_codec.py`` compares them), at a fraction of
the cost:

- ``add_document`` takes the postings of a pre-analysed field straight from
  :meth:`kb.search.analysis.PreAnalysedPositions.postings` and an ``ID`` field's single term without running
  Whoosh's analyzer, without boosts (the index sets none);
- the postings are pooled per term (:class:`TermPool`: a term's postings in document order, appended as they come)
  instead of one tuple per posting sorted at the end; past the writer's ``limitmb`` the pool is spilled to a sorted
  run on disk, and the runs are merged term by term;
- the segment's terms and postings are written by :meth:`TermWriter.add_terms`, one term at a time (its blocks,
  its term info and its table entry computed from the term's posting lists), not one Whoosh call per posting.
"""

from __future__ import annotations

import hashlib
import heapq
import marshal
import operator
import zlib
from array import array
from collections.abc import Iterable, Iterator
from itertools import groupby
from pickle import dumps
from typing import Any

from whoosh.analysis import IDTokenizer
from whoosh.codec.whoosh3 import (
    LENGTHS_COLUMN,
    WHOOSH3_HEADER_MAGIC,
    W3Codec,
    W3FieldWriter,
    W3PerDocReader,
    W3PostingsWriter,
    W3TermInfo,
    _lenfield,
)
from whoosh.filedb.filetables import _lengths as _LENGTHS
from whoosh.formats import Existence
from whoosh.system import pack_int, pack_long, pack_ushort
from whoosh.util import random_name
from whoosh.util.numeric import byte_to_length, length_to_byte
from whoosh.writing import SegmentWriter

from kb.search.analysis import PreAnalysed, PreAnalysedPositions

POSTING_BYTES = 120  # the pool's memory estimate per posting (it spills to disk past the writer's ``limitmb``)
TERM_BYTES = 200  # … and per term it holds
_FREQUENCY = operator.itemgetter(1)  # of a (term, frequency, weight, value) posting
_TERM_STRUCT = W3TermInfo._struct  # Whoosh's term info: flags, weight, doc freq, min/max length, max weight, ids


class InliningPostingsWriter(W3PostingsWriter):
    """The postings writer of Whoosh's own path (a writer other than :class:`BulkWriter` with this codec): Whoosh's,
    with the inlining fixed. :meth:`TermWriter.add_terms` writes the same bytes."""

    _terminfo: Any  # Whoosh's attributes, set by its constructor and start_postings

    def finish_postings(self) -> Any:
        terminfo = self._terminfo
        # Only postings with values are inlined: Whoosh reads an inlined term without values back as "" (a str),
        # which its own segment merge then refuses.
        if not self.written() and len(self) < self._inlinelimit and len(self._values) == len(self._ids):
            terminfo.add_block(self)
            terminfo.set_inlined(self._ids, self._weights, self._values)
        else:  # Whoosh's own path: the postings go to the postings file
            if self._ids:
                self._write_block(last=True)
            terminfo.set_extent(self._startoffset, self._postfile.tell() - self._startoffset)
        self._terminfo = None
        return terminfo


def _md5_hash(key: bytes) -> int:
    """Whoosh's ``md5_hash`` (the low 32 bits of the key's MD5), without the hex round trip."""
    return int.from_bytes(hashlib.md5(key, usedforsecurity=False).digest()[12:], "big")


def _block_stats(ids: list[int], weights: list[float],
                 doc_lengths: list[int] | None) -> tuple[array, int | None, int, float]:
    """What Whoosh's postings writer records of one block: its weights as 32-bit floats, the shortest and longest
    field length of its documents (None and 0 without lengths; a length of 0 does not count) and its highest weight
    (0 when none is above 0)."""
    known = list(filter(None, map(doc_lengths.__getitem__, ids))) if doc_lengths is not None else None
    top = max(weights)
    return (array("f", weights), min(known) if known else None, max(known) if known else 0,
            top if top > 0 else 0)


def _encode_block(ids: list[int], floats: array, values: list[bytes], fixed: int | None, compression: int,
                  low: int | None, high: int, top: float, last: bool) -> bytes:
    """One block of postings as Whoosh's postings writer writes it: its length (negative for a term's last block),
    its statistics and its pickled data (document number deltas, weights, values)."""
    n = len(ids)
    weights = None if floats.count(1.0) == n else floats[0] if floats.count(floats[0]) == n else tuple(floats)
    kept = None if fixed == 0 else filter(None, values)  # Whoosh keeps only the values that are not empty
    data = dumps(((ids[0], *map(operator.sub, ids[1:], ids)), weights,
                  kept if kept is None else tuple(kept) if fixed is None or fixed < 0 else b"".join(kept)), 2)
    if compression:
        data = zlib.compress(data, compression)
    info = dumps((n, ids[-1], top, compression, length_to_byte(low), length_to_byte(high)), 2)
    size = len(info) + len(data)
    return pack_int(-size if last else size) + info + data


class TermWriter(W3FieldWriter):
    def add_terms(self, schema: Any, lengths: LengthListReader | None,
                  terms: Iterable[tuple[tuple[str, bytes], list]]) -> None:
        """Write each term of ``terms`` — ((field name, term as UTF-8), [docnum, weight, value, docnum, …]), in
        (field, term) order, each term's postings in document order — as Whoosh's ``add_postings`` with
        :class:`InliningPostingsWriter` would: blocks of ``blocklimit`` postings in the postings file (a term in one
        document with a value inlined in its term info instead), the term info in the term table (Whoosh's
        ``OrderedHashWriter``, its entries written here)."""
        codec = self._codec
        blocklimit, inlinelimit, compression = codec._blocklimit, codec._inlinelimit, codec._compression
        write, table = self._postfile.write, self._tindex
        table_file, buckets, positions = table.dbfile, table.buckets, table.index
        hashfn = _md5_hash if table.hashtype == 0 else table.hashfn
        offset, table_offset = self._postfile.tell(), table_file.tell()
        lastfield: str | None = None
        prefix, doc_lengths, fixed = b"", None, None
        for (fieldname, btext), postings in terms:
            if fieldname != lastfield:
                if lastfield is not None:
                    self.finish_field()
                self.start_field(fieldname, schema[fieldname])
                lastfield, prefix, fixed = fieldname, pack_ushort(self._fieldid), self._format.fixed_value_size()
                doc_lengths = lengths.quantised(fieldname) if lengths else None
            ids, weights, values = postings[0::3], postings[1::3], postings[2::3]
            count = len(ids)
            if count <= blocklimit:  # one block: nearly every term
                floats, min_length, max_length, max_weight = _block_stats(ids, weights, doc_lengths)
                total_weight: float = sum(floats)
                inlined = count < inlinelimit and all(values)
                if inlined:
                    tail = dumps((tuple(ids), tuple(floats), tuple(values)), 2)
                else:
                    block = WHOOSH3_HEADER_MAGIC + _encode_block(ids, floats, values, fixed, compression,
                                                                 min_length, max_length, max_weight, True)
            else:
                inlined, out = False, [WHOOSH3_HEADER_MAGIC]
                total_weight, min_length, max_length, max_weight = 0, None, 0, 0
                for start in range(0, count, blocklimit):
                    block_ids = ids[start:start + blocklimit]
                    floats, low, high, top = _block_stats(block_ids, weights[start:start + blocklimit], doc_lengths)
                    total_weight += sum(floats)  # Whoosh's term info, block by block
                    min_length = low if min_length is None else min(min_length, low)  # type: ignore[type-var]
                    max_length, max_weight = max(max_length, high), max(max_weight, top)
                    out.append(_encode_block(block_ids, floats, values[start:start + blocklimit], fixed, compression,
                                             low, high, top, start + blocklimit >= count))
                block = b"".join(out)
            if not inlined:
                write(block)
                tail = pack_long(offset) + pack_int(len(block))
                offset += len(block)
            key = prefix + btext
            value = _TERM_STRUCT.pack(inlined, total_weight, count,
                                      0 if min_length is None else length_to_byte(min_length),
                                      length_to_byte(max_length), max_weight, ids[0], ids[-1]) + tail
            if key <= table.lastkey:
                raise ValueError(f"Keys must increase: {table.lastkey!r}..{key!r}")
            entry = _LENGTHS.pack(len(key), len(value)) + key + value
            table_file.write(entry)
            positions.append(table_offset)
            h = hashfn(key)
            buckets[h & 255].append((h, table_offset))
            table_offset += len(entry)
            table.lastkey = key
        if lastfield is not None:
            self.finish_field()


class LengthListReader(W3PerDocReader):
    """Whoosh's per-document reader with each field's length column read once."""

    def __init__(self, storage: Any, segment: Any) -> None:
        super().__init__(storage, segment)
        self._length_lists: dict[str, list[int] | None] = {}

    def _length_bytes(self, fieldname: str) -> list[int] | None:
        try:
            return self._length_lists[fieldname]
        except KeyError:
            reader = self._cached_reader(_lenfield(fieldname), LENGTHS_COLUMN)
            lengths = self._length_lists[fieldname] = None if reader is None else list(reader)
            return lengths

    def doc_field_length(self, docnum: int, fieldname: str, default: int = 0) -> int | None:
        lengths = self._length_bytes(fieldname)
        if lengths is None:
            return default
        if docnum >= len(lengths):
            if docnum > self._doccount:
                raise IndexError(f"Asked for docnum {docnum!r} of {self._doccount}")
            return None
        lbyte = lengths[docnum]
        return byte_to_length(lbyte) if lbyte else None  # None for 0, as Whoosh does

    def quantised(self, fieldname: str) -> list[int] | None:
        """Each document's length of ``fieldname`` as :meth:`doc_field_length` gives it (0 for none), for every
        document of the segment; None when the field records no lengths."""
        lengths = self._length_bytes(fieldname)
        if lengths is None:
            return None
        return [byte_to_length(b) if b else 0 for b in lengths] + [0] * (self._doccount - len(lengths))


class IndexCodec(W3Codec):
    def __init__(self) -> None:
        super().__init__(compression=0, inlinelimit=2)

    def field_writer(self, storage: Any, segment: Any) -> TermWriter:
        return TermWriter(self, storage, segment)

    def postings_writer(self, dbfile: Any, byteids: bool = False) -> InliningPostingsWriter:
        return InliningPostingsWriter(dbfile, blocklimit=self._blocklimit, byteids=byteids,
                                      compression=self._compression, inlinelimit=self._inlinelimit)

    def per_document_reader(self, storage: Any, segment: Any) -> LengthListReader:
        return LengthListReader(storage, segment)


class TermPool:
    """The postings of the segment being written, per field and term: field → term as UTF-8 → [docnum, weight,
    value, …] in document order (documents are added, and segments merged in, in document order). Past ``limitmb``
    of estimated memory the terms go, sorted, to a run file in ``tempstore``; :meth:`terms` merges the runs term by
    term."""

    def __init__(self, tempstore: Any, limitmb: int) -> None:
        self._tempstore = tempstore
        self._limit = limitmb << 20
        self._size = 0
        self._fields: dict[str, dict[bytes, list]] = {}
        self._runs: list[str] = []

    def add_document(self, docnum: int, postings: list[tuple[str, list[tuple[bytes, int, float, bytes]]]]) -> None:
        """Add one document's postings: (field name, [(term, frequency, weight, value), …]) per field."""
        size = 0
        for name, items in postings:
            terms = self._fields.get(name)
            if terms is None:
                terms = self._fields[name] = {}
            get = terms.get
            size += POSTING_BYTES * len(items)
            for tbytes, _, weight, vbytes in items:
                found = get(tbytes)
                if found is None:
                    terms[tbytes] = [docnum, weight, vbytes]
                    size += TERM_BYTES
                else:
                    found += (docnum, weight, vbytes)
        self._grew(size)

    def add(self, item: tuple[str, bytes, int, float, bytes | None]) -> None:
        """Whoosh's pool interface, for the postings of a segment merged in: (field, term, docnum, weight, value)."""
        name, tbytes, docnum, weight, vbytes = item
        self.add_document(docnum, [(name, [(tbytes, 0, weight, vbytes or b"")])])

    def _grew(self, size: int) -> None:
        self._size += size
        if self._size > self._limit:
            self._save()

    def _sorted(self) -> Iterator[tuple[tuple[str, bytes], list]]:
        for name, terms in sorted(self._fields.items()):
            for tbytes in sorted(terms):
                yield (name, tbytes), terms[tbytes]

    def _save(self) -> None:
        name = f"{random_name()}.run"
        with self._tempstore.create_file(name).raw_file() as f:
            for item in self._sorted():
                marshal.dump(item, f)
        self._runs.append(name)
        self._fields, self._size = {}, 0

    def _read(self, name: str) -> Iterator[tuple[tuple[str, bytes], list]]:
        with self._tempstore.open_file(name).raw_file() as f:
            while True:
                try:
                    yield marshal.load(f)
                except EOFError:
                    return

    def terms(self) -> Iterator[tuple[tuple[str, bytes], list]]:
        """Every term with its postings, in (field, term) order."""
        if not self._runs:
            yield from self._sorted()
            return
        if self._fields:
            self._save()
        first = operator.itemgetter(0)
        for key, group in groupby(heapq.merge(*map(self._read, self._runs), key=first), key=first):
            postings: list = []
            for _, part in group:  # the runs in the order they were written: document order
                postings += part
            yield key, postings

    def cleanup(self) -> None:
        for name in self._runs:
            self._tempstore.delete_file(name)
        self._runs = []


def _postings(field: Any, value: Any) -> list[tuple[bytes, int, float, bytes]]:
    """(term as UTF-8, frequency, weight, value) of each term of a field's value, as Whoosh's ``field.index``."""
    if isinstance(value, PreAnalysed) and isinstance(field.format, PreAnalysedPositions):
        return field.format.postings(value)
    if type(field.format) is Existence and type(field.analyzer) is IDTokenizer and isinstance(value, str):
        return [(value.encode("utf-8"), 1, field.format.field_boost, b"")]  # the whole value, one term
    return list(field.index(value))


class BulkWriter(SegmentWriter):
    """``SegmentWriter(ix, limitmb=…, codec=IndexCodec())`` with the faster ``add_document`` and segment writing."""

    def __init__(self, ix: Any, **kwargs: Any) -> None:
        super().__init__(ix, **kwargs)
        if any(field.column_type for _, field in self.schema.items()) or not isinstance(self.fieldwriter, TermWriter):
            self.cancel()
            raise ValueError("BulkWriter writes with IndexCodec, and no column (sortable) fields")
        self.pool = TermPool(self._tempstorage, kwargs.get("limitmb", 128))

    def add_document(self, **fields: Any) -> None:
        self._check_state()
        schema, docnum, perdoc = self.schema, self.docnum, self.perdocwriter
        postings = []
        perdoc.start_doc(docnum)
        try:
            for name in sorted(fields):
                field = schema[name]
                value = fields[name]
                length = 0
                if field.indexed:
                    items = _postings(field, value)
                    postings.append((name, items))
                    if field.scorable:
                        length = sum(map(_FREQUENCY, items))
                perdoc.add_field(name, field, value if field.stored else None, length)
        except Exception:
            perdoc.cancel_doc()
            raise
        perdoc.finish_doc()
        self.pool.add_document(docnum, postings)
        self._added = True
        self.docnum += 1

    def _flush_segment(self) -> None:
        self.perdocwriter.close()
        lengths = self.per_document_reader() if self.codec.length_stats else None
        try:
            self.fieldwriter.add_terms(self.schema, lengths, self.pool.terms())
            self.fieldwriter.close()
        finally:
            if lengths:
                lengths.close()
