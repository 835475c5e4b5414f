"""The records a build leaves in ``<out>/.kb-build/`` for the next one: the manifest (each file's hash, links and ids;
the search export's state; the page groups; the sitemap's key), the stamp (the inputs fingerprint, the file list
and the report: all a build with nothing to do reads) and the name table with what it was made from (the next build
takes it as it is when that is unchanged: :func:`kb.site.gather.gather_site`). All are marshal data (loaded and
dumped many times faster than JSON) tagged with :data:`MANIFEST_FORMAT`; a record of another format reads as empty
(a full build).
"""

from __future__ import annotations

import marshal
from pathlib import Path
from typing import Any

MANIFEST = ".kb-build/manifest.marshal"
STAMP = ".kb-build/stamp.marshal"
NAMES = ".kb-build/names.marshal"  # the name table and what it was made from (kb.site.gather._names)
MANIFEST_FORMAT = 7  # 6: a page's deferred part (kb.site.page.Deferred) recorded by its source and lookups;
# 7: the static search's analyses kept marshalled

FileRecord = dict[str, Any]  # {"hash": str, "links": marshalled list[str], "ids": marshalled list[str]}, and for a
# page with a deferred part "source": str, "lookups": marshalled list (the keys its making looked up)


def file_record(digest: str, links: list[str] | None = None, ids: list[str] | None = None,
                deferred: tuple[str, list[Any]] | None = None) -> FileRecord:
    """A file's record in the manifest: its hash, and the links and ids it contains, each kept marshalled (thousands
    of short lists load much more slowly than as many strings; a link check reads back only the files it looks at);
    for a page with a deferred part, that part's source and the keys its making looked up (``deferred``), with which
    the next build hashes the page without making the part."""
    record = {"hash": digest, "links": marshal.dumps(links or []), "ids": marshal.dumps(ids or [])}
    if deferred is not None:
        record["source"], record["lookups"] = deferred[0], marshal.dumps(deferred[1])
    return record


def load_record(out: Path, name: str) -> dict[str, Any]:
    """The record ``name`` (:data:`MANIFEST`, :data:`STAMP` or :data:`NAMES`) of the site in ``out``; empty when it is missing,
    damaged or of another format."""
    try:
        data = marshal.loads((out / name).read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        return {}
    return data if isinstance(data, dict) and data.get("format") == MANIFEST_FORMAT else {}
