"""A Scrapy extension for ``bench/soak.py --trace``: tracemalloc snapshots of the crawl.

Tracing starts when the spider opens (one frame per allocation). Every
``SOAK_TRACE_SECONDS`` it takes a snapshot and appends to ``SOAK_TRACE_FILE`` the traced
total, SQLite's memory and the process's RSS, and the allocation sites (file and line) whose memory grew
most since the first snapshot.
"""

from __future__ import annotations

import ctypes
import functools
import gc
import json
import logging
import os
import re
import sys
import tempfile
import time
import tracemalloc
import types
from collections import Counter, deque
from pathlib import Path
from typing import Any

import numpy as np
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


class PeriodicSample:
    """A Scrapy extension that calls :meth:`sample` every ``interval`` seconds
    (``SOAK_TRACE_SECONDS``) while the spider is open, writing to the file that the setting
    :attr:`file_setting` names (not configured without it)."""

    file_setting = ""

    def __init__(self, crawler: Any, path: str, interval: float = 60.0):
        self.crawler = crawler
        self.path = Path(path)
        self.interval = interval
        self.start = time.monotonic()
        self.loop: task.LoopingCall | None = None

    @classmethod
    def from_crawler(cls, crawler: Any) -> PeriodicSample:
        path = crawler.settings.get(cls.file_setting)
        if not path:
            raise NotConfigured(f"{cls.file_setting} is not set")
        ext = cls(crawler, path, crawler.settings.getfloat("SOAK_TRACE_SECONDS", 60.0))
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def spider_opened(self, spider: Any) -> None:
        self.start = time.monotonic()
        self.loop = task.LoopingCall(self.sample)
        self.loop.start(self.interval, now=False)

    def spider_closed(self, spider: Any) -> None:
        if self.loop is not None and self.loop.running:
            self.loop.stop()

    def sample(self) -> None:
        raise NotImplementedError


class TraceMallocSamples(PeriodicSample):
    """Writes the top growing allocation sites every ``interval`` seconds."""

    file_setting = "SOAK_TRACE_FILE"
    top = 15  # allocation sites a sample writes

    def __init__(self, crawler: Any, path: str, interval: float = 60.0):
        super().__init__(crawler, path, interval)
        self.first: tracemalloc.Snapshot | None = None

    def spider_opened(self, spider: Any) -> None:
        if not tracemalloc.is_tracing():
            tracemalloc.start()
        super().spider_opened(spider)

    def spider_closed(self, spider: Any) -> None:
        super().spider_closed(spider)
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


# -- bench/soak.py --trace-memory: cheap attribution, no tracemalloc ------------------------

#: containers at least this long are measured (and not walked further for more)
BIG = 1_000
#: how many objects the walk from the crawler visits at most per sample
WALK_LIMIT = 300_000


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]  # fmt: skip


def malloc_mb() -> dict[str, float]:
    """glibc's ``mallinfo2`` over all arenas, in MB: ``in_use`` (allocated, heaps and
    mmapped chunks: Python's arenas included), ``free_kept`` (freed but kept in the heaps:
    fragmentation the process does not give back); empty when not glibc."""
    try:
        fn = ctypes.CDLL("libc.so.6").mallinfo2
    except (OSError, AttributeError):
        return {}
    fn.restype = _Mallinfo2
    m = fn()
    return {"in_use": (m.uordblks + m.hblkhd) / 2**20, "free_kept": m.fordblks / 2**20,
            "heap": (m.arena + m.hblkhd) / 2**20}  # fmt: skip


