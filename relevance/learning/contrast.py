"""Contrast topics learned from the crawl itself (issue 10): the groups of the fetched pages.

``[learning] contrast`` (:mod:`relevance.evidence`) needs the word lists of the other topics a
page may belong to instead — the sibling sections of a portal — which a user's words-only
topic does not have. :class:`LearnedContrast` finds them among the pages the crawl fetched:

* **groups**: the fetched pages, described by their words other than the topic's (tf-idf,
  l2-normalised), are clustered by k-means (spherical in effect: unit vectors), k =
  clamp(pages / ``pages_per_group``, 2, ``max_groups``). The web's URLs and navigation are
  not used: on the held-out template family article URLs carry no section
  (``/article.php?id=``, ``/a/<hash>``) and a focused crawl reaches few pages through a
  menu, so the groups come from what every page has — its text.
* **their evidence**: the mean literal topic-word probability P_lit (without contrast) of a
  group's pages. A group of at least ``min_pages`` pages whose mean is at most ``ratio`` ×
  the best group's becomes a **contrast topic**.
* **their words**: the ``top`` words most over-represented in the group's pages against the
  topic-positive pages (P_lit ≥ ``positive``) outside the contrast groups, by the z-score of
  the log-odds ratio with a Dirichlet prior (Monroe, Colaresi & Quinn 2008, "Fightin' words",
  eq. 16–22, on document frequencies); a word must occur in ``min_df`` of the group's pages.
  The topic's own words never count.

A web whose pages all carry the topic's evidence alike (a single-topic site), or a crawl of
fewer than ``min_total`` pages, gets no contrast. :meth:`LearnedContrast.rebuild` runs when
the page model retrains (a geometric schedule: every 10 pages, then every quarter of the pages
seen); observing a page only keeps its word set — nothing per link.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar

from relevance.learning.base import LearnedModel


def url_section(url: str) -> str | None:
    """host/first-directory of a URL whose path has a directory (None: none)."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    segs = parts.path.split("/")
    if len(segs) < 3 or not segs[1]:
        return None
    return f"{parts.hostname or ''}/{segs[1]}"


