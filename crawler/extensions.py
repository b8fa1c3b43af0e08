"""Live progress of a focused crawl.

Where it goes depends on the console: when the log shows INFO lines on standard error
(``-L INFO``), a ``progress`` log line every ``TOPICRAWL_PROGRESS_INTERVAL`` seconds; else, on
a terminal, one status line updated every second; else (a CI log, a pipe) a plain line every
interval. The figures are in the Scrapy stats and in ``crawl_runs.stats`` too, and every
interval they are written with the crawl's counters as a row of ``run_snapshots`` (the
console's live figures).
"""

from __future__ import annotations

import logging
import os
import socket
import sys
import time
from typing import Any

from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from twisted.internet import task

from topicrawl.console import StatusLine, is_terminal

log = logging.getLogger(__name__)


def failed_requests(stats: dict) -> int:
    """Requests that failed (network errors, HTTP errors); requests the crawl itself
    ignored (robots.txt, non-HTML, already fetched) are not failures."""
    return sum(
        v
        for k, v in stats.items()
        if k.startswith("topicrawl/errors/") and k != "topicrawl/errors/IgnoreRequest"
    )


class CrawlProgress:
    """Logs pages/min, accepted pages, harvest rate (window and overall), duplicates dropped
    per method, frontier size and links dropped; the same figures are in the Scrapy stats."""

    def __init__(
        self,
        crawler: Crawler,
        interval: float,
        mode: str = "log",
        stream: Any = None,
        *,
        snapshots: bool = False,
        db_url: str = "",
    ):
        self.crawler = crawler
        self.interval = interval
        self.snapshots = snapshots  # write run_snapshots rows (TOPICRAWL_PROGRESS_SNAPSHOTS)
        self.db_url = db_url or None
        self.worker = f"{socket.gethostname()}:{os.getpid()}"
        self._store: Any = None
        self._recording = False  # a snapshot is being written (by a thread)
        #: "log" (log lines only), "tty" (a live status line) or "plain" (printed lines)
        self.mode = mode
        self.stream = stream or sys.stderr
        self.status = StatusLine(self.stream) if mode == "tty" else None
        self._task: task.LoopingCall | None = None
        self._live: task.LoopingCall | None = None
        self._start = time.monotonic()

    @staticmethod
    def console_mode(settings: Any, stream: Any = None) -> str:
        """"log" when the log already prints INFO lines on standard error, else "tty" on a
        terminal, else "plain"."""
        level = settings.get("LOG_LEVEL", "INFO")
        level = logging.getLevelName(level) if isinstance(level, str) else int(level)
        logs_info = (
            settings.getbool("LOG_ENABLED", True)
            and not settings.get("LOG_FILE")
            and isinstance(level, int)
            and level <= logging.INFO
        )
        if logs_info:
            return "log"
        return "tty" if is_terminal(stream or sys.stderr) else "plain"

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CrawlProgress:
        interval = crawler.settings.getfloat("TOPICRAWL_PROGRESS_INTERVAL")
        if interval <= 0:
            raise NotConfigured("TOPICRAWL_PROGRESS_INTERVAL is 0")
        ext = cls(
            crawler,
            interval,
            cls.console_mode(crawler.settings),
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
        if self.status is not None:
            self._live = task.LoopingCall(self.show_status, spider)
            self._live.start(1.0, now=True)

    def spider_closed(self, spider: Spider, reason: str) -> None:
        for loop in (self._task, self._live):
            if loop and loop.running:
                loop.stop()
        if self.status is not None:
            self.status.clear()
        if self.mode == "log":
            self.log_progress(spider)
        elif self.snapshots:  # the run's last figures, for the console
            self.record(self.snapshot(spider))
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
            "errors": failed_requests(stats.get_stats()),
            # pages fetched but not yet in the database, and how long it has refused writes
            "storage_waiting": stats.get_value("topicrawl/storage/waiting", 0),
            "database_down_s": stats.get_value("topicrawl/storage/outage_seconds", 0),
            # scale-out: how long the shared frontier's Redis has not answered (0: it answers)
            "redis_down_s": self.redis_down_seconds(),
        }

    def redis_down_seconds(self) -> int:
        """Seconds the scale-out's Redis has not answered, as the scheduler saw it
        (``crawler.scheduler.RedisScheduler.outage_since``); 0 while it answers or without a
        scale-out."""
        engine = self.crawler.engine
        scheduler = getattr(getattr(engine, "_slot", None), "scheduler", None)
        since = getattr(scheduler, "outage_since", None)
        return int(time.monotonic() - since) if since is not None else 0

    def line(self, snap: dict[str, float | int | str]) -> str:
        """The progress figures a person reads, on one short line."""
        dups = sum(
            int(v) for part in str(snap["duplicates"]).split(",") if "=" in part
            for v in [part.split("=", 1)[1]]
        )  # fmt: skip
        elapsed = int(time.monotonic() - self._start)
        return (
            f"crawling {elapsed // 60}:{elapsed % 60:02d}  pages {snap['fetched']} "
            f"({snap['pages_per_min']}/min)  accepted {snap['accepted']}  harvest "
            f"{snap['harvest']:.2f}  duplicates {dups}  frontier {snap['frontier']}  "
            f"errors {snap['errors']}"
        ) + (
            f"  DATABASE DOWN {int(snap['database_down_s']) // 60}:"
            f"{int(snap['database_down_s']) % 60:02d}, {snap['storage_waiting']} pages waiting"
            if snap.get("database_down_s") else ""
        ) + (
            f"  REDIS DOWN {int(snap['redis_down_s']) // 60}:{int(snap['redis_down_s']) % 60:02d}"
            if snap.get("redis_down_s") else ""
        )

    def show_status(self, spider: Spider) -> None:
        if self.status is not None:
            self.status.update(self.line(self.snapshot(spider)))

    def log_progress(self, spider: Spider) -> None:
        snap = self.snapshot(spider)
        for key in ("pages_per_min", "harvest", "harvest_window", "frontier"):
            self.crawler.stats.set_value(f"topicrawl/progress/{key}", snap[key])
        log.info("progress %s", " ".join(f"{k}={v}" for k, v in snap.items()))
        if self.mode == "plain":
            print(self.line(snap), file=self.stream, flush=True)
        if self.snapshots and not self._recording:  # off the event loop: the database may hang
            from twisted.internet import threads

            self._recording = True
            row = self._row(snap)
            d = threads.deferToThread(self._write_row, *row) if row else None
            if d is None:
                self._recording = False
            else:
                d.addBoth(self._recorded)

    def _recorded(self, failed: Any) -> None:
        self._recording = False
        if failed is True:
            self.crawler.stats.inc_value("topicrawl/progress/snapshot_failed")

    def _row(self, snap: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        stats = self.crawler.stats
        run_id = stats.get_value("topicrawl/run_id")
        if run_id is None:
            return None
        counters = {k: v for k, v in stats.get_stats().items()
                    if k.startswith(("topicrawl/", "downloader/response_status_count/"))}  # fmt: skip
        return int(run_id), {**snap, "stats": counters}

    def _write_row(self, run_id: int, row: dict[str, Any]) -> bool:
        """Write one snapshot row; True when the database refused it."""
        from models.store import Store
        from topicrawl.errors import StorageError

        try:
            if self._store is None:
                self._store = Store.from_url(self.db_url, migrate=False, retries=0)
            self._store.add_snapshot(run_id, self.worker, row)
        except StorageError as exc:
            log.warning("progress snapshot not written: %s", exc)
            return True
        return False

    def record(self, snap: dict[str, Any]) -> None:
        """Write the snapshot and the crawl's counters to ``run_snapshots``; a database
        error is logged and counted (``topicrawl/progress/snapshot_failed``), never retried:
        the next interval writes a newer one."""
        row = self._row(snap)
        if row is not None and self._write_row(*row):
            self.crawler.stats.inc_value("topicrawl/progress/snapshot_failed")
