"""DWDCS: near-duplicate detection based on concepts and a semantic (small-world) network.

Cao Yujuan, Niu Zhendong, Zhao Kun & Peng Xueping, "基于概念和语义网络的近似网页检测算法"
(Near-duplicate web pages detection based on concept and semantic network), 软件学报
(Journal of Software) 22(8):1816-1826, 2011.  The key-concept step improves the small-world
keyword extraction of Matsuo, Ohsawa & Ishizuka (KeyWorld, 2001).

Procedure, one function each (all pure; the detector at the end stores the features):

1. :func:`tokenize` -- segmentation (:mod:`topicrawl.segment` for Chinese, a letter regex for
   English) and stop-word removal.  The filtered word sequence defines every *position* below.
2. :class:`ConceptLexicon` -- words are mapped to *concepts* by merging synonym groups: the
   Tongyici Cilin ``=`` groups and the HowNet groups of words sharing one DEF; two groups are
   one concept when ``Rel(c1, c2) = |c1 ∩ c2| / ((|c1| + |c2|) / 2) > Relthr`` (overlap over
   mean size).  Words in no group are their own concept.
3. :func:`concept_network` -- concepts of frequency ``> fthr`` are nodes; two nodes are linked
   when they occur at distance ``<= window`` (2) in the word sequence; nodes outside the main
   connected component are dropped.
4. :func:`key_concepts` -- ``d`` is the average shortest-path length of the network; for the
   ``l`` (30) highest-degree nodes ``CB_i = d_absent(i) - d``, where ``d_absent(i)`` is the
   average path length of the network without node ``i``; the ``p`` (20) largest ``CB`` are
   the key concepts.  :func:`key_concepts_networkx` is the straightforward reference.
5. :func:`extract_features` -- the feature vector is the position list of every key concept.
6. :func:`similarity` -- a candidate is a near-duplicate when the cosine of the key-concept
   frequency vectors is ``> sim_thr`` (0.9) and the mean variance ``S`` of the key-concept
   position distances (formulas 10-13) is ``< s_thr``.
7. :class:`DWDCSDetector` -- an inverted index over each document's top ``n`` key concepts
   in the :class:`~dedup.storage.IndexStorage`; documents are inserted incrementally.

Supported languages: Chinese (``lang="zh"``: jieba words, Cilin + HowNet concepts) and
English (``lang="en"``: lower-cased letter tokens with plural ``s`` folded, the packaged
stopwords-iso list; no synonym dictionary, so each word form is its own concept).  The
detector treats ``zh*`` and an empty ``Doc.lang`` as Chinese and any other language as
English-like (:func:`dedup.featurecode.method_lang`).

Choices the paper leaves open, made here and documented where they are made: unreachable
pairs after a removal count as distance ``n`` (the component size), so a node whose removal
cuts the network gets a large ``CB``; an occurrence is paired with the nearest occurrence in
the other document after the global shift (:func:`position_variance`); ``s_thr`` (in squared
word positions) is ours, see :func:`similarity`; HowNet DEFs shared by more than 20 words or
naming a ProperName are categories, not synonyms, and are not merged
(:func:`load_hownet_groups`).
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from dedup.base import Doc, PostingIndexDetector, register
from dedup.cilin import load_cilin, synonym_groups
from dedup.featurecode import method_lang
from dedup.storage import IndexStorage
from dedup.text import to_simplified
from topicrawl.data import data_path
from topicrawl.errors import ConfigError, ResourceMissingError
from topicrawl.segment import segment_zh

# --------------------------------------------------------------------------------------
# 1. segmentation and stop words
# --------------------------------------------------------------------------------------

_PACKAGE_DATA = Path(__file__).resolve().parent / "data"
_EN_TOKEN = re.compile(r"[a-z][a-z']*[a-z]|[a-z]")
_HAS_WORD_CHAR = re.compile(r"[\w]", re.UNICODE)


@lru_cache(maxsize=8)
def load_stopwords(lang: str = "zh") -> frozenset[str]:
    """The stop-word list for ``lang``: the packaged ``dedup/data/stopwords_<lang>.txt`` if
    present, else stopwordsiso's list.  An empty list is an error, never a silent no-op."""
    words: set[str] = set()
    packaged = _PACKAGE_DATA / f"stopwords_{lang}.txt"
    if packaged.exists():
        words = {w.strip() for w in packaged.read_text(encoding="utf-8").splitlines()}
        words = {w for w in words if w and not w.startswith("#")}
    else:
        try:
            import stopwordsiso
        except ImportError as exc:  # pragma: no cover - stopwordsiso is a dependency
            raise ResourceMissingError("no stop-word list: pip install stopwordsiso") from exc
        words = set(stopwordsiso.stopwords(lang) or ())
    if not words:
        raise ResourceMissingError(
            f"no stop words for language {lang!r}: add dedup/data/stopwords_{lang}.txt"
        )
    return frozenset(words)


