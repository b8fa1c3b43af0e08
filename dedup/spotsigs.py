"""SpotSigs near-duplicate detection (Theobald, Siddharth & Paepcke, SIGIR 2008).

With the Chinese adaptation of Li, Xu, Wu & Gan (2017): jieba tokens, the antecedents
的 是 在 了 plus an "optimized" set learned from pages (``topicrawl dedup
learn-antecedents``), chain c=1 at spot distance d=1.

* A *spot signature* is an antecedent (a frequent stopword) followed by a chain of the next
  ``c`` tokens, each ``d`` tokens after the previous one, skipping the chain's skip list:
  ``the:south:carolina`` (:func:`spot_signatures`). Paper 004 (Li et al. 2017) skips the
  antecedents only (``skip="antecedents"``, the default); the original English code skips
  every stopword (``skip="stopwords"``).
* Documents are multisets of signatures compared by the multiset Jaccard similarity
  ``|A ∩ B| / |A ∪ B| = Σ min / Σ max`` (:func:`multiset_jaccard`).
* Length partitioning (Section 4): the partition starting at ``p`` ends at the largest
  ``e`` with ``e − p ≤ (1 − τ)·e``, i.e. ``e = ⌊p/τ⌋ + 1``; the last partition, from the
  first start whose end would exceed the maximum length, is open (:func:`partition_bounds`).
  Since ``J(A, B) ≤ min(|A|, |B|) / max(|A|, |B|)``, a document's near duplicates lie in its
  own partition or a neighbouring one.
* Each partition keeps inverted lists of documents per signature, sorted by descending
  length; a query visits its signatures in ascending document frequency and stops early
  (Algorithm 1, :meth:`SpotSigsIndex.query`):
  δ1 = signature occurrences of the query already visited; δ2 = |q| − |d|.
  A list is left when a shorter document cannot reach τ any more, a longer document is
  skipped when δ1 − δ2 > (1 − τ)|d|, and the traversal ends when δ1 > (1 − τ)·max(|q|,
  the partition's longest document). The published code combines δ1 + δ2 for shorter
  documents; that bound can miss a true match (a short copy that lacks the query's rare
  signatures), so the default ``bounds="safe"`` uses max(δ1, δ2) and, for a document first
  met after δ1 occurrences were visited, skips it when (|q| − δ1) / (|d| + δ1) < τ (it
  lacks those occurrences, so |q ∩ d| ≤ |q| − δ1 and |q ∪ d| ≥ |d| + δ1); these bounds
  provably keep every document with J ≥ τ. ``bounds="paper"`` keeps the published sum.
* A query probes the next partition when ``|q| ≥ τ·end`` (the published condition) and,
  because documents are added incrementally here rather than deduplicated in one batch,
  the previous partition when ``τ·|q| ≤ begin − 1``.

The score of a match is the exact multiset Jaccard similarity. The detector's default
τ = 0.5 lies in the range (0.45–0.65) that gives the best F1 on the tuning templates of the
real-page set and in paper 004's best range (0.35–0.5); an article with long
commentary (J ≈ 0.5) is a duplicate caught by containment (issue 17), a half article none. See docs/benchmarks/dedup.md.
:class:`SpotSigsLSHIndex` (the default index) replaces the partitions by a MinHash LSH
candidate stage with the same exact verification.
"""

from __future__ import annotations

import bisect
import itertools
import json
import tomllib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np

from dedup.base import Detector, Doc, Match, register
from dedup.compiled import features as _fx
from dedup.storage import IndexStorage, LockLostError, retry_lost_lock
from dedup.text import is_english, stopwords, tokenize
from topicrawl.errors import ConfigError, StorageError

#: Antecedents of the original paper's English experiments (frequent stopwords).
EN_ANTECEDENTS = ("a", "an", "the", "is", "are", "was", "were", "there", "been", "be")
#: The basic Chinese antecedents of Li, Xu, Wu & Gan (2017).
ZH_ANTECEDENTS = ("的", "是", "在", "了")


@lru_cache(maxsize=4)
def default_antecedents(lang: str = "zh", which: str = "optimized") -> tuple[str, ...]:
    """Packaged antecedents for ``lang``: ``basic`` or ``optimized`` (basic + learned set).

    They live in ``dedup/data/antecedents.toml``; ``topicrawl dedup learn-antecedents``
    writes a section of the same shape.
    """
    if which not in ("basic", "optimized"):
        raise ConfigError(f"antecedent set must be 'basic' or 'optimized', not {which!r}")
    raw = resources.files("dedup.data").joinpath("antecedents.toml").read_text("utf-8")
    table = tomllib.loads(raw)
    code = "en" if is_english(lang) else "zh"
    section = table.get(code, {})
    basic = tuple(section.get("basic", ZH_ANTECEDENTS if code == "zh" else EN_ANTECEDENTS))
    if which == "basic":
        return basic
    extra = [w for w in section.get("optimized", ()) if w not in basic]
    return basic + tuple(extra)


def spot_signatures(
    tokens: Sequence[str],
    antecedents: Mapping[str, int] | Iterable[str],
    stopwords: Iterable[str] | frozenset[str] = frozenset(),
    *,
    chain: int = 1,
    distance: int = 1,
    with_antecedent: bool = True,
) -> Counter[str]:
    """The multiset of spot signatures of a token sequence (SpotSigs, Section 3).

    For each occurrence of an antecedent at position ``i`` the chain takes ``chain`` tokens:
    the first non-stopword at or after ``i + d``, then the first non-stopword at or after
    ``d`` past the previous one (``d`` is the antecedent's own spot distance when
    ``antecedents`` is a mapping, else ``distance``). The signature is
    ``antecedent:w1:...:wc`` (or ``w1:...:wc`` with ``with_antecedent=False``, the
    "particle-only" variant of the reference code). Occurrences with an empty chain are
    skipped; a chain cut short by the end of the text is kept.
    """
    if chain < 1 or distance < 1:
        raise ConfigError("SpotSigs needs chain >= 1 and distance >= 1")
    if isinstance(antecedents, Mapping):
        spots = dict(antecedents)
    else:
        spots = dict.fromkeys(antecedents, distance)
    stop = stopwords if isinstance(stopwords, frozenset | set) else frozenset(stopwords)
    if (
        chain == 1
        and with_antecedent
        and all(v == 1 for v in spots.values())
        and (stop.issuperset(spots))
    ):
        return _signatures_c1d1(tokens, spots, stop)
    n = len(tokens)
    out: Counter[str] = Counter()
    get = spots.get
    for i in range(n - 1):
        d = get(tokens[i])
        if d is None:
            continue
        parts = [tokens[i]] if with_antecedent else []
        k = i + d
        for _ in range(chain):
            while k < n and tokens[k] in stop:
                k += 1
            if k >= n:
                break
            parts.append(tokens[k])
            k += d
        if len(parts) > (1 if with_antecedent else 0):
            out[":".join(parts)] += 1
    return out


