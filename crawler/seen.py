"""The scale-out's seen-URL sets as a Bloom filter on plain Redis bitmaps.

scrapy-redis keeps every request fingerprint in a Redis set (the dupefilter), and the
fetch-once middleware a second set of the fingerprints sent to download: 40-character hex
strings, ≈ 100+ bytes a URL each in Redis (docs/scale.md), the memory limit of a large crawl
(rmax/scrapy-redis#144). A Bloom filter (Bloom 1970) answers "seen before?" in
m = −n·ln p / (ln 2)² bits for n URLs at false-positive rate p (1.8 bytes a URL at
p = 0.1 %), with k = (m/n)·ln 2 bit positions per URL. The k positions come from two 64-bit
halves of the request fingerprint (SHA-1, already computed by Scrapy), g_i = h1 + i·h2 mod m
(Kirsch & Mitzenmacher, "Less Hashing, Same Performance", 2006): no hashing in Python per
bit. Test-and-set of the k bits is one Lua script (``SETBIT`` returns the old bit), so two
workers adding the same URL at once cannot both see it as new.

A false positive makes a URL look seen: the crawl skips it. At the default p = 0.1 % at most
one new URL in a thousand is skipped (measured: ``tests/test_seen.py``, bench/scale.py
``--costs``); a false negative cannot happen. The filter is sized for ``capacity`` URLs; past
it the rate rises (p ≈ (1 − e^(−kn/m))^k) — size it for the crawl (docs/scale.md).

Why not a library: the RedisBloom module is not packaged for Debian's Redis 7.0 (where it is,
``BF.RESERVE``/``BF.ADD`` are the better choice); the Python Redis-bitmap Bloom filters on PyPI
are async-only (valbloom, alpha, with a non-atomic add-then-check) or unmaintained since 2021
(scrapy-redis-bloomfilter). The bitmap may be split into ``shards`` keys (the first hash picks
the shard: all k bits of a URL are in one key, so one script call on one Redis Cluster node;
the shard keys ``{key}:{shard}`` hash to different slots, so they spread over the nodes).
"""

from __future__ import annotations

import math
from typing import Any

from crawler.lazy import lazy_class

#: test-and-set of k bits: returns 1 when any bit was 0 (the item is new), else 0
_ADD = """
local new = 0
for i = 1, #ARGV do
  if redis.call('SETBIT', KEYS[1], ARGV[i], 1) == 0 then new = 1 end
end
return new
"""
#: test only: 1 when every bit is set
_CHECK = """
for i = 1, #ARGV do
  if redis.call('GETBIT', KEYS[1], ARGV[i]) == 0 then return 0 end
end
return 1
"""
_ALLOCATE = """
if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('SETRANGE', KEYS[1], ARGV[1], '\\0') end
"""
#: Redis strings hold at most 2^32 bits
MAX_SHARD_BITS = 1 << 32


def bloom_size(capacity: int, error_rate: float) -> tuple[int, int]:
    """(m bits, k hashes) of a Bloom filter for ``capacity`` items at ``error_rate``:
    m = ⌈−n·ln p / (ln 2)²⌉, k = max(1, round(m/n · ln 2))."""
    if capacity < 1 or not 0.0 < error_rate < 1.0:
        raise ValueError(f"need capacity >= 1 and 0 < error_rate < 1 ({capacity}, {error_rate})")
    m = math.ceil(-capacity * math.log(error_rate) / math.log(2) ** 2)
    return m, max(1, round(m / capacity * math.log(2)))


def expected_error_rate(items: int, m: int, k: int) -> float:
    """p ≈ (1 − e^(−k·n/m))^k after ``items`` insertions."""
    return (1.0 - math.exp(-k * items / m)) ** k


#: The default false-positive rate at capacity: 0.05 %, half of issue 16's bound (0.1 %), so
#: a filter filled to its capacity stays under the bound beyond the sampling noise (at 0.1 %
#: exactly, 1,000,000 probes measured 0.1025 %); 1.98 bytes a URL instead of 1.8.
DEFAULT_ERROR_RATE = 0.0005


