"""Host-level (site) prior for the page decision: empirical Bayes over each host's accepted share.

A page is accepted when its relevance passes the topic's page threshold t. That threshold
was chosen on whole webs (portals of many categories), so it carries their base rate. On a
host where nearly every judged page passes (a single-topic site), a borderline page is more
likely on-topic than the same score on a portal; Bayes' rule says by how much:

    posterior odds(page on-topic | host h) = page odds × O(π_h) / O(π_0)

with O(p) = p / (1 − p), π_h the host's on-topic rate and π_0 the reference rate of the
population the threshold was chosen for (cf. the site relevance of focused crawlers:
Chakrabarti et al. 1999, a page's neighbourhood as prior; empirical-Bayes shrinkage of
per-group rates: Efron & Morris 1975, the beta-binomial posterior mean).

The host's rate is estimated from the pages judged on it so far, shrunk towards π_0 by a
Beta prior of ``strength`` m pseudo-pages with mean π_0 (the posterior mean
π̂_h = (A + m·π_0) / (J + m), A accepted of J judged), and counted only once
``min_pages`` pages of the host were judged. The shift in log odds

    Δ = min(max(0, logit(π̂_h) − logit(π_0)), max_shift)

is one-sided: a host at or below the reference (a portal, an off-topic site) keeps the
threshold as it is; the threshold is never raised. The shift becomes a threshold on the
page's score through a model of the score's odds:

- ``scale = "probability"`` (calibrated mode, the score is P(topic | page)):
  t_h = σ(logit(t) − Δ);
- ``scale = "power"`` (paper mode, formula 3 is not a probability): the page odds are taken
  as proportional to s^k (a logistic model in ln s, k the ``elasticity``; 1.0, chosen on
  family-a webs 0–2 by ``bench/host_prior.py``), so t_h = t · exp(−Δ / k).

A focused crawl selects what it fetches: on a portal it fetches the topic's section first,
so for its first tens of pages a portal's running accepted share is as high as a single-topic
site's (0.87–0.95 after 30 pages in the harvest benchmark's crawl). With ``sections`` (the
default), a host's prior therefore acts only while its plainly accepted URLs span sections:
their Algorithm 3 reservoir (:class:`relevance.urls.StructureSample`, the topic's ``[urls]``
settings) holds at least n/2 URLs and has no majority structure. A portal's accepted pages
share its topic section's path (a majority structure; there the page's Algorithm 3 factor,
``[page] struct_weight``, already lowers or raises the score by section); a single-topic site
files them in all of its sections.

The rates counted are those of the plain decision (relevance ≥ t), not of the shifted one,
so a lowered threshold does not feed its own evidence. State: two counters per host, at most
``max_hosts`` hosts (least recently judged forgotten first; a forgotten host starts again
with no shift). In the scrapy-redis scale-out each worker keeps its own counts (the pages it
judged), so a host's prior acts once one worker has judged ``min_pages`` of its pages.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

SCALES = ("power", "probability")


def logit(p: float) -> float:
    """log(p / (1 − p)) for p in (0, 1)."""
    return math.log(p / (1.0 - p))


def posterior_rate(accepted: int, judged: int, reference: float, strength: float) -> float:
    """Posterior mean of a host's accepted share under a Beta(m·π_0, m·(1 − π_0)) prior:
    (A + m·π_0) / (J + m), A = ``accepted``, J = ``judged``, m = ``strength``,
    π_0 = ``reference``."""
    return (accepted + strength * reference) / (judged + strength)


def log_odds_shift(rate: float, reference: float, *, max_shift: float) -> float:
    """Δ = logit(rate) − logit(reference), clipped to [0, max_shift] (one-sided: a host at
    or below the reference rate gets no shift)."""
    rate = min(max(rate, 1e-9), 1.0 - 1e-9)
    return min(max(0.0, logit(rate) - logit(reference)), max_shift)


def shifted_threshold(threshold: float, shift: float, *, scale: str = "power",
                      elasticity: float = 1.0) -> float:  # fmt: skip
    """The page threshold after a log-odds shift Δ in favour of the page.

    ``"probability"``: t' = σ(logit(t) − Δ) (the score is a probability);
    ``"power"``: t' = t · exp(−Δ / k), k = ``elasticity`` (page odds ∝ score^k)."""
    if shift <= 0.0 or threshold <= 0.0:
        return threshold
    if scale == "probability":
        if threshold >= 1.0:
            return threshold
        return 1.0 / (1.0 + math.exp(-(logit(threshold) - shift)))
    if scale == "power":
        return threshold * math.exp(-shift / elasticity)
    raise ValueError(f"scale must be one of {SCALES}, not {scale!r}")


@dataclass
class HostPriorConfig:
    """The topic's ``[page] host_prior*`` keys (see :class:`HostPrior`)."""

    enabled: bool = False
    reference: float = 0.5
    strength: float = 10.0
    min_pages: int = 10
    #: chosen on family-a webs 0–2 (bench/host_prior.py, docs/benchmarks/discovery.md)
    elasticity: float = 1.0
    max_shift: float = 2.0
    sections: bool = True


