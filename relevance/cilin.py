"""Tongyici Cilin (extended, HIT-SCIR) word similarity.

Cilin files every word sense under an 8-character code such as ``Aa01A01=``: five levels
(大类 ``A``, 中类 ``a``, 小类 ``01``, 词群 ``A``, 原子词群 ``01``) and a tag, ``=`` for a
group of synonyms, ``#`` for a group of related (not synonymous) words, ``@`` for a word
that stands alone. Two senses meet at their lowest common ancestor (LCA), at depth
d = 0 (the root) … 5 (the same atomic group).

* **Path and depth** (陈宏朝, 李飞, 朱新华, 马润聪 2016, 中文信息学报 30(5)) — the edges weigh,
  top to bottom, W = (8, 6, 4, 1.5, 0.5); with depth(LCA) = Σ of the edge weights above the
  LCA, path = twice the weights below it, k the distance of the two branches at the level
  under the LCA (``A`` vs ``C``: 2) and n the number of branches there::

      Sim = (depth + α) / (depth + α + path + β),   β = (k / n) · W_d,   α = 0.9

* **Information content** (彭琦, 朱新华, 陈意山 et al. 2018, 计算机应用研究 35(2)) — the
  intrinsic IC of a node from the number of word senses filed under it (Seco et al. 2004),
  IC(c) = 1 − log(1 + hypo(c)) / log(1 + N), N all senses; Jiang-Conrath distance made a
  similarity, Sim = 1 − (IC(c1) + IC(c2) − 2·IC(LCA)) / 2, which with the senses as leaves
  (IC = 1) is IC(LCA).

Both: two senses in one ``=`` group: 1; in one ``#`` group: ``related`` (0.5); an ``@``
group holds one word, so two different words never share it and it is an ordinary leaf;
word similarity = the maximum over the two words' senses; a word Cilin lacks: 0 (and
``word in sim`` is False). The ``#`` value 0.5 is the one the public implementations of the
2016 papers use (from 田久乐 & 赵蔚 2010); the papers' own text was not available here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from relevance.hownet import pair_similarity, set_identity
from topicrawl.errors import ResourceMissingError

# code slices of the five levels; a level's node is the code prefix up to its end
_LEVEL_END = (1, 2, 4, 5, 7)
EDGE_WEIGHTS = (8.0, 6.0, 4.0, 1.5, 0.5)  # root→L1 … L4→L5 (陈宏朝 et al. 2016)
METHODS = ("path", "ic")


def _ordinal(part: str) -> int:
    return int(part) if part.isdigit() else ord(part)


def read_cilin(path: str | Path) -> list[tuple[str, list[str]]]:
    """Parse cilin_ext.txt (GBK): ``(code, words)`` per line."""
    p = Path(path)
    if not p.exists():
        raise ResourceMissingError(
            f"Cilin file {p} not found: point [similarity] cilin at cilin_ext.txt "
            "(Tongyici Cilin extended, HIT-SCIR) or set TOPICRAWL_DATA"
        )
    out = []
    for n, line in enumerate(p.read_bytes().decode("gbk", errors="replace").splitlines(), 1):
        cols = line.split()
        if not cols:
            continue
        code = cols[0]
        if len(code) != 8 or code[7] not in "=#@":
            raise ResourceMissingError(f"{p}:{n}: {code!r} is not a Cilin code (corrupt file?)")
        out.append((code, cols[1:]))
    return out


def dictionary_file(path: str | Path | None = None) -> Path:
    """The Cilin file ``path`` names (default: the shared data's ``cilin/cilin_ext.txt``,
    ResourceMissingError when the data directory lacks it)."""
    if path is None or str(path) == "":
        from topicrawl.data import data_path

        return data_path("cilin", "cilin_ext.txt")
    return Path(path)


class CilinSimilarity:
    """Cilin word similarity (``method`` ``"path"`` or ``"ic"``), in [0, 1].

    ``word in sim``, ``sim.similarity(a, b)``, ``sim.most_similar(word, topn)`` and the
    vectorised ``sim.matrix(words_a, words_b)``.
    """

    name = "cilin"

    def __init__(
        self,
        entries: Iterable[tuple[str, Sequence[str]]],
        *,
        method: str = "path",
        alpha: float = 0.9,
        weights: Sequence[float] = EDGE_WEIGHTS,
        related: float = 0.5,
    ):
        if method not in METHODS:
            raise ValueError(f"unknown Cilin method {method!r} (choose from {', '.join(METHODS)})")
        if len(weights) != 5:
            raise ValueError("Cilin edge weights: 5 numbers, root→L1 … L4→L5")
        self.method, self.alpha, self.related = method, alpha, related
        self.weights = tuple(float(w) for w in weights)
        self.codes: list[str] = []
        self.groups: list[list[str]] = []
        self.words: dict[str, list[int]] = {}
        for code, ws in entries:
            i = len(self.codes)
            self.codes.append(code)
            self.groups.append(list(ws))
            for w in ws:
                senses = self.words.setdefault(w, [])
                if i not in senses:
                    senses.append(i)
        self._encode()

    @classmethod
    def from_path(cls, path: str | Path | None = None, **params) -> CilinSimilarity:
        """Load cilin_ext.txt (default: the shared data's ``cilin/cilin_ext.txt``)."""
        return cls(read_cilin(dictionary_file(path)), **params)

    # -- encoding ----------------------------------------------------------------------------

    def _encode(self) -> None:
        n = len(self.codes)
        node_id: dict[str, int] = {"": 0}
        prefix = np.zeros((n, 6), dtype=np.int64)  # node id of the ancestor at depth 0..5
        ordinal = np.zeros((n, 5), dtype=np.int64)  # position of the branch at levels 1..5
        start = 0
        for i, code in enumerate(self.codes):
            start = 0
            for lvl, end in enumerate(_LEVEL_END, 1):
                prefix[i, lvl] = node_id.setdefault(code[:end], len(node_id))
                ordinal[i, lvl - 1] = _ordinal(code[start:end])
                start = end
        parent = np.zeros(len(node_id), dtype=np.int64)
        for i in range(n):
            for lvl in range(1, 6):
                parent[prefix[i, lvl]] = prefix[i, lvl - 1]
        children = np.bincount(parent[1:], minlength=len(node_id))  # the root is not a child
        senses = np.zeros(len(node_id), dtype=np.float64)
        for i, ws in enumerate(self.groups):
            for lvl in range(6):
                senses[prefix[i, lvl]] += len(ws)
        self._prefix, self._ordinal = prefix, ordinal
        self._children = children.astype(np.float64)
        self._tag = np.asarray([c[7] for c in self.codes])
        total = senses[0]
        self._ic = np.clip(1.0 - np.log1p(senses) / math.log1p(total), 0.0, 1.0)
        w = np.asarray(self.weights)
        # depth(LCA) and path for an LCA at depth d = 0..4
        self._depth = np.asarray([w[:d].sum() for d in range(5)])
        self._path = np.asarray([2 * w[d:].sum() for d in range(5)])

    # -- the mapping-like interface ---------------------------------------------------------

    def __contains__(self, word: object) -> bool:
        return word in self.words

    def __len__(self) -> int:
        return len(self.words)

    def senses(self, word: str) -> list[str]:
        """The Cilin codes of ``word`` (empty when Cilin lacks it)."""
        return [self.codes[i] for i in self.words.get(word, [])]

    def synonyms(self, word: str) -> list[str]:
        """The other words of ``word``'s ``=`` groups."""
        out: dict[str, None] = {}
        for i in self.words.get(word, []):
            if self.codes[i][7] == "=":
                out.update(dict.fromkeys(w for w in self.groups[i] if w != word))
        return list(out)

    def code_similarity(self, c1: str, c2: str) -> float:
        """Similarity of two senses given by their codes (both must be in the file)."""
        i, j = self.codes.index(c1), self.codes.index(c2)
        return float(self._sense_matrix(np.asarray([i]), np.asarray([j]))[0, 0])

    def similarity(self, a: str, b: str) -> float:
        return pair_similarity(self, a, b)

    def most_similar(self, word: str, topn: int = 10) -> list[tuple[str, float]]:
        if word not in self.words:
            return []
        s = self._sense_matrix(np.asarray(self.words[word]), np.arange(len(self.codes))).max(0)
        best: dict[str, float] = {}
        for i in np.argsort(-s, kind="stable"):
            if len(best) >= topn + 1 and s[i] < min(best.values()):
                break
            for w in self.groups[i]:
                if w != word and w not in best:
                    best[w] = float(s[i])
        ranked = sorted(best.items(), key=lambda t: (-t[1], t[0]))
        return ranked[:topn]

    def matrix(self, words_a: Sequence[str], words_b: Sequence[str]) -> np.ndarray:
        """Similarity of every word of ``words_a`` with every word of ``words_b`` (float32)."""
        out = np.zeros((len(words_a), len(words_b)), dtype=np.float32)
        ia = [i for i, w in enumerate(words_a) if w in self.words]
        ib = [j for j, w in enumerate(words_b) if w in self.words]
        if ia and ib:
            sa, st_a = self._side([words_a[i] for i in ia])
            sb, st_b = self._side([words_b[j] for j in ib])
            m = self._sense_matrix(sa, sb)
            m = np.maximum.reduceat(m, st_a, axis=0)
            m = np.maximum.reduceat(m, st_b, axis=1)
            out[np.ix_(ia, ib)] = m
        set_identity(out, words_a, words_b)
        return out

    def _side(self, words: list[str]) -> tuple[np.ndarray, np.ndarray]:
        cache = self.__dict__.setdefault("_side_cache", {})
        key = tuple(words) if len(words) >= 32 else None
        if key is not None and key in cache:
            return cache[key]
        ids: list[int] = []
        starts: list[int] = []
        for w in words:
            starts.append(len(ids))
            ids.extend(self.words[w])
        out = (np.asarray(ids, dtype=np.int64), np.asarray(starts, dtype=np.int64))
        if key is not None:
            if len(cache) > 8:
                cache.clear()
            cache[key] = out
        return out

    def _sense_matrix(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Similarity of every sense (code index) of ``a`` with every one of ``b``."""
        pa, pb = self._prefix[a][:, None, 1:], self._prefix[b][None, :, 1:]
        d = (pa == pb).sum(axis=2)  # depth of the LCA: prefixes are nested
        same = d == 5
        dd = np.minimum(d, 4)
        if self.method == "path":
            oa = np.take_along_axis(
                np.broadcast_to(self._ordinal[a][:, None, :], (*d.shape, 5)), dd[..., None], 2
            )[..., 0]
            ob = np.take_along_axis(
                np.broadcast_to(self._ordinal[b][None, :, :], (*d.shape, 5)), dd[..., None], 2
            )[..., 0]
            k = np.abs(oa - ob).astype(np.float64)
            lca = np.take_along_axis(
                np.broadcast_to(self._prefix[a][:, None, :], (*d.shape, 6)), dd[..., None], 2
            )[..., 0]
            n = np.maximum(self._children[lca], 1.0)
            w = np.asarray(self.weights)[dd]
            depth, path = self._depth[dd], self._path[dd]
            beta = k / n * w
            sim = (depth + self.alpha) / (depth + self.alpha + path + beta)
        else:
            lca = np.take_along_axis(
                np.broadcast_to(self._prefix[a][:, None, :], (*d.shape, 6)), d[..., None], 2
            )[..., 0]
            sim = self._ic[lca]
        tag = self._tag[a][:, None]
        sim = np.where(same, np.where(tag == "#", self.related, 1.0), sim)
        return sim.astype(np.float32)
