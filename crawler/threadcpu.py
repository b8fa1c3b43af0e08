"""CPU time of the crawl's thread (Scrapy's reactor thread) from spider open to close, and how
long it waited for a core, as stats: whether a crawl is bound by its own thread, by the
extraction pool's worker, or by a shared machine (issue 16; docs/scale.md).

``topicrawl/cpu/crawl_thread_s``: CPU seconds of the thread that opened the spider (the
reactor's); ``topicrawl/cpu/crawl_thread_waited_s``: seconds it was runnable but waiting for a
core (Linux ``/proc/thread-self/schedstat``; absent elsewhere); ``topicrawl/cpu/process_s``:
CPU seconds of the whole crawl process over the same span (its other threads: the store's
writer, the pool's pickling). What is left of ``elapsed_time_seconds`` after the first two is
the time the thread had nothing to do (waiting for the network or for the pool's worker).
"""

from __future__ import annotations

import time
from typing import Any

SCHEDSTAT = "/proc/thread-self/schedstat"


def thread_clock() -> tuple[float, float | None]:
    """(CPU seconds of the calling thread, seconds it has waited runnable for a core, or
    None where the kernel does not say)."""
    cpu = time.thread_time()
    try:
        with open(SCHEDSTAT, encoding="ascii") as f:
            waited: float | None = int(f.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        waited = None
    return cpu, waited


class ThreadCpu:
    """Started at spider open (:meth:`start`, on the reactor's thread), written into the
    stats at spider close (:meth:`stop`, on the same thread)."""

    def __init__(self) -> None:
        self._start: tuple[float, float | None, float] | None = None

    def start(self, *_: Any, **__: Any) -> None:
        cpu, waited = thread_clock()
        self._start = (cpu, waited, time.process_time())

    def stop(self, stats: Any) -> None:
        if self._start is None:
            return
        cpu0, waited0, process0 = self._start
        cpu, waited = thread_clock()
        stats.set_value("topicrawl/cpu/crawl_thread_s", round(cpu - cpu0, 3))
        if waited is not None and waited0 is not None:
            stats.set_value("topicrawl/cpu/crawl_thread_waited_s", round(waited - waited0, 3))
        stats.set_value("topicrawl/cpu/process_s", round(time.process_time() - process0, 3))
