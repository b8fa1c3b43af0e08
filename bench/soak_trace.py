"""A Scrapy extension for ``bench/soak.py --trace``: tracemalloc snapshots of the crawl.

Tracing starts when the spider opens (one frame per allocation). Every
``SOAK_TRACE_SECONDS`` it takes a snapshot and appends to ``SOAK_TRACE_FILE`` the traced
total, SQLite's memory and the process's RSS, and the allocation sites (file and line) whose memory grew
most since the first snapshot.
"""

from __future__ import annotations

import ctypes
import time
import tracemalloc
from pathlib import Path
from typing import Any

from scrapy import signals
from scrapy.exceptions import NotConfigured
from twisted.internet import task


def _rss_mb() -> float:
    """This process's resident memory in MB (``/proc/self/status``)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _sqlite_mb() -> float:
    """Memory SQLite holds in this process (``sqlite3_memory_used``: page caches and
    statements of every connection, outside Python's allocator); -1 when unknown."""
    try:
        import _sqlite3

        lib = ctypes.CDLL(_sqlite3.__file__)
        used = lib.sqlite3_memory_used
    except (OSError, AttributeError):
        return -1.0
    used.restype = ctypes.c_int64
    return used() / 2**20


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
                 f"(peak {peak / 2**20:.1f} MB), SQLite {_sqlite_mb():.1f} MB, RSS {_rss_mb():.0f} MB"]  # fmt: skip
        for stat in snap.compare_to(self.first, "lineno")[: self.top]:
            lines.append(f"{stat.size_diff / 2**20:+8.2f} MB {stat.count_diff:+9d} blocks  "
                         f"{stat.traceback}")  # fmt: skip
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")
