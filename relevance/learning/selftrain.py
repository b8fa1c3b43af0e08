"""Self-training page model: the crawl labels its own pages and learns the topic from them.

Nigam, McCallum, Thrun & Mitchell, "Text Classification from Labeled and Unlabeled Documents
using EM" (Machine Learning 39, 2000): a classifier trained on a few labelled documents
labels the unlabelled ones, and is trained again on both, the unlabelled documents weighted
down by λ (their EM-λ). Here the labelled documents are the crawl's own pages whose literal
topic-word evidence is confident (:mod:`relevance.evidence`: P_lit ≥ ``positive`` → on-topic,
≤ ``negative`` → off-topic), optional labelled examples (the topic's ``[classifier]`` file)
and optional unlabelled background text (negatives: most of a general news corpus is off any
one topic); every other fetched page is unlabelled. Every ``retrain_every`` pages the model
is trained again:

1. a logistic regression over TF-IDF (sublinear tf) of the candidate words on the confident
   pages, the examples and the background (the L2-regularised objective of scikit-learn's
   ``LogisticRegression(solver="liblinear")``, minimised by SciPy's optimizer without
   scikit-learn: :mod:`relevance.learning.logistic`);
2. ``em_steps`` EM steps: the unlabelled pages join with the label the model gives them and
   sample weight λ·|2P − 1| (confident predictions count more), and the model is trained
   again. ``em_steps = 0`` (the pseudo-labelled pages only; the unlabelled ones still enter
   the idf) ranks the fetched pages better — ROC AUC of P_model 0.947 against 0.937 on the
   development replays of family b, 0.936 against 0.927 held out — at a third less CPU a
   training, but in held-out crawls it cost corpus precision (−0.015 ± 0.009 over 50 pairs),
   so it is not the default (docs/benchmarks/topics.md, *The page model's labels and
   features*).

With ``[learning] section_negatives`` (on by default) every kept page also records its section
key, and the pages of the sections in :attr:`SelfTrainingPageModel.negative_sections` (the
learned contrast's, set by :mod:`relevance.calibrated` before each training) are negatives at
that training whatever their evidence: co-training (Blum & Mitchell, COLT 1998), the section
view labelling the text view; labels are applied at training time, so earlier pages are
re-labelled when their section becomes a contrast topic.

Defaults (P_lit ≥ 0.7 positive, ≤ 0.1 negative, C = 10, λ = 1, 3 EM steps, classes
balanced; liblinear: the same figures as lbfgs there, 4× faster) were chosen on template family "a" of the local test web (docs/benchmarks/topics.md).

The model is a word → (idf, coefficient) table plus an intercept: JSON state, evaluated per
text with a few dictionary lookups (:meth:`SelfTrainingPageModel.probability_words`).
Memory is bounded: at most ``max_pages`` pages are kept (a uniform reservoir), each as the
counts of its first ``max_words`` candidate words, stored compactly (:func:`bag`: the distinct
words, interned so that a word is one string however many pages hold it, and an array of
counts): ~3 kB a page, ~15 MB for the default 5,000 pages plus the words themselves, where
a ``Counter`` a page took ~17 kB (~85 MB; the largest structure of the 30 min soak).
"""

from __future__ import annotations

import logging
import math
import random
import sys
from array import array
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from itertools import chain
from typing import Any, ClassVar

from relevance.classifier import count_probabilities, term_probabilities
from relevance.learning.base import LearnedModel, reservoir_put, retrain_due
from relevance.sklearnimport import one_blas_thread

logger = logging.getLogger(__name__)

#: a page's word counts as the reservoir keeps them: its distinct words and their counts
Bag = tuple[tuple[str, ...], array]


def bag(words: Sequence[str]) -> Bag:
    """The counts of ``words`` as (distinct words, interned; counts as unsigned ints)."""
    return bag_of_counts(Counter(words))


def bag_of_counts(counts: Mapping[str, int]) -> Bag:
    """A ``{word: count}`` as a :func:`bag`."""
    return tuple(sys.intern(w) for w in counts), array("I", counts.values())


def bag_counts(b: Bag) -> dict[str, int]:
    """The ``{word: count}`` of a :func:`bag`."""
    return dict(zip(b[0], b[1], strict=True))


