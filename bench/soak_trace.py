"""A Scrapy extension for ``bench/soak.py --trace``: tracemalloc snapshots of the crawl.

Every ``SOAK_TRACE_SECONDS`` it takes a snapshot and appends to ``SOAK_TRACE_FILE`` the
allocation sites (file and line) whose memory grew most since the first snapshot, with the
traced total. Start the crawl with ``PYTHONTRACEMALLOC=1`` (or it starts tracing itself
when the spider opens).
"""

from __future__ import annotations

import time
import tracemalloc
from pathlib import Path
from typing import Any

from scrapy import signals
from scrapy.exceptions import NotConfigured
from twisted.internet import task


class TraceMallocSamples:
    """Writes the top growing allocation sites every ``interval`` seconds."""

    def __init__(self, path: str, interval: float = 60.0, top: int = 15):
        self.path = Path(path)
        self.interval = interval
        self.top = top
        self.first: tracemalloc.Snapshot | None = None
        self.start = time.monotonic()
        self.loop: task.LoopingCall | None = None

    @classmethod
    def from_crawler(cls, crawler: Any) -> TraceMallocSamples:
        path = crawler.settings.get("SOAK_TRACE_FILE")
        if not path:
            raise NotConfigured("SOAK_TRACE_FILE is not set")
        ext = cls(path, crawler.settings.getfloat("SOAK_TRACE_SECONDS", 60.0))
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def spider_opened(self, spider: Any) -> None:
        if not tracemalloc.is_tracing():
            tracemalloc.start()
        self.start = time.monotonic()
        self.loop = task.LoopingCall(self.sample)
        self.loop.start(self.interval, now=False)

    def spider_closed(self, spider: Any) -> None:
        if self.loop is not None and self.loop.running:
            self.loop.stop()
        self.sample()

    def sample(self) -> None:
        """Snapshot; the first is the baseline, later ones write their growth."""
        snap = tracemalloc.take_snapshot().filter_traces(
            [tracemalloc.Filter(False, tracemalloc.__file__)]
        )
        if self.first is None:
            self.first = snap
            return
        traced, peak = tracemalloc.get_traced_memory()
        lines = [f"== {time.monotonic() - self.start:.0f} s: traced {traced / 2**20:.1f} MB "
                 f"(peak {peak / 2**20:.1f} MB)"]  # fmt: skip
        for stat in snap.compare_to(self.first, "lineno")[: self.top]:
            lines.append(f"{stat.size_diff / 2**20:+8.2f} MB {stat.count_diff:+9d} blocks  "
                         f"{stat.traceback}")  # fmt: skip
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")
