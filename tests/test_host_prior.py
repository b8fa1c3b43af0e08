"""The host-level prior of the page decision (relevance.hostprior) and its use in the spider."""

from __future__ import annotations

import math

import pytest
from scrapy.http import HtmlResponse, Request
from scrapy.utils.test import get_crawler

from crawler.spiders.topic import TopicSpider
from relevance.hostprior import (
    HostPrior,
    log_odds_shift,
    posterior_rate,
    shifted_threshold,
)
from relevance.topic import parse_topic
from topicrawl.errors import TopicFileError


def test_posterior_rate_is_the_beta_binomial_mean():
    # Beta(10·0.5, 10·0.5) prior, 18 of 20 accepted: (18 + 5) / (20 + 10)
    assert posterior_rate(18, 20, 0.5, 10.0) == pytest.approx(23 / 30)
    assert posterior_rate(0, 0, 0.3, 10.0) == pytest.approx(0.3)  # no data: the prior mean
    assert posterior_rate(7, 7, 0.5, 0.0) == 1.0  # no shrinkage


def test_log_odds_shift_is_one_sided_and_bounded():
    assert log_odds_shift(0.75, 0.5, max_shift=5.0) == pytest.approx(math.log(3))
    assert log_odds_shift(0.9, 0.5, max_shift=2.0) == 2.0  # ln 9 = 2.197, capped
    assert log_odds_shift(0.5, 0.5, max_shift=2.0) == 0.0
    assert log_odds_shift(0.15, 0.5, max_shift=2.0) == 0.0  # a portal: never raised
    assert log_odds_shift(1.0, 0.5, max_shift=30.0) == pytest.approx(math.log(1e9), rel=1e-3)


def test_shifted_threshold_on_both_scales():
    # power: page odds ∝ s^k, so t' = t·exp(−Δ/k)
    assert shifted_threshold(0.15, 2.0, scale="power", elasticity=2.0) == pytest.approx(
        0.15 / math.e
    )
    # probability: logit(t') = logit(t) − Δ; 0.5 with Δ = ln 3 -> 0.25
    assert shifted_threshold(0.5, math.log(3), scale="probability") == pytest.approx(0.25)
    assert shifted_threshold(0.15, 0.0) == 0.15
    with pytest.raises(ValueError, match="scale"):
        shifted_threshold(0.15, 1.0, scale="linear")


def test_prior_waits_for_min_pages_then_follows_the_posterior():
    prior = HostPrior(reference=0.5, strength=10, min_pages=10, elasticity=2.0, max_shift=2.0)
    for _ in range(9):
        prior.observe("site.cn", True)
    assert prior.rate("site.cn") is None and prior.threshold("site.cn", 0.15) == 0.15
    prior.observe("site.cn", True)
    rate = (10 + 5) / (10 + 10)
    assert prior.rate("site.cn") == pytest.approx(rate)
    shift = math.log(rate / (1 - rate))  # logit(0.75) − logit(0.5)
    assert prior.threshold("site.cn", 0.15) == pytest.approx(0.15 * math.exp(-shift / 2.0))


def test_borderline_page_accepted_on_a_single_topic_host_only():
    """The rate alone (no section gate)."""
    prior = HostPrior(reference=0.5, strength=10, min_pages=10, elasticity=2.0, max_shift=2.0)
    for i in range(30):  # a single-topic site, a mixed portal, an off-topic site
        prior.judge("site.cn", 0.4, 0.15)
        prior.judge("portal.cn", 0.4 if i % 6 == 0 else 0.02, 0.15)
        prior.judge("sport.cn", 0.02, 0.15)
    assert prior.judge("site.cn", 0.11, 0.15)[0]
    assert not prior.judge("portal.cn", 0.11, 0.15)[0]
    assert not prior.judge("sport.cn", 0.11, 0.15)[0]
    assert prior.threshold("portal.cn", 0.15) == prior.threshold("sport.cn", 0.15) == 0.15


def test_pages_accepted_by_the_prior_do_not_feed_it():
    """A host of borderline pages only: the counts are the plain decision's, so the prior
    never acts on it however many such pages it judges."""
    prior = HostPrior(reference=0.5, strength=0, min_pages=1, elasticity=1.0, max_shift=5.0)
    prior.observe("h.cn", True)  # one plain acceptance: rate 1, the largest shift
    accepted, threshold = prior.judge("h.cn", 0.05, 0.15)
    assert accepted and threshold < 0.05
    for _ in range(50):
        prior.judge("h.cn", 0.05, 0.15)
    assert prior.counts["h.cn"][:2] == [1, 52]
    assert not prior.judge("h.cn", 0.05, 0.15)[0]


def test_memory_is_bounded_by_max_hosts():
    prior = HostPrior(min_pages=1, max_hosts=2)
    prior.observe("a.cn", True)
    prior.observe("b.cn", True)
    prior.observe("a.cn", True)  # a.cn judged most recently
    prior.observe("c.cn", True)
    assert list(prior.counts) == ["a.cn", "c.cn"]


