"""The shared frontier holds data only: a pickle written into Redis is refused, never run."""

from __future__ import annotations

import os
import pickle
import uuid
from pathlib import Path

import pytest
from conftest import delete_prefix
from redis_outage import FlakyRedis
from scrapy import Request
from scrapy.utils.test import get_crawler

from crawler import serialization
from crawler.queues import RedisPriorityQueue
from crawler.spiders.topic import TopicSpider


class _Payload:
    """What an attacker writes: unpickling runs ``os.system``."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_request_dicts_round_trip_through_json():
    request = Request(
        "http://example.com/a?q=1", method="POST", body=b"\x00\xffbody",
        headers={"X-A": "1"}, priority=123, dont_filter=True,
        meta={"link_score": {"total": 0.5}, "redirect_urls": ["http://a/"], "$b": "tag"},
    )  # fmt: skip
    obj = request.to_dict()
    back = serialization.loads(serialization.dumps(obj))
    assert back == {**obj, "headers": {k: list(v) for k, v in obj["headers"].items()}}
    assert b"\x00\xffbody" == back["body"]


@pytest.mark.parametrize(
    "data",
    [b"\x80\x04K\x01.", b"{not json", b"[1,2]", b'{"$b": "!!!"}', b'{"url": {"$d": [1]}}'],
)
def test_loads_refuses_anything_but_its_format(data):
    with pytest.raises(ValueError):
        serialization.loads(data)


def test_dumps_refuses_objects():
    with pytest.raises(TypeError):
        serialization.dumps({"meta": {"x": object()}})


@pytest.mark.redis
def test_a_pickle_in_the_frontier_is_refused_and_counted(redis_url, tmp_path):
    import redis

    client = redis.Redis.from_url(redis_url)
    marker = tmp_path / "pwned"
    key = f"topicrawl_test_{uuid.uuid4().hex[:8]}:%(spider)s:requests"
    crawler = get_crawler(TopicSpider)
    spider = TopicSpider.__new__(TopicSpider)  # only name, crawler and callbacks are used
    spider.crawler = crawler
    crawler.stats.open_spider()
    queue = RedisPriorityQueue(client, spider, key)
    try:
        good = Request("http://example.com/", callback=spider.parse, priority=5,
                       meta={"depth": 1, "link_score": {"x": 1.0}})  # fmt: skip
        queue.push(good)
        # hostile entries, ahead of the good one (a higher priority: lower score)
        hostile = [
            pickle.dumps(_Payload(marker)),
            serialization.dumps({"_class": "subprocess.Popen", "url": "x", "args": ["true"]}),
            serialization.dumps({"url": "http://example.com/", "callback": "close"}),
            b"garbage",
        ]
        for data in hostile:
            client.execute_command("ZADD", queue.key, -100, data)
        popped = queue.pop()
        assert popped is not None and popped.url == "http://example.com/"
        assert popped.meta["link_score"] == {"x": 1.0} and popped.priority == 5
        assert not marker.exists()
        assert crawler.stats.get_value("topicrawl/frontier/malformed") == len(hostile)
        assert queue.pop() is None
        # what is pushed is JSON, not a pickle
        queue.push(good)
        raw = client.zrange(queue.key, 0, 0)[0]
        assert raw.startswith(b"{") and serialization.loads(raw)["url"] == good.url
    finally:
        client.delete(queue.key)


@pytest.mark.redis
def test_meta_that_json_cannot_carry_is_dropped_not_the_request(redis_url):
    import redis

    client = redis.Redis.from_url(redis_url)
    key = f"topicrawl_test_{uuid.uuid4().hex[:8]}:%(spider)s:requests"
    crawler = get_crawler(TopicSpider)
    spider = TopicSpider.__new__(TopicSpider)
    spider.crawler = crawler
    crawler.stats.open_spider()
    queue = RedisPriorityQueue(client, spider, key)
    try:
        queue.push(Request("http://example.com/", meta={"ok": 1, "bad": object()}))
        popped = queue.pop()
        assert popped.meta == {"ok": 1}
        assert crawler.stats.get_value("topicrawl/frontier/meta_dropped") == 1
    finally:
        client.delete(queue.key)


def _scheduler(client, prefix: str, queue_cls: str = "crawler.queues.RedisPriorityQueue"):
    """A RedisScheduler over ``client`` with an RFPDupeFilter, opened for a TopicSpider:
    (crawler, scheduler)."""
    from scrapy_redis.dupefilter import RFPDupeFilter

    from crawler.scheduler import RedisScheduler

    crawler = get_crawler(TopicSpider)
    spider = TopicSpider.__new__(TopicSpider)
    spider.crawler = crawler
    crawler.stats.open_spider()
    df = RFPDupeFilter(client, key=f"{prefix}:df")
    sched = RedisScheduler(client, persist=True, queue_key=f"{prefix}:%(spider)s:requests",
                           queue_cls=queue_cls, dupefilter=df)  # fmt: skip
    sched.stats = crawler.stats
    sched.open(spider)
    return crawler, sched


@pytest.mark.redis
def test_the_scheduler_holds_requests_through_a_redis_outage(redis_url):
    import redis

    client = redis.Redis.from_url(redis_url)
    flaky = FlakyRedis(client)
    prefix = f"topicrawl_test_{uuid.uuid4().hex[:8]}"
    crawler, sched = _scheduler(flaky, prefix)
    try:
        sched.enqueue_request(Request("http://a.example/1", priority=3))
        flaky.down = True
        for i in (2, 3):
            assert sched.enqueue_request(Request(f"http://a.example/{i}", priority=i))
        assert sched.has_pending_requests()  # the worker waits, it does not close
        assert sched.next_request().url == "http://a.example/2"  # served from memory
        flaky.down = False
        urls = []
        while (request := sched.next_request()) is not None:
            urls.append(request.url)
        assert sorted(urls) == ["http://a.example/1", "http://a.example/3"]
        assert not sched.has_pending_requests()
        assert crawler.stats.get_value("topicrawl/frontier/redis_errors") >= 3
    finally:
        delete_prefix(client, prefix)


class _PushFails(RedisPriorityQueue):
    """The frontier's push fails once (Redis gone as a link is queued)."""

    fail_next = False

    @staticmethod
    def _fail() -> None:
        if _PushFails.fail_next:
            _PushFails.fail_next = False
            import redis

            raise redis.ConnectionError("down")

    def push(self, request):
        self._fail()
        return super().push(request)

    def push_unseen(self, request, seen_key, fingerprint):
        self._fail()
        return super().push_unseen(request, seen_key, fingerprint)