def _signatures_c1d1(
    tokens: Sequence[str], spots: Mapping[str, int], skip: frozenset[str] | set[str]
) -> Counter[str]:
    """:func:`spot_signatures` for chain 1, distance 1 and antecedents that the chain skips:
    every antecedent takes the next token outside the skip list (one pass)."""
    sigs: list[str] = []
    pending: list[str] = []
    for tok in tokens:
        if tok in skip:
            if tok in spots:
                pending.append(tok)
            continue
        if pending:
            for a in pending:
                sigs.append(a + ":" + tok)
            pending.clear()
    return Counter(sigs)


def multiset_jaccard(a: Mapping[str, int], b: Mapping[str, int]) -> float:
    """Multiset Jaccard similarity Σ_s min(a_s, b_s) / Σ_s max(a_s, b_s), in [0, 1]."""
    if len(a) > len(b):
        a, b = b, a
    inter = 0
    get = b.get
    for s, c in a.items():
        o = get(s)
        if o:
            inter += c if c < o else o
    union = sum(a.values()) + sum(b.values()) - inter
    return inter / union if union else 0.0


def partition_bounds(
    tau: float, max_length: int, *, min_length: int = 1
) -> list[tuple[int, int | None]]:
    """Length partitions ``[(begin, end), ..., (begin, None)]`` that depend only on ``tau``.

    After the reference implementation: scanning ``i = min_length .. max_length``, a
    partition ``[last, i]`` closes at the first ``i`` with ``i − last > (1 − τ)·i``
    (equivalently ``i = ⌊last/τ⌋ + 1``); the rest is the open partition ``[last, ∞)``.
    ``τ`` is taken as an exact decimal fraction, so bounds do not depend on rounding.
    """
    if not 0 < tau < 1:
        raise ConfigError(f"SpotSigs threshold tau must be in (0, 1), got {tau}")
    t = Fraction(str(tau))
    bounds: list[tuple[int, int | None]] = []
    last = min_length
    while True:
        end = int(last / t) + 1  # smallest i with i*t > last
        if end > max_length:
            break
        bounds.append((last, end))
        last = end + 1
    bounds.append((last, None))
    return bounds


class _Entry:
    __slots__ = ("doc_id", "length", "sigs")

    def __init__(self, doc_id: str, length: int, sigs: dict[str, int]):
        self.doc_id = doc_id
        self.length = length
        self.sigs = sigs


def _neg_length(e: _Entry) -> int:
    return -e.length


@dataclass
class _Partition:
    idx: int
    begin: int
    end: int | None
    lists: dict[str, list[_Entry]] = field(default_factory=dict)
    size: int = 0
    lengths: Counter = field(default_factory=Counter)

    @property
    def max_length(self) -> int:
        return max(self.lengths) if self.lengths else 0


class SpotSigsIndex:
    """The in-memory SpotSigs index: length partitions of inverted signature lists.

    Pure data structure (no storage); :class:`SpotSigsDetector` mirrors it into a backend.
    """

    def __init__(self, tau: float = 0.5, *, max_length: int = 1000, bounds: str = "safe"):
        if bounds not in ("safe", "paper"):
            raise ConfigError(f"SpotSigs bounds must be 'safe' or 'paper', not {bounds!r}")
        self.tau = tau
        self.bounds = bounds
        self.partitions = [
            _Partition(i, b, e) for i, (b, e) in enumerate(partition_bounds(tau, max_length))
        ]
        self._begins = [p.begin for p in self.partitions]
        self.docs: dict[str, tuple[_Partition, _Entry]] = {}
        #: how many candidate documents the last query compared exactly (for benchmarks)
        self.last_compared = 0

    def __len__(self) -> int:
        return len(self.docs)

    def __contains__(self, doc_id: str) -> bool:
        return doc_id in self.docs

    def partition_of(self, length: int) -> _Partition:
        i = bisect.bisect_right(self._begins, max(length, self._begins[0])) - 1
        return self.partitions[i]

    def add(self, doc_id: str, sigs: Mapping[str, int]) -> None:
        """Index a signature multiset (replacing ``doc_id`` if present; empty ones are kept
        out of the lists but remembered so that ``remove`` and ``__contains__`` work)."""
        if doc_id in self.docs:
            self.remove(doc_id)
        sigs = {s: c for s, c in sigs.items() if c > 0}
        length = sum(sigs.values())
        entry = _Entry(doc_id, length, sigs)
        part = self.partition_of(length)
        if length:
            lists = part.lists
            for s in sigs:
                lst = lists.get(s)
                if lst is None:
                    lists[s] = [entry]
                else:
                    bisect.insort_right(lst, entry, key=_neg_length)
            part.size += 1
            part.lengths[length] += 1
        self.docs[doc_id] = (part, entry)

    def remove(self, doc_id: str) -> bool:
        """Remove ``doc_id``; return whether it was indexed."""
        found = self.docs.pop(doc_id, None)
        if found is None:
            return False
        part, entry = found
        if entry.length:
            for s in entry.sigs:
                lst = part.lists[s]
                for i, e in enumerate(lst):
                    if e is entry:
                        del lst[i]
                        break
                if not lst:
                    del part.lists[s]
            part.size -= 1
            part.lengths[entry.length] -= 1
            if not part.lengths[entry.length]:
                del part.lengths[entry.length]
        return True

    def _probe(self, length: int) -> list[_Partition]:
        part = self.partition_of(length)
        parts = [part]
        tau = self.tau
        nxt = part.idx + 1
        if nxt < len(self.partitions) and part.end is not None and length >= tau * part.end:
            parts.append(self.partitions[nxt])
        if part.idx > 0 and tau * length <= part.begin - 1:
            parts.append(self.partitions[part.idx - 1])
        return parts

    def query(
        self, sigs: Mapping[str, int], *, first: bool = False, exclude: str | None = None
    ) -> list[tuple[str, float]]:
        """Indexed documents with multiset Jaccard ≥ τ, best first (``first``: stop at one)."""
        n = sum(sigs.values())
        self.last_compared = 0
        if not n:
            return []
        tau = self.tau
        slack = 1.0 - tau
        paper = self.bounds == "paper"
        safe = not paper
        found: dict[str, float] = {}
        checked: set[int] = set()
        for part in self._probe(n):
            if not part.size:
                continue
            lists = part.lists
            order = sorted(sigs, key=lambda s: len(lists.get(s, ())))
            stop_at = slack * max(n, part.max_length)
            bound_q = slack * n
            delta = 0
            for s in order:
                lst = lists.get(s)
                if lst:
                    # longer documents first met here qualify only up to this length
                    longest = (n - delta) / tau - (delta if safe else 0)
                    start = 0
                    if lst[0].length > longest:
                        start = bisect.bisect_left(lst, -longest, key=_neg_length)
                    for e in itertools.islice(lst, start, None):
                        d2 = n - e.length
                        if d2 >= 0:
                            if (delta + d2 if paper else (d2 if d2 > delta else delta)) > bound_q:
                                break
                        elif delta - d2 > slack * e.length:
                            continue
                        # first seen here, e lacks the delta visited occurrences:
                        # J <= (n - delta) / (|e| + delta)
                        if safe and n - delta < tau * (e.length + delta):
                            continue
                        key = id(e)
                        if key in checked:
                            continue
                        checked.add(key)
                        if e.doc_id == exclude:
                            continue
                        sim = multiset_jaccard(sigs, e.sigs)
                        if sim >= tau:
                            found[e.doc_id] = sim
                            if first:
                                self.last_compared = len(checked)
                                return [(e.doc_id, sim)]
                delta += sigs[s]
                if delta > stop_at:
                    break
        self.last_compared = len(checked)
        return sorted(found.items(), key=lambda kv: (-kv[1], kv[0]))


