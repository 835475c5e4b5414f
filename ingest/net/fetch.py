"""Fetching: the only stage of kb that touches the network. A polite, resumable crawler over one site profile.

:func:`crawl` walks a profile (:mod:`ingest.net.sites`) from its seeds, breadth first, and stores every response in the
cache (:mod:`ingest.net.cache`). Politeness: robots.txt is obeyed (Protego), including ``Crawl-delay`` and
``Request-rate``; requests to a host are sequential on one connection and spaced by at least the delay (default one
second, longer when robots.txt asks, up to ``max_crawl_delay`` — five minutes — with a note in the report); the
User-Agent names kb and a contact URL; connect and read timeouts, and an overall deadline per request
(``request_deadline``: every socket read and write of a request ends by it, so a server that trickles bytes cannot
hold the crawl); connection errors,
timeouts and 5xx are retried with exponential backoff and jitter, 429/503 wait for ``Retry-After`` (up to
``max_retry_after``); a URL that still fails after ``max_tries`` is recorded as failed and the crawl goes on.
Re-fetches are conditional (``If-None-Match``/``If-Modified-Since``) and a 304 re-uses the cached body. Redirects —
of robots.txt too — are followed one request at a time, under the same spacing, retries and limits, at most
:data:`MAX_REDIRECTS` of them; pages' only within the base URL. Responses of the wrong type (HTML expected, or a text
file) or over 20 MB are refused. URLs carrying a user name or password are refused (kb would store them in the
source, the export and the cache).

Resume: the site's crawl state records when a crawl started; until it finishes, a rerun of the same crawl takes every
page confirmed since that moment from the cache without asking the server again.

:func:`fetch_url` is the single polite fetch behind ``kb ingest URL``.
"""

from __future__ import annotations

import contextlib
import random
import ssl
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpcore
import httpx
from protego import Protego

from ingest import MAX_BYTES
from ingest.decode import http_charset, meta_charset
from ingest.net.cache import CacheEntry, CrawlState, SiteCache, bytes_for_parser
from ingest.net.sites import LISTING, PAGE, PROFILES, SiteProfile, Target, canonical_url, normalise_base, profile_for_url
from kb.errors import KbError

DEFAULT_DELAY = 1.0
MAX_REDIRECTS = 5
REDIRECT_CODES = {301, 302, 303, 307, 308}
ROBOTS_AGENT = "kb"


@dataclass(frozen=True)
class Politeness:
    delay: float = DEFAULT_DELAY  # seconds between requests to one host (robots.txt may ask for more)
    contact: str | None = None  # URL or address the site owner can reach us at, put in the User-Agent
    connect_timeout: float = 10.0
    read_timeout: float = 30.0
    request_deadline: float = 120.0  # a whole request (connect, headers, body) ends by then, however bytes trickle
    max_tries: int = 4
    backoff_base: float = 1.0  # first retry waits about this long, doubling each time (with ±50 % jitter)
    backoff_cap: float = 60.0
    max_retry_after: float = 600.0  # a longer Retry-After fails the URL instead of stalling the crawl
    max_crawl_delay: float = 300.0  # a longer robots.txt Crawl-delay or Request-rate is capped here, with a note
    max_listing_pages: int = 1000  # listing pages (category members, 500 a page) one crawl fetches at most
    max_bytes: int = MAX_BYTES

    @property
    def user_agent(self) -> str:
        from importlib.metadata import PackageNotFoundError, version

        try:
            kb_version = version("kb")
        except PackageNotFoundError:
            kb_version = "dev"
        contact = f"+{self.contact}" if self.contact else "no contact given: kb fetch --contact URL"
        return f"kb/{kb_version} (Japanese MTG rules knowledge base; {contact})"


@dataclass
class CrawlReport:
    site: str
    fetched: list[str] = field(default_factory=list)
    not_modified: list[str] = field(default_factory=list)
    resumed: list[str] = field(default_factory=list)  # confirmed earlier in this same (interrupted) crawl
    failed: dict[str, str] = field(default_factory=dict)  # URL → reason
    robots_skipped: list[str] = field(default_factory=list)
    pending: int = 0  # targets still queued
    notes: list[str] = field(default_factory=list)  # what the user should know (a capped Crawl-delay)

    @property
    def done(self) -> int:
        return len(self.fetched) + len(self.not_modified) + len(self.resumed) + len(self.failed) + len(self.robots_skipped)


class CrawlInterrupted(Exception):
    """Ctrl-C during a crawl; carries what was done so far (the crawl resumes when run again)."""

    def __init__(self, report: CrawlReport) -> None:
        super().__init__("interrupted")
        self.report = report


