"""Index storage for the dedup detectors: one small key/value contract, three backends.

After datasketch's ``storage.py``: a detector talks only to :class:`IndexStorage`; the
backend is chosen by a config dict and built by :func:`make_storage`::

    make_storage({"type": "memory"})
    make_storage({"type": "sqlite", "path": "dedup.sqlite", "namespace": "crawl-1"})
    make_storage({"type": "redis", "url": "redis://127.0.0.1:6379/0", "namespace": "crawl-1"})

Every key lives under the storage's ``namespace``, so several crawls share one SQLite file or
one Redis and a later process reattaches to an index by opening the same namespace.

Data model (a subset of Redis; keys are ``str``):

* values: ``get``/``set``/``delete``/``exists`` with ``bytes`` values (``str`` is UTF-8
  encoded), ``get_json``/``set_json``, ``incr`` counters;
* sets of ``str`` members: ``sadd``/``srem``/``smembers``/``sismember``/``scard``;
* hashes of ``str`` fields to ``bytes``: ``hset``/``hget``/``hmget``/``hgetall``/``hdel``/``hlen``;
* lists of ``bytes``: ``rpush``/``lrange``/``llen`` (Redis index semantics, end inclusive).

``batch()`` groups writes (one SQLite transaction, one Redis ``MULTI/EXEC`` pipeline).
``lock(name)`` is a batch that also excludes every other holder of the same lock in any
process (re-entrant within one storage object and thread) (SQLite: ``BEGIN IMMEDIATE``; Redis: a
short-lived ``SET NX PX`` lease whose holder's writes are fenced, :class:`RedisStorage`),
which is what an atomic ``check_and_add`` needs. Reads inside a batch see its own writes.
A Redis lock can be lost (its holder stalled past its time to live and another process took
it): the holder's next write or read then raises :class:`LockLostError` and nothing it
queued is written; callers start the locked step again (:func:`retry_lost_lock`).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import sqlite3
import threading
import time
import uuid
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

from dedup.compiled import features as _fx
from topicrawl.errors import ConfigError, StorageError

Value = bytes | str | int | float
T = TypeVar("T")


class LockLostError(StorageError):
    """A Redis index lock expired while held (the holder stalled longer than its time to
    live) and may have been taken by another process: the holder's queued writes were not
    sent. Start the locked step again (it re-reads the index)."""


#: how often a locked step is started again after :class:`LockLostError`
LOCK_RETRIES = 5


def retry_lost_lock(
    storage: IndexStorage, step: Callable[[], T], *, what: str = "a locked dedup step"
) -> T:
    """Run ``step()`` (a step that takes ``storage``'s lock) again while it raises
    :class:`LockLostError`, up to :data:`LOCK_RETRIES` times; then raise a
    :class:`~topicrawl.errors.StorageError` that says so. Inside a lock the storage already
    holds, the step runs once (the outermost step is the one to start again)."""
    if storage.holding():
        return step()
    for attempt in range(1, LOCK_RETRIES + 1):
        try:
            return step()
        except LockLostError as exc:
            if attempt == LOCK_RETRIES:
                raise StorageError(
                    f"{what} lost its Redis lock {attempt} times in a row (the holder "
                    "stalled longer than the lock's time to live): raise lock_timeout in "
                    f"the dedup backend config ({exc})"
                ) from exc
    raise AssertionError("unreachable")  # pragma: no cover


def _b(value: Value) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, bool):
        raise TypeError("booleans are not storage values; store 0/1")
    if isinstance(value, int | float):
        return repr(value).encode("ascii")
    raise TypeError(f"storage values are bytes, str, int or float, not {type(value).__name__}")


def _s(member: Any) -> str:
    if isinstance(member, bytes):
        return member.decode("utf-8")
    return str(member)


def hex_keys(prefix: str, values: Iterable[int]) -> list[str]:
    """``[prefix + format(v, "x") for v in values]`` (formatted in C, ``str.__mod__``): the
    keys of the posting sets :meth:`IndexStorage.sadd_hashed` and the rest name. ``prefix``
    ends with ``:`` and the values are non-negative (hashes)."""
    if not prefix.endswith(":"):
        raise ValueError(f"a hashed key prefix ends with ':', not {prefix!r}")
    return list(map((prefix.replace("%", "%%") + "%x").__mod__, values))


#: the canonical hex form of a non-negative integer (``format(v, "x")``)
_HEX = re.compile(r"0|[1-9a-f][0-9a-f]*")


class IndexStorage(ABC):
    """The primitives detectors build their indexes from (see the module docstring)."""

    #: backend name as used in the config dict
    type: str = ""
    #: whether a worker checks pages against a local copy of the index while this storage
    #: fails (:class:`dedup.cascade.LocalFallback`: SpotSigs' copy is replayed from its log)
    falls_back_locally: bool = False

    def __init__(self, namespace: str = "topicrawl"):
        if not namespace or not isinstance(namespace, str):
            raise ConfigError("a storage namespace must be a non-empty string")
        self.namespace = namespace

    # -- values ------------------------------------------------------------------------
    @abstractmethod
    def get(self, key: str) -> bytes | None: ...

    @abstractmethod
    def set(self, key: str, value: Value) -> None: ...

    @abstractmethod
    def delete(self, *keys: str) -> None:
        """Delete keys of any kind (missing keys are ignored)."""

    @abstractmethod
    def exists(self, key: str) -> bool: ...

    @abstractmethod
    def incr(self, key: str, amount: int = 1) -> int:
        """Add ``amount`` to an integer counter (missing = 0) and return the new value."""

    def get_json(self, key: str, default: Any = None) -> Any:
        raw = self.get(key)
        return default if raw is None else json.loads(raw)

    def set_json(self, key: str, value: Any) -> None:
        self.set(key, json.dumps(value, ensure_ascii=False, separators=(",", ":")))

    # -- sets --------------------------------------------------------------------------
    @abstractmethod
    def sadd(self, key: str, *members: Any) -> None: ...

    @abstractmethod
    def srem(self, key: str, *members: Any) -> None: ...

    @abstractmethod
    def smembers(self, key: str) -> set[str]: ...

    def sadd_many(self, keys: Iterable[str], member: Any) -> None:
        """Add ``member`` to each set of ``keys`` (a document into its posting sets)."""
        for key in keys:
            self.sadd(key, member)

    def srem_many(self, keys: Iterable[str], member: Any) -> None:
        """Take ``member`` out of each set of ``keys``."""
        for key in keys:
            self.srem(key, member)

    def smembers_many(self, keys: Iterable[str]) -> list[set[str]]:
        """The members of each set of ``keys``, in their order (a backend over a network
        reads them in one round trip)."""
        return [self.smembers(key) for key in keys]

    def smembers_count(self, keys: Iterable[str], max_len: int | None = None) -> Counter[str]:
        """How many of the sets ``keys`` (distinct) hold each member (a posting-list count);
        with ``max_len``, sets of more than ``max_len`` members are left out of the count."""
        sets = self.smembers_many(keys)
        if max_len is not None:
            sets = [s for s in sets if len(s) <= max_len]
        return Counter(itertools.chain.from_iterable(sets))

    # -- posting sets named by a hash ------------------------------------------------------
    # ``prefix`` + the hex form of a non-negative integer (``containment:p:1f3a``): a detector
    # passes the integers, so the memory backend keys its sets by them (no key string built
    # and hashed per set, :class:`MemoryStorage`); the other backends store the same keys
    # as strings (these defaults), so their layout is that of ``sadd_many`` and the rest.
    def sadd_hashed(self, prefix: str, values: Iterable[int], member: Any) -> None:
        """``sadd_many(hex_keys(prefix, values), member)``."""
        self.sadd_many(hex_keys(prefix, values), member)

    def srem_hashed(self, prefix: str, values: Iterable[int], member: Any) -> None:
        """``srem_many(hex_keys(prefix, values), member)``."""
        self.srem_many(hex_keys(prefix, values), member)

    def smembers_hashed(self, prefix: str, values: Iterable[int]) -> list[set[str]]:
        """``smembers_many(hex_keys(prefix, values))``."""
        return self.smembers_many(hex_keys(prefix, values))

    def smembers_count_hashed(
        self, prefix: str, values: Iterable[int], max_len: int | None = None
    ) -> Counter[str]:
        """``smembers_count(hex_keys(prefix, values), max_len)``."""
        return self.smembers_count(hex_keys(prefix, values), max_len)

    def sunion_hashed(self, prefix: str, values: Iterable[int]) -> set[str]:
        """The members of any of the sets: ``set().union(*smembers_hashed(prefix, values))``."""
        return set().union(*self.smembers_hashed(prefix, values))

    def sothers_hashed(self, prefix: str, values: Iterable[int], member: Any) -> list[bool]:
        """For each set, whether it holds a member other than ``member``:
        ``[bool(s - {member}) for s in smembers_hashed(prefix, values)]``."""
        m = _s(member)
        return [bool(s - {m}) for s in self.smembers_hashed(prefix, values)]

    def sismember(self, key: str, member: Any) -> bool:
        return _s(member) in self.smembers(key)

    def scard(self, key: str) -> int:
        return len(self.smembers(key))

    # -- hashes ------------------------------------------------------------------------
    @abstractmethod
    def hset(self, key: str, field: str, value: Value) -> None: ...

    def hset_many(self, key: str, mapping: Mapping[str, Value]) -> None:
        for field, value in mapping.items():
            self.hset(key, field, value)

    @abstractmethod
    def hget(self, key: str, field: str) -> bytes | None: ...

    def hmget(self, key: str, fields: Iterable[str]) -> list[bytes | None]:
        return [self.hget(key, f) for f in fields]

    @abstractmethod
    def hgetall(self, key: str) -> dict[str, bytes]: ...

    @abstractmethod
    def hdel(self, key: str, *fields: str) -> None: ...

    def hlen(self, key: str) -> int:
        return len(self.hgetall(key))

    # -- lists -------------------------------------------------------------------------
    @abstractmethod
    def rpush(self, key: str, *values: Value) -> None:
        """Append values to a list."""

    @abstractmethod
    def lrange(self, key: str, start: int = 0, end: int = -1) -> list[bytes]:
        """Items ``start..end`` inclusive; negative indices count from the end (Redis)."""

    @abstractmethod
    def llen(self, key: str) -> int: ...

    # -- namespace ---------------------------------------------------------------------
    @abstractmethod
    def keys(self, prefix: str = "") -> list[str]:
        """Every key of this namespace that starts with ``prefix``."""

    def clear(self) -> None:
        """Delete every key of this namespace (and only of this namespace)."""
        keys = self.keys()
        if keys:
            with self.batch():
                self.delete(*keys)

    # -- atomicity ---------------------------------------------------------------------
    @abstractmethod
    def batch(self):
        """Context manager grouping writes into one transaction/pipeline (nestable)."""

    @abstractmethod
    def lock(self, name: str):
        """Context manager: a batch that no other process holding ``lock(name)`` overlaps."""

    def holding(self) -> bool:
        """Whether the calling thread is inside a lock of this storage whose loss it would
        only learn at a later write (Redis; the other backends' locks cannot be lost)."""
        return False

    def lock_busy(self, name: str) -> float:
        """Seconds for which another holder may still keep ``lock(name)`` (0.0: free, or
        unknown): lets a caller on an event loop wait without blocking (Redis)."""
        return 0.0

    def close(self) -> None:
        """Release connections (the data stays for persistent backends)."""
        return None

    def __enter__(self) -> IndexStorage:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(namespace={self.namespace!r})"


def _norm_range(n: int, start: int, end: int) -> tuple[int, int]:
    if start < 0:
        start = max(0, n + start)
    if end < 0:
        end = n + end
    end = min(end, n - 1)
    return start, end


class MemoryStorage(IndexStorage):
    """In-process dicts: for tests, benchmarks and single-process crawls that need no resume.

    Posting sets named by a hash (:meth:`sadd_hashed` and the rest) are kept in one flat
    open-addressing table per prefix keyed by the integer (``dedup._features.IntSets``,
    members numbered once per storage), so a page's ~200 posting-set writes and ~90 reads
    build and hash no key string and touch one cache line each; the string API reaches the
    same sets (``prefix`` + the canonical hex form of an integer below 2**64 names the set
    of that integer, :meth:`_slot`)."""

    type = "memory"

    def __init__(self, namespace: str = "topicrawl"):
        super().__init__(namespace)
        self._values: dict[str, bytes] = {}
        #: a set of one member is stored as the member itself (most posting sets of a large
        #: index — a span key, a rare shingle — hold one document: a Python set object costs
        #: ~200 bytes more than a reference to the document id)
        self._sets: dict[str, set[str] | str] = {}
        #: the sets named by a hash: prefix → the integer → its set (read as above)
        self._hashed: dict[str, _fx.IntSets] = {}
        self._members = _fx.Members()
        self._hashes: dict[str, dict[str, bytes]] = {}
        self._lists: dict[str, list[bytes]] = {}
        self._mutex = threading.RLock()
        self._locks: dict[str, threading.RLock] = {}
        self._held: dict[str, _MemoryHold] = {}
        self._batch = _MemoryHold(self)

    def get(self, key: str) -> bytes | None:
        return self._values.get(key)

    def set(self, key: str, value: Value) -> None:
        self._values[key] = _b(value)

    def delete(self, *keys: str) -> None:
        for key in keys:
            for store in (self._values, self._hashes, self._lists):
                store.pop(key, None)
            table, k = self._slot(key)
            table.pop(k, None)  # (a dict's or an IntSets' pop)

    def exists(self, key: str) -> bool:
        table, k = self._slot(key)
        return k in table or any(key in s for s in (self._values, self._hashes, self._lists))

    def incr(self, key: str, amount: int = 1) -> int:
        with self._mutex:
            value = int(self._values.get(key, b"0")) + amount
            self._values[key] = str(value).encode()
            return value

    # -- sets --------------------------------------------------------------------------
    def _slot(self, key: str) -> tuple[dict[str, set[str] | str] | _fx.IntSets, Any]:
        """The table and the key under which the set ``key`` is kept: the hashed sets of the
        prefix up to its last ``:`` with the integer of the rest, when that prefix has hashed
        sets and the rest is the canonical hex form of an integer below 2**64 (at most 16
        digits); else ``_sets``, ``key``."""
        if self._hashed:
            i = key.rfind(":") + 1
            table = self._hashed.get(key[:i]) if i else None
            if table is not None and len(key) - i <= 16 and _HEX.fullmatch(key, i):
                return table, int(key[i:], 16)
        return self._sets, key

    def _table(self, prefix: str) -> _fx.IntSets:
        """The hashed sets of ``prefix``, made on first use: the sets stored under the string
        keys they stand for move in (so both APIs always reach one set)."""
        table = self._hashed.get(prefix)
        if table is None:
            if not prefix.endswith(":"):
                raise ValueError(f"a hashed key prefix ends with ':', not {prefix!r}")
            table, n = _fx.IntSets(self._members), len(prefix)
            for key in [k for k in self._sets if k.startswith(prefix)
                        and len(k) - n <= 16 and _HEX.fullmatch(k, n)]:  # fmt: skip
                table[int(key[n:], 16)] = self._sets.pop(key)
            self._hashed[prefix] = table
        return table

    def sadd(self, key: str, *members: Any) -> None:
        table, k = self._slot(key)
        for m in members:
            _add_each(table, (k,), _s(m))

    def srem(self, key: str, *members: Any) -> None:
        table, k = self._slot(key)
        _discard(table, k, members)

    def sadd_many(self, keys: Iterable[str], member: Any) -> None:
        m = _s(member)
        if not self._hashed:
            _fx.add_member(self._sets, keys, m)
            return
        for table, k in map(self._slot, keys):
            _add_each(table, (k,), m)

    def sadd_hashed(self, prefix: str, values: Iterable[int], member: Any) -> None:
        self._table(prefix).add(values, _s(member))

    def srem_hashed(self, prefix: str, values: Iterable[int], member: Any) -> None:
        self._table(prefix).discard_each(values, (_s(member),))

    def smembers(self, key: str) -> set[str]:
        table, k = self._slot(key)
        s = table.get(k)
        if s is None:
            return set()
        return {s} if s.__class__ is str else set(s)

    def _gets(self, keys: Iterable[str]) -> Iterable[set[str] | str | None]:
        if not self._hashed:
            return map(self._sets.get, keys)
        return [table.get(k) for table, k in map(self._slot, keys)]

    def smembers_many(self, keys: Iterable[str]) -> list[set[str]]:
        return _copies(self._gets(keys))

    def smembers_hashed(self, prefix: str, values: Iterable[int]) -> list[set[str]]:
        return self._table(prefix).members(values)

    def smembers_count(self, keys: Iterable[str], max_len: int | None = None) -> Counter[str]:
        if not self._hashed:
            return Counter(_fx.count_members(self._sets, keys, max_len))
        return _count(self._gets(keys), max_len)

    def smembers_count_hashed(
        self, prefix: str, values: Iterable[int], max_len: int | None = None
    ) -> Counter[str]:
        return Counter(self._table(prefix).count(values, max_len))

    def sunion_hashed(self, prefix: str, values: Iterable[int]) -> set[str]:
        return self._table(prefix).union(values)

    def sothers_hashed(self, prefix: str, values: Iterable[int], member: Any) -> list[bool]:
        return self._table(prefix).others(values, _s(member))

    def sismember(self, key: str, member: Any) -> bool:
        table, k = self._slot(key)
        s = table.get(k)
        if s is None:
            return False
        return s == _s(member) if s.__class__ is str else _s(member) in s

    def scard(self, key: str) -> int:
        table, k = self._slot(key)
        s = table.get(k)
        if s is None:
            return 0
        return 1 if s.__class__ is str else len(s)

    def hset(self, key: str, field: str, value: Value) -> None:
        self._hashes.setdefault(key, {})[field] = _b(value)

    def hget(self, key: str, field: str) -> bytes | None:
        return self._hashes.get(key, {}).get(field)

    def hmget(self, key: str, fields: Iterable[str]) -> list[bytes | None]:
        return list(map(self._hashes.get(key, {}).get, fields))

    def hgetall(self, key: str) -> dict[str, bytes]:
        return dict(self._hashes.get(key, {}))

    def hdel(self, key: str, *fields: str) -> None:
        h = self._hashes.get(key)
        if h:
            for f in fields:
                h.pop(f, None)
            if not h:
                del self._hashes[key]

    def hlen(self, key: str) -> int:
        return len(self._hashes.get(key, {}))

    def rpush(self, key: str, *values: Value) -> None:
        if values:
            self._lists.setdefault(key, []).extend(_b(v) for v in values)

    def lrange(self, key: str, start: int = 0, end: int = -1) -> list[bytes]:
        lst = self._lists.get(key, [])
        start, end = _norm_range(len(lst), start, end)
        return lst[start : end + 1] if end >= start else []

    def llen(self, key: str) -> int:
        return len(self._lists.get(key, ()))

    def keys(self, prefix: str = "") -> list[str]:
        out: set[str] = set()
        for store in (self._values, self._sets, self._hashes, self._lists):
            out.update(k for k in store if k.startswith(prefix))
        for p, table in self._hashed.items():
            if p.startswith(prefix) or prefix.startswith(p):
                out.update(k for k in hex_keys(p, table) if k.startswith(prefix))
        return sorted(out)

    def batch(self) -> _MemoryHold:
        return self._batch

    def lock(self, name: str) -> _MemoryHold:
        held = self._held.get(name)
        if held is None:
            with self._mutex:
                lk = self._locks.setdefault(name, threading.RLock())
                held = self._held.setdefault(name, _MemoryHold(self, lk))
        return held


def _add_each(table: dict[Any, set[str] | str] | _fx.IntSets, keys: Iterable[Any], m: str) -> None:
    """Add ``m`` to the set of each of ``keys`` in ``table`` (a set of one member is the
    member itself: :class:`MemoryStorage`); the reference of the compiled loops
    (``dedup._features.add_member``, ``IntSets.add``) that a page's ~200 posting-set
    writes run. An ``IntSets`` table adds with its own."""
    if table.__class__ is _fx.IntSets:
        table.add(keys, m)
        return
    setdefault = table.setdefault
    for key in keys:
        s = setdefault(key, m)  # a new key: the singleton, stored
        if s is m:
            continue
        if s.__class__ is str:
            if s != m:
                table[key] = {s, m}
        else:
            s.add(m)


def _discard(table: dict[Any, set[str] | str] | _fx.IntSets, key: Any,
             members: Iterable[Any]) -> None:  # fmt: skip
    """Take ``members`` out of the set of ``key`` in ``table`` (a set left with one member
    becomes the member, an empty one is deleted; the reference of ``IntSets.discard``, which
    an ``IntSets`` table runs)."""
    if table.__class__ is _fx.IntSets:
        table.discard(key, [_s(m) for m in members])
        return
    s = table.get(key)
    if s is None:
        return
    if s.__class__ is str:
        if any(_s(m) == s for m in members):
            del table[key]
        return
    s.difference_update(_s(m) for m in members)
    if len(s) == 1:
        table[key] = next(iter(s))
    elif not s:
        del table[key]


def _copies(sets: Iterable[set[str] | str | None]) -> list[set[str]]:
    """Each stored set of ``sets`` as a new set (None: empty)."""
    return [set() if s is None else {s} if s.__class__ is str else set(s) for s in sets]


def _count(sets: Iterable[set[str] | str | None], max_len: int | None) -> Counter[str]:
    """How many of the stored ``sets`` hold each member, sets of more than ``max_len``
    members left out (:meth:`IndexStorage.smembers_count`); the reference of the compiled
    count (``dedup._features.count_members``)."""
    single, many = [], []
    # most keys of a query are absent (a page's posting hashes that no other page holds)
    for s in [s for s in sets if s is not None]:
        if s.__class__ is str:
            single.append(s)
        elif max_len is None or len(s) <= max_len:
            many.append(s)
    out = Counter(single)
    for s in many:
        out.update(s)
    return out


class _MemoryHold:
    """:meth:`MemoryStorage.batch` / :meth:`MemoryStorage.lock` as a plain context manager
    (one object per storage and lock name, no state per use: re-entrant as the RLocks it
    takes): the named lock, if any, then the storage's mutex; a generator-based one cost
    ~1.5 µs an entry, and a check-and-add enters a dozen."""

    __slots__ = ("_storage", "_lock", "_mutex")

    def __init__(self, storage: MemoryStorage, lock: threading.RLock | None = None):
        self._storage, self._lock, self._mutex = storage, lock, storage._mutex

    def __enter__(self) -> MemoryStorage:
        if self._lock is not None:
            self._lock.acquire()
        self._mutex.acquire()
        return self._storage

    def __exit__(self, *exc: object) -> bool:
        self._mutex.release()
        if self._lock is not None:
            self._lock.release()
        return False


_SQLITE_SCHEMA = """
CREATE TABLE IF NOT EXISTS kv (ns TEXT NOT NULL, key TEXT NOT NULL, value BLOB NOT NULL,
    PRIMARY KEY (ns, key)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sets (ns TEXT NOT NULL, key TEXT NOT NULL, member TEXT NOT NULL,
    PRIMARY KEY (ns, key, member)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS hashes (ns TEXT NOT NULL, key TEXT NOT NULL, field TEXT NOT NULL,
    value BLOB NOT NULL, PRIMARY KEY (ns, key, field)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS lists (ns TEXT NOT NULL, key TEXT NOT NULL, seq INTEGER NOT NULL,
    value BLOB NOT NULL, PRIMARY KEY (ns, key, seq)) WITHOUT ROWID;
"""


class SQLiteStorage(IndexStorage):
    """One SQLite file (WAL), shared by processes; the default, so a resumed crawl keeps its index.

    ``batch()`` and ``lock()`` run a ``BEGIN IMMEDIATE`` transaction: SQLite admits one writer
    per database at a time, so a lock holder excludes every other process's lock and write
    (the lock is per database, coarser than per name, which is still correct).
    """

    type = "sqlite"

    def __init__(
        self,
        path: str | os.PathLike = "topicrawl-dedup.sqlite",
        namespace: str = "topicrawl",
        *,
        timeout: float = 60.0,
    ):
        super().__init__(namespace)
        self.path = os.fspath(path)
        if self.path != ":memory:":
            parent = os.path.dirname(os.path.abspath(self.path))
            os.makedirs(parent, exist_ok=True)
        self._conn = self._open(timeout)
        self._mutex = threading.RLock()
        self._depth = 0

    def _open(self, timeout: float) -> sqlite3.Connection:
        """Connect and set the index up. Switching a new file to WAL takes an exclusive lock
        that SQLite's busy timeout does not wait for, so processes opening one new index
        together retry that step until ``timeout``."""
        deadline = time.monotonic() + timeout
        delay = 0.01
        while True:
            conn = None
            try:
                conn = sqlite3.connect(
                    self.path, timeout=timeout, isolation_level=None, check_same_thread=False
                )
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.executescript(_SQLITE_SCHEMA)
                return conn
            except sqlite3.Error as exc:
                if conn is not None:
                    conn.close()
                busy = isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)
                if not busy or time.monotonic() + delay > deadline:
                    raise StorageError(
                        f"cannot open SQLite dedup index {self.path!r}: {exc}"
                    ) from exc
                time.sleep(delay)
                delay = min(delay * 2, 0.5)

    def _x(self, sql: str, params: tuple = ()) -> sqlite3.Cursor:
        try:
            return self._conn.execute(sql, params)
        except sqlite3.Error as exc:
            raise StorageError(f"SQLite dedup index {self.path!r}: {exc}") from exc

    def _xm(self, sql: str, rows: Iterable[tuple]) -> None:
        try:
            self._conn.executemany(sql, rows)
        except sqlite3.Error as exc:
            raise StorageError(f"SQLite dedup index {self.path!r}: {exc}") from exc

    @contextmanager
    def _write(self):
        """Group a multi-statement write: the enclosing batch, or its own transaction."""
        with self.batch():
            yield

    def get(self, key: str) -> bytes | None:
        row = self._x("SELECT value FROM kv WHERE ns=? AND key=?", (self.namespace, key)).fetchone()
        return None if row is None else bytes(row[0])

    def set(self, key: str, value: Value) -> None:
        self._x(
            "INSERT OR REPLACE INTO kv (ns, key, value) VALUES (?, ?, ?)",
            (self.namespace, key, _b(value)),
        )

    def delete(self, *keys: str) -> None:
        with self._write():
            for table in ("kv", "sets", "hashes", "lists"):
                self._xm(
                    f"DELETE FROM {table} WHERE ns=? AND key=?",
                    ((self.namespace, key) for key in keys),
                )

    def exists(self, key: str) -> bool:
        for table in ("kv", "sets", "hashes", "lists"):
            if self._x(
                f"SELECT 1 FROM {table} WHERE ns=? AND key=? LIMIT 1", (self.namespace, key)
            ).fetchone():
                return True
        return False

    def incr(self, key: str, amount: int = 1) -> int:
        with self._write():
            value = int(self.get(key) or b"0") + amount
            self.set(key, str(value))
        return value

    def sadd(self, key: str, *members: Any) -> None:
        self._xm(
            "INSERT OR IGNORE INTO sets (ns, key, member) VALUES (?, ?, ?)",
            [(self.namespace, key, _s(m)) for m in members],
        )

    def srem(self, key: str, *members: Any) -> None:
        self._xm(
            "DELETE FROM sets WHERE ns=? AND key=? AND member=?",
            [(self.namespace, key, _s(m)) for m in members],
        )

    def sadd_many(self, keys: Iterable[str], member: Any) -> None:
        m = _s(member)
        with self._write():
            self._xm(
                "INSERT OR IGNORE INTO sets (ns, key, member) VALUES (?, ?, ?)",
                [(self.namespace, key, m) for key in keys],
            )

    def srem_many(self, keys: Iterable[str], member: Any) -> None:
        m = _s(member)
        with self._write():
            self._xm(
                "DELETE FROM sets WHERE ns=? AND key=? AND member=?",
                [(self.namespace, key, m) for key in keys],
            )

    def smembers(self, key: str) -> set[str]:
        rows = self._x("SELECT member FROM sets WHERE ns=? AND key=?", (self.namespace, key))
        return {r[0] for r in rows}

    def smembers_count(self, keys: Iterable[str], max_len: int | None = None) -> Counter[str]:
        """One query per 500 keys: the sets' sizes first (read from the primary key's index),
        then the members of those within ``max_len``."""
        keys = list(dict.fromkeys(keys))
        out: Counter[str] = Counter()
        for i in range(0, len(keys), 500):
            part = keys[i : i + 500]
            marks = ",".join("?" * len(part))
            if max_len is not None:
                rows = self._x(
                    f"SELECT key FROM sets WHERE ns=? AND key IN ({marks}) GROUP BY key "
                    "HAVING COUNT(*) <= ?",
                    (self.namespace, *part, max_len),
                )
                part = [r[0] for r in rows]
                marks = ",".join("?" * len(part))
            if part:
                rows = self._x(
                    f"SELECT member, COUNT(*) FROM sets WHERE ns=? AND key IN ({marks}) "
                    "GROUP BY member",
                    (self.namespace, *part),
                )
                out.update(dict(rows.fetchall()))
        return out

    def sismember(self, key: str, member: Any) -> bool:
        return (
            self._x(
                "SELECT 1 FROM sets WHERE ns=? AND key=? AND member=?",
                (self.namespace, key, _s(member)),
            ).fetchone()
            is not None
        )

    def scard(self, key: str) -> int:
        return self._x(
            "SELECT COUNT(*) FROM sets WHERE ns=? AND key=?", (self.namespace, key)
        ).fetchone()[0]

    def hset(self, key: str, field: str, value: Value) -> None:
        self._x(
            "INSERT OR REPLACE INTO hashes (ns, key, field, value) VALUES (?, ?, ?, ?)",
            (self.namespace, key, field, _b(value)),
        )

    def hset_many(self, key: str, mapping: Mapping[str, Value]) -> None:
        self._xm(
            "INSERT OR REPLACE INTO hashes (ns, key, field, value) VALUES (?, ?, ?, ?)",
            [(self.namespace, key, f, _b(v)) for f, v in mapping.items()],
        )

    def hget(self, key: str, field: str) -> bytes | None:
        row = self._x(
            "SELECT value FROM hashes WHERE ns=? AND key=? AND field=?",
            (self.namespace, key, field),
        ).fetchone()
        return None if row is None else bytes(row[0])

    def hgetall(self, key: str) -> dict[str, bytes]:
        rows = self._x(
            "SELECT field, value FROM hashes WHERE ns=? AND key=?", (self.namespace, key)
        )
        return {f: bytes(v) for f, v in rows}

    def hdel(self, key: str, *fields: str) -> None:
        self._xm(
            "DELETE FROM hashes WHERE ns=? AND key=? AND field=?",
            [(self.namespace, key, f) for f in fields],
        )

    def hlen(self, key: str) -> int:
        return self._x(
            "SELECT COUNT(*) FROM hashes WHERE ns=? AND key=?", (self.namespace, key)
        ).fetchone()[0]

    def rpush(self, key: str, *values: Value) -> None:
        if not values:
            return
        with self._write():
            row = self._x(
                "SELECT COALESCE(MAX(seq), -1) FROM lists WHERE ns=? AND key=?",
                (self.namespace, key),
            ).fetchone()
            seq = row[0] + 1
            self._xm(
                "INSERT INTO lists (ns, key, seq, value) VALUES (?, ?, ?, ?)",
                [(self.namespace, key, seq + i, _b(v)) for i, v in enumerate(values)],
            )

    def lrange(self, key: str, start: int = 0, end: int = -1) -> list[bytes]:
        # lists are append-only and deleted whole, so an item's index is its ``seq``
        if start < 0 or end < -1:
            start, end = _norm_range(self.llen(key), start, end)
            if end < start:
                return []
        if end == -1:
            rows = self._x(
                "SELECT value FROM lists WHERE ns=? AND key=? AND seq>=? ORDER BY seq",
                (self.namespace, key, start),
            )
        else:
            if end < start:
                return []
            rows = self._x(
                "SELECT value FROM lists WHERE ns=? AND key=? AND seq BETWEEN ? AND ? ORDER BY seq",
                (self.namespace, key, start, end),
            )
        return [bytes(r[0]) for r in rows]

    def llen(self, key: str) -> int:
        return self._x(
            "SELECT COALESCE(MAX(seq), -1) + 1 FROM lists WHERE ns=? AND key=?",
            (self.namespace, key),
        ).fetchone()[0]

    def keys(self, prefix: str = "") -> list[str]:
        like = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        out: set[str] = set()
        for table in ("kv", "sets", "hashes", "lists"):
            rows = self._x(
                f"SELECT DISTINCT key FROM {table} WHERE ns=? AND key LIKE ? ESCAPE '\\'",
                (self.namespace, like),
            )
            out.update(r[0] for r in rows)
        return sorted(out)

    def clear(self) -> None:
        with self._write():
            for table in ("kv", "sets", "hashes", "lists"):
                self._x(f"DELETE FROM {table} WHERE ns=?", (self.namespace,))

    @contextmanager
    def batch(self):
        with self._mutex:
            if self._depth == 0:
                self._x("BEGIN IMMEDIATE")
            self._depth += 1
            try:
                yield self
            except BaseException:
                self._depth -= 1
                if self._depth == 0:
                    self._x("ROLLBACK")
                raise
            self._depth -= 1
            if self._depth == 0:
                self._x("COMMIT")

    def lock(self, name: str):
        # BEGIN IMMEDIATE takes SQLite's single RESERVED (writer) lock: exclusive across processes.
        return self.batch()

    def close(self) -> None:
        try:
            self._conn.close()
        except sqlite3.Error:
            pass


_UNLOCK_LUA = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end
"""

_RENEW_LUA = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2])
else return 0 end
"""


class _Queue:
    """The writes of an open Redis batch, recorded as ``(method, args, kwargs)`` calls of
    redis-py's client, and the keys they touch (a read of another key need not flush them)."""

    def __init__(self):
        self.ops: list[tuple[str, tuple, dict]] = []
        self.keys: set[str] = set()

    def __len__(self) -> int:
        return len(self.ops)

    def __getattr__(self, method: str):
        def record(*args: Any, **kwargs: Any) -> None:
            self.ops.append((method, args, kwargs))
            self.keys.update(args if method == "delete" else args[:1])

        return record

    def clear(self) -> None:
        self.ops.clear()
        self.keys.clear()


class _Held:
    """A Redis lock this storage holds: its key, token and nesting depth (0: its body ended
    inside an outer lock, released with the outermost one)."""

    __slots__ = ("key", "token", "thread", "depth")

    def __init__(self, key: str, token: str, thread: int):
        self.key, self.token, self.thread, self.depth = key, token, thread, 1


class RedisStorage(IndexStorage):
    """Redis via redis-py; every key is ``<namespace>:<key>``, so crawls share one server.

    ``batch()`` queues writes and sends them in one ``MULTI/EXEC`` transaction (a read of a
    key with queued writes sends them first, so reads see the batch's writes).

    ``lock(name)`` is the scale-out's lock on the shared index (ours, not an algorithm of
    the papers): a lease, ``SET <ns>:__lock__:<name> <random token> NX PX lock_timeout``
    (default 5 s), released by a Lua compare-and-delete. A holder killed or stopped costs
    the other workers at most ``lock_timeout`` of waiting. A holder cannot outlive its lease
    unnoticed: every write it sends is *fenced* (``WATCH`` on its lock keys, a check that
    they still hold its tokens, then ``MULTI`` … ``PEXPIRE`` … ``EXEC``, refused by Redis if a
    lock key changed or expired in between), and a read more than a third of the lease after
    the last renewal renews it by a Lua compare-and-``PEXPIRE``. When the lease was lost,
    the queued writes are dropped and :class:`LockLostError` is raised: the caller starts
    its step again (:func:`retry_lost_lock`) instead of writing a decision taken on a stale
    read. A lock taken inside another lock of the same thread is released with the outer
    one, so that a cascade's writes (every method's) go out in one fenced transaction.

    The wait for a held lock sleeps on the calling thread (Scrapy's reactor thread for the
    dedup pipeline) for at most ``lock_wait``; while the holder is dead it ends with the
    holder's lease, after at most ``lock_timeout``.
    """

    falls_back_locally = True

    type = "redis"

    def __init__(
        self,
        url: str = "redis://127.0.0.1:6379/0",
        namespace: str = "topicrawl",
        *,
        client: Any = None,
        lock_timeout: float = 5.0,
        lock_wait: float = 120.0,
    ):
        super().__init__(namespace)
        try:
            import redis
        except ImportError as exc:  # pragma: no cover - redis is a dependency
            raise StorageError("the redis backend needs redis-py: pip install redis") from exc
        if not lock_timeout > 0:
            raise ConfigError(f"the Redis lock_timeout must be > 0 seconds, not {lock_timeout!r}")
        self._redis_mod = redis
        self.url = url
        self.r = client if client is not None else redis.Redis.from_url(url)
        self.lock_timeout = float(lock_timeout)
        self.lock_wait = lock_wait
        self._pipe: _Queue | None = None
        self._depth = 0
        self._mutex = threading.RLock()
        self._unlock = self.r.register_script(_UNLOCK_LUA)
        self._renew = self.r.register_script(_RENEW_LUA)
        self._held: dict[str, _Held] = {}
        self._renewed = 0.0  # monotonic time of the last renewal of the held locks
        self._prefix = f"{namespace}:"

    def _k(self, key: str) -> str:
        return self._prefix + key

    def _call(self, fn, *args):
        try:
            return fn(*args)
        except self._redis_mod.RedisError as exc:
            raise StorageError(f"Redis dedup index at {self.url}: {exc}") from exc

    @property
    def _ttl_ms(self) -> int:
        return max(1, int(self.lock_timeout * 1000))

    def holding(self) -> bool:
        return bool(self._fences())

    def lock_busy(self, name: str) -> float:
        held = self._held.get(name)
        if held is not None and held.thread == threading.get_ident():
            return 0.0  # ours: re-entrant
        ms = self._call(self.r.pttl, self._k(f"__lock__:{name}"))
        return max(0, ms) / 1000.0 if ms != -1 else self.lock_timeout

    def _fences(self) -> list[_Held]:
        me = threading.get_ident()
        return [h for h in self._held.values() if h.thread == me]

    def _lost(self, held: Iterable[_Held]) -> LockLostError:
        if self._pipe is not None:
            self._pipe.clear()
        names = ", ".join(repr(h.key) for h in held)
        return LockLostError(
            f"Redis lock {names} expired while held (longer than lock_timeout="
            f"{self.lock_timeout}s) and may have been taken: the step's writes were not sent"
        )

    def _flush(self) -> list[Any]:
        """Send the queued writes in one transaction, fenced by the locks this thread holds."""
        queue = self._pipe
        if queue is None or not len(queue):
            return []
        fences = self._fences()
        ops = list(queue.ops)
        queue.clear()
        watch = self._redis_mod.WatchError

        def send() -> list[Any]:
            with self.r.pipeline(transaction=True) as pipe:
                if fences:
                    keys = [h.key for h in fences]
                    pipe.watch(*keys)  # EXEC fails if a lock key changes or expires from now
                    now = pipe.mget(keys)
                    if any(v is None or _s(v) != h.token for v, h in zip(now, fences, strict=True)):
                        raise self._lost(fences)
                    pipe.multi()
                    for key in keys:
                        pipe.pexpire(key, self._ttl_ms)
                for method, args, kwargs in ops:
                    getattr(pipe, method)(*args, **kwargs)
                try:
                    out = pipe.execute()
                except watch:
                    raise self._lost(fences) from None
            if fences:
                self._renewed = time.monotonic()
                return out[len(fences) :]
            return out

        return self._call(send)

    def _check_lease(self) -> None:
        """Renew the held locks when a third of their lease has passed (raise if lost)."""
        if not self._held or time.monotonic() - self._renewed < self.lock_timeout / 3:
            return
        fences = self._fences()
        for h in fences:
            if not self._call(lambda h=h: self._renew(keys=[h.key], args=[h.token, self._ttl_ms])):
                raise self._lost(fences)
        self._renewed = time.monotonic()

    def _w(self):
        """The client to write through: the open batch's queue, or the connection."""
        return self._pipe if self._pipe is not None else self.r

    def _rd(self, *keys: str):
        """The client to read ``keys`` through, after sending the queued writes to them
        (any key: all of them when no key is named)."""
        queue = self._pipe
        if queue is not None and len(queue) and (not keys or not queue.keys.isdisjoint(keys)):
            self._flush()
        self._check_lease()
        return self.r

    def _read(self, method: str, key: str, *args: Any) -> Any:
        """redis-py's ``method`` on ``key`` (namespaced here), after :meth:`_rd`."""
        k = self._k(key)
        return self._call(getattr(self._rd(k), method), k, *args)

    def get(self, key: str) -> bytes | None:
        return self._read("get", key)

    def set(self, key: str, value: Value) -> None:
        self._call(self._w().set, self._k(key), _b(value))

    def delete(self, *keys: str) -> None:
        if keys:
            self._call(self._w().delete, *(self._k(k) for k in keys))

    def exists(self, key: str) -> bool:
        return bool(self._read("exists", key))

    def incr(self, key: str, amount: int = 1) -> int:
        k = self._k(key)
        if self._pipe is None:
            return int(self._call(self.r.incrby, k, amount))
        self._pipe.incrby(k, amount)  # through the (fenced) transaction
        return int(self._flush()[-1])

    def sadd(self, key: str, *members: Any) -> None:
        if members:
            self._call(self._w().sadd, self._k(key), *(_s(m) for m in members))

    def srem(self, key: str, *members: Any) -> None:
        if members:
            self._call(self._w().srem, self._k(key), *(_s(m) for m in members))

    def smembers(self, key: str) -> set[str]:
        return {_s(m) for m in self._read("smembers", key)}

    def _each(self, command: str, keys: list[str]) -> list:
        """``command`` (a one-key read such as ``smembers``) on each of ``keys``, in one
        round trip."""
        ks = [self._k(key) for key in keys]

        def read() -> list:
            pipe = self._rd(*ks).pipeline(transaction=False)
            for k in ks:
                getattr(pipe, command)(k)
            return pipe.execute()

        return self._call(read) if ks else []

    def smembers_many(self, keys: Iterable[str]) -> list[set[str]]:
        return [{_s(m) for m in members} for members in self._each("smembers", list(keys))]

    def smembers_count(self, keys: Iterable[str], max_len: int | None = None) -> Counter[str]:
        """With ``max_len``: the sets' sizes first (``SCARD``, one round trip), then the
        members of those within it (a second), so a long set is not sent."""
        keys = list(keys)
        if max_len is None or not keys:
            return super().smembers_count(keys, max_len)
        sizes = self._each("scard", keys)
        short = [key for key, n in zip(keys, sizes, strict=True) if 0 < n <= max_len]
        return Counter(itertools.chain.from_iterable(self.smembers_many(short)))

    def sismember(self, key: str, member: Any) -> bool:
        return bool(self._read("sismember", key, _s(member)))

    def scard(self, key: str) -> int:
        return int(self._read("scard", key))

    def hset(self, key: str, field: str, value: Value) -> None:
        self._call(self._w().hset, self._k(key), field, _b(value))

    def hset_many(self, key: str, mapping: Mapping[str, Value]) -> None:
        if mapping:
            data = {f: _b(v) for f, v in mapping.items()}
            self._call(lambda: self._w().hset(self._k(key), mapping=data))

    def hget(self, key: str, field: str) -> bytes | None:
        return self._read("hget", key, field)

    def hmget(self, key: str, fields: Iterable[str]) -> list[bytes | None]:
        fields = list(fields)
        if not fields:
            return []
        return self._read("hmget", key, fields)

    def hgetall(self, key: str) -> dict[str, bytes]:
        return {_s(f): v for f, v in self._read("hgetall", key).items()}

    def hdel(self, key: str, *fields: str) -> None:
        if fields:
            self._call(self._w().hdel, self._k(key), *fields)

    def hlen(self, key: str) -> int:
        return int(self._read("hlen", key))

    def rpush(self, key: str, *values: Value) -> None:
        if values:
            self._call(self._w().rpush, self._k(key), *(_b(v) for v in values))

    def lrange(self, key: str, start: int = 0, end: int = -1) -> list[bytes]:
        return self._read("lrange", key, start, end)

    def llen(self, key: str) -> int:
        return int(self._read("llen", key))

    def keys(self, prefix: str = "") -> list[str]:
        pattern = _redis_glob_escape(self._prefix + prefix) + "*"
        n = len(self._prefix)
        found = self._call(lambda: list(self._rd().scan_iter(match=pattern, count=1000)))
        return sorted(_s(k)[n:] for k in found)

    def clear(self) -> None:
        keys = self.keys()
        for i in range(0, len(keys), 1000):
            self._call(self.r.delete, *(self._k(k) for k in keys[i : i + 1000]))

    @contextmanager
    def batch(self):
        with self._mutex:
            if self._depth == 0:
                self._pipe = _Queue()
            self._depth += 1
            try:
                yield self
            except BaseException:
                self._depth -= 1
                if self._depth == 0:
                    self._pipe = None
                raise
            self._depth -= 1
            if self._depth == 0:
                try:
                    self._flush()
                finally:
                    self._pipe = None

    def _acquire(self, key: str, token: str) -> None:
        deadline = time.monotonic() + self.lock_wait
        delay = 0.0005
        while not self._call(lambda: self.r.set(key, token, nx=True, px=self._ttl_ms)):
            if time.monotonic() > deadline:
                raise StorageError(
                    f"timed out after {self.lock_wait}s waiting for Redis lock {key!r}; "
                    "a crashed holder's lock expires after lock_timeout"
                )
            time.sleep(delay)
            delay = min(delay * 2, 0.05)

    @contextmanager
    def lock(self, name: str):
        me = threading.get_ident()
        held = self._held.get(name)
        if held is not None and held.thread == me:  # re-entrant within one thread
            held.depth += 1
            try:
                with self.batch():
                    yield self
            finally:
                held.depth -= 1
            return
        key = self._k(f"__lock__:{name}")
        token = uuid.uuid4().hex
        self._acquire(key, token)
        outer = any(h.depth > 0 for h in self._fences())
        if not outer:
            self._renewed = time.monotonic()
        mine = self._held[name] = _Held(key, token, me)
        ok = False
        try:
            with self.batch():
                yield self
                if not outer:  # inside an outer batch: send our writes before unlocking
                    self._flush()
            ok = True
        finally:
            mine.depth -= 1
            if not outer:
                self._release(me, raise_errors=ok)

    def _release(self, me: int, *, raise_errors: bool) -> None:
        """Release the locks the thread's outermost lock took (its own and those taken inside
        it, which stayed held to fence its writes)."""
        release = [h for h in self._held.values() if h.thread == me and h.depth == 0]
        self._held = {n: h for n, h in self._held.items() if h not in release}
        error = None
        for h in release:
            try:
                self._call(lambda h=h: self._unlock(keys=[h.key], args=[h.token]))
            except StorageError as exc:  # expires after lock_timeout anyway
                error = error or exc
        if error is not None and raise_errors:
            raise error

    def close(self) -> None:
        try:
            self.r.close()
        except Exception:  # noqa: BLE001 - closing a dead connection is not an error
            pass


def _redis_glob_escape(text: str) -> str:
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)


