"""How the index is written: Whoosh's own codec (``W3Codec``) and writer, made cheaper to write.

:class:`IndexCodec`:

- The postings of a term found in one document only (most rule numbers, rare words) are kept in the term
  table instead of a block of their own: Whoosh's inlining, which in Whoosh 2.7 calls a method its term info
  lacks (``set_inline`` for ``set_inlined``) and is therefore off by default.
- Posting blocks are not zlib-compressed (compressing them took a large share of the commit; the index of the
  English CR plus data/ grows from 4.5 to 5.5 MB).
- Postings go from the pool's sorted run to the postings writer without Whoosh's per-posting order checks and
  type assertions.
- Field lengths are read once per field into a list: Whoosh reads the length column (and checks that its file
  exists) once per posting while it writes a segment, and once per scored document while it searches.

Segments record their codec (pickled with the table of contents), so these classes must stay importable here.
Reading is Whoosh's own: an index written with this codec reads like any other Whoosh 2.7 index.

:class:`BulkWriter`: Whoosh's ``SegmentWriter`` whose ``add_document`` takes the postings of a pre-analysed
field straight from :meth:`kb.search.analysis.PreAnalysedPositions.postings` and hands a document's postings to the
pool in one go, without Whoosh's per-posting checks and memory estimate and without boosts (the index sets none).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from whoosh.codec.whoosh3 import LENGTHS_COLUMN, W3Codec, W3FieldWriter, W3PerDocReader, W3PostingsWriter, _lenfield
from whoosh.util.numeric import byte_to_length
from whoosh.writing import SegmentWriter

from kb.search.analysis import PreAnalysed, PreAnalysedPositions

POSTING_BYTES = 200  # the pool's memory estimate per posting (it spills to disk past the writer's ``limitmb``)


class InliningPostingsWriter(W3PostingsWriter):
    _maxweight: float  # Whoosh's attributes, set by its constructor and block writer
    _minlength: int | None
    _maxlength: int
    _terminfo: Any

    def add_posting(self, id_: int, weight: float, vbytes: bytes, length: int | None = None) -> None:
        """Whoosh's, without its type assertions (postings come from the writer's own pool)."""
        if len(self._ids) >= self._blocklimit:
            self._write_block()
        self._ids.append(id_)
        self._weights.append(weight)
        if weight > self._maxweight:
            self._maxweight = weight
        if vbytes:
            self._values.append(vbytes)
        if length:
            if self._minlength is None or length < self._minlength:
                self._minlength = length
            if length > self._maxlength:
                self._maxlength = length

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


class PlainFieldWriter(W3FieldWriter):
    def add_postings(self, schema: Any, lengths: Any, items: Iterable[tuple[str, bytes, int, float, bytes]]) -> None:
        """Whoosh's loop over the pool's sorted postings, without its order checks (the pool sorts them) and its
        spelling-word case (the index has no spelling fields), handing each posting straight to the postings
        writer."""
        field_length = lengths.doc_field_length if lengths else (lambda docnum, fieldname: 0)
        lastfield: str | None = None
        lasttext: bytes | None = None
        add_posting: Any = None
        for fieldname, btext, docnum, weight, value in items:
            if fieldname != lastfield:
                if lasttext is not None:
                    self.finish_term()
                if lastfield is not None:
                    self.finish_field()
                self.start_field(fieldname, schema[fieldname])
                lastfield, lasttext = fieldname, None
            if btext != lasttext:
                if lasttext is not None:
                    self.finish_term()
                self.start_term(btext)
                lasttext, add_posting = btext, self._postwriter.add_posting
            add_posting(docnum, weight, value or b"", field_length(docnum, fieldname))
        if lasttext is not None:
            self.finish_term()


class LengthListReader(W3PerDocReader):
    """Whoosh's per-document reader with each field's length column read once."""

    def __init__(self, storage: Any, segment: Any) -> None:
        super().__init__(storage, segment)
        self._length_lists: dict[str, list[int] | None] = {}

    def doc_field_length(self, docnum: int, fieldname: str, default: int = 0) -> int | None:
        try:
            lengths = self._length_lists[fieldname]
        except KeyError:
            reader = self._cached_reader(_lenfield(fieldname), LENGTHS_COLUMN)
            lengths = self._length_lists[fieldname] = None if reader is None else list(reader)
        if lengths is None:
            return default
        if docnum >= len(lengths):
            if docnum > self._doccount:
                raise IndexError(f"Asked for docnum {docnum!r} of {self._doccount}")
            return None
        lbyte = lengths[docnum]
        return byte_to_length(lbyte) if lbyte else None  # None for 0, as Whoosh does


class IndexCodec(W3Codec):
    def __init__(self) -> None:
        super().__init__(compression=0, inlinelimit=2)

    def field_writer(self, storage: Any, segment: Any) -> PlainFieldWriter:
        return PlainFieldWriter(self, storage, segment)

    def postings_writer(self, dbfile: Any, byteids: bool = False) -> InliningPostingsWriter:
        return InliningPostingsWriter(dbfile, blocklimit=self._blocklimit, byteids=byteids,
                                      compression=self._compression, inlinelimit=self._inlinelimit)

    def per_document_reader(self, storage: Any, segment: Any) -> LengthListReader:
        return LengthListReader(storage, segment)


class BulkWriter(SegmentWriter):
    """``SegmentWriter(ix, limitmb=…, codec=…)`` with the faster ``add_document``."""

    def __init__(self, ix: Any, **kwargs: Any) -> None:
        super().__init__(ix, **kwargs)
        if any(field.column_type for _, field in self.schema.items()):
            self.cancel()
            raise ValueError("BulkWriter does not write column (sortable) fields")

    def add_document(self, **fields: Any) -> None:
        self._check_state()
        schema, docnum, perdoc = self.schema, self.docnum, self.perdocwriter
        postings: list[tuple] = []
        perdoc.start_doc(docnum)
        try:
            for name in sorted(fields):
                field = schema[name]
                value = fields[name]
                length = 0
                if field.indexed:
                    if isinstance(value, PreAnalysed) and isinstance(field.format, PreAnalysedPositions):
                        items = field.format.postings(value)
                    else:
                        items = field.index(value)
                    for tbytes, freq, weight, vbytes in items:
                        postings.append((name, tbytes, docnum, weight, vbytes))
                        length += freq
                    self.pool.fieldnames.add(name)
                perdoc.add_field(name, field, value if field.stored else None, length if field.scorable else 0)
        except Exception:
            perdoc.cancel_doc()
            raise
        perdoc.finish_doc()
        pool = self.pool
        pool.current.extend(postings)
        pool.currentsize += POSTING_BYTES * len(postings)
        if pool.currentsize > pool.limit:
            pool.save()
        self._added = True
        self.docnum += 1
