"""Comparing an incremental build's files with a full build's: byte for byte, but for the static search's
vocabulary, which only grows between full builds (:func:`kb.site.search_export._vocabulary`); and the files a
build's static search export returned."""

from __future__ import annotations

import filecmp
import json
from pathlib import Path

from kb.site import search_export
from kb.site.manifest import FILES, FILES_DELTA, MANIFEST

# the build's records an incremental build writes otherwise than a full one: the manifest, and the file records as a
# base and a delta (compared as one: kb.site.manifest.load_manifest)
BUILD_RECORDS = frozenset(Path(record).name for record in (MANIFEST, FILES, FILES_DELTA))


def same_built_file(full: Path, incremental: Path, rel: Path) -> bool:
    """Whether ``incremental`` (the file ``rel`` of an incremental build) is as ``full``: ``search/meta.js`` is
    compared without its vocabulary ("v"), whose keys in the full build must all be in the incremental one's."""
    if rel.as_posix() != "search/meta.js":
        return filecmp.cmp(full, incremental, shallow=False)
    a, b = (_meta(p) for p in (full, incremental))
    rest = [{k: v for k, v in m.items() if k != "v"} for m in (a, b)]
    return rest[0] == rest[1] and a.get("v", {}).keys() <= b.get("v", {}).keys()


def _meta(path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    return json.loads(text[len('window.__kbSearch("meta",'):].rstrip().removesuffix(");"))


def exported_files(monkeypatch) -> list[str]:
    """The list every later call of :func:`kb.site.search_export.export_search` adds the files it returns to (the
    test clears it between builds)."""
    returned: list[str] = []
    real = search_export.export_search

    def export(*args, **kwargs):
        files, state = real(*args, **kwargs)
        returned.extend(files)
        return files, state

    monkeypatch.setattr(search_export, "export_search", export)
    return returned