TOPIC = 'name = "t"\n[words]\n"政治" = 1.0\n[priority]\nmode = "paper"\n[page]\nthreshold = 0.15\n'


def test_topic_file_keys():
    t = parse_topic(TOPIC)
    assert not t.page_host_prior.enabled
    t = parse_topic(TOPIC + "host_prior = true\nhost_prior_elasticity = 1.5\n"
                    "host_prior_min_pages = 20\n")  # fmt: skip
    hp = t.page_host_prior
    assert hp.enabled and hp.elasticity == 1.5 and hp.min_pages == 20 and hp.reference == 0.5
    with pytest.raises(TopicFileError, match="host_prior_reference"):
        parse_topic(TOPIC + "host_prior_reference = 1.5\n")
    with pytest.raises(TopicFileError, match="host_prior"):
        parse_topic(TOPIC + 'host_prior = "yes"\n')


class FixedScorer:
    """Page relevance by URL (the spider's scorer interface, no links followed)."""

    def __init__(self, scores: dict[str, float]):
        self.scores = scores

    def page_relevance_parts(self, page):
        return self.scores[page.url], {"info": self.scores[page.url]}

    def score_links(self, page, links):
        return []

    def observe_accepted(self, url: str) -> None:
        return None


def crawl_pages(tmp_path, prior: bool, pages: list[tuple[str, float]]) -> tuple[dict, dict]:
    """Run pages through the spider's parse_page: {url: (accepted, relevance_parts)}, stats."""
    topic = tmp_path / "t.toml"
    topic.write_text(TOPIC + ("host_prior = true\n" if prior else ""), encoding="utf-8")
    crawler = get_crawler(TopicSpider)
    crawler.stats.open_spider()
    spider = TopicSpider(seeds="http://site.cn/", topic=str(topic))
    spider.crawler = crawler
    spider.scorer = FixedScorer(dict(pages))
    out = {}
    for url, _ in pages:
        body = "<html><head><title>t</title></head><body><p>正文</p></body></html>".encode()
        response = HtmlResponse(url, body=body, encoding="utf-8",
                                request=Request(url, meta={"depth": 1}))  # fmt: skip
        for item in spider.parse_page(response):
            if hasattr(item, "get") and "accepted" in item:
                out[url] = (item["accepted"], item["relevance_parts"])
    return out, crawler.stats.get_stats()


SECTIONS = ("yaowen", "guonei", "guoji", "pinglun")


def site_url(i: int) -> str:
    """An article of a single-topic site that files its articles in four sections."""
    return f"http://site.cn/{SECTIONS[i % 4]}/2019{i % 12 + 1:02d}/t2019{i:04d}_{i * 7919}.htm"


@pytest.mark.parametrize("prior", [False, True])
def test_spider_accepts_a_borderline_page_of_a_single_topic_host(tmp_path, prior):
    pages = [(site_url(i), 0.4) for i in range(20)]
    # a portal as a focused crawl meets it: its politics section first, nearly all accepted
    pages += [(f"http://portal.cn/politics/2019/01/{i:02d}/{i * 7919}.html",
               0.4 if i < 18 else 0.03) for i in range(20)]  # fmt: skip
    pages += [("http://portal.cn/sports/2019/01/05/88.html", 0.1),
              (site_url(99), 0.1)]  # fmt: skip
    out, stats = crawl_pages(tmp_path, prior, pages)
    assert out[site_url(99)][0] is prior
    portal = out["http://portal.cn/sports/2019/01/05/88.html"]
    assert portal[0] is False and "host_threshold" not in portal[1]
    if prior:
        assert out[site_url(99)][1]["host_threshold"] < 0.1
        assert stats["topicrawl/pages/host_prior_accepted"] == 1
    else:
        assert "topicrawl/pages/host_prior_accepted" not in stats


def test_section_gate_closed_while_accepted_urls_share_one_section():
    """A portal's politics section (a majority structure) does not open the gate; a site's
    four sections do, once n/2 accepted URLs are sampled."""
    from relevance.hostprior import section_sample

    make = section_sample(parse_topic(TOPIC))
    prior = HostPrior(min_pages=10, sections=make)
    for i in range(30):
        prior.judge("portal.cn", 0.4, 0.15, f"http://portal.cn/politics/2019/01/{i:02d}/{i}.html")
    assert not prior.spans_sections("portal.cn") and prior.threshold("portal.cn", 0.15) == 0.15
    for i in range(9):
        prior.judge("site.cn", 0.4, 0.15, site_url(i))
    assert not prior.spans_sections("site.cn")  # 9 sampled < n/2 = 10
    prior.judge("site.cn", 0.4, 0.15, site_url(9))
    assert prior.spans_sections("site.cn") and prior.threshold("site.cn", 0.15) < 0.15
