"""Comparing an incremental build's files with a full build's: byte for byte, but for the static search's
vocabulary, which only grows between full builds (:func:`kb.site.search_export._vocabulary`), and its ``p/``,
``g/`` and ``q/`` shards, compared as the browser sees them: with the delta merged in
(:func:`kb.site.search_delta.merged_shard`); and the files a build's static search export returned."""

from __future__ import annotations

import filecmp
import json
import marshal
from pathlib import Path

from kb.site import search_export
from kb.site.manifest import FILE_RECORDS, MANIFEST, MANIFEST_FORMAT, NAMES
from kb.site.search_cache import AnalysisCache
from kb.site.search_delta import PREFIXES, merged_shard
from kb.store.keyed import KeyedFile

# the build's records an incremental build writes otherwise than a full one: the manifest, and the file records (a
# keyed file: their paths are compared with the stamp, by same_stamp)
BUILD_RECORDS = frozenset(Path(record).name for record in (MANIFEST, FILE_RECORDS))


def same_built_file(full: Path, incremental: Path, rel: Path) -> bool:
    """Whether ``incremental`` (the file ``rel`` of an incremental build) is as ``full``: ``search/meta.js`` is
    compared without its vocabulary ("v"), whose keys in the full build must all be in the incremental one's, and
    without the name of the delta ("x"); a ``p/``, ``g/`` or ``q/`` shard by its lists, each build's delta merged in
    as the browser merges it; the stamp as :func:`same_stamp`; the name table by its values (the order of a
    dictionary's keys follows the order the store's rows came in)."""
    parts = rel.parts
    if rel.as_posix() == ".kb-build/stamp.marshal":
        return same_stamp(full, incremental)
    if rel.as_posix() == NAMES:
        return marshal.loads(full.read_bytes()) == marshal.loads(incremental.read_bytes())
    if parts[0] == "search" and len(parts) == 3 and parts[1] in PREFIXES:
        site = incremental.parents[2]
        return merged(full.parents[2], parts[1], int(parts[2][:-3])) == merged(site, parts[1], int(parts[2][:-3]))
    if rel.as_posix() != "search/meta.js":
        return filecmp.cmp(full, incremental, shallow=False)
    a, b = (_meta(p) for p in (full, incremental))
    rest = [{k: v for k, v in m.items() if k not in ("v", "x")} for m in (a, b)]
    return rest[0] == rest[1] and a.get("v", {}).keys() <= b.get("v", {}).keys()


def same_stamp(full: Path, incremental: Path) -> bool:
    """Whether two builds' stamps are the same but for the count of the static search's files, and their file
    records list the same files but for the static search's: those of ``incremental`` may have more under
    ``search/`` (its delta, shards kept empty) and the base analyses its delta keeps (:func:`kept`)."""
    a, b = (marshal.loads(p.read_bytes()) for p in (full, incremental))
    rest = [{k: v for k, v in m.items() if k != "search_files"} for m in (a, b)]
    extra = kept(incremental.parents[1])
    listed = [recorded_files(p.parents[1]) for p in (full, incremental)]
    return rest[0] == rest[1] and ({f for f in listed[0] if not f.startswith("search/")}
                                   == {f for f in listed[1] if not f.startswith("search/") and f not in extra})


def recorded_files(site: Path) -> list[str]:
    """The paths of the files the site's build records (kb.site.manifest), in order."""
    stored = KeyedFile.open(site / FILE_RECORDS, str(MANIFEST_FORMAT))
    assert stored is not None, f"{site}: no file records"
    try:
        return stored.keys()
    finally:
        stored.close()


def kept(site: Path) -> set[str]:
    """The analysis files (paths under the site) a site keeps for the documents of its static search's delta, the
    analyses of their records in the base shards (:mod:`kb.site.search_delta`), but for those of a text the site
    has now."""
    state = marshal.loads((site / ".kb-build" / "manifest.marshal").read_bytes())["search"]
    return {AnalysisCache.path(k) for k in set(state["delta"].values()) - set(state["keys"].values()) if k}


def merged(site: Path, prefix: str, shard: int) -> dict[str, list[int]]:
    """The lists of the shard ``<prefix>/<shard>`` of the site's static search as the browser has them: the delta
    that ``meta.js`` names merged in."""
    meta = _meta(site / "search" / "meta.js")
    delta = shard_data(site / "search" / f"{meta['x']}.js", meta["x"]) if meta.get("x") else {"d": []}
    path = site / "search" / prefix / f"{shard}.js"
    base = shard_data(path, f"{prefix}/{shard}") if path.is_file() else None
    return merged_shard(base, delta["d"], delta.get(prefix, {}).get(str(shard), {}), PREFIXES[prefix])


def merged_shards(site: Path) -> dict[str, dict[str, list[int]]]:
    """Every ``p/``, ``g/`` and ``q/`` shard of the site with a list, as :func:`merged` gives it."""
    meta = _meta(site / "search" / "meta.js")
    out = {f"{prefix}/{shard}": merged(site, prefix, shard) for prefix in PREFIXES for shard in range(meta[prefix])}
    return {name: lists for name, lists in out.items() if lists}


def shard_data(path: Path, name: str) -> dict:
    """The data of the search file ``path`` (shard ``name``)."""
    text = path.read_text(encoding="utf-8")
    return json.loads(text[len(f'window.__kbSearch("{name}",'):].rstrip().removesuffix(");"))


def _meta(path: Path) -> dict:
    return shard_data(path, "meta")


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
