"""Topic-word weights (formula 2) and the candidate words of a text ("待匹配词").

Formula 2 (Zhou, Wang & Yu 2019) weighs topic word i by its frequency and rarity in a
domain corpus:

    w_i = (f_i / N) · log(N / N_i)

with f_i the occurrences of i in the corpus, N the number of documents and N_i the number
that contain i. topicrawl computes tf(t) · log(N / n_t + 0.01), cosine-normalised over the
topic words, and rescales so that the largest weight is 1: the factor 1/N and the
normalisation are constant over the topic words, so they change no ranking; the + 0.01
(from the classic normalised tf·idf) keeps a word found in every document (N_i = N) from
weighing exactly 0, and otherwise shifts the logarithm by less than 0.01·N_i/N. Topic words
absent from the corpus get the mean weight. Manual overrides (their Table 3) are applied on
top by :attr:`relevance.topic.Topic.weights`.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from topicrawl.errors import ResourceMissingError
from topicrawl.segment import TermMerger, segment_zh

_TAGGED = re.compile(r"^(\S+)/[A-Za-z]{1,4}$")
_HAS_WORDCHAR = re.compile(r"[A-Za-z0-9\u4e00-\u9fff]")
_EN_TOKEN = re.compile(r"[A-Za-z][A-Za-z'-]*[A-Za-z]|[A-Za-z]")


def formula2_weights(
    documents: Iterable[str], terms: Sequence[str], *, scale_max: bool = True
) -> dict[str, float]:
    """Formula 2 weights of ``terms`` over ``documents`` (raw texts; substring counts)."""
    terms = list(dict.fromkeys(t for t in terms if t))
    tf = dict.fromkeys(terms, 0)
    df = dict.fromkeys(terms, 0)
    n_docs = 0
    for doc in documents:
        n_docs += 1
        for t in terms:
            c = doc.count(t)
            if c:
                tf[t] += c
                df[t] += 1
    if n_docs == 0:
        raise ResourceMissingError("the weight corpus is empty")
    raw = {t: tf[t] * math.log(n_docs / df[t] + 0.01) for t in terms if df[t]}
    norm = math.sqrt(sum(v * v for v in raw.values())) or 1.0
    weights = {t: v / norm for t, v in raw.items()}
    if not weights:
        return dict.fromkeys(terms, 1.0)
    mean = sum(weights.values()) / len(weights)
    out = {t: weights.get(t, mean) for t in terms}
    if scale_max:
        top = max(out.values()) or 1.0
        out = {t: v / top for t, v in out.items()}
    return out


def read_documents(paths: Sequence[str | Path], *, label: str | None = None) -> Iterator[str]:
    """Documents of corpus files, one a line: ``label<TAB>text`` keeps the text (only lines
    with ``label`` when given), ``word/pos`` lines are joined back into plain text."""
    for p in paths:
        path = Path(p)
        if not path.exists():
            raise ResourceMissingError(f"corpus file {path} not found")
        with path.open(encoding="utf-8", errors="replace") as fh:
            for line in fh:
                line = line.strip()
                if not line:
                    continue
                if "\t" in line:
                    lab, line = line.split("\t", 1)
                    if label is not None and lab.strip() != label:
                        continue
                elif label is not None:
                    continue
                parts = line.split()
                if parts and sum(bool(_TAGGED.match(x)) for x in parts) >= 0.8 * len(parts):
                    line = "".join(m.group(1) for x in parts if (m := _TAGGED.match(x)))
                yield line


_TAG_GROUPS: dict[str, str] | None = None
_WORD_TAGS: dict[str, str] | None = None
_EXCLUDED: dict[frozenset, frozenset] = {}
#: words whose keep-or-drop verdict :class:`CandidateExtractor` remembers (≈ 100 B each);
#: later words are decided again each time
KEEP_CACHE_SIZE = 500_000


def jieba_tag_groups() -> dict[str, str]:
    """jieba's dictionary as POS tag -> its words (newline-separated), through the start-up
    cache (:mod:`topicrawl.modelcache`, keyed by the SHA-256 of jieba's ``dict.txt``): jieba
    parses its 350,000-line dictionary (``jieba.posseg.dt.word_tag_tab``) in 0.5-1 s; the
    cached groups load in a few milliseconds."""
    global _TAG_GROUPS
    if _TAG_GROUPS is not None:
        return _TAG_GROUPS
    import importlib.util
    from importlib.metadata import version

    from topicrawl import modelcache

    def build() -> dict:
        import jieba
        import jieba.posseg

        jieba.setLogLevel(60)
        groups: dict[str, list[str]] = {}
        for word, tag in jieba.posseg.dt.word_tag_tab.items():
            groups.setdefault(tag, []).append(word)
        return {"tags": {tag: "\n".join(words) for tag, words in groups.items()}}

    spec = importlib.util.find_spec("jieba")
    dict_file = Path(spec.origin).parent / "dict.txt" if spec and spec.origin else None
    if dict_file is None or not dict_file.exists() or not modelcache.enabled():
        value = build()
    else:
        key = modelcache.cache_key("jieba-tags", {"jieba": version("jieba")}, files=[dict_file])
        value = modelcache.cached("jieba-tags", key, build)
    _TAG_GROUPS = dict(value["tags"])
    return _TAG_GROUPS


def jieba_word_tags() -> dict[str, str]:
    """jieba's dictionary word -> POS tag (``jieba.posseg.dt.word_tag_tab``), built from
    :func:`jieba_tag_groups` (≈ 40 MB: an extractor whose POS set admits unknown words
    reads :func:`excluded_words` instead). Do not modify the returned dict."""
    global _WORD_TAGS
    if _WORD_TAGS is None:
        tags: dict[str, str] = {}
        for tag, blob in jieba_tag_groups().items():
            tags.update(dict.fromkeys(blob.split("\n"), tag))
        _WORD_TAGS = tags
    return _WORD_TAGS


def excluded_words(pos: frozenset) -> frozenset:
    """The dictionary words whose tag is not in ``pos`` (38,000 of 349,000 for the default
    POS set): all an extractor needs when unknown words are admitted."""
    found = _EXCLUDED.get(pos)
    if found is None:
        words: set[str] = set()
        for tag, blob in jieba_tag_groups().items():
            if tag not in pos:
                words.update(blob.split("\n"))
        found = _EXCLUDED[pos] = frozenset(words)
    return found


class CandidateExtractor:
    """Candidate words of a text: jieba segmentation filtered by POS, length and stop words.

    Chinese: the shared segmentation of :func:`topicrawl.segment.segment_zh` (jieba's default
    dictionary over the NFKC-normalised text, one pass per page shared with SpotSigs), with
    the topic's multi-word terms joined back into one token (:class:`TermMerger`). The POS of
    each token is read from jieba's dictionary tags (the table ``jieba.posseg`` uses), so
    filtering costs a dict lookup rather than a second HMM pass. Tokens unknown to the
    dictionary (new words found by jieba's HMM) are kept as ``unknown_pos`` (nz). English:
    lower-cased word tokens minus stop words.
    """

    def __init__(
        self,
        *,
        language: str = "zh",
        pos: Iterable[str] = ("n", "nr", "ns", "nt", "nz", "vn", "v", "a", "an", "j", "l", "i"),
        min_length: int = 2,
        topic_words: Iterable[str] = (),
        unknown_pos: str = "nz",
    ):
        import stopwordsiso

        self.language = language
        self.pos = frozenset(pos)
        self.min_length = min_length
        self.stop = frozenset(stopwordsiso.stopwords("zh" if language == "zh" else "en"))
        self.unknown_pos = unknown_pos
        self._tags: dict[str, str] = {}
        self._term_tags: dict[str, str] = {}  # topic terms missing from the dictionary
        self._excluded: frozenset | None = None  # dictionary words whose tag is not in pos
        self._merge: TermMerger | None = None
        if language == "zh":
            self._merge = TermMerger(w for w in topic_words if w and " " not in w)
            if self.unknown_pos in self.pos and "nz" in self.pos:
                # unknown words and topic terms pass: only the excluded dictionary words
                # matter (a few MB, where the whole tag table is ≈ 40 MB)
                self._excluded = excluded_words(self.pos)
            else:
                self._tags = jieba_word_tags()  # shared, read-only
                self._term_tags = {w: "nz" for w in self._merge.terms if w not in self._tags}
        self._keep: dict[str, bool] = {}

    def segment(self, text: str) -> list[str]:
        """Plain segmentation (no filtering), topic terms whole."""
        if self._merge is not None:
            return self._merge(segment_zh(text))
        return _EN_TOKEN.findall(text.lower())

    def _ok(self, w: str) -> bool:
        k = self._keep.get(w)
        if k is None:
            if len(w) < self.min_length or w in self.stop or not _HAS_WORDCHAR.search(w):
                k = False
            elif self._excluded is not None:
                k = w not in self._excluded
            elif self.language == "zh":
                tag = self._tags.get(w) or self._term_tags.get(w, self.unknown_pos)
                k = tag in self.pos
            else:
                k = True
            if len(self._keep) < KEEP_CACHE_SIZE:
                self._keep[sys.intern(w)] = k
        return k

    def __call__(self, text: str) -> list[str]:
        if not text:
            return []
        return [w for w in self.segment(text) if self._ok(w)]

    def cache_key(self) -> dict:
        """Everything that decides this extractor's words, for keys of on-disk caches
        (:mod:`topicrawl.modelcache`): settings, merged terms and the segmenters' versions."""
        from importlib.metadata import PackageNotFoundError, version

        versions = {}
        for package in ("jieba", "rjieba", "stopwordsiso"):
            try:
                versions[package] = version(package)
            except PackageNotFoundError:
                versions[package] = None
        return {
            "language": self.language,
            "pos": sorted(self.pos),
            "min_length": self.min_length,
            "unknown_pos": self.unknown_pos,
            "terms": sorted(self._merge.terms) if self._merge is not None else [],
            "versions": versions,
        }
