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
#: a token (between NUL separators) without any character that _WORDY accepts, with the
#: separator before it
_NON_WORD_TOKEN = re.compile(
    "\x00[^\x000-9A-Za-z\u00c0-\u024f\u0400-\u04ff\u3400-\u9fff\uf900-\ufaff]+(?=\x00)"
)
#: English tokens (after SpotSigs' delimiter-based tokenizer: letters/digits/apostrophes)
_EN_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def is_english(lang: str | None) -> bool:
    """True for English-like (space-delimited Latin script) language codes."""
    return bool(lang) and lang.lower().split("-")[0].split("_")[0] in {"en", "de", "fr", "es"}


def normalize_text(text: str) -> str:
    """NFKC, lowercase and collapse whitespace (so layout and width changes do not matter)."""
    return _WS.sub(" ", unicodedata.normalize("NFKC", text or "")).strip().lower()


#: The 80 most frequent traditional-only characters of news text (OpenCC s2t of the cnews
#: articles; none of them is also a simplified character): a short text in traditional
#: characters holds several of them, a simplified one none.
_TRADITIONAL = re.compile(
    "[國這爲個業來學時對會們場發經產現後資於過說還開價進實將與內機數長電動報記沒點體當關從費"
    "銀問間計隊樣據麼賽總應並規兩萬設無務員調讓顯題節選華裝級戰證單種該風變銷爾]"
)


@lru_cache(maxsize=1)
def _t2s():
    from opencc import OpenCC

    return OpenCC("t2s")


def to_simplified(text: str, *, min_share: float = 0.01) -> str:
    """``text`` in simplified characters (OpenCC t2s, phrase-aware) when common
    traditional-only characters make up at least ``min_share`` of it (and at least 3), else
    ``text`` itself. A reprint in traditional characters (Hong Kong and Taiwan sites) is then
    the same document; simplified text costs one regex scan."""
    if not text:
        return text
    found = len(_TRADITIONAL.findall(text))
    if found >= 3 and found >= min_share * len(text):
        return _t2s().convert(text)
    return text


def tokenize(text: str, lang: str = "zh") -> list[str]:
    """Word tokens of ``text``: jieba for Chinese, a regex for English; punctuation dropped.

    Tokens are NFKC-normalized and lowercased. Chinese tokens come from
    :func:`topicrawl.segment.segment_zh` (case kept while segmenting: A股 stays one word),
    the segmentation that page relevance has already done (and memoised) for a crawled
    page's text. Text in traditional characters is converted first (:func:`to_simplified`).
    The last result is memoised (keyed by the text object), so the methods of a cascade
    share one tokenization of a page. Do not modify the returned list.
    """
    memo = _TOKENS_MEMO
    if memo[0] is text and memo[1] == lang:
        return memo[2]
    joined = None
    if is_english(lang):
        out = _EN_TOKEN.findall(normalize(text).lower())
    else:
        toks = segment_zh(to_simplified(text or ""))
        # one pass over the joined tokens: lowercase, drop the tokens without a word
        # character (punctuation, spaces), split
        joined = _NON_WORD_TOKEN.sub("", "\x00" + "\x00".join(toks).lower() + "\x00")
        out = joined.split("\x00")[1:-1] if toks and len(joined) > 1 else []
        joined = joined[1:-1] if out else ""
    _TOKENS_MEMO[:] = [text, lang, out, joined]
    return out


def joined_tokens(text: str, lang: str = "zh") -> str:
    """``"\\x00".join(tokenize(text, lang))``, reusing the string :func:`tokenize` built."""
    toks = tokenize(text, lang)
    memo = _TOKENS_MEMO
    if memo[3] is None:
        memo[3] = "\x00".join(toks)
    return memo[3]


_TOKENS_MEMO: list = [None, None, None, None]


def letters(text: str):
    """The letters and digits of ``text`` (``re.sub(r"[\\W_]+", "", ...)``) after NFKC,
    traditional → simplified (:func:`to_simplified`) and lower case, as uint32 code points,
    without segmentation: the letters are found first (:func:`dedup.containment.letter_codes`,
    compiled: :mod:`dedup.compiled`), so NFKC (the costly step) runs only on a letter
    string that is not already normalized (CJK letters are). The last result is memoised
    (keyed by the text object): the exact stage and SpotSigs' letter candidates share it.
    Do not modify the returned array."""
    memo = _LETTERS_MEMO
    if memo[0] is text:
        return memo[1]
    from dedup.compiled import features

    letter_codes = features.letter_codes  # (dedup.containment.letter_codes, compiled)
    first = letter_codes(text or "")
    s = first.tobytes().decode("utf-32-le")
    norm = s if unicodedata.is_normalized("NFKC", s) else unicodedata.normalize("NFKC", s)
    simple = to_simplified(norm)
    low = simple.lower()
    # letters only, unchanged by all three (CJK text): its letters are the first ones
    cp = first if low is s or (simple is s and low == s) else letter_codes(low)
    _LETTERS_MEMO[:] = [text, cp]
    return cp


_LETTERS_MEMO: list = [None, None]


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
