"""Build the static site: gather → produce pages → render (only pages whose inputs changed) → static search index →
check every internal link and anchor → put the new files in place (:mod:`kb.site.output`).

Incremental: ``<out>/.kb-build/manifest.marshal`` records, for each file, the hash of its inputs (the page's context —
which holds the texts of the nodes it shows and the URLs of those it links to — its title and description, and a hash of all
templates), and the links and ids it contains. A page whose inputs hash is unchanged is kept from the previous site
instead of rendered; search shards, static files and the sitemap are rewritten only when their content changes.
A :class:`~kb.site.page.PageGroup` (an archived version's pages) is recorded with the hash of the inputs it names and
its files: when that is unchanged its pages are not even made.

When the inputs fingerprint (every node's content hash, the references, the documents, the templates and the code —
see :func:`inputs_fingerprint`) equals the previous build's and its files are all there, nothing is gathered or
written at all: only the small ``.kb-build/stamp.marshal`` (fingerprint, file list, report) is read.

Atomic: new files are written to a staging folder beside ``out``; only a complete, checked build is put in place —
the whole folder swapped, or, when few files changed, each new file renamed over its old copy under a journal that
a killed build's successor completes (:mod:`kb.site.output`) — so a failed build leaves the previous site whole.
"""

from __future__ import annotations

import gc
import hashlib
import marshal
import os
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlsplit

from kb.errors import KbError
from kb.site.gather import gather_site
from kb.site.output import Output, in_place_suits, recover
from kb.site.page import Page, PageGroup
from kb.site.pages import PAGE_PRODUCERS, Producer
from kb.site.render import TEMPLATES, Renderer, page_links, templates_hash
from kb.splitter import JapaneseSplitter
from kb.store import Store
from kb.store.lock import writer_lock

MANIFEST = ".kb-build/manifest.marshal"  # marshal: loads and dumps plain data many times faster than JSON
STAMP = ".kb-build/stamp.marshal"  # the inputs fingerprint, the files and the report: all a build with nothing to do reads
MANIFEST_FORMAT = 4  # 4: links and ids kept marshalled in each file's record


@dataclass
class BuildReport:
    out: Path
    pages: int = 0
    rendered: int = 0
    reused: int = 0
    search_files: int = 0
    search_written: int = 0
    broken: list[str] = field(default_factory=list)  # "cr/601.html: ../cr/728.html#728 (no such page)"
    unresolved: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)  # one line each: work redone for a reason (a stale search index)
    seconds: float = 0.0


def build_site(store: Store, out: str | os.PathLike, *, strict: bool = False, producers: list[Producer] | None = None,
               templates: Path = TEMPLATES, base_url: str | None = None,
               splitter: JapaneseSplitter | None = None) -> BuildReport:
    """Build the site for ``store`` into ``out``; raises KbError (leaving ``out`` untouched) when it cannot, or when
    ``strict`` and a link is broken or a reference unresolved. With ``base_url`` (where the site will be served,
    e.g. ``https://example.org/rules/``) the sitemap, the Atom feed, ``<link rel="canonical">`` and the 404 page use
    absolute URLs; links between pages stay relative."""
    # the objects alive before the build (a whole ingest's, in `kb update`) are left out of garbage collection
    # meanwhile: scanning them again and again was a large part of a small rebuild
    gc.freeze()
    try:
        with writer_lock(store.kb_dir):  # the store must not change under the build, nor two builds swap at once
            return _build(store, out, strict, producers, templates, base_url, splitter)
    finally:
        gc.unfreeze()


