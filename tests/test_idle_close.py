"""crawler.idle.SharedIdleClose: an idle scale-out worker waits while any worker was busy
within the period, closes once the whole crawl has been idle, and closes when the shared
budget is spent (a real Redis, keys under a unique prefix)."""

from __future__ import annotations

import time
import uuid
from types import SimpleNamespace

import pytest
from scrapy.exceptions import CloseSpider, DontCloseSpider
from scrapy.statscollectors import MemoryStatsCollector

from crawler.idle import SharedIdleClose


class _Scheduler:
    def __init__(self) -> None:
        self.pending = False

    def has_pending_requests(self) -> bool:
        return self.pending


class _NextCall:
    def __init__(self) -> None:
        self.scheduled = 0

    def schedule(self) -> None:
        self.scheduled += 1


class _Engine:
    def __init__(self) -> None:
        self._slot = SimpleNamespace(scheduler=_Scheduler(), nextcall=_NextCall(), closing=None)
        self.idle = True

    def spider_is_idle(self) -> bool:
        return self.idle


def _worker(client, key: str, idle_seconds: float) -> tuple[SharedIdleClose, _Engine]:
    engine = _Engine()
    crawler = SimpleNamespace(engine=engine, stats=MemoryStatsCollector(SimpleNamespace(
        settings=SimpleNamespace(getbool=lambda *a, **k: False))))  # fmt: skip
    return SharedIdleClose(crawler, client, key, idle_seconds), engine


@pytest.mark.redis
def test_idle_workers_wait_for_the_busy_one_then_close_together(redis_url):
    import redis

    client = redis.Redis.from_url(redis_url)
    key = f"topicrawl_test_{uuid.uuid4().hex[:8]}:topic:active"
    spider = SimpleNamespace(pages_redis=None, pages_key=None, max_pages=None)
    try:
        busy, busy_engine = _worker(client, key, 0.6)
        idle, _ = _worker(client, key, 0.6)
        idle.touch()  # as at spider_opened: a worker starting on an empty frontier waits
        with pytest.raises(DontCloseSpider):
            idle.spider_idle(spider)
        busy_engine.idle = False
        for _ in range(4):  # the busy worker keeps the crawl alive past one period
            busy.beat()
            time.sleep(0.3)
            with pytest.raises(DontCloseSpider):
                idle.spider_idle(spider)
        busy_engine.idle = True
        busy.beat()  # idle now: no refresh
        time.sleep(0.8)
        idle.spider_idle(spider)  # whole crawl idle for the period: no exception, it closes
        busy.spider_idle(spider)
        assert idle.waits == 5
    finally:
        client.delete(key)


@pytest.mark.redis
def test_a_spent_shared_budget_closes_an_idle_worker(redis_url):
    import redis

    client = redis.Redis.from_url(redis_url)
    prefix = f"topicrawl_test_{uuid.uuid4().hex[:8]}"
    pages = f"{prefix}:topic:pages"
    try:
        worker, _ = _worker(client, f"{prefix}:topic:active", 30)
        worker.touch()
        spider = SimpleNamespace(pages_redis=client, pages_key=pages, max_pages=5)
        client.set(pages, 4)
        with pytest.raises(DontCloseSpider):
            worker.spider_idle(spider)
        client.set(pages, 5)
        with pytest.raises(CloseSpider) as exc:
            worker.spider_idle(spider)
        assert exc.value.reason == "max_pages"
    finally:
        client.delete(pages, f"{prefix}:topic:active")


def test_a_worker_is_woken_when_the_shared_frontier_holds_requests():
    """Scrapy's engine polls its scheduler every 5 s when it has nothing in flight; the
    extension's beat wakes it as soon as another worker has pushed requests."""
    worker, engine = _worker(None, "unused", 10)
    worker.beat()  # idle, nothing queued: left asleep (no Redis call for the active key)
    assert engine._slot.nextcall.scheduled == 0
    engine._slot.scheduler.pending = True
    assert worker.wake()
    assert engine._slot.nextcall.scheduled == 1
    assert worker.crawler.stats.get_value("topicrawl/idle/wakes") == 1
    engine._slot.closing = object()  # a closing engine is left alone
    assert not worker.wake()
