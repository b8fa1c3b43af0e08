"""Text helpers shared by the dedup methods: normalization, tokenization, stopword lists."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from importlib import resources

from topicrawl.errors import ConfigError
from topicrawl.segment import normalize, segment_zh

_WS = re.compile(r"\s+")
#: a token worth keeping: has a letter, digit or CJK character
_WORDY = re.compile(r"[0-9A-Za-z\u00c0-\u024f\u0400-\u04ff\u3400-\u9fff\uf900-\ufaff]")
#: English tokens (after SpotSigs' delimiter-based tokenizer: letters/digits/apostrophes)
_EN_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def is_english(lang: str | None) -> bool:
    """True for English-like (space-delimited Latin script) language codes."""
    return bool(lang) and lang.lower().split("-")[0].split("_")[0] in {"en", "de", "fr", "es"}


def normalize_text(text: str) -> str:
    """NFKC, lowercase and collapse whitespace (so layout and width changes do not matter)."""
    return _WS.sub(" ", unicodedata.normalize("NFKC", text or "")).strip().lower()


def tokenize(text: str, lang: str = "zh") -> list[str]:
    """Word tokens of ``text``: jieba for Chinese, a regex for English; punctuation dropped.

    Tokens are NFKC-normalized and lowercased. Chinese tokens come from
    :func:`topicrawl.segment.segment_zh` (case kept while segmenting: A股 stays one word),
    the segmentation that page relevance has already done (and memoised) for a crawled
    page's text.
    """
    if is_english(lang):
        return _EN_TOKEN.findall(normalize(text).lower())
    return [t.lower() for t in segment_zh(text or "") if _WORDY.search(t)]


@lru_cache(maxsize=8)
def stopwords(lang: str = "zh") -> frozenset[str]:
    """The packaged stopword list (stopwords-iso) for ``zh`` or ``en``."""
    code = "en" if is_english(lang) else "zh" if lang.lower().startswith("zh") else lang
    try:
        raw = resources.files("dedup.data").joinpath(f"stopwords_{code}.txt").read_text("utf-8")
    except FileNotFoundError as exc:
        raise ConfigError(f"no packaged stopword list for language {lang!r} (have zh, en)") from exc
    return frozenset(
        line.strip() for line in raw.splitlines() if line.strip() and not line.startswith("#")
    )
