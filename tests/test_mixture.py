"""The crawl's own score mixture (relevance.learning.mixture, ``[learning] accept_mixture``)."""

from __future__ import annotations

import math
import random

import pytest

from relevance.calibrated import CalibratedLinkScorer
from relevance.learning.mixture import ScoreMixture
from relevance.linkscore import PageInfo
from relevance.topic import parse_topic
from topicrawl.errors import TopicFileError

TOPIC = 'name = "体育"\n[words]\n"比赛" = 1.0\n"球队" = 1.0\n"球员" = 1.0\n'


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def _crawl_scores(rng: random.Random, n: int = 300) -> list[float]:
    """A crawl's P(page): list pages near 0.02, off-topic articles near 0.1, on-topic
    articles near 0.85 with a tail down to 0.3 (family b's shape)."""
    out = []
    for _ in range(n):
        u = rng.random()
        centre = -4.0 if u < 0.2 else (-2.2 if u < 0.6 else 1.7)
        out.append(_sigmoid(rng.gauss(centre, 0.5 if u < 0.6 else 1.0)))
    return out


def test_mixture_accepts_the_on_topic_tail_below_the_threshold():
    m = ScoreMixture(3)
    for p in _crawl_scores(random.Random(1)):
        m.observe(p)
    assert m.ready and m.fits > 1 and m.top_centre() > 0.5
    assert m.acceptance(0.40, 0.5) >= 0.5  # the on-topic component's tail
    assert m.acceptance(0.10, 0.5) == 0.10  # the off-topic articles' centre
    assert m.acceptance(0.02, 0.5) == 0.02  # list pages
    assert m.acceptance(0.7, 0.5) == 0.7  # above the threshold: P(page) itself
    cut = m.cut(0.5)
    assert 0.1 < cut < 0.5
    assert all(m.acceptance(p, 0.5) >= 0.5 for p in (cut, (cut + 0.5) / 2, 0.499))
    assert m.acceptance(cut - 0.01, 0.5) < 0.5


def test_mixture_posterior_cut_accepts_less_and_records_under_the_threshold():
    plain, strict = ScoreMixture(3), ScoreMixture(3, cut=0.7)
    for p in _crawl_scores(random.Random(1)):
        plain.observe(p)
        strict.observe(p)
    assert strict.cut(0.5) >= plain.cut(0.5)
    for p in (0.1, 0.2, 0.3, 0.35, 0.4, 0.45, 0.49):
        post = strict.posterior(p)
        assert (strict.acceptance(p, 0.5) >= 0.5) == (post is not None and post >= 0.7)
        if strict.acceptance(p, 0.5) >= 0.5:
            assert plain.acceptance(p, 0.5) >= 0.5
    c = strict.cut(0.5)
    assert strict.acceptance(c, 0.5) >= 0.5 and strict.acceptance(c - 0.01, 0.5) < 0.5


def test_mixture_accepts_nothing_more_before_its_first_fit_or_without_an_on_topic_component():
    m = ScoreMixture(3)
    for p in (0.4, 0.1) * 10:
        m.observe(p)
    assert not m.ready and m.acceptance(0.4, 0.5) == 0.4 and m.cut(0.5) == 0.5
    rng = random.Random(2)
    off = ScoreMixture(3)  # every page off-topic: no component centred at or above 0.5
    for _ in range(200):
        off.observe(_sigmoid(rng.gauss(-2.5, 0.8)))
    assert off.ready and off.top_centre() < 0.5
    assert off.acceptance(0.45, 0.5) == 0.45 and off.cut(0.5) == 0.5


def test_topic_key_is_off_by_default_and_validated():
    assert parse_topic(TOPIC).learning.accept_mixture == 0
    assert parse_topic(TOPIC + "[learning]\naccept_mixture = 3\n").learning.accept_mixture == 3
    lc = parse_topic(TOPIC + "[learning]\naccept_mixture = 3\naccept_mixture_cut = 0.7\n").learning
    assert lc.accept_mixture_cut == 0.7
    for bad in ("1", "9", '"3"'):
        with pytest.raises(TopicFileError, match="accept_mixture"):
            parse_topic(TOPIC + f"[learning]\naccept_mixture = {bad}\n")


def test_scorer_accepts_on_the_mixture_and_keeps_relevance():
    scorer = CalibratedLinkScorer.from_topic(
        parse_topic(TOPIC + "[learning]\naccept_mixture = 3\n")
    )
    plain = CalibratedLinkScorer.from_topic(parse_topic(TOPIC))
    page = PageInfo(url="http://a.cn/1", title="比赛", text="新闻 " * 30)
    p, parts = scorer.page_relevance_parts(page)
    assert p == pytest.approx(plain.page_relevance(page))  # links see the same P(page)
    assert parts["accept"] == pytest.approx(p)  # nothing fitted yet
    assert scorer.accept_mixture is not None
    for i, q in enumerate(_crawl_scores(random.Random(3))):
        scorer.observe_page(PageInfo(url=f"http://a.cn/{i}", text="新闻"), q, None)
    seed = PageInfo(url="http://a.cn/", text="新闻", is_seed=True)
    seen = scorer.accept_mixture.seen
    scorer.observe_page(seed, 0.01, None)  # a seed page is not one of the crawl's scores
    assert scorer.accept_mixture.seen == seen
    assert scorer.acceptance(0.4) >= 0.5 > scorer.acceptance(0.1)
    assert scorer.accept_cut(0.5) == pytest.approx(scorer.accept_mixture.cut(0.5))
    assert "accept" not in plain.page_relevance_parts(page)[1]
