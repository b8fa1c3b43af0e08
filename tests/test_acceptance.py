"""Calibrated acceptance (relevance.acceptance, ``[learning] calibrate_accept``)."""

from __future__ import annotations

import pytest
from scrapy.http import HtmlResponse, Request
from scrapy.utils.test import get_crawler

from crawler.spiders.topic import TopicSpider
from relevance.acceptance import KNOTS_ON, KNOTS_P, AcceptanceMap
from relevance.calibrated import CalibratedLinkScorer
from relevance.linkscore import PageInfo
from relevance.topic import parse_topic
from topicrawl.errors import TopicFileError

TOPIC = 'name = "体育"\n[words]\n"比赛" = 1.0\n"球队" = 1.0\n"球员" = 1.0\n'


def test_map_interpolates_between_knots_and_clips():
    m = AcceptanceMap((0.0, 0.5, 1.0), (0.1, 0.3, 0.9))
    assert m(0.25) == pytest.approx(0.2)
    assert m(0.75) == pytest.approx(0.6)
    assert m(0.5) == pytest.approx(0.3)
    assert m(-1.0) == 0.1 and m(2.0) == 0.9


@pytest.mark.parametrize("threshold", [0.05, 0.3, 0.5, 0.7, 0.95])
def test_cut_is_where_the_map_reaches_the_threshold(threshold):
    m = AcceptanceMap()
    cut = m.cut(threshold)
    grid = [i / 1000 for i in range(1001)]
    accepted = [p for p in grid if m(p) >= threshold - 1e-12]
    assert accepted and min(accepted) == pytest.approx(cut, abs=1e-3)
    assert all(m(p) >= threshold - 1e-9 for p in grid if p >= cut)
    assert all(m(p) < threshold for p in grid if p < cut - 1e-9)


def test_cut_beyond_the_map_accepts_nothing_and_at_zero_everything():
    m = AcceptanceMap((0.0, 1.0), (0.2, 0.6))
    assert m.cut(0.9) == float("inf")
    assert m.cut(0.1) == 0.0


def test_shipped_map_is_a_monotone_probability_that_lowers_the_cut():
    m = AcceptanceMap()
    assert len(KNOTS_P) == len(KNOTS_ON)
    assert all(b >= a for a, b in zip(KNOTS_ON, KNOTS_ON[1:], strict=False))
    # the dev crawls' mid-scale pages were mostly on-topic: the plain 0.5 cut moves down
    assert 0.3 < m.cut(0.5) < 0.5


@pytest.mark.parametrize("knots_on,match", [((0.5, 0.4), "decrease"), ((0.1, 1.5), "prob"),
                                            ((0.1,), "as many")])  # fmt: skip
def test_bad_maps_are_refused(knots_on, match):
    with pytest.raises(ValueError, match=match):
        AcceptanceMap((0.0, 1.0), knots_on)


def test_topic_file_key():
    assert parse_topic(TOPIC).learning.calibrate_accept is False
    t = parse_topic(TOPIC + "[learning]\ncalibrate_accept = true\n")
    assert t.learning.calibrate_accept is True
    with pytest.raises(TopicFileError, match="calibrate_accept"):
        parse_topic(TOPIC + '[learning]\ncalibrate_accept = "yes"\n')


@pytest.mark.parametrize("on", [False, True])
def test_scorer_records_the_calibrated_acceptance_and_keeps_relevance(on):
    topic = parse_topic(TOPIC + f"[learning]\ncalibrate_accept = {str(on).lower()}\n")
    scorer = CalibratedLinkScorer.from_topic(topic)
    page = PageInfo(url="http://a.cn/1", title="比赛 球队", description="", keywords="",
                    text="球员 比赛 " * 20)  # fmt: skip
    p, parts = scorer.page_relevance_parts(page)
    plain = CalibratedLinkScorer.from_topic(parse_topic(TOPIC)).page_relevance(page)
    assert p == pytest.approx(plain)  # links and the link model see the same P(page)
    if on:
        assert parts["accept"] == pytest.approx(AcceptanceMap()(p))
        assert scorer.acceptance(0.45) == pytest.approx(AcceptanceMap()(0.45))
        assert scorer.accept_cut(0.5) == pytest.approx(AcceptanceMap().cut(0.5))
    else:
        assert "accept" not in parts
        assert scorer.acceptance(0.45) == 0.45 and scorer.accept_cut(0.5) == 0.5


class FixedScorer:
    """Page relevance and an acceptance probability by URL (the spider's scorer interface)."""

    def __init__(self, scores: dict[str, tuple[float, float | None]]):
        self.scores = scores

    def page_relevance_parts(self, page):
        p, accept = self.scores[page.url]
        return p, ({} if accept is None else {"accept": accept})

    def score_links(self, page, links):
        return []

    def observe_accepted(self, url: str) -> None:
        return None


def test_spider_accepts_on_the_calibrated_probability(tmp_path):
    topic = tmp_path / "t.toml"
    topic.write_text(TOPIC, encoding="utf-8")
    crawler = get_crawler(TopicSpider)
    crawler.stats.open_spider()
    spider = TopicSpider(seeds="http://site.cn/", topic=str(topic))
    spider.crawler = crawler
    pages = {"http://site.cn/a.html": (0.42, 0.55),  # below 0.5, calibrated above: accepted
             "http://site.cn/b.html": (0.55, 0.45),  # above 0.5, calibrated below: rejected
             "http://site.cn/c.html": (0.42, None)}  # no calibration: P(page) decides
    spider.scorer = FixedScorer(pages)
    out = {}
    for url in pages:
        body = "<html><head><title>t</title></head><body><p>正文</p></body></html>".encode()
        response = HtmlResponse(url, body=body, encoding="utf-8",
                                request=Request(url, meta={"depth": 1}))  # fmt: skip
        for item in spider.parse_page(response):
            if hasattr(item, "get") and "accepted" in item:
                out[url] = (item["accepted"], item["relevance"])
    assert out == {"http://site.cn/a.html": (True, 0.42), "http://site.cn/b.html": (False, 0.55),
                   "http://site.cn/c.html": (False, 0.42)}  # fmt: skip