def word_matrix(docs: Sequence[tuple[Iterable[str], Iterable[int]]]) -> tuple[list[str], Any]:
    """The documents' word counts (each as its distinct words and their counts: a :func:`bag`)
    as scikit-learn's ``DictVectorizer().fit_transform`` makes them of ``{word: count}``
    dicts: the words sorted, and a CSR matrix of float64 counts, one row a document, the
    indices sorted in each row. The same matrix (``tests/test_learning.py`` holds it equal,
    index for index), built by SciPy from the bags without a ``dict`` a page and without the
    vectorizer's Python loop over every word, which was half of a training's time."""
    import numpy as np
    from scipy import sparse

    words = [tuple(w) for w, _ in docs]
    names = sorted(set(chain.from_iterable(words)))
    column = {w: j for j, w in enumerate(names)}
    total = sum(map(len, words))
    indices = np.fromiter(map(column.__getitem__, chain.from_iterable(words)), dtype=np.intc,
                          count=total)  # fmt: skip
    data = np.fromiter(chain.from_iterable(c for _, c in docs), dtype=np.float64, count=total)
    indptr = np.zeros(len(words) + 1, dtype=np.intc)
    np.cumsum([len(w) for w in words], out=indptr[1:])
    matrix = sparse.csr_matrix((data, indices, indptr), shape=(len(words), len(names)))
    matrix.sort_indices()
    return names, matrix


def term_table(names: Sequence[str], idf: Any, coef: Any) -> dict[str, tuple[float, float]]:
    """The fitted model as its word -> (idf, coefficient) table, the words with a coefficient
    other than 0 in column order: the nonzero columns found by NumPy and the values read as
    Python floats in one pass (``tolist``: the same floats as ``float(a[j])``) instead of a
    Python loop that indexes both arrays at every one of the tens of thousands of columns."""
    import numpy as np

    cols = np.flatnonzero(coef != 0.0)
    if len(cols) == len(names):  # no coefficient is 0 (the usual case): every column, in order
        return dict(zip(names, zip(idf.tolist(), coef.tolist(), strict=True), strict=True))
    return dict(zip(map(names.__getitem__, cols.tolist()),
                    zip(idf[cols].tolist(), coef[cols].tolist(), strict=True), strict=True))  # fmt: skip


def _identity(words):
    return words


