"""Combining similarity sources: the HowNet + Cilin hybrid, and Algorithm 1.

**The hybrid** (朱新华, 马润聪, 孙柳, 陈宏朝 2016, "基于知网与词林的词语语义相似度计算",
中文信息学报 30(4)): two dictionaries cover different words, so

* both dictionaries know both words: Sim = λ·SimHowNet + (1 − λ)·SimCilin;
* one dictionary knows both words: its score;
* HowNet knows one word only and Cilin the other only: the Cilin-only word is replaced by
  its Cilin synonyms (its ``=`` groups) that HowNet knows, and Sim is the largest HowNet
  similarity of the other word to one of them (0 when it has none).

λ = 0.9 was chosen on the tune half of wordsim-297 (docs/benchmarks/relevance.md).

**Algorithm 1** of Zhou, Wang & Yu (2019) combines a dictionary score SimH (HowNet, Cilin or
the hybrid) with word2vec's SimD, exactly as published (``step1 = "paper"``):

    SimD < 0        -> SimD = 0
    SimD < Th1      -> Sim = 0, stop
    SimH < Th2      -> SimH = 0
    SimH = 0        -> Sim = α·SimD
    otherwise       -> Sim = β·SimH + (1 − β)·SimD
    Sim < Th1       -> Sim = 0

Th1 = Th2 = 0.1 is the best setting of their Table 5; β = 0.5; α = 0.5 (the previous default,
0.8, ranks a pair the dictionary calls unrelated above a related one whose SimD is lower:
α = 1 − β scores SimH = 0 as the mean of 0 and SimD). α and the hybrid's λ = 0.9 were chosen
on the tune half of wordsim-297 with fastText vectors (docs/benchmarks/relevance.md).
``step1 = "cut"`` is the variant
topicrawl ran before: SimD < Th1 sets SimD = 0 and goes on (so Sim = β·SimH). A word the
vectors do not know has SimD = 0, the lowest score a known word can have, so an unknown word
never scores above a known one with the same SimH (with ``"paper"`` it scores 0, with
``"cut"`` β·SimH). A word is always fully similar to itself (Sim = 1).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from relevance.hownet import set_identity
from topicrawl.errors import ResourceMissingError

STEP1 = ("paper", "cut")
TH1, TH2, ALPHA, BETA = 0.1, 0.1, 0.5, 0.5  # Algorithm 1 defaults (module docstring)
HYBRID_WEIGHT = 0.9  # λ of HowNet in the hybrid


def _known(source, words: Sequence[str]) -> np.ndarray:
    if hasattr(source, "known"):
        return np.asarray(source.known(words), dtype=bool)
    return np.fromiter((w in source for w in words), dtype=bool, count=len(words))


class HybridSimilarity:
    """HowNet + Cilin, 朱新华 et al. (2016): weighted where both know the words, else the
    one that knows them, else HowNet through the Cilin synonyms."""

    name = "hybrid"

    def __init__(self, hownet, cilin, *, weight: float = HYBRID_WEIGHT):
        self.hownet, self.cilin, self.weight = hownet, cilin, float(weight)

    def __contains__(self, word: object) -> bool:
        return word in self.hownet or word in self.cilin

    def known(self, words: Sequence[str]) -> np.ndarray:
        return _known(self.hownet, words) | _known(self.cilin, words)

    def similarity(self, a: str, b: str) -> float:
        return float(self.matrix([a], [b])[0, 0])

    def _via_synonyms(self, words: Sequence[str], others: Sequence[str]) -> np.ndarray:
        """max over the Cilin synonyms s of each word (known to HowNet) of HowNet(s, other)."""
        out = np.zeros((len(words), len(others)), dtype=np.float32)
        syn: list[str] = []
        owner: list[int] = []
        for i, w in enumerate(words):
            for s in self.cilin.synonyms(w):
                if s in self.hownet:
                    syn.append(s)
                    owner.append(i)
        if syn:
            m = self.hownet.matrix(syn, list(others))
            np.maximum.at(out, np.asarray(owner), m)
        return out

    def matrix(self, words_a: Sequence[str], words_b: Sequence[str]) -> np.ndarray:
        h = self.hownet.matrix(words_a, words_b)
        c = self.cilin.matrix(words_a, words_b)
        ha, hb = _known(self.hownet, words_a), _known(self.hownet, words_b)
        ca, cb = _known(self.cilin, words_a), _known(self.cilin, words_b)
        h_ok = ha[:, None] & hb[None, :]
        c_ok = ca[:, None] & cb[None, :]
        lam = np.float32(self.weight)
        out = np.where(h_ok & c_ok, lam * h + (1 - lam) * c, np.where(h_ok, h, c))
        out = np.where(h_ok | c_ok, out, np.float32(0.0)).astype(np.float32)
        # HowNet knows one word only, Cilin the other only
        a_only_c, b_only_c = ca & ~ha, cb & ~hb
        rows_b = [j for j in range(len(words_b)) if b_only_c[j]]
        rows_a = [i for i in range(len(words_a)) if a_only_c[i]]
        if rows_b and (ha & ~ca).any():
            cross = self._via_synonyms([words_b[j] for j in rows_b], list(words_a)).T
            mask = (ha & ~ca)[:, None]
            out[:, rows_b] = np.where(mask, cross, out[:, rows_b])
        if rows_a and (hb & ~cb).any():
            cross = self._via_synonyms([words_a[i] for i in rows_a], list(words_b))
            mask = (hb & ~cb)[None, :]
            out[rows_a, :] = np.where(mask, cross, out[rows_a, :])
        set_identity(out, words_a, words_b)
        return out

    def most_similar(self, word: str, topn: int = 10) -> list[tuple[str, float]]:
        cands: set[str] = set()
        for s in (self.hownet, self.cilin):
            cands.update(w for w, _ in s.most_similar(word, topn=max(topn * 3, 30)))
        cands.discard(word)
        return _rescore(self, word, cands, topn)


def _rescore(source, word: str, cands: set[str], topn: int) -> list[tuple[str, float]]:
    if not cands:
        return []
    words = sorted(cands)
    scores = source.matrix([word], words)[0]
    ranked = sorted(zip(words, scores.tolist(), strict=True), key=lambda t: (-t[1], t[0]))
    return [(w, float(s)) for w, s in ranked[:topn] if s > 0]


def combine(
    sim_h: np.ndarray | float,
    sim_d: np.ndarray | float,
    *,
    th1: float = TH1,
    th2: float = TH2,
    alpha: float = ALPHA,
    beta: float = BETA,
    d_known: np.ndarray | bool = True,
    step1: str = "paper",
) -> np.ndarray:
    """Algorithm 1 on scalars or arrays (``d_known`` False: the word has no vector, SimD = 0).

    ``step1``: ``"paper"`` (SimD < Th1 ⇒ Sim = 0 at once) or ``"cut"`` (SimD < Th1 ⇒
    SimD = 0, then on).
    """
    if step1 not in STEP1:
        raise ValueError(f"unknown Algorithm 1 step 1 {step1!r} (choose from {', '.join(STEP1)})")
    h = np.asarray(sim_h, dtype=np.float32)
    d = np.where(np.asarray(d_known), np.asarray(sim_d, dtype=np.float32), np.float32(0.0))
    low = d < th1  # covers SimD < 0
    d = np.where(low, np.float32(0.0), d)
    h = np.where(h < th2, np.float32(0.0), h)
    sim = np.where(h == 0, alpha * d, beta * h + (1 - beta) * d)
    if step1 == "paper":
        sim = np.where(low, np.float32(0.0), sim)
    return np.where(sim < th1, np.float32(0.0), sim).astype(np.float32)


class CombinedSimilarity:
    """A dictionary source (HowNet, Cilin or the hybrid) and/or a vector source, combined by
    Algorithm 1.

    With one source only, its own score is used (cut at its threshold: Th2 for the
    dictionary, Th1 for the vectors).
    """

    name = "combined"

    def __init__(
        self,
        hownet=None,
        vectors=None,
        *,
        th1: float = TH1,
        th2: float = TH2,
        alpha: float = ALPHA,
        beta: float = BETA,
        step1: str = "paper",
    ):
        if hownet is None and vectors is None:
            raise ResourceMissingError(
                "no similarity source: configure hownet, cilin and/or word2vec"
            )
        if step1 not in STEP1:
            raise ValueError(f"unknown Algorithm 1 step 1 {step1!r}")
        self.dictionary, self.vectors = hownet, vectors
        self.th1, self.th2, self.alpha, self.beta, self.step1 = th1, th2, alpha, beta, step1

    @property
    def hownet(self):
        """The dictionary source (HowNet, Cilin or the hybrid); the name is historical."""
        return self.dictionary

    def __contains__(self, word: object) -> bool:
        return any(word in s for s in (self.dictionary, self.vectors) if s is not None)

    def matrix(self, words_a: Sequence[str], words_b: Sequence[str]) -> np.ndarray:
        """Algorithm 1 similarity of every pair (float32, rows ``words_a``)."""
        if self.vectors is None:
            h = self.dictionary.matrix(words_a, words_b)
            out = np.where(h < self.th2, np.float32(0.0), h)
        elif self.dictionary is None:
            d = self.vectors.matrix(words_a, words_b)
            out = np.where(d < self.th1, np.float32(0.0), d)
        else:
            h = self.dictionary.matrix(words_a, words_b)
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
                step1=self.step1,
            )
        set_identity(out, words_a, words_b)
        return out.astype(np.float32)

    def similarity(self, a: str, b: str) -> float:
        return float(self.matrix([a], [b])[0, 0])

    def most_similar(self, word: str, topn: int = 10) -> list[tuple[str, float]]:
        """Neighbours from each source, rescored by Algorithm 1."""
        cands: set[str] = set()
        for s in (self.dictionary, self.vectors):
            if s is not None:
                cands.update(w for w, _ in s.most_similar(word, topn=max(topn * 3, 30)))
        cands.discard(word)
        return _rescore(self, word, cands, topn)


def build_similarity(topic) -> CombinedSimilarity:
    """The similarity source a topic names: its dictionary source (HowNet, OpenHowNet,
    Cilin, or the HowNet + Cilin hybrid when both are listed) and/or its vectors, combined
    by Algorithm 1; no fallback (a missing resource raises ``ResourceMissingError``)."""
    s = topic.similarity
    sources = s.sources
    hownet = cilin = vectors = None
    if "hownet" in sources and "openhownet" in sources:
        raise ResourceMissingError("choose one of 'hownet' and 'openhownet', not both")
    if "hownet" in sources:
        from relevance.hownet import HowNetSimilarity

        hn = topic.hownet
        hownet = HowNetSimilarity.from_dir(
            topic.resolve(s.hownet), alpha=hn.alpha, beta=hn.beta, gamma=hn.gamma, delta=hn.delta
        )
    if "openhownet" in sources:
        from relevance.openhownet import OpenHowNetSimilarity

        hownet = OpenHowNetSimilarity.from_resources(topic.resolve(s.openhownet))
    if "cilin" in sources:
        from relevance.cilin import CilinSimilarity

        cilin = CilinSimilarity.from_path(
            topic.resolve(getattr(s, "cilin", "")), method=getattr(s, "cilin_method", "ic")
        )
    if "word2vec" in sources:
        from relevance.vectors import VectorSimilarity

        path = topic.resolve(s.vectors)
        if path is None:
            raise ResourceMissingError("source 'word2vec' needs [similarity] vectors = PATH")
        vectors = VectorSimilarity.from_path(path)
    dictionary = hownet if cilin is None else cilin
    if hownet is not None and cilin is not None:
        dictionary = HybridSimilarity(
            hownet, cilin, weight=getattr(s, "hybrid_weight", HYBRID_WEIGHT)
        )
    return CombinedSimilarity(
        dictionary,
        vectors,
        th1=s.th1,
        th2=s.th2,
        alpha=s.alpha,
        beta=s.beta,
        step1=getattr(s, "step1", "paper"),
    )
