"""HowNet word similarity of Liu Qun & Li Sujian (2002), "基于《知网》的词汇语义相似度计算".

Reads the classic HowNet release: ``glossary.dat`` (word, POS, DEF) and ``WHOLE.DAT`` (the
sememe hierarchy: index, ``english|chinese``, parent index), both GBK with CRLF.

* Sememe similarity (formula 1): ``sim(p1, p2) = α / (d + α)``, d the path length in the
  sememe tree (α = 1.6). Sememes in different trees have no path: similarity 0. A name that
  occurs at several places of the hierarchy takes its closest occurrence.
* A specific word ("具体词", written ``(China|中国)``) against a sememe: γ; two specific words:
  1 if equal, else 0. Any non-empty value against an empty one: δ; empty against empty: 1.
* A content-word concept (DEF) splits into four parts: the first basic sememe (Sim1), the
  other basic sememes and specific words (Sim2), the relational sememes ``key=value`` (Sim3,
  paired only under the same key) and the relational-symbol sememes ``#x``, ``%x``... (Sim4,
  grouped by symbol). A set is compared by greedy pairing (take the most similar pair, remove
  both, repeat; unpaired elements count δ) and averaged over ``max(|A|, |B|)``; grouped parts
  average the groups' set similarities over the union of groups.
* Concept similarity (formula 4): ``Σ_i β_i Π_{j≤i} Sim_j`` with β = (0.5, 0.2, 0.17, 0.13).
* Function words (DEF in braces) compare only their syntactic/relational sememes (a set
  similarity); a function word against a content word: 0.
* Word similarity: the maximum over their concept pairs.

The scalar functions (:func:`parse_def`, :func:`set_similarity`, :func:`concept_similarity`)
are the reference; :class:`HowNetSimilarity` computes the same numbers vectorised with numpy
over many concept pairs at once (the crawl scores a word against hundreds of topic words).
"""

from __future__ import annotations

import hashlib
import os
import pickle
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from topicrawl.errors import ResourceMissingError

SYMBOLS = "#%$*+&~@?!^"
ALPHA = 1.6
BETA = (0.5, 0.2, 0.17, 0.13)
GAMMA = 0.2
DELTA = 0.2

Item = tuple[str, str]  # ("s", sememe name) or ("w", specific word)


@dataclass
class ParsedDef:
    """The four parts of a HowNet DEF (plus the function-word flag)."""

    function: bool = False
    first: Item | None = None
    others: list[Item] = field(default_factory=list)
    relational: list[tuple[str, Item]] = field(default_factory=list)
    symbolic: list[tuple[str, Item]] = field(default_factory=list)