def _build(store: Store, out: str | os.PathLike, strict: bool, producers: list[Producer] | None, templates: Path,
           base_url: str | None, splitter: JapaneseSplitter | None) -> BuildReport:
    started = time.perf_counter()
    out = Path(out).resolve()
    _check_out(out)
    recover(out)  # a build killed while applying its files is completed before anything is read
    base_url = normalize_base_url(base_url)
    producers = producers if producers is not None else PAGE_PRODUCERS
    inputs = inputs_fingerprint(store, templates, producers, base_url)
    stamp = _load_manifest(out, STAMP)
    if stamp.get("inputs") == inputs and _site_whole(out, stamp["files"]):
        return _unchanged(out, stamp, strict, started)
    previous = _load_manifest(out, MANIFEST)
    site = gather_site(store, splitter)
    site.base_url = base_url
    renderer = Renderer.for_templates(templates)
    template_key = f"{renderer.template_hash}|{base_url or ''}"
    old_files = previous.get("files", {})
    pages, groups, sitemap = _produce(site, producers, template_key, previous.get("groups", {}), old_files, out)
    kept = [rel for group in groups.values() if group.get("kept") for rel in group["paths"]]
    digests = [_page_hash(template_key, page) for page in pages]
    paths = {page.path for page in pages} | set(kept)
    changed = sum(1 for page, digest in zip(pages, digests, strict=True)
                  if (old_files.get(page.path) or {}).get("hash") != digest)
    changed += sum(1 for rel in old_files if rel not in paths and not rel.startswith(("search/", "static/")))
    output = Output(out, in_place=bool(old_files) and in_place_suits(changed, len(old_files)))
    report = BuildReport(out, pages=len(paths), unresolved=list(site.unresolved))
    try:
        files: dict[str, dict] = {}
        for rel in kept:
            if not output.keep(rel):
                raise KbError(f"{out / rel}: missing from the previous site; rebuild after deleting {out}")
            files[rel] = old_files[rel]
            report.reused += 1
        for page, digest in zip(pages, digests, strict=True):
            old = old_files.get(page.path)
            if old and old["hash"] == digest and output.keep(page.path):
                files[page.path] = old
                report.reused += 1
                continue
            html = renderer.render(page, {"base_url": base_url})
            output.write(page.path, html)
            links, ids = page_links(html)
            files[page.path] = _file_record(digest, resolve_links(page.path, links), ids)
            report.rendered += 1
        for path in sorted((templates / "static").rglob("*")):
            if path.is_file():
                _put(output, "static/" + path.relative_to(templates / "static").as_posix(), path.read_bytes(),
                     old_files, files)
        sitemap_key = hashlib.sha256(marshal.dumps((sitemap, base_url))).hexdigest()[:24]
        if previous.get("sitemap") == sitemap_key and "sitemap.xml" in old_files and output.keep("sitemap.xml"):
            files["sitemap.xml"] = old_files["sitemap.xml"]  # the same pages listed: not written again
        else:
            _put(output, "sitemap.xml", _sitemap(sitemap, base_url), old_files, files)
        search_state = _export_search(site, previous, out, output, files, report)
        broken = check_links(files, old_files if previous else None, previous.get("broken"))
        report.broken = [f"{path}: {link} ({reason})" for path, link, reason in broken]
        if strict:
            _fail_on_problems(report)
        output.write(STAMP, marshal.dumps({
            "format": MANIFEST_FORMAT, "inputs": inputs, "files": sorted(files), "pages": report.pages,
            "broken": report.broken, "unresolved": report.unresolved, "search_files": report.search_files}))
        output.write(MANIFEST, marshal.dumps({"format": MANIFEST_FORMAT, "files": files, "search": search_state,
                                              "broken": [[path, link] for path, link, _ in broken], "sitemap": sitemap_key,
                                              "groups": {name: {"hash": g["hash"], "paths": g["paths"], "sitemap": g["sitemap"]}
                                                         for name, g in groups.items()}}))
        output.commit(deleted=[rel for rel in old_files if rel not in files])
    except BaseException:
        output.abort()
        raise
    report.seconds = time.perf_counter() - started
    return report


def _file_record(digest: str, links: list[str] | None = None, ids: list[str] | None = None) -> dict:
    """A file's record in the manifest: its hash, and the links and ids it contains, each kept marshalled (thousands
    of short lists load much more slowly than as many strings; a link check reads back only the files it looks at)."""
    return {"hash": digest, "links": marshal.dumps(links or []), "ids": marshal.dumps(ids or [])}


