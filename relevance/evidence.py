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

**Contrast topics** (``[learning] contrast``, off by default): the word lists of other topics
the crawl's pages may belong to instead (the sibling sections of a portal). Each gets the same
calibrated P_k; the topics are taken as mutually exclusive, so the page's (or anchor's)
probability is the one-of-K posterior with a "none" class of odds 1 (softmax over one-vs-rest
odds o = P / (1 − P)):

    P_lit = o_t / (1 + o_t + λ·Σ_k max(0, o_k − o_0))

o_0 the odds of a text with no topic word (σ(b0), σ(c0)), so a contrast topic with no evidence
changes nothing; a word of the topic itself never counts for a contrast topic; λ =
``contrast_weight``. This moves the sibling category's pages, which share the topic's
generic words but name their own more, from the confident positives to the negatives that
the page model learns from (docs/benchmarks/topics.md, "Contrast topics").
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
    #: (head, text) per contrast topic (empty: none)
    contrast: tuple[tuple[float, float], ...] = ()

    @property
    def density(self) -> float:
        return self.text / max(self.text_words, MIN_TEXT_WORDS)

    def features(self) -> tuple[float, float, float]:
        return (min(self.head, 3.0), _log1p(self.text), min(self.density * 100.0, 10.0))


def _log1p(x: float) -> float:
    import math

    return math.log1p(x)


def _odds(p: float) -> float:
    return p / max(1e-12, 1.0 - p)


class LiteralEvidence:
    """Topic-word evidence of texts and its calibrated probability (against ``contrast``
    topics' word lists when given, weighted by ``contrast_weight``)."""

    def __init__(
        self,
        topic_weights: Mapping[str, float],
        words: Callable[[str], Sequence[str]],
        *,
        page_coef: Sequence[float] = PAGE_COEF,
        anchor_coef: Sequence[float] = ANCHOR_COEF,
        contrast: Sequence[Mapping[str, float]] = (),
        contrast_weight: float = 0.5,
    ):
        top = max(topic_weights.values())
        self.weights = {w: v / top for w, v in topic_weights.items() if v > 0}
        self.words = words  # text -> candidate words (the scorer's memoised extractor)
        self.page_coef = tuple(page_coef)
        self.anchor_coef = tuple(anchor_coef)
        self.contrast_weight = contrast_weight
        self.contrast: dict[str, tuple[tuple[int, float], ...]] = {}
        self.n_contrast = 0
        self.set_contrast(contrast)

    def set_contrast(self, contrast: Sequence[Mapping[str, float]]) -> None:
        """Replace the contrast topics' word lists (the learned ones change as the crawl
        goes: :class:`relevance.learning.contrast.LearnedContrast`)."""
        # word -> ((contrast topic index, weight), ...), the topic's own words left out
        cmap: dict[str, list[tuple[int, float]]] = {}
        lists = [c for c in contrast if c and max(c.values()) > 0]
        for k, c in enumerate(lists):
            ctop = max(c.values())
            for w, v in c.items():
                if v > 0 and w not in self.weights:
                    cmap.setdefault(w, []).append((k, v / ctop))
        self.contrast = {w: tuple(v) for w, v in cmap.items()}
        self.n_contrast = len(lists) if self.contrast else 0

    def count(self, words: Sequence[str]) -> float:
        """Σ w_t over the topic-word occurrences among ``words``."""
        wt = self.weights
        return sum(wt.get(w, 0.0) for w in words)

    def contrast_counts(self, words: Sequence[str]) -> list[float]:
        """Σ w over each contrast topic's word occurrences among ``words``."""
        out = [0.0] * self.n_contrast
        cm = self.contrast
        for w in words:
            hits = cm.get(w)
            if hits:
                for k, v in hits:
                    out[k] += v
        return out

    def page(self, head_words: Sequence[str], text_words: Sequence[str]) -> PageEvidence:
        if not self.n_contrast:
            return PageEvidence(self.count(head_words), self.count(text_words), len(text_words))
        pairs = tuple(zip(self.contrast_counts(head_words), self.contrast_counts(text_words),
                          strict=True))  # fmt: skip
        return PageEvidence(self.count(head_words), self.count(text_words), len(text_words),
                            pairs)  # fmt: skip

    def _page_logit(self, head: float, text: float, text_words: int) -> float:
        b0, b1, b2, b3 = self.page_coef
        h, t, d = PageEvidence(head, text, text_words).features()
        return b0 + b1 * h + b2 * t + b3 * d

    def page_probability(self, ev: PageEvidence, *, contrast: bool = True) -> float:
        """P_lit of a page; against the topic alone with ``contrast=False``."""
        p = sigmoid(self._page_logit(ev.head, ev.text, ev.text_words))
        if not contrast or not ev.contrast or not self.n_contrast:
            return p
        base = _odds(sigmoid(self.page_coef[0]))
        rivals = sum(max(0.0, _odds(sigmoid(self._page_logit(h, t, ev.text_words))) - base)
                     for h, t in ev.contrast if h or t)  # fmt: skip  (no evidence: o_k = o_0)
        return self._exclusive(p, rivals)

    def _exclusive(self, p: float, rivals: float) -> float:
        """The one-of-K posterior of the topic (module docstring)."""
        if rivals <= 0.0:
            return p
        o = _odds(p)
        return o / (1.0 + o + self.contrast_weight * rivals)

    def anchor_probability(self, anchor_words: Sequence[str]) -> float:
        c0, c1 = self.anchor_coef
        p = sigmoid(c0 + c1 * min(self.count(anchor_words), 2.0))
        if not self.n_contrast:
            return p
        base = _odds(sigmoid(c0))
        rivals = sum(max(0.0, _odds(sigmoid(c0 + c1 * min(n, 2.0))) - base)
                     for n in self.contrast_counts(anchor_words) if n)  # fmt: skip
        return self._exclusive(p, rivals)
