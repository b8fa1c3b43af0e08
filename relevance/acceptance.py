"""Calibrated acceptance: the page decision on the probability that a page is on-topic.

In calibrated mode P(page) = combine(P_lit, P_model) (:mod:`relevance.combine`) is a mix of
two probabilities, not itself the probability that the page is on-topic. On the crawls of the
development webs of template family b it is under-confident in the middle of the scale: of
the fetched pages with P(page) in [0.4, 0.5), 0.61 were on-topic (seeds 1–4, the ten
words-only topics, 40 crawls; docs/benchmarks/topics.md, *Calibrated acceptance*), so the
decision P(page) ≥ 0.5 rejected pages that were mostly on-topic. On family a it is not (0.34
on-topic there): the calibration depends on the web, and the map is fitted on family b's.

``[learning] calibrate_accept`` maps P(page) through an isotonic calibration map (Zadrozny &
Elkan, "Transforming classifier scores into accurate multiclass probability estimates", KDD
2002: isotonic regression of the outcome on the score, by pool-adjacent-violators) fitted once
on the fetched pages of development crawls against their ground truth, and the page is
accepted when the calibrated probability is at least ``[page] threshold`` — so the threshold
means "the share of such pages that are on-topic", the same for every topic. The map is a
fixed table of knots (P(page) = 0, 0.05, …, 1), linearly interpolated: no per-topic or
per-crawl constant. Only the acceptance changes: the page's relevance that labels the link
that led to it and that scores its links stays P(page), so the crawl fetches the same pages.

The knots were fitted for the default rule (``combine = "mean"``, ``weight = 0.5``) with the
default ``[learning]`` settings (``python bench/topics.py calibrate --crawls "b:1,2,3,4"``);
with another rule they still map monotonically but are not fitted for it.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence

#: P(page) at the knots of the map
KNOTS_P: tuple[float, ...] = tuple(i / 20 for i in range(21))
#: the calibrated probability at each knot: isotonic regression of "on-topic" on P(page) over
#: the fetched pages of 40 development crawls, family b seeds 1–4 (``python bench/topics.py
#: calibrate --crawls "b:1,2,3,4"``); the cut at 0.5 is P(page) = 0.385
KNOTS_ON: tuple[float, ...] = (
    0.0, 0.006, 0.026, 0.078, 0.123, 0.209, 0.348, 0.401, 0.542, 0.644, 0.667,
    0.727, 0.727, 0.736, 0.8, 0.819, 0.846, 0.865, 0.919, 0.956, 1.0,
)  # fmt: skip


class AcceptanceMap:
    """A monotone piecewise-linear map from P(page) to P(on-topic) (the calibration map)."""

    def __init__(self, knots_p: Sequence[float] = KNOTS_P, knots_on: Sequence[float] = KNOTS_ON):
        if len(knots_p) != len(knots_on) or len(knots_p) < 2:
            raise ValueError("the map needs as many calibrated values as knots, at least 2")
        if any(b <= a for a, b in zip(knots_p, knots_p[1:], strict=False)):
            raise ValueError("knots must increase")
        if any(b < a for a, b in zip(knots_on, knots_on[1:], strict=False)):
            raise ValueError("a calibration map must not decrease")
        if not all(0.0 <= v <= 1.0 for v in (*knots_p, *knots_on)):
            raise ValueError("knots and calibrated values are probabilities")
        self.xs, self.ys = tuple(knots_p), tuple(knots_on)

    def __call__(self, p: float) -> float:
        """The calibrated probability of P(page) ``p`` (clipped to the knots' range)."""
        xs, ys = self.xs, self.ys
        if p <= xs[0]:
            return ys[0]
        if p >= xs[-1]:
            return ys[-1]
        i = bisect_left(xs, p)
        x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
        return y0 + (y1 - y0) * (p - x0) / (x1 - x0)

    def cut(self, threshold: float) -> float:
        """The smallest P(page) whose calibrated probability reaches ``threshold`` (1.0 when
        none does): accepting at ``self(p) >= threshold`` is accepting at ``p >= cut``."""
        xs, ys = self.xs, self.ys
        if ys[0] >= threshold:
            return xs[0]
        for i in range(1, len(xs)):
            if ys[i] >= threshold:
                y0, y1 = ys[i - 1], ys[i]
                return xs[i - 1] + (xs[i] - xs[i - 1]) * (threshold - y0) / (y1 - y0)
        return float("inf")  # no P(page) reaches it
