"""A topic-affinity cache shared between crawler processes through Redis.

Formula 3's inner sum Σ_t w_t·Sim(d, t)² depends only on the word d and on the topic (its
weights and similarity settings), so processes crawling the same topic can share it: one
Redis hash per topic fingerprint, word -> affinity. :class:`relevance.page.TopicRelevance`
asks it for the words its own in-process cache lacks, before computing anything.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping

from topicrawl.errors import StorageError


def topic_fingerprint(topic) -> str:
    """A short hash of everything that changes a word's affinity for ``topic``."""
    s = topic.similarity
    payload = {
        "weights": sorted(topic.weights.items()),
        "sources": s.sources,
        "th": [s.th1, s.th2, s.alpha, s.beta],
        "vectors": s.vectors,
        "hownet": [
            topic.hownet.alpha,
            list(topic.hownet.beta),
            topic.hownet.gamma,
            topic.hownet.delta,
        ],
        "dictionary": [
            getattr(s, "cilin", ""),
            getattr(s, "cilin_method", "ic"),
            getattr(s, "hybrid_weight", 0.5),
            getattr(s, "step1", "paper"),
        ],
        "formula3": getattr(topic, "page_formula3", "normalized"),
        "v": 2,
    }
    return hashlib.sha1(json.dumps(payload, ensure_ascii=False).encode()).hexdigest()[:16]


class RedisAffinityCache:
    """word -> affinity in the Redis hash ``{namespace}:aff:{fingerprint}``."""

    def __init__(
        self,
        client,
        fingerprint: str,
        *,
        namespace: str = "topicrawl",
        ttl: int | None = 7 * 24 * 3600,
    ):
        self.client = client
        self.key = f"{namespace}:aff:{fingerprint}"
        self.ttl = ttl

    @classmethod
    def from_url(cls, url: str, fingerprint: str, **kwargs) -> RedisAffinityCache:
        import redis

        return cls(redis.Redis.from_url(url, socket_connect_timeout=5), fingerprint, **kwargs)

    def get_many(self, words: Iterable[str]) -> dict[str, float]:
        words = list(words)
        if not words:
            return {}
        try:
            values = self.client.hmget(self.key, words)
        except Exception as exc:  # redis.exceptions.RedisError
            raise StorageError(f"affinity cache {self.key}: {exc}") from exc
        return {w: float(v) for w, v in zip(words, values, strict=True) if v is not None}

    def set_many(self, values: Mapping[str, float]) -> None:
        if not values:
            return
        try:
            pipe = self.client.pipeline(transaction=False)
            pipe.hset(self.key, mapping={w: repr(float(v)) for w, v in values.items()})
            if self.ttl:
                pipe.expire(self.key, self.ttl)
            pipe.execute()
        except Exception as exc:
            raise StorageError(f"affinity cache {self.key}: {exc}") from exc

    def clear(self) -> None:
        self.client.delete(self.key)