class LearnedContrast(LearnedModel):
    """Groups of the fetched pages and the contrast topics they yield."""

    kind: ClassVar[str] = "learned-contrast"

    def __init__(
        self,
        topic_words: Iterable[str],
        *,
        ratio: float = 0.5,
        min_pages: int = 5,
        min_total: int = 30,
        pages_per_group: int = 15,
        max_groups: int = 12,
        positive: float = 0.7,
        top: int = 30,
        min_df: float = 0.2,
        prior: float = 0.5,
        min_z: float = 2.0,
        max_pages: int = 2000,
        max_words: int = 600,
        groups: str = "cluster",
        reference: str = "all",
        seed: int = 0,
    ):
        if not 0.0 <= ratio <= 1.0:
            raise ValueError(f"learned contrast ratio must be in [0, 1], not {ratio}")
        self.topic_words = frozenset(topic_words)
        self.ratio, self.min_pages, self.min_total = ratio, max(1, min_pages), min_total
        self.pages_per_group, self.max_groups = max(1, pages_per_group), max(2, max_groups)
        self.positive, self.top, self.min_df = positive, top, min_df
        self.prior, self.min_z = prior, min_z
        self.max_pages, self.max_words = max_pages, max_words
        if groups not in ("cluster", "url"):
            raise ValueError(f"learned contrast groups: 'cluster' or 'url', not {groups!r}")
        self.grouping, self.reference, self.seed = groups, reference, seed
        self._rng = random.Random(seed)
        #: the kept pages: (their words other than the topic's, P_lit); a uniform sample
        self.pages: list[tuple[frozenset[str], float]] = []
        self.keys: list[str | None] = []  # their URL sections (``groups = "url"``)
        self.group_hosts: list[str] = []  # the host of each URL group
        self.seen = 0
        #: the last rebuild: every group's (pages, mean P_lit) and the contrast topics
        self.groups: list[tuple[int, float]] = []
        self.topics: list[dict[str, float]] = []

    def observe(self, words: Sequence[str], literal: float, url: str = "") -> None:
        """A fetched page: its candidate words and its P_lit against the topic alone."""
        item = (frozenset(words[: self.max_words]) - self.topic_words, literal)
        key = url_section(url) if self.grouping == "url" else None
        self.seen += 1
        if len(self.pages) < self.max_pages:
            self.pages.append(item)
            self.keys.append(key)
        else:  # Vitter's reservoir, as the page model's
            j = self._rng.randrange(self.seen)
            if j < self.max_pages:
                self.pages[j], self.keys[j] = item, key

    def url_groups(self) -> list[int]:
        """The group of every kept page by its URL section (-1: none)."""
        index: dict[str, int] = {}
        out = [-1 if k is None else index.setdefault(k, len(index)) for k in self.keys]
        self.group_hosts = [k.split("/", 1)[0] for k in index]
        return out

    def cluster(self) -> list[int]:
        """The group of every kept page (k-means on l2-normalised tf-idf)."""
        from sklearn.cluster import KMeans
        from sklearn.feature_extraction.text import TfidfVectorizer

        n = len(self.pages)
        k = min(self.max_groups, max(2, n // self.pages_per_group))
        docs = [sorted(w) for w, _ in self.pages]
        x = TfidfVectorizer(analyzer=lambda d: d, min_df=2).fit_transform(docs)
        if x.shape[1] == 0:
            return [0] * n
        km = KMeans(n_clusters=min(k, n), n_init=3, random_state=self.seed)
        return [int(g) for g in km.fit_predict(x)]

    def rebuild(self) -> list[dict[str, float]]:
        """Regroup the pages and recompute the contrast topics; their word weights (all 1),
        one dict a topic (empty: no contrast)."""
        self.groups, self.topics = [], []
        if len(self.pages) < self.min_total:
            return []
        labels = self.cluster() if self.grouping == "cluster" else self.url_groups()
        k = max(labels) + 1
        sizes, sums = [0] * k, [0.0] * k
        for g, (_, lit) in zip(labels, self.pages, strict=True):
            if g < 0:
                continue
            sizes[g] += 1
            sums[g] += lit
        self.groups = [(n, s / n if n else 0.0) for n, s in zip(sizes, sums, strict=True)]
        contrast = self.contrast_groups(self.groups)
        if not contrast:
            return []
        ref_df: Counter = Counter()
        ref_n = 0
        dfs: dict[int, Counter] = {g: Counter() for g in contrast}
        for g, (words, lit) in zip(labels, self.pages, strict=True):
            if g in dfs:
                dfs[g].update(words)
            elif g < 0 and self.grouping == "url":
                continue
            elif lit >= self.positive or self.reference == "all":
                ref_df.update(words)
                ref_n += 1
        for g in sorted(contrast):
            words = self.distinctive(dfs[g], sizes[g], ref_df, ref_n)
            if words:
                self.topics.append({w: 1.0 for w in words})
        return list(self.topics)

    def contrast_groups(self, groups: Sequence[tuple[int, float]]) -> set[int]:
        """The groups of at least ``min_pages`` pages whose mean P_lit is at most ``ratio`` ×
        the best such group's."""
        ev = {g: m for g, (n, m) in enumerate(groups) if n >= self.min_pages}
        best = max(ev.values(), default=0.0)
        if len(ev) < 2 or best <= 0.0:
            return set()
        low = {g for g, m in ev.items() if m <= self.ratio * best}
        if self.grouping != "url":
            return low
        # a host needs two sections or more: one group alone is the host's template, not a
        # section (its words are on every page of the host, the topic's pages too)
        hosts = Counter(self.group_hosts[g] for g in ev)
        return {g for g in low if hosts[self.group_hosts[g]] >= 2}

    def distinctive(self, df: Mapping[str, int], n: int, ref_df: Mapping[str, int],
                    ref_n: int) -> list[str]:  # fmt: skip
        """The ``top`` words of a group's pages (``df`` of ``n`` pages) most over-represented
        against the reference pages, by the z-score of the log-odds ratio with a Dirichlet
        prior (Monroe et al. 2008); in at least ``min_df`` of the pages, z ≥ ``min_z``."""
        a = self.prior
        floor = max(2, math.ceil(self.min_df * n))
        scored = []
        for w, c in df.items():
            if c < floor or w in self.topic_words:
                continue
            r = min(ref_df.get(w, 0), ref_n)
            delta = math.log((c + a) / (n - c + a)) - math.log((r + a) / (ref_n - r + a))
            var = 1 / (c + a) + 1 / (n - c + a) + 1 / (r + a) + 1 / (ref_n - r + a)
            z = delta / math.sqrt(var)
            if z >= self.min_z:
                scored.append((z, w))
        scored.sort(key=lambda x: (-x[0], x[1]))
        return [w for _, w in scored[: self.top]]

    # -- state ------------------------------------------------------------------------------
    def to_state(self) -> dict[str, Any]:
        """The groups and contrast topics of the last rebuild (not the pages)."""
        return {"kind": self.kind, "ratio": self.ratio, "seen": self.seen,
                "groups": [[n, round(m, 4)] for n, m in self.groups],
                "topics": [sorted(t) for t in self.topics]}  # fmt: skip

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> LearnedContrast:
        model = cls((), ratio=float(state["ratio"]))
        model.seen = int(state.get("seen", 0))
        model.groups = [(int(n), float(m)) for n, m in state.get("groups", [])]
        model.topics = [{str(w): 1.0 for w in ws} for ws in state["topics"]]
        return model
