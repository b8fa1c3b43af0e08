"""Baseline link scorers for the harvest-rate benchmark (``bench/harvest.py``).

Both plug into the ``topic`` spider through ``TOPICRAWL_LINK_SCORER`` (a dotted class path
with ``from_topic(topic)``), so the baselines run through exactly the same spider, dedup
and storage as topicrawl; only the frontier order differs.

* breadth-first: :class:`BreadthFirstLinkScorer` — every link followed with the same score;
  with ``DEPTH_PRIORITY=1`` and FIFO queues (:data:`BREADTH_FIRST_SETTINGS`) Scrapy fetches
  in breadth-first order (Scrapy's documented BFO recipe).
* best-first keyword: :class:`relevance.linkscore.KeywordLinkScorer` (priority = topic words
  in the anchor text), the classic baseline of the focused-crawling literature
  (Cho, Garcia-Molina & Page 1998; Menczer et al. 2004).

Neither baseline has a semantic page relevance: both accept a page by the keyword measure of
:class:`KeywordLinkScorer` (topic words in the page text), so their corpus figures are only
informative; the benchmark compares them on harvest rate and target recall.
"""

from __future__ import annotations

from typing import Any

from relevance.linkscore import KeywordLinkScorer, Link, LinkScore, PageInfo

#: Scrapy settings that turn the priority frontier into a breadth-first (FIFO by depth) one.
BREADTH_FIRST_SETTINGS: dict[str, object] = {
    "TOPICRAWL_LINK_SCORER": "bench.baselines.BreadthFirstLinkScorer",
    "DEPTH_PRIORITY": 1,
    "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleFifoDiskQueue",
    "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
}

#: Scrapy settings of the best-first keyword baseline (topicrawl's frontier, keyword scores).
KEYWORD_SETTINGS: dict[str, object] = {
    "TOPICRAWL_LINK_SCORER": "relevance.linkscore.KeywordLinkScorer",
}


class BreadthFirstLinkScorer:
    """No relevance in the frontier: every link is followed with one constant score."""

    SCORE = 0.5

    def __init__(self, page_scorer: KeywordLinkScorer):
        self.page_scorer = page_scorer

    @classmethod
    def from_topic(cls, topic: Any) -> BreadthFirstLinkScorer:
        return cls(KeywordLinkScorer.from_topic(topic))

    def score_links(self, page: PageInfo, links: list[Link]) -> list[LinkScore]:
        return [LinkScore(self.SCORE, True, {"method": "breadth-first"}) for _ in links]

    def page_relevance(self, page: PageInfo) -> float:
        """Keyword page relevance (only decides what the baseline stores as accepted)."""
        return self.page_scorer.page_relevance(page)

    def observe_accepted(self, url: str) -> None:
        return None


class OracleLinkScorer:
    """The ceiling: best-first on the ground truth of the local test web (not a crawler).

    A link scores 1.0 when its target is an on-topic article, 0.8 when it is a list page of
    the topic's section, 0.1 otherwise (still followed); a page's relevance is 1.0 when it
    is an on-topic article. Reads ``$TOPICRAWL_BENCH_TRUTH`` (ground_truth.json) and
    ``$TOPICRAWL_BENCH_CATEGORY``; shows what harvest rate the web allows within the budget.
    """

    def __init__(self, pages: dict[str, dict[str, Any]], category: str):
        self.pages = pages
        self.category = category

    @classmethod
    def from_topic(cls, topic: Any) -> OracleLinkScorer:
        import json
        import os

        from topicrawl.errors import ConfigError

        path = os.environ.get("TOPICRAWL_BENCH_TRUTH")
        category = os.environ.get("TOPICRAWL_BENCH_CATEGORY")
        if not path or not category:
            raise ConfigError(
                "OracleLinkScorer needs $TOPICRAWL_BENCH_TRUTH and $TOPICRAWL_BENCH_CATEGORY"
            )
        with open(path, encoding="utf-8") as fh:
            return cls(json.load(fh)["pages"], category)

    def _value(self, url: str) -> float:
        page = self.pages.get(url)
        if page is None:
            return 0.1
        if page["kind"] == "article" and page["category"] == self.category:
            return 1.0
        if page["kind"] == "list" and page.get("section_category") == self.category:
            return 0.8
        return 0.1

    def score_links(self, page: PageInfo, links: list[Link]) -> list[LinkScore]:
        return [LinkScore(self._value(lk.url), True, {"method": "oracle"}) for lk in links]

    def page_relevance(self, page: PageInfo) -> float:
        return 1.0 if self._value(page.url) == 1.0 else 0.0

    def observe_accepted(self, url: str) -> None:
        return None


#: Scrapy settings of the oracle ceiling (needs the environment variables above).
ORACLE_SETTINGS: dict[str, object] = {"TOPICRAWL_LINK_SCORER": "bench.baselines.OracleLinkScorer"}
