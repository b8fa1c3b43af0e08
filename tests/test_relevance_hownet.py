"""Liu Qun & Li Sujian (2002) HowNet similarity: hand-checked pairs from the real glossary."""

from __future__ import annotations

import random

import pytest

from relevance.hownet import (
    HowNetSimilarity,
    concept_similarity,
    grouped_similarity,
    parse_def,
    read_sememe_tree,
    sememe_similarity,
    set_similarity,
)
from topicrawl.data import data_path
from topicrawl.errors import ResourceMissingError

A = 1.6  # α


@pytest.fixture(scope="module")
def hownet(tmp_path_factory):
    import os

    old = os.environ.get("TOPICRAWL_CACHE")
    os.environ["TOPICRAWL_CACHE"] = str(tmp_path_factory.mktemp("cache"))
    try:
        yield HowNetSimilarity.from_dir()
    finally:
        if old is None:
            os.environ.pop("TOPICRAWL_CACHE", None)
        else:
            os.environ["TOPICRAWL_CACHE"] = old


@pytest.fixture(scope="module")
def tree():
    names, parents = read_sememe_tree(data_path("hownet", "WHOLE.DAT"))
    return {n: i for i, n in enumerate(names)}, parents


def hand_distance(tree, a: str, b: str) -> int:
    """Path length by walking parent links (independent of the library's graph code)."""
    index, parents = tree

    def chain(n: int) -> list[int]:
        out = [n]
        while parents[out[-1]] != out[-1]:
            out.append(int(parents[out[-1]]))
        return out

    ca, cb = chain(index[a]), chain(index[b])
    common = next(x for x in ca if x in cb)
    return ca.index(common) + cb.index(common)


def test_parse_def_parts():
    p = parse_def("place|地方,#human|人,country|国家,politics|政,content=beat|打,(Asia|亚洲)")
    assert p.first == ("s", "place|地方")
    assert p.others == [("s", "country|国家"), ("s", "politics|政"), ("w", "Asia|亚洲")]
    assert p.relational == [("content", ("s", "beat|打"))]
    assert p.symbolic == [("#", ("s", "human|人"))]
    f = parse_def("{firstPerson|我,mass|众}")
    assert f.function and f.others == [("s", "firstPerson|我"), ("s", "mass|众")]


def test_sememe_similarity_formula():
    assert sememe_similarity(0) == 1.0
    assert sememe_similarity(2) == pytest.approx(1.6 / 3.6)
    assert sememe_similarity(float("inf")) == 0.0


def test_set_similarity_greedy_and_delta():
    table = {("a", "a"): 1.0, ("a", "b"): 0.3, ("c", "b"): 0.5, ("c", "a"): 0.9}

    def sim(x, y):
        return table.get((x[1], y[1]), table.get((y[1], x[1]), 0.0))

    a = [("s", "a"), ("s", "c")]
    b = [("s", "a"), ("s", "b"), ("s", "d")]
    # greedy: a-a (1.0), then c-b (0.5); d unpaired -> δ; mean over max(2, 3)
    assert set_similarity(a, b, sim) == pytest.approx((1.0 + 0.5 + 0.2) / 3)
    assert set_similarity([], [], sim) == 1.0
    assert set_similarity(a, [], sim) == 0.2
    # grouped: key k pairs a-a; key j only on one side -> δ; mean over 2 keys
    assert grouped_similarity([("k", ("s", "a"))], [("k", ("s", "a")), ("j", ("s", "b"))], sim) == (
        pytest.approx((1.0 + 0.2) / 2)
    )


def test_man_woman_by_hand(hownet, tree):
    # 男人 = human|人,family|家,male|男 ; 女人 = human|人,family|家,female|女
    d = hand_distance(tree, "male|男", "female|女")
    assert d == 2  # siblings under 1310
    s_mf = A / (d + A)
    s2 = (1.0 + s_mf) / 2  # greedy: family-family, then male-female
    expected = 0.5 * 1 + 0.2 * s2 + 0.17 * s2 * 1 + 0.13 * s2 * 1 * 1
    assert hownet.similarity("男人", "女人") == pytest.approx(expected, abs=1e-6)
    assert expected == pytest.approx(0.8611, abs=1e-4)


