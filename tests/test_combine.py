"""The rules that combine literal evidence and the self-trained page model (relevance.combine)."""

from __future__ import annotations

import math

import pytest

from relevance.calibrated import CalibratedLinkScorer
from relevance.combine import RULES, combine, combiner
from relevance.evidence import LiteralEvidence
from relevance.learning.selftrain import SelfTrainingPageModel
from relevance.topic import parse_topic
from topicrawl.errors import TopicFileError


@pytest.mark.parametrize("rule", RULES)
def test_every_rule_is_a_probability_and_needs_a_model(rule):
    for lit in (0.0, 0.05, 0.5, 0.93, 1.0):
        assert combine(lit, None, rule) == lit  # no model yet: the literal evidence alone
        for model in (0.0, 0.2, 0.5, 0.8, 1.0):
            p = combine(lit, model, rule)
            assert 0.0 <= p <= 1.0
    # more evidence from either source never lowers the probability
    assert combine(0.2, 0.6, rule) <= combine(0.4, 0.6, rule) <= combine(0.4, 0.9, rule)


def test_rules_on_a_page_with_names_but_no_topic_words():
    # P_lit 0.1 (no literal evidence), P_model 0.8: the case of 娱乐's pages on family b
    assert combine(0.1, 0.8, "mean") == pytest.approx(0.45)  # lost at 0.5
    assert combine(0.1, 0.8, "mean", weight=0.7) == pytest.approx(0.59)
    assert combine(0.1, 0.8, "noisy-or") == pytest.approx(0.82)
    assert combine(0.1, 0.8, "max") == 0.8
    z = 0.25 * math.log(0.1 / 0.9) + 0.75 * math.log(0.8 / 0.2)
    assert combine(0.1, 0.8, "logpool", weight=0.75) == pytest.approx(1 / (1 + math.exp(-z)))


def test_logpool_keeps_agreeing_sources_and_clips_certainty():
    for p in (0.1, 0.5, 0.9):
        assert combine(p, p, "logpool", weight=0.3) == pytest.approx(p)
    # one source at exactly 0 or 1 does not decide alone
    assert 0.0 < combine(0.0, 0.99, "logpool") < combine(0.5, 0.99, "logpool") < 1.0


def test_unknown_rule_is_refused():
    with pytest.raises(ValueError, match="combine rule"):
        combiner("geometric")
    with pytest.raises(ValueError, match="combine rule"):
        combine(0.5, 0.5, "geometric")


def test_topic_file_selects_the_rule():
    t = parse_topic('name = "体育"\n[words]\n"比赛" = 1.0\n')
    assert (t.learning.combine, t.learning.weight) == ("mean", 0.5)
    t = parse_topic('name = "x"\n[words]\n"a" = 1\n[learning]\ncombine = "noisy-or"\n')
    assert t.learning.combine == "noisy-or"
    with pytest.raises(TopicFileError, match="combine"):
        parse_topic('name = "x"\n[words]\n"a" = 1\n[learning]\ncombine = "magic"\n')


def test_scorer_mixes_page_relevance_by_the_rule():
    sport = ["比赛", "球队", "球员"]
    model = SelfTrainingPageModel()
    model.terms = {"明星": (1.0, 3.0)}  # a model that knows one word, strongly on-topic
    ev = LiteralEvidence({w: 1.0 for w in sport}, str.split)
    page = ["明星"]  # no topic word: P_lit is low, P_model high
    lit = ev.page_probability(ev.page(page, page))
    p_model = model.probability_words([page])[0]
    assert lit < 0.1 < 0.9 < p_model
    for rule in RULES:
        s = CalibratedLinkScorer(str.split, ev, page_model=model, combine=rule, model_weight=0.7)
        assert s._mix(lit, p_model) == pytest.approx(combine(lit, p_model, rule, weight=0.7))
    with pytest.raises(ValueError, match="combine rule"):
        CalibratedLinkScorer(str.split, ev, page_model=model, combine="magic")