def _pack(sigs: Mapping[str, int]) -> bytes:
    """A signature multiset as bytes: the signatures' 64-bit hashes (``hash()``, fixed within
    a process; the in-memory index is rebuilt from the stored log in each process), sorted,
    then their counts as int32 -- about 12 bytes a signature where a dict of strings takes
    ~120."""
    m = len(sigs)
    keys = np.fromiter((hash(s) for s in sigs), dtype=np.int64, count=m)
    counts = np.fromiter(sigs.values(), dtype=np.int32, count=m)
    order = np.argsort(keys)
    return keys[order].tobytes() + counts[order].tobytes()


def _packed_jaccard(a: bytes, len_a: int, b: bytes, len_b: int) -> float:
    """:func:`multiset_jaccard` of two :func:`_pack` results (``len_*``: their total counts)."""
    ma, mb = len(a) // 12, len(b) // 12
    ka = np.frombuffer(a, dtype=np.int64, count=ma)
    kb = np.frombuffer(b, dtype=np.int64, count=mb)
    _, ia, ib = np.intersect1d(ka, kb, assume_unique=True, return_indices=True)
    if not len(ia):
        return 0.0
    ca = np.frombuffer(a, dtype=np.int32, offset=8 * ma)
    cb = np.frombuffer(b, dtype=np.int32, offset=8 * mb)
    inter = int(np.minimum(ca[ia], cb[ib]).sum())
    union = len_a + len_b - inter
    return inter / union if union else 0.0


class SpotSigsLSHIndex:
    """SpotSigs with a MinHash LSH candidate stage (rensa, Rust) and the exact verifier.

    Same interface as :class:`SpotSigsIndex`. A signature multiset is expanded to a set
    (``s``, ``s#2`` … ``s#c`` for a signature seen ``c`` times), so the set Jaccard that
    MinHash estimates *is* the multiset Jaccard of SpotSigs. ``bands`` bands of ``rows``
    minhashes each make a document a candidate with probability ``1 − (1 − J^rows)^bands``
    (rows 5, bands 150: 0.991 at J = 0.5, 0.9995 at 0.55, 0.0015 at 0.1; with 3 rows the
    unrelated documents that share a few common signatures became candidates often enough
    that the candidates per query grew with the index); every candidate whose
    length ratio can reach τ is verified by the exact multiset Jaccard, so precision is
    SpotSigs' own and only recall near τ is probabilistic. The work per document does not
    grow with the index: a bucket lookup per band, and a few candidates.
    Hashes are per process (the index is rebuilt from the storage log in each process).
    """

    def __init__(self, tau: float = 0.5, *, rows: int = 5, bands: int = 150, seed: int = 1):
        import rensa

        if not 0 < tau < 1:
            raise ConfigError(f"SpotSigs threshold tau must be in (0, 1), got {tau}")
        if rows < 1 or bands < 1:
            raise ConfigError("SpotSigs LSH needs rows >= 1 and bands >= 1")
        self.tau = tau
        self.num_perm = rows * bands
        self.seed = seed
        self._rensa = rensa
        self._lsh = rensa.RMinHashLSH(0.5, self.num_perm, bands)
        self.docs: dict[str, tuple[None, _Entry]] = {}
        self._keys: dict[str, int] = {}
        self._entries: dict[int, _Entry] = {}
        self._next = 0
        self._memo: tuple[Mapping[str, int], Any] | None = None
        self.last_compared = 0

    def __len__(self) -> int:
        return len(self.docs)

    def __contains__(self, doc_id: str) -> bool:
        return doc_id in self.docs

    def _minhash(self, sigs: Mapping[str, int]):
        memo = self._memo  # a cascade queries, then adds, the same signature object
        if memo is not None and memo[0] is sigs:
            return memo[1]
        items = []
        for s, c in sigs.items():
            items.append(s)
            for k in range(2, c + 1):
                items.append(f"{s}#{k}")
        mh = self._rensa.RMinHash(self.num_perm, self.seed)
        mh.update(items)
        self._memo = (sigs, mh)
        return mh

    def add(self, doc_id: str, sigs: Mapping[str, int], minhash: Any = None) -> None:
        """Index a signature multiset (replacing ``doc_id``; empty ones are remembered only)."""
        if doc_id in self.docs:
            self.remove(doc_id)
        if minhash is None and any(c > 0 for c in sigs.values()):
            minhash = self._minhash(sigs)
        sigs = {s: c for s, c in sigs.items() if c > 0}
        entry = _Entry(doc_id, sum(sigs.values()), _pack(sigs))
        self.docs[doc_id] = (None, entry)
        if entry.length:
            key = self._next
            self._next += 1
            self._keys[doc_id] = key
            self._entries[key] = entry
            self._lsh.insert(key, minhash)

    def remove(self, doc_id: str) -> bool:
        """Remove ``doc_id``; return whether it was indexed."""
        if self.docs.pop(doc_id, None) is None:
            return False
        key = self._keys.pop(doc_id, None)
        if key is not None:
            self._lsh.remove(key)
            del self._entries[key]
        return True

    def query(
        self,
        sigs: Mapping[str, int],
        *,
        first: bool = False,
        exclude: str | None = None,
        minhash: Any = None,
    ) -> list[tuple[str, float]]:
        """Indexed documents with multiset Jaccard ≥ τ among the LSH candidates, best first."""
        n = sum(sigs.values())
        self.last_compared = 0
        if not n or not self._entries:
            return []
        tau = self.tau
        found: dict[str, float] = {}
        entries = self._entries
        packed = None
        for key in self._lsh.query(minhash if minhash is not None else self._minhash(sigs)):
            e = entries.get(key)
            if e is None or e.doc_id == exclude:
                continue
            lo, hi = (n, e.length) if n < e.length else (e.length, n)
            if lo < tau * hi:
                continue
            self.last_compared += 1
            if packed is None:
                packed = _pack({s: c for s, c in sigs.items() if c > 0})
            sim = _packed_jaccard(packed, n, e.sigs, e.length)
            if sim >= tau:
                found[e.doc_id] = sim
        ranked = sorted(found.items(), key=lambda kv: (-kv[1], kv[0]))
        return ranked[:1] if first else ranked


@dataclass(frozen=True)
class _LangConfig:
    antecedents: dict[str, int]
    stopwords: frozenset[str]
    chain: int