def pymalloc_mb() -> dict[str, float]:
    """Python's small-object allocator (``sys._debugmallocstats``, read through a temporary
    file in place of fd 2), in MB: ``arenas`` (mmapped apart from glibc's heap), ``in_use``
    (allocated blocks), ``free`` (available blocks and unused pools in those arenas)."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile("w+") as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        tmp.seek(0)
        text = tmp.read()

    def num(pattern: str) -> float:
        m = re.search(pattern + r"\s*=\s*([\d,]+)", text)
        return int(m.group(1).replace(",", "")) / 2**20 if m else 0.0

    return {"arenas": num(r"arenas \* \d+ bytes/arena"), "in_use": num("# bytes in allocated blocks"),
            "free": num("# bytes in available blocks") + num(r"unused pools \* \d+ bytes")}  # fmt: skip


def _children(obj: Any) -> list[tuple[str, Any]]:
    """The named parts of ``obj`` the walk follows: attributes, dict values, small sequences."""
    out: list[tuple[str, Any]] = []
    if isinstance(obj, dict):
        out += [(f"[{k!r}]" if isinstance(k, str | int) else "[…]", v) for k, v in obj.items()]
    elif isinstance(obj, list | tuple | deque):
        out += [(f"[{i}]", v) for i, v in enumerate(obj)]
    d = getattr(obj, "__dict__", None)
    if isinstance(d, dict):
        out += [(f".{k}", v) for k, v in d.items()]
    for name in getattr(type(obj), "__slots__", ()) or ():
        if isinstance(name, str) and hasattr(obj, name):
            out.append((f".{name}", getattr(obj, name)))
    return out


_SKIP = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
         types.MethodType, str, bytes, int, float, bool, type(None))  # fmt: skip


def deep_size(obj: Any, seen: set[int], depth: int = 4) -> int:
    """Bytes of ``obj`` and what it holds (ids in ``seen`` are counted once across calls)."""
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    size = sys.getsizeof(obj)
    if depth == 0 or isinstance(obj, str | bytes | int | float | type | types.ModuleType):
        return size
    if isinstance(obj, dict):
        for k, v in obj.items():
            size += deep_size(k, seen, depth - 1) + deep_size(v, seen, depth - 1)
    elif isinstance(obj, list | tuple | set | frozenset | deque):
        for v in obj:
            size += deep_size(v, seen, depth - 1)
    elif isinstance(obj, np.ndarray):
        size += 0 if obj.base is None else obj.nbytes
    d = getattr(obj, "__dict__", None)
    if isinstance(d, dict) and not isinstance(obj, type):
        size += deep_size(d, seen, depth - 1)
    return size


def big_structures(roots: dict[str, Any]) -> dict[str, tuple[int, float]]:
    """Containers of ``BIG`` items or more reachable from ``roots`` (attributes, dict
    values, sequence items, breadth first), by path: (length, deep size in MB). Memory
    shared by two is counted under the path found first."""
    found: list[tuple[str, Any]] = []
    visited: set[int] = set()
    queue: deque[tuple[str, Any, int]] = deque((k, v, 0) for k, v in roots.items())
    while queue and len(visited) < WALK_LIMIT:
        path, obj, depth = queue.popleft()
        if id(obj) in visited or isinstance(obj, _SKIP):
            continue
        visited.add(id(obj))
        try:
            n = len(obj) if isinstance(obj, dict | list | set | frozenset | deque | tuple) else 0
        except TypeError:
            n = 0
        if n >= BIG:
            found.append((path, obj))
            continue
        if depth < 8:
            queue.extend((path + name, child, depth + 1) for name, child in _children(obj))
    seen: set[int] = set()
    return {path: (len(obj), deep_size(obj, seen) / 2**20) for path, obj in found}


def lru_caches() -> dict[str, tuple[int, float]]:
    """``functools.lru_cache`` functions in loaded modules: path → (entries, deep size in MB
    of the cache's dict, found among the wrapper's referents)."""
    out: dict[str, tuple[int, float]] = {}
    seen: set[int] = set()
    for mname, mod in list(sys.modules.items()):
        for name, fn in list(getattr(mod, "__dict__", {}).items()):
            if isinstance(fn, functools._lru_cache_wrapper) and fn.__module__ == mname:
                n = int(fn.cache_info().currsize)
                cache = [r for r in gc.get_referents(fn) if isinstance(r, dict) and len(r) == n]
                mb = deep_size(cache[0], seen) / 2**20 if n and cache else 0.0
                out[f"{mname}.{name}()"] = (n, mb)
    return out


def module_structures() -> dict[str, tuple[int, float]]:
    """Module-level containers of ``BIG`` items or more outside the standard library and
    Scrapy/Twisted's own (jieba's dictionaries, caches of our modules): path → (len, MB)."""
    roots: dict[str, Any] = {}
    for mname, mod in list(sys.modules.items()):
        top = mname.partition(".")[0]
        if top not in {"topicrawl", "crawler", "relevance", "dedup", "jieba", "trafilatura",
                       "justext", "courlan", "htmldate", "lxml", "w3lib", "scrapy", "twisted",
                       "tldextract", "parsel", "readability"}:  # fmt: skip
            continue
        for name, val in list(getattr(mod, "__dict__", {}).items()):
            if isinstance(val, dict | list | set | deque) and len(val) >= BIG:
                roots[f"{mname}.{name}"] = val
    seen: set[int] = set()
    return {p: (len(v), deep_size(v, seen) / 2**20) for p, v in roots.items()}


def type_counts() -> Counter[str]:
    """Objects the garbage collector tracks, by type (containers only: no str or bytes)."""
    return Counter(type(o).__qualname__ for o in gc.get_objects())


class MemoryAttribution(PeriodicSample):
    """Every ``interval`` seconds appends one JSON line to ``path``: RSS, glibc's heap
    (in use / freed but kept), SQLite's memory, Python's allocated blocks, the big
    containers reachable from the crawler and from modules (length and deep size), the
    ``lru_cache`` sizes and the counts of tracked objects by type. ``bench/soak.py``
    turns the lines into the attribution table. Each sample stops the crawl ~1–3 s."""

    file_setting = "SOAK_MEMORY_FILE"

    def sample(self) -> None:
        try:
            self._sample()
        except Exception:  # noqa: BLE001 (a failed sample must not stop the next ones)
            logging.getLogger(__name__).exception("memory sample failed")

    def _sample(self) -> None:
        t0 = time.monotonic()
        stats = self.crawler.stats.get_stats()
        roots = {"crawler": self.crawler, "spider": getattr(self.crawler, "spider", None)}
        row: dict[str, Any] = {
            "seconds": round(t0 - self.start), "rss_mb": _rss_mb(), "sqlite_mb": _sqlite_mb(),
            "malloc": malloc_mb(), "pymalloc": pymalloc_mb(), "py_blocks": sys.getallocatedblocks(),
            "fetched": stats.get("response_received_count", 0),
            "structures": {**big_structures(roots), **module_structures(), **lru_caches()},
            "types": dict(type_counts().most_common(60)),
        }  # fmt: skip
        row["sample_seconds"] = round(time.monotonic() - t0, 2)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(row) + "\n")