@pytest.mark.redis
def test_a_responses_links_are_checked_against_the_seen_set_in_one_round_trip(redis_url):
    """crawler.seen.SeenBatchMiddleware + RedisScheduler.check_seen: one SMISMEMBER for a
    response's links; a link seen before is dropped there, the new ones are not marked (a
    worker killed before their enqueue loses none) and are marked and queued in one script
    (no SADD of their own: a worker killed between a SADD and its push lost the link); a new
    link whose script fails is held and pushed later, not taken for seen."""
    import redis

    client = redis.Redis.from_url(redis_url)
    prefix = f"topicrawl_test_{uuid.uuid4().hex[:8]}"
    crawler, sched = _scheduler(client, prefix, f"{__name__}._PushFails")
    df = sched.df
    sent: list[str] = []
    real_sadd = df.server.sadd
    df.server = type("Counting", (), {"sadd": lambda self, *a: sent.append(a[1]) or real_sadd(*a),
                                      "__getattr__": lambda self, n: getattr(client, n)})()  # fmt: skip
    try:
        assert sched.enqueue_request(Request("http://a.example/old"))
        assert client.scard(df.key) == 1
        links = [Request(f"http://a.example/{p}") for p in ("old", "new1", "new2", "new1")]
        seen = sched.check_seen(links)
        assert seen == {id(links[0])}  # only looked up: nothing added
        assert client.scard(df.key) == 1
        assert sched.enqueue_request(links[1])
        _PushFails.fail_next = True
        assert sched.enqueue_request(links[2])  # held: its script failed, nothing marked
        assert len(sched.held) == 1 and client.scard(df.key) == 2
        assert not sched.enqueue_request(links[3])  # new1 twice in one page: seen
        assert not sent  # no SADD apart from the scripts
        sched.enqueue_request(Request("http://a.example/later"))  # pushes the held one first
        urls = []
        while (request := sched.next_request()) is not None:
            urls.append(request.url)
        assert sorted(urls) == ["http://a.example/later", "http://a.example/new1",
                                "http://a.example/new2", "http://a.example/old"]  # fmt: skip
        assert crawler.stats.get_value("topicrawl/frontier/seen_batches") == 1
    finally:
        delete_prefix(client, prefix)
