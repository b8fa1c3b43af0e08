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

Evidence gate (``gate`` = z > 0, ``[learning] link_gate``): a feature shared by on- and
off-topic outcomes alike — on a web whose article URLs name no section, the host and the
URL template (``h:``, ``s:host/``, ``u:article``) mean "an article of this site" — carries
nothing about the topic, yet SGD on a stream of such links lets it chase the last outcomes
and lift the next off-topic articles of the site. Each feature keeps its count n_f and the
sum of its outcomes, the model the crawl's base rate ȳ over all outcomes; the feature's
value x_f in the model is the confident share of its departure from the base rate,

    d_f = ȳ_f − ȳ,   se_f = sqrt(ȳ(1 − ȳ) / n_f),   x_f = max(0, |d_f| − z·se_f) / |d_f|

(the lower confidence bound of |d_f| under the binomial null "the feature's outcomes are the
crawl's", over |d_f|: 0 while the feature is indistinguishable from the base rate, → 1 as it
departs confidently), so P = σ(logit(prior) + Σ x_f w_f) and the SGD step on w_f is scaled by
x_f (the chain rule). A feature seen a few times, or a template feature whose outcome rate is
the crawl's, is silenced; a section whose outcomes stay off (or on) keeps its weight. Cost:
two counters per feature, O(features) per link. In a scale-out every worker applies every
outcome (the shared stream), so the counts, like the weights, are the same on every worker.
The gate applies to the URL features (``gate_scope = "url"``, the default) — the anchor
words name the target's content, and a rare word would never reach a confident count — or
to all (``"all"``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from itertools import repeat
from typing import Any, ClassVar
from urllib.parse import urlsplit

from relevance.learning.base import LearnedModel, logit, sigmoid

_SPLIT = re.compile(r"[/\-_.~=&?+]+")
_DIGITS = re.compile(r"\d+")
#: file extensions say nothing about a section: not features
#: the evidence gate's scopes, and the URL features' prefixes (host, section, URL token)
GATE_SCOPES = ("url", "all")
URL_PREFIXES = ("h:", "s:", "u:")
_EXTENSIONS = frozenset({"html", "htm", "shtml", "xhtml", "php", "asp", "aspx", "jsp", "cgi"})


def url_features(url: str) -> list[str]:
    """Sparse URL features: host, host + directory ("section"), and the path's word tokens
    (digits folded to 0, so /2024/05/ and /2023/11/ are one feature; file extensions
    dropped). A new list each call, from a memo of the last :data:`URL_MEMO` URLs (a site's
    menu links recur on every page: most links of a crawl are to URLs seen before)."""
    return list(_url_features(url))


#: URLs whose features :func:`url_features` remembers (a few hundred bytes each)
URL_MEMO = 8_192


@lru_cache(maxsize=URL_MEMO)
def _url_features(url: str) -> tuple[str, ...]:
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    path = parts.path or "/"
    directory = path.rsplit("/", 1)[0] or "/"
    feats = [f"h:{host}", f"s:{host}{_DIGITS.sub('0', directory)}"]
    for tok in _SPLIT.split(path.lower()):
        if tok and not tok.isdigit() and len(tok) <= 30 and tok not in _EXTENSIONS:
            feats.append(f"u:{_DIGITS.sub('0', tok)}")
    return tuple(feats)


def link_features(url: str, anchor_words: Iterable[str], *, max_anchor: int = 20) -> list[str]:
    """The sparse features of a link: :func:`url_features` and its anchor words."""
    feats = url_features(url)
    feats += [f"a:{w}" for w in list(dict.fromkeys(anchor_words))[:max_anchor]]
    return feats


class OnlineLinkModel(LearnedModel):
    """Online logistic regression over sparse link features on top of a prior margin."""

    kind: ClassVar[str] = "online-link-model"

    def __init__(self, *, learning_rate: float = 0.3, l2: float = 1e-4, max_features: int = 200_000,
                 clip: float = 4.0, gate: float = 0.0, gate_scope: str = "url"):  # fmt: skip
        if gate < 0:
            raise ValueError(f"gate must be >= 0, not {gate}")
        if gate_scope not in GATE_SCOPES:
            raise ValueError(f"gate scope must be one of {GATE_SCOPES}, not {gate_scope!r}")
        self.learning_rate, self.l2 = learning_rate, l2
        self.max_features, self.clip = max_features, clip
        self.gate = gate
        #: the features the gate applies to: "url" (host, section, URL tokens) or "all"
        self.gate_prefixes = URL_PREFIXES if gate_scope == "url" else ("",)
        self.gate_scope = gate_scope
        self.weights: dict[str, float] = {}
        self.updates: dict[str, int] = {}
        #: the sum of each feature's outcomes (kept with the gate on)
        self.sums: dict[str, float] = {}
        self.observed = 0
        self.label_sum = 0.0  # the sum of all outcomes: the base rate is label_sum / observed

    def value(self, feature: str) -> float:
        """The feature's value x_f: 1 without the gate; with it, the confident share of the
        departure of its outcome rate from the crawl's base rate (module docstring)."""
        if self.gate <= 0 or not feature.startswith(self.gate_prefixes):
            return 1.0
        n = self.updates.get(feature, 0)
        if n <= 0 or feature not in self.sums:
            # a weight without counts (a state saved without the gate) keeps its value
            return 1.0 if feature in self.weights else 0.0
        base = min(1.0 - 1e-3, max(1e-3, self.label_sum / max(1, self.observed)))
        d = abs(self.sums[feature] / n - base)
        if d <= 0.0:
            return 0.0
        return max(0.0, d - self.gate * math.sqrt(base * (1.0 - base) / n)) / d

    def margin(self, features: Sequence[str]) -> float:
        w = self.weights
        if self.gate <= 0:  # w.get(f, 0.0) of each feature, summed in order
            return sum(map(w.get, features, repeat(0.0, len(features))))
        return sum(w[f] * self.value(f) for f in features if f in w)

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
        gated = self.gate > 0
        for f in set(features):
            v = w.get(f, 0.0)
            x = self.value(f) if gated else 1.0
            w[f] = max(-c, min(c, v - eta * (g * x + rho * v)))
        for f in set(features):  # the counts after the step: the gate uses past outcomes
            n[f] = n.get(f, 0) + 1
            if gated and f.startswith(self.gate_prefixes):
                self.sums[f] = self.sums.get(f, 0.0) + label
        self.observed += 1
        self.label_sum += label
        if len(w) > self.max_features:
            keep = sorted(n, key=n.__getitem__, reverse=True)[: self.max_features // 2]
            self.weights = {f: w[f] for f in keep}
            self.updates = {f: n[f] for f in keep}
            self.sums = {f: self.sums[f] for f in keep if f in self.sums}

    def top_features(self, n: int = 20) -> list[tuple[str, float]]:
        ranked = sorted(self.weights.items(), key=lambda kv: -abs(kv[1]))
        return [(f, round(v, 4)) for f, v in ranked[:n]]

    def to_state(self) -> dict[str, Any]:
        state: dict[str, Any] = {
            "kind": self.kind,
            "learning_rate": self.learning_rate,
            "l2": self.l2,
            "observed": self.observed,
            "weights": {f: round(v, 5) for f, v in self.weights.items()},
        }
        if self.gate > 0:  # the gate's counts: [n_f, Σ outcomes]
            state["gate"], state["gate_scope"] = self.gate, self.gate_scope
            state["label_sum"] = round(self.label_sum, 4)
            state["counts"] = {f: [self.updates.get(f, 0), round(s, 4)]
                               for f, s in self.sums.items()}  # fmt: skip
        return state

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
        counts = state.get("counts")
        if counts is not None:
            if not isinstance(counts, dict) or len(counts) > model.max_features:
                raise ValueError("counts: not a dict of at most max_features entries")
            for f, (k, s) in counts.items():
                k, s = int(k), float(s)
                if k < 1 or not 0.0 <= s <= k:
                    raise ValueError(f"counts of {f!r}: bad")
                model.updates[str(f)], model.sums[str(f)] = k, s
            model.gate = float(state.get("gate", 0.0))
            scope = state.get("gate_scope", "url")
            if scope not in GATE_SCOPES:
                raise ValueError(f"gate_scope: {scope!r}")
            model.gate_scope = scope
            model.gate_prefixes = URL_PREFIXES if scope == "url" else ("",)
            model.label_sum = float(state.get("label_sum", 0.0))
            if model.gate < 0 or not 0.0 <= model.label_sum <= max(model.observed, 0):
                raise ValueError("gate or label_sum: bad")
        return model
