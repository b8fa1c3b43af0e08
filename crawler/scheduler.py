"""The scale-out's frontier in Redis (scrapy-redis), with a Redis outage as an outcome.

scrapy-redis' scheduler lets a Redis error escape into Scrapy's engine loop: during an
outage every heartbeat prints a traceback and the crawl never ends. Here an outage is
waited out for ``TOPICRAWL_REDIS_RETRY_SECONDS``: requests found meanwhile are kept in
memory and pushed when Redis answers again; past the budget the crawl ends with finish
reason ``redis_unreachable`` (exit status 5) and one line naming Redis and the fix.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from typing import Any

from redis import RedisError
from scrapy import Request
from scrapy_redis.scheduler import Scheduler

from topicrawl.outcome import REDIS_UNREACHABLE, set_outcome

log = logging.getLogger(__name__)


class RedisScheduler(Scheduler):
    """scrapy-redis' ``Scheduler`` that waits out a Redis outage, then ends the crawl."""

    def __init__(self, *args: Any, retry_seconds: float = 30.0, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.retry_seconds = retry_seconds
        #: requests scheduled while Redis did not answer (pushed when it answers again)
        self.held: deque[Request] = deque()
        self.outage_since: float | None = None
        self.crawler: Any = None
        self._closing = False

    @classmethod
    def from_crawler(cls, crawler: Any) -> RedisScheduler:
        instance = super().from_crawler(crawler)
        instance.retry_seconds = crawler.settings.getfloat("TOPICRAWL_REDIS_RETRY_SECONDS", 30.0)
        instance.crawler = crawler
        return instance

    # -- outage bookkeeping ----------------------------------------------------------------
    def _failed(self, exc: RedisError) -> None:
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
        if not request.dont_filter and self.df.request_seen(request):
            self.df.log(request, self.spider)
            return False
        if self.stats is not None:
            self.stats.inc_value("scheduler/enqueued/redis")
        self.queue.push(request)
        return True

    # -- Scheduler -------------------------------------------------------------------------
    def enqueue_request(self, request: Request) -> bool:
        try:
            self._push_held()
            added = self._push(request)
        except RedisError as exc:
            self.held.append(request)
            self._failed(exc)
            return True
        self._answered()
        return added

    def next_request(self) -> Request | None:
        try:
            self._push_held()
            request = self.queue.pop(self.idle_before_close)
        except RedisError as exc:
            self._failed(exc)
            return None
        self._answered()
        if request is not None and self.stats is not None:
            self.stats.inc_value("scheduler/dequeued/redis")
        return request

    def has_pending_requests(self) -> bool:
        try:
            return len(self.queue) > 0 or bool(self.held)
        except RedisError as exc:
            self._failed(exc)
            return not self._closing  # keep the engine waiting within the budget

    def __len__(self) -> int:
        try:
            return len(self.queue) + len(self.held)
        except RedisError:
            return len(self.held)

    def close(self, reason: str) -> None:
        try:
            super().close(reason)
        except RedisError as exc:
            log.warning("Redis unreachable at close (%s)", exc)
