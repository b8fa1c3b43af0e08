"""Algorithm 1 of Zhou, Wang & Yu (2019): combine HowNet (SimH) and word2vec (SimD).

    SimD < 0        -> SimD = 0
    SimD < Th1      -> SimD = 0
    SimH < Th2      -> SimH = 0
    SimH = 0        -> Sim = α·SimD
    otherwise       -> Sim = β·SimH + (1 − β)·SimD
    Sim < Th1       -> Sim = 0

Th1 = Th2 = 0.1 is the best setting of their Table 5. One extension, documented: when a word
is missing from the word2vec vocabulary SimD is unknown rather than 0, and Sim = SimH (the
published rule would halve every HowNet score of an out-of-vocabulary word).
A word is always fully similar to itself (Sim = 1), whatever the sources know.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from relevance.hownet import set_identity
from topicrawl.errors import ResourceMissingError


def combine(
    sim_h: np.ndarray | float,
    sim_d: np.ndarray | float,
    *,
    th1: float = 0.1,
    th2: float = 0.1,
    alpha: float = 0.8,
    beta: float = 0.5,
    d_known: np.ndarray | bool = True,
) -> np.ndarray:
    """Algorithm 1 on scalars or arrays (``d_known`` False: SimD unknown, Sim = cut SimH)."""
    h = np.asarray(sim_h, dtype=np.float32)
    d = np.asarray(sim_d, dtype=np.float32)
    d = np.where(d < th1, np.float32(0.0), d)  # covers SimD < 0
    h = np.where(h < th2, np.float32(0.0), h)
    sim = np.where(h == 0, alpha * d, beta * h + (1 - beta) * d)
    sim = np.where(np.asarray(d_known), sim, h)
    return np.where(sim < th1, np.float32(0.0), sim).astype(np.float32)


class CombinedSimilarity:
    """A similarity source over HowNet and/or word2vec sources, combined by Algorithm 1.

    With one source only, its own score is used (cut at its threshold: Th2 for HowNet,
    Th1 for word2vec).
    """

    name = "combined"

    def __init__(
        self,
        hownet=None,
        vectors=None,
        *,
        th1: float = 0.1,
        th2: float = 0.1,
        alpha: float = 0.8,
        beta: float = 0.5,
    ):
        if hownet is None and vectors is None:
            raise ResourceMissingError("no similarity source: configure hownet and/or word2vec")
        self.hownet, self.vectors = hownet, vectors
        self.th1, self.th2, self.alpha, self.beta = th1, th2, alpha, beta

    def __contains__(self, word: object) -> bool:
        return any(word in s for s in (self.hownet, self.vectors) if s is not None)

    def matrix(self, words_a: Sequence[str], words_b: Sequence[str]) -> np.ndarray:
        """Algorithm 1 similarity of every pair (float32, rows ``words_a``)."""
        if self.vectors is None:
            h = self.hownet.matrix(words_a, words_b)
            out = np.where(h < self.th2, np.float32(0.0), h)
        elif self.hownet is None:
            d = self.vectors.matrix(words_a, words_b)
            out = np.where(d < self.th1, np.float32(0.0), d)
        else:
            h = self.hownet.matrix(words_a, words_b)
            d = self.vectors.matrix(words_a, words_b)
            known = self.vectors.known(words_a)[:, None] & self.vectors.known(words_b)[None, :]
            out = combine(
                h,
                d,
                th1=self.th1,
                th2=self.th2,
                alpha=self.alpha,
                beta=self.beta,
                d_known=known,
            )
        set_identity(out, words_a, words_b)
        return out.astype(np.float32)

    def similarity(self, a: str, b: str) -> float:
        return float(self.matrix([a], [b])[0, 0])

    def most_similar(self, word: str, topn: int = 10) -> list[tuple[str, float]]:
        """Neighbours from each source, rescored by Algorithm 1."""
        cands: set[str] = set()
        for s in (self.hownet, self.vectors):
            if s is not None:
                cands.update(w for w, _ in s.most_similar(word, topn=max(topn * 3, 30)))
        cands.discard(word)
        if not cands:
            return []
        words = sorted(cands)
        scores = self.matrix([word], words)[0]
        ranked = sorted(zip(words, scores.tolist(), strict=True), key=lambda t: (-t[1], t[0]))
        return [(w, float(s)) for w, s in ranked[:topn] if s > 0]
