"""Tongyici Cilin similarity (path + depth, information content) and the HowNet + Cilin
hybrid, on a hand-made Cilin and on the shared cilin_ext.txt."""

from __future__ import annotations

import math

import numpy as np
import pytest

from relevance.cilin import CilinSimilarity, read_cilin
from relevance.combined import HybridSimilarity
from topicrawl.data import data_path
from topicrawl.errors import ResourceMissingError

TINY = [
    ("Aa01A01=", ["人", "士"]),
    ("Aa01A02=", ["人类", "全人类"]),
    ("Aa01B01=", ["人民", "国民"]),
    ("Aa01B02=", ["群众"]),
    ("Aa01B03#", ["良民", "顺民"]),
    ("Ab01A01@", ["男人"]),
    ("Ba01A01=", ["物体"]),
]


@pytest.fixture(scope="module")
def path_sim():
    return CilinSimilarity(TINY, method="path")


def _pd(depth: float, path: float, beta: float, alpha: float = 0.9) -> float:
    return (depth + alpha) / (depth + alpha + path + beta)


def test_path_and_depth_by_hand(path_sim):
    """陈宏朝 et al. (2016): edges 8, 6, 4, 1.5, 0.5 top to bottom, α = 0.9, β = k/n·W."""
    s = path_sim.similarity
    assert s("人民", "国民") == 1.0  # one '=' group
    assert s("良民", "顺民") == 0.5  # one '#' group: related, not synonyms
    # LCA Aa01B (depth 4): k = |01 - 02| = 1 of n = 3 atomic groups, W = 0.5
    assert s("人民", "群众") == pytest.approx(_pd(8 + 6 + 4 + 1.5, 2 * 0.5, 1 / 3 * 0.5), abs=1e-6)
    # LCA Aa01 (depth 3): k = |A - B| = 1 of n = 2, W = 1.5
    assert s("人", "人民") == pytest.approx(_pd(18, 2 * (1.5 + 0.5), 1 / 2 * 1.5), abs=1e-6)
    # LCA A (depth 1): Aa vs Ab, the '@' word an ordinary leaf
    assert s("男人", "人") == pytest.approx(_pd(8, 2 * 12, 1 / 2 * 6), abs=1e-6)
    # the root: A vs B of n = 2 classes
    assert s("物体", "人") == pytest.approx(_pd(0, 2 * 20, 1 / 2 * 8), abs=1e-6)
    # monotone in the depth of the LCA
    assert s("人民", "群众") > s("人", "人民") > s("男人", "人") > s("物体", "人")


def test_information_content_by_hand():
    """彭琦 et al. (2018): IC(c) = 1 - log(1 + senses under c) / log(1 + all senses)."""
    ic = CilinSimilarity(TINY, method="ic")
    n = 11  # word senses in TINY
    assert ic.similarity("人民", "群众") == pytest.approx(
        1 - math.log(1 + 5) / math.log(1 + n), abs=1e-6
    )
    assert ic.similarity("人", "人民") == pytest.approx(
        1 - math.log(1 + 9) / math.log(1 + n), abs=1e-6
    )
    assert ic.similarity("物体", "人") == 0.0  # the root carries no information
    assert ic.similarity("人民", "国民") == 1.0 and ic.similarity("良民", "顺民") == 0.5


def test_interface(path_sim):
    assert "人民" in path_sim and "没有" not in path_sim and len(path_sim) == 11
    assert path_sim.similarity("人民", "没有") == 0.0
    assert path_sim.similarity("没有", "没有") == 1.0
    words = ["人民", "没有", "人", "男人"]
    m = path_sim.matrix(words, ["群众", "人民", "没有"])
    for i, a in enumerate(words):
        for j, b in enumerate(["群众", "人民", "没有"]):
            assert m[i, j] == pytest.approx(path_sim.similarity(a, b))
    assert path_sim.senses("人民") == ["Aa01B01="] and path_sim.synonyms("人民") == ["国民"]
    assert path_sim.synonyms("良民") == []  # '#' groups hold related words, not synonyms
    top = path_sim.most_similar("人民", topn=3)
    assert top[0] == ("国民", 1.0) and top[1][0] == "群众"
    with pytest.raises(ValueError):
        CilinSimilarity(TINY, method="nope")


