"""A JOBDIR frontier that survives ``kill -9``.

Scrapy's default disk queues keep their size in memory and write it, with the list of
active priorities (``requests.queue/active.json``), only when the crawl closes cleanly; after
a SIGKILL the next run finds no frontier. Here every priority is a queuelib SQLite queue
(Scrapy's own ``PickleLifoSQLiteQueue``) in which each push and pop is a committed
transaction, and the priority queue finds its priorities from the files on disk as well as
from ``active.json``.
"""

from __future__ import annotations

import heapq
import logging
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from scrapy.pqueues import ScrapyPriorityQueue
from scrapy.squeues import PickleFifoSQLiteQueue, PickleLifoSQLiteQueue
from scrapy.utils.request import request_from_dict

from crawler.lazy import lazy_class
from crawler.lease import LEASE, WORKER_META, lease_of
from crawler.middlewares import POPPED_FILE, RESCORED, rescored_request, sent_line

log = logging.getLogger(__name__)

_PRIO_FILE = re.compile(r"^(-?\d+)s?$")  # a priority's queue, or its start queue ("…s")
#: Requests a pop of the local frontier defers at most before it returns one as it is
MAX_DEFERRED_PER_POP = 100


class _Durable:
    """A queuelib SQLite queue of Scrapy requests, one committed transaction per push or pop.
    WAL with ``synchronous=OFF``: a killed process loses nothing (the operating system holds
    the writes); only a crash of the machine can, and no fsync slows the crawl.

    Each priority is a queue with its own connection, and SQLite's default page cache is
    2 MB a connection: a frontier spread over a few hundred priorities held a few hundred MB
    of cache (the soak's memory growing with its frontier). A push or pop touches only the
    table's last pages, so the cache is ``TOPICRAWL_QUEUE_CACHE_KB`` (128 KiB) a queue."""

    _db: Any

    def __init__(self, crawler: Any, key: str):
        super().__init__(crawler, key)  # type: ignore[call-arg]
        cache_kb = crawler.settings.getint("TOPICRAWL_QUEUE_CACHE_KB", 128) if crawler else 128
        self._db.execute(f"PRAGMA cache_size=-{max(cache_kb, 16)}")
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
        s = crawler.settings
        self.rescore_margin = s.getfloat("TOPICRAWL_RESCORE_MARGIN", 0.1)
        self.rescore_max = s.getint("TOPICRAWL_RESCORE_MAX", 2)
        #: the dispatch floor (calibrated mode): a request scored under it waits while this
        #: many requests or more are in flight (0: off)
        self.dispatch_floor = s.getfloat("TOPICRAWL_DISPATCH_FLOOR", 0.0)
        self.dispatch_in_flight = s.getint("TOPICRAWL_DISPATCH_IN_FLIGHT", 2)
        #: the JOBDIR frontier (not the memory one) journals the requests it hands out
        jobdir = s.get("JOBDIR") if key else None
        self._popped: Any = None
        if jobdir:
            Path(jobdir).mkdir(parents=True, exist_ok=True)
            self._popped = (Path(jobdir) / POPPED_FILE).open("a", encoding="utf-8")

    # -- the best priority: a heap instead of Scrapy's scan of every priority ---------------
    def init_prios(self, startprios: Iterable[int]) -> None:
        #: every priority that may hold a request (a min-heap; stale entries are dropped as
        #: they reach the top), and the same as a set
        self._prios: list[int] = sorted(set(startprios))
        self._in_heap: set[int] = set(self._prios)
        super().init_prios(startprios)

    def push(self, request: Any) -> None:
        priority = self.priority(request)
        if priority not in self._in_heap:  # before the push, which may fail half-way
            self._in_heap.add(priority)
            heapq.heappush(self._prios, priority)
        super().push(request)

    def _update_curprio(self) -> None:
        """The smallest priority whose queue (or start queue) is not empty, as Scrapy's
        ``ScrapyPriorityQueue._update_curprio`` finds it, from the heap of priorities
        instead of a scan of every queue each time one runs empty: with link scores
        quantized to ``round(score * 1000)`` and re-scored requests pushed back at their new
        priority, a crawl's frontier holds hundreds of priorities, and the scan was ≈ 1 % of
        the crawl thread in the default mode (docs/scale.md, 2026-11-28, ``i16d``)."""
        heap, queues, starts = self._prios, self.queues, self._start_queues
        while heap:
            priority = heap[0]
            if queues.get(priority) or starts.get(priority):
                self.curprio = priority
                return
            heapq.heappop(heap)
            self._in_heap.discard(priority)
        self.curprio = None

    def close(self) -> list[int]:
        if self._popped is not None:
            self._popped.close()
            self._popped = None
        return super().close()

    def pop(self) -> Any:
        """The best request (:meth:`_pop`), written to ``JOBDIR/topicrawl-popped.txt`` as it
        leaves the queue: the engine sends it to the downloader middlewares, where the
        fetch-once guard records it as sent, one event-loop turn later, and a kill in between
        lost it (out of the queue, not sent: not requested again on resume)."""
        request = self._pop()
        if request is not None and self._popped is not None:
            fp = self.crawler.request_fingerprinter.fingerprint(request).hex()
            self._popped.write(sent_line(fp, request))
            self._popped.flush()
        return request

    def _pop(self) -> Any:
        """The best request, re-scored in place (issue 10, calibrated mode): a request whose
        link score fell by more than ``TOPICRAWL_RESCORE_MARGIN`` with the current models
        goes back into this queue with its new priority and the next one is popped — the
        deferral of :class:`crawler.middlewares.LinkRescoreMiddleware` without its round trip
        through the engine, the downloader middlewares and the spider's errback (about six
        per fetched page). The request returned is marked ``RESCORED``, so the middleware
        lets it pass."""
        scorer = getattr(getattr(self.crawler, "spider", None), "scorer", None)
        if getattr(scorer, "rescore", None) is None:  # the paper's scorer: nothing to re-score
            return super().pop()
        for _ in range(MAX_DEFERRED_PER_POP):
            request = super().pop()
            if request is None:
                return None
            again = rescored_request(request, scorer, margin=self.rescore_margin,
                                     max_deferrals=self.rescore_max)  # fmt: skip
            if again is None:
                request.meta[RESCORED] = True
                if self._waits(request):
                    self.push(request)
                    return None
                return request
            self.push(again)
            self.crawler.stats.inc_value("topicrawl/links/deferred")
        return super().pop()

    def _waits(self, request: Any) -> bool:
        """The best request waits (``TOPICRAWL_DISPATCH_FLOOR``): its link score is under the
        floor and at least ``TOPICRAWL_DISPATCH_IN_FLIGHT`` requests are being downloaded or
        parsed, whose pages may bring better links. Fetched at once, such a request spends
        the budget on a page the crawl's models think unlikely on-topic; the engine asks
        again as each response comes in, and with fewer in flight the request goes."""
        if self.dispatch_floor <= 0 or request.priority >= self.dispatch_floor * 1000:
            return False
        link = request.meta.get("link_score")
        if not isinstance(link, dict) or link.get("seed") or request.meta.get("retry_times"):
            return False  # a seed, a retry, a request not scored as a link: not held back
        engine = getattr(self.crawler, "engine", None)
        if engine is None:
            return False
        busy = len(getattr(engine.downloader, "active", ()))
        slot = getattr(engine.scraper, "slot", None)
        busy += len(getattr(slot, "active", ())) if slot is not None else 0
        if busy < self.dispatch_in_flight:
            return False
        self.crawler.stats.inc_value("topicrawl/links/waited")
        return True


