"""Feature code + length: near-duplicate detection from the text around sentence ends.

Peng, Zhao, Zheng & Yu (Harbin Institute of Technology), after Zhang et al. 2002 (feature
strings for large-scale Chinese web-page deduplication): take the ``L`` Chinese characters on each side
of a 句号 (。) as the page's *feature code*; two pages are duplicates when their codes match
and their lengths are close, ``longer / shorter <= a`` (``a = 1.10``).  The length test is
what makes a reprint cut to its first half, or one with a long added commentary, a
*different* page: it shares the code but not the length. (The cascade follows issue 17,
item 3 instead: a page that contains most of an accepted document, commentary and all, is
its duplicate; the containment stage catches it.)

Tolerant matching (the HIT paper's rule as implemented here): two codes match when on each
side the two ``L``-unit strings have a common subsequence of length ``>= L - tol``
(``tol = 1``: one character inserted, deleted or replaced per side is tolerated; ``tol = 2``:
two; ``tol = 0``: exact).  For two strings of equal length ``L`` that is the same as "deleting
``tol`` units from each leaves the same string", which is what the index keys on (the
*deletion variants*, shorter subsequences of each side), so a tolerant lookup is a few hash
lookups and never misses a match.

The paper uses the first 句号 only and notes the weakness (an edit or an added lead sentence
changes the code).  ``codes="multi"`` takes every 句号 with ``L`` units on both sides and keeps
the ``k`` codes with the smallest hash values (a content-defined choice: an inserted or removed
sentence does not shift which sentences are chosen, unlike evenly spaced positions); two pages
match when at least ``m`` of the query's codes match one of the other page's codes (and the
lengths agree).

Languages: Chinese (``lang="zh"``: units are Chinese characters, sentence end 。, length in
Chinese characters) and English (``lang="en"``: units are lower-cased words, sentence end a
``.`` followed by a space or the end, length in words).  The detector sends ``zh*`` and an
empty ``Doc.lang`` down the Chinese path and every other language down the English one
(:func:`method_lang`).
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from dedup.base import Doc, PostingIndexDetector, register
from dedup.storage import IndexStorage
from dedup.text import to_simplified
from topicrawl.errors import ConfigError

Code = tuple[tuple[str, ...], tuple[str, ...]]

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_EN_UNIT = re.compile(r"[a-z0-9]+(?:'[a-z]+)?|\.(?=\s|$)")


def units(text: str, *, lang: str = "zh") -> tuple[list[str], list[int]]:
    """The text as code units and the indices of the units that end a sentence.

    Chinese: the Chinese characters, with 。 kept as a marker (other characters dropped).
    English: lower-cased words, with ``.`` markers where a full stop ends a sentence.
    Returns ``(units without markers, positions of sentence ends)``, a position ``q`` meaning
    "between unit ``q-1`` and unit ``q``"."""
    text = unicodedata.normalize("NFKC", to_simplified(text) if lang == "zh" else text)
    out: list[str] = []
    ends: list[int] = []
    if lang == "zh":
        for ch in text:
            if ch == "。":
                ends.append(len(out))
            elif _CJK.match(ch):
                out.append(ch)
    elif lang == "en":
        for tok in _EN_UNIT.findall(text.lower()):
            if tok == ".":
                ends.append(len(out))
            else:
                out.append(tok)
    else:
        raise ConfigError(f"feature codes support lang 'zh' and 'en', not {lang!r}")
    return out, ends


def method_lang(lang: str | None) -> str:
    """The code path a ``Doc.lang`` takes in the detectors: ``"zh"`` for Chinese (``zh``,
    ``zh-CN``, ... or unknown/empty), ``"en"`` (space-delimited words) for anything else."""
    if not lang or lang.lower().startswith("zh"):
        return "zh"
    return "en"


def text_length(text: str, *, lang: str = "zh") -> int:
    """The length compared by the ``a`` test: Chinese characters (zh) or words (en)."""
    return len(units(text, lang=lang)[0])


def all_codes(text: str, *, lang: str = "zh", L: int = 5) -> list[Code]:  # noqa: N803
    """Every feature code of ``text``: for each sentence end with at least ``L`` units on both
    sides, the ``L`` units before and the ``L`` units after it, in text order (repeats kept
    once)."""
    seq, ends = units(text, lang=lang)
    seen: set[Code] = set()
    out: list[Code] = []
    for q in ends:
        if q >= L and q + L <= len(seq):
            code = (tuple(seq[q - L : q]), tuple(seq[q : q + L]))
            if code not in seen:
                seen.add(code)
                out.append(code)
    return out


def code_hash(code: Code) -> int:
    """A stable 64-bit hash of a code (process-independent, unlike ``hash``)."""
    raw = "\x1f".join(code[0]) + "\x1e" + "\x1f".join(code[1])
    return int.from_bytes(hashlib.blake2b(raw.encode("utf-8"), digest_size=8).digest(), "big")


def feature_codes(
    text: str,
    *,
    lang: str = "zh",
    L: int = 5,  # noqa: N803
    codes: str = "first",
    k: int = 5,
) -> list[Code]:
    """The codes a page is indexed by: ``codes="first"`` -- the code at the first qualifying
    sentence end (the paper); ``codes="multi"`` -- the ``k`` codes with the smallest
    :func:`code_hash`, in text order."""
    found = all_codes(text, lang=lang, L=L)
    if codes == "first":
        return found[:1]
    if codes == "multi":
        chosen = set(sorted(found, key=code_hash)[:k])
        return [c for c in found if c in chosen]
    raise ConfigError(f"codes must be 'first' or 'multi', not {codes!r}")


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence (dynamic programming, O(|a| |b|))."""
    if not a or not b:
        return 0
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def codes_match(a: Code, b: Code, *, tol: int = 1) -> bool:
    """Tolerant match: on each side a common subsequence of length ``>= L - tol``."""
    if a == b:
        return True
    for sa, sb in zip(a, b, strict=True):
        if lcs_length(sa, sb) < max(len(sa), len(sb)) - tol:
            return False
    return True


