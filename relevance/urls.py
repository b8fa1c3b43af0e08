"""URL-structure relevance: Algorithms 2 and 3 of Zhou, Wang & Yu (2019).

Algorithm 2 (are two URLs similar?), as published — ``mode = "paper"``:
  (1) split the host by '.' and the path by '/';
  (2) if one host contains the other, the URLs are similar (stop);
  (3) compare the parts position by position, n = min(number of parts), with the Jaccard
      coefficient of their characters; host parts (right to left, the TLD first) weigh
      w1 = a, w(i+1) = w(i) − b (a = 0.6, b = 0.2; a weight that would fall below 0 is 0),
      and when *both* parts are 'www' their weight is divided by d = 2; path parts (left to
      right) weigh w1 = 1, w(j+1) = w(j) / 2; hostSim = Σ_i w_i·J_i, pathSim = Σ_j w_j·J_j;
  (4) similar when α·hostSim + β·pathSim > threshold (α = β = 0.5; their Table 6: accuracy
      0.98 at thresholds 0.05–0.10; topicrawl's paper-mode default is 0.1).

The paper's worked examples (URLs with their scores) were not available here; the tests
check the steps above on hand-computed URLs.

``mode = "path"`` (topicrawl's default) departs from it in six ways, each measured in
docs/benchmarks/relevance.md ("Algorithm 2: each deviation"):
  * host containment only sets hostSim = 1 and the path still decides (step 2 makes every
    URL of one site similar, which defeats a site that keeps a topic under one path);
  * parts are aligned over the *longer* host/path, a missing part scoring 0 (with n = min,
    ``/politics/`` and ``/politics/2024/a.html`` agree on everything compared);
  * hostSim and pathSim are weighted *means* (in [0, 1], so one threshold fits hosts and
    paths of any length) instead of sums;
  * the 1/d 'www' rule applies when *either* part is 'www' (``www.a.com`` vs ``news.a.com``:
    the differing part that is 'www' says little);
  * Jaccard over character *bigrams* (with characters, ``sports`` and ``politics`` share
    half their letters);
  * threshold 0.75 on that [0, 1] scale.

Algorithm 3 (struct(url)): keep a uniform random sample of n accepted URLs (reservoir
sampling, so each new URL costs O(n) at any crawl size); struct = 1 when the URL is similar
to more than half of the sample.

On a crawl over several sites each site files a topic under its own path (``/politics/``,
``/shizheng/``, ``/china/``), so a URL is rarely similar to more than half of one mixed
sample and struct never fires. :class:`PerHostStructureSample` (topicrawl's default, topic
option ``[urls] per_host``) keeps one reservoir per host and tests a URL against the accepted
URLs of its own host: still O(n) per URL, and the paper's rule on a single-site crawl.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from relevance.learning.base import reservoir_put


@lru_cache(maxsize=1 << 16)
def _grams(s: str) -> frozenset[str]:
    return frozenset({s[i : i + 2] for i in range(len(s) - 1)} if len(s) > 1 else s)


def jaccard(a: str, b: str) -> float:
    """Jaccard coefficient of the character bigrams of two URL parts (a one-character part
    is its own gram; 1 for two empty parts). Bigrams rather than single characters: with
    characters, 'sports' and 'politics' share half their letters."""
    sa, sb = _grams(a), _grams(b)
    if not sa and not sb:
        return 1.0
    return len(sa & sb) / len(sa | sb)


@lru_cache(maxsize=1 << 16)
def _split(url: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    try:
        parts = urlsplit(url if "//" in url else "//" + url)
        host, path_text = (parts.hostname or "").lower(), parts.path
    except ValueError:  # an invalid IPv6 literal ('http://[::1/'): the raw text's parts
        rest = url.split("//", 1)[-1]
        netloc, _, path_text = rest.partition("/")
        host = netloc.rsplit("@", 1)[-1].lower()
    path = tuple(p for p in path_text.split("/") if p)
    return (tuple(host.split(".")) if host else ()), path


def _host_contains(h1: tuple[str, ...], h2: tuple[str, ...]) -> bool:
    a, b = ".".join(h1), ".".join(h2)
    return bool(a and b) and (a == b or a.endswith("." + b) or b.endswith("." + a))


def char_jaccard(a: str, b: str) -> float:
    """Jaccard coefficient of the character sets of two URL parts (paper mode)."""
    sa, sb = set(a), set(b)
    if not sa and not sb:
        return 1.0
    return len(sa & sb) / len(sa | sb)


def paper_host_similarity(
    h1: Sequence[str], h2: Sequence[str], *, a: float = 0.6, b: float = 0.2, d: float = 2.0
) -> float:
    """Algorithm 2 step (3), hosts: Σ_i w_i·J_i over n = min parts, right to left."""
    r1, r2 = h1[::-1], h2[::-1]
    total, w = 0.0, a
    for i in range(min(len(r1), len(r2))):
        wi = max(w, 0.0)
        if r1[i] == "www" and r2[i] == "www":
            wi /= d
        total += wi * char_jaccard(r1[i], r2[i])
        w -= b
    return total


def paper_path_similarity(p1: Sequence[str], p2: Sequence[str]) -> float:
    """Algorithm 2 step (3), paths: Σ_j w_j·J_j over n = min parts, w1 = 1, halving."""
    total, w = 0.0, 1.0
    for j in range(min(len(p1), len(p2))):
        total += w * char_jaccard(p1[j], p2[j])
        w /= 2
    return total


def host_similarity(
    h1: Sequence[str], h2: Sequence[str], *, a: float = 0.6, b: float = 0.2, d: float = 2.0
) -> float:
    """Weighted per-part Jaccard of two hosts (parts compared right to left)."""
    r1, r2 = h1[::-1], h2[::-1]
    n = max(len(r1), len(r2))
    if n == 0:
        return 1.0
    num = den = 0.0
    w = a
    for i in range(n):
        p1 = r1[i] if i < len(r1) else ""
        p2 = r2[i] if i < len(r2) else ""
        wi = max(w, 1e-6)
        if "www" in (p1, p2):
            wi /= d
        num += wi * (jaccard(p1, p2) if p1 and p2 else 0.0)
        den += wi
        w -= b
    return num / den


def path_similarity(p1: Sequence[str], p2: Sequence[str]) -> float:
    """Weighted per-part Jaccard of two paths (w1 = 1, halving; missing parts score 0)."""
    n = max(len(p1), len(p2))
    if n == 0:
        return 1.0
    num = den = 0.0
    w = 1.0
    for j in range(n):
        x = p1[j] if j < len(p1) else ""
        y = p2[j] if j < len(p2) else ""
        num += w * (jaccard(x, y) if x and y else 0.0)
        den += w
        w /= 2
    return num / den


def url_similarity(
    u1: str,
    u2: str,
    *,
    mode: str = "path",
    alpha: float = 0.5,
    beta: float = 0.5,
    a: float = 0.6,
    b: float = 0.2,
    d: float = 2.0,
) -> float:
    """Algorithm 2 score α·hostSim + β·pathSim.

    ``paper``: the published step (3) (sums over n = min parts, character Jaccard); host
    containment (step 2) returns ``inf``, similar at any threshold. ``path``: topicrawl's
    variant (module docstring), a score in [0, 1].
    """
    h1, p1 = _split(u1)
    h2, p2 = _split(u2)
    contained = _host_contains(h1, h2)
    if mode == "paper":
        if contained:
            return float("inf")
        return alpha * paper_host_similarity(h1, h2, a=a, b=b, d=d) + beta * (
            paper_path_similarity(p1, p2)
        )
    if mode != "path":
        raise ValueError(f"unknown Algorithm 2 mode {mode!r} (paper or path)")
    hs = 1.0 if contained else host_similarity(h1, h2, a=a, b=b, d=d)
    return alpha * hs + beta * path_similarity(p1, p2)


def same_path(u1: str, u2: str) -> bool:
    """Same host and path (the URLs differ at most in the query or fragment)."""
    return _split(u1) == _split(u2)


def urls_similar(u1: str, u2: str, *, threshold: float = 0.75, **params) -> bool:
    """Algorithm 2 decision: similar when the score passes ``threshold``."""
    return url_similarity(u1, u2, **params) > threshold


class StructureSample:
    """Algorithm 3: reservoir sample of accepted URLs and the struct(url) test."""

    def __init__(
        self, n: int = 20, *, seed: int | str | None = 0, threshold: float = 0.75, **params
    ):
        self.n = n
        self.sample: list[str] = []
        self.seen = 0
        self.threshold = threshold
        self.params = params
        self._rng = random.Random(seed)
        self._memo: dict[str, float] = {}  # struct(url) for the current sample

    def add(self, url: str) -> None:
        """Reservoir sampling (Vitter's algorithm R): every accepted URL equally likely kept."""
        self.seen += 1
        if reservoir_put(self.sample, url, self.seen, self.n, self._rng):
            self._memo.clear()

    def struct(self, url: str) -> float:
        """1.0 when ``url`` is similar to more than half of the sample, else 0.0."""
        if not self.sample:
            return 0.0
        v = self._memo.get(url)
        if v is None:
            need = len(self.sample) // 2 + 1  # "more than half"
            hits = misses = 0
            for s in self.sample:  # stop as soon as the majority is decided
                if urls_similar(url, s, threshold=self.threshold, **self.params):
                    hits += 1
                    if hits >= need:
                        break
                else:
                    misses += 1
                    if misses > len(self.sample) - need:
                        break
            v = 1.0 if hits >= need else 0.0
            if len(self._memo) > 100_000:
                self._memo.clear()
            self._memo[url] = v
        return v

    def similar(self, u1: str, u2: str) -> bool:
        """Algorithm 2 with this sample's threshold and parameters."""
        return urls_similar(u1, u2, threshold=self.threshold, **self.params)

    def has_structure(self, url: str = "") -> bool:
        """Whether the sample has a majority structure: some sampled URL is similar to more
        than half of the sample (so struct(url) = 0 means "filed elsewhere", not "no
        evidence"). ``url`` is ignored (the per-host variant picks its host's sample)."""
        if len(self.sample) < self.n // 2 or not self.sample:
            return False
        return any(self.struct(u) for u in self.sample)


class PerHostStructureSample:
    """Algorithm 3 with one reservoir :class:`StructureSample` per host.

    ``struct(url)`` applies the paper's "similar to more than half of the sample" rule to
    the sample of the URL's own host (0.0 for a host with no accepted URL yet); each host's
    reservoir holds at most ``n`` URLs, so a test stays O(n) and memory O(n · hosts).
    Same parameters as :class:`StructureSample`; host ``h``'s reservoir is seeded from
    ``seed`` and ``h`` so that runs are reproducible.
    """

    def __init__(self, n: int = 20, *, seed: int | None = 0, threshold: float = 0.75, **params):
        self.n = n
        self.seed = seed
        self.threshold = threshold
        self.params = params
        self.samples: dict[str, StructureSample] = {}

    @staticmethod
    def host(url: str) -> str:
        return ".".join(_split(url)[0])

    def make_sample(self, host: str) -> StructureSample:
        """A new, empty reservoir for ``host`` (seeded from ``seed`` and ``host``)."""
        seed = None if self.seed is None else f"{self.seed}:{host}"
        return StructureSample(self.n, seed=seed, threshold=self.threshold, **self.params)

    def add(self, url: str) -> None:
        """Add an accepted URL to its host's reservoir."""
        h = self.host(url)
        sample = self.samples.get(h)
        if sample is None:
            sample = self.samples[h] = self.make_sample(h)
        sample.add(url)

    @property
    def seen(self) -> int:
        return sum(s.seen for s in self.samples.values())

    def struct(self, url: str) -> float:
        """1.0 when ``url`` is similar to more than half of its host's sample, else 0.0."""
        sample = self.samples.get(self.host(url))
        return sample.struct(url) if sample is not None else 0.0

    def similar(self, u1: str, u2: str) -> bool:
        """Algorithm 2 with the samples' threshold and parameters."""
        return urls_similar(u1, u2, threshold=self.threshold, **self.params)

    def has_structure(self, url: str) -> bool:
        """Whether the sample of ``url``'s host has a majority structure."""
        sample = self.samples.get(self.host(url))
        return sample is not None and sample.has_structure()


def structure_sample(
    urls: Any, *, seed: int | str | None = 0, per_host: bool | None = None
) -> StructureSample | PerHostStructureSample:
    """An Algorithm 3 sample with a topic's ``[urls]`` settings (``urls``: its
    :class:`relevance.topic.UrlConfig`): one reservoir per host when ``per_host`` (default:
    the topic's ``per_host``), else one for every URL."""
    one_per_host = urls.per_host if per_host is None else per_host
    cls = PerHostStructureSample if one_per_host else StructureSample
    return cls(urls.sample_size, seed=seed, threshold=urls.threshold, mode=urls.mode,
               alpha=urls.alpha, beta=urls.beta, a=urls.a, b=urls.b, d=urls.d)  # fmt: skip
