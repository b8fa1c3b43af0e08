"""The shared dedup index through a Redis outage: pages are checked against a local copy of
the cascade, and what it added reaches Redis once Redis answers (issue 11)."""

from __future__ import annotations

import uuid

import pytest
import redis
from redis_outage import FlakyRedis

from crawler.items import PageItem
from dedup.base import Doc
from dedup.cascade import Cascade
from dedup.pipeline import DedupPipeline
from dedup.storage import RedisStorage

BEFORE = (
    "国家统计局今天发布的数据显示，十月份的经济运行是平稳的。在消费领域，社会消费品零售总额"
    "同比增长了百分之五。专家表示，这是政策效应持续显现的结果。在投资方面，制造业投资的增速"
    "是加快的，高技术产业的投资增长了百分之十一。就业形势总体是稳定的，城镇调查失业率为百分之五。"
)
DURING = (
    "本赛季的联赛进入了最后阶段，主队在主场的比赛中以三比一战胜了对手。球队的主教练是在赛后"
    "接受采访的，他说球员的表现是出色的。下一轮的比赛将在周六进行，球迷的热情是高涨的。"
)
AFTER = (
    "气象台发布的预报说，明天的天气是晴朗的，气温会有所回升。在北方地区，风力是减弱的，"
    "空气的质量也是良好的。专家提醒，早晚的温差是较大的，市民出行时要注意添加衣物。"
)
METHODS = ["exact", "spotsigs", "containment"]


class Stats:
    def __init__(self):
        self.values: dict[str, int] = {}

    def inc_value(self, key, count=1):
        self.values[key] = self.values.get(key, 0) + count


def page(url: str, text: str) -> PageItem:
    return PageItem(url=url, text=text, title="标题")


@pytest.mark.redis
def test_dedup_checks_locally_through_a_redis_outage_and_writes_back(redis_url):
    client = redis.Redis.from_url(redis_url)
    flaky = FlakyRedis(client)
    namespace = f"topicrawl_test_{uuid.uuid4().hex[:8]}"
    stats = Stats()
    backend = {"type": "redis", "url": redis_url, "namespace": namespace, "client": flaky}
    pipe = DedupPipeline(METHODS, backend=backend, stats=stats, fallback_retry=0)
    try:
        assert pipe.process_item(page("http://a/before", BEFORE)).get("duplicate") is None
        flaky.down = True
        assert pipe.process_item(page("http://a/during", DURING)).get("duplicate") is None
        near = pipe.process_item(page("http://b/during", "来源：新华网\n" + DURING + "责任编辑：王明"))
        assert near["duplicate"]["of"] == "http://a/during"  # added during the outage
        same = pipe.process_item(page("http://c/during", DURING))
        assert same["duplicate"] == {"of": "http://a/during", "method": "exact", "score": 1.0}
        old = pipe.process_item(page("http://b/before", "来源：人民网\n" + BEFORE))
        assert old["duplicate"]["of"] == "http://a/before"  # SpotSigs' replayed index
        assert stats.values["topicrawl/dedup/local_fallback"] == 4
        assert client.hget(f"{namespace}:exact:d", "http://a/during") is None  # not yet
        flaky.down = False  # back: the outage's document goes to Redis before the next page
        assert pipe.process_item(page("http://a/after", AFTER)).get("duplicate") is None
        assert stats.values["topicrawl/dedup/written_back"] == 1
        assert stats.values["topicrawl/dedup/local_fallback"] == 4
        assert "topicrawl/dedup/errors" not in stats.values
        # another worker, on the same Redis, sees the page added during the outage
        other = Cascade(RedisStorage(redis_url, namespace), METHODS)
        assert client.hget(f"{namespace}:exact:d", "http://a/during") is not None
        for text in ("转载：" + DURING, DURING):
            decision = other.check_and_add("http://z/copy", Doc(text))
            assert decision.duplicate is not None and decision.duplicate.doc_id == "http://a/during"
        assert other.query(Doc(AFTER)).doc_id == "http://a/after"
        other.storage.close()
    finally:
        pipe.close_spider(None)
        keys = list(client.scan_iter(f"{namespace}:*"))
        if keys:
            client.delete(*keys)