#: What a chain skips: ``"antecedents"`` (paper 004, Li et al. 2017: the chain takes the next
#: tokens that are not antecedents) or ``"stopwords"`` (the whole packaged stopword list).
SKIP_MODES = ("antecedents", "stopwords")
#: The in-memory index: ``"lsh"`` (MinHash LSH candidates + exact verification,
#: :class:`SpotSigsLSHIndex`) or ``"partitions"`` (the paper's length partitions and inverted
#: lists with early termination, :class:`SpotSigsIndex`, exact).
INDEX_KINDS = ("lsh", "partitions")


def _log_entry(op: list) -> str:
    """An operation of the index's log as it is stored (compact JSON)."""
    return json.dumps(op, ensure_ascii=False, separators=(",", ":"))


@register("spotsigs")
class SpotSigsDetector(Detector):
    """SpotSigs as a detector: an in-memory :class:`SpotSigsIndex` mirrored into storage.

    Storage layout (under ``spotsigs:``): an append-only ``log`` list of JSON operations
    (``["a", doc_id, {signature: count}]`` / ``["d", doc_id]``), a ``config`` value and an
    ``epoch`` counter (:meth:`compact` rewrites the log as ``log:<epoch>``).
    Every process replays the log entries it has not seen before answering, under
    ``storage.lock("spotsigs")`` for ``check_and_add``/``add``/``remove``: so the index is
    shared by processes, survives restarts (SQLite/Redis), and each insert costs one list
    append in the backend. The in-memory index is only ever the replay of the stored log:
    an insert or removal appends to the log and reaches the index at the next replay (the
    next query), so a write the storage refused (a Redis lock lost mid-step,
    :class:`~dedup.storage.LockLostError`) leaves the index in step with the storage. This
    process's own entries are replayed from the signature object they were written from
    (no JSON decode, and the query's minhash reused); anything else is decoded.

    Options: ``tau`` (0.5, chosen on the tuning templates of the real-page set), ``chain`` (None: 1 for Chinese, 2 for English), ``distance`` (1),
    ``antecedents`` (None: the packaged set; or a list, a {word: distance} map, or a
    {lang: list} map), ``antecedent_set`` ("optimized" | "basic"), ``max_length`` (1000: the
    last partition start), ``bounds`` ("safe" | "paper"), ``skip`` ("antecedents": the
    chain skips antecedents only, as paper 004 does; "stopwords": it skips the 794-word
    packaged stopword list, the behaviour before), ``index`` ("lsh": MinHash LSH candidates
    with ``rows`` × ``bands`` minhashes, then the exact Jaccard; "partitions": the paper's
    exact index; see docs/benchmarks/dedup.md).
    """

    def __init__(
        self,
        storage: IndexStorage,
        *,
        tau: float = 0.5,
        chain: int | None = None,
        distance: int = 1,
        antecedents: Any = None,
        antecedent_set: str = "optimized",
        max_length: int = 1000,
        bounds: str = "safe",
        skip: str = "antecedents",
        index: str = "lsh",
        rows: int = 5,
        bands: int = 150,
        candidates: str | None = None,
    ):
        super().__init__(storage)
        if skip not in SKIP_MODES:
            raise ConfigError(f"SpotSigs skip must be one of {', '.join(SKIP_MODES)}, not {skip!r}")
        self.skip = skip
        self.tau = float(tau)
        self.chain = chain
        self.distance = int(distance)
        self.antecedents = antecedents
        self.antecedent_set = antecedent_set
        self.max_length = int(max_length)
        self.bounds = bounds
        if index not in INDEX_KINDS:
            raise ConfigError(
                f"SpotSigs index must be one of {', '.join(INDEX_KINDS)}, not {index!r}"
            )
        self.index_kind = index
        self.rows, self.bands = int(rows), int(bands)
        self.index = self._new_index()
        self._cursor = 0
        self._epoch: int | None = None
        self._langs: dict[str, _LangConfig] = {}
        self._config_checked = False
        self._last: tuple[str, str, Counter[str]] | None = None
        #: this process's logged additions not yet replayed: the stored entry -> (doc id,
        #: the signature object it was written from), so the replay indexes that object (its
        #: minhash memoised by the query) without decoding the JSON and hashing it again
        self._own: dict[bytes, tuple[str, Mapping[str, int]]] = {}

    def __new__(cls, storage: IndexStorage, *args: Any, candidates: str | None = None,
                **kw: Any):  # fmt: skip
        """``SpotSigsDetector(storage, candidates=...)`` is the detector of that candidate
        stage (:data:`CANDIDATE_STAGES`); None: the stage the index in ``storage`` was
        started with (its stored config: an index of an earlier version has signature
        candidates), else :data:`DEFAULT_CANDIDATES`."""
        if cls is SpotSigsDetector:
            if candidates is None:
                try:
                    raw = storage.get("spotsigs:config")
                except StorageError:  # the index is down: its config is checked on first use
                    raw = None
                candidates = (json.loads(raw).get("candidates", "signatures")
                              if raw is not None else DEFAULT_CANDIDATES)  # fmt: skip
            if candidates not in CANDIDATE_STAGES:
                raise ConfigError("SpotSigs candidates must be one of "
                                  f"{', '.join(CANDIDATE_STAGES)}, not {candidates!r}")  # fmt: skip
            if candidates == "letters":
                cls = LetterCandidatesSpotSigs
        return super().__new__(cls)

    def _new_index(self) -> SpotSigsIndex | SpotSigsLSHIndex:
        if self.index_kind == "lsh":
            return SpotSigsLSHIndex(self.tau, rows=self.rows, bands=self.bands)
        return SpotSigsIndex(self.tau, max_length=self.max_length, bounds=self.bounds)

    # -- features ----------------------------------------------------------------------
    def _lang_config(self, lang: str) -> _LangConfig:
        code = "en" if is_english(lang) else "zh"
        cfg = self._langs.get(code)
        if cfg is None:
            ante = self.antecedents
            if isinstance(ante, Mapping) and ante and all(k in ("zh", "en") for k in ante):
                ante = ante.get(code)
            if ante is None:
                ante = default_antecedents(code, self.antecedent_set)
            if isinstance(ante, str):
                raise ConfigError("SpotSigs antecedents must be a list of words, not a string")
            spots = (
                {str(k): int(v) for k, v in ante.items()}
                if isinstance(ante, Mapping)
                else dict.fromkeys((str(a) for a in ante), self.distance)
            )
            if not spots:
                raise ConfigError("SpotSigs needs at least one antecedent")
            chain = self.chain if self.chain is not None else (2 if code == "en" else 1)
            skipped = frozenset(spots) if self.skip == "antecedents" else stopwords(code)
            cfg = _LangConfig(spots, skipped, chain)
            self._langs[code] = cfg
        return cfg

    def signatures(self, tokens: Sequence[str], lang: str = "zh") -> Counter[str]:
        """Spot signatures of already tokenized text (what :meth:`features` computes)."""
        cfg = self._lang_config(lang)
        return spot_signatures(tokens, cfg.antecedents, cfg.stopwords, chain=cfg.chain)

    def features(self, doc: Doc) -> Counter[str]:
        # a cascade queries then adds the same document: tokenize it once
        last = self._last
        if last is not None and last[0] is doc.text and last[1] == doc.lang:
            return last[2]
        sigs = self.signatures(tokenize(doc.text, doc.lang), doc.lang)
        self._last = (doc.text, doc.lang, sigs)
        return sigs

    # -- storage mirror ----------------------------------------------------------------
    def _check_config(self) -> None:
        """Refuse an index that was built with other options (:meth:`_config_fingerprint`),
        once the stored fingerprint has been read."""
        if not self._config_checked:
            stored = self.storage.get(self.key("config"))
            if stored is not None and stored.decode() != self._config_fingerprint():
                raise ConfigError(
                    f"the SpotSigs index in {self.storage!r} was built with {stored.decode()}, "
                    f"not {self._config_fingerprint()}: use another namespace or the same options"
                )
            self._config_checked = stored is not None

    def _config_fingerprint(self) -> str:
        return json.dumps(
            {
                "tau": self.tau,
                "max_length": self.max_length,
                "bounds": self.bounds,
                "skip": self.skip,
            },
            sort_keys=True,
        )

    def _log_key(self) -> str:
        return self.key("log") if not self._epoch else self.key("log", self._epoch)

    def _sync(self, check_epoch: bool = True) -> None:
        """Replay the log entries other processes appended since we last looked.

        ``check_epoch``: first read the log's epoch (bumped by :meth:`compact`) and rebuild
        the index from the new log when it changed. Reads that skip it (a catch-up before
        taking the lock) are safe: a compaction deletes the old log, so they read nothing.
        """
        self._check_config()
        if check_epoch or self._epoch is None:
            epoch = int(self.storage.get(self.key("epoch")) or 0)
            if epoch != self._epoch:
                if self._epoch is not None or self._cursor:
                    self.index = self._new_index()
                self._epoch, self._cursor = epoch, 0
        new = self.storage.lrange(self._log_key(), self._cursor, -1)
        own = self._own
        for raw in new:
            mine = own.pop(raw, None) if own else None
            if mine is not None:  # the same entry: its doc id and signatures, as written
                self.index.add(*mine)
                continue
            op = json.loads(raw)
            if op[0] == "a":
                self.index.add(op[1], op[2])
            else:
                self.index.remove(op[1])
        self._cursor += len(new)

    def _append(self, ops: list[list], key: str | None = None) -> None:
        """Log ``ops`` (to ``key``, default the current log); the in-memory index takes
        them at the next :meth:`_sync`, once the storage holds them."""
        self._append_raw([_log_entry(op) for op in ops], key)

    def _append_raw(self, raws: list[str] | list[bytes], key: str | None = None) -> None:
        if not self._config_checked:
            self.storage.set(self.key("config"), self._config_fingerprint())
            self._config_checked = True
        self.storage.rpush(key or self._log_key(), *raws)

    @contextmanager
    def _locked(self):
        """``storage.lock(self.name)``; a lost lock (nothing written) forgets that the
        config fingerprint was written, so that the retried step writes it. When the step's
        writes are in the storage (the lock is not inside another lock, which writes them
        when it ends), the index replays them at once."""
        try:
            with self.storage.lock(self.name):
                yield
        except LockLostError:
            self._config_checked = False
            raise
        if not self.storage.holding():
            self._sync(check_epoch=False)

    def compact(self, *, chunk: int = 5000) -> tuple[int, int]:
        """Rewrite the log as one entry per indexed document (drops removals and replaced
        versions); every process rebuilds from the new log at its next locked step.
        Returns ``(entries before, entries after)``."""
        with self._locked():
            self._sync()
            before = self._cursor
            old_key = self._log_key()
            epoch = (self._epoch or 0) + 1
            new_key = self.key("log", epoch)
            live: dict[str, Any] = {}  # the last stored signatures of each document
            for start in range(0, before, chunk):
                for raw in self.storage.lrange(old_key, start, start + chunk - 1):
                    op = json.loads(raw)
                    if op[0] == "a":
                        live[op[1]] = op[2]
                    else:
                        live.pop(op[1], None)
            docs = self.index.docs
            ops = [["a", doc_id, sigs] for doc_id, sigs in live.items() if doc_id in docs]
            self.storage.delete(new_key)
            for i in range(0, len(ops), chunk):
                self._append(ops[i : i + chunk], new_key)
            self.storage.set(self.key("epoch"), str(epoch))
            self.storage.delete(old_key)
        # written: the index (every live document) already is the new log's replay
        self._epoch, self._cursor = epoch, len(ops)
        return before, self._cursor

    def _add_locked(self, doc_id: str, sigs: Mapping[str, int]) -> None:
        raw = _log_entry(["a", doc_id, dict(sigs)]).encode()
        if len(self._own) >= 64:  # entries a lost lock never wrote
            self._own.clear()
        self._own[raw] = (doc_id, sigs)
        self._append_raw([raw])

    # -- detector API ------------------------------------------------------------------
    def query_signatures(self, sigs: Mapping[str, int]) -> list[Match]:
        self._sync()
        return [Match(d, s, self.name) for d, s in self.index.query(sigs)]

    def query(self, doc: Doc) -> list[Match]:
        return self.query_signatures(self.features(doc))

    def add_signatures(self, doc_id: str, sigs: Mapping[str, int]) -> None:
        self._sync(check_epoch=False)  # catch up outside the lock, to hold it briefly
        with self._locked():
            self._sync()
            self._add_locked(doc_id, sigs)

    def add(self, doc_id: str, doc: Doc) -> None:
        self.add_signatures(doc_id, self.features(doc))

    def add_many(self, items: Iterable[tuple[str, Mapping[str, int]]]) -> None:
        """Bulk-index ``(doc_id, signatures)`` pairs with one lock and one batched write."""
        with self._locked():
            self._sync()
            ops = [["a", doc_id, dict(sigs)] for doc_id, sigs in items]
            if ops:
                self._append(ops)

    def check_and_add_signatures(self, doc_id: str, sigs: Mapping[str, int]) -> Match | None:
        """Atomic check-and-add of a precomputed signature multiset (see :meth:`check_and_add`)."""

        def step() -> Match | None:
            self._sync(check_epoch=False)  # catch up outside the lock, to hold it briefly
            with self._locked():
                self._sync()
                hits = self.index.query(sigs, first=True, exclude=doc_id)
                if hits:
                    return Match(hits[0][0], hits[0][1], self.name)
                self._add_locked(doc_id, sigs)
                return None

        return retry_lost_lock(self.storage, step, what="a SpotSigs check-and-add")

    def check_and_add(self, doc_id: str, doc: Doc) -> Match | None:
        """Return a stored near duplicate (J ≥ τ) of ``doc``, or index it and return None."""
        return self.check_and_add_signatures(doc_id, self.features(doc))

    def remove(self, doc_id: str) -> None:
        with self._locked():
            self._sync()
            # logged even when not indexed here: a local fallback sharing this index may
            # have removed it already (replaying a removal of an absent id does nothing)
            self._append([["d", doc_id]])

    def sync_memory(self) -> None:
        """Replay the log entries this process has not applied (its own, once written)."""
        self._sync(check_epoch=False)

    def adopt_memory(self, other: Detector) -> None:
        """Share ``other``'s in-memory index (replayed from its storage's log): a local
        fallback checks against every document the worker had seen, at no memory cost.
        What the fallback adds goes into it too; written back, it is logged again."""
        if isinstance(other, SpotSigsDetector) and other.index_kind == self.index_kind:
            self.index = other.index

    def __len__(self) -> int:
        self._sync()
        return len(self.index)