class HostPrior:
    """Per-host accepted counts and the threshold each host's pages are judged by."""

    def __init__(
        self,
        *,
        reference: float = 0.5,
        strength: float = 10.0,
        min_pages: int = 10,
        elasticity: float = 1.0,
        max_shift: float = 2.0,
        scale: str = "power",
        max_hosts: int = 10_000,
        sections: Callable[[str], Any] | None = None,
    ):
        if not 0.0 < reference < 1.0:
            raise ValueError(f"reference must be in (0, 1), not {reference}")
        if strength < 0 or min_pages < 0 or max_shift < 0 or elasticity <= 0:
            raise ValueError("strength, min_pages and max_shift must be >= 0, elasticity > 0")
        if scale not in SCALES:
            raise ValueError(f"scale must be one of {SCALES}, not {scale!r}")
        self.reference, self.strength, self.min_pages = reference, strength, min_pages
        self.elasticity, self.max_shift, self.scale = elasticity, max_shift, scale
        self.max_hosts = max(1, max_hosts)
        #: host -> a new Algorithm 3 sample (``StructureSample``-like: ``add``, ``sample``,
        #: ``n``, ``has_structure``) of its plainly accepted URLs; None: no section gate
        self.sections = sections
        #: host -> [accepted, judged, section sample or None], least recently judged first
        self.counts: OrderedDict[str, list[Any]] = OrderedDict()

    @classmethod
    def from_config(cls, config: HostPriorConfig, *, scale: str = "power",
                    max_hosts: int = 10_000,
                    sections: Callable[[str], Any] | None = None) -> HostPrior:  # fmt: skip
        """From the topic's ``[page] host_prior*`` keys; ``sections``: the sample factory
        for the section gate (used when ``config.sections``)."""
        return cls(reference=config.reference, strength=config.strength,
                   min_pages=config.min_pages, elasticity=config.elasticity,
                   max_shift=config.max_shift, scale=scale, max_hosts=max_hosts,
                   sections=sections if config.sections else None)  # fmt: skip

    def observe(self, host: str, accepted: bool, url: str = "") -> None:
        """Count one judged page of ``host`` (``accepted``: by the plain threshold; an
        accepted ``url`` joins the host's section sample)."""
        entry = self.counts.pop(host, None) or [0, 0, None]
        entry[0] += bool(accepted)
        entry[1] += 1
        if accepted and url and self.sections is not None:
            if entry[2] is None:
                entry[2] = self.sections(host)
            entry[2].add(url)
        self.counts[host] = entry
        if len(self.counts) > self.max_hosts:
            self.counts.popitem(last=False)

    def spans_sections(self, host: str) -> bool:
        """The section gate: the host's accepted URLs (at least n/2 of them sampled) have no
        majority structure. Always true without ``sections``."""
        if self.sections is None:
            return True
        entry = self.counts.get(host)
        sample = entry[2] if entry is not None else None
        if sample is None or len(sample.sample) < max(1, sample.n // 2):
            return False
        return not sample.has_structure()

    def rate(self, host: str) -> float | None:
        """The host's posterior accepted share, None before ``min_pages`` judged pages or
        while the section gate is closed."""
        entry = self.counts.get(host)
        if entry is None or entry[1] < max(1, self.min_pages) or not self.spans_sections(host):
            return None
        return posterior_rate(entry[0], entry[1], self.reference, self.strength)

    def shift(self, host: str) -> float:
        """Δ for the host's next page (0 before ``min_pages``)."""
        rate = self.rate(host)
        if rate is None:
            return 0.0
        return log_odds_shift(rate, self.reference, max_shift=self.max_shift)

    def threshold(self, host: str, base: float) -> float:
        """The page threshold for the host's next page (``base`` lowered by its shift)."""
        return shifted_threshold(base, self.shift(host), scale=self.scale,
                                 elasticity=self.elasticity)  # fmt: skip

    def judge(self, host: str, relevance: float, base: float,
              url: str = "") -> tuple[bool, float]:  # fmt: skip
        """Decide a page of ``host`` and count it: (accepted, the threshold used). The page
        is counted by the plain decision (relevance ≥ ``base``)."""
        threshold = self.threshold(host, base)
        self.observe(host, relevance >= base, url)
        return relevance >= threshold, threshold


def section_sample(topic: Any) -> Callable[[str], Any]:
    """The section gate's sample factory for a topic: a new Algorithm 3 reservoir per host
    with the topic's ``[urls]`` settings (as its link scorer's, seeded by host)."""
    from relevance.urls import StructureSample, structure_sample

    def make(host: str) -> StructureSample:
        sample = structure_sample(topic.urls, seed=f"host-prior:{host}", per_host=False)
        assert isinstance(sample, StructureSample)
        return sample

    return make
