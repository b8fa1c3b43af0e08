"""The scale-out's frontier in Redis (scrapy-redis), with a Redis outage as an outcome.

scrapy-redis' scheduler lets a Redis error escape into Scrapy's engine loop: during an
outage every heartbeat prints a traceback and the crawl never ends. Here an outage is
waited out for ``TOPICRAWL_REDIS_RETRY_SECONDS``: requests found meanwhile are kept in
this worker's memory, served by the worker itself while Redis is down and pushed when it
answers again (``topicrawl/frontier/redis_errors``); past the budget the crawl ends with
finish reason ``redis_unreachable`` (exit status 5) and one line naming Redis and the fix.
Requests still held when the crawl closes with Redis down are counted
(``topicrawl/frontier/lost_on_close``) and logged.
"""

from __future__ import annotations

import logging
import time
import weakref
from collections import deque
from typing import Any

from redis import RedisError
from scrapy import Request
from scrapy_redis.scheduler import Scheduler

from crawler.lease import LEASE
from topicrawl.outcome import REDIS_UNREACHABLE, set_outcome

log = logging.getLogger(__name__)


#: what a Redis outage raises (a connection reset can surface as a bare OSError)
REDIS_ERRORS: tuple[type[Exception], ...] = (RedisError, OSError)


class RedisScheduler(Scheduler):
    """scrapy-redis' ``Scheduler`` that rides out a Redis outage, then ends the crawl."""

    def __init__(self, *args: Any, retry_seconds: float = 30.0, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.retry_seconds = retry_seconds
        #: requests scheduled while Redis did not answer (pushed when it answers again)
        self.held: deque[Request] = deque()
        self.outage_since: float | None = None
        self.crawler: Any = None
        self._closing = False
        self._spent_at: tuple[float, bool] = (-1.0, False)
        #: requests whose fingerprint the seen set took (check_seen, or an enqueue whose
        #: push to the frontier failed): their enqueue sends no seen check of its own
        self._checked: weakref.WeakSet[Request] = weakref.WeakSet()

    @classmethod
    def from_crawler(cls, crawler: Any) -> RedisScheduler:
        instance = super().from_crawler(crawler)
        instance.retry_seconds = crawler.settings.getfloat("TOPICRAWL_REDIS_RETRY_SECONDS", 30.0)
        instance.crawler = crawler
        return instance

    # -- outage bookkeeping ----------------------------------------------------------------
    def _failed(self, exc: Exception) -> None:
        if self.stats is not None:
            self.stats.inc_value("topicrawl/frontier/redis_errors")
        now = time.monotonic()
        if self.outage_since is None:
            self.outage_since = now
            log.warning(
                "Redis unreachable (%s): waiting up to %gs, %d requests held in memory",
                exc, self.retry_seconds, len(self.held),
            )  # fmt: skip
            if self.stats is not None:
                self.stats.inc_value("topicrawl/redis/outages")
        if now - self.outage_since >= self.retry_seconds and not self._closing:
            self._closing = True
            url = self.server.connection_pool.connection_kwargs
            where = f"{url.get('host', '?')}:{url.get('port', '?')}"
            set_outcome(
                self.stats,
                REDIS_UNREACHABLE,
                f"Redis at {where} unreachable for {self.retry_seconds:g}s during the crawl "
                f"({exc}); {len(self.held)} requests found meanwhile are not in the shared "
                "frontier. Start Redis again and run the same command: the crawl resumes",
            )
            engine = getattr(self.crawler, "engine", None)
            if engine is not None and getattr(engine, "_slot", None) is not None:
                from scrapy.utils.defer import deferred_from_coro

                deferred_from_coro(engine.close_spider_async(reason=REDIS_UNREACHABLE))

    def _answered(self) -> None:
        """Redis answered: the outage (if any) is over."""
        if self.outage_since is not None:
            log.warning("Redis answers again after %.0fs", time.monotonic() - self.outage_since)
            self.outage_since = None

    def _push_held(self) -> None:
        """The requests found during an outage go to the shared frontier (raises RedisError
        while Redis is still down)."""
        while self.held:
            self._push(self.held[0])
            self.held.popleft()

    def _push(self, request: Request) -> bool:
        if not request.dont_filter and request not in self._checked:
            atomic = getattr(self.queue, "push_unseen", None)
            if (atomic is not None and getattr(self.df, "bloom", None) is None
                    and not request.meta.get(LEASE)):  # fmt: skip
                # a new link: seen and queued in one script (a kill cannot fall between)
                if not atomic(request, self.df.key, self.df.request_fingerprint(request)):
                    self.df.log(request, self.spider)
                    return False
                if self.stats is not None:
                    self.stats.inc_value("scheduler/enqueued/redis")
                return True
            if self.df.request_seen(request):
                self.df.log(request, self.spider)
                return False
            self._checked.add(request)  # a push failing now is retried without the check
        if self.stats is not None:
            self.stats.inc_value("scheduler/enqueued/redis")
        self.queue.push(request)
        self._checked.discard(request)
        return True

    def check_seen(self, requests: list[Request]) -> set[int]:
        """The seen-set check of a response's new links in one Redis round trip
        (``SMISMEMBER``) instead of a ``SADD`` each at enqueue: returns the ``id()`` of
        those seen before (logged as the dupefilter logs them), which need not reach the
        scheduler. It only reads: the new ones still enqueue through the dupefilter's own
        ``SADD`` (the one a race of two workers settles), so a worker killed between the
        check and the enqueue loses no link. Nothing is checked (an empty set) with the
        Bloom seen set, while requests are held for an outage, or when Redis does not
        answer."""
        df = self.df
        todo = [r for r in requests if not r.dont_filter and r not in self._checked]
        if not todo or getattr(df, "bloom", None) is not None or self.held:
            return set()
        try:
            member = self.server.smismember(df.key, [df.request_fingerprint(r) for r in todo])
        except REDIS_ERRORS:
            return set()
        seen: set[int] = set()
        for request, known in zip(todo, member, strict=True):
            if known:
                df.log(request, self.spider)
                seen.add(id(request))
        if self.stats is not None:
            self.stats.inc_value("topicrawl/frontier/seen_batches")
        return seen

    # -- Scheduler -------------------------------------------------------------------------
    def enqueue_request(self, request: Request) -> bool:
        try:
            self._push_held()
            added = self._push(request)
        except REDIS_ERRORS as exc:
            self.held.append(request)
            self._failed(exc)
            return True
        self._answered()
        return added

    # -- the page budget (with leases, crawler.lease) -----------------------------------------
    def _budget(self) -> int | None:
        """The crawl's page budget when the frontier is leased and the budget shared."""
        spider = self.spider
        if (
            getattr(self.queue, "lease", None) is None
            or getattr(spider, "pages_redis", None) is None
        ):
            return None
        return getattr(spider, "max_pages", None)

    def _budget_spent(self) -> bool:
        """Whether the shared budget is spent (asked at most once a second): a leased
        frontier then pops only requests queued again with their page's count (a reclaim's,
        crawler.lease), and the idle extension decides when the worker ends."""
        limit = self._budget()
        if limit is None:
            return False
        now = time.monotonic()
        if now - self._spent_at[0] >= 1.0:
            spider = self.spider
            spent = (int(spider.pages_redis.get(spider.pages_key) or 0) >= limit
                     and not self.queue.lease.precounted(waiting=True))  # fmt: skip
            self._spent_at = (now, spent)
        return self._spent_at[1]

    def next_request(self) -> Request | None:
        try:
            self._push_held()
            limit = self._budget()
            if limit is not None:
                request = self.queue.pop(self.idle_before_close, limit=limit)
            else:
                request = self.queue.pop(self.idle_before_close)
        except REDIS_ERRORS as exc:
            self._failed(exc)
            # the requests found during the outage are this worker's to serve meanwhile
            return self.held.popleft() if self.held else None
        self._answered()
        if request is not None and self.stats is not None:
            self.stats.inc_value("scheduler/dequeued/redis")
        return request

    def has_pending_requests(self) -> bool:
        try:
            return (len(self.queue) > 0 and not self._budget_spent()) or bool(self.held)
        except REDIS_ERRORS as exc:
            self._failed(exc)
            return bool(self.held) or not self._closing  # keep the engine waiting within the budget

    def __len__(self) -> int:
        try:
            return len(self.queue) + len(self.held)
        except REDIS_ERRORS:
            return len(self.held)

    def close(self, reason: str) -> None:
        try:
            self._push_held()
        except REDIS_ERRORS as exc:
            if self.stats is not None:
                self.stats.set_value("topicrawl/frontier/lost_on_close", len(self.held))
            log.error("%d requests could not be written back to the shared frontier: %s",
                      len(self.held), exc)  # fmt: skip
        try:
            super().close(reason)
        except REDIS_ERRORS as exc:
            log.warning("Redis unreachable at close (%s)", exc)