#: SpotSigs' candidate stages: ``"signatures"`` (every page segmented, its signatures'
#: MinHash LSH or partitions: :class:`SpotSigsDetector`) or ``"letters"`` (a MinHash LSH of
#: stand-ins for the signatures found in the page's letters, no segmentation; signatures
#: only for a page with a candidate: :class:`LetterCandidatesSpotSigs`)
CANDIDATE_STAGES = ("signatures", "letters")
#: the candidate stage of a new SpotSigs index (``candidates=None``)
DEFAULT_CANDIDATES = "signatures"


def _signature_hashes(sigs: Mapping[str, int]) -> np.ndarray:
    """The CRC-32 of each signature with its occurrence number (``s#1``, ``s#2`` …), so the
    set's Jaccard is the multiset Jaccard."""
    import zlib

    return np.array([zlib.crc32(f"{s}#{k}".encode()) for s, c in sigs.items()
                     for k in range(1, c + 1)], dtype=np.uint32)  # fmt: skip


class _SpotTable:
    """The antecedents of one language as lookups on code points: the first letters of
    every antecedent, its one-letter antecedents and its two-letter starts (an antecedent of
    three or more letters counts by its first two)."""

    def __init__(self, antecedents: Iterable[str]):
        words = [w for w in antecedents if w]
        self.first = np.zeros(0x110000, dtype=bool)
        self.one = np.zeros(0x110000, dtype=bool)
        two = set()
        for w in words:
            self.first[ord(w[0])] = True
            if len(w) == 1:
                self.one[ord(w)] = True
            else:
                two.add((ord(w[0]) << 21) | ord(w[1]))
        self.two = np.array(sorted(two), dtype=np.uint64)
        #: the same lookups as bytes, for the compiled stand-ins (dedup/_features.pyx)
        self.first8, self.one8 = self.first.view(np.uint8), self.one.view(np.uint8)


