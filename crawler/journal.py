"""The store pipeline's JOBDIR page journal, in segments (kill -9 safe, bounded on disk).

Every page the store pipeline takes is appended to the open segment
(``topicrawl-unwritten.NNNNNN.jsonl``, lines of :func:`models.store.spill_line`) and flushed
to the operating system before the pipeline returns, so a ``kill -9`` loses no acknowledged
page. When the pipeline hands its buffer to the database writer as one batch, the segment is
sealed (fsynced and closed) and a new one opened; a sealed segment is deleted once its batch
is committed (:meth:`PageJournal.written`, in the writer's order) or written to a spill file
(:meth:`PageJournal.release_all`). The journal on disk thus holds only the pages not yet
written, whatever the length of the crawl. :func:`journal_segments` and
:func:`read_batches` let a resume store what a killed crawl left, a batch at a time.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from models.store import spill_line, spill_row

log = logging.getLogger(__name__)

#: the single journal file of versions before segments (read on resume, then deleted)
LEGACY_JOURNAL_FILE = "topicrawl-unwritten.jsonl"
SEGMENT_PREFIX = "topicrawl-unwritten."
_SEGMENT = re.compile(r"^topicrawl-unwritten\.(\d{6,})\.jsonl$")


def segment_number(path: Path) -> int | None:
    """The number of a journal segment file, or None for another file."""
    match = _SEGMENT.match(path.name)
    return int(match.group(1)) if match else None


def journal_segments(directory: Path) -> list[Path]:
    """The journal files in ``directory``, oldest first (an older version's single file
    before every segment)."""
    if not directory.is_dir():
        return []
    numbered = sorted((n, p) for p in directory.iterdir() if (n := segment_number(p)) is not None)
    legacy = directory / LEGACY_JOURNAL_FILE
    return ([legacy] if legacy.exists() else []) + [p for _, p in numbered]


def read_batches(path: Path, size: int) -> Iterator[list[dict[str, Any]]]:
    """The page rows of a journal file, ``size`` at a time (streamed: one batch in memory).
    A line that does not parse (the last one, cut by a kill mid-write: its page was never
    acknowledged) is skipped with a warning."""
    batch: list[dict[str, Any]] = []
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            try:
                batch.append(spill_row(raw.decode("utf-8"))[1])
            except (ValueError, KeyError, TypeError) as exc:
                log.warning("%s line %d skipped (cut or damaged: %s)", path, number, exc)
                continue
            if len(batch) >= size:
                yield batch
                batch = []
    if batch:
        yield batch


class PageJournal:
    """Segments of the pages not yet written, in ``directory``.

    The crawl's event loop calls :meth:`append` and :meth:`seal`; the writer thread calls
    :meth:`written` once per batch it committed, in the order of the seals.
    """

    def __init__(self, directory: Path, run_id: int, *, fsync: bool = True):
        self.directory = Path(directory)
        self.run_id = run_id
        #: fsync a segment when it is sealed (a power cut then loses at most the open one)
        self.fsync = fsync
        self.directory.mkdir(parents=True, exist_ok=True)
        found = [segment_number(p) for p in journal_segments(self.directory)]
        self._next = max((n for n in found if n is not None), default=-1) + 1
        self._file: IO[str] | None = None
        self._path: Path | None = None
        self._lock = threading.Lock()
        #: sealed segments (None: a batch without pages), one per batch handed to the writer
        self._sealed: deque[Path | None] = deque()
        self.deleted = 0  # segments deleted (written or spilled)

    @property
    def sealed(self) -> int:
        """Segments sealed and not yet deleted."""
        with self._lock:
            return sum(1 for p in self._sealed if p is not None)

    def append(self, row: dict[str, Any]) -> None:
        """Journal one page; it is with the operating system when this returns."""
        if self._file is None:
            self._path = self.directory / f"{SEGMENT_PREFIX}{self._next:06d}.jsonl"
            self._next += 1
            self._file = self._path.open("a", encoding="utf-8")
        self._file.write(spill_line(self.run_id, row))
        self._file.flush()

    def seal(self) -> None:
        """Close the open segment: it holds the batch about to be handed to the writer.
        Call before the batch is queued (the writer may commit it at once)."""
        path = self._close_file()
        with self._lock:
            self._sealed.append(path)

    def written(self) -> None:
        """The oldest sealed batch is committed: delete its segment (writer thread)."""
        with self._lock:
            path = self._sealed.popleft() if self._sealed else None
        if path is not None:
            path.unlink(missing_ok=True)
            self.deleted += 1

    def release_all(self) -> None:
        """Every sealed batch is in a spill file now: delete their segments."""
        with self._lock:
            paths, self._sealed = list(self._sealed), deque()
        for path in paths:
            if path is not None:
                path.unlink(missing_ok=True)
                self.deleted += 1

    def close(self) -> None:
        """Close the open segment; it and the sealed ones stay on disk until their pages
        are written or spilled (a resume stores them)."""
        self._close_file()

    def _close_file(self) -> Path | None:
        if self._file is None:
            return None
        fh, path = self._file, self._path
        self._file, self._path = None, None
        fh.flush()
        if self.fsync:
            os.fsync(fh.fileno())
        fh.close()
        return path


def journal_bytes(directory: Path) -> int:
    """Bytes of every journal file in ``directory``. A segment that the store's writer
    thread deletes while it is read (its batch committed) counts 0."""
    total = 0
    for p in journal_segments(directory):
        try:
            total += p.stat().st_size
        except FileNotFoundError:
            pass
    return total
