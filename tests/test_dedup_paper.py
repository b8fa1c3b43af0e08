"""Issue 13: paper 004's chains, the LSH candidate index, traditional characters, the fast
token and signature paths, the token fingerprint and the DWDCS pairing/senses options."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from dedup import text as dtext
from dedup.base import Doc
from dedup.dwdcs import ConceptLexicon, DWDCSFeatures, position_variance
from dedup.exact import ExactDetector, token_fingerprint
from dedup.spotsigs import (
    SpotSigsDetector,
    SpotSigsIndex,
    SpotSigsLSHIndex,
    default_antecedents,
    multiset_jaccard,
    spot_signatures,
)
from dedup.storage import MemoryStorage
from dedup.text import stopwords, to_simplified, tokenize
from topicrawl.errors import ConfigError

SENTENCE = "今年的经济是在稳定中发展了。我们的目标是明确的。"


def test_paper_004_chain_skips_antecedents_only():
    """Paper 004 skips antecedents in a chain, not the whole stopword list: after 了 the
    chain takes 我们 (a stopword, not an antecedent); the stopword mode skips to 目标.
    (Hand-derived: the repository does not hold the paper's Examples 1-3 or their numbers.)"""
    toks = tokenize(SENTENCE, "zh")
    assert toks == ["今年", "的", "经济", "是", "在", "稳定", "中", "发展", "了", "我们", "的",
                    "目标", "是", "明确", "的"]  # fmt: skip
    paper = SpotSigsDetector(MemoryStorage(), antecedent_set="basic")
    assert paper.skip == "antecedents"
    assert dict(paper.signatures(toks)) == {
        "的:经济": 1, "是:稳定": 1, "在:稳定": 1, "了:我们": 1, "的:目标": 1, "是:明确": 1
    }  # fmt: skip
    old = SpotSigsDetector(MemoryStorage(), antecedent_set="basic", skip="stopwords")
    assert dict(old.signatures(toks))["了:目标"] == 1 and "了:我们" not in old.signatures(toks)
    with pytest.raises(ConfigError):
        SpotSigsDetector(MemoryStorage(), skip="none")


def _reference(tokens, spots, skip):
    """The definition, written out: each antecedent takes the next token outside ``skip``."""
    out = Counter()
    for i, t in enumerate(tokens):
        if t in spots:
            for w in tokens[i + 1 :]:
                if w not in skip:
                    out[f"{t}:{w}"] += 1
                    break
    return out


def test_fast_signature_path_equals_the_definition():
    rng = random.Random(5)
    vocab = ["的", "是", "在", "了", "我们", "经济", "发展", "目标", "他们", "但", "并"]
    spots = default_antecedents("zh")
    for _ in range(200):
        toks = rng.choices(vocab, k=rng.randint(0, 40))
        assert spot_signatures(toks, spots, frozenset(spots)) == _reference(
            toks, set(spots), set(spots)
        )
        stop = stopwords("zh")
        assert spot_signatures(toks, ["的", "是"], stop) == _reference(toks, {"的", "是"}, stop)


def test_optimized_antecedents_are_shipped():
    ante = default_antecedents("zh")
    assert ante[:4] == ("的", "是", "在", "了")
    assert len(ante) > 50 and {"但", "通过", "随着"} <= set(ante)


def test_lsh_index_finds_what_the_exact_index_finds():
    rng = random.Random(11)
    vocab = [f"s{i}" for i in range(3000)]
    base = [Counter(rng.choices(vocab, k=rng.randint(30, 120))) for _ in range(150)]
    docs = list(base)
    for b in base[:100]:
        d = Counter(b)
        for s in rng.sample(list(d), k=len(d) // 10):
            del d[s]
        docs.append(d)
    exact, lsh = SpotSigsIndex(0.6), SpotSigsLSHIndex(0.6)
    for i, d in enumerate(docs):
        exact.add(str(i), d)
        lsh.add(str(i), d)
    for d in docs:
        want = dict(exact.query(d))
        got = dict(lsh.query(d))
        assert got.keys() <= want.keys()  # verified exactly: never a false match
        strong = {k for k, v in want.items() if v >= 0.75}
        assert strong <= got.keys()  # 1 - (1 - 0.75^5)^150 > 0.9999
        for k, v in got.items():
            assert v == pytest.approx(multiset_jaccard(d, docs[int(k)]))
    assert lsh.remove("0") and "0" not in lsh and not lsh.remove("0")
    assert "0" not in dict(lsh.query(docs[0]))


def test_detector_uses_lsh_by_default_and_both_indexes_agree():
    body = "".join(f"第{i}段的内容是在讲经济的发展了，我们的目标是明确的。" for i in range(30))
    for kind in ("lsh", "partitions"):
        det = SpotSigsDetector(MemoryStorage(), index=kind)
        assert det.check_and_add("a", Doc(body)) is None
        m = det.check_and_add("b", Doc("编者按：转载。" + body + "责任编辑：王磊"))
        assert m is not None and m.doc_id == "a"
        assert det.check_and_add("c", Doc("完全不同的一篇文章的内容是体育的比赛了。" * 5)) is None
    assert isinstance(SpotSigsDetector(MemoryStorage()).index, SpotSigsLSHIndex)


def test_traditional_pages_are_simplified():
    trad = "國家統計局發佈十月份國民經濟運行數據，這是一個測試。"
    assert to_simplified(trad) == "国家统计局发布十月份国民经济运行数据，这是一个测试。"
    simp = "国家统计局发布数据，覆盖面广，乾隆年间的事。"
    assert to_simplified(simp) is simp
    assert tokenize(trad, "zh") == tokenize(to_simplified(trad), "zh")


def test_fast_tokenize_equals_filtering_each_token():
    from topicrawl.segment import segment_zh

    for t in (SENTENCE, "Ａ股 3.5% eb-5，“你好”  ok!", "", "，。", "x", "A股大涨 COVID-19"):
        dtext._TOKENS_MEMO[:] = [None, None, None]
        want = [w.lower() for w in segment_zh(t) if dtext._WORDY.search(w)]
        assert tokenize(t, "zh") == want


def test_token_fingerprint_ignores_punctuation_width_and_script():
    a = token_fingerprint("国家统计局发布数据。今天，经济稳定。", "zh")
    assert a == token_fingerprint("国家统计局发布数据 今天 经济稳定", "zh")
    assert a == token_fingerprint("國家統計局發佈數據。今天，經濟穩定。", "zh")
    assert a != token_fingerprint("国家统计局发布数据。明天，经济稳定。", "zh")
    assert token_fingerprint("，。！", "zh") is None
    det = ExactDetector(MemoryStorage())
    assert det.check_and_add("a", Doc("国家统计局发布数据。今天，经济稳定。")) is None
    assert det.check_and_add("b", Doc("国家统计局发布数据！今天 经济稳定")).doc_id == "a"


def test_dwdcs_jth_pairing_by_hand():
    a = DWDCSFeatures(["x", "y"], {"x": [0, 10, 20], "y": [5]}, 30)
    b = DWDCSFeatures(["x", "y"], {"x": [3, 14, 30], "y": [9]}, 40)
    # x: the j-th with the j-th, d = 3, 4, 10; y: d = 4 (variance 0); S = mean of the two
    dx = [3, 4, 10]
    mean = sum(dx) / 3
    var_x = sum((d - mean) ** 2 for d in dx) / 3
    assert position_variance(a, b, pairing="jth") == pytest.approx((var_x + 0.0) / 2)
    with pytest.raises(ConfigError):
        position_variance(a, b, pairing="best")


def test_dwdcs_all_senses_lets_the_document_decide():
    lex = ConceptLexicon.from_groups(
        {"g1": ["打", "击"], "g2": ["打", "买"], "g3": ["买", "购"]}, rel_thr=0.9
    )
    assert lex.concepts(["打", "购", "买"]) == ["g1", "g3", "g2"]  # first group each
    # all senses: votes g1 1, g2 2 (打, 买), g3 2 (购, 买): 打 takes g2; 买 ties g2/g3 and
    # keeps its first group
    assert lex.concepts(["打", "购", "买"], senses="all") == ["g2", "g3", "g2"]
    assert lex.concepts(["击", "打"], senses="all") == ["g1", "g1"]
    with pytest.raises(ConfigError):
        lex.concepts(["打"], senses="some")


def test_packed_signatures_give_the_multiset_jaccard():
    """The LSH index keeps signatures packed (hashes + counts); its Jaccard is the dict one."""
    from dedup.spotsigs import _pack, _packed_jaccard

    rng = random.Random(5)
    words = [f"的:w{i}" for i in range(40)]
    for _ in range(200):
        a = Counter({w: rng.randint(1, 3) for w in rng.sample(words, rng.randint(1, 30))})
        b = Counter({w: rng.randint(1, 3) for w in rng.sample(words, rng.randint(1, 30))})
        got = _packed_jaccard(_pack(a), sum(a.values()), _pack(b), sum(b.values()))
        assert got == pytest.approx(multiset_jaccard(a, b))