def spot_letter_hashes_compiled(cp: np.ndarray, table: _SpotTable,
                                window: int = 2) -> np.ndarray:  # fmt: skip
    """:func:`spot_letter_hashes` computed by the compiled feature pass (the same values in
    the same order; ``tests/test_features_compiled.py``)."""
    base1, coef1 = _chain_coefficients(1, window)
    base2, coef2 = _chain_coefficients(2, window)
    return _fx.spot_letter_hashes(np.ascontiguousarray(cp, dtype=np.uint32), table.first8,
                                  table.one8, table.two, int(base1), coef1, int(base2), coef2)


def minhash_values(h: np.ndarray, mul: np.ndarray, add: np.ndarray) -> np.ndarray:
    """The minhash of the uint32 values ``h``: min over v of (v · mul_j + add_j) mod 2³², one
    multiply-add hash a row (empty for an empty ``h``). The reference of the compiled
    :func:`dedup._features.minhash` that :class:`LetterCandidatesSpotSigs` uses."""
    if not len(h):
        return np.zeros(0, dtype=np.uint32)
    x = h[:, None] * mul[None, :]
    x += add[None, :]
    return x.min(axis=0)


def band_values(mh: np.ndarray, bands: int, rows: int) -> list[int]:
    """Each band of the minhash ``mh`` (``bands`` × ``rows`` values) mixed into 48 bits, the
    band number in the top 16 bits (the reference of the compiled
    :func:`dedup._features.band_mix`)."""
    if not len(mh):
        return []
    b = mh.reshape(bands, rows).astype(np.uint64)
    x = b[:, 0]
    for j in range(1, rows):  # the band's values mixed into 64 bits
        x = (x * np.uint64(0x9E3779B97F4A7C15)) ^ b[:, j]
    x ^= x >> np.uint64(29)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(32)
    x &= np.uint64(0xFFFFFFFFFFFF)
    x |= np.arange(bands, dtype=np.uint64) << np.uint64(48)  # the band number
    return x.tolist()


def spot_letter_hashes(cp: np.ndarray, table: _SpotTable, window: int = 2) -> np.ndarray:
    """Segmentation-free stand-ins for a Chinese text's spot signatures: for every place in
    its letters ``cp`` (:func:`dedup.text.letters`) where an antecedent starts (one letter,
    or the first two of a longer one), a 32-bit hash of the antecedent's letters and the
    ``window`` letters after it (as the chain c = 1, d = 1 takes the next word); a repeated
    one is hashed with its occurrence number, so the set's Jaccard is a multiset Jaccard, as
    SpotSigs' LSH does (:class:`SpotSigsLSHIndex`). Unsorted uint32.

    The hash of letters p₀ … p_L (L = the antecedent's length + ``window`` − 1) is the
    multiply-add chain x = length, x ← x·K_{j+1} + p_j (mod 2⁶⁴), computed as one dot
    product of the letters with the products of the K's (:func:`_chain_coefficients`). The
    reference of :func:`spot_letter_hashes_compiled`, which pages go through."""
    n = len(cp)
    if n < 2:
        return np.zeros(0, dtype=np.uint32)
    pad = np.zeros(n + window + 2, dtype=np.uint64)
    pad[:n] = cp
    starts = np.flatnonzero(table.first[cp])
    one = starts[table.one[cp[starts]]]
    starts = starts[starts < n - 1]
    bigram = (pad[starts] << np.uint64(21)) | pad[starts + 1]
    if len(table.two):
        at = np.minimum(np.searchsorted(table.two, bigram), len(table.two) - 1)
        two = starts[table.two[at] == bigram]
    else:
        two = starts[:0]
    parts = []
    for pos, length in ((one, 1), (two, 2)):
        if not len(pos):
            continue
        base, coef = _chain_coefficients(length, window)
        # the letters p_j = pad[pos + j] as rows, dotted with the chain's coefficients
        # (uint64: wraps mod 2⁶⁴, as the chain does)
        x = pad[pos[:, None] + np.arange(length + window)] @ coef
        x += base
        parts.append(x)
    if not parts:
        return np.zeros(0, dtype=np.uint32)
    x = np.concatenate(parts) if len(parts) > 1 else parts[0]
    x.sort()
    same = x[1:] == x[:-1]
    if same.any():  # occurrence numbers (0 for a stand-in's first occurrence)
        at = np.arange(len(x), dtype=np.uint64)
        run = at.copy()  # where each run of equal values starts
        run[1:][same] = 0
        x += (at - np.maximum.accumulate(run)) * np.uint64(0xD6E8FEB86659FD93)
    x ^= x >> np.uint64(33)
    x *= np.uint64(0xFF51AFD7ED558CCD)
    x ^= x >> np.uint64(33)
    return (x >> np.uint64(32)).astype(np.uint32)


