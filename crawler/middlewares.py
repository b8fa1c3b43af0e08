"""Middlewares that keep a focused crawl out of traps and away from non-HTML downloads."""

from __future__ import annotations

import hashlib
import json
import logging
import re
import time
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Iterable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

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

from crawler.lease import LEASE, LOST

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


class CookiesWhenEnabled:
    """Scrapy's ``CookiesMiddleware`` when ``COOKIES_ENABLED`` (the project's default is
    off), at its place in ``DOWNLOADER_MIDDLEWARES_BASE``; off, its module is not imported
    (it imports tldextract and requests: ≈ 4 MB of the crawl process)."""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Any:
        from scrapy.exceptions import NotConfigured

        if not crawler.settings.getbool("COOKIES_ENABLED"):
            raise NotConfigured("COOKIES_ENABLED is off")
        from scrapy.downloadermiddlewares.cookies import CookiesMiddleware

        return CookiesMiddleware.from_crawler(crawler)


#: JOBDIR file of the requests sent to download: ``fingerprint URL [r]`` lines (r: a
#: redirect's target), flushed as they are sent
SENT_FILE = "topicrawl-fetched.txt"
#: request meta key: the URL of a request sent again after a killed crawl (FetchOnceMiddleware
#: lets that URL pass, not the redirects it leads to)
RECOVERED = "topicrawl_recovered"


#: JOBDIR file of the requests the durable frontier handed to the engine
#: (:class:`crawler.queues.DurablePriorityQueue`), as they leave it: the engine starts the
#: downloader middlewares one event-loop turn later, so a kill in between left requests that
#: were out of the queue and not yet in :data:`SENT_FILE` (lost on resume)
POPPED_FILE = "topicrawl-popped.txt"


def sent_line(fingerprint: str, request: Request) -> str:
    """The line of :data:`SENT_FILE` and :data:`POPPED_FILE` for ``request``: its
    fingerprint (hex), its URL, and ``r`` when it is a redirect's target."""
    hop = " r" if request.meta.get("redirect_urls") else ""
    return f"{fingerprint} {safe_url_string(request.url)}{hop}\n"


def read_sent(jobdir: str | Path | None, name: str = SENT_FILE
              ) -> Iterator[tuple[str, str | None, bool]]:  # fmt: skip
    """``(fingerprint, URL, redirect target?)`` of each request a JOBDIR crawl sent to
    download (``name``: :data:`POPPED_FILE`, handed out by its frontier), in order (the URL
    is None in files of earlier versions)."""
    path = Path(jobdir) / name if jobdir else None
    if path is None or not path.exists():
        return
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            parts = line.split()
            if parts:
                yield parts[0], parts[1] if len(parts) > 1 else None, parts[2:] == ["r"]


def read_sent_urls(jobdir: str | Path | None) -> list[str]:
    """The URLs sent to download in a JOBDIR crawl, or handed out by its frontier, in order,
    without redirect targets."""
    return list(dict.fromkeys(url for name in (SENT_FILE, POPPED_FILE)
                              for _, url, hop in read_sent(jobdir, name)
                              if url and not hop))  # fmt: skip


def query_variant_budget(base: int, content: int, wasted: int, *, per_page: int) -> int:
    """How many distinct variants (query strings of one path, paths of one path shape) a
    key may be requested with: ``base``, plus ``per_page`` for every page fetched under the
    key with a main text of its own (``content``: at least :data:`MIN_CONTENT_CHARS`, new to
    the key), the first excepted, less ``per_page`` for every other page fetched there (``wasted``: no main text,
    or a text seen before), never below ``base``.

    A trap (a calendar, an endless feed, session ids, sort orders) yields pages without a text
    of their own, so its budget stays ``base``; a path whose pages keep bringing new text
    (``/article.php?id=N``, ``/2024/11/25/article-123.html``) earns room to be crawled further.
    The first text of a key earns nothing (:func:`text_credit`): a trap whose every page
    repeats one text stays at ``base`` while its later pages are still being fetched.
    """
    return base + per_page * max(0, text_credit(content, wasted))


def text_credit(content: int, wasted: int) -> int:
    """The texts of a key that count for it: its distinct main texts after the first, less
    its pages without one. Positive means the key's pages mostly bring texts of their own (a
    scheme of articles); the first text alone never does, since until a second page of the
    key is fetched nothing tells a site's one page from a trap's every page."""
    return content - 1 - wasted


#: the shortest main text (non-space characters) that counts as a page's own content for the
#: trap guard's budget (a calendar day's or a list page's main text is a breadcrumb)
MIN_CONTENT_CHARS = 100

