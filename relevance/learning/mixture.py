"""The crawl's own calibration of P(page): a mixture model of the fetched pages' scores.

P(page) ranks a crawl's fetched pages well (ROC AUC 0.93–0.99 against the truth on the
development crawls, 娱乐 aside) but its calibration depends on the web and the topic: on
family b's webs the on-topic pages of a well-separated topic (体育, 家居, 房产) spread down to
P(page) 0.2–0.5, where the off-topic ones of family a's webs lie (docs/benchmarks/topics.md,
*Calibrated acceptance*). One fixed line (0.5, or one isotonic map) cannot fit both. A crawl
does see the distribution of its own scores, which is a mixture of a few populations — list and
hub pages near 0, off-topic articles in the low range, on-topic articles in the high range —
and a finite mixture model fitted to it (McLachlan & Peel, *Finite Mixture Models*, 2000;
score-distribution models of relevance, Manmatha, Rath & Feng, SIGIR 2001) gives each score the
posterior probability of the highest component, a probability on the crawl's own scale.

``[learning] accept_mixture = K`` (0: off): a Gaussian mixture of K components over the
logits of P(page) of the pages fetched so far (seeds excluded), fitted by EM (scikit-learn's
``GaussianMixture``, k-means start, fixed seed), refitted every ``every`` pages (10, or a
twentieth of the pages once there are more than 200) on the last ``window`` scores. A page
under the page threshold is accepted when the top component's posterior for its score is at
least the threshold and the top component's centre is itself at or above it (a crawl whose
pages are all off-topic has no such component); ``accept_mixture_cut`` asks a higher
posterior instead. K = 3 (the three populations) was chosen by leave-one-category-out and
leave-one-family-out on development crawls (family b seeds 1–2, family a seed 0); K = 2
accepts more and loses precision. Neither cut 0.5 nor 0.7 passed held out (gain and precision
loss move together; docs/benchmarks/topics.md), so the option is off by default. Only the
acceptance changes: P(page) still labels and scores the links.
"""

from __future__ import annotations

import math
from collections import deque

from relevance.combine import clipped_logit


class ScoreMixture:
    """A K-component Gaussian mixture over the logits of the crawl's fetched P(page)."""

    def __init__(self, components: int = 3, *, start: int = 30, every: int = 10,
                 window: int = 5000, seed: int = 0, cut: float | None = None):  # fmt: skip
        if components < 2:
            raise ValueError("a score mixture needs at least 2 components")
        self.components, self.start, self.every, self.seed = components, start, every, seed
        self.posterior_cut = cut  # the posterior accepted at (None: the threshold)
        self.scores: deque[float] = deque(maxlen=window)
        self.seen = 0  # scores observed
        self.fits = 0
        self._since = 0
        self._model = None
        self._top = 0
        self._cut: tuple[tuple[int, float], float] | None = None

    def observe(self, p: float) -> bool:
        """A fetched page's P(page); True when the mixture was refitted."""
        self.scores.append(clipped_logit(p))
        self.seen += 1
        self._since += 1
        every = max(self.every, self.seen // 20) if self.seen > 200 else self.every
        if self.seen >= self.start and (self._model is None or self._since >= every):
            self.fit()
            return True
        return False

    def fit(self) -> None:
        import numpy as np
        from sklearn.mixture import GaussianMixture

        x = np.fromiter(self.scores, dtype=float).reshape(-1, 1)
        if len(np.unique(x)) < self.components:
            return
        self._model = GaussianMixture(self.components, random_state=self.seed).fit(x)
        self._top = int(np.argmax(self._model.means_[:, 0]))
        self._since = 0
        self.fits += 1

    @property
    def ready(self) -> bool:
        return self._model is not None

    def top_centre(self) -> float | None:
        """P(page) at the centre of the highest component (None before the first fit)."""
        if self._model is None:
            return None
        return 1.0 / (1.0 + math.exp(-float(self._model.means_[self._top, 0])))

    def posterior(self, p: float) -> float | None:
        """The posterior probability that a page of score ``p`` belongs to the highest
        component (None before the first fit)."""
        if self._model is None:
            return None
        return float(self._model.predict_proba([[clipped_logit(p)]])[0][self._top])

    def acceptance(self, p: float, threshold: float) -> float:
        """The value a page of score ``p`` is accepted on at ``threshold``: ``p`` itself, or
        the top component's posterior when that is higher and the component's centre is at or
        above the threshold (an on-topic population exists). With a posterior cut ``c``
        (``accept_mixture_cut``) the posterior counts only from ``c`` on; below it the
        value is capped under the threshold, so ``relevance_parts.accept`` still records it."""
        if p >= threshold or self._model is None:
            return p
        centre = self.top_centre()
        if centre is None or centre < threshold:
            return p
        post = self.posterior(p)
        if post is None:
            return p
        cut = threshold if self.posterior_cut is None else self.posterior_cut
        if post >= cut:
            return max(p, post, threshold)
        return max(p, min(post, math.nextafter(threshold, 0.0)))

    def cut(self, threshold: float) -> float:
        """The lowest P(page) from which up to ``threshold`` :meth:`acceptance` accepts every
        score at it, on a grid of 0.005 (``threshold`` when it accepts none just below it);
        cached per fit."""
        if self._model is None:
            return threshold
        if self._cut is not None and self._cut[0] == (self.fits, threshold):
            return self._cut[1]
        found = threshold
        grid = [i / 200 for i in range(1, math.ceil(threshold * 200))]
        centre = self.top_centre()
        if grid and centre is not None and centre >= threshold:
            post = self._model.predict_proba([[clipped_logit(p)] for p in grid])[:, self._top]
            for p, q in zip(reversed(grid), reversed(post), strict=True):  # down from it
                if q < (threshold if self.posterior_cut is None else self.posterior_cut):
                    break
                found = p
        self._cut = ((self.fits, threshold), found)
        return found