# -- the shared frontier of the scale-out (scrapy-redis) ----------------------------------------

#: Request classes a frontier entry may name (``_class``): scrapy's ``request_from_dict``
#: imports and calls whatever dotted path an entry gives
SAFE_REQUEST_CLASSES = frozenset({
    "scrapy.Request", "scrapy.http.Request", "scrapy.http.request.Request",
    "scrapy.FormRequest", "scrapy.http.FormRequest", "scrapy.http.request.form.FormRequest",
    "scrapy.http.JsonRequest", "scrapy.http.request.json_request.JsonRequest",
})  # fmt: skip
#: Entries a worker skips in one pop before it lets the scheduler ask again
MAX_SKIPPED_PER_POP = 100


#: a new link: KEYS the dupefilter's seen set, the frontier; ARGV fingerprint, score, entry
_PUSH_UNSEEN = """
if redis.call('SADD', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
return 1
"""


def _redis_queue_class() -> type:
    """:class:`RedisPriorityQueue`, made on first use: its base is scrapy-redis', whose import
    (redis-py, ≈ 6 MB) a crawl without Redis does not need (crawler.seen does the same)."""
    from scrapy_redis.queue import PriorityQueue

    class RedisPriorityQueue(PriorityQueue):
        """scrapy-redis's sorted-set frontier that stores data only and never trusts it.

        Entries are JSON (:mod:`crawler.serialization`, also ``SCHEDULER_SERIALIZER``).
        An entry that does not decode to a request of a known class with callbacks of the
        spider's ``frontier_callbacks`` (a pickle, truncated data, ``_class`` naming another
        object) is removed, counted as ``topicrawl/frontier/malformed`` and skipped, never
        executed. A request whose meta holds a value JSON cannot carry loses that meta key
        (counted as ``topicrawl/frontier/meta_dropped``), not the request.
        """

        def __init__(self, server: Any, spider: Any, key: str, serializer: Any = None):
            from scrapy_redis import picklecompat

            from crawler import serialization

            if serializer is None or serializer is picklecompat:  # never pickle
                serializer = serialization
            super().__init__(server, spider, key, serializer)
            #: crawler.lease.WorkerLease: a popped request is leased to this worker
            self.lease = lease_of(getattr(spider, "crawler", None))
            self._push_unseen: Any = None  # the registered _PUSH_UNSEEN script
            if self.lease is not None and self.lease.frontier_key != key:
                self.lease = None  # a queue of another key (tests): no lease

        def _stats(self) -> Any:
            crawler = getattr(self.spider, "crawler", None)
            return getattr(crawler, "stats", None)

        def _inc(self, key: str) -> None:
            stats = self._stats()
            if stats is not None:
                stats.inc_value(key)

        def _encode_request(self, request: Any) -> bytes:
            obj = request.to_dict(spider=self.spider)
            if LEASE in (obj.get("meta") or {}):  # a lease is this worker's, not the entry's
                obj["meta"] = {k: v for k, v in obj["meta"].items()
                               if k not in WORKER_META}  # fmt: skip
            try:
                return self.serializer.dumps(obj)
            except (TypeError, ValueError):
                meta = {}
                for key, value in (obj.get("meta") or {}).items():
                    try:
                        self.serializer.dumps({"v": value})
                    except (TypeError, ValueError):
                        self._inc("topicrawl/frontier/meta_dropped")
                        log.debug("meta %r of %s cannot be stored in the frontier",
                                  key, request.url)  # fmt: skip
                        continue
                    meta[key] = value
                obj["meta"] = meta
                return self.serializer.dumps(obj)

        def _decode_request(self, encoded: bytes) -> Any:
            obj = self.serializer.loads(encoded)
            cls = obj.get("_class")
            if cls is not None and cls not in SAFE_REQUEST_CLASSES:
                raise ValueError(f"request class {cls!r} is not allowed")
            allowed = getattr(self.spider, "frontier_callbacks", frozenset({"parse"}))
            for name in ("callback", "errback"):
                if obj.get(name) is not None and obj[name] not in allowed:
                    raise ValueError(f"{name} {obj[name]!r} is not one of the spider's")
            if not isinstance(obj.get("url"), str):
                raise ValueError("no URL")
            return request_from_dict(obj, spider=self.spider)

        def push_unseen(self, request: Any, seen_key: str, fingerprint: str) -> bool:
            """Mark ``request`` seen (``SADD`` of ``fingerprint`` to the dupefilter's set
            ``seen_key``) and push it, in one script: False (nothing pushed) when it was seen
            before. Two calls, a worker killed between them left a link seen that no entry
            holds: lost for the whole crawl."""
            if self._push_unseen is None:
                self._push_unseen = self.server.register_script(_PUSH_UNSEEN)
            pushed = self._push_unseen(keys=[seen_key, self.key],
                                       args=[fingerprint, -request.priority,
                                             self._encode_request(request)])  # fmt: skip
            return bool(pushed)

        def push(self, request: Any) -> None:
            if self.lease is None:
                return super().push(request)
            self.lease.push(self._encode_request(request), -request.priority,
                            request.meta.get(LEASE))  # fmt: skip

        def _pop_leased(self, limit: int | None) -> Any:
            for _ in range(MAX_SKIPPED_PER_POP):
                found = self.lease.pop(limit)
                if found is None:
                    return None
                data, lease_id = found
                try:
                    request = self._decode_request(data)
                except Exception as exc:  # hostile or corrupt data: skip, never run it
                    self.lease.release(lease_id)
                    self._inc("topicrawl/frontier/malformed")
                    log.warning("skipped a malformed frontier entry (%s: %s): %r",
                                type(exc).__name__, exc, data[:80])  # fmt: skip
                    continue
                self.lease.stamp(lease_id, request.meta)
                return request
            return None

        def pop(self, timeout: int = 0, limit: int | None = None) -> Any:
            """The best request (None: the frontier is empty). With a lease, it is recorded
            as this worker's in flight in the same Redis call, and none is popped once the page
            budget ``limit`` is spent."""
            if self.lease is not None:
                return self._pop_leased(limit)
            for _ in range(MAX_SKIPPED_PER_POP):
                pipe = self.server.pipeline()
                pipe.multi()
                pipe.zrange(self.key, 0, 0).zremrangebyrank(self.key, 0, 0)
                results, _count = pipe.execute()
                if not results:
                    return None
                try:
                    return self._decode_request(results[0])
                except Exception as exc:  # hostile or corrupt data: skip, never run it
                    self._inc("topicrawl/frontier/malformed")
                    log.warning("skipped a malformed frontier entry (%s: %s): %r",
                                type(exc).__name__, exc, results[0][:80])  # fmt: skip
            return None

    return RedisPriorityQueue


# the scale-out's SCHEDULER_QUEUE_CLASS, crawler.queues.RedisPriorityQueue, made on first use
__getattr__ = lazy_class(globals(), "RedisPriorityQueue", _redis_queue_class)