def test_china_country_by_hand(hownet, tree):
    # 中国 (N) = place|地方,country|国家,ProperName|专,(Asia|亚洲)
    # 国家     = place|地方,#human|人,country|国家,politics|政
    assert "place|地方,country|国家,ProperName|专,(Asia|亚洲)" in hownet.concepts("中国")
    assert hownet.concepts("国家") == ["place|地方,#human|人,country|国家,politics|政"]
    s_pp = A / (hand_distance(tree, "ProperName|专", "politics|政") + A)
    # others: country-country 1, ProperName-politics s_pp (> γ for (Asia)), (Asia) unpaired δ
    s2 = (1.0 + max(s_pp, 0.2) + 0.2) / 3
    s4 = 0.2  # only 国家 has a '#' group
    expected = 0.5 + 0.2 * s2 + 0.17 * s2 + 0.13 * s2 * s4
    assert hownet.similarity("中国", "国家") == pytest.approx(expected, abs=1e-6)


def test_relational_part_by_hand(hownet, tree):
    # 挨打 = suffer|遭受,content=beat|打 ; 挨骂 = suffer|遭受,content=ExpressAgainst|谴责
    s3 = A / (hand_distance(tree, "beat|打", "ExpressAgainst|谴责") + A)
    expected = 0.5 + 0.2 + 0.17 * s3 + 0.13 * s3
    assert hownet.similarity("挨打", "挨骂") == pytest.approx(expected, abs=1e-6)


def test_same_concept_function_words_and_unknown(hownet):
    assert hownet.similarity("苹果", "香蕉") == pytest.approx(1.0)  # both fruit|水果
    assert hownet.similarity("啊", "哎") == pytest.approx(1.0)  # {comment|评论}
    assert "不存在的词语" not in hownet
    assert hownet.similarity("不存在的词语", "苹果") == 0.0
    assert hownet.similarity("不存在的词语", "不存在的词语") == 1.0
    # a function word against a content word: 0
    fa, ca = parse_def("{comment|评论}"), parse_def("fruit|水果")
    assert concept_similarity(fa, ca, hownet.item_similarity) == 0.0


def test_vectorised_matches_reference(hownet):
    rng = random.Random(7)
    words = sorted(hownet.words)
    pairs = [(rng.choice(words), rng.choice(words)) for _ in range(150)]
    for a, b in pairs:
        assert hownet.similarity(a, b) == pytest.approx(hownet.reference_similarity(a, b), abs=1e-5)
    ws = [a for a, _ in pairs[:40]]
    m = hownet.matrix(ws, ws)
    assert m.shape == (40, 40)
    assert m == pytest.approx(m.T, abs=1e-6)
    assert all(0.0 <= x <= 1.0 for x in m.ravel())


def test_most_similar(hownet):
    top = hownet.most_similar("苹果", topn=5)
    assert len(top) == 5
    assert top[0][1] == pytest.approx(1.0)  # another fruit|水果 word
    assert "香蕉" in dict(hownet.most_similar("苹果", topn=200))


def test_missing_directory(tmp_path):
    with pytest.raises(ResourceMissingError, match="glossary.dat"):
        HowNetSimilarity.from_dir(tmp_path)


def test_cache_roundtrip(tmp_path, monkeypatch):
    monkeypatch.setenv("TOPICRAWL_CACHE", str(tmp_path))
    d = data_path("hownet")
    first = HowNetSimilarity.from_dir(d)
    assert list(tmp_path.glob("hownet-*.pickle"))
    second = HowNetSimilarity.from_dir(d)
    assert second.similarity("男人", "女人") == first.similarity("男人", "女人")
