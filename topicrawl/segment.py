"""Chinese word segmentation shared by relevance and dedup: one pass per page text.

The segmenter is jieba's algorithm and dictionary in jieba-rs, the Rust port, through its
Python binding ``rjieba``, about 20 times faster than ``jieba.lcut`` and, with one
difference undone (:func:`_jieba_tokens`), token for token the same (``tests/test_segment.py``
checks it on People's Daily, cnews and THUCNews text). jieba itself still supplies the
part-of-speech table that filters candidate words.

Page relevance (formula 3 and the topic classifier) and SpotSigs both read :func:`segment_zh`,
the tokens of the NFKC-normalised text. Long texts are memoised (a small LRU keyed
by the text), so the dedup cascade that checks a page right after the spider scored it gets
the tokens for free. A topic's multi-word terms are joined back by :class:`TermMerger` on the
relevance side only, so the dedup index's tokens depend on the text alone, never on the topic.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from functools import lru_cache

import rjieba

#: Texts at least this long are memoised (a page's main text, not an anchor).
MEMO_MIN_CHARS = 200
#: How many long texts are memoised (pages in flight between scoring and dedup).
MEMO_SIZE = 64


#: The compatibility characters of Chinese news text, each with its NFKC form: replacing
#: them first (``str.replace`` runs in C) leaves most texts already in NFKC, which
#: ``unicodedata.is_normalized`` confirms in one scan (CPython's NFKC itself is slow).
_COMMON_NFKC = tuple(
    (c, unicodedata.normalize("NFKC", c))
    for c in "，：！？；（）…\xa0\u3000／～＋－．＂％"
)


def normalize(text: str) -> str:
    """NFKC: full-width and compatibility forms do not matter (case is kept: jieba's
    dictionary has upper-case entries, so lowercasing first would change the tokens).

    The result is ``unicodedata.normalize("NFKC", text)``; the common full-width
    punctuation is replaced first (NFKC maps each such character to a fixed string that
    composes with nothing), so the slow full normalization runs only on the rare text that
    still needs it."""
    if not text:
        return ""
    if text.isascii():
        return text
    for c, nfkc in _COMMON_NFKC:
        if c in text:
            text = text.replace(c, nfkc)
    if unicodedata.is_normalized("NFKC", text):
        return text
    return unicodedata.normalize("NFKC", text)


_HAN = re.compile("[\u4e00-\u9fd5]")
#: how jieba's HMM step (``jieba.finalseg.cut``) splits a run that is not Chinese
_SKIP = re.compile(r"([a-zA-Z0-9]+(?:\.\d+)?%?)")


#: a token (between NUL separators) without Han characters that holds a letter or digit:
#: with two or more characters, the only tokens :func:`_jieba_tokens` may have to split
_LATIN_RUN = re.compile(
    "(?<=\x00)[^\x00\u4e00-\u9fd5a-zA-Z0-9]*[a-zA-Z0-9][^\x00\u4e00-\u9fd5]*(?=\x00)"
)


def _jieba_tokens(tokens: list[str]) -> tuple[str, ...]:
    """rjieba's tokens as jieba gives them: jieba-rs keeps a run of letters and digits joined
    by ``-`` or ``.`` (eb-5, 2019-06-24) as one token where jieba splits it (eb / - / 5).

    One regex substitution over the NUL-joined tokens splits them (the token loop is kept
    for the odd text that holds a NUL itself)."""
    joined = "\x00" + "\x00".join(tokens) + "\x00"
    if joined.count("\x00") == len(tokens) + 1:
        fixed = _LATIN_RUN.sub(_split_latin_run, joined)
        return tuple(fixed[1:-1].split("\x00")) if tokens else ()
    out: list[str] = []
    for tok in tokens:
        if (
            len(tok) > 1
            and not _HAN.search(tok)
            and not _SKIP.fullmatch(tok)
            and not rjieba.has_word(tok)
        ):
            out.extend(x for x in _SKIP.split(tok) if x)
        else:
            out.append(tok)
    return tuple(out)


def _split_latin_run(m: re.Match) -> str:
    tok = m.group()
    if len(tok) < 2 or _SKIP.fullmatch(tok) or rjieba.has_word(tok):
        return tok
    return "\x00".join(x for x in _SKIP.split(tok) if x)


def _segment(text: str) -> tuple[str, ...]:
    return _jieba_tokens(rjieba.cut(normalize(text)))


@lru_cache(maxsize=MEMO_SIZE)
def _segment_long(text: str) -> tuple[str, ...]:
    return _segment(text)


def memo_clear() -> None:
    """Forget the memoised segmentations (benchmarks that time variants on the same pages)."""
    _segment_long.cache_clear()


def segment_zh(text: str) -> tuple[str, ...]:
    """jieba tokens (default dictionary, HMM on) of the NFKC-normalised ``text``, every token
    kept, punctuation and spaces included. Texts of ``MEMO_MIN_CHARS`` or more are memoised."""
    if len(text) >= MEMO_MIN_CHARS:
        return _segment_long(text)
    return _segment(text)


class TermMerger:
    """Joins runs of consecutive tokens that spell one of ``terms`` into that term.

    jieba's default dictionary splits a topic's multi-word terms (全面从严治党 → 全面 /
    从严治党); relevance wants them whole. Greedy, longest match first; a token that is no
    prefix of a term costs one set lookup.
    """

    def __init__(self, terms: Iterable[str]):
        self.terms = frozenset(t for t in (normalize(x) for x in terms) if t)
        self.prefixes = frozenset(t[:i] for t in self.terms for i in range(1, len(t)))

    def __call__(self, tokens: Sequence[str]) -> list[str]:
        terms, prefixes = self.terms, self.prefixes
        out: list[str] = []
        i, n = 0, len(tokens)
        while i < n:
            tok = tokens[i]
            end = i
            if tok in prefixes:
                s = tok
                for j in range(i + 1, n):
                    s += tokens[j]
                    if s in terms:
                        end = j
                    if s not in prefixes:
                        break
            if end > i:
                out.append("".join(tokens[i : end + 1]))
                i = end + 1
            else:
                out.append(tok)
                i += 1
        return out