_NUMBERS = re.compile(r"\d+")


def text_digest(text: str) -> str:
    """A short digest of a page's main text, insensitive to whitespace and to numbers (the
    trap guard's "new to this path" test: calendar days that differ only in their date
    are one text)."""
    return core_digest(text_core(text))


def core_digest(core: str) -> str:
    """:func:`text_digest` of a text already reduced by :func:`text_core`."""
    return hashlib.blake2b(core.encode("utf-8"), digest_size=8).hexdigest()


def text_core(text: str) -> str:
    """``text`` without whitespace and numbers: what :func:`text_digest` hashes and what must
    be :data:`MIN_CONTENT_CHARS` long to count as a page's own text (a link farm's page of
    numbered links is not)."""
    return _NUMBERS.sub("", "".join(text.split()))


_ALNUM = re.compile(r"[A-Za-z0-9]+")
#: the longest block of path segments whose repeats :func:`path_shape` collapses
MAX_REPEATED_BLOCK = 4
_HEX = re.compile(r"[0-9a-fA-F]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _token_shape(match: re.Match[str]) -> str:
    token = match.group()
    if token.isdigit():
        return "{n}"
    if any(c.isdigit() for c in token) and (
        len(token) >= 8 or (len(token) >= 4 and _HEX.fullmatch(token))
    ):
        return "{x}"  # an id: hex (3f9a0c1b, a UUID's parts) or long letters and digits
    return _NUMBERS.sub("{n}", token)


def path_shape(url: str) -> str | None:
    """The *shape* of ``url``'s path, the key of the trap guard's path budget: host + path
    (percent-decoded) with every number replaced by ``{n}`` and hex or letter-and-digit ids
    by ``{x}``, and runs of a repeated segment or block (up to :data:`MAX_REPEATED_BLOCK`
    segments) collapsed into one; None when the shape is the path itself (no number, no
    id, no repeat: nothing to group).

    ``/calendar/2024/11/25/`` and ``/calendar/N/`` become ``/calendar/{n}/``, an ever deeper
    ``/echo/1/2/3/…/`` stays ``/echo/{n}/``, ``/a/b/a/b/a/b/`` is ``/a/b/``; a legitimate
    scheme such as ``/news/2024/11/25/article-123.html`` (``/news/{n}/article-{n}.html``)
    is one shape too, not limited while its pages bring texts of their own
    (:meth:`VariantBudget.send`).
    """
    parts = urlsplit(url)
    path = _CONTROL.sub(" ", unquote(parts.path))
    out: list[str] = []
    for segment in path.split("/")[1:]:
        out.append(_ALNUM.sub(_token_shape, segment))
        for size in range(1, MAX_REPEATED_BLOCK + 1):  # a block repeated: /a/b/a/b/ -> /a/b/
            if len(out) >= 2 * size and out[-size:] == out[-2 * size : -size]:
                del out[-size:]
                break
    shaped = "/" + "/".join(out) if out else path
    if shaped == path:
        return None
    return f"{parts.netloc.lower()}{shaped}"


def redis_errors(client: Any) -> tuple[type[Exception], ...]:
    """The exceptions of an unreachable Redis (none without a client)."""
    if client is None:
        return ()
    from redis import RedisError

    return (RedisError,)


#: the budget of a key in Lua, as :func:`query_variant_budget` (KEYS[2] the key's content
#: set, KEYS[3] its wasted counter; ARGV base, per page); ``credit``: :func:`text_credit`
_LUA_BUDGET = """
local content = redis.call('SCARD', KEYS[2])
local wasted = tonumber(redis.call('GET', KEYS[3]) or '0')
local credit = content - 1 - wasted
local budget = tonumber(ARGV[B]) + tonumber(ARGV[B + 1]) * math.max(0, credit)
"""
#: admit a variant (KEYS[1] the key's admitted set; ARGV variant, base, per page): 1 when the
#: key is full (not admitted), else 0 (admitted now or before). One script: an add undone
#: after the fact (SADD, then SREM when over) let other workers admit the variant meanwhile
#: (a worker stopped between the two: a calendar trap got one page over its bound).
_ADMIT = (
    "local B = 2\n"
    + _LUA_BUDGET
    + """
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return 0 end
if redis.call('SCARD', KEYS[1]) >= budget then return 1 end
redis.call('SADD', KEYS[1], ARGV[1])
return 0
"""
)
#: count a request of a path shape sent (KEYS[1] the shape's sent counter; ARGV base, per
#: page): 1 when it may be sent (counted), 0 when the shape's budget is spent and its pages
#: mostly brought no text of their own.
_SEND_SHAPE = (
    "local B = 1\n"
    + _LUA_BUDGET
    + """
local sent = tonumber(redis.call('GET', KEYS[1]) or '0')
if credit <= 0 and sent + 1 > budget then return 0 end
redis.call('INCR', KEYS[1])
return 1
"""
)


class VariantBudget:
    """An adaptive budget per key (:func:`query_variant_budget`): the distinct query strings
    admitted for a path (:meth:`admit`), or the requests of a path shape sent to download
    (:meth:`send`).

    Per key, the variants admitted or requests sent, the digests of the main texts fetched
    there and the count of pages without a text of their own are kept in memory, appended to
    a JOBDIR journal (``key<TAB>variant``, ``key<TAB>@``, ``key<TAB>#digest``, ``key<TAB>#``
    lines, flushed as written: a killed crawl keeps them) and, in a scale-out, in Redis
    (``<prefix>:<key>`` and ``<prefix>:content:<key>`` sets, ``<prefix>:sent:<key>`` and
    ``<prefix>:wasted:<key>`` counters), so that the limit holds for all workers together.
    When Redis does not answer, the worker counts alone (logged, counted as
    ``topicrawl/links/trap_guard_unshared``).
    """

    def __init__(
        self,
        stats: StatsCollector,
        *,
        base: int,
        per_page: int = 0,
        journal_file: Path | None = None,
        redis: Any = None,
        prefix: str = "topicrawl:trap",
    ):
        self.stats = stats
        self.base, self.per_page = base, per_page
        self.journal_file = journal_file
        self.journal: Any = None
        self.redis = redis
        self.redis_errors = redis_errors(redis)
        self.prefix = prefix
        self.variants: dict[str, set[str]] = defaultdict(set)
        self.content: dict[str, set[str]] = defaultdict(set)
        self.wasted: Counter[str] = Counter()
        #: requests sent to download per key (:meth:`send`)
        self.sent: Counter[str] = Counter()
        self._scripts: dict[str, Any] = {}  # registered Lua scripts (a scale-out)

    def open(self) -> None:
        """Read the journal of a resumed crawl and open it for appending."""
        if self.journal_file is None:
            return
        if self.journal_file.exists():
            with self.journal_file.open(encoding="utf-8") as fh:
                for line in fh:
                    key, sep, value = line.rstrip("\n").partition("\t")
                    if sep and value == "#":  # never a variant: a wasted page
                        self.wasted[key] += 1
                    elif sep and value == "@":  # never a variant: a request sent
                        self.sent[key] += 1
                    elif sep and value.startswith("#"):  # a main text's digest
                        self.content[key].add(value[1:])
                    elif sep:
                        self.variants[key].add(value)
        self.journal_file.parent.mkdir(parents=True, exist_ok=True)
        self.journal = self.journal_file.open("a", encoding="utf-8")

    def close(self) -> None:
        if self.journal is not None:
            self.journal.close()
            self.journal = None

    def _write(self, key: str, value: str) -> None:
        if self.journal is not None:
            self.journal.write(f"{key}\t{value}\n")
            self.journal.flush()

    def budget(self, key: str) -> int:
        """This worker's budget of ``key``."""
        content = len(self.content.get(key, ()))
        return query_variant_budget(self.base, content, self.wasted[key], per_page=self.per_page)

    def admit(self, key: str, variant: str) -> bool:
        """Whether ``variant`` of ``key`` may be followed (admitting it when new)."""
        seen = self.variants[key]
        if variant in seen:
            return True
        full = self._shared_full(key, variant) if self.redis is not None else None
        if full is None:  # this worker's own count
            full = len(seen) >= self.budget(key)
        if full:
            return False
        seen.add(variant)
        self._write(key, variant)
        return True

    def _script(self, name: str, source: str) -> Any:
        """A Lua script of the shared budget, registered once."""
        if name not in self._scripts:
            self._scripts[name] = self.redis.register_script(source)
        return self._scripts[name]

    def _shared_full(self, key: str, variant: str) -> bool | None:
        """Whether the crawl has admitted its limit of other variants of ``key`` (admitting
        ``variant`` when not), in one script (:data:`_ADMIT`); None when Redis does not
        answer."""
        try:
            full = self._script("admit", _ADMIT)(
                keys=[f"{self.prefix}:{key}", f"{self.prefix}:content:{key}",
                      f"{self.prefix}:wasted:{key}"],
                args=[variant, self.base, self.per_page],
            )  # fmt: skip
            return bool(full)
        except self.redis_errors as exc:
            self._unshared(exc)
            return None

    def send(self, key: str) -> bool:
        """Whether a request under ``key`` may be sent to download now (counted when so):
        always while the pages fetched under the key mostly brought a text of their own
        (:func:`text_credit` > 0: a scheme of articles), else while fewer requests than its
        budget were sent."""
        if self.redis is not None:
            shared = self._shared_send(key)
            if shared is not None:
                return shared
        content, wasted = len(self.content.get(key, ())), self.wasted[key]
        if text_credit(content, wasted) <= 0 and self.sent[key] >= self.budget(key):
            return False
        self.sent[key] += 1
        self._write(key, "@")  # never a variant either
        return True

    def _shared_send(self, key: str) -> bool | None:
        """:meth:`send` for all workers together, in one script (:data:`_SEND_SHAPE`); None
        when Redis does not answer."""
        try:
            sent = self._script("send", _SEND_SHAPE)(
                keys=[f"{self.prefix}:sent:{key}", f"{self.prefix}:content:{key}",
                      f"{self.prefix}:wasted:{key}"],
                args=[self.base, self.per_page],
            )  # fmt: skip
        except self.redis_errors as exc:
            self._unshared(exc)
            return None
        if not sent:
            return False
        self.sent[key] += 1
        return True

    def _unshared(self, exc: Exception) -> None:
        self.stats.inc_value("topicrawl/links/trap_guard_unshared")
        log.warning("trap guard's Redis sets unavailable (%s): this worker counts alone", exc)

    def observe(self, key: str, text: str) -> None:
        """A page fetched under ``key``: a main text new to the key raises its budget, any
        other page lowers it."""
        digest = ""  # a wasted page
        core = text_core(text)
        if len(core) >= MIN_CONTENT_CHARS:
            digest = core_digest(core)
            if digest in self.content[key]:
                digest = ""
        if digest:
            self.content[key].add(digest)
        else:
            self.wasted[key] += 1
        self._write(key, f"#{digest}")  # never a variant: '#' ends a URL's path and query
        if self.redis is not None:
            try:
                if digest:
                    self.redis.sadd(f"{self.prefix}:content:{key}", digest)
                else:
                    self.redis.incr(f"{self.prefix}:wasted:{key}")
            except self.redis_errors as exc:
                self._unshared(exc)


class TrapGuardMiddleware:
    """Drops requests that look like crawler traps (calendars, session ids, loops).

    - Query strings: a path may be requested with at most ``max_query_variants`` distinct
      query strings, plus ``query_variants_per_page`` more for each page fetched there with
      a main text new to the path, less as many for each page without
      (:func:`query_variant_budget`); drops counted as ``topicrawl/links/trap/query_variants``.
    - Paths: the requests of one :func:`path_shape` (``/calendar/{n}/``) sent to download
      are bounded by ``max_path_variants`` plus ``path_variants_per_page`` per page fetched
      there with a main text new to the shape, less as many per page without; a shape whose
      pages mostly brought a text of their own (a scheme of articles, which covers a whole
      site) is not bounded. The check is made when a request leaves the frontier
      (:class:`PathTrapMiddleware`, a downloader middleware: :meth:`fetch_allowed`), not
      when the link is found, so the links of a home or list page wait in the frontier in
      their priority order until the shape's first pages show what it is; a refused
      request is counted as ``topicrawl/links/trap/path_variants``.
    - URLs longer than ``max_url_length`` (``url_length``), with more than
      ``max_path_depth`` path segments (``path_depth``) or repeating one path segment more
      than ``max_segment_repeats`` times (``segment_repeats``) are dropped.

    Every drop is counted in the stats. The budgets are :class:`VariantBudget` objects: kept
    in the JOBDIR journals and, in a scale-out, in Redis sets under ``TOPICRAWL_TRAP_KEY``
    (the path shapes under ``<key>:shape``), so the limits hold for all workers together.
    """

    def __init__(
        self,
        stats: StatsCollector,
        *,
        max_query_variants: int = 30,
        query_variants_per_page: int = 0,
        max_path_variants: int = 30,
        path_variants_per_page: int = 0,
        max_url_length: int = 512,
        max_path_depth: int = 0,
        max_segment_repeats: int = 3,
        jobdir: str | None = None,
        redis: Any = None,
        key: str = "topicrawl:trap",
    ):
        self.stats = stats
        self.state_file = Path(jobdir) / "topicrawl-trapguard.json" if jobdir else None
        #: URLs of page items the spider had observed already (:meth:`page_fetched`)
        self._fed: set[str] = set()
        self.max_url_length = max_url_length
        self.max_path_depth = max_path_depth
        self.max_segment_repeats = max_segment_repeats
        self.redis = redis  # a redis.Redis client: the variants admitted by all workers
        self.key = key
        #: JOBDIR journals of the admitted query strings (``host/path<TAB>query`` lines) and
        #: of the requests sent per path shape (``shape<TAB>@``)
        self.queries = VariantBudget(
            stats, base=max_query_variants, per_page=query_variants_per_page, redis=redis,
            prefix=key, journal_file=Path(jobdir) / "topicrawl-trapguard.txt" if jobdir else None,
        )  # fmt: skip
        self.paths = VariantBudget(
            stats, base=max_path_variants, per_page=path_variants_per_page, redis=redis,
            prefix=f"{key}:shape",
            journal_file=Path(jobdir) / "topicrawl-trapguard-paths.txt" if jobdir else None,
        )  # fmt: skip

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> TrapGuardMiddleware:
        s = crawler.settings
        mw = cls(
            crawler.stats,
            max_query_variants=s.getint("TOPICRAWL_MAX_QUERY_VARIANTS"),
            query_variants_per_page=s.getint("TOPICRAWL_QUERY_VARIANTS_PER_PAGE"),
            max_path_variants=s.getint("TOPICRAWL_MAX_PATH_VARIANTS"),
            path_variants_per_page=s.getint("TOPICRAWL_PATH_VARIANTS_PER_PAGE"),
            max_url_length=s.getint("TOPICRAWL_MAX_URL_LENGTH"),
            max_path_depth=s.getint("TOPICRAWL_MAX_PATH_DEPTH"),
            max_segment_repeats=s.getint("TOPICRAWL_MAX_SEGMENT_REPEATS"),
            jobdir=s.get("JOBDIR"),
            redis=scaleout_redis(s),
            key=s.get("TOPICRAWL_TRAP_KEY", "topicrawl:%(spider)s:trap")
            % {"spider": crawler.spidercls.name},
        )
        crawler.signals.connect(mw.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(mw.spider_closed, signal=signals.spider_closed)
        return mw

    # the query-string budget's state, by the names earlier versions used
    @property
    def max_query_variants(self) -> int:
        return self.queries.base

    @property
    def query_variants_per_page(self) -> int:
        return self.queries.per_page

    def spider_opened(self, spider: Spider) -> None:
        """A resumed crawl (JOBDIR) keeps the variants it has already seen. The spider gets a
        reference (``spider.trap_guard``) to test its links before re-queueing."""
        if hasattr(spider, "trap_guard"):
            spider.trap_guard = self
        if self.state_file and self.state_file.exists():  # written by earlier versions
            saved = json.loads(self.state_file.read_text(encoding="utf-8"))
            for key, queries in saved.items():
                self.queries.variants[key].update(queries)
        self.queries.open()
        self.paths.open()

    def spider_closed(self, spider: Spider) -> None:
        self.queries.close()
        self.paths.close()

    def allowed(self, url: str) -> str | None:
        """None when ``url`` may be followed, else the reason it is a trap."""
        if len(url) > self.max_url_length:
            return "url_length"
        parts = urlsplit(url)
        segments = [s for s in parts.path.split("/") if s]
        if self.max_path_depth and len(segments) > self.max_path_depth:
            return "path_depth"
        # a path without a repeated segment (most URLs) repeats none more than once
        repeated = len(set(segments)) < len(segments) or self.max_segment_repeats < 1
        if segments and repeated and (
            Counter(segments).most_common(1)[0][1] > self.max_segment_repeats
        ):
            return "segment_repeats"
        if parts.query and not self.queries.admit(f"{parts.netloc}{parts.path}", parts.query):
            return "query_variants"
        return None

    def budget(self, path: str) -> int:
        """This worker's query-string budget of ``path`` (``host/path``)."""
        return self.queries.budget(path)

    def path_budget(self, shape: str) -> int:
        """This worker's budget of the requests of ``shape`` (:func:`path_shape`)."""
        return self.paths.budget(shape)

    def fetch_allowed(self, url: str) -> bool:
        """Whether ``url`` may be downloaded now, by the budget of its path shape (counted
        as sent when so)."""
        shape = path_shape(url)
        return shape is None or self.paths.send(shape)

    def observe_page(self, item: Any) -> None:
        """An item from the spider (a fetched page): a main text new to its path (its query
        strings' budget) or to its path's shape raises that budget, any other page lowers
        it (shared in Redis in a scale-out)."""
        url = item.get("url") or ""
        parts = urlsplit(url)
        text = item.get("text") or ""
        if self.queries.per_page and parts.query:
            self.queries.observe(f"{parts.netloc}{parts.path}", text)
        if self.paths.per_page:
            shape = path_shape(url)
            if shape is not None:
                self.paths.observe(shape, text)

    def page_fetched(self, item: Any, *, observe: bool = True) -> None:
        """The spider's page item, observed (:meth:`observe_page`) before the spider yields
        the page's links (it yields them before the item, so that a kill between the two loses
        none: crawler.spiders.topic), so that the page's own text counts in the budget its
        links are checked against, as when the item came first; the item is not observed
        again when it passes here. ``observe`` False: a page observed when it was fetched
        (a rejected page accepted on re-judgement), only let through: its text a second
        time would count as a page without a text of its own."""
        if observe:
            self.observe_page(item)
        if len(self._fed) >= 10_000:  # items the engine never passed on (a closed crawl)
            self._fed.clear()
        self._fed.add(item.get("url") or "")

    def _filter(self, results: Iterable[Any]) -> Iterable[Any]:
        for obj in results:
            if not isinstance(obj, Request):
                if hasattr(obj, "get"):  # a page item
                    url = obj.get("url") or ""
                    if url in self._fed:
                        self._fed.discard(url)
                    else:
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


class TrapRefused(IgnoreRequest):
    """A request the trap guard did not send to download (counted, not an error)."""


class PathTrapMiddleware:
    """The trap guard's check of a request's path shape as it leaves the frontier
    (:meth:`TrapGuardMiddleware.fetch_allowed`; a downloader middleware placed after the
    fetch-once and robots.txt checks). Retries, seeds, a recrawl's stored pages, robots.txt
    and discovery requests pass; a request recovered after a kill is checked again (the
    fetch-once file lists the refused ones as sent too); a refusal raises
    :class:`TrapRefused`, counted as ``topicrawl/links/trap/path_variants``. Off when the
    trap guard is not enabled."""

    def __init__(self, crawler: Crawler):
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> PathTrapMiddleware:
        return cls(crawler)

    def process_request(self, request: Request) -> None:
        guard = getattr(self.crawler.spider, "trap_guard", None)
        meta = request.meta
        if guard is None or meta.get("retry_times") or meta.get("seed"):
            return None
        if meta.get("recrawl"):  # a stored page of the recrawled run
            return None
        if meta.get("topicrawl_discovery") or request.url.endswith("/robots.txt"):
            return None
        if not guard.fetch_allowed(request.url):
            self.crawler.stats.inc_value("topicrawl/links/trap/path_variants")
            raise TrapRefused(f"path trap budget spent: {request.url}")
        return None


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
    does not answer, the request waits, asking again every second
    (``topicrawl/links/fetch_once_waited``), for at most ``TOPICRAWL_REDIS_RETRY_SECONDS``: a
    URL another worker fetched before the outage is not fetched again (in a 30 s outage
    through a cut proxy, 2 of 200 pages were, and the budget stored 198). Past that it is let
    through (at worst a page is downloaded by two workers, never lost), logged and counted as
    ``topicrawl/links/fetch_once_unavailable``; this worker remembers it and adds it to the
    shared set when Redis answers again.
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
        wait_seconds: float = 0.0,
    ):
        self.stats = stats
        self.fingerprint = fingerprint
        self.redis = redis  # a redis.Redis client: the shared set of sent fingerprints
        #: crawler.seen.RedisBloomFilter instead of the set (TOPICRAWL_SEEN_BLOOM): bounded
        #: memory in Redis and none in the worker
        self.bloom = bloom
        self.redis_errors = redis_errors(redis)
        self.key = key
        #: scale-out: crawler.lease.WorkerLease (a request sent to download marks its lease)
        self.lease: Any = None
        self.sent: set[str] = set()
        #: fingerprints sent while Redis did not answer, added to the shared set later
        self.unshared: list[str] = []
        #: scale-out: how long a request waits for the shared set while Redis does not
        #: answer (0: it passes at once)
        self.wait_seconds = wait_seconds
        self._error: Exception | None = None
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
            wait_seconds=s.getfloat("TOPICRAWL_REDIS_RETRY_SECONDS", 30.0) if redis else 0.0,
        )
        from crawler.lease import lease_of

        mw.lease = lease_of(crawler)
        crawler.signals.connect(mw.spider_closed, signal=signals.spider_closed)
        return mw

    def spider_closed(self, spider: Spider) -> None:
        if self.file:
            self.file.close()
            self.file = None

    def _lease_sent(self, request: Request, fp: str | None = None) -> None:
        """Scale-out: a leased request passes to download past the fetch-once set (a retry,
        a request sent again after a reclaim): its lease is marked sent, while it is still
        this worker's (:meth:`_lease_lost` else: such a request passes the fetch-once set, so
        the copy a reclaimer queued would be fetched and counted too); one sent again after a
        reclaim also enters the fetch-once set, so that another queued copy of its URL is not
        downloaded as well. See crawler.lease."""
        lease_id = request.meta.get(LEASE) if self.lease is not None else None
        lost = False
        try:
            if lease_id:
                lost = not self.lease.mark_sent(lease_id, held=True)
            if fp is not None and self.redis is not None and not lost:
                self._add_shared([fp])
        except (*self.redis_errors, OSError) as exc:
            log.warning("lease of %s not marked sent (%s)", request.url, exc)
        if lost:
            self._lease_lost(request)

    def _check(self, request: Request) -> bool | None:
        """:meth:`seen`, but None (nothing remembered) when the shared set does not answer."""
        lease_id = request.meta.get(LEASE) if self.lease is not None else None
        if lease_id and self.lease.superseded(request.meta):  # popped again: that copy goes
            self._lease_lost(request, forget=False)
        if (
            request.url.endswith("/robots.txt")
            or request.meta.get("retry_times")
            or request.meta.get(RECOVERED) == request.url  # not its redirect targets
        ):
            again = request.meta.get(RECOVERED) == request.url and self.redis is not None
            self._lease_sent(request, self.fingerprint(request).hex() if again else None)
            return False
        fp = self.fingerprint(request).hex()
        if fp in self.sent:
            return True
        if self.redis is not None:
            try:
                if self.bloom is not None:  # probably sent before: at most p of new URLs
                    # marked first (a kill in between sends it again, not never), while the
                    # lease is still this worker's
                    if lease_id and not self.lease.mark_sent(lease_id, held=True):
                        self._lease_lost(request)
                    new = self.bloom.add(fp)
                    if lease_id and not new:
                        self.lease.unmark_sent(lease_id)
                    self._share_unshared()
                    return not new
                if lease_id:  # the set and the lease's mark in one script
                    code = self.lease.send(lease_id, self.key, fp)
                    if code == LOST:
                        self._lease_lost(request)
                    first = code == 1
                else:
                    first = self.redis.sadd(self.key, fp) == 1
            except self.redis_errors as exc:
                self._error = exc
                return None
            self._share_unshared()
            if not first:
                self.sent.add(fp)
                return True
        self.sent.add(fp)
        if self.file:  # fingerprint, URL, and whether it is a redirect's target
            self.file.write(sent_line(fp, request))
            self.file.flush()
        return False

    def _pass_unshared(self, request: Request) -> bool:
        """The shared set does not answer: the request passes (False), counted and logged;
        this worker remembers it and adds it to the shared set when Redis answers."""
        self.stats.inc_value("topicrawl/links/fetch_once_unavailable")
        log.warning("fetch-once set in Redis unavailable (%s): %s passes", self._error,
                    request.url)  # fmt: skip
        fp = self.fingerprint(request).hex()
        self.sent.add(fp)
        self.unshared.append(fp)
        return False

    def seen(self, request: Request) -> bool:
        """True when ``request``'s URL was sent before; otherwise remember it and say False."""
        verdict = self._check(request)
        return self._pass_unshared(request) if verdict is None else verdict

    def _share_unshared(self) -> None:
        """Add the fingerprints sent during an outage to the shared set (Redis answers)."""
        if not self.unshared:
            return
        try:
            self._add_shared(self.unshared)
        except self.redis_errors:
            return
        self.unshared.clear()

    def _add_shared(self, fps: list[str]) -> None:
        """Add fingerprints to the shared seen structure (the Bloom filter or the set)."""
        if self.bloom is not None:
            for fp in fps:
                self.bloom.add(fp)
        else:
            self.redis.sadd(self.key, *fps)

    def _lease_lost(self, request: Request, *, forget: bool = True) -> None:
        """This worker was slow: a reclaimer queued the request again before it was sent.
        Sending it now would put its URL in the fetch-once set, drop the queued copy another
        worker pops, and then this copy too (its lease lost): the page would be lost. The
        queued copy is fetched instead (perhaps by this worker: the same entry, the same lease
        id, so this copy forgets it now, before the queued copy can be popped, and leaves it
        alone afterwards: crawler.lease.LEASE_POP)."""
        self.stats.inc_value("topicrawl/frontier/lease_lost_unsent")
        if forget:
            self.lease.forget(request.meta[LEASE])
        raise IgnoreRequest(f"lease reclaimed before it was sent: {request.url}")

    def _superseded(self, request: Request) -> None:
        self.stats.inc_value("topicrawl/links/requeue_superseded")
        raise IgnoreRequest(f"already sent to download: {request.url}")

    def process_request(self, request: Request) -> Any:
        verdict = self._check(request)
        if verdict is None:
            if self.wait_seconds > 0:  # scale-out: wait for the shared answer
                return self._wait_and_check(request)
            verdict = self._pass_unshared(request)
        if verdict:
            self._superseded(request)
        return None

    async def _wait_and_check(self, request: Request) -> None:
        """Ask the shared set again every second until Redis answers (then the other
        workers' downloads count: a URL one of them fetched is not fetched again), for at
        most ``wait_seconds``; then the request passes."""
        self.stats.inc_value("topicrawl/links/fetch_once_waited")
        start, verdict = time.monotonic(), None
        while verdict is None and time.monotonic() - start < self.wait_seconds:
            await sleep(1.0)
            verdict = self._check(request)
        if verdict is None:
            verdict = self._pass_unshared(request)
        if verdict:
            self._superseded(request)


