"""Live progress of a focused crawl: one log line every TOPICRAWL_PROGRESS_INTERVAL seconds,
and the same figures with the crawl's stats as a row of ``run_snapshots`` (the console)."""

from __future__ import annotations

import logging
import os
import socket
import time
from typing import Any

from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from twisted.internet import task

log = logging.getLogger(__name__)


class CrawlProgress:
    """Logs pages/min, accepted pages, harvest rate (window and overall), duplicates dropped
    per method, frontier size and links dropped; the same figures are in the Scrapy stats."""

    def __init__(
        self, crawler: Crawler, interval: float, *, snapshots: bool = False, db_url: str = ""
    ):
        self.crawler = crawler
        self.interval = interval
        self.snapshots = snapshots  # write run_snapshots rows (TOPICRAWL_PROGRESS_SNAPSHOTS)
        self.db_url = db_url or None
        self.worker = f"{socket.gethostname()}:{os.getpid()}"
        self._store: Any = None
        self._task: task.LoopingCall | None = None
        self._start = time.monotonic()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CrawlProgress:
        interval = crawler.settings.getfloat("TOPICRAWL_PROGRESS_INTERVAL")
        if interval <= 0:
            raise NotConfigured("TOPICRAWL_PROGRESS_INTERVAL is 0")
        ext = cls(
            crawler,
            interval,
            snapshots=crawler.settings.getbool("TOPICRAWL_PROGRESS_SNAPSHOTS"),
            db_url=crawler.settings.get("TOPICRAWL_DB_URL") or "",
        )
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def spider_opened(self, spider: Spider) -> None:
        self._start = time.monotonic()
        self._task = task.LoopingCall(self.log_progress, spider)
        self._task.start(self.interval, now=False)

    def spider_closed(self, spider: Spider, reason: str) -> None:
        if self._task and self._task.running:
            self._task.stop()
        self.log_progress(spider)
        if self._store is not None:
            self._store.close()

    def snapshot(self, spider: Spider) -> dict[str, float | int | str]:
        stats = self.crawler.stats
        fetched = stats.get_value("topicrawl/pages/fetched", 0)
        accepted = stats.get_value("topicrawl/pages/accepted", 0)
        minutes = max((time.monotonic() - self._start) / 60, 1e-9)
        dups = {
            k.rsplit("/", 1)[-1]: v
            for k, v in stats.get_stats().items()
            if k.startswith("topicrawl/dedup/dropped/")
        }
        engine = self.crawler.engine
        frontier = len(engine._slot.scheduler) if engine and getattr(engine, "_slot", None) else 0
        window = getattr(spider, "harvest_window", None)
        return {
            "pages_per_min": round(fetched / minutes, 1),
            "fetched": fetched,
            "accepted": accepted,
            "harvest": round(accepted / fetched, 3) if fetched else 0.0,
            "harvest_window": round(window.rate(), 3) if window else 0.0,
            "duplicates": ",".join(f"{k}={v}" for k, v in sorted(dups.items())) or "0",
            "frontier": frontier,
            "links_followed": stats.get_value("topicrawl/links/followed", 0),
            "links_dropped": stats.get_value("topicrawl/links/dropped", 0),
        }

    def log_progress(self, spider: Spider) -> None:
        snap = self.snapshot(spider)
        for key in ("pages_per_min", "harvest", "harvest_window", "frontier"):
            self.crawler.stats.set_value(f"topicrawl/progress/{key}", snap[key])
        log.info("progress %s", " ".join(f"{k}={v}" for k, v in snap.items()))
        if self.snapshots:
            self.record(snap)

    def record(self, snap: dict[str, Any]) -> None:
        """Write the snapshot and the crawl's counters to ``run_snapshots``; a database
        error is logged and counted (``topicrawl/progress/snapshot_failed``), never retried:
        the next interval writes a newer one."""
        from models.store import Store
        from topicrawl.errors import StorageError

        stats = self.crawler.stats
        run_id = stats.get_value("topicrawl/run_id")
        if run_id is None:
            return
        counters = {k: v for k, v in stats.get_stats().items()
                    if k.startswith(("topicrawl/", "downloader/response_status_count/"))}  # fmt: skip
        try:
            if self._store is None:
                self._store = Store.from_url(self.db_url, migrate=False, retries=0)
            self._store.add_snapshot(int(run_id), self.worker, {**snap, "stats": counters})
        except StorageError as exc:
            stats.inc_value("topicrawl/progress/snapshot_failed")
            log.warning("progress snapshot not written: %s", exc)
