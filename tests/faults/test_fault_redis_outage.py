"""A 30 s Redis outage under the scale-out, through a proxy the test cuts (issue 11, item 7).

Two workers (``scrapy crawl`` subprocesses) share the frontier, dupefilter, fetched set, page
budget, dedup index and word cache in Redis, all reached through :class:`tcpproxy.TcpProxy`,
and store into one PostgreSQL database. Once both workers fetch (10 s later) the proxy is cut for
:data:`OUTAGE` seconds, then restored; the workers finish the budget. Every page a worker
counted as fetched (and did not find broken) is stored, none twice, the stored pages are
exactly ``max_pages`` (the web has more), both workers exit 0 and their stats show the outage.
The figures (pages/s fetched before, during and after the outage) are printed, never
asserted: they are the benchmark's (docs/benchmarks/faults.md).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from conftest import delete_prefix
from workers import (
    fetched_rate,
    final_stat,
    last_fetch,
    outage_crawl,
    start_workers,
    stop_all,
    wait_for,
    worker_fetched,
)

from models.store import Store
from sitegen.server import ServerProcess

OUTAGE = 30.0  # seconds the proxy to Redis stays cut
MAX_PAGES = 200  # the crawl's budget; the small web (with its calendars) has more
RUN_ID = 78
NORMAL = 10  # seconds both workers crawl before the cut
LATENCY_MS = 2000  # the test web's latency: a crawl slow enough to span the outage


@pytest.mark.redis
def test_a_30s_redis_outage_loses_no_page_and_keeps_the_budget(
    small_web: Path, redis_url: str, pg_url: str, politics_topic: Path, tmp_path: Path
) -> None:
    import redis

    seeds, proxy, via_proxy, prefix, settings = outage_crawl(
        small_web, redis_url, tmp_path,
        # the outage is waited out (the design: a worker ends only past this budget)
        TOPICRAWL_REDIS_RETRY_SECONDS=OUTAGE * 4,
        # leases of 30 s, not 10: on a loaded machine a worker catching up after the outage
        # (its dedup write-back runs on the event loop) could miss its heartbeat for 10 s and
        # have a counted page reclaimed, the slow-worker case the README lists (one page over
        # the budget): that is the lease's test (tests/test_lease.py), not this one's
        TOPICRAWL_LEASE_SECONDS=30,
    )
    Store.from_url(pg_url).close()  # the schema, before the workers race to make it

    web = ServerProcess(small_web, latency_ms=LATENCY_MS)
    logs = [tmp_path / f"worker{w}.log" for w in range(2)]
    procs = []
    try:
        procs = start_workers(logs, web.url, seeds, politics_topic, pg_url, redis_url=via_proxy,
                              prefix=prefix, args={"run_id": RUN_ID, "max_pages": MAX_PAGES},
                              settings=settings)  # fmt: skip
        wait_for("a worker fetched nothing", lambda: min(map(worker_fetched, logs)) >= 3)
        both, both_wall = time.monotonic(), time.time()
        wait_for("", lambda: time.monotonic() - both >= NORMAL)
        cut, cut_wall = time.monotonic(), time.time()
        at_cut = sum(map(worker_fetched, logs))
        assert at_cut < MAX_PAGES * 3 // 4, "the budget was nearly spent before the cut"
        proxy.cut()
        wait_for("", lambda: time.monotonic() - cut >= OUTAGE)
        proxy.restore()
        restored_wall = time.time()
        at_restore = sum(map(worker_fetched, logs))
        wait_for("a worker still running", lambda: all(p.poll() is not None for p in procs), 300)
        codes = [p.wait() for p in procs]
        ended_wall = time.time()
    finally:
        stop_all(procs)
        web.stop()
        proxy.close()
        delete_prefix(redis.Redis.from_url(redis_url), prefix)
    texts = [log.read_text(encoding="utf-8", errors="replace") for log in logs]
    assert codes == [0, 0], [t[-3000:] for t in texts]
    assert not any("Traceback" in t for t in texts), [t[-3000:] for t in texts]
    store = Store.from_url(pg_url)
    urls = [p.url for p in store.iter_pages(RUN_ID)]
    fetched = [final_stat(t, "topicrawl/pages/fetched") for t in texts]
    broken = sum(final_stat(t, "topicrawl/pages/broken") for t in texts)
    assert len(urls) == len(set(urls)), "a page stored twice"
    assert sum(fetched) - broken == len(urls), f"fetched {fetched} - {broken} broken"
    assert len(urls) == MAX_PAGES, "the budget is exact"
    errors = {
        key: sum(final_stat(t, key) for t in texts)
        for key in ("topicrawl/frontier/redis_errors", "topicrawl/redis/outages",
                    "topicrawl/pages/budget_unshared", "topicrawl/links/fetch_once_unavailable",
                    "topicrawl/dedup/local_fallback", "topicrawl/cache/affinity_unshared",
                    "topicrawl/idle/redis_errors", "topicrawl/pages/budget_waited",
                    "topicrawl/links/fetch_once_waited",
                    "topicrawl/frontier/lost_on_close")
    }  # fmt: skip
    assert errors["topicrawl/frontier/redis_errors"] > 0, errors  # the outage was seen
    print(f"\npages fetched: {at_cut} at the cut, {at_restore} when restored; {len(urls)} "
          f"stored at the end (budget {MAX_PAGES}); fetched per worker {fetched}, broken {broken}; "
          f"exit {codes}; {ended_wall - restored_wall:.0f} s from the restore to the end")
    print(f"pages/s fetched: before {fetched_rate(texts, both_wall, cut_wall):.2f}, during "
          f"{fetched_rate(texts, cut_wall, restored_wall):.2f}, after "
          f"{fetched_rate(texts, restored_wall, last_fetch(texts)):.2f} (until the budget was "
          f"spent, {last_fetch(texts) - restored_wall:.0f} s after the restore)")
    print("counters " + ", ".join(f"{k.split('/', 1)[1]}={v}" for k, v in errors.items()))
