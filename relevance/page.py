"""Formula 3: page-information relevance Rel(TSet, WSet) (Zhou, Wang & Yu 2019).

    Rel(TSet, WSet) = Σ_{d∈WSet} Σ_{t∈TSet} w_d · w_t · Sim(d, t)² / M

TSet are the topic words t with weights w_t (formula 2 + overrides), WSet the candidate words
d of the text, M their number. topicrawl takes w_d as the term frequency of d (so the sum runs
over word occurrences) and divides the inner sum, the *topic affinity* of d,

    aff(d) = Σ_t w_t · Sim(d, t)²,

by Z, the median affinity of the topic words themselves, capped at 1 (the default form,
``"normalized"``). Dividing by Z is a constant factor, but the cap and w_d = tf are not: a
word far more topical than a typical topic word counts 1, and a frequent common word counts
as much as a rare one, so rankings differ from the paper's. The form puts scores on a
[0, 1] scale where "as topical as a typical topic word" is 1, so thresholds such as formula
5's 0.2 mean the same for a 20-word and a 500-word topic.

``TopicRelevance(..., form="paper")`` computes the published form instead: w_d = tf·idf of d
(its occurrences in the text times its idf from jieba's IDF table, the median idf for a word
the table lacks — formula 2's weighting applied to the page's words), no Z, no cap:
Σ_d Σ_t w_d·w_t·Sim(d,t)² / M. Its scale depends on the topic's size and the text's words,
so it is not the default; docs/benchmarks/relevance.md ("Formula 3") compares the two as
page classifiers.

Each word's affinity is computed once (in batches, vectorised) and cached in process, so
scoring a text costs a segmentation plus dictionary lookups.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from topicrawl.errors import StorageError

log = logging.getLogger(__name__)

def page_relevance(
    candidate_words: Sequence[str],
    topic_weights: Mapping[str, float],
    sim,
    *,
    normalizer: float = 1.0,
) -> float:
    """Formula 3 on one text, uncached (reference). ``sim.matrix(a, b)`` gives Sim(d, t)."""
    if not candidate_words or not topic_weights:
        return 0.0
    topic = list(topic_weights)
    w_t = np.asarray([topic_weights[t] for t in topic], dtype=np.float64)
    uniq, counts = np.unique(np.asarray(candidate_words, dtype=object), return_counts=True)
    s = sim.matrix(list(uniq), topic).astype(np.float64)
    aff = np.minimum(1.0, (s * s) @ w_t / normalizer)
    return float((counts * aff).sum() / counts.sum())


def topic_vector(topic_weights: Mapping[str, float]) -> tuple[list[str], np.ndarray]:
    """The topic's words and their weights w_t scaled to a top of 1 (float32), in the
    file's order: the t and w_t of aff(d) = Σ_t w_t·Sim(d, t)²."""
    words = list(topic_weights)
    top = max(topic_weights.values())
    return words, np.asarray([topic_weights[t] / top for t in words], dtype=np.float32)


def raw_affinity(sim: Any, topic: Sequence[str], weights: np.ndarray,
                 words: Sequence[str]) -> np.ndarray:  # fmt: skip
    """aff(d) = Σ_t w_t·Sim(d, t)² of each word (float32; ``weights`` scaled to a top of 1),
    in batches of 512 words through ``sim.matrix``."""
    out = np.empty(len(words), dtype=np.float32)
    step = 512
    for lo in range(0, len(words), step):
        s = sim.matrix(list(words[lo : lo + step]), topic)
        out[lo : lo + step] = (s * s) @ weights
    return out


def memoised_words(
    memo: dict[str, list[str]], extract, text: str, size: int, chars: int
) -> list[str]:
    """``extract(text)``, memoised in ``memo`` for texts up to ``chars`` characters (the same
    menu and headline anchors recur on every page of a site); ``memo`` is emptied when it
    holds ``size`` texts. The list is shared: do not modify it."""
    if len(text) > chars:
        return extract(text)
    found = memo.get(text)
    if found is None:
        if len(memo) >= size:
            memo.clear()
        # interned: a word is one string however many memoised texts (and the word filter,
        # and the self-training reservoir) hold it
        found = memo[text] = [sys.intern(w) for w in extract(text)]
    return found