def _fold_en(word: str) -> str:
    """Fold English plurals (``foods`` -> ``food``, ``studies`` -> ``study``)."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def tokenize(
    text: str,
    *,
    lang: str = "zh",
    stopwords: Iterable[str] | None = None,
    min_chars: int = 2,
) -> list[str]:
    """Segment ``text`` and drop stop words, punctuation, numbers and words shorter than
    ``min_chars`` characters (single Chinese characters are mostly function words or
    segmentation debris).  ``stopwords=None`` uses :func:`load_stopwords` for ``lang``."""
    stop = load_stopwords(lang) if stopwords is None else frozenset(stopwords)
    if lang == "en":
        out = []
        for tok in _EN_TOKEN.findall(unicodedata.normalize("NFKC", text).lower()):
            tok = tok.strip("'")
            if len(tok) >= min_chars and tok not in stop:
                tok = _fold_en(tok)
                if tok not in stop:
                    out.append(tok)
        return out
    if lang != "zh":
        raise ConfigError(f"DWDCS supports lang 'zh' and 'en', not {lang!r}")
    out = []
    for tok in segment_zh(to_simplified(text)):  # shared with relevance and SpotSigs
        tok = tok.strip().lower()
        if (
            len(tok) >= min_chars
            and tok not in stop
            and _HAS_WORD_CHAR.search(tok)
            and not tok.replace(".", "").isdigit()
        ):
            out.append(tok)
    return out


# --------------------------------------------------------------------------------------
# 2. concepts: Cilin and HowNet synonym groups merged by Rel
# --------------------------------------------------------------------------------------


def relatedness(a: set[str], b: set[str]) -> float:
    """``Rel(c1, c2) = |c1 ∩ c2| / ((|c1| + |c2|) / 2)``: overlap over mean size, in [0, 1]."""
    if not a or not b:
        return 0.0
    return 2.0 * len(a & b) / (len(a) + len(b))


def merge_groups(groups: Mapping[str, Sequence[str]], *, rel_thr: float = 0.5) -> dict[str, str]:
    """Merge synonym groups whose ``Rel > rel_thr`` (union-find); return ``{group: root}``,
    the root being the earliest group of its concept in ``groups`` order."""
    keys = list(groups)
    order = {k: i for i, k in enumerate(keys)}
    sets = {k: set(v) for k, v in groups.items()}
    parent = {k: k for k in keys}

    def find(k: str) -> str:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    by_word: dict[str, list[str]] = {}
    for k in keys:
        for w in sets[k]:
            by_word.setdefault(w, []).append(k)
    seen: set[tuple[str, str]] = set()
    for ks in by_word.values():
        for i in range(len(ks)):
            for j in range(i + 1, len(ks)):
                pair = (ks[i], ks[j])
                if pair in seen:
                    continue
                seen.add(pair)
                if relatedness(sets[ks[i]], sets[ks[j]]) > rel_thr:
                    ra, rb = find(ks[i]), find(ks[j])
                    if ra != rb:
                        if order[ra] > order[rb]:
                            ra, rb = rb, ra
                        parent[rb] = ra
    return {k: find(k) for k in keys}


def load_hownet_groups(
    path: str | Path | None = None,
    *,
    max_group: int = 20,
    encoding: str = "gbk",
) -> dict[str, list[str]]:
    """HowNet ``glossary.dat`` (``word POS DEF`` whitespace columns) as ``{DEF: words}``.

    Only DEFs shared by 2..``max_group`` words and without ``ProperName`` are kept: a DEF
    such as ``disease|疾病`` (409 words) or ``place|地方,city|市,ProperName|专`` (every city)
    names a category, not a set of synonyms, and merging it would make 上海 = 广州."""
    path = Path(path) if path is not None else data_path("hownet", "glossary.dat")
    try:
        text = path.read_bytes().decode(encoding)
    except UnicodeDecodeError as exc:
        raise ResourceMissingError(f"{path} is not {encoding}-encoded HowNet: {exc}") from exc
    groups: dict[str, list[str]] = {}
    for number, line in enumerate(text.splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) < 3:
            raise ResourceMissingError(f"{path}:{number}: not a 'word POS DEF' HowNet line")
        word, definition = parts[0], parts[-1]
        members = groups.setdefault(definition, [])
        if word not in members:
            members.append(word)
    return {
        d: ws for d, ws in groups.items() if 2 <= len(ws) <= max_group and "ProperName" not in d
    }


class ConceptLexicon:
    """Word -> concept id.  A word belongs to the concept of the first group (Cilin first, then
    HowNet) that lists it; a word in no group is its own concept.  Read-only, mapping-like."""

    def __init__(
        self,
        word_concept: Mapping[str, str],
        labels: Mapping[str, str] | None = None,
        senses: Mapping[str, tuple[str, ...]] | None = None,
    ):
        self._map = dict(word_concept)
        self._labels = dict(labels or {})
        #: word -> every concept of its groups, in group order (only words with several)
        self._senses = {w: tuple(c) for w, c in (senses or {}).items() if len(c) > 1}

    @classmethod
    def from_groups(
        cls, groups: Mapping[str, Sequence[str]], *, rel_thr: float = 0.5
    ) -> ConceptLexicon:
        """Build from ``{group key: words}`` (ordered by priority), merging by Rel."""
        root = merge_groups(groups, rel_thr=rel_thr)
        word_concept: dict[str, str] = {}
        labels: dict[str, str] = {}
        senses: dict[str, list[str]] = {}
        for key, words in groups.items():
            r = root[key]
            if r == key and words:
                labels[r] = words[0]
            for w in words:
                word_concept.setdefault(w, r)
                have = senses.setdefault(w, [])
                if r not in have:
                    have.append(r)
        return cls(word_concept, labels, senses)

    @classmethod
    def from_paths(
        cls,
        cilin: str | Path | None = None,
        hownet: str | Path | None = None,
        *,
        rel_thr: float = 0.5,
        max_def_group: int = 20,
    ) -> ConceptLexicon:
        """Cilin ``=`` groups (keys ``c:<code>``) then HowNet DEF groups (``h:<DEF>``)."""
        groups: dict[str, Sequence[str]] = {
            f"c:{code}": words for code, words in synonym_groups(load_cilin(cilin)).items()
        }
        for definition, words in load_hownet_groups(hownet, max_group=max_def_group).items():
            groups[f"h:{definition}"] = words
        return cls.from_groups(groups, rel_thr=rel_thr)

    @classmethod
    def identity(cls) -> ConceptLexicon:
        """No merging: every word is its own concept (English, or tests)."""
        return cls({})

    def concept(self, word: str) -> str:
        return self._map.get(word, word)

    def label(self, concept: str) -> str:
        """A readable word for a concept id (the first word of its first group)."""
        return self._labels.get(concept, concept)

    def __contains__(self, word: object) -> bool:
        return word in self._map

    def __len__(self) -> int:
        return len(self._map)

    def concepts(self, words: Iterable[str], *, senses: str = "first") -> list[str]:
        """The concept of each word. ``senses="first"``: the concept of the word's first group;
        ``"all"``: every group of the word is a candidate, and the document decides -- a word
        with several concepts takes the one that the document's words name most often (ties:
        the first group), so synonyms that share only a secondary sense still meet."""
        get = self._map.get
        if senses == "first" or not self._senses:
            return [get(w, w) for w in words]
        if senses != "all":
            raise ConfigError(f"DWDCS senses must be 'first' or 'all', not {senses!r}")
        words = list(words)
        many = self._senses
        votes: Counter[str] = Counter()
        for w in words:
            cs = many.get(w)
            if cs is not None:
                votes.update(cs)
            else:
                votes[get(w, w)] += 1
        out = []
        for w in words:
            cs = many.get(w)
            out.append(get(w, w) if cs is None else max(cs, key=lambda c: votes[c]))
        return out


@lru_cache(maxsize=4)
def default_lexicon(rel_thr: float = 0.5, max_def_group: int = 20) -> ConceptLexicon:
    """The shared Cilin + HowNet lexicon (loaded once per process, ~0.5 s)."""
    return ConceptLexicon.from_paths(rel_thr=rel_thr, max_def_group=max_def_group)


# --------------------------------------------------------------------------------------
# 3. the concept co-occurrence network
# --------------------------------------------------------------------------------------


@dataclass
class ConceptNetwork:
    """The main connected component: ``nodes`` in first-occurrence order, ``first`` = first
    position of each node in the sequence, ``edges`` = ``(E, 2)`` int array of index pairs
    ``i < j`` in lexicographic order."""

    nodes: list[str]
    edges: np.ndarray
    first: list[int]

    def __post_init__(self) -> None:
        n = len(self.nodes)
        e = np.asarray(self.edges, dtype=np.int64).reshape(-1, 2)
        self.edges = e
        rows = np.concatenate([e[:, 0], e[:, 1]])
        cols = np.concatenate([e[:, 1], e[:, 0]])
        order = np.lexsort((cols, rows))
        #: CSR structure of the symmetric adjacency matrix
        self.indices = cols[order]
        self.indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=n), out=self.indptr[1:])

    def csr(self) -> csr_matrix:
        n = len(self.nodes)
        data = np.ones(len(self.indices), dtype=np.int8)
        return csr_matrix((data, self.indices, self.indptr), shape=(n, n))

    def degrees(self) -> np.ndarray:
        return np.diff(self.indptr)


def concept_network(seq: Sequence[str], *, fthr: int = 1, window: int = 2) -> ConceptNetwork:
    """Nodes: concepts with frequency ``> fthr``; edges: two different nodes at distance
    ``<= window`` in ``seq`` (the stop-word-filtered sequence, positions counted before the
    frequency filter).  Only the largest connected component is kept (ties: the one whose
    first node occurs first)."""
    counts = Counter(seq)
    index: dict[str, int] = {}
    first: list[int] = []
    for pos, c in enumerate(seq):
        if c not in index and counts[c] > fthr:
            index[c] = len(index)
            first.append(pos)
    nodes = list(index)
    n = len(nodes)
    if n == 0:
        return ConceptNetwork([], np.zeros((0, 2), dtype=np.int64), [])
    ids = np.fromiter((index.get(c, -1) for c in seq), dtype=np.int64, count=len(seq))
    codes = [np.zeros(0, dtype=np.int64)]
    for step in range(1, window + 1):
        a, b = ids[:-step], ids[step:]
        ok = (a >= 0) & (b >= 0) & (a != b)
        a, b = a[ok], b[ok]
        codes.append(np.minimum(a, b) * n + np.maximum(a, b))
    code = np.unique(np.concatenate(codes))
    edges = np.stack([code // n, code % n], axis=1)
    full = ConceptNetwork(nodes, edges, first)
    n_comp, labels = connected_components(full.csr(), directed=False)
    if n_comp == 1:
        return full
    sizes = np.bincount(labels, minlength=n_comp)
    # largest component; ties -> the component containing the lowest node index
    first_node = np.full(n_comp, n)
    np.minimum.at(first_node, labels, np.arange(n))
    best = max(range(n_comp), key=lambda c: (sizes[c], -int(first_node[c])))
    keep = labels == best
    remap = np.cumsum(keep) - 1
    sub = edges[keep[edges[:, 0]]]
    return ConceptNetwork(
        [nodes[i] for i in np.flatnonzero(keep)],
        remap[sub],
        [first[i] for i in np.flatnonzero(keep)],
    )


# --------------------------------------------------------------------------------------
# 4. key concepts: CB_i = d_absent(i) - d over the l highest-degree nodes
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class KeyConcept:
    concept: str
    cb: float
    degree: int


def _candidates(net: ConceptNetwork, deg: np.ndarray, l_top: int) -> list[int]:
    """The ``l`` highest-degree nodes; ties by first occurrence."""
    return sorted(range(len(net.nodes)), key=lambda i: (-int(deg[i]), i))[:l_top]


def _rank(
    net: ConceptNetwork, deg: np.ndarray, cand: list[int], totals: dict[int, int], p: int
) -> list[KeyConcept]:
    n = len(net.nodes)
    pairs = n * (n - 1)
    base = totals[-1] / pairs if pairs else 0.0
    m = n - 1
    out = []
    for i in cand:
        d_abs = totals[i] / (m * (m - 1)) if m > 1 else 0.0
        out.append(KeyConcept(net.nodes[i], d_abs - base, int(deg[i])))
    order = sorted(range(len(cand)), key=lambda k: (-out[k].cb, -out[k].degree, cand[k]))
    return [out[k] for k in order[:p]]


def _distance_totals(net: ConceptNetwork, blocked: Sequence[int]) -> list[int]:
    """For each entry ``b`` of ``blocked`` (a node index, or -1 for none), the sum over ordered
    pairs ``s != t`` of ``dist(s, t)`` in the network without that node, a pair that is not
    connected counting ``n``.

    Bit-parallel breadth-first search from every source at once, for every removal at once:
    a frontier is a ``(n nodes, blocks * words)`` ``uint64`` array whose bit ``s`` in block
    ``b`` says "reached from source ``s`` in graph ``b``"; one BFS level is a gather of the
    frontier rows along the CSR column indices and an OR-reduction per CSR row
    (``np.bitwise_or.reduceat``), i.e. ``O(m)`` word operations per level for ``64`` sources
    per word.  The removed node is masked out of its block, so it is never reached and never
    relays."""
    n = len(net.nodes)
    nb = len(blocked)
    if n <= 1:
        return [0] * nb
    indptr, indices = net.indptr, net.indices
    words = (n + 63) // 64
    cols = nb * words
    src = np.arange(n)
    # frontier / visited: row = node, column block b = sources of graph b, as bits
    start = np.zeros((n, nb, words), dtype=np.uint64)
    start[src, :, src // 64] = np.left_shift(np.uint64(1), (src % 64).astype(np.uint64))[:, None]
    allowed = np.ones((n, nb, words), dtype=bool)
    for b, node in enumerate(blocked):
        if node >= 0:
            start[node, b, :] = 0
            allowed[node, b, :] = False
    full = np.uint64(0xFFFFFFFFFFFFFFFF)
    allowed_mask = np.where(allowed, full, np.uint64(0)).reshape(n, cols)
    frontier = start.reshape(n, cols)
    visited = frontier.copy()
    totals = np.zeros(nb, dtype=np.int64)
    reached = np.zeros(nb, dtype=np.int64)
    row_starts = indptr[:-1]
    level = 0
    while True:
        level += 1
        nxt = np.bitwise_or.reduceat(frontier[indices], row_starts, axis=0)
        nxt &= ~visited
        nxt &= allowed_mask
        counts = np.bitwise_count(nxt).reshape(n, nb, words).sum(axis=(0, 2), dtype=np.int64)
        if not counts.any():
            break
        totals += level * counts
        reached += counts
        visited |= nxt
        frontier = nxt
    out = []
    for b, node in enumerate(blocked):
        k = n - 1 if node >= 0 else n
        pairs = k * (k - 1)
        out.append(int(totals[b]) + n * (pairs - int(reached[b])))
    return out


def key_concepts_of_network(
    net: ConceptNetwork,
    *,
    l: int = 30,  # noqa: E741
    p: int = 20,
) -> list[KeyConcept]:
    """Key concepts of a connected network, best first (fast version).

    ``d = Σ_{s≠t} dist(s, t) / (n (n-1))``; for each of the ``l`` highest-degree nodes ``i``,
    ``d_absent(i)`` is the same over the ``n-1`` remaining nodes, a pair disconnected by the
    removal counting ``n``; ``CB_i = d_absent(i) - d``; the ``p`` largest are returned.
    All ``l + 1`` all-pairs computations run in one bit-parallel BFS over the CSR graph
    (:func:`_distance_totals`).  Sums are integers, so the ranking equals
    :func:`key_concepts_networkx` exactly."""
    n = len(net.nodes)
    if n == 0:
        return []
    deg = net.degrees()
    cand = _candidates(net, deg, l)
    sums = _distance_totals(net, [-1, *cand])
    totals = {-1: sums[0], **{i: s for i, s in zip(cand, sums[1:], strict=True)}}
    return _rank(net, deg, cand, totals, p)


def key_concepts_networkx(
    seq: Sequence[str],
    *,
    fthr: int = 1,
    window: int = 2,
    l: int = 30,  # noqa: E741
    p: int = 20,
) -> list[KeyConcept]:
    """Reference version of :func:`key_concepts`, written independently and straightforwardly:
    the network built in pure Python into a networkx graph, the main component by
    ``nx.connected_components``, and for each of the ``l`` removals a copy of the graph
    without the node and ``nx.all_pairs_shortest_path_length`` from scratch.  Same
    definitions (unreachable pair = ``n``) and tie-breaks (degree, then first occurrence);
    used by the equality test and the bench."""
    import networkx as nx

    counts = Counter(seq)
    first: dict[str, int] = {}
    for pos, c in enumerate(seq):
        if counts[c] > fthr and c not in first:
            first[c] = pos
    g = nx.Graph()
    g.add_nodes_from(first)
    for pos, c in enumerate(seq):
        if c not in first:
            continue
        for other in seq[pos + 1 : pos + 1 + window]:
            if other in first and other != c:
                g.add_edge(c, other)
    if g.number_of_nodes() == 0:
        return []
    main = max(nx.connected_components(g), key=lambda cc: (len(cc), -min(first[c] for c in cc)))
    g = g.subgraph(main).copy()
    n = g.number_of_nodes()

    def total(h: nx.Graph) -> int:
        m = h.number_of_nodes()
        s = 0
        for _, lengths in nx.all_pairs_shortest_path_length(h):
            s += sum(lengths.values()) + n * (m - len(lengths))
        return s

    d = total(g) / (n * (n - 1)) if n > 1 else 0.0
    cand = sorted(g.nodes, key=lambda c: (-g.degree(c), first[c]))[:l]
    found = []
    for c in cand:
        h = g.copy()
        h.remove_node(c)
        m = n - 1
        d_absent = total(h) / (m * (m - 1)) if m > 1 else 0.0
        found.append(KeyConcept(c, d_absent - d, g.degree(c)))
    found.sort(key=lambda k: (-k.cb, -k.degree, first[k.concept]))
    return found[:p]


def key_concepts(
    seq: Sequence[str],
    *,
    fthr: int = 1,
    window: int = 2,
    l: int = 30,  # noqa: E741
    p: int = 20,
) -> list[KeyConcept]:
    """The ``p`` key concepts of a concept sequence, best first (paper section 3, CB_i)."""
    return key_concepts_of_network(concept_network(seq, fthr=fthr, window=window), l=l, p=p)


# --------------------------------------------------------------------------------------
# 5-6. features and similarity (formulas 10-13)
# --------------------------------------------------------------------------------------


@dataclass
class DWDCSFeatures:
    """Key concepts (best first) and their positions in the filtered word sequence."""

    keys: list[str]
    positions: dict[str, list[int]] = field(default_factory=dict)
    length: int = 0

    def to_json(self) -> str:
        return json.dumps(
            {"k": self.keys, "p": [self.positions[k] for k in self.keys], "n": self.length},
            ensure_ascii=False,
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, raw: str | bytes) -> DWDCSFeatures:
        data = json.loads(raw)
        return cls(list(data["k"]), dict(zip(data["k"], data["p"], strict=True)), data["n"])


def features_of_sequence(
    seq: Sequence[str],
    *,
    fthr: int = 1,
    window: int = 2,
    l: int = 30,  # noqa: E741
    p: int = 20,
) -> DWDCSFeatures:
    """Key concepts of ``seq`` and their position lists (the feature vector)."""
    keys = [k.concept for k in key_concepts(seq, fthr=fthr, window=window, l=l, p=p)]
    wanted = set(keys)
    positions: dict[str, list[int]] = {k: [] for k in keys}
    for pos, c in enumerate(seq):
        if c in wanted:
            positions[c].append(pos)
    return DWDCSFeatures(keys, positions, len(seq))


def extract_features(
    text: str,
    *,
    lang: str = "zh",
    lexicon: ConceptLexicon | None = None,
    stopwords: Iterable[str] | None = None,
    fthr: int = 1,
    window: int = 2,
    l: int = 30,  # noqa: E741
    p: int = 20,
    senses: str = "first",
) -> DWDCSFeatures:
    """Text -> DWDCS features.  ``lexicon=None`` uses :func:`default_lexicon` for Chinese and
    no merging for English; ``senses``: see :meth:`ConceptLexicon.concepts`."""
    if lexicon is None:
        lexicon = default_lexicon() if lang == "zh" else ConceptLexicon.identity()
    seq = lexicon.concepts(tokenize(text, lang=lang, stopwords=stopwords), senses=senses)
    return features_of_sequence(seq, fthr=fthr, window=window, l=l, p=p)


def cosine(a: DWDCSFeatures, b: DWDCSFeatures) -> float:
    """Cosine of the key-concept frequency vectors (frequency = length of the position list)
    over the union of both documents' key concepts, a concept that is not a key concept of a
    document counting 0 there.  (Reading each document's full concept counts instead was
    tried: reprints gain a little, but cut and commented copies gain more -- F1 0.83 -> 0.72
    on bench/neardup_zh.)"""
    va = {k: len(v) for k, v in a.positions.items()}
    vb = {k: len(v) for k, v in b.positions.items()}
    dot = sum(va[k] * vb.get(k, 0) for k in va)
    na = math.sqrt(sum(x * x for x in va.values()))
    nb = math.sqrt(sum(x * x for x in vb.values()))
    return dot / (na * nb) if na and nb else 0.0


PAIRINGS = ("nearest", "jth")


def position_variance(a: DWDCSFeatures, b: DWDCSFeatures, *, pairing: str = "nearest") -> float:
    """Mean variance ``S`` of the key-concept position distances (formulas 10-13).

    For each key concept ``k`` shared by both documents, with positions ``P_k`` (in ``a``) and
    ``Q_k`` (in ``b``), and the shorter list taken as ``P_k``:
    ``d_j = q(j) - p_j`` where ``q(j)`` is the position of ``Q_k`` corresponding to ``p_j``
    (formula 10), their mean (11), their variance ``σ²_k = Σ_j (d_j - mean)² / |P_k|`` (12),
    and ``S = Σ_k σ²_k / |shared|`` (13).

    Correspondence (our reading; the paper pairs "the same" occurrences): ``q(j)`` is the
    element of ``Q_k`` nearest to ``p_j + δ``, ``δ`` being the median over shared concepts of
    the shift of their first occurrences.  Text added or removed before a passage shifts every
    distance alike (``S = 0``); one occurrence lost to an edit or a different segmentation
    does not misalign the others, as pairing the j-th occurrences would.  ``inf`` when no key
    concept is shared.

    ``pairing="jth"`` is the paper's pairing: the j-th occurrence of the shorter list with the
    j-th of the other (``d_j = q_j − p_j``, j = 1..|P_k|).

    Symmetric: the nearest pairing breaks ties towards the lower position, which is not the
    mirror image when the documents change places (``S`` was 0.125 one way and 0 the other
    for 政治 政治 会议 会议 against 政治 政治 政治 会议 会议), so the pair is taken in one
    fixed order (by length, then features) and the query's duplicate decision does not
    depend on which document was stored first."""
    if pairing not in PAIRINGS:
        raise ConfigError(f"DWDCS pairing must be one of {', '.join(PAIRINGS)}, not {pairing!r}")
    if (b.length, b.to_json()) < (a.length, a.to_json()):
        a, b = b, a
    shared = [k for k in a.keys if k in b.positions and a.positions[k] and b.positions[k]]
    if not shared:
        return math.inf
    if pairing == "jth":
        total = 0.0
        for k in shared:
            p, q = a.positions[k], b.positions[k]
            m = min(len(p), len(q))
            total += float(np.var(np.subtract(q[:m], p[:m], dtype=np.float64)))
        return total / len(shared)
    delta = float(np.median([b.positions[k][0] - a.positions[k][0] for k in shared]))
    total = 0.0
    for k in shared:
        p = np.asarray(a.positions[k], dtype=np.float64)
        q = np.asarray(b.positions[k], dtype=np.float64)
        sign = 1.0
        if len(q) < len(p):
            p, q, sign = q, p, -1.0
        target = p + sign * delta
        idx = np.clip(np.searchsorted(q, target), 1, len(q) - 1) if len(q) > 1 else None
        if idx is None:
            nearest = np.full(len(p), q[0])
        else:
            left, right = q[idx - 1], q[idx]
            nearest = np.where(np.abs(target - left) <= np.abs(right - target), left, right)
        total += float((nearest - p).var())
    return total / len(shared)


def similarity(
    a: DWDCSFeatures,
    b: DWDCSFeatures,
    *,
    sim_thr: float = 0.9,
    s_thr: float = 50.0,
    pairing: str = "nearest",
) -> tuple[bool, float, float]:
    """``(is_near_duplicate, cosine, S)``: near-duplicate when ``cosine > sim_thr`` (the
    paper's Simthr = 0.9) and ``S < s_thr``.  ``s_thr`` is in squared word positions and is
    ours (the paper's Sthr value is not reproduced here): a block of ``s`` words inserted at
    a fraction ``f`` of the text gives ``S ≈ s² f (1 - f)``, so 50 tolerates an inserted note of
    about 15 words anywhere, while reordered passages give far larger values.  ``S`` is only
    computed when the cosine passes (``inf`` otherwise)."""
    cos = cosine(a, b)
    if cos <= sim_thr:
        return False, cos, math.inf
    s = position_variance(a, b, pairing=pairing)
    return s < s_thr, cos, s


# --------------------------------------------------------------------------------------
# 7. the detector
# --------------------------------------------------------------------------------------


@register("dwdcs")
class DWDCSDetector(PostingIndexDetector[DWDCSFeatures]):
    """DWDCS with an inverted index ``dwdcs:kc:<concept> -> {doc ids}`` over each document's
    top ``n_index`` key concepts and the features in the hash ``dwdcs:docs``.  A query's
    candidates are the documents sharing one of its top ``n_index`` key concepts; the score
    of a match is the cosine.  Documents with no key concept (too short) are not indexed."""

    feature_type = DWDCSFeatures

    def __init__(
        self,
        storage: IndexStorage,
        *,
        sim_thr: float = 0.9,
        s_thr: float = 50.0,
        rel_thr: float = 0.5,
        fthr: int = 1,
        window: int = 2,
        l: int = 30,  # noqa: E741
        p: int = 20,
        n_index: int = 5,
        max_def_group: int = 20,
        lexicon: ConceptLexicon | None = None,
        pairing: str = "nearest",
        senses: str = "first",
        **params: object,
    ):
        super().__init__(storage, **params)
        if pairing not in PAIRINGS:
            raise ConfigError(
                f"DWDCS pairing must be one of {', '.join(PAIRINGS)}, not {pairing!r}"
            )
        if senses not in ("first", "all"):
            raise ConfigError(f"DWDCS senses must be 'first' or 'all', not {senses!r}")
        self.pairing, self.senses = pairing, senses
        self.sim_thr, self.s_thr = sim_thr, s_thr
        self.rel_thr, self.max_def_group = rel_thr, max_def_group
        self.fthr, self.window, self.l, self.p, self.n_index = fthr, window, l, p, n_index
        self._lexicon = lexicon

    def lexicon(self, lang: str) -> ConceptLexicon:
        if lang != "zh":
            return ConceptLexicon.identity()
        if self._lexicon is None:
            self._lexicon = default_lexicon(self.rel_thr, self.max_def_group)
        return self._lexicon

    def features(self, doc: Doc) -> DWDCSFeatures:
        return extract_features(
            doc.text,
            lang=method_lang(doc.lang),
            lexicon=self.lexicon(method_lang(doc.lang)),
            fthr=self.fthr,
            window=self.window,
            l=self.l,
            p=self.p,
            senses=self.senses,
        )

    def posting_keys(self, feats: DWDCSFeatures) -> list[str]:
        return [self.key("kc", k) for k in feats.keys[: self.n_index]]

    def indexed(self, feats: DWDCSFeatures) -> bool:
        """Stored when it has key concepts (even if ``n_index`` posts none of them)."""
        return bool(feats.keys)

    def score(self, query: DWDCSFeatures, stored: DWDCSFeatures) -> float:
        dup, cos, _ = similarity(
            query, stored, sim_thr=self.sim_thr, s_thr=self.s_thr, pairing=self.pairing
        )
        return min(1.0, cos) if dup else 0.0
