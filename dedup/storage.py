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
process (re-entrant within one storage object and thread) (SQLite: ``BEGIN IMMEDIATE``; Redis: a ``SET NX PX`` lock released by a Lua script),
which is what an atomic ``check_and_add`` needs. Reads inside a batch see its own writes.
"""

from __future__ import annotations

import itertools
import json
import os
import sqlite3
import threading
import time
import uuid
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterable, Mapping
from contextlib import contextmanager
from typing import Any

from topicrawl.errors import ConfigError, StorageError

Value = bytes | str | int | float


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


class IndexStorage(ABC):
    """The primitives detectors build their indexes from (see the module docstring)."""

    #: backend name as used in the config dict
    type: str = ""

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

    def smembers_count(self, keys: Iterable[str]) -> Counter[str]:
        """How many of the sets ``keys`` hold each member (a posting-list count)."""
        out: Counter[str] = Counter()
        for key in keys:
            out.update(self.smembers(key))
        return out

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
    """In-process dicts: for tests, benchmarks and single-process crawls that need no resume."""

    type = "memory"

    def __init__(self, namespace: str = "topicrawl"):
        super().__init__(namespace)
        self._values: dict[str, bytes] = {}
        self._sets: dict[str, set[str]] = {}
        self._hashes: dict[str, dict[str, bytes]] = {}
        self._lists: dict[str, list[bytes]] = {}
        self._mutex = threading.RLock()
        self._locks: dict[str, threading.RLock] = {}

    def get(self, key: str) -> bytes | None:
        return self._values.get(key)

    def set(self, key: str, value: Value) -> None:
        self._values[key] = _b(value)

    def delete(self, *keys: str) -> None:
        for key in keys:
            for store in (self._values, self._sets, self._hashes, self._lists):
                store.pop(key, None)

    def exists(self, key: str) -> bool:
        return any(key in s for s in (self._values, self._sets, self._hashes, self._lists))

    def incr(self, key: str, amount: int = 1) -> int:
        with self._mutex:
            value = int(self._values.get(key, b"0")) + amount
            self._values[key] = str(value).encode()
            return value

    def sadd(self, key: str, *members: Any) -> None:
        if members:
            self._sets.setdefault(key, set()).update(_s(m) for m in members)

    def srem(self, key: str, *members: Any) -> None:
        s = self._sets.get(key)
        if s:
            s.difference_update(_s(m) for m in members)
            if not s:
                del self._sets[key]

    def smembers(self, key: str) -> set[str]:
        return set(self._sets.get(key, ()))

    def smembers_count(self, keys: Iterable[str]) -> Counter[str]:
        sets = self._sets
        return Counter(itertools.chain.from_iterable(sets.get(k, ()) for k in keys))

    def sismember(self, key: str, member: Any) -> bool:
        return _s(member) in self._sets.get(key, ())

    def scard(self, key: str) -> int:
        return len(self._sets.get(key, ()))

    def hset(self, key: str, field: str, value: Value) -> None:
        self._hashes.setdefault(key, {})[field] = _b(value)

    def hget(self, key: str, field: str) -> bytes | None:
        return self._hashes.get(key, {}).get(field)

    def hmget(self, key: str, fields: Iterable[str]) -> list[bytes | None]:
        get = self._hashes.get(key, {}).get
        return [get(f) for f in fields]

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
        return sorted(out)

    @contextmanager
    def batch(self):
        with self._mutex:
            yield self

    @contextmanager
    def lock(self, name: str):
        with self._mutex:
            lk = self._locks.setdefault(name, threading.RLock())
        with lk, self._mutex:
            yield self


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
        try:
            self._conn = sqlite3.connect(
                self.path, timeout=timeout, isolation_level=None, check_same_thread=False
            )
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.executescript(_SQLITE_SCHEMA)
        except sqlite3.Error as exc:
            raise StorageError(f"cannot open SQLite dedup index {self.path!r}: {exc}") from exc
        self._mutex = threading.RLock()
        self._depth = 0

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

    def smembers(self, key: str) -> set[str]:
        rows = self._x("SELECT member FROM sets WHERE ns=? AND key=?", (self.namespace, key))
        return {r[0] for r in rows}

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


class RedisStorage(IndexStorage):
    """Redis via redis-py; every key is ``<namespace>:<key>``, so crawls share one server.

    ``batch()`` queues writes in one ``MULTI/EXEC`` pipeline (reads inside flush it first);
    ``lock(name)`` is a ``SET NX PX`` lock with a random token, released by a Lua
    compare-and-delete, around a batch that is executed before the lock is released.
    """

    type = "redis"

    def __init__(
        self,
        url: str = "redis://127.0.0.1:6379/0",
        namespace: str = "topicrawl",
        *,
        client: Any = None,
        lock_timeout: float = 60.0,
        lock_wait: float = 120.0,
    ):
        super().__init__(namespace)
        try:
            import redis
        except ImportError as exc:  # pragma: no cover - redis is a dependency
            raise StorageError("the redis backend needs redis-py: pip install redis") from exc
        self._redis_mod = redis
        self.url = url
        self.r = client if client is not None else redis.Redis.from_url(url)
        self.lock_timeout = lock_timeout
        self.lock_wait = lock_wait
        self._pipe = None
        self._depth = 0
        self._mutex = threading.RLock()
        self._unlock = self.r.register_script(_UNLOCK_LUA)
        self._held: dict[str, tuple[int, int]] = {}
        self._prefix = f"{namespace}:"

    def _k(self, key: str) -> str:
        return self._prefix + key

    def _call(self, fn, *args):
        try:
            return fn(*args)
        except self._redis_mod.RedisError as exc:
            raise StorageError(f"Redis dedup index at {self.url}: {exc}") from exc

    def _w(self):
        """The client to write through: the open batch pipeline, or the connection."""
        return self._pipe if self._pipe is not None else self.r

    def _rd(self):
        """The client to read through, after flushing queued writes so reads see them."""
        if self._pipe is not None and len(self._pipe):
            self._call(self._pipe.execute)
        return self.r

    def get(self, key: str) -> bytes | None:
        return self._call(self._rd().get, self._k(key))

    def set(self, key: str, value: Value) -> None:
        self._call(self._w().set, self._k(key), _b(value))

    def delete(self, *keys: str) -> None:
        if keys:
            self._call(self._w().delete, *(self._k(k) for k in keys))

    def exists(self, key: str) -> bool:
        return bool(self._call(self._rd().exists, self._k(key)))

    def incr(self, key: str, amount: int = 1) -> int:
        return int(self._call(self._rd().incrby, self._k(key), amount))

    def sadd(self, key: str, *members: Any) -> None:
        if members:
            self._call(self._w().sadd, self._k(key), *(_s(m) for m in members))

    def srem(self, key: str, *members: Any) -> None:
        if members:
            self._call(self._w().srem, self._k(key), *(_s(m) for m in members))

    def smembers(self, key: str) -> set[str]:
        return {_s(m) for m in self._call(self._rd().smembers, self._k(key))}

    def sismember(self, key: str, member: Any) -> bool:
        return bool(self._call(self._rd().sismember, self._k(key), _s(member)))

    def scard(self, key: str) -> int:
        return int(self._call(self._rd().scard, self._k(key)))

    def hset(self, key: str, field: str, value: Value) -> None:
        self._call(self._w().hset, self._k(key), field, _b(value))

    def hset_many(self, key: str, mapping: Mapping[str, Value]) -> None:
        if mapping:
            data = {f: _b(v) for f, v in mapping.items()}
            self._call(lambda: self._w().hset(self._k(key), mapping=data))

    def hget(self, key: str, field: str) -> bytes | None:
        return self._call(self._rd().hget, self._k(key), field)

    def hmget(self, key: str, fields: Iterable[str]) -> list[bytes | None]:
        fields = list(fields)
        if not fields:
            return []
        return self._call(self._rd().hmget, self._k(key), fields)

    def hgetall(self, key: str) -> dict[str, bytes]:
        return {_s(f): v for f, v in self._call(self._rd().hgetall, self._k(key)).items()}

    def hdel(self, key: str, *fields: str) -> None:
        if fields:
            self._call(self._w().hdel, self._k(key), *fields)

    def hlen(self, key: str) -> int:
        return int(self._call(self._rd().hlen, self._k(key)))

    def rpush(self, key: str, *values: Value) -> None:
        if values:
            self._call(self._w().rpush, self._k(key), *(_b(v) for v in values))

    def lrange(self, key: str, start: int = 0, end: int = -1) -> list[bytes]:
        return self._call(self._rd().lrange, self._k(key), start, end)

    def llen(self, key: str) -> int:
        return int(self._call(self._rd().llen, self._k(key)))

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
                self._pipe = self.r.pipeline(transaction=True)
            self._depth += 1
            try:
                yield self
            except BaseException:
                self._depth -= 1
                if self._depth == 0:
                    self._pipe.reset()
                    self._pipe = None
                raise
            self._depth -= 1
            if self._depth == 0:
                pipe, self._pipe = self._pipe, None
                try:
                    if len(pipe):
                        self._call(pipe.execute)
                finally:
                    pipe.reset()

    @contextmanager
    def lock(self, name: str):
        me = threading.get_ident()
        held = self._held.get(name)
        if held is not None and held[0] == me:  # re-entrant within one thread
            self._held[name] = (me, held[1] + 1)
            try:
                with self.batch():
                    yield self
            finally:
                self._held[name] = (me, self._held[name][1] - 1)
            return
        key = self._k(f"__lock__:{name}")
        token = uuid.uuid4().hex
        ttl = int(self.lock_timeout * 1000)
        deadline = time.monotonic() + self.lock_wait
        delay = 0.0005
        while not self._call(lambda: self.r.set(key, token, nx=True, px=ttl)):
            if time.monotonic() > deadline:
                raise StorageError(
                    f"timed out after {self.lock_wait}s waiting for Redis lock {key!r}; "
                    "a crashed holder's lock expires after lock_timeout"
                )
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
        self._held[name] = (me, 1)
        try:
            with self.batch():
                yield self
            # inside an outer batch our writes are still queued: send them before unlocking
            if self._pipe is not None and len(self._pipe):
                self._call(self._pipe.execute)
        finally:
            del self._held[name]
            self._call(lambda: self._unlock(keys=[key], args=[token]))

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
