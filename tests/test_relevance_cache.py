"""The Redis-shared word-affinity cache (formula 3's inner sum)."""

from __future__ import annotations

import uuid

import numpy as np
import pytest

from relevance.cache import RedisAffinityCache, topic_fingerprint
from relevance.page import TopicRelevance
from relevance.topic import parse_topic


class CountingSim:
    def __init__(self):
        self.asked: list[str] = []

    def matrix(self, a, b):
        self.asked.extend(a)
        return np.asarray([[1.0 if x == y else 0.5 for y in b] for x in a], dtype=np.float32)


def test_affinities_shared_between_processes(redis_url):
    import redis

    client = redis.Redis.from_url(redis_url)
    fp = f"test-{uuid.uuid4().hex}"
    shared = RedisAffinityCache(client, fp, namespace="topicrawl-test")
    try:
        weights = {"政治": 1.0, "经济": 0.5}
        first = TopicRelevance(weights, CountingSim(), str.split, shared=shared)
        r1 = first.relevance("政府 足球 政治")
        sim2 = CountingSim()
        second = TopicRelevance(weights, sim2, str.split, shared=shared)
        sim2.asked.clear()  # forget the topic words' own affinities computed at start-up
        assert second.relevance("政府 足球 政治") == pytest.approx(r1)
        assert sim2.asked == []  # every word came from Redis
        assert client.ttl(shared.key) > 0
    finally:
        shared.clear()
        client.close()


def test_fingerprint_changes_with_the_topic():
    base = 'name = "t"\n[words]\n"政治" = 1.0\n'
    a = topic_fingerprint(parse_topic(base))
    assert a == topic_fingerprint(parse_topic(base + "[priority]\nthreshold = 0.3\n"))
    assert a != topic_fingerprint(parse_topic(base.replace("1.0", "0.5")))
    assert a != topic_fingerprint(parse_topic(base + "[similarity]\nth2 = 0.7\n"))
