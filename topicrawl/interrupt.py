"""SIGTERM and SIGINT honoured while a crawl starts, before Scrapy's own handlers run.

Loading a big topic file or building a scorer (a cold model build) runs synchronously: in
the crawl command's checks, before the event loop starts, and in the spider's
``from_crawler``, where Scrapy's handlers only queue a graceful stop on an event loop that
is busy loading. Inside :func:`interruptible` the signal raises :class:`Interrupted` at
once; the crawl command ends with one line and exit status 128 + the signal's number (130
for SIGINT, 143 for SIGTERM: ``topicrawl.outcome``).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

SIGNALS = (signal.SIGTERM, signal.SIGINT)


class Interrupted(BaseException):
    """A stop signal arrived during start-up. A ``BaseException`` (as ``KeyboardInterrupt``),
    so that no ``except Exception`` of the loading code swallows it."""

    def __init__(self, signum: int, stage: str):
        self.signum = signum
        self.stage = stage
        super().__init__(message(signum, stage))

    @property
    def exit_status(self) -> int:
        return 128 + self.signum


#: the interruption of this process's start-up, if any (read by the crawl command once the
#: event loop has ended: the exception itself stays inside Scrapy's failed crawl task)
received: Interrupted | None = None


def message(signum: int, stage: str) -> str:
    name = signal.Signals(signum).name
    return (
        f"stopped by {name} while {stage}: nothing was crawled and no run was recorded; "
        "run the same command again to crawl"
    )


@contextmanager
def interruptible(stage: str) -> Iterator[None]:
    """Within the block, SIGTERM and SIGINT raise :class:`Interrupted` (``stage`` says what
    was going on); the previous handlers come back after it. Outside the main thread,
    where handlers cannot be set, it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, _frame: Any) -> None:
        global received
        received = Interrupted(signum, stage)
        raise received

    previous = {sig: signal.getsignal(sig) for sig in SIGNALS}
    for sig in SIGNALS:
        signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old if old is not None else signal.SIG_DFL)
