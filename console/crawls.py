"""Crawls started from the console: ``scrapy crawl topic`` as managed subprocesses.

Each crawl runs in its own process group with the console's environment (so an
``http_proxy`` the console was started with reaches the crawl), writes its log to the work
directory, and reports its run id in its log (``crawl run N started``). Stopping sends
SIGINT: Scrapy's graceful shutdown, the pages in flight are stored and the run ends with
reason ``shutdown``; a second stop sends SIGINT again (Scrapy's forced shutdown).
"""

from __future__ import annotations

import itertools
import os
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from crawler.spiders.topic import parse_seeds
from models.store import absolute_db_url
from relevance.topic import load_topic
from topicrawl.errors import ConfigError, TopicrawlError

_RUN_LINE = re.compile(r"crawl run (\d+) (?:started|resumed)")


class CrawlStartError(TopicrawlError):
    """A crawl could not start; ``field`` names the form field at fault (or None)."""

    def __init__(self, message: str, field: str | None = None, log: str = ""):
        super().__init__(message)
        self.field = field
        self.log = log


@dataclass
class ManagedCrawl:
    """One crawl process started by the console."""

    key: int
    proc: subprocess.Popen
    log_path: Path
    topic_file: str
    seeds: list[str]
    started_at: datetime
    run_id: int | None = None
    stop_requests: int = 0
    command: list[str] = field(default_factory=list)

    @property
    def running(self) -> bool:
        return self.proc.poll() is None

    def as_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "run_id": self.run_id,
            "pid": self.proc.pid,
            "running": self.running,
            "returncode": self.proc.returncode,
            "topic_file": self.topic_file,
            "seeds": self.seeds,
            "started_at": self.started_at.isoformat(),
            "stop_requests": self.stop_requests,
            "log": str(self.log_path),
        }

    def log_tail(self, chars: int = 4000) -> str:
        try:
            with self.log_path.open("rb") as fh:
                fh.seek(0, os.SEEK_END)
                size = fh.tell()
                fh.seek(max(0, size - chars))
                return fh.read().decode("utf-8", "replace")
        except OSError:
            return ""


class CrawlManager:
    """Starts, tracks and stops the console's crawls."""

    def __init__(
        self,
        db_url: str,
        work_dir: str | Path,
        *,
        settings: dict[str, str] | None = None,
        env: dict[str, str] | None = None,
        progress_interval: float = 5.0,
        start_timeout: float = 120.0,
    ):
        self.db_url = absolute_db_url(db_url)
        self.work_dir = Path(work_dir).resolve()
        self.settings = dict(settings or {})
        self.env = dict(env or {})
        self.progress_interval = progress_interval
        self.start_timeout = start_timeout
        self._crawls: dict[int, ManagedCrawl] = {}
        self._keys = itertools.count(1)
        self._lock = threading.Lock()

    def command(
        self, seeds: list[str], topic: Path, max_pages: int | None, max_depth: int | None
    ) -> list[str]:
        cmd = [sys.executable, "-m", "scrapy", "crawl", "topic",
               "-a", f"seeds={','.join(seeds)}", "-a", f"topic={topic}"]  # fmt: skip
        if max_pages:
            cmd += ["-a", f"max_pages={max_pages}"]
        if max_depth is not None:
            cmd += ["-a", f"max_depth={max_depth}"]
        settings = {
            "TOPICRAWL_DB_URL": self.db_url,
            "TOPICRAWL_PROGRESS_INTERVAL": self.progress_interval,
            "TOPICRAWL_PROGRESS_SNAPSHOTS": True,
            "LOG_LEVEL": "INFO",
            **self.settings,
        }
        for key, value in settings.items():
            cmd += ["-s", f"{key}={value}"]
        return cmd

    def start(
        self,
        seeds_text: str,
        topic: Path,
        *,
        max_pages: int | None = None,
        max_depth: int | None = None,
    ) -> ManagedCrawl:
        """Validate the form, start the crawl and wait until it names its run id (the
        topic and its resources load first: that can take a while)."""
        try:
            seeds = parse_seeds(",".join(seeds_text.split()))
        except ConfigError as exc:
            raise CrawlStartError(str(exc), "seeds") from None
        if max_pages is not None and max_pages < 1:
            raise CrawlStartError("max_pages must be at least 1", "max_pages")
        if max_depth is not None and max_depth < 0:
            raise CrawlStartError("max_depth must be 0 or more", "max_depth")
        try:
            load_topic(topic)
        except TopicrawlError as exc:
            raise CrawlStartError(str(exc), "topic") from None
        self.work_dir.mkdir(parents=True, exist_ok=True)
        with self._lock:
            key = next(self._keys)
        log_path = self.work_dir / f"crawl-{os.getpid()}-{key}.log"
        cmd = self.command(seeds, topic, max_pages, max_depth)
        env = {**os.environ, **self.env, "SCRAPY_SETTINGS_MODULE": "crawler.settings"}
        env.pop("TOPICRAWL_DB_URL", None)
        with log_path.open("wb") as log:
            proc = subprocess.Popen(
                cmd, cwd=self.work_dir, env=env, stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True,
            )  # fmt: skip
        crawl = ManagedCrawl(key, proc, log_path, topic.name, seeds, datetime.now(UTC),
                             command=cmd)  # fmt: skip
        with self._lock:
            self._crawls[key] = crawl
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.run_id(crawl) is not None:
                return crawl
            if not crawl.running:
                self.run_id(crawl)
                if crawl.run_id is not None:
                    return crawl
                raise CrawlStartError(
                    f"the crawl ended before it started (exit status {proc.returncode})",
                    None,
                    crawl.log_tail(),
                )
            time.sleep(0.2)
        return crawl

    def run_id(self, crawl: ManagedCrawl) -> int | None:
        """The crawl's run id, read from its log once it appears."""
        if crawl.run_id is None:
            try:
                with crawl.log_path.open("rb") as fh:
                    head = fh.read(2_000_000).decode("utf-8", "replace")
            except OSError:
                return None
            m = _RUN_LINE.search(head)
            if m:
                crawl.run_id = int(m.group(1))
        return crawl.run_id

    def crawls(self) -> list[ManagedCrawl]:
        with self._lock:
            crawls = list(self._crawls.values())
        for c in crawls:
            self.run_id(c)
        return crawls

    def by_run(self, run_id: int) -> ManagedCrawl | None:
        for c in self.crawls():
            if c.run_id == run_id:
                return c
        return None

    def running_runs(self) -> set[int]:
        return {c.run_id for c in self.crawls() if c.running and c.run_id is not None}

    def stop(self, crawl: ManagedCrawl) -> None:
        """SIGINT: Scrapy's graceful shutdown (again: forced shutdown)."""
        if crawl.running:
            crawl.stop_requests += 1
            os.killpg(crawl.proc.pid, signal.SIGINT)

    def shutdown(self, timeout: float = 60.0) -> None:
        """Stop every running crawl and wait for them (the console is closing)."""
        running = [c for c in self.crawls() if c.running]
        for c in running:
            self.stop(c)
        deadline = time.monotonic() + timeout
        for c in running:
            try:
                c.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(c.proc.pid, signal.SIGKILL)
                c.proc.wait()
