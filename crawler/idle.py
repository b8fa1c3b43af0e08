"""Scale-out: workers end together, when the whole crawl has been idle for a set time.

With scrapy-redis a worker whose own engine is idle (its queue pop found nothing, nothing in
flight) would close at once: a worker started while the shared frontier is momentarily empty
(the seeds are still being fetched by another) ended after 0.04 s and fetched nothing. Here
every worker that has work in progress (a download, a page in the pipelines, a request
pulled) sets a Redis key with a time to live of ``TOPICRAWL_IDLE_CLOSE_SECONDS``
(``SET key worker PX ttl``, refreshed every second, and once when the worker opens). An idle
worker keeps waiting (``DontCloseSpider``; Scrapy's engine polls the shared frontier every
5 s) while that key exists, i.e. while any worker was busy within the period; once the key has
expired, the shared frontier is empty and no worker can add to it, so each idle worker closes
(reason ``finished``) at its next poll: all within seconds of each other. A worker also closes
when the crawl's shared page budget is spent (reason ``max_pages``). No clock is compared
across machines: the key's expiry is Redis's own.

Scrapy's engine asks the scheduler for a request when one of its own downloads ends, or else
at its slot heartbeat, every 5 s: a worker with spare capacity (an idle one above all) would
see the requests other workers push to the shared frontier only 5 s later. In a four-worker
crawl of 40 pages, one worker fetched 38 and another none before its next heartbeat. So every
``TOPICRAWL_FRONTIER_POLL_SECONDS`` the extension asks the scheduler whether the shared
frontier holds requests (one ``ZCARD``) and, if so, wakes the engine at once.

The same beat refreshes this worker's lease heartbeat and, every
``TOPICRAWL_LEASE_CHECK_SECONDS`` and whenever the worker is idle, puts the requests of
workers whose heartbeat expired back into the frontier (:mod:`crawler.lease`). With leases, a
worker does not end on a spent budget while another worker holding requests has a late
heartbeat (probably killed), nor while a request queued again by a reclaim with its page's
count waits in the frontier (a dead worker's counted, unstored page: the counter is at the
budget, and the page is still to fetch).

A Redis error while checking keeps the worker waiting: the scheduler's outage handling
(``TOPICRAWL_REDIS_RETRY_SECONDS``) decides when an outage ends the crawl.
"""

from __future__ import annotations

import logging
import os
import socket
from typing import Any

from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import CloseSpider, DontCloseSpider, NotConfigured
from twisted.internet import task

from crawler.lease import WorkerLease, lease_of
from crawler.middlewares import redis_errors, scaleout_redis

log = logging.getLogger(__name__)


