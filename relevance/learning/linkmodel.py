"""Online link model: every fetched page labels the link that led to it.

ACHE's online learning of the link classifier, and the "apprentice" of Chakrabarti, Punera &
Subramanyam, "Accelerated Focused Crawling through Online Relevance Feedback" (WWW 2002):
the features of a link — its anchor words, the tokens of its URL, its host and section, the
relevance of the page that holds it — are labelled by the relevance of the page it leads to
once that page is fetched, and the link scores of the rest of the crawl learn from them, so
a section that keeps yielding off-topic pages sinks.

The model is an online logistic regression on top of a prior margin (the link's calibrated
score from the topic words and the page model, :mod:`relevance.calibrated`):

    P(relevant | link) = σ(logit(prior) + Σ_f w_f)        f: the link's sparse features

trained by stochastic gradient descent on the log loss with the fetched page's relevance as
a soft label, w_f ← w_f − η·(P − y) − η·ρ·w_f (L2). With no feature learned yet the score is
the prior. Scoring is a dictionary lookup per feature; the weights are a bounded dict (the
least-updated half is dropped when it overflows) and JSON state. In a scrapy-redis scale-out every worker
applies the outcomes of the others too (``crawler.sharedlearn.SharedLearningStream``; the
features travel with the request, so any worker can learn from any link).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar
from urllib.parse import urlsplit

from relevance.learning.base import LearnedModel, logit, sigmoid

_SPLIT = re.compile(r"[/\-_.~=&?+]+")
_DIGITS = re.compile(r"\d+")
#: file extensions say nothing about a section: not features
_EXTENSIONS = frozenset({"html", "htm", "shtml", "xhtml", "php", "asp", "aspx", "jsp", "cgi"})


def url_features(url: str) -> list[str]:
    """Sparse URL features: host, host + directory ("section"), and the path's word tokens
    (digits folded to 0, so /2024/05/ and /2023/11/ are one feature; file extensions
    dropped)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    path = parts.path or "/"
    directory = path.rsplit("/", 1)[0] or "/"
    feats = [f"h:{host}", f"s:{host}{_DIGITS.sub('0', directory)}"]
    for tok in _SPLIT.split(path.lower()):
        if tok and not tok.isdigit() and len(tok) <= 30 and tok not in _EXTENSIONS:
            feats.append(f"u:{_DIGITS.sub('0', tok)}")
    return feats


def link_features(url: str, anchor_words: Iterable[str], *, max_anchor: int = 20) -> list[str]:
    """The sparse features of a link: :func:`url_features` and its anchor words."""
    feats = url_features(url)
    feats += [f"a:{w}" for w in list(dict.fromkeys(anchor_words))[:max_anchor]]
    return feats


class OnlineLinkModel(LearnedModel):
    """Online logistic regression over sparse link features on top of a prior margin."""

    kind: ClassVar[str] = "online-link-model"

    def __init__(self, *, learning_rate: float = 0.3, l2: float = 1e-4, max_features: int = 200_000,
                 clip: float = 4.0):  # fmt: skip
        self.learning_rate, self.l2 = learning_rate, l2
        self.max_features, self.clip = max_features, clip
        self.weights: dict[str, float] = {}
        self.updates: dict[str, int] = {}
        self.observed = 0

    def margin(self, features: Sequence[str]) -> float:
        w = self.weights
        return sum(w.get(f, 0.0) for f in features)

    def probability(self, prior: float, features: Sequence[str]) -> float:
        """P(the link leads to a relevant page) = σ(logit(prior) + Σ w_f)."""
        return sigmoid(logit(prior) + self.margin(features))

    def observe(self, prior: float, features: Sequence[str], label: float) -> None:
        """One SGD step on the log loss: the link's page was fetched with relevance ``label``
        (a probability in [0, 1])."""
        if not features:
            return
        g = self.probability(prior, features) - label
        eta, rho, c = self.learning_rate, self.l2, self.clip
        w, n = self.weights, self.updates
        for f in set(features):
            v = w.get(f, 0.0)
            w[f] = max(-c, min(c, v - eta * (g + rho * v)))
            n[f] = n.get(f, 0) + 1
        self.observed += 1
        if len(w) > self.max_features:
            keep = sorted(n, key=n.__getitem__, reverse=True)[: self.max_features // 2]
            self.weights = {f: w[f] for f in keep}
            self.updates = {f: n[f] for f in keep}

    def top_features(self, n: int = 20) -> list[tuple[str, float]]:
        ranked = sorted(self.weights.items(), key=lambda kv: -abs(kv[1]))
        return [(f, round(v, 4)) for f, v in ranked[:n]]

    def to_state(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "learning_rate": self.learning_rate,
            "l2": self.l2,
            "observed": self.observed,
            "weights": {f: round(v, 5) for f, v in self.weights.items()},
        }

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> OnlineLinkModel:
        model = cls(learning_rate=float(state.get("learning_rate", 0.3)),
                    l2=float(state.get("l2", 1e-4)))  # fmt: skip
        weights = state["weights"]
        if not isinstance(weights, dict) or len(weights) > model.max_features:
            raise ValueError("weights: not a dict of at most max_features entries")
        model.weights = {str(f): float(v) for f, v in weights.items()}
        if not all(math.isfinite(v) for v in model.weights.values()):
            raise ValueError("a weight is not finite")
        model.updates = dict.fromkeys(model.weights, 1)
        model.observed = int(state.get("observed", 0))
        return model