class TopicRelevance:
    """Formula 3 with the per-word affinity cache; the object the link scorer uses."""

    def __init__(
        self,
        topic_weights: Mapping[str, float],
        sim,
        extractor,
        *,
        cache_size: int = 2_000_000,
        shared=None,
        memo_size: int = 100_000,
        memo_chars: int = 200,
        form: str = "normalized",
        table: Mapping[str, float] | None = None,
        similarity: Callable[[], Any] | None = None,
    ):
        """``table``: the raw affinity of every word the similarity source knows, non-zero
        ones only (:mod:`relevance.affinity`): words are then looked up, not computed, and
        ``sim`` may be None, built by ``similarity()`` only when something asks for it."""
        if not topic_weights:
            raise ValueError("a topic needs at least one word")
        if form not in ("normalized", "paper"):
            raise ValueError(f"formula 3 form {form!r}: 'normalized' or 'paper'")
        self.form = form
        self._cap = 1.0 if form == "normalized" else float("inf")
        self._idf = _jieba_idf() if form == "paper" else None
        self.topic, self.weights = topic_vector(topic_weights)
        self._sim, self._similarity = sim, similarity
        if sim is None and (table is None or similarity is None):
            raise ValueError("a similarity source, or an affinity table and its source's loader")
        self.table = table
        self.extract = extractor
        self.cache_size = cache_size
        self.shared = shared  # e.g. relevance.cache.RedisAffinityCache (get_many/set_many)
        #: calls to ``shared`` that failed (the words were computed locally instead)
        self.shared_failures = 0
        self._aff: dict[str, float] = {}
        # candidate words of short texts (anchors, descriptions): the same menu and headline
        # anchors recur on every page of a site
        self.memo_size, self.memo_chars = memo_size, memo_chars
        self._words: dict[str, list[str]] = {}
        raw = self._raw_affinity(self.topic)
        self.normalizer = (float(np.median(raw)) or 1.0) if form == "normalized" else 1.0
        for w, a in zip(self.topic, raw, strict=True):
            self._aff[w] = min(self._cap, float(a) / self.normalizer)

    @property
    def sim(self) -> Any:
        """The similarity source (loaded on first use when the affinities come from a
        table)."""
        if self._sim is None:
            assert self._similarity is not None
            self._sim = self._similarity()
        return self._sim

    def _raw_affinity(self, words: Sequence[str]) -> np.ndarray:
        if self.table is not None:
            get = self.table.get
            return np.fromiter((get(w, 0.0) for w in words), dtype=np.float32, count=len(words))
        return raw_affinity(self.sim, self.topic, self.weights, words)

    def affinities(self, words: Iterable[str]) -> dict[str, float]:
        """Normalised topic affinity min(1, aff(d)/Z) of each word (cached)."""
        words = list(dict.fromkeys(words))
        out = {w: self._aff[w] for w in words if w in self._aff}
        new = [w for w in words if w not in out]
        if new and self.shared is not None and self.table is None:
            found = self._shared_call(self.shared.get_many, new) or {}
            if found:
                out.update(found)
                self._aff.update(found)
                new = [w for w in new if w not in found]
        if new:
            raw = self._raw_affinity(new)
            if len(self._aff) + len(new) > self.cache_size:
                self._aff.clear()
            computed = {}
            for w, a in zip(new, raw, strict=True):
                out[w] = self._aff[w] = computed[w] = min(self._cap, float(a) / self.normalizer)
            if self.shared is not None and self.table is None:
                self._shared_call(self.shared.set_many, computed)
        return out

    def _shared_call(self, method, arg):
        """A call to the shared cache; on its error (``StorageError``: Redis down) the
        words are computed here instead, and the failure is counted in
        ``shared_failures`` (a page is never lost to the cache)."""
        try:
            return method(arg)
        except StorageError as exc:
            self.shared_failures += 1
            if self.shared_failures == 1 or self.shared_failures % 1000 == 0:
                log.warning("shared affinity cache unavailable (%d failures so far): %s",
                            self.shared_failures, exc)  # fmt: skip
            return None

    def affinity(self, word: str) -> float:
        return self.affinities([word])[word]

    def relevance_words(self, words: Sequence[str]) -> float:
        """Formula 3 over candidate words (occurrences count as w_d)."""
        if not words:
            return 0.0
        if self._idf is not None:
            return self._paper(words, self.affinities(words))
        aff = self._aff
        try:
            return sum(aff[w] for w in words) / len(words)
        except KeyError:
            vals = self.affinities(words)
            return sum(vals[w] for w in words) / len(words)

    def words(self, text: str) -> list[str]:
        """The candidate words of a text (memoised for texts up to ``memo_chars``; the list
        is shared: do not modify it)."""
        return memoised_words(self._words, self.extract, text, self.memo_size, self.memo_chars)

    def relevance(self, text: str) -> float:
        """Formula 3 of a text in [0, 1]."""
        return self.relevance_words(self.words(text))

    def relevance_many(self, texts: Sequence[str]) -> list[float]:
        """Formula 3 of several texts, computing every new word's affinity in one batch."""
        return self.relevance_word_lists([self.words(t) for t in texts])

    def relevance_word_lists(self, word_lists: Sequence[Sequence[str]]) -> list[float]:
        """Formula 3 of several candidate-word lists (texts already extracted)."""
        vals = self.affinities(w for ws in word_lists for w in ws)
        if self._idf is not None:
            return [self._paper(ws, vals) if ws else 0.0 for ws in word_lists]
        return [sum(vals[w] for w in ws) / len(ws) if ws else 0.0 for ws in word_lists]

    def _paper(self, words: Sequence[str], aff: Mapping[str, float]) -> float:
        """The published formula 3: Σ_d tf(d)·idf(d)·aff(d) / M (M candidate words)."""
        idf, default = self._idf
        return sum(idf.get(w, default) * aff[w] for w in words) / len(words)

    def plain_match(self, text: str) -> float:
        """Plain topic-word matching (section 3.1 fallback): share of candidate words that
        are topic words, weighted by their topic weight."""
        words = self.words(text)
        if not words:
            return 0.0
        wt = dict(zip(self.topic, self.weights.tolist(), strict=True))
        return sum(wt.get(w, 0.0) for w in words) / len(words)


_IDF: tuple[dict[str, float], float] | None = None


def _jieba_idf() -> tuple[dict[str, float], float]:
    """jieba's IDF table (``jieba/analyse/idf.txt``) and its median, loaded once."""
    global _IDF
    if _IDF is None:
        import os

        import jieba.analyse

        path = os.path.join(os.path.dirname(jieba.analyse.__file__), "idf.txt")
        table: dict[str, float] = {}
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) == 2:
                    table[parts[0]] = float(parts[1])
        _IDF = (table, float(np.median(list(table.values()))))
    return _IDF