class SelfTrainingPageModel(LearnedModel):
    """P(topic | words) learned from pseudo-labelled pages (Nigam et al. 2000, EM-λ)."""

    kind: ClassVar[str] = "self-training-page-model"

    def __init__(
        self,
        *,
        positive: float = 0.7,
        negative: float = 0.1,
        retrain_every: int = 10,
        min_positives: int = 5,
        min_negatives: int = 5,
        em_lambda: float = 1.0,
        em_steps: int = 3,
        c: float = 10.0,
        class_weight: str | None = "balanced",
        max_pages: int = 5000,
        max_words: int = 2000,
        seed: int = 0,
    ):
        if not 0.0 <= negative < positive <= 1.0:
            raise ValueError(f"need 0 <= negative < positive <= 1 ({negative}, {positive})")
        self.positive, self.negative = positive, negative
        self.retrain_every = max(1, retrain_every)
        self.min_positives, self.min_negatives = min_positives, min_negatives
        self.em_lambda, self.em_steps, self.c = em_lambda, em_steps, c
        self.class_weight = class_weight
        self.max_pages, self.max_words = max_pages, max_words
        self._rng = random.Random(seed)
        # pages: (word counts, label 1/0/None, section or None); fixed examples (with a
        # weight) are kept apart
        self.pages: list[tuple[Bag, int | None, str | None]] = []
        #: sections whose pages are negatives at the next training, whatever their literal
        #: evidence (``[learning] section_negatives``: the learned contrast's sections, set
        #: by the scorer; empty: the pseudo-labels of the evidence alone)
        self.negative_sections: frozenset[str] = frozenset()
        #: a vetoed pseudo-positive (``[learning] domain_veto``) becomes a negative (True) or
        #: stays unlabelled (False)
        self.veto_negative = False
        self.fixed: list[tuple[Counter, int, float]] = []
        self.seen = 0
        self.since = 0
        self.trainings = 0
        self.terms: dict[str, tuple[float, float]] = {}
        self.intercept = 0.0
        self.trained_on: dict[str, int] = {}

    # -- data -------------------------------------------------------------------------------
    def add_examples(self, docs: Sequence[Sequence[str]], labels: Sequence[bool], *,
                     weight: float = 1.0) -> None:  # fmt: skip
        """Labelled examples (or background negatives) that seed every training."""
        for words, y in zip(docs, labels, strict=True):
            self.fixed.append((Counter(words[: self.max_words]), int(bool(y)), weight))

    def label(self, evidence: float) -> int | None:
        """Pseudo-label of a page from its literal-evidence probability (None: unlabelled)."""
        if evidence >= self.positive:
            return 1
        if evidence <= self.negative:
            return 0
        return None

    def observe(self, words: Sequence[str], evidence: float, label: bool | None = None,
                section: str | None = None, veto: bool = False) -> bool:  # fmt: skip
        """Add a fetched page (its candidate words and P_lit, and the key of its section when
        known); retrain every ``retrain_every`` pages. A user's ``label`` overrides the
        pseudo-label of the evidence; ``veto`` (sibling knowledge, ``[learning]
        domain_veto``) takes a pseudo-positive's label away (a negative with
        :attr:`veto_negative`). Returns True when the model was retrained."""
        return self.observe_counts(Counter(words[: self.max_words]), evidence, label, section,
                                   veto)  # fmt: skip

    def observe_counts(self, counts: Counter, evidence: float, label: bool | None = None,
                       section: str | None = None, veto: bool = False) -> bool:  # fmt: skip
        """:meth:`observe` of a page given as word counts (a page another scale-out worker
        fetched: ``crawler.sharedlearn.SharedLearningStream``)."""
        pseudo = self.label(evidence) if label is None else int(label)
        if veto and label is None and pseudo == 1:
            pseudo = 0 if self.veto_negative else None
        if label is not None:
            section = None  # a user's label is never overridden by the section view
        item = (bag_of_counts(counts), pseudo, section)
        self.seen += 1
        reservoir_put(self.pages, item, self.seen, self.max_pages, self._rng)
        self.since += 1
        if retrain_due(self.since, self.seen, self.retrain_every):
            self.since = 0
            return self.retrain()
        return False

    # -- training ---------------------------------------------------------------------------
    def retrain(self) -> bool:
        """Train on the confident pages + examples, then ``em_steps`` EM-λ steps over the
        unlabelled pages. Returns False (model unchanged) while either class has too few labels."""
        import numpy as np

        from relevance.learning.logistic import fit_logistic, probabilities, tfidf

        veto = self.negative_sections
        pages = [(b, 0 if s is not None and s in veto else y) for b, y, s in self.pages]
        labelled: list[tuple[Bag | tuple[Any, Any], int, float]]
        labelled = [(b, y, 1.0) for b, y in pages if y is not None]
        labelled += [((c.keys(), c.values()), y, wt) for c, y, wt in self.fixed]
        pos = sum(1 for _, y, _ in labelled if y == 1)
        neg = len(labelled) - pos
        if pos < self.min_positives or neg < self.min_negatives:
            return False
        unlabelled = [b for b, y in pages if y is None]
        names, counts = word_matrix([b for b, _, _ in labelled] + unlabelled)
        idf, x = tfidf(counts)
        n = len(labelled)
        y = np.asarray([lab for _, lab, _ in labelled], dtype=int)
        w = np.asarray([wt for _, _, wt in labelled], dtype=float)
        fit = {"c": self.c, "class_weight": self.class_weight, "max_iter": 2000}
        with one_blas_thread():
            coef, b = fit_logistic(x[:n], y, sample_weight=w, **fit)
            for _ in range(self.em_steps if unlabelled and self.em_lambda > 0 else 0):
                p = probabilities(x[n:], coef, b)
                y2 = np.concatenate([y, (p >= 0.5).astype(int)])
                w2 = np.concatenate([w, self.em_lambda * np.abs(2 * p - 1) + 1e-6])
                if len(set(y2.tolist())) < 2:
                    break
                coef, b = fit_logistic(x, y2, sample_weight=w2, **fit)
        self.terms = term_table(names, idf, coef)
        self.intercept = b
        self.trainings += 1
        self.trained_on = {"positives": pos, "negatives": neg, "unlabelled": len(unlabelled)}
        return True

    @property
    def ready(self) -> bool:
        return bool(self.terms)

    def probability_words(self, docs: Sequence[Sequence[str]]) -> list[float | None]:
        """P(topic | words) of each word list, the fitted model's own arithmetic (tf' = 1 +
        ln tf, l2-normalised tf'·idf, σ(b + w·x)); None before the first training or when
        no word is known."""
        return term_probabilities(self.terms, self.intercept, docs)

    def probability_bags(self, bags: Sequence[Bag]) -> list[float | None]:
        """:meth:`probability_words` of word counts kept as :func:`bag` (a rejected page held
        for re-judgement), without expanding them into word lists."""
        pairs = (zip(words, counts, strict=True) for words, counts in bags)
        return count_probabilities(self.terms, self.intercept, pairs)

    def top_words(self, n: int = 30) -> list[tuple[str, float]]:
        """The words that most raise P(topic) (coefficient × idf), best first."""
        ranked = sorted(self.terms.items(), key=lambda kv: -kv[1][1] * kv[1][0])
        return [(w, round(c * idf, 4)) for w, (idf, c) in ranked[:n] if c > 0]

    # -- state ------------------------------------------------------------------------------
    def to_state(self, *, pool: bool = False) -> dict[str, Any]:
        """The model as JSON; with ``pool`` also its training pages (``[counts, label]``) and
        counters, so that a resumed crawl (JOBDIR) retrains on them."""
        state: dict[str, Any] = {
            "kind": self.kind,
            "intercept": self.intercept,
            "terms": {w: [round(i, 5), round(c, 5)] for w, (i, c) in self.terms.items()},
            "trainings": self.trainings,
            "seen": self.seen,
            "trained_on": self.trained_on,
        }
        if pool:
            state["pages"] = [[bag_counts(b), y] if s is None else [bag_counts(b), y, s]
                              for b, y, s in self.pages]  # fmt: skip
            state["since"] = self.since
        return state

    def parse_state(self, state: Any) -> dict[str, Any]:
        """Validate a :meth:`to_state` dict (with or without its pool) for
        :meth:`apply_state`: finite numbers, at most ``max_pages`` pages of at most
        ``max_words`` counts (ValueError otherwise)."""
        if not isinstance(state, dict) or state.get("kind") != self.kind:
            raise ValueError("not a self-training page model")
        model = type(self).from_state(state)
        values = [model.intercept, *(x for pair in model.terms.values() for x in pair)]
        if not all(math.isfinite(x) for x in values):
            raise ValueError("a weight is not finite")
        pages: list[tuple[Bag, int | None, str | None]] = []
        raw = state.get("pages", [])
        if not isinstance(raw, list) or len(raw) > self.max_pages:
            raise ValueError("bad pages")
        for entry in raw:
            if (not isinstance(entry, list) or len(entry) not in (2, 3)
                    or not isinstance(entry[0], dict)):  # fmt: skip
                raise ValueError("bad page")
            counts, y = entry[0], entry[1]
            section = entry[2] if len(entry) == 3 else None
            if section is not None and (not isinstance(section, str) or len(section) > 1000):
                raise ValueError("bad page section")
            if y not in (None, 0, 1) or isinstance(y, float) or len(counts) > self.max_words:
                raise ValueError("bad page")
            if not all(isinstance(w, str) and isinstance(k, int) and not isinstance(k, bool)
                       and k > 0 for w, k in counts.items()):  # fmt: skip
                raise ValueError("bad word counts")
            pages.append((bag_of_counts(counts), y, section))
        seen, since = state.get("seen", len(pages)), state.get("since", 0)
        if not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0
                   for x in (seen, since, model.trainings)):  # fmt: skip
            raise ValueError("bad counters")
        return {"model": model, "pages": pages, "seen": max(seen, len(pages)), "since": since}

    def apply_state(self, parsed: dict[str, Any]) -> None:
        """Take a :meth:`parse_state` result: the trained terms and the training pages."""
        model = parsed["model"]
        self.terms, self.intercept = model.terms, model.intercept
        self.trainings, self.trained_on = model.trainings, model.trained_on
        self.pages, self.seen, self.since = parsed["pages"], parsed["seen"], parsed["since"]

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> SelfTrainingPageModel:
        model = cls()
        model.intercept = float(state["intercept"])
        model.terms = {str(w): (float(v[0]), float(v[1])) for w, v in state["terms"].items()}
        model.trainings = int(state.get("trainings", 0))
        model.trained_on = dict(state.get("trained_on", {}))
        return model