def _split_top(text: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if cur:
        parts.append("".join(cur).strip())
    return [p for p in parts if p]


def _item(text: str) -> Item:
    text = text.strip()
    if text.startswith("(") and text.endswith(")"):
        return ("w", text[1:-1].strip())
    return ("s", text)


def parse_def(definition: str) -> ParsedDef:
    """Split a HowNet DEF such as ``human|人,politics|政,#community|团体`` into its parts."""
    d = definition.strip()
    out = ParsedDef()
    if d.startswith("{") and d.endswith("}"):
        out.function = True
        for part in _split_top(d[1:-1]):
            if "=" in part:
                part = part.split("=", 1)[1]
            if part and part[0] in SYMBOLS:
                part = part[1:]
            out.others.append(_item(part))
        return out
    for part in _split_top(d):
        if part.startswith("(") and part.endswith(")") and "=" in part:
            part = part[1:-1]  # "(关系义原=具体词)"
        if part[0] in SYMBOLS:
            out.symbolic.append((part[0], _item(part[1:])))
        elif "=" in part and not part.startswith("("):
            key, value = part.split("=", 1)
            out.relational.append((key.strip(), _item(value)))
        elif out.first is None:
            out.first = _item(part)
        else:
            out.others.append(_item(part))
    return out


def sememe_similarity(distance: float, *, alpha: float = ALPHA) -> float:
    """Liu Qun formula 1: α / (d + α); an infinite distance (different trees) gives 0."""
    if not np.isfinite(distance):
        return 0.0
    return alpha / (distance + alpha)


def set_similarity(
    a: Sequence[Item],
    b: Sequence[Item],
    item_sim: Callable[[Item, Item], float],
    *,
    delta: float = DELTA,
) -> float:
    """Greedy pairing of two sets (Liu Qun 2002, Sim2): best pair first, unpaired count δ."""
    if not a and not b:
        return 1.0
    if not a or not b:
        return delta
    sims = [[item_sim(x, y) for y in b] for x in a]
    free_a, free_b = set(range(len(a))), set(range(len(b)))
    total = 0.0
    while free_a and free_b:
        i, j = max(((i, j) for i in free_a for j in free_b), key=lambda ij: sims[ij[0]][ij[1]])
        total += sims[i][j]
        free_a.discard(i)
        free_b.discard(j)
    total += delta * abs(len(a) - len(b))
    return total / max(len(a), len(b))


def grouped_similarity(
    a: Sequence[tuple[str, Item]],
    b: Sequence[tuple[str, Item]],
    item_sim: Callable[[Item, Item], float],
    *,
    delta: float = DELTA,
) -> float:
    """Sim3/Sim4: pair only within the same key (relation or symbol); mean over all keys."""
    ga: dict[str, list[Item]] = {}
    gb: dict[str, list[Item]] = {}
    for k, it in a:
        ga.setdefault(k, []).append(it)
    for k, it in b:
        gb.setdefault(k, []).append(it)
    keys = set(ga) | set(gb)
    if not keys:
        return 1.0
    total = 0.0
    for k in keys:
        if k in ga and k in gb:
            total += set_similarity(ga[k], gb[k], item_sim, delta=delta)
        else:
            total += delta
    return total / len(keys)


def concept_similarity(
    a: ParsedDef,
    b: ParsedDef,
    item_sim: Callable[[Item, Item], float],
    *,
    beta: Sequence[float] = BETA,
    delta: float = DELTA,
) -> float:
    """Liu Qun formula 4: Σ_i β_i Π_{j≤i} Sim_j over the four parts (reference version)."""
    if a.function != b.function:
        return 0.0
    if a.function:
        return set_similarity(a.others, b.others, item_sim, delta=delta)
    if a.first is None and b.first is None:
        s1 = 1.0
    elif a.first is None or b.first is None:
        s1 = delta
    else:
        s1 = item_sim(a.first, b.first)
    s2 = set_similarity(a.others, b.others, item_sim, delta=delta)
    s3 = grouped_similarity(a.relational, b.relational, item_sim, delta=delta)
    s4 = grouped_similarity(a.symbolic, b.symbolic, item_sim, delta=delta)
    prod, out = 1.0, 0.0
    for bi, sj in zip(beta, (s1, s2, s3, s4), strict=True):
        prod *= sj
        out += bi * prod
    return out


# --- the dictionary, vectorised ------------------------------------------------------------


def _read_gbk(path: Path) -> list[str]:
    return path.read_bytes().decode("gbk", errors="replace").splitlines()


def read_sememe_tree(path: Path) -> tuple[list[str], np.ndarray]:
    """Parse WHOLE.DAT: node names (``english|chinese``) and parent indices (roots: self)."""
    names, parents = [], []
    for line in _read_gbk(path):
        cols = line.split()
        if len(cols) < 3:
            continue
        idx, name, parent = int(cols[0]), cols[1], int(cols[-1])
        if idx != len(names):
            raise ResourceMissingError(f"{path}: unexpected index {idx} (corrupt WHOLE.DAT?)")
        names.append(name)
        parents.append(parent)
    return names, np.asarray(parents, dtype=np.int64)


def tree_distances(parents: np.ndarray) -> np.ndarray:
    """All-pairs path lengths in the sememe forest (inf between different trees)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import shortest_path

    n = len(parents)
    child = np.arange(n)
    keep = parents != child
    g = coo_matrix((np.ones(keep.sum()), (child[keep], parents[keep])), shape=(n, n))
    return shortest_path(g.tocsr(), directed=False, unweighted=True)


def _pad(rows: list[list[int]], width: int | None = None) -> np.ndarray:
    w = max([len(r) for r in rows] + [1]) if width is None else width
    out = np.full((len(rows), w), -1, dtype=np.int32)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return out


class _Part:
    """One set-valued part of every DEF, padded: items, group ids and per-slot group data."""

    def __init__(self, rows: list[list[tuple[int, int]]]):
        self.items = _pad([[it for _, it in r] for r in rows])
        self.groups = _pad([[g for g, _ in r] for r in rows])
        slots, slot_gid, slot_n, ngroups = [], [], [], []
        for r in rows:
            order: dict[int, int] = {}
            counts: list[int] = []
            s = []
            for g, _ in r:
                if g not in order:
                    order[g] = len(order)
                    counts.append(0)
                counts[order[g]] += 1
                s.append(order[g])
            slots.append(s)
            slot_gid.append(list(order))
            slot_n.append(counts)
            ngroups.append(len(order))
        w = self.items.shape[1]
        self.slot = _pad(slots, w)
        self.slot_gid = _pad(slot_gid, w)
        self.slot_n = np.maximum(_pad(slot_n, w), 0).astype(np.float32)
        self.ngroups = np.asarray(ngroups, dtype=np.float32)
        n_gid = int(self.groups.max()) + 1 if self.groups.size else 1
        self.count = np.zeros((len(rows), max(n_gid, 1)), dtype=np.float32)
        for i, r in enumerate(rows):
            for g, _ in r:
                self.count[i, g] += 1


class HowNetSimilarity:
    """Liu Qun (2002) word similarity over glossary.dat + WHOLE.DAT, in [0, 1].

    ``word in sim``, ``sim.similarity(a, b)``, ``sim.most_similar(word, topn)`` and the
    vectorised ``sim.matrix(words_a, words_b)`` (the crawl's hot path).
    """

    name = "hownet"

    def __init__(
        self,
        entries: Iterable[tuple[str, str, str]],
        tree_names: list[str],
        parents: np.ndarray,
        *,
        alpha: float = ALPHA,
        beta: Sequence[float] = BETA,
        gamma: float = GAMMA,
        delta: float = DELTA,
    ):
        self.alpha, self.beta, self.gamma, self.delta = alpha, tuple(beta), gamma, delta
        # unique sememe names -> id; node-level distances reduced to name level by max sim
        self.sememes: dict[str, int] = {}
        node_name = np.empty(len(tree_names), dtype=np.int64)
        for i, nm in enumerate(tree_names):
            node_name[i] = self.sememes.setdefault(nm, len(self.sememes))
        n_s = len(self.sememes)
        dist = tree_distances(parents)
        with np.errstate(divide="ignore"):
            node_sim = np.where(np.isfinite(dist), alpha / (dist + alpha), 0.0)
        rows = np.zeros((n_s, len(tree_names)))
        np.maximum.at(rows, node_name, node_sim)
        ss = np.zeros((n_s, n_s))
        np.maximum.at(ss.T, node_name, rows.T)
        self._ss = ss.astype(np.float32)
        self._n_sememes = n_s
        self.specific: dict[str, int] = {}  # specific words (and unknown sememes)

        self.words: dict[str, list[int]] = {}
        self.pos: dict[str, list[str]] = {}
        self.defs: list[str] = []
        def_id: dict[str, int] = {}
        for word, pos, definition in entries:
            if definition not in def_id:
                def_id[definition] = len(self.defs)
                self.defs.append(definition)
            ids = self.words.setdefault(word, [])
            if def_id[definition] not in ids:
                ids.append(def_id[definition])
                self.pos.setdefault(word, []).append(pos)
        self._encode()

    # -- loading ---------------------------------------------------------------------------

    @classmethod
    def from_dir(cls, directory: str | Path | None = None, **params: float) -> HowNetSimilarity:
        """Load ``glossary.dat`` and ``WHOLE.DAT`` from ``directory`` (default: shared data)."""
        gl, whole = dictionary_files(directory)
        for p in (gl, whole):
            if not p.exists():
                raise ResourceMissingError(
                    f"HowNet file {p} not found: point [similarity] hownet at a directory with "
                    "glossary.dat and WHOLE.DAT (the classic HowNet release), or set "
                    "TOPICRAWL_DATA"
                )
        return cls.from_files(gl, whole, **params)

    @classmethod
    def from_files(
        cls, glossary: str | Path, whole: str | Path, **params: float
    ) -> HowNetSimilarity:
        cache = _cache_file(Path(glossary), Path(whole), params)
        if cache is not None and cache.exists():
            try:
                with cache.open("rb") as fh:
                    return pickle.load(fh)
            except Exception:  # a stale or partial cache is rebuilt
                pass
        names, parents = read_sememe_tree(Path(whole))
        sim = cls(read_glossary(Path(glossary)), names, parents, **params)
        if cache is not None:
            try:
                cache.parent.mkdir(parents=True, exist_ok=True)
                tmp = cache.with_suffix(f".{os.getpid()}.tmp")
                with tmp.open("wb") as fh:
                    pickle.dump(sim, fh, protocol=pickle.HIGHEST_PROTOCOL)
                tmp.replace(cache)
            except OSError:
                pass
        return sim

    # -- encoding --------------------------------------------------------------------------

    def _item_id(self, item: Item) -> int:
        kind, name = item
        if kind == "s" and name in self.sememes:
            return self.sememes[name]
        key = name if kind == "w" else "?" + name
        return self._n_sememes + self.specific.setdefault(key, len(self.specific))

    def _encode(self) -> None:
        rel_keys: dict[str, int] = {}
        sym_keys: dict[str, int] = {}
        func, first, others, rel, sym = [], [], [], [], []
        for d in self.defs:
            p = parse_def(d)
            func.append(p.function)
            first.append(-1 if p.first is None else self._item_id(p.first))
            others.append([(0, self._item_id(it)) for it in p.others])
            rel.append(
                [
                    (rel_keys.setdefault(k, len(rel_keys)), self._item_id(it))
                    for k, it in p.relational
                ]
            )
            sym.append(
                [(sym_keys.setdefault(k, len(sym_keys)), self._item_id(it)) for k, it in p.symbolic]
            )
        self._func = np.asarray(func, dtype=bool)
        self._first = np.asarray(first, dtype=np.int32)
        self._parts = (_Part(others), _Part(rel), _Part(sym))

    # -- the mapping-like interface ----------------------------------------------------------

    def __contains__(self, word: object) -> bool:
        return word in self.words

    def __len__(self) -> int:
        return len(self.words)

    def concepts(self, word: str) -> list[str]:
        """The DEFs of ``word`` (empty when it is not in the glossary)."""
        return [self.defs[i] for i in self.words.get(word, [])]

    def item_similarity(self, a: Item, b: Item) -> float:
        """Sememe/specific-word similarity (formula 1 with the γ rule), for the reference."""
        return float(self._isim(np.asarray(self._item_id(a)), np.asarray(self._item_id(b))))

    def similarity(self, a: str, b: str) -> float:
        """Word similarity: max over concept pairs; 0 when either word is unknown."""
        return pair_similarity(self, a, b)

    def most_similar(self, word: str, topn: int = 10) -> list[tuple[str, float]]:
        """The ``topn`` glossary words most similar to ``word`` (ties broken by the word)."""
        if word not in self.words:
            return []
        ca = np.asarray(self.words[word])
        all_defs = np.arange(len(self.defs))
        m = np.max(self._concept_matrix(ca, all_defs), axis=0)
        best: list[tuple[float, str]] = []
        for w, ids in self.words.items():
            if w != word:
                best.append((float(m[ids].max()), w))
        best.sort(key=lambda t: (-t[0], t[1]))
        return [(w, s) for s, w in best[:topn]]

    def matrix(self, words_a: Sequence[str], words_b: Sequence[str]) -> np.ndarray:
        """Similarity of every word of ``words_a`` with every word of ``words_b`` (float32)."""
        out = np.zeros((len(words_a), len(words_b)), dtype=np.float32)
        ia = [i for i, w in enumerate(words_a) if w in self.words]
        ib = [j for j, w in enumerate(words_b) if w in self.words]
        if ia and ib:
            ua, inv_a, sa = self._side([words_a[i] for i in ia])
            ub, inv_b, sb = self._side([words_b[j] for j in ib])
            cm = self._concept_matrix(ua, ub)[inv_a][:, inv_b]
            cm = np.maximum.reduceat(cm, sa, axis=0)
            cm = np.maximum.reduceat(cm, sb, axis=1)
            out[np.ix_(ia, ib)] = cm
        set_identity(out, words_a, words_b)
        return out

    def _side(self, words: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Distinct concept ids of ``words``, the inverse map and each word's first row
        (cached for long word lists such as a topic's)."""
        cache = self.__dict__.setdefault("_side_cache", {})
        key = tuple(words) if len(words) >= 64 else None
        if key is not None and key in cache:
            return cache[key]
        c, starts = self._concept_index(words)
        u, inv = np.unique(c, return_inverse=True)
        out = (u, inv.ravel(), starts)
        if key is not None:
            if len(cache) > 8:
                cache.clear()
            cache[key] = out
        return out

    def _concept_index(self, words: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        ids: list[int] = []
        starts: list[int] = []
        for w in words:
            starts.append(len(ids))
            ids.extend(self.words[w])
        return np.asarray(ids, dtype=np.int64), np.asarray(starts, dtype=np.int64)

    # -- vectorised formula 4 --------------------------------------------------------------

    def _isim(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Item similarity, broadcasting; -1 where either side is padding."""
        n = self._n_sememes
        valid = (a >= 0) & (b >= 0)
        sa, sb = (a >= 0) & (a < n), (b >= 0) & (b < n)
        s = self._ss[np.where(sa, a, 0), np.where(sb, b, 0)]
        spec = np.where(a == b, np.float32(1.0), np.float32(0.0))
        out = np.where(sa & sb, s, np.where(~sa & ~sb, spec, np.float32(self.gamma)))
        return np.where(valid, out, np.float32(-1.0)).astype(np.float32)

    def _part_matrix(self, part: _Part, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Grouped greedy set similarity of part rows ``a`` x ``b`` (Sim2, Sim3 or Sim4)."""
        # deduplicate identical rows on both sides, then trim padding columns
        ra, inv_a, wa = self._unique_rows(part, a)
        rb, inv_b, wb = self._unique_rows(part, b)
        out = np.empty((len(ra), len(rb)), dtype=np.float32)
        # chunk the A side to bound memory at ~4M cells
        step = max(1, 4_000_000 // max(1, len(rb) * wa * wb))
        for lo in range(0, len(ra), step):
            out[lo : lo + step] = self._part_block(part, ra[lo : lo + step], rb, wa, wb)
        return out[inv_a][:, inv_b]

    def _unique_rows(self, part: _Part, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
        """Distinct part rows of ``ids`` (their DEF ids), the inverse map and the width.

        Cached for large id sets: the topic side is the same on every call of the crawl.
        """
        cache = self.__dict__.setdefault("_rows_cache", {})
        key = (id(part), ids.tobytes()) if len(ids) >= 64 else None
        if key is not None and key in cache:
            return cache[key]
        k = np.concatenate([part.items[ids], part.groups[ids]], axis=1)
        _, first, inv = np.unique(k, axis=0, return_index=True, return_inverse=True)
        rows = ids[first]
        width = max(int((part.items[rows] >= 0).sum(axis=1).max()), 1)
        out = (rows, inv.ravel(), width)
        if key is not None:
            if len(cache) > 32:
                cache.clear()
            cache[key] = out
        return out

    def _part_block(self, part: _Part, ra: np.ndarray, rb: np.ndarray, wa: int, wb: int):
        delta = np.float32(self.delta)
        ai, ag = part.items[ra, :wa], part.groups[ra, :wa]
        bi, bg = part.items[rb, :wb], part.groups[rb, :wb]
        x = self._isim(ai[:, None, :, None], bi[None, :, None, :])
        same = ag[:, None, :, None] == bg[None, :, None, :]
        x = np.where(same, x, np.float32(-1.0))
        n, m = len(ra), len(rb)
        slot = part.slot[ra, :wa]
        acc = np.zeros((n, m, wa), dtype=np.float32)
        ar_a = np.arange(wa)
        ar_b = np.arange(wb)
        for _ in range(min(wa, wb)):
            flat = x.reshape(n, m, wa * wb)
            k = flat.argmax(axis=2)
            v = np.take_along_axis(flat, k[..., None], axis=2)[..., 0]
            ok = v >= 0
            if not ok.any():
                break
            i, j = k // wb, k % wb
            s = np.take_along_axis(np.broadcast_to(slot[:, None, :], (n, m, wa)), i[..., None], 2)
            acc += np.where((ar_a == s) & ok[..., None], v[..., None], np.float32(0.0))
            kill = (ar_a == i[..., None])[..., None] | (ar_b == j[..., None])[..., None, :]
            x = np.where(kill, np.float32(-1.0), x)
        gid = part.slot_gid[ra, :wa]  # (n, wa)
        na = part.slot_n[ra, :wa][:, None, :]  # (n, 1, wa)
        nb = part.count[rb][:, np.maximum(gid, 0)]  # (m, n, wa)
        nb = np.where(gid[None] >= 0, nb, np.float32(0.0)).transpose(1, 0, 2)
        both = (na > 0) & (nb > 0)
        denom = np.maximum(np.maximum(na, nb), np.float32(1.0))
        gs = np.where(both, (acc + delta * np.abs(na - nb)) / denom, np.float32(0.0))
        inter = both.sum(axis=2).astype(np.float32)
        union = part.ngroups[ra][:, None] + part.ngroups[rb][None, :] - inter
        total = gs.sum(axis=2) + delta * (union - inter)
        return np.where(union > 0, total / np.maximum(union, 1), np.float32(1.0))

    def _concept_matrix(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Formula 4 for every concept (DEF id) of ``a`` against every one of ``b``."""
        a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
        fa, fb = self._first[a][:, None], self._first[b][None, :]
        s1 = self._isim(fa, fb)
        none_a, none_b = fa < 0, fb < 0
        s1 = np.where(none_a & none_b, 1.0, np.where(none_a | none_b, self.delta, s1))
        others, rel, sym = self._parts
        s2 = self._part_matrix(others, a, b)
        s3 = self._part_matrix(rel, a, b)
        s4 = self._part_matrix(sym, a, b)
        b1, b2, b3, b4 = self.beta
        p2 = s1 * s2
        p3 = p2 * s3
        content = b1 * s1 + b2 * p2 + b3 * p3 + b4 * p3 * s4
        func_a, func_b = self._func[a][:, None], self._func[b][None, :]
        out = np.where(func_a & func_b, s2, np.where(func_a | func_b, 0.0, content))
        return out.astype(np.float32)

    def reference_similarity(self, a: str, b: str) -> float:
        """Scalar reference (pure Python) of :meth:`similarity`, for tests."""
        if a == b:
            return 1.0
        best = 0.0
        for da in self.concepts(a):
            for db in self.concepts(b):
                s = concept_similarity(
                    parse_def(da),
                    parse_def(db),
                    self.item_similarity,
                    beta=self.beta,
                    delta=self.delta,
                )
                best = max(best, s)
        return best


def read_glossary(path: Path) -> list[tuple[str, str, str]]:
    """Parse glossary.dat into (word, POS, DEF) rows."""
    rows = []
    for line in _read_gbk(path):
        cols = line.split()
        if len(cols) < 3:
            continue
        # specific words may contain spaces ("(the Ivory Coast|象牙海岸)"): keep the rest
        word, pos, definition = cols[0], cols[1], line.split(None, 2)[2].strip()
        rows.append((word, pos, definition))
    return rows


def dictionary_files(directory: str | Path | None = None) -> tuple[Path, Path]:
    """``glossary.dat`` and ``WHOLE.DAT`` of ``directory`` (default: the shared data's
    ``hownet/``, ResourceMissingError when the data directory lacks it); not checked."""
    if directory is None or str(directory) == "":
        from topicrawl.data import data_path

        directory = data_path("hownet")
    d = Path(directory)
    return d / "glossary.dat", d / "WHOLE.DAT"


def cache_dir() -> Path:
    """Cache directory for parsed dictionaries: :func:`topicrawl.modelcache.cache_dir`
    ($TOPICRAWL_CACHE, else $XDG_CACHE_HOME/topicrawl or ~/.cache/topicrawl)."""
    from topicrawl.modelcache import cache_dir as _cache_dir

    return _cache_dir()


def _cache_file(glossary: Path, whole: Path, params: dict) -> Path | None:
    if os.environ.get("TOPICRAWL_NO_CACHE"):
        return None
    h = hashlib.sha1()
    for p in (glossary, whole):
        st = p.stat()
        h.update(f"{p.resolve()}:{st.st_size}:{st.st_mtime_ns};".encode())
    h.update(repr(sorted(params.items())).encode())
    code = Path(__file__).stat()  # a changed implementation never reads an old pickle
    h.update(f"{code.st_size}:{code.st_mtime_ns}".encode())
    return cache_dir() / f"hownet-{h.hexdigest()[:16]}.pickle"


def pair_similarity(source, a: str, b: str) -> float:
    """One word pair through ``source.matrix`` (a dictionary source with a ``words`` index):
    1 for a word with itself, 0 when either word is unknown."""
    if a == b:
        return 1.0
    if a not in source.words or b not in source.words:
        return 0.0
    return float(source.matrix([a], [b])[0, 0])


def set_identity(out: np.ndarray, words_a: Sequence[str], words_b: Sequence[str]) -> None:
    """Set out[i, j] = 1 where words_a[i] == words_b[j] (a word is its own best match)."""
    pos: dict[str, list[int]] = {}
    for j, w in enumerate(words_b):
        pos.setdefault(w, []).append(j)
    for i, w in enumerate(words_a):
        for j in pos.get(w, ()):
            out[i, j] = 1.0
