"""The shared segmentation: rjieba against jieba, topic-term merging, one pass per page."""

from __future__ import annotations

import itertools

import pytest

from dedup.text import tokenize
from relevance.weights import CandidateExtractor, read_documents
from topicrawl import segment
from topicrawl.data import data_path
from topicrawl.segment import TermMerger, normalize, segment_zh


@pytest.mark.parametrize(
    ("corpus", "n"),
    [
        ("peoples_daily_199801.txt", 3000),
        ("cnews_train.txt", 300),
        ("thucnews_titles_dev.txt", 5000),
    ],
)
def test_segmentation_is_jiebas(corpus, n):
    """jieba-rs is a port of jieba (same dictionary, same algorithm): with its one difference
    undone, the tokens are jieba's (HMM on), token for token, on real news text."""
    import jieba

    jieba.setLogLevel(60)
    path = data_path("corpus", corpus)
    if corpus.startswith("thucnews"):  # headline<TAB>class id
        lines = path.read_text(encoding="utf-8").splitlines()
        docs = [line.split("\t")[0] for line in lines[:n]]
    else:
        docs = list(itertools.islice(read_documents([path]), n))
    texts = [normalize(t) for t in docs]
    assert sum(map(len, texts)) > 90_000
    differing = [t for t in texts if list(segment_zh(t)) != jieba.lcut(t)]
    assert differing == []


def test_latin_runs_split_as_jieba_splits_them():
    assert segment._jieba_tokens(["美国", "eb-5", "签证", "2019-06-24", "3.5%", "a-"]) == (
        "美国", "eb", "-", "5", "签证", "2019", "-", "06", "-", "24", "3.5%", "a", "-",
    )  # fmt: skip


def test_term_merger_joins_split_topic_terms():
    merge = TermMerger(["全面从严治党", "政府", "Party Building"])
    assert merge(["我们", "的", "全面", "从严治党", "工作"]) == [
        "我们",
        "的",
        "全面从严治党",
        "工作",
    ]
    assert merge(["全面", "发展"]) == ["全面", "发展"]  # a prefix alone is not a term
    assert merge(["全面", "从严", "治党"]) == ["全面从严治党"]  # several pieces
    assert merge(["政府"]) == ["政府"]
    assert merge([]) == []


def test_candidate_words_keep_multiword_topic_terms_whole():
    plain = CandidateExtractor()
    topic = CandidateExtractor(topic_words=["全面从严治党"])
    text = "我们的全面从严治党工作在北京取得了很大的成绩"
    assert "全面从严治党" not in plain(text)
    assert "全面从严治党" in topic(text)


def test_one_segmentation_per_page_text():
    """Page relevance and SpotSigs read one memoised segmentation of a long page text."""
    text = "国务院总理在北京主持召开国务院常务会议，部署进一步深化改革的工作。" * 10
    assert len(text) >= segment.MEMO_MIN_CHARS
    segment._segment_long.cache_clear()
    words = CandidateExtractor(topic_words=["国务院"])(text)
    tokens = tokenize(text, "zh")
    info = segment._segment_long.cache_info()
    assert (info.misses, info.hits) == (1, 1)
    assert "国务院" in words and "国务院" in tokens and "，" not in tokens


def test_normalize_is_nfkc():
    """The fast path (common full-width punctuation replaced, then a NFKC check) gives
    exactly unicodedata's NFKC, also for text that still needs the full normalization."""
    import unicodedata

    texts = [
        "今年，经济（稳定）：增长３．５％！对吗？是的；…　全角ＡＢＣ１２３",
        "ﾊﾝｶｸ カタカナ ①② ㈱ ﬁ e\u0301 Å",
        "，\u0301",  # a combining mark after replaced punctuation
        "plain ascii",
        "",
    ]
    path = data_path("corpus", "cnews_train.txt")
    with path.open(encoding="utf-8") as fh:
        texts += [line for _, line in zip(range(300), fh, strict=False)]
    for t in texts:
        assert normalize(t) == unicodedata.normalize("NFKC", t)


def test_latin_runs_split_with_a_nul_in_a_token():
    """A token holding NUL takes the token loop; the result is the same rule."""
    toks = ["a\x00", "eb-5", "签证"]
    assert segment._jieba_tokens(toks) == ("a", "\x00", "eb", "-", "5", "签证")
    assert segment._jieba_tokens([]) == ()