_CHAIN_KEYS = (1, 0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0x27D4EB2F165667C5)


@lru_cache(maxsize=8)
def _chain_coefficients(length: int, window: int) -> tuple[np.uint64, np.ndarray]:
    """The chain x = ``length``, x ← x·K_{(j+1) mod 5} + p_j for j < ``length + window``
    (mod 2⁶⁴) written as ``base + Σ coef_j·p_j``: ``base`` = length·ΠK, ``coef_j`` = the
    product of the K's after step j."""
    mask = (1 << 64) - 1
    steps = length + window
    ks = [_CHAIN_KEYS[(j + 1) % len(_CHAIN_KEYS)] for j in range(steps)]
    coef, acc = [0] * steps, 1
    for j in range(steps - 1, -1, -1):
        coef[j] = acc
        acc = acc * ks[j] & mask
    return np.uint64(length * acc & mask), np.array(coef, dtype=np.uint64)


class LetterCandidatesSpotSigs(SpotSigsDetector):
    """SpotSigs verifying the candidates of a segmentation-free stage (issue 13, item 5).

    Candidates: a MinHash LSH (``letter_rows`` × ``letter_bands`` minhashes, the bands kept
    as posting sets in the storage, ``spotsigs:lb:<key>``) over stand-ins for the spot
    signatures found without segmentation (:func:`spot_letter_hashes`: an antecedent's
    letters and the ``spot_window`` letters after it, in the page's letters after NFKC,
    traditional → simplified and lower case; for English, whose tokens cost no
    segmentation, the spot signatures themselves). A band hit is kept when the two minhashes
    agree on at least ``letter_floor`` of their values (the estimated Jaccard of the
    stand-ins). A Chinese text of fewer than ``segment_under`` letters (512) has too few
    signatures for the stand-ins to follow them (on the development webs every copy the
    stand-ins lost had both texts under 430 letters and 1–8 signatures): it is segmented
    whatever its candidates, its signatures' minhash is banded too (``spotsigs:sb:<key>``),
    and a short page's candidates include the short documents that share a band with it
    (no floor). Only then are the page's spot signatures computed (segmenting it), and each
    candidate's: a stored document's when it first becomes a candidate, from its text kept
    in the storage (``spotsigs:lt``: ``lang\\x00text`` in UTF-16, 2 bytes a Chinese
    character; zlib would save a third at 50 µs a page), then cached in this process
    (``cache`` documents, the oldest out). The verifier is SpotSigs' own: the exact multiset
    Jaccard ≥ τ with its length filter, so a match is one the eager detector would verify;
    only the candidate stage differs (docs/benchmarks/dedup.md, "2026-11-27, session 34").

    Per stored document: its text, the minhash (4 bytes a value: ``spotsigs:lm``) and one
    member in each band's set. Everything lives in the storage (memory, SQLite, Redis),
    written and read under the caller's lock, so check-and-add stays atomic as for the
    posting-set detectors; there is no log to replay. Options besides SpotSigs' (``tau``,
    ``antecedents`` …; ``index``, ``rows`` and ``bands`` are not used): ``spot_window`` (2),
    ``letter_rows`` (3), ``letter_bands`` (32), ``letter_floor`` (0.3), ``segment_under``
    (512 letters; 0: off), ``cache`` (4096).
    """

    def __init__(
        self,
        storage: IndexStorage,
        *,
        spot_window: int = 2,
        letter_rows: int = 3,
        letter_bands: int = 32,
        letter_floor: float = 0.3,
        segment_under: int = 512,
        cache: int = 4096,
        **kw: Any,
    ):
        super().__init__(storage, **kw)
        if spot_window < 1 or letter_rows < 1 or letter_bands < 1 or not 0 <= letter_floor <= 1:
            raise ConfigError("SpotSigs spot_window ≥ 1, letter_rows ≥ 1, letter_bands ≥ 1, "
                              "letter_floor in [0, 1]")  # fmt: skip
        self.spot_window, self.letter_rows = int(spot_window), int(letter_rows)
        self.letter_bands, self.letter_floor = int(letter_bands), float(letter_floor)
        self.cache_size = int(cache)
        if segment_under < 0:
            raise ConfigError("SpotSigs segment_under ≥ 0 (letters; 0: off)")
        self.segment_under = int(segment_under)
        n = self.letter_rows * self.letter_bands
        rng = np.random.default_rng(20261127)
        self._mul = rng.integers(1, 2**32, size=n, dtype=np.uint32) | np.uint32(1)
        self._add = rng.integers(0, 2**32, size=n, dtype=np.uint32)
        self._cache: dict[str, Counter[str]] = {}
        self._tables: dict[str, _SpotTable] = {}
        self._sketch_memo: tuple[str, str, tuple[np.ndarray, list[int], list[int]]] | None = None
        #: the prefixes of the band posting sets (:func:`~dedup.storage.hex_keys`)
        self._klb, self._ksb = self.key("lb", ""), self.key("sb", "")

    # -- features ------------------------------------------------------------------------
    def _config_fingerprint(self) -> str:
        return json.dumps(
            {"tau": self.tau, "skip": self.skip, "candidates": "letters",
             "window": self.spot_window, "rows": self.letter_rows, "bands": self.letter_bands,
             "segment_under": self.segment_under},
            sort_keys=True,
        )  # fmt: skip

    def spot_hashes(self, doc: Doc) -> np.ndarray:
        """What the candidate stage hashes (uint32): :func:`spot_letter_hashes` of the page's
        letters, or for English the CRC-32 of its spot signatures (occurrence-numbered)."""
        from dedup.text import letters

        if is_english(doc.lang):
            return _signature_hashes(self.features(doc))
        table = self._tables.get("zh")
        if table is None:
            table = self._tables["zh"] = _SpotTable(self._lang_config("zh").antecedents)
        return spot_letter_hashes_compiled(letters(doc.text or ""), table, self.spot_window)

    def short(self, doc: Doc) -> bool:
        """Whether ``doc`` is a Chinese text of fewer than ``segment_under`` letters: it is
        segmented whatever its candidates, and indexed by its spot signatures too."""
        from dedup.text import letters

        return not is_english(doc.lang) and len(letters(doc.text or "")) < self.segment_under

    def _minhash(self, h: np.ndarray) -> np.ndarray:
        """The minhash of ``h``: one multiply-add hash (mod 2^32) a value
        (:func:`minhash_values`, compiled)."""
        return _fx.minhash(np.ascontiguousarray(h, dtype=np.uint32), self._mul, self._add)

    def _bands(self, mh: np.ndarray) -> list[int]:
        """The bands of a minhash, each's rows mixed (:func:`band_values`, compiled): the hashes
        of its band posting sets (``spotsigs:<kind>:<hash>``, ``lb`` of the stand-ins, ``sb``
        of a short text's signatures)."""
        mh = np.ascontiguousarray(mh, dtype=np.uint32)
        return _fx.band_mix(mh, self.letter_bands, self.letter_rows)

    def sketch(self, doc: Doc) -> tuple[np.ndarray, list[int], list[int]]:
        """The page's stand-ins' minhash, its bands (:meth:`_bands`; none for a text without
        letters) and, for a :meth:`short` text, the bands of its signatures' minhash."""
        memo = self._sketch_memo
        if memo is not None and memo[0] is doc.text and memo[1] == doc.lang:
            return memo[2]
        mh = self._minhash(self.spot_hashes(doc))
        sig_bands = []
        if self.short(doc):
            sig_bands = self._bands(self._minhash(_signature_hashes(self.features(doc))))
        out = (mh, self._bands(mh), sig_bands)
        self._sketch_memo = (doc.text, doc.lang, out)
        return out

    def _stored_signatures(self, ids: list[str]) -> dict[str, Counter[str]]:
        """The spot signatures of stored documents: cached, else from their stored text."""
        out, missing = {}, []
        for d in ids:
            sigs = self._cache.get(d)
            if sigs is None:
                missing.append(d)
            else:
                out[d] = sigs
        if missing:
            for d, raw in zip(missing, self.storage.hmget(self.key("lt"), missing), strict=True):
                if raw is None:
                    continue
                lang, _, text = raw.decode("utf-16-le", "surrogatepass").partition("\x00")
                sigs = self.signatures(tokenize(text, lang), lang)
                self._remember(d, sigs)
                out[d] = sigs
        return out

    def _remember(self, doc_id: str, sigs: Counter[str]) -> None:
        cache = self._cache
        if len(cache) >= self.cache_size:  # the oldest out (dicts keep insertion order)
            del cache[next(iter(cache))]
        cache[doc_id] = sigs

    # -- detector API ----------------------------------------------------------------------
    def candidates(self, doc: Doc) -> list[str]:
        """Stored documents whose stand-ins' minhash shares a band with the page's and agrees
        on at least ``letter_floor`` of its values, and for a :meth:`short` page the stored
        short documents whose signatures' minhash shares a band with its own; sorted."""
        self._check_config()
        mh, bands, sig_bands = self.sketch(doc)
        out = self._union(self._ksb, sig_bands) if sig_bands else set()
        ids = sorted(self._union(self._klb, bands) - out) if bands else []
        if ids:
            need = self.letter_floor * len(mh) - 1e-9
            got = [(d, raw) for d, raw in zip(ids, self.storage.hmget(self.key("lm"), ids),
                                              strict=True) if raw is not None]  # fmt: skip
            rows = np.frombuffer(b"".join(raw for _, raw in got), dtype="<u4")
            if len(rows) == len(got) * len(mh):  # (every stored minhash has the query's size)
                # the values each stored minhash shares with the page's, in one comparison
                agree = (rows.reshape(len(got), len(mh)) == mh).sum(axis=1).tolist()
            else:
                agree = [int((np.frombuffer(raw, dtype="<u4") == mh).sum()) for _, raw in got]
            out.update(d for (d, _), a in zip(got, agree, strict=True) if a >= need)
        return sorted(out)

    def _union(self, prefix: str, bands: list[int]) -> set[str]:
        return self.storage.sunion_hashed(prefix, bands)

    def query(self, doc: Doc) -> list[Match]:
        ids = self.candidates(doc)
        if not ids:
            return []
        sigs = self.features(doc)
        n = sum(sigs.values())
        if not n:
            return []
        tau, found = self.tau, []
        for d, stored in self._stored_signatures(ids).items():
            m = sum(stored.values())
            lo, hi = (n, m) if n < m else (m, n)
            if not m or lo < tau * hi:
                continue
            sim = multiset_jaccard(sigs, stored)
            if sim >= tau:
                found.append(Match(d, sim, self.name))
        found.sort(key=lambda x: (-x.score, x.doc_id))
        return found

    def add(self, doc_id: str, doc: Doc) -> None:
        mh, bands, sig_bands = self.sketch(doc)
        with self.storage.lock(self.name):
            self._remove_locked(doc_id)
            if not self._config_checked:
                self.storage.set(self.key("config"), self._config_fingerprint())
                self._config_checked = True
            if not bands:
                return
            blob = f"{doc.lang}\x00{doc.text}".encode("utf-16-le", "surrogatepass")
            self.storage.hset(self.key("lt"), doc_id, blob)
            self.storage.hset(self.key("lm"), doc_id, mh.astype("<u4").tobytes())
            self.storage.sadd_hashed(self._klb, bands, doc_id)
            if sig_bands:
                self.storage.sadd_hashed(self._ksb, sig_bands, doc_id)
        # segmented already (it had candidates; SpotSigsDetector.features' memo): keep them
        memo = self._last
        if memo is not None and memo[0] is doc.text and memo[1] == doc.lang:
            self._remember(doc_id, memo[2])

    def _remove_locked(self, doc_id: str) -> None:
        raw = self.storage.hget(self.key("lm"), doc_id)
        self._cache.pop(doc_id, None)
        if raw is None:
            return
        self.storage.srem_hashed(self._klb, self._bands(np.frombuffer(raw, dtype="<u4")), doc_id)
        text = self.storage.hget(self.key("lt"), doc_id)
        if text is not None:  # a short text's signature bands: segmented again (it is short)
            lang, _, body = text.decode("utf-16-le", "surrogatepass").partition("\x00")
            doc = Doc(body, lang=lang)
            if self.short(doc):
                sigs = self.signatures(tokenize(body, lang), lang)
                sig_bands = self._bands(self._minhash(_signature_hashes(sigs)))
                self.storage.srem_hashed(self._ksb, sig_bands, doc_id)
        self.storage.hdel(self.key("lt"), doc_id)
        self.storage.hdel(self.key("lm"), doc_id)

    def remove(self, doc_id: str) -> None:
        with self.storage.lock(self.name):
            self._remove_locked(doc_id)

    def check_and_add(self, doc_id: str, doc: Doc) -> Match | None:
        """Atomically: the best stored near duplicate (J ≥ τ) of ``doc``, or store it."""
        return Detector.check_and_add(self, doc_id, doc)

    def check_and_add_signatures(self, doc_id: str, sigs: Mapping[str, int]) -> Match | None:
        raise ConfigError("SpotSigs with letter candidates checks documents, not signatures")

    def add_many(self, items: Iterable[tuple[str, Mapping[str, int]]]) -> None:
        raise ConfigError("SpotSigs with letter candidates adds documents, not signatures")

    def compact(self, *, chunk: int = 5000) -> tuple[int, int]:
        return (0, 0)  # no log

    def sync_memory(self) -> None:
        return None

    def adopt_memory(self, other: Detector) -> None:
        return None

    def __len__(self) -> int:
        return self.storage.hlen(self.key("lt"))
