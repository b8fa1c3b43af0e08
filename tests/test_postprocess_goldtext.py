"""postprocess.gold: the token F1 of the Chinese gold, the article-extraction benchmark's
measure, and the loaders of the gold documents."""

from __future__ import annotations

import pytest

from postprocess.gold import (
    GOLD_DIR,
    benchmark_prf,
    gold_tokens,
    real_gold,
    shingle_counts,
    token_f1,
)
from topicrawl.data import data_path
from topicrawl.errors import ResourceMissingError


def test_tokens_are_characters_for_chinese_and_words_for_latin():
    assert gold_tokens("新华社北京电 iPhone 11，售价5499元。") == [
        "新", "华", "社", "北", "京", "电", "iphone", "11", "售", "价", "5499", "元",
    ]  # fmt: skip


def test_token_f1_is_bag_of_tokens():
    s = token_f1("甲乙丙丁", "甲乙丙戊己")  # 3 common; 4 predicted, 5 gold
    assert (s.precision, s.recall) == (0.75, 0.6)
    assert s.f1 == pytest.approx(2 * 0.75 * 0.6 / 1.35)
    assert token_f1(None, "").f1 == 1.0 and token_f1("", "甲").f1 == 0.0


def test_benchmark_measure_worked_example():
    # 6 tokens -> 3 four-grams in the truth; the prediction shares the first two
    tp, fp, fn = shingle_counts("a b c d e f", "a b c d e x")
    assert (tp, fp, fn) == pytest.approx((2 / 4, 1 / 4, 1 / 4))
    s = benchmark_prf([(tp, fp, fn), (1.0, 0.0, 0.0)])
    assert s.precision == pytest.approx((2 / 3 + 1) / 2) and s.recall == s.precision


def test_hand_written_gold_covers_the_real_pages():
    try:
        docs = list(real_gold(data_path()))
    except (ResourceMissingError, FileNotFoundError) as exc:
        pytest.skip(str(exc))
    assert len(docs) == len(list(GOLD_DIR.glob("*.txt"))) >= 40
    for d in docs:
        assert d.body and len(d.gold) >= 50, d.name
        # gold is article text: no editor, source or original-title lines
        assert not any(ln.startswith(("责任编辑", "本文来源", "原标题", "（原标题"))
                       for ln in d.gold.splitlines()), d.name  # fmt: skip
