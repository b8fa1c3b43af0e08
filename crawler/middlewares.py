"""Middlewares that keep a focused crawl out of traps and away from non-HTML downloads."""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Iterable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from scrapy import Request, Spider, signals
from scrapy.crawler import Crawler
from scrapy.downloadermiddlewares.robotstxt import (
    RobotsTxtMiddleware as ScrapyRobotsTxtMiddleware,
)
from scrapy.exceptions import IgnoreRequest, StopDownload
from scrapy.http import Response
from scrapy.statscollectors import StatsCollector
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.defer import Deferred
from w3lib.url import safe_url_string

log = logging.getLogger(__name__)


def scaleout_redis(settings: Any) -> Any:
    """The Redis client of a scrapy-redis scale-out (``TOPICRAWL_REDIS_URL`` set, so
    ``REDIS_URL`` and the scrapy-redis scheduler are), else None: state that every worker
    of one crawl must share lives there."""
    scheduler = str(settings.get("SCHEDULER", ""))
    if settings.get("REDIS_URL") and scheduler.startswith(("scrapy_redis", "crawler.scheduler")):
        import redis

        return redis.Redis.from_url(settings.get("REDIS_URL"))
    return None


#: JOBDIR file of the requests sent to download: ``fingerprint URL [r]`` lines (r: a
#: redirect's target), flushed as they are sent
SENT_FILE = "topicrawl-fetched.txt"
#: request meta key: the URL of a request sent again after a killed crawl (FetchOnceMiddleware
#: lets that URL pass, not the redirects it leads to)
RECOVERED = "topicrawl_recovered"


def read_sent(jobdir: str | Path | None) -> Iterator[tuple[str, str | None, bool]]:
    """``(fingerprint, URL, redirect target?)`` of each request a JOBDIR crawl sent to
    download, in order (the URL is None in files of earlier versions)."""
    path = Path(jobdir) / SENT_FILE if jobdir else None
    if path is None or not path.exists():
        return
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            parts = line.split()
            if parts:
                yield parts[0], parts[1] if len(parts) > 1 else None, parts[2:] == ["r"]


def read_sent_urls(jobdir: str | Path | None) -> list[str]:
    """The URLs sent to download in a JOBDIR crawl, in order, without redirect targets."""
    return list(dict.fromkeys(url for _, url, hop in read_sent(jobdir) if url and not hop))


def query_variant_budget(base: int, content: int, wasted: int, *, per_page: int) -> int:
    """How many distinct query strings one path may be requested with: ``base``, plus
    ``per_page`` for every page fetched under the path with a main text of its own
    (``content``: at least :data:`MIN_CONTENT_CHARS`, new to the path), less ``per_page``
    for every other page fetched there (``wasted``: no main text, or a text seen before),
    never below ``base``.

    A trap (a calendar, an endless feed, session ids, sort orders) yields pages without a text
    of their own, so its budget stays ``base``; a path whose pages keep bringing new text
    (``/article.php?id=N``) earns room to be crawled further.
    """
    return base + per_page * max(0, content - wasted)


#: the shortest main text (non-space characters) that counts as a page's own content for the
#: trap guard's budget (a calendar day's or a list page's main text is a breadcrumb)
MIN_CONTENT_CHARS = 100


def text_digest(text: str) -> str:
    """A short digest of a page's main text, whitespace-insensitive (the trap guard's
    "new to this path" test)."""
    return hashlib.blake2b("".join(text.split()).encode("utf-8"), digest_size=8).hexdigest()


def redis_errors(client: Any) -> tuple[type[Exception], ...]:
    """The exceptions of an unreachable Redis (none without a client)."""
    if client is None:
        return ()
    from redis import RedisError

    return (RedisError,)


