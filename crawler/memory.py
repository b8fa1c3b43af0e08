"""Give freed heap memory back to the system during a long crawl (glibc's ``malloc_trim``).

A crawl's transient peaks (a 200,000-link page, a decoded page of several MB, a training of
the page model) are freed, but glibc keeps the freed chunks in its heaps, one per thread
that allocated, and the process's resident memory stays at the peak: in the soak
(``bench/soak.py --trace-memory``) ~110 MB of RSS was heap freed but kept after the first
minutes. ``MallocTrim`` calls ``malloc_trim(0)`` every ``TOPICRAWL_MALLOC_TRIM_INTERVAL``
seconds (60; 0 turns it off), which returns the free pages of every heap to the system,
and counts the MB returned in ``topicrawl/memory/trimmed_mb``. Not glibc (musl, macOS): off.

``GcFreeze`` moves what the process holds at spider open (libraries, the topic, the scorer's
dictionaries) out of the cyclic garbage collector's reach (``gc.freeze``, after one full
collection), so that the collector's full passes during the crawl traverse only what the
crawl made (``TOPICRAWL_GC_FREEZE``; docs/scale.md, 2026-11-28, ``i16d``).
"""

from __future__ import annotations

import gc
import logging
import time
from pathlib import Path
from typing import Any

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from twisted.internet import task

from topicrawl.heap import malloc_trim

log = logging.getLogger(__name__)


def rss_mb() -> float:
    """This process's resident memory in MB (``/proc/self/statm``), 0 when unknown."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return 0.0
    import resource

    return pages * resource.getpagesize() / 2**20


class MallocTrim:
    """Calls ``malloc_trim(0)`` every ``interval`` seconds; the MB of RSS it returned go to
    the stats."""

    def __init__(self, stats: Any, trim: Any, interval: float = 60.0):
        self.stats = stats
        self.trim = trim
        self.interval = interval
        self.loop: task.LoopingCall | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> MallocTrim:
        interval = crawler.settings.getfloat("TOPICRAWL_MALLOC_TRIM_INTERVAL", 60.0)
        if interval <= 0:
            raise NotConfigured("TOPICRAWL_MALLOC_TRIM_INTERVAL is 0")
        trim = malloc_trim()
        if trim is None:
            raise NotConfigured("no malloc_trim: the C library is not glibc")
        ext = cls(crawler.stats, trim, interval)
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def spider_opened(self, spider: Any) -> None:
        self.loop = task.LoopingCall(self.run)
        self.loop.start(self.interval, now=False)

    def spider_closed(self, spider: Any) -> None:
        if self.loop is not None and self.loop.running:
            self.loop.stop()

    def run(self) -> float:
        """Trim once; the MB of RSS returned (0 when none or unknown)."""
        before = rss_mb()
        self.trim(0)
        freed = max(0.0, before - rss_mb())
        self.stats.inc_value("topicrawl/memory/trims")
        self.stats.inc_value("topicrawl/memory/trimmed_mb", round(freed, 1))
        return freed


class GcFreeze:
    """At spider open: one full collection, then ``gc.freeze()`` — every object alive then
    goes to the collector's permanent generation, which its full (generation-2) passes skip.
    Those passes otherwise traverse the start-up heap (every module, the topic's word tables,
    the scorer's caches) each time, ≈ 0.1 s each in a default-mode crawl, whose learned
    models make enough new containers to trigger one every ≈ 130 pages. Collection never
    changes what a program computes, only when unreachable cycles are freed; a start-up
    object that becomes part of a garbage cycle later is not freed (its memory is held until
    the process ends). Stats: ``topicrawl/memory/gc_frozen`` (objects) and
    ``topicrawl/memory/gc_freeze_s`` (CPU seconds of the collection and the freeze)."""

    def __init__(self, stats: Any):
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> GcFreeze:
        if not crawler.settings.getbool("TOPICRAWL_GC_FREEZE", True):
            raise NotConfigured("TOPICRAWL_GC_FREEZE is off")
        ext = cls(crawler.stats)
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        return ext

    def spider_opened(self, spider: Any = None) -> int:
        """Collect, freeze; the number of objects now frozen."""
        start = time.thread_time()
        gc.collect()
        gc.freeze()
        frozen = gc.get_freeze_count()
        self.stats.set_value("topicrawl/memory/gc_frozen", frozen)
        self.stats.set_value("topicrawl/memory/gc_freeze_s", round(time.thread_time() - start, 3))
        return frozen