def _put(output: Output, rel: str, data: str | bytes, old_files: dict, files: dict) -> None:
    """A file that is not a page (static, sitemap): written when its content changed."""
    digest = hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()[:24]
    old = old_files.get(rel)
    if not (old and old["hash"] == digest and output.keep(rel)):
        output.write(rel, data)
    files[rel] = _file_record(digest)


_KB = Path(__file__).resolve().parent.parent
# the code pages are made by (the search analysis is not here: its results are cached by text, as before)
_CODE = sorted([*(_KB / "site").glob("*.py"), *(_KB / name for name in (
    "urls/paths.py", "urls/where.py", "versions/history.py", "versions/diff.py", "rulenum.py", "model.py"))])


@lru_cache(maxsize=1)
def _code_digest() -> str:
    """A hash of the code that makes pages (:data:`_CODE`), read once per process."""
    digest = hashlib.sha256()
    for path in _CODE:
        digest.update(path.read_bytes())
    return digest.hexdigest()


def normalize_base_url(base_url: str | None) -> str | None:
    """``base_url`` checked (http or https, a host, no query or fragment) and ending with ``/``; None stays None."""
    if not base_url:
        return None
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        raise KbError(f"--base-url {base_url}: not an http(s) URL of a folder (e.g. https://example.org/rules/)")
    return base_url if base_url.endswith("/") else base_url + "/"


def inputs_fingerprint(store: Store, templates: Path, producers: list[Producer], base_url: str | None = None) -> str:
    """A hash of everything a build reads: every node's content hash, the references, the documents (versions, dates,
    when ingested), the templates, the page producers, the code that makes pages, the search analysis and dictionary
    and the base URL. Equal to the previous
    build's: nothing to do."""
    from kb.search.index import installed_identity  # the static search's code and Sudachi (its user dictionary
    # is made from the store's content, hashed below)

    identity = sorted(installed_identity().items())
    digest = hashlib.sha256(f"{MANIFEST_FORMAT}|{templates_hash(templates)}|{base_url or ''}|{identity}|".encode())
    for producer in producers:
        digest.update(producer_identity(producer).encode())
    digest.update(_code_digest().encode())
    digest.update(store.content_digest().encode())  # nodes, documents, and the references' count and newest row
    return digest.hexdigest()[:32]


def producer_identity(producer, depth: int = 0) -> str:
    """What a page producer is, as text that is the same in every process: its name, its code, and the values it
    closes over and its defaults (two lambdas share a name; two producers made by one factory differ only in what
    they close over)."""
    code = getattr(producer, "__code__", None)
    cells = []
    for cell in getattr(producer, "__closure__", None) or ():
        try:
            cells.append(cell.cell_contents)
        except ValueError:  # a cell not yet filled
            cells.append(None)
    defaults = (getattr(producer, "__defaults__", None), getattr(producer, "__kwdefaults__", None))
    name = f"{producer.__module__}.{getattr(producer, '__qualname__', type(producer).__name__)}|"
    if depth > 3:  # a function closing over itself
        return name
    return f"{name}{code_identity(code) if code else ''}|{_stable(cells, depth)}|{_stable(defaults, depth)}|"


def code_identity(code) -> str:
    """What a code object does, as text that is the same in every process: its bytecode, names and constants, nested
    code objects and sets of constants included (``repr`` of a code object holds its memory address, and a frozenset's
    order follows the per-process string hash)."""
    return f"{code.co_code.hex()}|{code.co_names}|{code.co_varnames}|{_stable(code.co_consts)}"


def _stable(value, depth: int = 0) -> str:
    """``repr`` of plain data and code, the same in every process (sets sorted, code objects by what they do,
    functions as :func:`producer_identity`)."""
    if hasattr(value, "co_code"):
        return code_identity(value)
    if isinstance(value, (frozenset, set)):
        return "{" + ",".join(sorted(_stable(v, depth) for v in value)) + "}"
    if isinstance(value, (tuple, list)):
        return "(" + ",".join(_stable(v, depth) for v in value) + ")"
    if isinstance(value, dict):
        return "{" + ",".join(f"{_stable(k, depth)}:{_stable(v, depth)}" for k, v in value.items()) + "}"
    if callable(value) and hasattr(value, "__code__"):
        return producer_identity(value, depth + 1)
    return repr(value)