async def sleep(seconds: float) -> None:
    """Wait ``seconds`` on the crawl's reactor (a coroutine for async middleware methods)."""
    from twisted.internet import reactor
    from twisted.internet.task import deferLater

    await maybe_deferred_to_future(deferLater(reactor, seconds, lambda: None))


class RequestDeferred(IgnoreRequest):
    """A request put back into the frontier with a lower priority (not an error)."""


#: meta key: the request was re-scored as it left the local frontier (crawler.queues)
RESCORED = "topicrawl_rescored"


def rescored_request(
    request: Request, scorer: Any, *, margin: float = 0.1, max_deferrals: int = 2
) -> Request | None:
    """The request again with a lower priority when its link's score with the current models
    (``scorer.rescore``) fell by more than ``margin``; None when it keeps its turn (a seed,
    the paper's scorer, a retry or recovered request, one already deferred
    ``max_deferrals`` times, or a score that did not fall that far)."""
    from relevance.linkscore import quantize

    rescore = getattr(scorer, "rescore", None)
    meta = request.meta
    old = meta.get("link_score")
    deferred = meta.get("topicrawl_deferred", 0)
    if rescore is None or not isinstance(old, dict) or deferred >= max_deferrals:
        return None
    if "features" not in old or meta.get("retry_times") or meta.get(RECOVERED):
        return None
    new = rescore(old, meta.get("anchor") or "")
    if new is None or new >= float(old.get("p", 0.0)) - margin:
        return None
    link_score = {**old, "p": round(new, 4), "score": new, "rescored_from": old.get("p")}
    meta = {k: v for k, v in meta.items() if k != RESCORED}
    return request.replace(
        priority=quantize(new),
        dont_filter=True,
        meta={**meta, "link_score": link_score, "topicrawl_deferred": deferred + 1},
    )


