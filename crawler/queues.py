"""A JOBDIR frontier that survives ``kill -9``.

Scrapy's default disk queues keep their size in memory and write it, with the list of
active priorities (``requests.queue/active.json``), only when the crawl closes cleanly; after
a SIGKILL the next run finds no frontier. Here every priority is a queuelib SQLite queue
(Scrapy's own ``PickleLifoSQLiteQueue``) in which each push and pop is a committed
transaction, and the priority queue finds its priorities from the files on disk as well as
from ``active.json``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from scrapy.pqueues import ScrapyPriorityQueue
from scrapy.squeues import PickleFifoSQLiteQueue, PickleLifoSQLiteQueue

_PRIO_FILE = re.compile(r"^(-?\d+)s?$")  # a priority's queue, or its start queue ("…s")


class _Durable:
    """A queuelib SQLite queue of Scrapy requests, one committed transaction per push or pop.
    WAL with ``synchronous=OFF``: a killed process loses nothing (the operating system holds
    the writes); only a crash of the machine can, and no fsync slows the crawl."""

    _db: Any

    def __init__(self, crawler: Any, key: str):
        super().__init__(crawler, key)  # type: ignore[call-arg]
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=OFF")
        self._size = super().__len__()  # type: ignore[misc]

    def push(self, request: Any) -> None:
        super().push(request)  # type: ignore[misc]
        self._size += 1

    def pop(self) -> Any:
        request = super().pop()  # type: ignore[misc]
        if request is not None:
            self._size -= 1
        return request

    def __len__(self) -> int:  # the engine asks often: no COUNT(*) each time
        return self._size


class DurableLifoQueue(_Durable, PickleLifoSQLiteQueue):
    """``SCHEDULER_DISK_QUEUE``: one priority of the frontier (last in, first out)."""


class DurableFifoQueue(_Durable, PickleFifoSQLiteQueue):
    """``SCHEDULER_START_DISK_QUEUE``: the start requests (first in, first out)."""


class DurablePriorityQueue(ScrapyPriorityQueue):
    """Scrapy's priority queue, also opening the priorities whose queue files are on disk
    (a crawl killed before it could write ``active.json``)."""

    def __init__(
        self,
        crawler: Any,
        downstream_queue_cls: Any,
        key: str,
        startprios: Iterable[int] = (),
        *,
        start_queue_cls: Any = None,
    ):
        found = set(startprios)
        if key and Path(key).is_dir():
            for path in Path(key).iterdir():
                if (match := _PRIO_FILE.match(path.name)) and path.is_file():
                    found.add(int(match.group(1)))
        super().__init__(
            crawler, downstream_queue_cls, key, sorted(found), start_queue_cls=start_queue_cls
        )