BACKENDS: dict[str, type[IndexStorage]] = {
    "memory": MemoryStorage,
    "sqlite": SQLiteStorage,
    "redis": RedisStorage,
}


def make_storage(config: Mapping[str, Any] | None = None) -> IndexStorage:
    """Build the index storage that ``config`` describes.

    ``{"type": "memory" | "sqlite" | "redis", "namespace": str, "path": str (sqlite),
    "url": str (redis)}``; ``None`` means ``{"type": "memory"}``. Other keys are passed to
    the backend (e.g. ``timeout`` for SQLite, ``lock_timeout`` for Redis).
    """
    config = dict(config or {"type": "memory"})
    kind = config.pop("type", "memory")
    cls = BACKENDS.get(kind)
    if cls is None:
        raise ConfigError(
            f"unknown dedup storage type {kind!r}: use one of {', '.join(sorted(BACKENDS))}"
        )
    namespace = config.pop("namespace", "topicrawl")
    try:
        if cls is SQLiteStorage:
            return SQLiteStorage(config.pop("path", "topicrawl-dedup.sqlite"), namespace, **config)
        if cls is RedisStorage:
            return RedisStorage(config.pop("url", "redis://127.0.0.1:6379/0"), namespace, **config)
        return cls(namespace, **config)
    except TypeError as exc:
        raise ConfigError(f"bad option for the {kind} dedup storage: {exc}") from exc