def length_ok(len_a: int, len_b: int, *, a: float = 1.10) -> bool:
    """The paper's length test: ``longer / shorter <= a`` (two empty texts agree)."""
    lo, hi = sorted((len_a, len_b))
    if lo == 0:
        return hi == 0
    return hi / lo <= a


@dataclass
class FeatureCodes:
    """What the index stores for a page: its codes and its length."""

    codes: list[Code]
    length: int

    def to_json(self) -> str:
        return json.dumps(
            {"c": [[list(lt), list(rt)] for lt, rt in self.codes], "n": self.length},
            ensure_ascii=False,
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, raw: str | bytes) -> FeatureCodes:
        data = json.loads(raw)
        return cls([(tuple(lt), tuple(rt)) for lt, rt in data["c"]], int(data["n"]))


def page_features(
    text: str,
    *,
    lang: str = "zh",
    L: int = 5,  # noqa: N803
    codes: str = "first",
    k: int = 5,
) -> FeatureCodes:
    return FeatureCodes(
        feature_codes(text, lang=lang, L=L, codes=codes, k=k), text_length(text, lang=lang)
    )


def match_score(
    a: FeatureCodes,
    b: FeatureCodes,
    *,
    tol: int = 1,
    a_ratio: float = 1.10,
    m: int = 2,
) -> float:
    """Fraction of ``a``'s codes that match one of ``b``'s; 0.0 when the lengths fail the
    ``a_ratio`` test or fewer than ``min(m, |a|, |b|)`` codes match (so "first" mode, one code
    each, needs that code to match)."""
    if not a.codes or not b.codes or not length_ok(a.length, b.length, a=a_ratio):
        return 0.0
    hits = sum(1 for ca in a.codes if any(codes_match(ca, cb, tol=tol) for cb in b.codes))
    need = max(1, min(m, len(a.codes), len(b.codes)))
    return hits / len(a.codes) if hits >= need else 0.0