class RedisBloomFilter:
    """A Bloom filter of hex or byte fingerprints in Redis bitmaps ``{key}:{shard}``."""

    def __init__(self, client: Any, key: str, *, capacity: int = 10_000_000,
                 error_rate: float = DEFAULT_ERROR_RATE, shards: int = 1):  # fmt: skip
        self.client = client
        self.key = key
        self.capacity, self.error_rate = capacity, error_rate
        self.shards = max(1, shards)
        m, self.k = bloom_size(capacity, error_rate)
        self.bits = math.ceil(m / self.shards)  # per shard
        if self.bits > MAX_SHARD_BITS:
            raise ValueError(f"{self.bits} bits per shard exceed a Redis string: use more shards")
        self._add = client.register_script(_ADD)
        self._check = client.register_script(_CHECK)
        self._allocated = False

    def _allocate(self) -> None:
        """Allocate the bitmap once at its full size, at the first use (SETRANGE on a new key
        allocates exactly; grown bit by bit, Redis would keep up to twice the size)."""
        if not self._allocated:
            for key in self.keys():
                self.client.eval(_ALLOCATE, 1, key, math.ceil(self.bits / 8) - 1)
            self._allocated = True

    def _positions(self, fingerprint: str | bytes) -> tuple[str, list[int]]:
        self._allocate()
        raw = bytes.fromhex(fingerprint) if isinstance(fingerprint, str) else fingerprint
        if len(raw) < 16:
            raise ValueError("a fingerprint of at least 128 bits is needed (SHA-1: 160)")
        h1 = int.from_bytes(raw[:8], "big")
        h2 = int.from_bytes(raw[8:16], "big") | 1  # odd: the k positions are distinct
        shard = h1 % self.shards
        m = self.bits
        key = f"{self.key}:{shard}" if self.shards > 1 else self.key
        return key, [(h1 // self.shards + i * h2) % m for i in range(self.k)]

    def add(self, fingerprint: str | bytes) -> bool:
        """Add a fingerprint; True when it was new (some bit was unset), False when it was
        (probably) seen before. Atomic across clients."""
        key, positions = self._positions(fingerprint)
        return bool(self._add(keys=[key], args=positions))

    def add_many(self, fingerprints: list[str | bytes]) -> list[bool]:
        """:meth:`add` for many fingerprints in one pipelined round trip."""
        pipe = self.client.pipeline(transaction=False)
        for fp in fingerprints:
            key, positions = self._positions(fp)
            self._add(keys=[key], args=positions, client=pipe)
        return [bool(x) for x in pipe.execute()]

    def contains_many(self, fingerprints: list[str | bytes]) -> list[bool]:
        """Membership of many fingerprints (nothing added), one pipelined round trip."""
        pipe = self.client.pipeline(transaction=False)
        for fp in fingerprints:
            key, positions = self._positions(fp)
            self._check(keys=[key], args=positions, client=pipe)
        return [bool(x) for x in pipe.execute()]

    def __contains__(self, fingerprint: str | bytes) -> bool:
        key, positions = self._positions(fingerprint)
        return bool(self._check(keys=[key], args=positions))

    def keys(self) -> list[str]:
        if self.shards == 1:
            return [self.key]
        return [f"{self.key}:{s}" for s in range(self.shards)]

    def memory_bytes(self) -> int:
        """Bytes Redis uses for the filter (``MEMORY USAGE`` of its keys)."""
        return sum(int(self.client.memory_usage(k) or 0) for k in self.keys())

    def clear(self) -> None:
        self.client.delete(*self.keys())
        self._allocated = False


def bloom_from_settings(client: Any, key: str, settings: Any) -> RedisBloomFilter | None:
    """The Bloom filter the crawl's settings ask for (``TOPICRAWL_SEEN_BLOOM``), or None."""
    if not settings.getbool("TOPICRAWL_SEEN_BLOOM") or client is None:
        return None
    return RedisBloomFilter(
        client, f"{key}:bloom",
        capacity=settings.getint("TOPICRAWL_SEEN_BLOOM_CAPACITY", 10_000_000),
        error_rate=settings.getfloat("TOPICRAWL_SEEN_BLOOM_ERROR_RATE", DEFAULT_ERROR_RATE),
        shards=settings.getint("TOPICRAWL_SEEN_BLOOM_SHARDS", 1),
    )  # fmt: skip


def _dupefilter_class() -> type:
    """:class:`RedisSeenDupeFilter`, made on first use: its base is scrapy-redis', whose
    import (redis-py, ≈ 6 MB) a crawl without Redis does not need, though Scrapy imports this
    module for :class:`SeenBatchMiddleware` (every key of SPIDER_MIDDLEWARES is imported)."""
    from scrapy_redis.dupefilter import RFPDupeFilter

    class RedisSeenDupeFilter(RFPDupeFilter):  # type: ignore[misc]
        """scrapy-redis' ``RFPDupeFilter`` (``DUPEFILTER_CLASS`` of the scale-out) that
        keeps the fingerprints in a :class:`RedisBloomFilter` when ``TOPICRAWL_SEEN_BLOOM``
        is on, else in scrapy-redis' Redis set."""

        bloom: RedisBloomFilter | None = None

        @classmethod
        def from_crawler(cls, crawler: Any) -> RedisSeenDupeFilter:
            df = super().from_crawler(crawler)
            df.attach(crawler.settings)
            return df

        @classmethod
        def from_spider(cls, spider: Any) -> RedisSeenDupeFilter:
            df = super().from_spider(spider)
            df.attach(spider.settings)
            return df

        def attach(self, settings: Any) -> None:
            self.bloom = bloom_from_settings(self.server, self.key, settings)

        def request_seen(self, request: Any) -> bool:
            if self.bloom is None:
                return super().request_seen(request)
            return not self.bloom.add(self.request_fingerprint(request))

        def clear(self) -> None:
            super().clear()
            if self.bloom is not None:
                self.bloom.clear()

    return RedisSeenDupeFilter


# the scale-out's DUPEFILTER_CLASS, crawler.seen.RedisSeenDupeFilter, made on first use
__getattr__ = lazy_class(globals(), "RedisSeenDupeFilter", _dupefilter_class)


class SeenBatchMiddleware:
    """Spider middleware of the scale-out: the links of a response are looked up in the
    shared seen set in one Redis round trip (:meth:`crawler.scheduler.RedisScheduler.
    check_seen`) before the engine schedules them one by one; those seen before are dropped
    here (``request_dropped`` sent, as the scheduler's refusal does), and only the new ones
    cost the dupefilter's ``SADD``. scrapy-redis' dupefilter sends one ``SADD`` a link
    found: 23 round trips a page on the small test web, most for links seen before, each
    blocking the event loop for a network round trip (2 a page with this check, plus one
    ``SMISMEMBER``). Last of the spider middlewares on a
    callback's output (order 10)."""

    def __init__(self, crawler: Any):
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Any) -> SeenBatchMiddleware:
        from scrapy.exceptions import NotConfigured

        if crawler.settings.get("SCHEDULER") != "crawler.scheduler.RedisScheduler":
            raise NotConfigured("not a scale-out crawl")
        return cls(crawler)

    def _batch(self, objs: list[Any]) -> list[Any]:
        from scrapy import Request, signals

        slot = getattr(self.crawler.engine, "_slot", None)
        check = getattr(getattr(slot, "scheduler", None), "check_seen", None)
        requests = [o for o in objs if isinstance(o, Request)]
        if check is None or len(requests) < 2:
            return objs
        seen = check(requests)
        if not seen:
            return objs
        for request in requests:
            if id(request) in seen:
                self.crawler.signals.send_catch_log(
                    signal=signals.request_dropped, request=request, spider=self.crawler.spider
                )
        return [o for o in objs if id(o) not in seen]

    def process_spider_output(self, response: Any, result: Any) -> Any:
        yield from self._batch(list(result))

    async def process_spider_output_async(self, response: Any, result: Any) -> Any:
        objs = [o async for o in result]
        for o in self._batch(objs):
            yield o
