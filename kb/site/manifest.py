"""The records a build leaves in ``<out>/.kb-build/`` for the next one: the manifest (each file's hash, links and ids;
the search export's state; the page groups; the sitemap's key), the stamp (the inputs fingerprint, the file list
and the report: all a build with nothing to do reads) and the name table with what it was made from (the next build
takes it as it is when that is unchanged: :func:`kb.site.gather.gather_site`). All are marshal data (loaded and
dumped many times faster than JSON) tagged with :data:`MANIFEST_FORMAT`; a record of another format reads as empty
(a full build).

The manifest's file records are kept apart, by path, in a keyed file (:data:`FILE_RECORDS`,
:mod:`kb.store.keyed`): a build reads the records it asks for (:class:`StoredFiles`; a full build all of them, an
edit build those of the pages it makes again and the files they link to) and writes the records that changed
(:func:`record_changes`), through its journal (:mod:`kb.site.output`), so the records always describe the site
beside them. A build after one article changed at 20,000 articles reads and writes a few hundred records, not the
149,000 (75 MB) it read whole before.
"""

from __future__ import annotations

import marshal
from abc import abstractmethod
from collections.abc import Iterator, Mapping, MutableMapping
from pathlib import Path
from typing import Any

from kb.store.keyed import KeyedFile

MANIFEST = ".kb-build/manifest.marshal"
FILE_RECORDS = ".kb-build/files.sqlite"  # the manifest's file records, by path (kb.store.keyed)
STAMP = ".kb-build/stamp.marshal"
NAMES = ".kb-build/names.marshal"  # the name table and what it was made from (kb.site.gather._names)
MANIFEST_FORMAT = 9  # 6: a page's deferred part (kb.site.page.Deferred) recorded by its source and lookups;
# 7: the static search's analyses kept marshalled; 8: the file records apart, as a base and a delta; 9: the file
# records by path in a keyed file, the stamp without the file list

FileRecord = dict[str, Any]  # {"hash": str, "links": marshalled list[str], "ids": marshalled list[str]}, and for a
# page with a deferred part "source": str, "lookups": marshalled list (the keys its making looked up), "answers": str
# (their answers' digest, kb.site.fingerprint.answers_digest)


def file_record(digest: str, links: list[str] | None = None, ids: list[str] | None = None,
                deferred: tuple[str, list[Any], str] | None = None) -> FileRecord:
    """A file's record in the manifest: its hash, and the links and ids it contains, each kept marshalled (thousands
    of short lists load much more slowly than as many strings; a link check reads back only the files it looks at);
    for a page with a deferred part, that part's source, the keys its making looked up and their answers' digest
    (``deferred``), with which the next build hashes the page without making the part."""
    record = {"hash": digest, "links": marshal.dumps(links or []), "ids": marshal.dumps(ids or [])}
    if deferred is not None:
        record["source"], record["lookups"], record["answers"] = deferred[0], marshal.dumps(deferred[1]), deferred[2]
    return record