class LinkRescoreMiddleware:
    """Re-ranks the frontier lazily as the crawl learns (issue 10, calibrated mode).

    A link's priority is fixed when it is queued, but the online link model and the page
    model keep learning (:mod:`relevance.learning`): a section that keeps yielding off-topic
    pages should sink, even for links queued before that was known. Re-scoring the whole
    frontier at every update would cost O(frontier); instead each request is scored again
    with the current models when it leaves the queue (``scorer.rescore``: a dictionary
    lookup per feature), and when its score fell by more than ``TOPICRAWL_RESCORE_MARGIN``
    it goes back into the queue with the new priority (``topicrawl/links/deferred``) — at most
    ``TOPICRAWL_RESCORE_MAX`` times, so nothing waits forever (:func:`rescored_request`).

    The local frontier (:class:`crawler.queues.DurablePriorityQueue`) does this in place as
    it pops, without the engine round trip (marking the request ``RESCORED``); this
    middleware re-scores what it did not: the scale-out's shared queue, where the deferred
    request re-enters through the scheduler, so it goes back into the shared Redis queue.
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
        if request.meta.get(RESCORED):
            return None
        scorer = getattr(self.crawler.spider, "scorer", None)
        again = rescored_request(request, scorer, margin=self.margin,
                                 max_deferrals=self.max_deferrals)  # fmt: skip
        if again is None:
            return None
        self.crawler.stats.inc_value("topicrawl/links/deferred")
        self.crawler.engine.crawl(again)
        new = again.meta["link_score"]["p"]
        raise RequestDeferred(f"deferred with priority {new:.3f}: {request.url}")
