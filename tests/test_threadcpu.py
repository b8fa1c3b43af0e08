"""The crawl thread's CPU from spider open to close (crawler/threadcpu.py)."""

from __future__ import annotations

import os

from crawler.threadcpu import ThreadCpu, thread_clock


class Stats:
    def __init__(self) -> None:
        self.values: dict[str, float] = {}

    def set_value(self, key: str, value: float) -> None:
        self.values[key] = value


def test_thread_cpu_is_recorded_from_start_to_stop() -> None:
    clock = ThreadCpu()
    stats = Stats()
    clock.stop(stats)  # never started: nothing recorded
    assert stats.values == {}
    clock.start(spider=None)  # as Scrapy's spider_opened signal calls it
    sum(i * i for i in range(200_000))
    clock.stop(stats)
    assert stats.values["topicrawl/cpu/crawl_thread_s"] >= 0
    assert stats.values["topicrawl/cpu/process_s"] >= 0
    if os.path.exists("/proc/thread-self/schedstat"):
        assert stats.values["topicrawl/cpu/crawl_thread_waited_s"] >= 0
        assert thread_clock()[1] is not None