def is_duplicate(
    text_a: str,
    text_b: str,
    *,
    lang: str = "zh",
    L: int = 5,  # noqa: N803
    tol: int = 1,
    a: float = 1.10,
    codes: str = "first",
    k: int = 5,
    m: int = 2,
) -> bool:
    """Pure pairwise test of the method (what the detector decides through its index)."""
    fa = page_features(text_a, lang=lang, L=L, codes=codes, k=k)
    fb = page_features(text_b, lang=lang, L=L, codes=codes, k=k)
    return match_score(fa, fb, tol=tol, a_ratio=a, m=m) > 0.0


def deletion_variants(side: Sequence[str], tol: int) -> list[str]:
    """Every way of deleting ``tol`` units from ``side`` (joined, deduplicated, sorted)."""
    n = len(side)
    if tol <= 0 or tol >= n:
        return ["\x1f".join(side)] if tol <= 0 else [""]
    out = {
        "\x1f".join(u for i, u in enumerate(side) if i not in drop)
        for drop in map(set, combinations(range(n), tol))
    }
    return sorted(out)


@register("featurecode")
class FeatureCodeDetector(PostingIndexDetector[FeatureCodes]):
    """Feature code + length with its index in an :class:`IndexStorage`.

    Keys: ``featurecode:docs`` (hash doc id -> codes and length); for ``tol = 0``
    ``featurecode:c:<code>`` (set of doc ids, an exact hash lookup); for ``tol > 0``
    ``featurecode:l<tol>:<variant>`` and ``featurecode:r<tol>:<variant>`` over the deletion
    variants of each side -- a candidate must hit a left and a right key of the same code;
    candidates are then checked with :func:`match_score` (codes and length)."""

    feature_type = FeatureCodes

    def __init__(
        self,
        storage: IndexStorage,
        *,
        L: int = 5,  # noqa: N803
        tol: int = 1,
        a: float = 1.10,
        codes: str = "first",
        k: int = 5,
        m: int = 2,
        **params: object,
    ):
        super().__init__(storage, **params)
        if codes not in ("first", "multi"):
            raise ConfigError(f"featurecode codes must be 'first' or 'multi', not {codes!r}")
        if not 0 <= tol < L:
            raise ConfigError(f"featurecode tol must be in [0, L), got tol={tol}, L={L}")
        self.L, self.tol, self.a, self.codes, self.k, self.m = L, tol, a, codes, k, m

    def features(self, doc: Doc) -> FeatureCodes:
        return page_features(
            doc.text, lang=method_lang(doc.lang), L=self.L, codes=self.codes, k=self.k
        )

    def _code_keys(self, code: Code) -> tuple[list[str], list[str]]:
        if self.tol == 0:
            return [self.key("c", "\x1f".join(code[0]) + "\x1e" + "\x1f".join(code[1]))], []
        left = [self.key(f"l{self.tol}", v) for v in deletion_variants(code[0], self.tol)]
        right = [self.key(f"r{self.tol}", v) for v in deletion_variants(code[1], self.tol)]
        return left, right

    def posting_keys(self, feats: FeatureCodes) -> list[str]:
        keys: list[str] = []
        for code in feats.codes:
            left, right = self._code_keys(code)
            keys += left + right
        return keys

    def indexed(self, feats: FeatureCodes) -> bool:
        return bool(feats.codes)

    def candidates(self, feats: FeatureCodes) -> set[str]:
        """Per code: the docs under one of its left keys and (``tol > 0``) one of its right."""
        out: set[str] = set()
        for code in feats.codes:
            left, right = self._code_keys(code)
            hits = self._union(left)
            if right and hits:
                hits &= self._union(right)
            out |= hits
        return out

    def score(self, query: FeatureCodes, stored: FeatureCodes) -> float:
        return match_score(query, stored, tol=self.tol, a_ratio=self.a, m=self.m)
