"""Literal topic-word evidence on a calibrated scale (topicrawl, issue 10).

A page or a link that names the topic's own words is the strongest evidence a words-only
topic has; loose word similarity (formula 3) must never outweigh it. :class:`LiteralEvidence`
counts the topic words (weighted, multi-word terms kept whole by the candidate extractor) in
the head of a page (title, meta description, keywords), in its main text and in a link's
anchor text, and turns the counts into probabilities with a logistic model

    P_lit(page)   = σ(b0 + b1·min(head, 3) + b2·ln(1 + text) + b3·min(density·100, 10))
    P_lit(anchor) = σ(c0 + c1·min(anchor, 2))

head / text / anchor = Σ w_t over the topic-word occurrences (weights scaled so the largest
is 1), density = text / max(candidate words of the text, 30). The coefficients are not fitted
per topic: they were chosen once by leave-one-category-out logistic regression over the
words-only topics of the ten cnews categories on template family "a" of the local test web
(``python bench/topics.py fit``; docs/benchmarks/topics.md), so that one threshold (0.5)
means the same for every topic.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from relevance.learning.base import sigmoid

#: P_lit(page) coefficients (b0, b1 head, b2 ln(1 + text), b3 density·100), chosen on family a
PAGE_COEF: tuple[float, float, float, float] = (-4.0, 1.2, 0.9, 0.5)
#: P_lit(anchor) coefficients (c0, c1 anchor), chosen on family a
ANCHOR_COEF: tuple[float, float] = (-2.5, 2.0)
MIN_TEXT_WORDS = 30


@dataclass(frozen=True)
class PageEvidence:
    """Topic-word counts of a page: weighted occurrences in the head and the text."""

    head: float
    text: float
    text_words: int

    @property
    def density(self) -> float:
        return self.text / max(self.text_words, MIN_TEXT_WORDS)

    def features(self) -> tuple[float, float, float]:
        return (min(self.head, 3.0), _log1p(self.text), min(self.density * 100.0, 10.0))


def _log1p(x: float) -> float:
    import math

    return math.log1p(x)


class LiteralEvidence:
    """Topic-word evidence of texts and its calibrated probability."""

    def __init__(
        self,
        topic_weights: Mapping[str, float],
        words: Callable[[str], Sequence[str]],
        *,
        page_coef: Sequence[float] = PAGE_COEF,
        anchor_coef: Sequence[float] = ANCHOR_COEF,
    ):
        top = max(topic_weights.values())
        self.weights = {w: v / top for w, v in topic_weights.items() if v > 0}
        self.words = words  # text -> candidate words (the scorer's memoised extractor)
        self.page_coef = tuple(page_coef)
        self.anchor_coef = tuple(anchor_coef)

    def count(self, words: Sequence[str]) -> float:
        """Σ w_t over the topic-word occurrences among ``words``."""
        wt = self.weights
        return sum(wt.get(w, 0.0) for w in words)

    def page(self, head_words: Sequence[str], text_words: Sequence[str]) -> PageEvidence:
        return PageEvidence(self.count(head_words), self.count(text_words), len(text_words))

    def page_probability(self, ev: PageEvidence) -> float:
        b0, b1, b2, b3 = self.page_coef
        h, t, d = ev.features()
        return sigmoid(b0 + b1 * h + b2 * t + b3 * d)

    def anchor_probability(self, anchor_words: Sequence[str]) -> float:
        c0, c1 = self.anchor_coef
        return sigmoid(c0 + c1 * min(self.count(anchor_words), 2.0))
