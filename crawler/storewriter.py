"""The store pipeline's database writer: one thread of its own, off the crawl's event loop.

Batches wait in a bounded in-memory queue (``memory_pages``); past it they wait in a spool
file on disk (``spool_pages``, JSON lines as :func:`models.store.spill_line` writes them), in
order: while the spool holds anything, new batches go behind it. A batch the database
refuses is retried (``retry_pause`` between attempts) until it is written or the writer is
stopped; :attr:`StoreWriter.full` tells the pipeline to apply backpressure, and
:meth:`StoreWriter.stop` hands back every batch not known to be written (the in-flight one
included: writes are idempotent upserts, so a batch written twice is stored once).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from models.store import spill_line, spill_row
from topicrawl.errors import StorageError

log = logging.getLogger(__name__)

#: a batch: page rows, then the replaced-document records that follow them
Batch = tuple[list[dict[str, Any]], list[dict[str, Any]]]


class StoreWriter:
    """Writes batches with ``write(rows, replaced)`` from a daemon thread, in order."""

    def __init__(
        self,
        write: Callable[[list[dict[str, Any]], list[dict[str, Any]]], None],
        *,
        run_id: int,
        spool_path: Path,
        memory_pages: int = 1000,
        spool_pages: int = 20000,
        retry_pause: float = 1.0,
    ):
        self.write = write
        self.run_id = run_id
        self.spool_path = Path(spool_path)
        self.memory_pages = max(1, memory_pages)
        self.spool_pages = max(0, spool_pages)
        self.retry_pause = retry_pause
        self._memory: deque[Batch] = deque()
        self._lock = threading.Condition()
        self._in_memory = 0  # pages queued in memory
        self._spooled = 0  # pages in the spool not yet written
        self._spooled_batches = 0  # batches in the spool not yet written (some without pages)
        self._spool_read = 0  # byte offset of the first unwritten spool line
        self._in_flight: Batch | None = None
        self._flight_offset: int | None = None  # spool offset after the in-flight batch
        self._stopping = False
        #: figures the pipeline copies into the stats (written by this thread)
        self.written_pages = 0
        self.failed_attempts = 0
        self.outage_since: float | None = None  # time.monotonic() of the first failure
        self.last_error = ""
        self.last_exc: BaseException | None = None
        self.last_success = time.monotonic()
        self._thread = threading.Thread(target=self._run, name="topicrawl-store", daemon=True)
        self._thread.start()

    # -- the crawl's side (event loop) -----------------------------------------------------
    @property
    def pending(self) -> int:
        """Pages not yet known to be written (memory, spool and in flight)."""
        with self._lock:
            flight = len(self._in_flight[0]) if self._in_flight else 0
            return self._in_memory + self._spooled + flight

    @property
    def idle(self) -> bool:
        """Nothing left to write: no page, and no batch of replaced records alone."""
        with self._lock:
            return not (self._memory or self._in_flight or self._spooled_batches)

    @property
    def spooled(self) -> int:
        return self._spooled

    @property
    def bound(self) -> int:
        return self.memory_pages + self.spool_pages

    @property
    def full(self) -> bool:
        """The buffer bound is reached: the crawl should wait (backpressure)."""
        return self.pending >= self.bound

    def put(self, rows: list[dict[str, Any]], replaced: list[dict[str, Any]]) -> None:
        """Queue a batch: in memory while there is room and nothing is spooled, else on disk.
        Never refuses one (the bound is the caller's to respect)."""
        if not rows and not replaced:
            return
        with self._lock:
            if self._spooled_batches or (self._in_memory + len(rows) > self.memory_pages
                                 and self.spool_pages):  # fmt: skip
                self._spool(rows, replaced)
            else:
                self._memory.append((rows, replaced))
                self._in_memory += len(rows)
            self._lock.notify_all()

    def _spool(self, rows: list[dict[str, Any]], replaced: list[dict[str, Any]]) -> None:
        self.spool_path.parent.mkdir(parents=True, exist_ok=True)
        with self.spool_path.open("a", encoding="utf-8") as fh:
            fh.writelines(spill_line(self.run_id, row) for row in rows)
            if replaced:
                fh.write(json.dumps({"run_id": self.run_id, "_replaced": replaced}) + "\n")
            fh.write(json.dumps({"run_id": self.run_id, "_end": True}) + "\n")
        self._spooled += len(rows)
        self._spooled_batches += 1

    def wait_drained(self, give_up_after: float) -> bool:
        """Block until everything is written (True), or until the database has refused every
        write for ``give_up_after`` seconds (False). Call from a thread, not the event loop."""
        while True:
            if self.idle:
                return True
            if self.outage_since is not None and (
                time.monotonic() - max(self.outage_since, self.last_success) >= give_up_after
            ):
                return False
            with self._lock:
                self._lock.wait(0.2)

    def stop(self) -> list[Batch]:
        """Stop the thread; return the batches not known to be written, oldest first (the
        spool file is removed once read)."""
        with self._lock:
            self._stopping = True
            self._lock.notify_all()
            left: list[Batch] = []
            if self._in_flight is not None:
                left.append(self._in_flight)
            left.extend(self._memory)
            self._memory.clear()
            self._in_memory = 0
            if self._flight_offset is not None:  # the in-flight batch came from the spool
                self._spool_read = self._flight_offset
            left.extend(self._read_spool(None)[0])
            self._spooled = self._spooled_batches = 0
            self.spool_path.unlink(missing_ok=True)
        self._thread.join(timeout=0.5)
        return left

    # -- the writer thread -----------------------------------------------------------------
    def _read_spool(self, limit: int | None) -> tuple[list[Batch], int]:
        """Batches of the spool from the read offset (all, or the first ``limit``) and the
        offset after them."""
        if not self.spool_path.exists():
            return [], self._spool_read
        batches: list[Batch] = []
        rows: list[dict[str, Any]] = []
        replaced: list[dict[str, Any]] = []
        with self.spool_path.open("rb") as fh:
            fh.seek(self._spool_read)
            offset = self._spool_read
            for raw in fh:
                offset += len(raw)
                line = json.loads(raw)
                if line.get("_end"):
                    batches.append((rows, replaced))
                    rows, replaced = [], []
                    if limit is not None and len(batches) >= limit:
                        break
                elif "_replaced" in line:
                    replaced = line["_replaced"]
                else:
                    rows.append(spill_row(raw.decode("utf-8"))[1])
        return batches, offset

    def _next(self) -> tuple[Batch, int | None] | None:
        with self._lock:
            if self._memory:
                batch = self._memory.popleft()
                self._in_memory -= len(batch[0])
                self._in_flight, self._flight_offset = batch, None
                return batch, None
            if self._spooled_batches:
                found, offset = self._read_spool(1)
                if found:
                    self._spooled -= len(found[0][0])
                    self._spooled_batches -= 1
                    self._in_flight, self._flight_offset = found[0], offset
                    return found[0], offset
        return None

    def _run(self) -> None:
        while True:
            with self._lock:
                if self._stopping:
                    return
            item = self._next()
            if item is None:
                with self._lock:
                    if not self._stopping:
                        self._lock.wait(0.5)
                continue
            batch, offset = item
            while True:
                try:
                    self.write(*batch)
                except StorageError as exc:
                    self.failed_attempts += 1
                    self.last_error = str(exc).splitlines()[0]
                    self.last_exc = exc
                    if self.outage_since is None:
                        self.outage_since = time.monotonic()
                        log.warning("database unavailable: pages wait in memory and in %s "
                                    "while the crawl goes on (%s)", self.spool_path, exc)  # fmt: skip
                    with self._lock:
                        if self._stopping:
                            return  # stop() handed the in-flight batch back
                        self._lock.wait(self.retry_pause)
                        if self._stopping:
                            return
                    continue
                break
            with self._lock:
                self.written_pages += len(batch[0])
                self.last_success = time.monotonic()
                if self.outage_since is not None:
                    log.warning("database back after %.0f s", time.monotonic() - self.outage_since)
                    self.outage_since = None
                self._in_flight, self._flight_offset = None, None
                if offset is not None:
                    self._spool_read = offset
                    if self._spooled_batches == 0 and offset >= self.spool_path.stat().st_size:
                        self.spool_path.unlink(missing_ok=True)
                        self._spool_read = 0
                self._lock.notify_all()
