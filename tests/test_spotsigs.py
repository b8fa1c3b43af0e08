"""SpotSigs: the paper's worked example, partition bounds, and the index against brute force."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from dedup.base import Doc, detector_class
from dedup.spotsigs import (
    SpotSigsDetector,
    SpotSigsIndex,
    default_antecedents,
    multiset_jaccard,
    partition_bounds,
    spot_signatures,
)
from dedup.storage import MemoryStorage
from dedup.text import stopwords, tokenize
from topicrawl.errors import ConfigError

OBAMA = (
    "At a rally to kick off a weeklong campaign for the South Carolina primary, Obama tried to "
    "set the record straight from an attack circulating widely on the Internet that is designed "
    "to play into prejudices against Muslims and fears of terrorism."
)


def test_paper_example_signatures_chain_2():
    sigs = spot_signatures(
        tokenize(OBAMA, "en"), ["a", "an", "the", "is"], stopwords("en"), chain=2, distance=1
    )
    assert list(sigs) == [
        "a:rally:kick",
        "a:weeklong:campaign",
        "the:south:carolina",
        "the:record:straight",
        "an:attack:circulating",
        "the:internet:designed",
        "is:designed:play",
    ]
    assert set(sigs.values()) == {1}


def test_paper_example_chain_1_and_particle_only():
    toks = tokenize(OBAMA, "en")
    one = spot_signatures(toks, ["a", "the", "is"], stopwords("en"), chain=1)
    assert one == Counter(
        {
            "a:rally": 1,
            "a:weeklong": 1,
            "the:south": 1,
            "the:record": 1,
            "the:internet": 1,
            "is:designed": 1,
        }
    )
    bare = spot_signatures(toks, {"the": 1}, stopwords("en"), chain=1, with_antecedent=False)
    assert bare == Counter({"south": 1, "record": 1, "internet": 1})


def test_spot_distance_skips_tokens():
    toks = "the a b c d e".split()
    assert spot_signatures(toks, {"the": 2}, set(), chain=2) == Counter({"the:b:d": 1})
    # a chain cut by the end of the text keeps what it has; an empty chain is dropped
    assert spot_signatures("x the y".split(), ["the"], set(), chain=3) == Counter({"the:y": 1})
    assert spot_signatures("x y the".split(), ["the"], set()) == Counter()


def test_chinese_signatures():
    text = "今年的经济是在稳定中发展了。我们的目标是明确的。"
    sigs = spot_signatures(tokenize(text, "zh"), ["的", "是", "在", "了"], stopwords("zh"))
    assert sigs["的:经济"] == 1
    assert sigs["的:目标"] == 1
    assert sigs["是:稳定"] == 1  # 在 is a stopword, skipped in the chain
    assert sigs["在:稳定"] == 1
    assert sigs["是:明确"] == 1
    assert all(s.split(":")[1] not in stopwords("zh") for s in sigs)


def test_partition_bounds_reproduce_the_paper():
    assert partition_bounds(0.5, 261) == [
        (1, 3), (4, 9), (10, 21), (22, 45), (46, 93), (94, 189), (190, None)
    ]  # fmt: skip
    assert partition_bounds(0.6, 261) == [
        (1, 2), (3, 6), (7, 12), (13, 22), (23, 39), (40, 67), (68, 114), (115, 192), (193, None)
    ]  # fmt: skip
    with pytest.raises(ConfigError):
        partition_bounds(1.0, 100)


def test_partition_property_neighbours_suffice():
    """Any two lengths with min/max >= tau fall in the same or adjacent partitions."""
    for tau in (0.4, 0.5, 0.6, 0.75, 0.9):
        idx = SpotSigsIndex(tau, max_length=300)
        for a in range(1, 400):
            for b in range(a, int(a / tau) + 1):
                if a / b >= tau:
                    pa, pb = idx.partition_of(a).idx, idx.partition_of(b).idx
                    assert abs(pa - pb) <= 1, (tau, a, b)


def test_multiset_jaccard():
    assert multiset_jaccard({"a": 2, "b": 1}, {"a": 1, "c": 1}) == pytest.approx(1 / 4)
    assert multiset_jaccard({"a": 2}, {"a": 2}) == 1.0
    assert multiset_jaccard({}, {}) == 0.0


def _random_docs(rng: random.Random, n: int) -> list[Counter]:
    vocab = [f"s{i}" for i in range(400)]
    base = [Counter(rng.choices(vocab, k=rng.randint(3, 120))) for _ in range(n // 3)]
    docs = list(base)
    while len(docs) < n:
        b = rng.choice(base)
        d = Counter(b)
        for s in rng.sample(list(d), k=max(0, len(d) // rng.randint(2, 8))):
            d[s] -= 1
            if d[s] <= 0:
                del d[s]
        for _ in range(rng.randint(0, 20)):
            d[rng.choice(vocab)] += 1
        if d:
            docs.append(d)
    return docs


@pytest.mark.parametrize("tau", [0.5, 0.6, 0.8])
def test_index_safe_bounds_equal_brute_force(tau):
    rng = random.Random(7)
    docs = _random_docs(rng, 300)
    index = SpotSigsIndex(tau, max_length=120)
    for i, d in enumerate(docs):
        index.add(str(i), d)
    for d in docs[:120]:
        got = dict(index.query(d))
        want = {
            str(i): multiset_jaccard(d, o)
            for i, o in enumerate(docs)
            if multiset_jaccard(d, o) >= tau
        }
        assert got.keys() == want.keys()
        for k, v in want.items():
            assert got[k] == pytest.approx(v)


def test_paper_bounds_find_a_subset_of_safe():
    rng = random.Random(3)
    docs = _random_docs(rng, 200)
    safe, paper = SpotSigsIndex(0.5, bounds="safe"), SpotSigsIndex(0.5, bounds="paper")
    for i, d in enumerate(docs):
        safe.add(str(i), d)
        paper.add(str(i), d)
    for d in docs[:80]:
        assert set(dict(paper.query(d))) <= set(dict(safe.query(d)))


def test_index_remove_and_replace():
    index = SpotSigsIndex(0.5)
    index.add("x", {"a": 3, "b": 1})
    assert [d for d, _ in index.query({"a": 3, "b": 1})] == ["x"]
    index.add("x", {"c": 4})  # replace
    assert index.query({"a": 3, "b": 1}) == []
    assert index.remove("x") and not index.remove("x")
    assert index.query({"c": 4}) == [] and len(index) == 0


def test_detector_check_and_add_and_registry():
    assert detector_class("spotsigs") is SpotSigsDetector
    det = SpotSigsDetector(MemoryStorage(), tau=0.5)
    text = "今天的天气是晴朗的。在公园里，孩子们的笑声是快乐的。我们的城市在变化，生活是美好的。"
    assert det.check_and_add("a", Doc(text)) is None
    m = det.check_and_add("b", Doc(text + "编辑：张三"))
    assert m is not None and m.doc_id == "a" and m.method == "spotsigs" and m.score >= 0.5
    assert det.check_and_add("c", Doc("这是完全不同的一篇文章，内容的主题是体育的比赛。")) is None
    det.remove("a")
    assert det.query(Doc(text)) == []


def test_default_antecedents_include_the_basic_set():
    assert default_antecedents("zh", "basic") == ("的", "是", "在", "了")
    assert default_antecedents("zh")[:4] == ("的", "是", "在", "了")
    assert "the" in default_antecedents("en")
    with pytest.raises(ConfigError):
        default_antecedents("zh", "best")
