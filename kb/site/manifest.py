"""The records a build leaves in ``<out>/.kb-build/`` for the next one: the manifest (each file's hash, links and ids;
the search export's state; the page groups; the sitemap's key), the stamp (the inputs fingerprint, the file list
and the report: all a build with nothing to do reads) and the name table with what it was made from (the next build
takes it as it is when that is unchanged: :func:`kb.site.gather.gather_site`). All are marshal data (loaded and
dumped many times faster than JSON) tagged with :data:`MANIFEST_FORMAT`; a record of another format reads as empty
(a full build).

The manifest's file records are a base and a delta: the base (:data:`FILES`) holds every file's record as some build
left it, the delta (:data:`FILES_DELTA`) the records that changed since (a removed file's as None);
:func:`load_manifest` reads the manifest with the two as one. A build writes the delta alone — what it and the builds
since the base changed — and the base again (with an empty delta) only when the delta's bytes pass
1/:data:`DELTA_MAX_SHARE` of the base's: a build after one article changed writes the records of the pages it
rendered (a rule section page's links are tens of kilobytes), not the records of every file (22 MB at 5,000
articles). A delta belongs to the base it names (a token written in both); one of another base is ignored.
"""

from __future__ import annotations

import marshal
import os
from pathlib import Path
from typing import Any

MANIFEST = ".kb-build/manifest.marshal"
FILES = ".kb-build/files.marshal"  # the base of the manifest's file records
FILES_DELTA = ".kb-build/files-delta.marshal"  # the file records changed since the base
DELTA_MAX_SHARE = 4  # the base is written again when the delta passes 1/4 of its bytes: a delta growing by d a build
# and a base of b bytes write the least on average when they are merged at about sqrt(2 b d), a few times d
STAMP = ".kb-build/stamp.marshal"
NAMES = ".kb-build/names.marshal"  # the name table and what it was made from (kb.site.gather._names)
MANIFEST_FORMAT = 8  # 6: a page's deferred part (kb.site.page.Deferred) recorded by its source and lookups;
# 7: the static search's analyses kept marshalled; 8: the file records apart, as a base and a delta

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
    """The previous build's manifest (empty when there is none or its file records are missing): its ``"files"``
    the base's records with the delta applied, and under ``"base"`` the base as read and its size in bytes (what
    :func:`manifest_files` writes the next delta from)."""
    manifest, base = load_record(out, MANIFEST), load_record(out, FILES)
    if not manifest or not base:
        return {}
    base["size"] = (out / FILES).stat().st_size
    files = base["files"]
    delta = load_record(out, FILES_DELTA)
    if delta.get("base") == base["token"] and delta["files"]:
        files = dict(files)
        for rel, record in delta["files"].items():
            if record is None:
                files.pop(rel, None)
            else:
                files[rel] = record
    return {**manifest, "files": files, "base": base}


def manifest_files(previous: dict[str, Any], manifest: dict[str, Any]) -> list[tuple[str, bytes]]:
    """The record files (path under the site, bytes) that store ``manifest`` after the build that read
    ``previous`` (:func:`load_manifest`): the manifest without its file records, and those as the delta from the
    previous base or as a new base with an empty delta."""
    base = previous.get("base") or {"token": None, "files": {}, "size": 0}
    old, files = base["files"], manifest["files"]
    changed: dict[str, Any] = {rel: record for rel, record in files.items()
                               if (was := old.get(rel)) is not record and was != record}
    changed.update((rel, None) for rel in old if rel not in files)
    rest = marshal.dumps({key: value for key, value in manifest.items() if key != "files"})
    tag = manifest["format"]
    if base["token"] is not None:
        delta = marshal.dumps({"format": tag, "base": base["token"], "files": changed})
        if len(delta) * DELTA_MAX_SHARE <= base["size"]:
            return [(MANIFEST, rest), (FILES_DELTA, delta)]
    token = os.urandom(8).hex()
    return [(MANIFEST, rest), (FILES, marshal.dumps({"format": tag, "token": token, "files": files})),
            (FILES_DELTA, marshal.dumps({"format": tag, "base": token, "files": {}}))]
