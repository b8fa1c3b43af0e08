"""How calibrated mode combines literal evidence and the self-trained page model (issue 10).

A page's (or an anchor's) relevance in calibrated mode is one probability made of two: P_lit,
the calibrated literal topic-word evidence (:mod:`relevance.evidence`), and P_model, the
self-trained page model (:mod:`relevance.learning.selftrain`). ``[learning] combine`` names
the rule; every rule returns a probability, so ``[page] threshold`` keeps its meaning:

* ``"mean"``: (1 − w)·P_lit + w·P_model, w = ``[learning] weight`` (0.5: the mean).
* ``"noisy-or"``: 1 − (1 − P_lit)(1 − P_model): either source alone can accept a page.
* ``"max"``: max(P_lit, P_model).
* ``"logpool"``: σ((1 − w)·logit P_lit + w·logit P_model), the weighted logarithmic opinion
  pool (Genest & Zidek 1986): the weighted geometric mean of the two odds, so two calibrated
  sources that agree keep their probability, whatever the class prior.

A stacked logistic regression over (logit P_lit, logit P_model) was tried and not kept
(``python bench/topics.py combine``, docs/benchmarks/topics.md): its intercept follows the
share of on-topic pages of the pages it is fitted on (+1.6 on a 1 : 1 sample, −0.8 on a
whole web), which a crawl does not know; the log pool is its intercept-free form.

Before the model's first training, and for a text with no word the model knows, every rule
gives P_lit.
"""

from __future__ import annotations

from collections.abc import Callable

from relevance.learning.base import logit, sigmoid

#: logits are clipped to ±LOGIT_CLIP (P in [0.0025, 0.9975]): one over-confident source
#: cannot decide alone
LOGIT_CLIP = 6.0

RULES = ("mean", "noisy-or", "max", "logpool")


def clipped_logit(p: float) -> float:
    """logit(p) clipped to ±:data:`LOGIT_CLIP`."""
    return max(-LOGIT_CLIP, min(LOGIT_CLIP, logit(p)))


def combine(
    lit: float,
    model: float | None,
    rule: str = "mean",
    *,
    weight: float = 0.5,
) -> float:
    """P(relevant) from P_lit and P_model (None: no model yet, P_lit alone) by ``rule``."""
    if model is None:
        return lit
    if rule == "mean":
        return (1.0 - weight) * lit + weight * model
    if rule == "noisy-or":
        return 1.0 - (1.0 - lit) * (1.0 - model)
    if rule == "max":
        return max(lit, model)
    if rule == "logpool":
        return sigmoid((1.0 - weight) * clipped_logit(lit) + weight * clipped_logit(model))
    raise ValueError(f"combine rule must be one of {', '.join(RULES)}, not {rule!r}")


def combiner(rule: str = "mean", *, weight: float = 0.5) -> Callable[[float, float | None], float]:
    """:func:`combine` with its rule and parameters bound (checked once, here)."""
    if rule not in RULES:
        raise ValueError(f"combine rule must be one of {', '.join(RULES)}, not {rule!r}")

    def mix(lit: float, model: float | None) -> float:
        return combine(lit, model, rule, weight=weight)

    return mix