class FetchFailed(Exception):
    """A URL could not be fetched; the message is the reason."""


class RobotsDisallowed(Exception):
    pass


@dataclass(frozen=True)
class _Response:
    status: int
    headers: dict[str, str]
    body: bytes


class _DeadlineNetwork(httpcore.NetworkBackend):
    """httpcore's network, each socket read, write and handshake bounded by the current request's deadline as well
    as by its own timeout: a server sending one byte a second never stays within the read timeout long enough."""

    def __init__(self) -> None:
        self._backend = httpcore.SyncBackend()
        self.until: float | None = None  # time.monotonic() by which the current request must be done

    def expired(self) -> bool:
        return self.until is not None and time.monotonic() >= self.until

    def limit(self, timeout: float | None) -> float | None:
        if self.until is None:
            return timeout
        left = self.until - time.monotonic()
        if left <= 0:
            raise httpcore.ReadTimeout("request deadline passed")
        return left if timeout is None else min(timeout, left)

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None) -> httpcore.NetworkStream:
        return _DeadlineStream(self._backend.connect_tcp(host, port, self.limit(timeout), local_address,
                                                         socket_options), self)

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


class _DeadlineStream(httpcore.NetworkStream):
    """A network stream of :class:`_DeadlineNetwork`."""

    def __init__(self, stream: httpcore.NetworkStream, network: _DeadlineNetwork) -> None:
        self._stream = stream
        self._network = network

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, self._network.limit(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, self._network.limit(timeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return _DeadlineStream(self._stream.start_tls(ssl_context, server_hostname, self._network.limit(timeout)),
                               self._network)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


def refuse_credentials(url: str) -> None:
    """KbError for a URL with a user name or password (shown without them): kb would keep them in the source,
    the export and the cache folder's name, and sends no credentials anyway."""
    parts = urlsplit(url)
    if parts.username is not None or parts.password is not None:
        shown = parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()
        raise KbError(f"{shown}: the URL carries a user name or password; kb does not send or keep credentials — "
                      "give the URL without them")


class PoliteClient:
    """One HTTP client per crawl: robots.txt per origin, request spacing per host, retries, size/type limits."""

    def __init__(self, politeness: Politeness, base: str, report: CrawlReport | None = None) -> None:
        self.politeness = politeness
        self.base = base
        self.report = report
        self._network = _DeadlineNetwork()
        transport = httpx.HTTPTransport()
        # httpx's transport, on a connection pool whose network bounds every request by its deadline
        transport._pool = httpcore.ConnectionPool(ssl_context=httpx.create_ssl_context(), max_connections=1,
                                                  max_keepalive_connections=1, keepalive_expiry=5.0,
                                                  network_backend=self._network)
        # requests go to the transport itself: kb follows redirects one request at a time (:meth:`_following`,
        # :meth:`fetch`), so httpx's own redirect handling, which chokes on a Location it cannot parse, never runs
        self._transport = transport
        self.client = httpx.Client(
            headers={"User-Agent": politeness.user_agent},
            timeout=httpx.Timeout(politeness.read_timeout, connect=politeness.connect_timeout),
            transport=transport,
        )
        self._robots: dict[str, Protego | FetchFailed] = {}
        self._ready_at: dict[str, float] = {}  # host → monotonic time of its next allowed request
        self._noted: set[str] = set()

    def close(self) -> None:
        self.client.close()

    # -- politeness ------------------------------------------------------------------------------------------
    def _robots_for(self, url: str) -> Protego | FetchFailed:
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        if origin not in self._robots:
            try:
                response = self._following(origin + "/robots.txt")
                if response.status >= 500 or response.status in REDIRECT_CODES:
                    raise FetchFailed(f"HTTP {response.status}")
                text = response.body.decode("utf-8", "replace") if response.status == 200 else ""
                self._robots[origin] = Protego.parse(text)
            except FetchFailed as exc:  # unreachable robots.txt: crawl nothing there (RFC 9309)
                self._robots[origin] = FetchFailed(f"{origin}/robots.txt unavailable ({exc}); not crawling the site")
        return self._robots[origin]

    def allowed(self, url: str) -> bool:
        robots = self._robots_for(url)
        if isinstance(robots, FetchFailed):
            raise robots
        allowed: bool = robots.can_fetch(url, ROBOTS_AGENT)
        return allowed

    def _delay(self, url: str) -> float:
        """Seconds between requests to the host of ``url``: ``--delay``, or longer when its robots.txt asks, up to
        ``max_crawl_delay`` (a longer wish is noted in the report once, and capped)."""
        delay = self.politeness.delay
        origin = "{0.scheme}://{0.netloc}".format(urlsplit(url))
        robots = self._robots.get(origin)
        if robots is not None and not isinstance(robots, FetchFailed):
            asked = robots.crawl_delay(ROBOTS_AGENT) or 0
            rate = robots.request_rate(ROBOTS_AGENT)
            if rate and rate.requests:
                asked = max(asked, rate.seconds / rate.requests)
            cap = self.politeness.max_crawl_delay
            if asked > cap and origin not in self._noted:
                self._noted.add(origin)
                if self.report is not None:
                    self.report.notes.append(f"{origin}/robots.txt asks for {asked:g} s between requests; kb waits "
                                             f"{max(delay, cap):g} s, its cap")
            delay = max(delay, min(asked, cap))
        return delay

    def _wait_turn(self, host: str) -> None:
        wait = self._ready_at.get(host, 0.0) - time.monotonic()
        if wait > 0:
            time.sleep(wait)

    def _hold(self, host: str, seconds: float) -> None:
        self._ready_at[host] = max(self._ready_at.get(host, 0.0), time.monotonic() + seconds)

    def _backoff(self, attempt: int) -> float:
        p = self.politeness
        return min(p.backoff_cap, p.backoff_base * 2 ** (attempt - 1)) * random.uniform(0.5, 1.5)

    # -- requests --------------------------------------------------------------------------------------------
    def _following(self, url: str) -> _Response:
        """GET ``url`` following redirects (to any host, as robots.txt may), each one a request of its own under
        :meth:`_request`'s spacing, retries and limits; at most :data:`MAX_REDIRECTS` of them."""
        for _ in range(MAX_REDIRECTS + 1):
            response = self._request(url, None)
            location = response.headers.get("location")
            if response.status not in REDIRECT_CODES or not location:
                return response
            url = _redirect_target(url, location)
        raise FetchFailed(f"more than {MAX_REDIRECTS} redirects")

    def _request(self, url: str, target: Target | None, *, profile: SiteProfile | None = None,
                 headers: dict[str, str] | None = None) -> _Response:
        """One GET with retries. Returns the final response of any status but 5xx/429 (those are retried). The
        whole request, body included, must be done within ``request_deadline``; one that is not fails at once."""
        host = urlsplit(url).netloc
        reason = ""
        for attempt in range(1, self.politeness.max_tries + 1):
            self._wait_turn(host)
            retry_wait: float | None = None
            self._network.until = time.monotonic() + self.politeness.request_deadline
            try:
                with self._get(url, headers or {}) as r:
                    if r.status_code == 200:
                        self._check(r, target, profile)
                    body = self._read(r)  # read even error bodies, so the connection can be reused
                    if r.status_code != 429 and r.status_code < 500:
                        return _Response(r.status_code, dict(r.headers), body)
                    reason = f"HTTP {r.status_code}"
                    retry_wait = self._retry_after(r.headers.get("retry-after"))
                    if retry_wait is not None and retry_wait > self.politeness.max_retry_after:
                        raise FetchFailed(f"{reason}, Retry-After {retry_wait:.0f} s is too long; try later")
            except httpx.TimeoutException as exc:
                if self._network.expired():
                    raise FetchFailed(f"no whole response within {self.politeness.request_deadline:g} s "
                                      "(the server is too slow); not retried") from None
                reason = f"{type(exc).__name__.replace('Timeout', ' timeout').lower()}"
            except httpx.TransportError as exc:
                reason = f"connection error ({exc or type(exc).__name__})"
            finally:
                self._network.until = None
                self._hold(host, self._delay(url))
            if attempt < self.politeness.max_tries:
                self._hold(host, retry_wait if retry_wait is not None else self._backoff(attempt))
        raise FetchFailed(f"{reason} after {self.politeness.max_tries} tries")

    @contextlib.contextmanager
    def _get(self, url: str, headers: dict[str, str]) -> Iterator[httpx.Response]:
        """The response to one GET of ``url`` (its body still to be read), whatever its status."""
        request = self.client.build_request("GET", url, headers=headers)
        response = self._transport.handle_request(request)
        response.request = request
        try:
            yield response
        finally:
            response.close()

    @staticmethod
    def _retry_after(value: str | None) -> float | None:
        if not value:
            return None
        value = value.strip()
        if value.isdigit():
            return float(value)
        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError):
            return None

    def _check(self, r: httpx.Response, target: Target | None, profile: SiteProfile | None) -> None:
        limit = self.politeness.max_bytes
        length = r.headers.get("content-length", "")
        if length.isdigit() and int(length) > limit:
            raise FetchFailed(f"response too large ({int(length) / 1e6:.1f} MB, limit {limit / 1e6:g} MB)")
        if profile is not None and target is not None:
            why = profile.reject(target, r.headers.get("content-type", ""))
            if why:
                raise FetchFailed(why)

    def _read(self, r: httpx.Response) -> bytes:
        chunks: list[bytes] = []
        size = 0
        for chunk in r.iter_bytes():
            if self._network.expired():  # bytes keep coming, but too slowly
                raise httpx.ReadTimeout("request deadline passed")
            size += len(chunk)
            if size > self.politeness.max_bytes:
                raise FetchFailed(f"response too large (over {self.politeness.max_bytes / 1e6:g} MB)")
            chunks.append(chunk)
        return b"".join(chunks)

    def fetch(self, target: Target, profile: SiteProfile | None, cache: SiteCache) -> tuple[str, CacheEntry, bytes]:
        """Fetch ``target`` (conditionally when cached) following in-site redirects.
        Returns ("fetched" | "not-modified", entry, body); raises FetchFailed or RobotsDisallowed."""
        cached = cache.get(target.url)
        cached_body = cache.body(cached) if cached else None
        headers = {}
        if cached is not None and cached_body is not None:  # validators go back as sent: only ASCII ones can
            if cached.etag and cached.etag.isascii():
                headers["If-None-Match"] = cached.etag
            if cached.last_modified and cached.last_modified.isascii():
                headers["If-Modified-Since"] = cached.last_modified
        url = target.url
        for _ in range(MAX_REDIRECTS + 1):
            if not self.allowed(url):
                raise RobotsDisallowed(url)
            response = self._request(url, target, profile=profile, headers=headers)
            if response.status in REDIRECT_CODES:
                location = response.headers.get("location")
                if not location:
                    raise FetchFailed(f"HTTP {response.status} without a Location header")
                url = _redirect_target(url, location)
                if not url.startswith(self.base):
                    raise FetchFailed(f"redirect to {url} leaves {self.base}; not followed")
                continue
            now = time.time()
            if response.status == 304 and cached is not None and cached_body is not None:
                entry = replace(cached, checked_at=now, etag=response.headers.get("etag", cached.etag),
                                last_modified=response.headers.get("last-modified", cached.last_modified))
                cache.update(entry)
                return "not-modified", entry, cached_body
            if response.status != 200:
                raise FetchFailed(f"HTTP {response.status}")
            content_type = response.headers.get("content-type", "")
            entry = cache.put(CacheEntry(
                url=target.url, final_url=url, role=target.role, status=200, headers=response.headers,
                fetched_at=now, checked_at=now, content_hash="", size=0, etag=response.headers.get("etag"),
                last_modified=response.headers.get("last-modified"), content_type=content_type,
                charset=http_charset(content_type), meta_charset=meta_charset(response.body)), response.body)
            return "fetched", entry, response.body
        raise FetchFailed(f"more than {MAX_REDIRECTS} redirects")


def _redirect_target(url: str, location: str) -> str:
    """The canonical URL a redirect from ``url`` names; FetchFailed when it is no http(s) URL."""
    try:
        target = canonical_url(urljoin(url, location.strip()))
        scheme, host = urlsplit(target).scheme, urlsplit(target).hostname
    except ValueError:  # an unparsable Location (``http://[::1``)
        raise FetchFailed(f"redirect to {location!r}, not a valid URL; not followed") from None
    if scheme not in ("http", "https") or not host:
        raise FetchFailed(f"redirect to {target[:200]!r}, not an http(s) URL; not followed")
    return target


def crawl(site: str, args: list[str], *, kb_dir: Path | str, base_url: str | None = None, depth: int | None = None,
          politeness: Politeness = Politeness(),
          on_progress: Callable[[CrawlReport, str], None] | None = None) -> CrawlReport:
    """Crawl ``site`` (a :data:`ingest.net.sites.PROFILES` name) from ``args`` (titles, URLs or versions, as the profile
    reads them) into the cache of ``kb_dir``. ``on_progress(report, url)`` is called after each URL.
    Raises :class:`CrawlInterrupted` on Ctrl-C, KbError on bad arguments."""
    if site not in PROFILES:
        raise KbError(f"{site}: unknown site; choose one of {', '.join(sorted(PROFILES))}")
    profile = PROFILES[site]
    for url in [base_url or "", *args]:
        refuse_credentials(url)
    base = normalise_base(base_url or profile.default_base)
    seeds = profile.seeds(base, list(args))
    cache = SiteCache(Path(kb_dir), site)
    spec = {"site": site, "base": base, "seeds": [s.url for s in seeds], "depth": depth}
    state = cache.load_state()
    if not (state and state.spec == spec and state.finished_at is None):
        state = CrawlState(spec, time.time())
        cache.save_state(state)
    report = CrawlReport(site)
    queue = deque(seeds)
    seen = {s.url for s in seeds}
    client = PoliteClient(politeness, base, report)
    listings = 0
    try:
        while queue:
            report.pending = len(queue)
            target = queue.popleft()
            if target.role == LISTING:
                listings += 1
                if listings > politeness.max_listing_pages:
                    report.failed[target.url] = (f"more than {politeness.max_listing_pages} listing pages in one crawl "
                                                 "(a listing that never ends?); the rest not fetched")
                    continue
            body, final_url = _visit(target, profile, cache, client, state, report)
            if body is None and _not_found(report.failed.get(target.url)) and (target.fallbacks or target.tried):
                _try_next_name(target, report, queue, seen)
            if body is not None:
                try:
                    found = profile.discover(target, final_url, body, base, depth)
                except KbError as exc:
                    report.failed[target.url] = str(exc)
                    found = []
                for new in found:
                    if new.url not in seen and new.url.startswith(base):
                        seen.add(new.url)
                        queue.append(new)
            report.pending = len(queue)
            if on_progress:
                on_progress(report, target.url)
    except KeyboardInterrupt:
        raise CrawlInterrupted(report) from None
    finally:
        client.close()
    cache.save_state(CrawlState(spec, state.started_at, time.time()))
    return report


def _not_found(failure: str | None) -> bool:
    return failure is not None and failure.startswith(("HTTP 404", "HTTP 410"))


def _try_next_name(target: Target, report: CrawlReport, queue: deque, seen: set[str]) -> None:
    """A target not found: its next fallback is fetched next; the last one's failure names every URL tried."""
    failure = report.failed.pop(target.url)
    tried = (*target.tried, target.url)
    if target.fallbacks:
        following = replace(target, url=target.fallbacks[0], fallbacks=target.fallbacks[1:], tried=tried)
        seen.add(following.url)
        queue.appendleft(following)
        return
    names = ", ".join(url.rsplit("/", 1)[-1] for url in tried)
    report.failed[tried[0]] = f"{failure} for each of the {len(tried)} names it can have (tried {names})"


def _visit(target: Target, profile: SiteProfile, cache: SiteCache, client: PoliteClient, state: CrawlState,
           report: CrawlReport) -> tuple[bytes | None, str]:
    entry = cache.get(target.url)
    if entry and entry.checked_at >= state.started_at:
        body = cache.body(entry)
        if body is not None:
            report.resumed.append(target.url)
            return body, entry.final_url
    try:
        outcome, entry, body = client.fetch(target, profile, cache)
    except RobotsDisallowed:
        report.robots_skipped.append(target.url)
        return None, target.url
    except FetchFailed as exc:
        report.failed[target.url] = str(exc)
        return None, target.url
    (report.fetched if outcome == "fetched" else report.not_modified).append(target.url)
    return body, entry.final_url


def fetch_url(url: str, *, kb_dir: Path, politeness: Politeness | None = None) -> bytes:
    """Fetch one URL politely (robots.txt, conditional request against the cache) and return its bytes as a parser
    should see them (see :func:`ingest.net.cache.bytes_for_parser`), cached under the kb folder ``kb_dir``. Raises
    KbError naming the URL on failure."""
    refuse_credentials(url)
    url = canonical_url(url)
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise KbError(f"{url}: only http and https URLs can be fetched")
    profile = profile_for_url(url)
    cache = SiteCache(Path(kb_dir), profile.name if profile else parts.netloc.replace(":", "_"))
    client = PoliteClient(politeness or Politeness(), f"{parts.scheme}://{parts.netloc}/")
    try:
        _, entry, body = client.fetch(Target(url, PAGE), profile, cache)
    except RobotsDisallowed:
        raise KbError(f"{url}: disallowed by the site's robots.txt") from None
    except FetchFailed as exc:
        raise KbError(f"{url}: {exc}") from None
    finally:
        client.close()
    return bytes_for_parser(entry, body)