def _site_whole(out: Path, files: dict) -> bool:
    """Every file the previous build wrote is still there (a deleted file is rebuilt, not trusted)."""
    base = str(out)
    return all(os.path.isfile(f"{base}/{rel}") for rel in files)


def _unchanged(out: Path, stamp: dict, strict: bool, started: float) -> BuildReport:
    report = BuildReport(out, pages=stamp["pages"], reused=stamp["pages"], broken=list(stamp["broken"]),
                         unresolved=list(stamp["unresolved"]), search_files=stamp["search_files"])
    if strict:
        _fail_on_problems(report)
    report.seconds = time.perf_counter() - started
    return report


def _fail_on_problems(report: BuildReport) -> None:
    if report.broken or report.unresolved:
        problems = report.broken or report.unresolved
        raise KbError(f"{report.out}: build failed (--strict): {len(report.broken)} broken links, "
                      f"{len(report.unresolved)} unresolved references; first: {problems[0]}")


def _check_out(out: Path) -> None:
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / MANIFEST).parent.is_dir())):
        raise KbError(f"{out}: exists and is not a site built by kb; choose another --out or remove it")


def _produce(site, producers: list[Producer], template_key: str, old_groups: dict, old_files: dict,
             out: Path) -> tuple[list[Page], dict[str, dict], list[str]]:
    """The pages to render, every group ({hash, paths, sitemap, kept}: ``kept`` when the previous build's files of
    the group stand, its pages not made), and the sitemap's paths in order."""
    pages: list[Page] = []
    groups: dict[str, dict] = {}
    sitemap: list[str] = []
    seen: dict[str, str] = {}  # path → what made it

    def add(path: str, maker: str) -> None:
        if path in seen:
            raise KbError(f"{path}: produced twice ({seen[path]} and {maker})")
        seen[path] = maker

    for producer in producers:
        for item in producer(site):
            if isinstance(item, PageGroup):
                if item.name in groups:
                    raise KbError(f"page group {item.name!r}: produced twice")
                digest = _group_hash(template_key, item)
                old = old_groups.get(item.name)
                if old and old["hash"] == digest and all(rel in old_files for rel in old["paths"]) \
                        and _site_whole(out, old["paths"]):
                    group = {**old, "kept": True}
                else:
                    made = list(item.make())
                    pages += made
                    group = {"hash": digest, "paths": [p.path for p in made],
                             "sitemap": [p.path for p in made if p.in_sitemap]}
                groups[item.name] = group
                for path in group["paths"]:
                    add(path, f"page group {item.name!r}")
                sitemap += group["sitemap"]
                continue
            add(item.path, repr(item.title))
            pages.append(item)
            if item.in_sitemap:
                sitemap.append(item.path)
    return pages, groups, sitemap


def _page_hash(template_hash: str, page: Page) -> str:
    """Hash of everything the page is made from (marshal format 2: fast, and without back-references, so the bytes
    depend on the values only)."""
    payload = marshal.dumps((template_hash, page.path, page.template, page.title, page.description, page.context), 2)
    return hashlib.sha256(payload).hexdigest()[:24]


def _group_hash(template_hash: str, group: PageGroup) -> str:
    """Hash of what a page group is made from: its inputs, the templates and the code that makes pages."""
    payload = marshal.dumps((template_hash, _code_digest(), group.name, group.inputs), 2)
    return hashlib.sha256(payload).hexdigest()[:24]


