"""Title + summary: the meta-search engines' duplicate test, used as a cheap first stage.

A meta-search engine sees only each result's title and snippet; it calls two results the same
page when their *title themes* are more than 85% similar (TSimilarity > 0.85) or their
summaries more than 70% similar (SSimilarity > 0.70).  Those values were set for the
meta-search engines' own measure; bigram Dice runs lower, so the defaults here,
``t_thr = 0.6`` and ``s_thr = 0.4``, were chosen by measurement on the tuning templates of the
real-page set (``bench/dedup.py``, docs/benchmarks/dedup.md; unseen templates F1 0.895 vs
0.886 with 0.85 / 0.70).  Here:

* the title theme is the title with the site name stripped: the title is split at the
  separators sites use to append or prepend their name (``-`` ``|`` ``_`` ``—`` ``–`` and their
  full-width forms ``－`` ``｜`` ``＿``; an ASCII ``-`` only when a space or a Chinese character
  is next to it, so ``COVID-19`` stays whole) and the longest part is kept (ties: the first);
* the summary is the page's meta description, or else the lead of the main text (the first
  ``lead_chars`` = 120 characters after normalisation);
* the similarity of two strings is the Dice coefficient of their character-bigram sets,
  ``2 |A ∩ B| / (|A| + |B|)``, after NFKC normalisation, lower-casing and removal of spaces
  and punctuation.  Why bigram Dice and not an edit-distance ratio: it needs no word
  segmentation (a Chinese bigram is roughly a word), one edited character costs only two
  bigrams, changed spaces and punctuation cost nothing, it runs in linear time, and its
  bigrams are what the index keys on (an edit-distance ratio is quadratic and cannot be
  looked up).

Titles shorter than ``min_title_chars`` (6) characters after normalisation are not compared
(``新闻``, ``图片``, ``Home``: not evidence), nor summaries shorter than ``min_summary_chars``.

Length guard (ours, not the meta-search method's, which never sees the text): with
``max_length_ratio`` (default 1.5) two pages whose main texts differ in length by more than
that factor (Chinese characters, or words for English; see
:func:`dedup.featurecode.text_length`) are not duplicates even with the same title and lead.
A reprint cut to its first half or followed by a long commentary keeps the title and the lead
but is a different page by the feature-code paper's definition (the cascade calls the
commentary page a copy since issue 17 and catches it by containment); without the guard this
first stage of the cascade would match every half article.  ``max_length_ratio=None`` is the pure method.

Works for any language written with letters or Chinese characters (``Doc.lang`` is not used:
bigrams of an English title are letter pairs, which Dice handles as well).
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from dataclasses import dataclass

from dedup.base import Doc, PostingIndexDetector, register
from dedup.featurecode import length_ok, method_lang, text_length
from dedup.storage import IndexStorage
from dedup.text import to_simplified

_SEPARATORS = re.compile(
    r"\s*(?:[|｜_＿—–－]+|(?<=\s)-+(?=\s)|(?<=[\u4e00-\u9fff])-+|-+(?=[\u4e00-\u9fff]))\s*"
)
_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)


def normalize(text: str) -> str:
    """NFKC, lower case, spaces and punctuation removed."""
    return _NON_WORD.sub("", unicodedata.normalize("NFKC", to_simplified(text)).lower())


def title_parts(title: str) -> list[str]:
    """The non-empty parts of a title split at site-name separators."""
    return [p.strip() for p in _SEPARATORS.split(title) if p and p.strip()]


def title_theme(title: str) -> str:
    """The title without site names: the longest part (by normalised length; ties: first)."""
    parts = title_parts(unicodedata.normalize("NFKC", title))
    if not parts:
        return ""
    return max(parts, key=lambda p: len(normalize(p)))  # max keeps the first on ties


def bigrams(text: str) -> set[str]:
    """Character bigrams of an already normalised string (a 1-character string is its own)."""
    if len(text) < 2:
        return {text} if text else set()
    return {text[i : i + 2] for i in range(len(text) - 1)}


def dice(a: str, b: str) -> float:
    """Bigram Dice similarity of two normalised strings, in [0, 1]."""
    ga, gb = bigrams(a), bigrams(b)
    if not ga or not gb:
        return 0.0
    return 2.0 * len(ga & gb) / (len(ga) + len(gb))


def summary_of(description: str, text: str, *, lead_chars: int = 120) -> str:
    """The normalised summary: the meta description if it has content, else the text's lead."""
    desc = normalize(description or "")
    if desc:
        return desc[: lead_chars * 2]
    return normalize(text or "")[:lead_chars]


