"""DWDCS: concepts, the small-world key concepts (fast == networkx), formulas 10-13, detector."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from dedup import dwdcs
from dedup.base import Doc, make_detector
from dedup.cilin import parse_cilin, synonym_groups
from dedup.storage import make_storage
from topicrawl.data import data_path
from topicrawl.errors import ConfigError, ResourceMissingError

HEADACHE = (
    "Foods that could trigger a nasty headache. Many people do not realise that common foods "
    "can trigger a headache. Aged cheese contains tyramine, and tyramine in cheese is linked to "
    "headache pain. Chocolate is another food that people with migraine headaches often avoid; "
    "chocolate also contains caffeine. Red wine and other alcohol can trigger a headache within "
    "hours. Processed meat such as hot dogs contains nitrates, and nitrates widen blood "
    "vessels, which may cause headache pain. Food additives like MSG, found in fast food and "
    "soups, also trigger headaches in sensitive people. Keeping a food diary helps you find "
    "which foods trigger your headache."
)


def star_plus_chain() -> dwdcs.ConceptNetwork:
    # H is linked to a, b, c, d and to the chain x1 - x2 - x3
    nodes = ["a", "H", "b", "c", "d", "x1", "x2", "x3"]
    i = {n: k for k, n in enumerate(nodes)}
    pairs = [("H", "a"), ("H", "b"), ("H", "c"), ("H", "d"), ("H", "x1")]
    pairs += [("x1", "x2"), ("x2", "x3")]
    edges = sorted(tuple(sorted((i[u], i[v]))) for u, v in pairs)
    return dwdcs.ConceptNetwork(nodes, np.array(edges), list(range(len(nodes))))


def test_hub_of_star_plus_chain_is_the_top_key_concept_with_hand_computed_cb():
    keys = dwdcs.key_concepts_of_network(star_plus_chain(), l=30, p=20)
    assert [k.concept for k in keys[:2]] == ["H", "x1"]
    # d: the 8x7 ordered distances sum to 124 (by hand: rows H 10, a-d 16 each, x1 12,
    # x2 16, x3 22).  Without H: only x1-x2-x3 stay connected (ordered sum 8 over 6 pairs),
    # the other 36 ordered pairs count n = 8: (8 + 288) / 42.
    assert keys[0].cb == pytest.approx(296 / 42 - 124 / 56)
    assert keys[0].degree == 5
    # a leaf's removal shortens the average path: negative CB
    leaf = next(k for k in keys if k.concept == "a")
    assert leaf.cb < 0


def test_l_limits_the_candidates_to_the_highest_degree_nodes():
    keys = dwdcs.key_concepts_of_network(star_plus_chain(), l=2, p=20)
    assert {k.concept for k in keys} == {"H", "x1"}  # degrees 5 and 2 (x2 also 2, later)


def test_network_from_sequence_frequency_window_and_main_component():
    seq = ["A", "B", "A", "C", "B", "rare", "D", "E", "D", "E", "C"]
    net = dwdcs.concept_network(seq, fthr=1, window=2)
    # frequency > 1: A B C D E; edges within distance 2, 'rare' is filtered but keeps its slot
    assert net.nodes == ["A", "B", "C", "D", "E"]
    got = {tuple(sorted((net.nodes[i], net.nodes[j]))) for i, j in net.edges.tolist()}
    # B (4) - D (6) are two apart across the filtered 'rare'; A - A and D - D are no edges
    assert got == {
        ("A", "B"),
        ("A", "C"),
        ("B", "C"),
        ("B", "D"),
        ("C", "D"),
        ("C", "E"),
        ("D", "E"),
    }
    small = dwdcs.concept_network(["A", "B", "A", "B", "x", "y", "Z", "W", "Z", "W", "Z"])
    assert small.nodes == ["A", "B"]  # two components of two: the earlier one wins


def _random_sequence(rng: random.Random, vocab: int, length: int) -> list[str]:
    words = [f"w{i}" for i in range(vocab)]
    weights = [1 / (i + 1) for i in range(vocab)]  # Zipf-like, as in text
    return rng.choices(words, weights=weights, k=length)


@pytest.mark.parametrize("seed", range(8))
def test_fast_key_concepts_equal_networkx_on_random_sequences(seed):
    rng = random.Random(seed)
    seq = _random_sequence(rng, vocab=rng.randint(20, 150), length=rng.randint(30, 400))
    assert dwdcs.key_concepts(seq) == dwdcs.key_concepts_networkx(seq)
    assert dwdcs.key_concepts(seq, l=5, p=3, window=1) == dwdcs.key_concepts_networkx(
        seq, l=5, p=3, window=1
    )


@pytest.mark.parametrize(
    "seq",
    [
        ["A", "B", "A", "B", "x", "y", "Z", "W", "Z", "W", "Z"],  # two equal components
        ["A", "A"],  # one node
        ["A", "B", "A", "B"],  # two nodes
        ["a", "b", "c"],  # nothing frequent
    ],
)
def test_fast_key_concepts_equal_networkx_on_edge_cases(seq):
    assert dwdcs.key_concepts(seq) == dwdcs.key_concepts_networkx(seq)


def test_fast_key_concepts_equal_networkx_on_real_news():
    lines = data_path("corpus", "cnews_train.txt").read_text(encoding="utf-8").splitlines()
    lexicon = dwdcs.default_lexicon()
    for line in lines[5:600:150]:
        seq = lexicon.concepts(dwdcs.tokenize(line.split("\t", 1)[1]))
        fast = dwdcs.key_concepts(seq)
        assert fast == dwdcs.key_concepts_networkx(seq)
        assert len(fast) == min(20, len(dwdcs.concept_network(seq).nodes))


def test_headache_example_key_concepts():
    seq = dwdcs.tokenize(HEADACHE, lang="en")
    assert seq[:4] == ["food", "trigger", "nasty", "headache"]  # stop words gone, plurals folded
    keys = [k.concept for k in dwdcs.key_concepts(seq)]
    assert keys[0] == "headache"
    assert "food" in keys[:3]


def test_relatedness_and_group_merging():
    assert dwdcs.relatedness({"a", "b", "c"}, {"a", "b", "d"}) == pytest.approx(2 / 3)
    groups = {"g1": ["a", "b", "c"], "g2": ["a", "b", "d"], "g3": ["a", "x", "y", "z"]}
    root = dwdcs.merge_groups(groups, rel_thr=0.5)
    assert root == {"g1": "g1", "g2": "g1", "g3": "g3"}  # Rel(g1, g3) = 2/7
    lex = dwdcs.ConceptLexicon.from_groups(groups)
    assert lex.concept("d") == lex.concept("c") == "g1"
    assert lex.concept("x") == "g3" and lex.concept("unknown") == "unknown"
    assert lex.concept("a") == "g1"  # first group listing it


def test_cilin_parser_and_errors():
    groups = parse_cilin(["Aa01A01= 人 士 人物", "", "Aa01B03# 良民 顺民", "Aa01C05@ 众学生"])
    assert synonym_groups(groups) == {"Aa01A01": ("人", "士", "人物")}
    with pytest.raises(ResourceMissingError, match="line 1|:1:"):
        parse_cilin(["garbage"])


def test_shared_lexicon_merges_synonyms_but_not_categories():
    lex = dwdcs.default_lexicon()
    assert lex.concept("电脑") == lex.concept("计算机")
    assert lex.concept("人物") == lex.concept("人士")
    assert lex.concept("上海") != lex.concept("广州")  # one HowNet DEF, but a category
    assert lex.concept("比赛") == lex.concept("竞赛")


def test_stopwords_never_silently_empty():
    assert "的" in dwdcs.load_stopwords("zh")
    with pytest.raises(ResourceMissingError):
        dwdcs.load_stopwords("xx")
    with pytest.raises(ConfigError):
        dwdcs.tokenize("text", lang="xx", stopwords=["a"])


def _features(positions: dict[str, list[int]]) -> dwdcs.DWDCSFeatures:
    return dwdcs.DWDCSFeatures(list(positions), positions, 100)


def test_cosine_and_position_variance_by_hand():
    a = _features({"k1": [1, 5, 9], "k2": [2, 20]})
    shifted = _features({"k1": [11, 15, 19], "k2": [12, 30]})
    assert dwdcs.cosine(a, shifted) == pytest.approx(1.0)
    assert dwdcs.position_variance(a, shifted) == 0.0  # a prefix added: same shift everywhere
    b = _features({"k1": [11, 15, 21], "k2": [12, 30]})
    # shift δ = median(10, 10) = 10; k1 distances 10, 10, 12 -> variance 8/9; k2: 0
    assert dwdcs.position_variance(a, b) == pytest.approx((8 / 9 + 0) / 2)
    c = _features({"k1": [1, 5, 9], "k3": [7]})
    # frequency vectors (3, 2, 0) and (3, 0, 1)
    assert dwdcs.cosine(a, c) == pytest.approx(9 / (math.sqrt(13) * math.sqrt(10)))
    assert dwdcs.position_variance(a, _features({"k9": [1]})) == math.inf
    lost = _features({"k1": [11, 19], "k2": [12, 30]})  # one occurrence lost: no misalignment
    assert dwdcs.position_variance(a, lost) == 0.0
    dup, cos, s = dwdcs.similarity(a, b)
    assert dup and cos == pytest.approx(1.0) and s < 1


def _news(n: int) -> list[str]:
    lines = data_path("corpus", "cnews_train.txt").read_text(encoding="utf-8").splitlines()
    return [t for _, t in (line.split("\t", 1) for line in lines) if 600 <= len(t) <= 1500][:n]


def _reprint(text: str) -> str:
    cut = text.index("。") + 1
    return (
        "编者按：本文转自网络，观点仅代表作者本人。\n"
        + text[:cut]
        + "\n\n"
        + text[cut:].replace("记者", "记着", 1)
        + "\n（来源：新华网 责任编辑：王明）"
    )


@pytest.mark.parametrize("storage_type", ["memory", "sqlite"])
def test_detector_finds_reprints_not_other_articles_and_removes(tmp_path, storage_type):
    config = {"type": storage_type, "namespace": "t-dwdcs"}
    if storage_type == "sqlite":
        config["path"] = str(tmp_path / "idx.sqlite")
    det = make_detector("dwdcs", make_storage(config))
    assert isinstance(det, dwdcs.DWDCSDetector)
    texts = _news(4)
    for i, text in enumerate(texts):
        assert det.check_and_add(f"doc{i}", Doc(text=text)) is None
    match = det.check_and_add("copy", Doc(text=_reprint(texts[2])))
    assert match is not None and match.doc_id == "doc2" and match.method == "dwdcs"
    assert 0.9 < match.score <= 1.0
    det.remove("doc2")
    assert det.query(Doc(text=_reprint(texts[2]))) == []
    assert not any(det.storage.sismember(k, "doc2") for k in det.storage.keys("dwdcs:kc:"))


def test_detector_english_and_unknown_option():
    det = make_detector("dwdcs", make_storage({"type": "memory"}))
    det.add("h", Doc(text=HEADACHE, lang="en"))
    copy = "Health news. " + HEADACHE + " Source: a magazine."
    assert [m.doc_id for m in det.query(Doc(text=copy, lang="en"))] == ["h"]
    with pytest.raises(ConfigError, match="simthr"):
        make_detector("dwdcs", make_storage(None), simthr=0.8)


@pytest.mark.redis
def test_detector_on_redis(redis_url):
    import uuid

    storage = make_storage({"type": "redis", "url": redis_url, "namespace": f"t-{uuid.uuid4()}"})
    try:
        det = make_detector("dwdcs", storage)
        text = _news(1)[0]
        assert det.check_and_add("orig", Doc(text=text)) is None
        match = det.check_and_add("copy", Doc(text=_reprint(text)))
        assert match is not None and match.doc_id == "orig"
        det.remove("orig")
        assert storage.keys("dwdcs:kc:") == []
    finally:
        storage.clear()
        storage.close()