def test_word_takes_its_closest_sense():
    sim = CilinSimilarity([*TINY, ("Ba01A02=", ["群众", "物件"])], method="path")
    assert sim.similarity("群众", "物体") > sim.similarity("人民", "物体")


def test_shared_file():
    sim = CilinSimilarity.from_path()
    assert len(sim) == 77456 and sim._children[0] == 12  # 12 major classes, A-L
    # 人民 Aa01B01= and 群众 Aa01B02=: LCA Aa01B, n its atomic groups counted from the file
    n = len({code[:7] for code, _ in read_cilin(data_path("cilin", "cilin_ext.txt"))
             if code.startswith("Aa01B")})  # fmt: skip
    assert sim.similarity("人民", "群众") == pytest.approx(_pd(19.5, 1.0, 0.5 / n), abs=1e-6)


def test_missing_or_corrupt_file(tmp_path):
    with pytest.raises(ResourceMissingError, match="cilin"):
        CilinSimilarity.from_path(tmp_path / "none.txt")
    bad = tmp_path / "bad.txt"
    bad.write_bytes("Aa01 人\n".encode("gbk"))
    with pytest.raises(ResourceMissingError, match="not a Cilin code"):
        CilinSimilarity.from_path(bad)


class TinyHowNet:
    """A dictionary source with a fixed table (HowNet's interface)."""

    def __init__(self, table):
        self.table = table
        self.words = {w for k in table for w in k}

    def __contains__(self, w):
        return w in self.words

    def matrix(self, a, b):
        out = np.zeros((len(a), len(b)), dtype=np.float32)
        for i, x in enumerate(a):
            for j, y in enumerate(b):
                if x == y and x in self.words:
                    out[i, j] = 1.0
                else:
                    out[i, j] = self.table.get((x, y), self.table.get((y, x), 0.0))
        return out

    def most_similar(self, w, topn=10):
        return [(y if x == w else x, s) for (x, y), s in self.table.items() if w in (x, y)]


def test_hybrid_cases(path_sim):
    """朱新华 et al. (2016): λ-mix where both know both words, else the one that knows them,
    else HowNet through the Cilin synonyms."""
    hn = TinyHowNet({("人民", "群众"): 0.6, ("国民", "公民"): 0.8, ("人民", "公民"): 0.3})
    hyb = HybridSimilarity(hn, path_sim, weight=0.4)
    c = path_sim.similarity("人民", "群众")
    assert hyb.similarity("人民", "群众") == pytest.approx(0.4 * 0.6 + 0.6 * c)
    assert hyb.similarity("人", "男人") == pytest.approx(path_sim.similarity("人", "男人"))
    assert hyb.similarity("人民", "公民") == pytest.approx(0.3)  # only HowNet knows 公民
    # 公民 (HowNet only) vs 国民 (both): HowNet knows both words
    assert hyb.similarity("公民", "国民") == pytest.approx(0.8)
    # 公民 (HowNet only) vs 士 (Cilin only): 士's synonym 人 is unknown to HowNet -> 0
    assert hyb.similarity("公民", "士") == 0.0
    hn2 = TinyHowNet({("人", "公民"): 0.7})
    hyb2 = HybridSimilarity(hn2, path_sim)
    assert hyb2.similarity("公民", "士") == pytest.approx(0.7)  # via its synonym 人
    assert hyb2.similarity("士", "公民") == pytest.approx(0.7)
    assert "公民" in hyb and "士" in hyb and "没有" not in hyb
    assert hyb.similarity("没有", "人") == 0.0 and hyb.similarity("没有", "没有") == 1.0
    words = ["人民", "公民", "士", "没有"]
    m = hyb2.matrix(words, words[::-1])
    for i, a in enumerate(words):
        for j, b in enumerate(words[::-1]):
            assert m[i, j] == pytest.approx(hyb2.similarity(a, b))
    top = hyb.most_similar("人民", topn=3)
    assert [s for _, s in top] == sorted((s for _, s in top), reverse=True)
    assert all(s == pytest.approx(hyb.similarity("人民", w)) for w, s in top)