class TrapGuardMiddleware:
    """Drops requests that look like crawler traps (calendars, session ids, loops).

    A path may be requested with at most ``max_query_variants`` distinct query strings, plus
    ``query_variants_per_page`` more for each page fetched there with a main text new to the
    path, less as many for each page without (:func:`query_variant_budget`); URLs longer than ``max_url_length`` or repeating one path
    segment more than ``max_segment_repeats`` times are dropped. Each drop is counted in
    the stats.

    Scale-out: the query strings admitted per path and the text digests of its pages are
    Redis sets, its wasted pages a counter (``TOPICRAWL_TRAP_KEY``; ``SADD`` and ``SCARD``
    in one transaction), so the limit holds for all workers together.
    When Redis does not answer, the worker falls back to its own count (logged, counted as
    ``topicrawl/links/trap_guard_unshared``).
    """

    def __init__(
        self,
        stats: StatsCollector,
        *,
        max_query_variants: int = 30,
        query_variants_per_page: int = 0,
        max_url_length: int = 512,
        max_segment_repeats: int = 3,
        jobdir: str | None = None,
        redis: Any = None,
        key: str = "topicrawl:trap",
    ):
        self.stats = stats
        self.state_file = Path(jobdir) / "topicrawl-trapguard.json" if jobdir else None
        #: JOBDIR journal of the admitted query strings (``host/path<TAB>query`` lines,
        #: flushed as they are admitted: a killed crawl keeps them too)
        self.journal_file = Path(jobdir) / "topicrawl-trapguard.txt" if jobdir else None
        self.journal: Any = None
        self.max_query_variants = max_query_variants
        self.query_variants_per_page = query_variants_per_page
        #: per path, the digests of the main texts fetched there, and the count of pages
        #: without a text of their own (the budget's growth, :func:`query_variant_budget`)
        self._content: dict[str, set[str]] = defaultdict(set)
        self._wasted: Counter[str] = Counter()
        self.max_url_length = max_url_length
        self.max_segment_repeats = max_segment_repeats
        self._variants: dict[str, set[str]] = defaultdict(set)
        self.redis = redis  # a redis.Redis client: the variants admitted by all workers
        self.redis_errors = redis_errors(redis)
        self.key = key

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> TrapGuardMiddleware:
        s = crawler.settings
        mw = cls(
            crawler.stats,
            max_query_variants=s.getint("TOPICRAWL_MAX_QUERY_VARIANTS"),
            query_variants_per_page=s.getint("TOPICRAWL_QUERY_VARIANTS_PER_PAGE"),
            max_url_length=s.getint("TOPICRAWL_MAX_URL_LENGTH"),
            max_segment_repeats=s.getint("TOPICRAWL_MAX_SEGMENT_REPEATS"),
            jobdir=s.get("JOBDIR"),
            redis=scaleout_redis(s),
            key=s.get("TOPICRAWL_TRAP_KEY", "topicrawl:%(spider)s:trap")
            % {"spider": crawler.spidercls.name},
        )
        crawler.signals.connect(mw.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(mw.spider_closed, signal=signals.spider_closed)
        return mw

    def spider_opened(self, spider: Spider) -> None:
        """A resumed crawl (JOBDIR) keeps the query variants it has already seen. The spider
        gets a reference (``spider.trap_guard``) to test its links before re-queueing."""
        if hasattr(spider, "trap_guard"):
            spider.trap_guard = self
        if self.state_file and self.state_file.exists():  # written by earlier versions
            saved = json.loads(self.state_file.read_text(encoding="utf-8"))
            for key, queries in saved.items():
                self._variants[key].update(queries)
        if self.journal_file:
            if self.journal_file.exists():
                with self.journal_file.open(encoding="utf-8") as fh:
                    for line in fh:
                        key, sep, query = line.rstrip("\n").partition("\t")
                        if sep and query == "#":  # never a query: a wasted page
                            self._wasted[key] += 1
                        elif sep and query.startswith("#"):  # a main text's digest
                            self._content[key].add(query[1:])
                        elif sep:
                            self._variants[key].add(query)
            self.journal_file.parent.mkdir(parents=True, exist_ok=True)
            self.journal = self.journal_file.open("a", encoding="utf-8")

    def spider_closed(self, spider: Spider) -> None:
        if self.journal is not None:
            self.journal.close()
            self.journal = None

    def allowed(self, url: str) -> str | None:
        """None when ``url`` may be followed, else the reason it is a trap."""
        if len(url) > self.max_url_length:
            return "url_length"
        parts = urlsplit(url)
        segments = [s for s in parts.path.split("/") if s]
        if segments and max(segments.count(s) for s in segments) > self.max_segment_repeats:
            return "segment_repeats"
        if parts.query:
            key = f"{parts.netloc}{parts.path}"
            seen = self._variants[key]
            if parts.query not in seen:
                full = self._shared_full(key, parts.query) if self.redis is not None else None
                if full is None:  # this worker's own count
                    full = len(seen) >= self.budget(key)
                if full:
                    return "query_variants"
                seen.add(parts.query)
                if self.journal is not None:
                    self.journal.write(f"{key}\t{parts.query}\n")
                    self.journal.flush()
        return None

    def _shared_full(self, path: str, query: str) -> bool | None:
        """Whether the crawl has admitted its limit of other queries for ``path`` (admitting
        ``query`` when not); None when Redis does not answer."""
        key = f"{self.key}:{path}"
        try:
            pipe = self.redis.pipeline(transaction=True)
            pipe.sadd(key, query)
            pipe.scard(key)
            pipe.scard(f"{self.key}:content:{path}")
            pipe.get(f"{self.key}:wasted:{path}")
            added, size, content, wasted = pipe.execute()
            budget = query_variant_budget(self.max_query_variants, content, int(wasted or 0),
                                          per_page=self.query_variants_per_page)  # fmt: skip
            if added and size > budget:
                self.redis.srem(key, query)
                return True
            return False
        except self.redis_errors as exc:
            self.stats.inc_value("topicrawl/links/trap_guard_unshared")
            log.warning("trap guard's Redis sets unavailable (%s): this worker counts alone", exc)
            return None

    def budget(self, path: str) -> int:
        """This worker's query-string budget of ``path`` (``host/path``)."""
        return query_variant_budget(
            self.max_query_variants,
            len(self._content.get(path, ())),
            self._wasted[path],
            per_page=self.query_variants_per_page,
        )

    def observe_page(self, item: Any) -> None:
        """An item from the spider (a fetched page): under a query-string path, a main text
        new to the path raises the path's budget, any other page lowers it (shared in Redis
        in a scale-out)."""
        parts = urlsplit(item.get("url") or "")
        if not self.query_variants_per_page or not parts.query:
            return
        key = f"{parts.netloc}{parts.path}"
        text = item.get("text") or ""
        digest = ""  # a wasted page
        if sum(not c.isspace() for c in text[: MIN_CONTENT_CHARS * 4]) >= MIN_CONTENT_CHARS:
            digest = text_digest(text)
            if digest in self._content[key]:
                digest = ""
        if digest:
            self._content[key].add(digest)
        else:
            self._wasted[key] += 1
        if self.journal is not None:  # "#digest" (never a query string: '#' ends a URL's)
            self.journal.write(f"{key}\t#{digest}\n")
            self.journal.flush()
        if self.redis is not None:
            try:
                if digest:
                    self.redis.sadd(f"{self.key}:content:{key}", digest)
                else:
                    self.redis.incr(f"{self.key}:wasted:{key}")
            except self.redis_errors as exc:
                self.stats.inc_value("topicrawl/links/trap_guard_unshared")
                log.warning("trap guard's Redis sets unavailable (%s): this worker counts alone", exc)

    def _filter(self, results: Iterable[Any]) -> Iterable[Any]:
        for obj in results:
            if not isinstance(obj, Request):
                if hasattr(obj, "get"):  # a page item
                    self.observe_page(obj)
            else:
                reason = self.allowed(obj.url)
                if reason:
                    self.stats.inc_value(f"topicrawl/links/trap/{reason}")
                    log.debug("trap guard dropped %s (%s)", obj.url, reason)
                    continue
            yield obj

    def process_spider_output(self, response: Response, result: Iterable[Any]):
        return self._filter(result)

    async def process_spider_output_async(
        self, response: Response, result: AsyncIterator[Any]
    ) -> AsyncIterator[Any]:
        async for obj in result:
            for kept in self._filter([obj]):
                yield kept

    async def process_start(self, start: AsyncIterator[Any]) -> AsyncIterator[Any]:
        async for obj in start:
            yield obj


class NonHtmlGuardMiddleware:
    """Counts and skips responses that are neither HTML nor a document the crawl reads.

    The body download is stopped as soon as the headers show another Content-Type (images,
    archives …). Documents (PDF, .docx: ``topicrawl.documents``, when
    ``TOPICRAWL_DOCUMENTS_ENABLED``) pass up to ``TOPICRAWL_MAX_DOCUMENT_BYTES``; a larger
    one is stopped and counted (``topicrawl/documents/too_large``). robots.txt requests and
    the sitemaps and feeds of discovery (``crawler.discovery``) are left alone.
    """

    def __init__(
        self,
        stats: StatsCollector,
        *,
        html_types: Iterable[str],
        documents: bool = False,
        max_document_bytes: int = 0,
    ):
        self.stats = stats
        self.html_types = tuple(t.lower() for t in html_types)
        self.documents = documents
        self.max_document_bytes = max_document_bytes

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> NonHtmlGuardMiddleware:
        s = crawler.settings
        mw = cls(
            crawler.stats,
            html_types=s.getlist("TOPICRAWL_HTML_TYPES"),
            documents=s.getbool("TOPICRAWL_DOCUMENTS_ENABLED", True),
            max_document_bytes=s.getint("TOPICRAWL_MAX_DOCUMENT_BYTES", 10 * 1024 * 1024),
        )
        crawler.signals.connect(mw.headers_received, signal=signals.headers_received)
        return mw

    def document(self, headers: Any, url: str) -> str | None:
        """The document format of a response the crawl reads (None: not a document)."""
        if not self.documents:
            return None
        from topicrawl.documents import document_format

        raw = headers.get(b"Content-Type") or b""
        return document_format(raw.decode("latin-1"), url)

    def too_large(self, size: int) -> bool:
        return bool(self.max_document_bytes) and size > self.max_document_bytes

    def _content_type(self, headers: Any) -> str:
        raw = headers.get(b"Content-Type") or b""
        return raw.decode("latin-1").split(";")[0].strip().lower()

    def is_html(self, content_type: str) -> bool:
        return not content_type or content_type.startswith(self.html_types)

    @staticmethod
    def _exempt(request: Request) -> bool:
        return (
            bool(request.meta.get("dont_obey_robotstxt"))
            or bool(request.meta.get("topicrawl_discovery"))
            or request.url.endswith("/robots.txt")
        )

    def headers_received(self, headers: Any, body_length: int, request: Request, spider: Spider):
        if self._exempt(request) or self.is_html(self._content_type(headers)):
            return
        if self.document(headers, request.url) is None or self.too_large(body_length or 0):
            raise StopDownload(fail=False)

    def process_response(self, request: Request, response: Response):
        if self._exempt(request) or 300 <= response.status < 400:
            return response
        ctype = self._content_type(response.headers)
        fmt = self.document(response.headers, response.url) if not self.is_html(ctype) else None
        if fmt is not None:
            stopped = "download_stopped" in (response.flags or [])
            if stopped or self.too_large(len(response.body)):
                self.stats.inc_value("topicrawl/documents/too_large")
                raise IgnoreRequest(
                    f"{fmt} larger than TOPICRAWL_MAX_DOCUMENT_BYTES={self.max_document_bytes}"
                    f" from {response.url}"
                )
            return response
        if not self.is_html(ctype):
            kind = re.sub(r"[^a-z0-9]+", "_", ctype) or "unknown"
            self.stats.inc_value("topicrawl/non_html")
            self.stats.inc_value(f"topicrawl/non_html/{kind}")
            raise IgnoreRequest(f"non-HTML response ({ctype}) from {response.url}")
        return response


class RobotsTxtMiddleware(ScrapyRobotsTxtMiddleware):
    """Scrapy's robots.txt middleware, safe for requests that wait on the same robots.txt.

    With the asyncio reactor, Scrapy awaits the per-host robots.txt Deferred through
    ``Deferred.asFuture``, whose callback returns None: the first waiter gets the parser and
    every later one gets None, which means "no robots.txt, allow everything". A resumed crawl
    (JOBDIR) starts with many queued requests for one host, and disallowed pages slipped
    through. Here every waiter gets its own Deferred, fed by a callback that passes the
    result on unchanged.
    """

    async def robot_parser(self, request: Request) -> Any:
        netloc = urlparse_cached(request).netloc
        pending = self._parsers.get(netloc)
        if isinstance(pending, Deferred):
            waiter: Deferred[Any] = Deferred()

            def relay(result: Any) -> Any:
                waiter.callback(result)
                return result

            pending.addBoth(relay)
            return await maybe_deferred_to_future(waiter)
        return await super().robot_parser(request)


class FetchOnceMiddleware:
    """Never downloads one URL twice: the guard behind link re-prioritisation.

    The topic spider enqueues a URL again (``dont_filter=True``) when it finds it later with
    a clearly higher priority (``TOPICRAWL_REQUEUE_MARGIN``); the older, lower entry stays in
    the queue. This middleware remembers the fingerprint (Scrapy's request fingerprint:
    canonical URL, method, body) of every request sent to download, redirect targets
    included, and drops any later request with the same fingerprint (``IgnoreRequest``,
    counted as ``topicrawl/links/requeue_superseded``). Retries of a failed download
    (``retry_times`` in meta) and robots.txt requests pass. With JOBDIR the fingerprints are
    appended to ``JOBDIR/topicrawl-fetched.txt`` as they are sent (like Scrapy's
    ``requests.seen``), so a resumed or killed crawl keeps them.

    Scale-out (``TOPICRAWL_REDIS_URL``): the fingerprints live in one Redis set shared by
    every worker (``TOPICRAWL_FETCHED_KEY``; ``SADD`` says whether a worker sent the URL
    before), so a URL re-queued in the shared frontier is downloaded once in all. When Redis
    does not answer, the request is let through (at worst a page is downloaded twice, never
    lost), logged and counted as ``topicrawl/links/fetch_once_unavailable``.
    """

    def __init__(
        self,
        stats: StatsCollector,
        fingerprint: Any,
        *,
        jobdir: str | None = None,
        redis: Any = None,
        key: str = "topicrawl:fetched",
        bloom: Any = None,
    ):
        self.stats = stats
        self.fingerprint = fingerprint
        self.redis = redis  # a redis.Redis client: the shared set of sent fingerprints
        #: crawler.seen.RedisBloomFilter instead of the set (TOPICRAWL_SEEN_BLOOM): bounded
        #: memory in Redis and none in the worker
        self.bloom = bloom
        self.redis_errors = redis_errors(redis)
        self.key = key
        self.sent: set[str] = set()
        self.file: Any = None
        if jobdir:
            self.sent.update(fp for fp, _, _ in read_sent(jobdir))
            path = Path(jobdir) / SENT_FILE
            path.parent.mkdir(parents=True, exist_ok=True)
            self.file = path.open("a", encoding="utf-8")

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> FetchOnceMiddleware:
        s = crawler.settings
        key = s.get("TOPICRAWL_FETCHED_KEY", "topicrawl:%(spider)s:fetched")
        key = key % {"spider": crawler.spidercls.name}
        redis = scaleout_redis(s)
        from crawler.seen import bloom_from_settings

        mw = cls(
            crawler.stats,
            crawler.request_fingerprinter.fingerprint,
            jobdir=s.get("JOBDIR"),
            redis=redis,
            key=key,
            bloom=bloom_from_settings(redis, key, s),
        )
        crawler.signals.connect(mw.spider_closed, signal=signals.spider_closed)
        return mw

    def spider_closed(self, spider: Spider) -> None:
        if self.file:
            self.file.close()
            self.file = None

    def seen(self, request: Request) -> bool:
        """True when ``request``'s URL was sent before; otherwise remember it and say False."""
        if (
            request.url.endswith("/robots.txt")
            or request.meta.get("retry_times")
            or request.meta.get(RECOVERED) == request.url  # not its redirect targets
        ):
            return False
        fp = self.fingerprint(request).hex()
        if fp in self.sent:
            return True
        if self.redis is not None:
            try:
                if self.bloom is not None:  # probably sent before: at most p of new URLs
                    return not self.bloom.add(fp)
                first = self.redis.sadd(self.key, fp) == 1
            except self.redis_errors as exc:
                self.stats.inc_value("topicrawl/links/fetch_once_unavailable")
                log.warning("fetch-once set in Redis unavailable (%s): %s passes", exc,
                               request.url)  # fmt: skip
                return False
            if not first:
                self.sent.add(fp)
                return True
        self.sent.add(fp)
        if self.file:  # fingerprint, URL, and whether it is a redirect's target
            hop = " r" if request.meta.get("redirect_urls") else ""
            self.file.write(f"{fp} {safe_url_string(request.url)}{hop}\n")
            self.file.flush()
        return False

    def process_request(self, request: Request) -> None:
        if self.seen(request):
            self.stats.inc_value("topicrawl/links/requeue_superseded")
            raise IgnoreRequest(f"already sent to download: {request.url}")
        return None


class RequestDeferred(IgnoreRequest):
    """A request put back into the frontier with a lower priority (not an error)."""


class LinkRescoreMiddleware:
    """Re-ranks the frontier lazily as the crawl learns (issue 10, calibrated mode).

    A link's priority is fixed when it is queued, but the online link model and the page
    model keep learning (:mod:`relevance.learning`): a section that keeps yielding off-topic
    pages should sink, even for links queued before that was known. Re-scoring the whole
    frontier at every update would cost O(frontier); instead each request is scored again
    with the current models when it leaves the queue (``scorer.rescore``: a dictionary
    lookup per feature), and when its score fell by more than ``TOPICRAWL_RESCORE_MARGIN``
    it goes back into the queue with the new priority (``topicrawl/links/deferred``) — at most
    ``TOPICRAWL_RESCORE_MAX`` times, so nothing waits forever. The request re-enters through
    the scheduler, so with the scrapy-redis scale-out it goes back into the shared queue.
    Requests without a learned breakdown (seeds, the paper's scorer) pass untouched.
    """

    def __init__(self, crawler: Crawler, *, margin: float = 0.1, max_deferrals: int = 2):
        self.crawler = crawler
        self.margin, self.max_deferrals = margin, max_deferrals

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> LinkRescoreMiddleware:
        s = crawler.settings
        return cls(crawler, margin=s.getfloat("TOPICRAWL_RESCORE_MARGIN", 0.1),
                   max_deferrals=s.getint("TOPICRAWL_RESCORE_MAX", 2))  # fmt: skip

    def process_request(self, request: Request) -> None:
        from relevance.linkscore import quantize

        rescore = getattr(getattr(self.crawler.spider, "scorer", None), "rescore", None)
        meta = request.meta
        old = meta.get("link_score")
        deferred = meta.get("topicrawl_deferred", 0)
        if rescore is None or not isinstance(old, dict) or deferred >= self.max_deferrals:
            return None
        if "features" not in old or meta.get("retry_times") or meta.get(RECOVERED):
            return None
        new = rescore(old, meta.get("anchor") or "")
        if new is None or new >= float(old.get("p", 0.0)) - self.margin:
            return None
        link_score = {**old, "p": round(new, 4), "score": new, "rescored_from": old.get("p")}
        again = request.replace(
            priority=quantize(new),
            dont_filter=True,
            meta={**meta, "link_score": link_score, "topicrawl_deferred": deferred + 1},
        )
        self.crawler.stats.inc_value("topicrawl/links/deferred")
        self.crawler.engine.crawl(again)
        raise RequestDeferred(f"deferred with priority {new:.3f}: {request.url}")