class SharedIdleClose:
    """Keeps an idle scale-out worker open until the whole crawl has been idle for
    ``idle_seconds`` (see the module docstring)."""

    def __init__(
        self,
        crawler: Crawler,
        client: Any,
        key: str,
        idle_seconds: float,
        poll_seconds: float = 0.5,
        lease: WorkerLease | None = None,
        check_seconds: float = 5.0,
    ):
        self.crawler = crawler
        self.client = client
        self.errors = redis_errors(client)
        self.key = key
        #: 0: no idle wait (the lease's beat only)
        self.ttl_ms = max(0, int(idle_seconds * 1000))
        self.worker = lease.worker if lease is not None else f"{socket.gethostname()}:{os.getpid()}"
        self.poll_seconds = poll_seconds
        self.lease = lease
        #: beats between two looks for dead workers (a beat every min(1, poll_seconds) s)
        self.check_every = max(1, round(check_seconds / min(1.0, poll_seconds)))
        self._beats = 0
        self._beat: task.LoopingCall | None = None
        self.waits = 0  # spider_idle calls answered with "wait"

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SharedIdleClose:
        s = crawler.settings
        idle = s.getfloat("TOPICRAWL_IDLE_CLOSE_SECONDS")
        client = scaleout_redis(s)
        lease = lease_of(crawler)
        if client is None or (idle <= 0 and lease is None):
            raise NotConfigured("not a scale-out crawl, or TOPICRAWL_IDLE_CLOSE_SECONDS and "
                                "TOPICRAWL_LEASE_SECONDS are 0")  # fmt: skip
        if lease is not None and 0 < idle < lease.lease_ms / 1000:
            log.warning("TOPICRAWL_LEASE_SECONDS (%g) is longer than TOPICRAWL_IDLE_CLOSE_SECONDS "
                        "(%g): a killed worker's requests may wait for the next start",
                        lease.lease_ms / 1000, idle)  # fmt: skip
        key = s.get("TOPICRAWL_ACTIVE_KEY", "topicrawl:%(spider)s:active")
        poll = s.getfloat("TOPICRAWL_FRONTIER_POLL_SECONDS", 0.5)
        ext = cls(crawler, client, key % {"spider": crawler.spidercls.name}, idle, poll, lease,
                  s.getfloat("TOPICRAWL_LEASE_CHECK_SECONDS", 5.0))  # fmt: skip
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(ext.spider_idle, signal=signals.spider_idle)
        return ext

    def touch(self) -> None:
        """This worker is busy: the crawl is not idle for the next period."""
        if not self.ttl_ms:
            return
        try:
            self.client.set(self.key, self.worker, px=self.ttl_ms)
        except self.errors:
            self.crawler.stats.inc_value("topicrawl/idle/redis_errors")

    def busy(self) -> bool:
        engine = self.crawler.engine
        if engine is None or getattr(engine, "_slot", None) is None:
            return False
        return not engine.spider_is_idle()

    def beat(self) -> None:
        if self.lease is not None:
            self._beats += 1
            self.lease_beat(reclaim=self._beats % self.check_every == 0)
        if self.busy():
            self.touch()
        self.wake()

    def lease_beat(self, reclaim: bool) -> int:
        """Refresh this worker's lease heartbeat; with ``reclaim``, put the requests of
        workers whose heartbeat expired back into the frontier (their number)."""
        assert self.lease is not None
        try:
            self.lease.beat()
            return self.lease.reclaim() if reclaim else 0
        except self.lease.errors as exc:
            self.crawler.stats.inc_value("topicrawl/idle/redis_errors")
            log.debug("lease heartbeat: Redis error (%s)", exc)
            return 0

    def wake(self) -> bool:
        """Wake the engine when the shared frontier holds requests (see the module docstring);
        True when it was woken."""
        engine = self.crawler.engine
        slot = getattr(engine, "_slot", None) if engine is not None else None
        if slot is None or getattr(slot, "closing", None) is not None:
            return False
        try:
            pending = slot.scheduler.has_pending_requests()
        except self.errors:  # the scheduler's own outage handling decides
            return False
        if pending:
            slot.nextcall.schedule()
            self.crawler.stats.inc_value("topicrawl/idle/wakes")
        return bool(pending)

    def spider_opened(self, spider: Spider) -> None:
        if self.lease is not None:  # a start after a kill picks up the dead workers' requests
            self.lease.stats = self.crawler.stats
            self.lease_beat(reclaim=True)
        self.touch()  # a worker that starts on an empty frontier waits a whole period
        self._beat = task.LoopingCall(self.beat)
        self._beat.start(min(1.0, self.poll_seconds), now=False)

    def spider_closed(self, spider: Spider) -> None:
        if self._beat is not None and self._beat.running:
            self._beat.stop()
        if self.lease is not None:
            try:
                self.lease.close()
            except self.lease.errors as exc:
                log.warning("lease heartbeat not removed (%s): it expires by itself", exc)
        self.crawler.stats.set_value("topicrawl/idle/waits", self.waits)

    def budget_spent(self, spider: Spider) -> bool:
        """The shared counter is at the budget and no request queued again by a reclaim with
        its page's count waits in the frontier (crawler.lease's handed-on counts)."""
        client, key = getattr(spider, "pages_redis", None), getattr(spider, "pages_key", None)
        limit = getattr(spider, "max_pages", None)
        if client is None or key is None or limit is None:
            return False
        if int(client.get(key) or 0) < limit:
            return False
        return self.lease is None or not self.lease.precounted(waiting=True)

    def spider_idle(self, spider: Spider) -> None:
        try:
            if self.lease is not None:
                if self.lease_beat(reclaim=True):  # a dead worker's requests are back
                    self.touch()
                    raise DontCloseSpider
                if self.lease.stale_workers():  # wait for a probably dead worker's expiry
                    self.waits += 1
                    raise DontCloseSpider
            if self.budget_spent(spider):
                raise CloseSpider("max_pages")
            if not self.ttl_ms:
                return
            others_busy = bool(self.client.exists(self.key))
        except self.errors as exc:
            self.crawler.stats.inc_value("topicrawl/idle/redis_errors")
            log.debug("idle check: Redis error (%s); waiting", exc)
            raise DontCloseSpider from exc
        if others_busy:
            self.waits += 1
            raise DontCloseSpider
        log.info("the shared frontier has been empty and every worker idle for %gs: closing",
                 self.ttl_ms / 1000)  # fmt: skip
