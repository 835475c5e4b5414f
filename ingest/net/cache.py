"""The fetch cache in the kb folder, and ingesting from it.

Layout: ``<kb_dir>/cache/<site>/pages/<key>.body`` holds a response body exactly as received (raw bytes, after
transfer decoding) and ``<key>.json`` its :class:`CacheEntry` (URL, status, headers, fetch time, validators, charset,
content hash). ``state.json`` is the site's crawl state (what was asked, when it started, whether it finished), which
lets an interrupted crawl resume; ``ingested.json`` maps each URL to the content hash last ingested.

Every file is written to a temporary name and moved into place with :func:`os.replace`, the body before its JSON; an
entry whose body does not match the hash in its JSON (a process killed between the two moves) is treated as absent.
:func:`ingest_from_cache` is the entry point for ``kb ingest --from-cache``: it parses only entries whose bytes changed
since they were last ingested.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from ingest.decode import reencode_declared

CACHE_DIR = "cache"


@dataclass(frozen=True)
class CacheEntry:
    url: str  # as requested (canonical)
    final_url: str  # after in-site redirects
    role: str  # "page" (parsed by ingest) or "listing" (read for links only)
    status: int
    headers: dict[str, str]
    fetched_at: float  # when the body was downloaded (Unix time)
    checked_at: float  # when it was last confirmed current (download or 304)
    content_hash: str  # sha256 of the body
    size: int
    etag: str | None = None
    last_modified: str | None = None
    content_type: str = ""
    charset: str | None = None  # from the HTTP Content-Type header
    meta_charset: str | None = None  # from <meta charset> / http-equiv in the body


@dataclass(frozen=True)
class CrawlState:
    spec: dict
    started_at: float
    finished_at: float | None = None


def bytes_for_parser(entry: CacheEntry, body: bytes) -> bytes:
    """The body as a parser should see it. When the HTTP header names a charset (which outranks ``<meta charset>``)
    or only the ``<meta>`` does, the text is re-encoded as UTF-8 behind a byte-order mark, which every decoder
    (BeautifulSoup, lxml, :mod:`ingest.decode`) honours first; otherwise the bytes go as they are
    (:func:`ingest.decode.reencode_declared`)."""
    return reencode_declared(body, entry.charset or entry.meta_charset)


def atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix="." + path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _dump(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, indent=1, sort_keys=True).encode()


@dataclass
class SiteCache:
    kb_dir: Path
    site: str
    folder: Path = field(init=False)

    def __post_init__(self) -> None:
        self.folder = Path(self.kb_dir) / CACHE_DIR / self.site

    def _paths(self, url: str) -> tuple[Path, Path]:
        key = hashlib.sha256(url.encode()).hexdigest()[:32]
        return self.folder / "pages" / f"{key}.json", self.folder / "pages" / f"{key}.body"

    def get(self, url: str) -> CacheEntry | None:
        meta_path, _ = self._paths(url)
        try:
            return CacheEntry(**json.loads(meta_path.read_bytes()))
        except (FileNotFoundError, ValueError, TypeError):
            return None

    def body(self, entry: CacheEntry) -> bytes | None:
        """The cached body, or None when it is missing or does not match the entry (an interrupted write)."""
        try:
            data = self._paths(entry.url)[1].read_bytes()
        except FileNotFoundError:
            return None
        return data if hashlib.sha256(data).hexdigest() == entry.content_hash else None

    def put(self, entry: CacheEntry, body: bytes) -> CacheEntry:
        entry = replace(entry, content_hash=hashlib.sha256(body).hexdigest(), size=len(body))
        meta_path, body_path = self._paths(entry.url)
        atomic_write(body_path, body)
        atomic_write(meta_path, _dump(asdict(entry)))
        return entry

    def update(self, entry: CacheEntry) -> None:
        """Rewrite an entry's JSON only (a 304 refreshed its validators and ``checked_at``)."""
        atomic_write(self._paths(entry.url)[0], _dump(asdict(entry)))

    def entries(self) -> Iterator[CacheEntry]:
        for meta_path in sorted((self.folder / "pages").glob("*.json")):
            try:
                yield CacheEntry(**json.loads(meta_path.read_bytes()))
            except (ValueError, TypeError):
                continue

    def load_state(self) -> CrawlState | None:
        try:
            return CrawlState(**json.loads((self.folder / "state.json").read_bytes()))
        except (FileNotFoundError, ValueError, TypeError):
            return None

    def save_state(self, state: CrawlState) -> None:
        atomic_write(self.folder / "state.json", _dump(asdict(state)))

    def ingested(self) -> dict[str, str]:
        try:
            return json.loads((self.folder / "ingested.json").read_bytes())
        except (FileNotFoundError, ValueError):
            return {}

    def save_ingested(self, hashes: dict[str, str]) -> None:
        atomic_write(self.folder / "ingested.json", _dump(hashes))


def cached_sites(kb_dir: Path) -> list[str]:
    root = Path(kb_dir) / CACHE_DIR
    return sorted(p.name for p in root.iterdir() if (p / "pages").is_dir()) if root.is_dir() else []
