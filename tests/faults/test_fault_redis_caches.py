"""A Redis error in a shared cache never drops a page; the shared budget stays exact."""

from __future__ import annotations

import uuid

import numpy as np
import pytest
import redis
from conftest import CountingStats
from redis_outage import FlakyRedis

from relevance.cache import RedisAffinityCache
from relevance.page import TopicRelevance


class Sim:
    def matrix(self, a, b):
        return np.asarray([[1.0 if x == y else 0.5 for y in b] for x in a], dtype=np.float32)


def dead_redis() -> redis.Redis:
    return redis.Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.2)


def test_affinity_cache_outage_falls_back_to_local_and_counts():
    weights = {"政治": 1.0, "经济": 0.5}
    reference = TopicRelevance(weights, Sim(), str.split).relevance("政府 足球 政治")
    down = TopicRelevance(weights, Sim(), str.split,
                          shared=RedisAffinityCache(dead_redis(), "fp", namespace="p"))  # fmt: skip
    assert down.relevance("政府 足球 政治") == pytest.approx(reference)
    assert down.shared_failures == 2  # one read, one write


def test_affinity_cache_key_is_under_the_prefix():
    assert RedisAffinityCache(dead_redis(), "fp", namespace="run7").key == "run7:aff:fp"


@pytest.mark.redis
def test_budget_is_exact_through_an_outage(redis_url, tmp_path):
    """Over-budget pages give their count back; pages taken while Redis was down are added
    to the shared counter when it answers again: the counter ends at the budget."""
    from crawler.spiders.topic import TopicSpider

    topic = tmp_path / "t.toml"
    topic.write_text('name = "t"\n[words]\n"政治" = 1.0\n', encoding="utf-8")
    client = redis.Redis.from_url(redis_url)
    key = f"topicrawl_test_{uuid.uuid4().hex[:8]}:pages"
    flaky = FlakyRedis(client)
    workers = [TopicSpider(seeds="http://a.cn/", topic=str(topic), max_pages=6) for _ in "ab"]
    for w in workers:
        w.share_page_budget(flaky, key)
        w.pages_redis_errors = (redis.RedisError,)
        w.crawler = type("C", (), {"stats": CountingStats()})()
    try:
        taken = [workers[0].take_page(), workers[1].take_page()]
        flaky.down = True
        taken += [workers[0].take_page(), workers[0].take_page()]  # counted alone
        flaky.down = False
        taken += [w.take_page() for w in workers * 4]
        assert sum(t is not None for t in taken) == 6
        assert int(client.get(key)) == 6
        workers[1].release_page()  # a taken page that broke gives its count back
        assert int(client.get(key)) == 5
    finally:
        client.delete(key)


@pytest.mark.redis
def test_a_page_waits_for_the_shared_budget_through_an_outage(redis_url, tmp_path, monkeypatch):
    """The callback's take (TopicSpider.take_shared_page) asks Redis once while it answers;
    while it does not the page waits and then takes its number from the shared counter
    (nothing counted alone); past the retry budget it gives up and is not counted."""
    import asyncio

    import crawler.spiders.topic as topic_module
    from crawler.spiders.topic import BUDGET_UNREACHABLE, TopicSpider

    calls: list[str] = []

    class Counting(FlakyRedis):
        def __getattr__(self, name):
            calls.append(name)
            return super().__getattr__(name)

    topic = tmp_path / "t.toml"
    topic.write_text('name = "t"\n[words]\n"政治" = 1.0\n', encoding="utf-8")
    client = redis.Redis.from_url(redis_url)
    key = f"topicrawl_test_{uuid.uuid4().hex[:8]}:pages"
    flaky = Counting(client)
    spider = TopicSpider(seeds="http://a.cn/", topic=str(topic), max_pages=3)
    spider.share_page_budget(flaky, key)
    spider.pages_redis_errors = (redis.RedisError,)
    spider.crawler = type("C", (), {"stats": CountingStats()})()
    spider.budget_retry_seconds, spider.budget_poll = 0.3, 0.05

    async def back_after(seconds: float) -> None:
        await asyncio.sleep(seconds)
        flaky.down = False

    async def outage() -> list[int | None]:
        first = await spider.take_shared_page()
        flaky.down = True
        waited, _ = await asyncio.gather(spider.take_shared_page(), back_after(0.12))
        flaky.down = True
        gave_up = await spider.take_shared_page()
        flaky.down = False
        return [first, waited, gave_up, await spider.take_shared_page(),
                await spider.take_shared_page()]  # fmt: skip

    monkeypatch.setattr(topic_module, "sleep", asyncio.sleep)
    try:
        calls.clear()
        assert asyncio.run(outage()) == [1, 2, BUDGET_UNREACHABLE, 3, None]
        assert int(client.get(key)) == 3  # the budget, exact: nothing counted alone
    finally:
        client.delete(key)
    stats = spider.crawler.stats.values
    assert stats["topicrawl/pages/budget_waited"] == 2
    assert stats["topicrawl/pages/budget_unreachable"] == 1
    assert "topicrawl/pages/budget_unshared" not in stats
    assert calls[0] == "incrby" and calls.count("ping") == 0  # no PING: one INCR a page