@dataclass
class TitleSummary:
    """What is compared and stored: the normalised title theme and summary, and the length
    of the main text (for the length guard)."""

    theme: str
    summary: str
    length: int = 0

    def to_json(self) -> str:
        return json.dumps(
            {"t": self.theme, "s": self.summary, "n": self.length}, ensure_ascii=False
        )

    @classmethod
    def from_json(cls, raw: str | bytes) -> TitleSummary:
        data = json.loads(raw)
        return cls(data["t"], data["s"], int(data.get("n", 0)))


def page_features(
    title: str, description: str = "", text: str = "", *, lang: str = "zh", lead_chars: int = 120
) -> TitleSummary:
    return TitleSummary(
        normalize(title_theme(title)),
        summary_of(description, text, lead_chars=lead_chars),
        text_length(text or "", lang=method_lang(lang)),
    )


def similarity(
    a: TitleSummary,
    b: TitleSummary,
    *,
    t_thr: float = 0.6,
    s_thr: float = 0.4,
    min_title_chars: int = 6,
    min_summary_chars: int = 20,
    max_length_ratio: float | None = 1.5,
) -> float:
    """The method's decision as a score: the title similarity if it is ``> t_thr``, else the
    summary similarity if it is ``> s_thr``, else 0.0 (not a duplicate); 0.0 as well when
    both texts have a length and they differ by more than ``max_length_ratio``."""
    if max_length_ratio is not None and a.length and b.length:
        if not length_ok(a.length, b.length, a=max_length_ratio):
            return 0.0
    if min(len(a.theme), len(b.theme)) >= min_title_chars:
        t = dice(a.theme, b.theme)
        if t > t_thr:
            return t
    if min(len(a.summary), len(b.summary)) >= min_summary_chars:
        s = dice(a.summary, b.summary)
        if s > s_thr:
            return s
    return 0.0


def _h(gram: str) -> int:
    return int.from_bytes(hashlib.blake2b(gram.encode("utf-8"), digest_size=8).digest(), "big")


def sketch(text: str, k: int) -> list[str]:
    """Bottom-``k`` sketch: the ``k`` bigrams of ``text`` with the smallest stable hashes.
    Two strings with bigram Jaccard ``J`` share none of them with probability about
    ``(1 - J)^k`` (title Dice 0.6 -> J 0.43, k=16: 1e-4; summary Dice 0.4 -> J 0.25, k=32:
    1e-4)."""
    return sorted(bigrams(text), key=_h)[:k]


@register("title")
class TitleSummaryDetector(PostingIndexDetector[TitleSummary]):
    """Title + summary with its index in an :class:`IndexStorage`.

    Keys: ``title:docs`` (hash doc id -> theme and summary), ``title:t:<theme>`` (exact
    theme), ``title:tb:<bigram>`` (bottom-``title_k`` sketch of the theme) and
    ``title:sb:<bigram>`` (bottom-``summary_k`` sketch of the summary); candidates from these
    sets are checked with :func:`similarity`."""

    feature_type = TitleSummary

    def __init__(
        self,
        storage: IndexStorage,
        *,
        t_thr: float = 0.6,
        s_thr: float = 0.4,
        min_title_chars: int = 6,
        min_summary_chars: int = 20,
        lead_chars: int = 120,
        max_length_ratio: float | None = 1.5,
        title_k: int = 16,
        summary_k: int = 32,
        **params: object,
    ):
        super().__init__(storage, **params)
        self.t_thr, self.s_thr = t_thr, s_thr
        self.min_title_chars, self.min_summary_chars = min_title_chars, min_summary_chars
        self.lead_chars, self.title_k, self.summary_k = lead_chars, title_k, summary_k
        self.max_length_ratio = max_length_ratio

    def features(self, doc: Doc) -> TitleSummary:
        return page_features(
            doc.title, doc.description, doc.text, lang=doc.lang, lead_chars=self.lead_chars
        )

    def posting_keys(self, feats: TitleSummary) -> list[str]:
        keys = []
        if len(feats.theme) >= self.min_title_chars:
            keys.append(self.key("t", feats.theme))
            keys += [self.key("tb", g) for g in sketch(feats.theme, self.title_k)]
        if len(feats.summary) >= self.min_summary_chars:
            keys += [self.key("sb", g) for g in sketch(feats.summary, self.summary_k)]
        return keys

    def score(self, query: TitleSummary, stored: TitleSummary) -> float:
        return similarity(
            query,
            stored,
            t_thr=self.t_thr,
            s_thr=self.s_thr,
            min_title_chars=self.min_title_chars,
            min_summary_chars=self.min_summary_chars,
            max_length_ratio=self.max_length_ratio,
        )