def _load_manifest(out: Path, name: str) -> dict:
    try:
        data = marshal.loads((out / name).read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        return {}
    return data if isinstance(data, dict) and data.get("format") == MANIFEST_FORMAT else {}


class _StaleSite(Exception):
    """A file the previous manifest lists cannot be read: fall back to a full export."""


def _export_search(site, previous: dict, out: Path, output: Output, files: dict, report: BuildReport) -> dict:
    from kb.site.search_export import export_search

    old_files = previous.get("files", {})

    def read_old(rel: str) -> str | None:
        if rel not in old_files:
            return None
        try:
            return (out / rel).read_text(encoding="utf-8")
        except OSError:
            raise _StaleSite(rel) from None

    try:
        written, state = export_search(site, previous.get("search", {}), read_old, report.notices.append)
    except _StaleSite:
        written, state = export_search(site, {}, read_old)
    for rel in state["files"]:
        old = old_files.get(rel)
        if rel in written:
            digest = hashlib.sha256(written[rel].encode()).hexdigest()[:24]
            if not (old and old["hash"] == digest and output.keep(rel)):
                output.write(rel, written[rel])
                report.search_written += 1
        elif old and output.keep(rel):
            digest = old["hash"]
        else:
            raise KbError(f"{out / rel}: missing from the previous site; rebuild after deleting {out}")
        files[rel] = _file_record(digest)
    report.search_files = len(state["files"])
    return state


def _sitemap(paths: list[str], base_url: str | None) -> str:
    """Relative ``<loc>``s, or absolute ones under ``base_url`` (what search engines require)."""
    from xml.sax.saxutils import escape

    from kb.urls.paths import href

    urls = "".join(f"  <url><loc>{escape((base_url or '') + href('', path))}</loc></url>\n" for path in paths)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
            f"{urls}</urlset>\n")


def resolve_links(path: str, links: list[str]) -> list[str]:
    """The site files (``path#anchor``) the relative links written on the page at ``path`` point at; a link
    climbing above the site root becomes ``../<link>`` (always broken). Outside links are left out."""
    base = PurePosixPath(path).parent
    resolved = []
    for link in links:
        parts = _split(link)
        if parts.scheme or parts.netloc or link.startswith("/"):
            continue  # outside links are not ours to check (and absolute paths are never written)
        target = (_join(base, unquote(parts.path)) or f"../{link}") if parts.path else path
        resolved.append(f"{target}#{unquote(parts.fragment)}" if parts.fragment else target)
    return resolved


def check_links(files: dict[str, dict], old_files: dict[str, dict] | None = None,
                old_broken: list | None = None) -> list[tuple[str, str, str]]:
    """Every link written must name a file of the site and, with an anchor, an id in that file: the links that do
    not, as (page, link, what is wrong), in order. Given the previous build's files (a kept file's record is the same
    object in ``files``) and its broken (page, link) pairs: when no file is gone and no rewritten file lost an id,
    only the rewritten files' links and the links broken before are checked — no other can have broken or mended."""
    ids: dict[str, set[str]] = {}

    def problem(link: str) -> str | None:
        target, _, anchor = link.partition("#")
        if target not in files:
            return "no such page"
        if anchor:
            if target not in ids:
                ids[target] = set(marshal.loads(files[target]["ids"]))
            if anchor not in ids[target]:
                return "no such anchor"
        return None

    if old_files is not None and old_broken is not None and _files_only_grew(files, old_files):
        pairs = [(path, link) for path, link in old_broken if path in files and files[path] is old_files.get(path)]
        pairs += [(path, link) for path, info in files.items() if info is not old_files.get(path)
                  for link in marshal.loads(info["links"])]
    else:
        pairs = [(path, link) for path, info in files.items() for link in marshal.loads(info["links"])]
    return sorted((path, link, reason) for path, link in pairs if (reason := problem(link)) is not None)


def _files_only_grew(files: dict[str, dict], old_files: dict[str, dict]) -> bool:
    """No file of the previous build is gone, and none rewritten lost an id."""
    return all(rel in files for rel in old_files) and all(
        old["ids"] == info["ids"] or set(marshal.loads(old["ids"])) <= set(marshal.loads(info["ids"]))
        for rel, info in files.items()
        if (old := old_files.get(rel)) is not None and old is not info)


@lru_cache(maxsize=65536)
def _split(link: str):
    return urlsplit(link)


@lru_cache(maxsize=65536)
def _join(base: PurePosixPath, rel: str) -> str | None:
    stack = [p for p in base.parts if p not in ("", ".")]
    for part in rel.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not stack:
                return None
            stack.pop()
        else:
            stack.append(part)
    return "/".join(stack)