def load_record(out: Path, name: str) -> dict[str, Any]:
    """The record ``name`` (:data:`MANIFEST`, :data:`STAMP` or :data:`NAMES`) of the site in ``out``; empty when it is missing,
    damaged or of another format."""
    try:
        data = marshal.loads((out / name).read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        return {}
    return data if isinstance(data, dict) and data.get("format") == MANIFEST_FORMAT else {}


def load_manifest(out: Path) -> dict[str, Any]:
    """The previous build's manifest (empty when there is none or its file records are missing), its file records
    under ``"files"`` (:class:`StoredFiles`, read as asked for)."""
    manifest = load_record(out, MANIFEST)
    stored = KeyedFile.open(out / FILE_RECORDS, str(MANIFEST_FORMAT)) if manifest else None
    if stored is None:
        return {}
    return {**manifest, "files": StoredFiles(stored)}


class _Records(Mapping[str, FileRecord]):
    """File records read through :meth:`get` (None: no record of that file)."""

    @abstractmethod
    def get(self, rel: str, default: Any = None) -> Any:
        """The record of ``rel``, else ``default``."""

    def __getitem__(self, rel: str) -> FileRecord:
        found = self.get(rel)
        if found is None:
            raise KeyError(rel)
        return found

    def __contains__(self, rel: object) -> bool:
        return isinstance(rel, str) and self.get(rel) is not None


class StoredFiles(_Records):
    """The previous build's file records, each read from the keyed file when first asked for and then kept, so
    a record asked for twice is the same object (:func:`kb.site.linkcheck.check_links` tells a kept file by it).
    :meth:`keys` reads every path once; iterating reads every record (a full build's)."""

    def __init__(self, stored: KeyedFile):
        self._stored = stored
        self._records: dict[str, FileRecord | None] = {}
        self._keys: frozenset[str] | None = None
        self._whole = False

    def get(self, rel: str, default: Any = None) -> Any:
        if rel in self._records:
            found = self._records[rel]
        elif self._whole or (self._keys is not None and rel not in self._keys):
            return default
        else:
            data = self._stored.get(rel)
            found = self._records[rel] = None if data is None else marshal.loads(data)
        return default if found is None else found

    def keys(self) -> frozenset[str]:  # type: ignore[override]
        if self._keys is None:
            self._keys = frozenset(self._records) if self._whole else frozenset(self._stored.keys())
        return self._keys

    def __iter__(self) -> Iterator[str]:
        self.read_whole()
        return iter(self._records)

    def paths_under(self, folder: str) -> list[str]:
        """The paths of the records under ``folder`` (ending with ``/``), in order."""
        if self._whole:
            return sorted(rel for rel in self._records if rel.startswith(folder))
        return self._stored.keys(folder)

    def __len__(self) -> int:
        return len(self.keys())

    def linking(self, needles: list[bytes]) -> list[str]:
        """The paths of the records whose links hold one of ``needles`` (a target's path, as bytes), in order: those
        not read yet found by a scan of the keyed file."""
        if self._whole:
            return sorted(rel for rel, record in self._records.items() if record and _links_any(record, needles))
        return self._stored.keys_containing(needles)

    def read_whole(self) -> None:
        """Read every record now (a full build asks for nearly all: one read is cheaper than one each)."""
        if not self._whole:
            records = self._records
            for rel, data in self._stored.items():
                if records.get(rel) is None:
                    records[rel] = marshal.loads(data)
            self._records = {rel: record for rel, record in records.items() if record is not None}
            self._whole = True
            self.close()

    def close(self) -> None:
        self._stored.close()


class EditedFiles(_Records, MutableMapping[str, FileRecord]):
    """An edit build's file records: the previous build's (``old``) with the changes it makes (a record, or None
    for a file removed), so that a kept file's record is read only when asked for."""

    def __init__(self, old: Mapping[str, FileRecord]):
        self.old = old
        self.changes: dict[str, FileRecord | None] = {}

    def get(self, rel: str, default: Any = None) -> Any:
        found = self.changes[rel] if rel in self.changes else self.old.get(rel)
        return default if found is None else found

    def __setitem__(self, rel: str, record: FileRecord) -> None:
        self.changes[rel] = record

    def __delitem__(self, rel: str) -> None:
        if rel not in self:
            raise KeyError(rel)
        self.changes[rel] = None

    def __iter__(self) -> Iterator[str]:
        added = [rel for rel, record in self.changes.items() if record is not None and rel not in self.old]
        return iter([*(rel for rel in self.old if self.changes.get(rel, True) is not None), *added])

    def __len__(self) -> int:
        return sum(1 for _ in self)


def linking(records: Mapping[str, FileRecord], needles: list[bytes]) -> list[str]:
    """The paths of ``records`` whose links hold one of ``needles`` (a target's path, as bytes), in order: what may
    link those targets (:func:`kb.site.linkcheck.check_links`)."""
    if isinstance(records, StoredFiles):
        return records.linking(needles)
    return sorted(rel for rel, record in records.items() if _links_any(record, needles))


def _links_any(record: FileRecord, needles: list[bytes]) -> bool:
    return any(needle in record["links"] for needle in needles)


def removed_since(old: Mapping[str, FileRecord], files: Mapping[str, FileRecord]) -> list[str]:
    """The files of the previous build's records (``old``) that ``files`` no longer have, in order."""
    if isinstance(files, EditedFiles) and files.old is old:
        return sorted(rel for rel, record in files.changes.items() if record is None and rel in old)
    return sorted(old.keys() - files.keys())


def record_changes(old: Mapping[str, FileRecord], files: Mapping[str, FileRecord]) -> dict[str, bytes | None]:
    """The changes from the previous build's file records (``old``) to this build's (``files``), as the keyed file
    takes them: each new or changed record marshalled, None for a file gone."""
    if isinstance(files, EditedFiles):  # (what it set: a record kept as it was is dropped below)
        changed = dict(files.changes)
    else:
        changed = dict(files.items())
        changed.update((rel, None) for rel in old.keys() - files.keys())
    return {rel: None if record is None else marshal.dumps(record)
            for rel, record in changed.items() if (was := old.get(rel)) is not record and was != record}
