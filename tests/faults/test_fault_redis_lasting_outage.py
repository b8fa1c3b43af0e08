"""A lasting Redis outage under the scale-out, through a proxy the test cuts for good (issue 11,
items 3 and 7).

Two workers (``scrapy crawl`` subprocesses) share the frontier, dupefilter, fetched set, page
budget and dedup index in Redis through :class:`tcpproxy.TcpProxy` and store into one
PostgreSQL database. Once both fetch (:data:`AT_CUT` pages together), the proxy is cut and
stays cut: each worker must end with ``redis_unreachable`` (exit status 5) within
:data:`BOUND` seconds past ``TOPICRAWL_REDIS_RETRY_SECONDS`` (:data:`RETRY`), the run must say
so in ``crawl_runs``, the progress lines must name the outage, and every page a worker counted
as fetched (and did not find broken) must be stored, once. Then Redis is back (the proxy
restored) and the same command runs again: the crawl resumes and spends the budget exactly,
and across both phases every page is fetched and stored once (the stored URLs are pages of
the web's ground truth).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from conftest import delete_prefix
from workers import (
    final_stat,
    outage_crawl,
    start_workers,
    stop_all,
    wait_for,
    worker_fetched,
)

from models.store import Store
from sitegen.server import ServerProcess

RETRY = 5.0  # TOPICRAWL_REDIS_RETRY_SECONDS: the outage lasts longer
BOUND = 30.0  # seconds past RETRY (after the cut) within which every worker has ended
MAX_PAGES = 150  # the crawl's budget; the small web (with its calendars) has more
RUN_ID = 79
AT_CUT = 30  # pages fetched by both workers together (each some) before the cut
LATENCY_MS = 500  # the test web's latency: the budget is far from spent at the cut


def finish_reason(store: Store, run_id: int) -> str | None:
    """The finish reason ``crawl_runs`` records for ``run_id``."""
    run = next(r for r in store.list_runs() if r.id == run_id)
    return (run.stats or {}).get("finish_reason")


def redis_down(log: str) -> list[int]:
    """The ``redis_down_s`` figures of a worker's progress lines (seconds Redis has not
    answered; 0 while it answers)."""
    return [int(n) for n in re.findall(r"INFO: progress .*?redis_down_s=(\d+)", log)]


@pytest.mark.redis
@pytest.mark.slow
def test_a_lasting_redis_outage_ends_with_exit_5_and_resumes_without_doubles(
    small_web: Path, redis_url: str, pg_url: str, politics_topic: Path, tmp_path: Path
) -> None:
    import redis

    truth = json.loads((small_web / "ground_truth.json").read_text(encoding="utf-8"))
    seeds, proxy, via_proxy, prefix, settings = outage_crawl(
        small_web, redis_url, tmp_path, TOPICRAWL_REDIS_RETRY_SECONDS=RETRY
    )
    args = {"run_id": RUN_ID, "max_pages": MAX_PAGES}
    Store.from_url(pg_url).close()  # the schema, before the workers race to make it

    web = ServerProcess(small_web, latency_ms=LATENCY_MS)
    first = [tmp_path / f"worker{w}.log" for w in range(2)]
    again = [tmp_path / f"resumed{w}.log" for w in range(2)]
    procs, resumed = [], []
    try:
        procs = start_workers(first, web.url, seeds, politics_topic, pg_url,
                              redis_url=via_proxy, prefix=prefix, args=args,
                              settings=settings)  # fmt: skip
        wait_for("a worker fetched nothing", lambda: min(map(worker_fetched, first)) >= 3)
        wait_for("too few pages", lambda: sum(map(worker_fetched, first)) >= AT_CUT)
        at_cut = sum(map(worker_fetched, first))
        assert at_cut < MAX_PAGES * 3 // 4, "the budget was nearly spent before the cut"
        cut = time.monotonic()
        proxy.cut()  # for good
        while any(p.poll() is None for p in procs):
            assert time.monotonic() - cut < RETRY + BOUND + 60, "a worker did not end"
            time.sleep(0.2)
        took = time.monotonic() - cut
        codes = [p.wait() for p in procs]
        texts = [log.read_text(encoding="utf-8", errors="replace") for log in first]
        store = Store.from_url(pg_url)
        urls = [p.url for p in store.iter_pages(RUN_ID)]
        reason = finish_reason(store, RUN_ID)
        store.close()

        proxy.restore()  # Redis is back: the same command resumes the crawl
        resumed = start_workers(again, web.url, seeds, politics_topic, pg_url,
                                redis_url=via_proxy, prefix=prefix, args=args,
                                settings=settings)  # fmt: skip
        wait_for("a resumed worker still running",
                 lambda: all(p.poll() is not None for p in resumed), 300)  # fmt: skip
        resumed_codes = [p.wait() for p in resumed]
    finally:
        stop_all(procs + resumed)
        web.stop()
        proxy.close()
        delete_prefix(redis.Redis.from_url(redis_url), prefix)

    # the outage: exit 5 within the bound, the run marked, the progress lines name it
    assert codes == [5, 5], [t[-3000:] for t in texts]
    assert took <= RETRY + BOUND, f"the workers ended {took:.0f} s after the cut"
    assert all("topicrawl: Redis" in t and "unreachable" in t for t in texts), texts[0][-2000:]
    assert not any("Traceback" in t for t in texts), [t[-3000:] for t in texts]
    assert reason == "redis_unreachable"
    assert all(max(redis_down(t), default=0) > 0 for t in texts), "no progress line names it"
    # every page counted before or during the outage is stored, once
    fetched = [final_stat(t, "topicrawl/pages/fetched") for t in texts]
    broken = sum(final_stat(t, "topicrawl/pages/broken") for t in texts)
    assert len(urls) == len(set(urls)), "a page stored twice"
    assert sum(fetched) - broken == len(urls), f"fetched {fetched} - {broken} broken, {len(urls)}"
    assert all(final_stat(t, "topicrawl/pages/budget_unshared") == 0 for t in texts)

    # the resume: the budget is spent exactly, no page fetched or stored twice in all
    later = [log.read_text(encoding="utf-8", errors="replace") for log in again]
    assert resumed_codes == [0, 0], [t[-3000:] for t in later]
    assert not any("Traceback" in t for t in later), [t[-3000:] for t in later]
    store = Store.from_url(pg_url)
    final = [p.url for p in store.iter_pages(RUN_ID)]
    store.close()
    known = set(truth["pages"]) | set(truth.get("near_misses", {}))
    traps = tuple(truth["traps"])
    assert len(final) == len(set(final)), "a page stored twice"
    assert all(u in known or u.startswith(traps) for u in final), "a page not of the web"
    assert set(urls) <= set(final), "a page stored during the outage is gone"
    total = sum(fetched) + sum(final_stat(t, "topicrawl/pages/fetched") for t in later)
    total_broken = broken + sum(final_stat(t, "topicrawl/pages/broken") for t in later)
    assert total - total_broken == len(final), "a page fetched twice (once per phase)"
    assert len(final) == MAX_PAGES, "the budget is exact across the outage and the resume"
    print(f"\npages fetched: {at_cut} at the cut; {len(urls)} stored when the workers ended "
          f"({took:.1f} s after the cut, retry budget {RETRY:g} s), {len(final)} after the "
          f"resume (budget {MAX_PAGES}); exit {codes} then {resumed_codes}")  # fmt: skip
