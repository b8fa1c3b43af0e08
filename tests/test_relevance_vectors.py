"""word2vec source (tiny models trained in memory) and Algorithm 1."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from relevance.combined import CombinedSimilarity, combine
from relevance.vectors import VectorSimilarity, iter_corpus_sentences, save_vectors, train_vectors
from topicrawl.data import data_path
from topicrawl.errors import ResourceMissingError


@pytest.fixture(scope="module")
def kv():
    with data_path("corpus", "peoples_daily_199801.txt").open(encoding="utf-8") as fh:
        lines = list(itertools.islice(fh, 400))
    return train_vectors(
        texts=["".join(lines)],
        model="word2vec",
        vector_size=16,
        min_count=2,
        epochs=2,
        progress=False,
    )


def test_tagged_and_raw_lines_are_segmented():
    sents = list(
        iter_corpus_sentences(
            ["中共中央/nt  总书记/n  、/w  国家/n  主席/n", "时政\t国务院总理主持会议"]
        )
    )
    assert sents[0] == ["中共中央", "总书记", "国家", "主席"]  # tags stripped, punctuation dropped
    assert "国务院" in sents[1] and "时政" not in sents[1]  # label column dropped, segmented
    assert list(iter_corpus_sentences(["１９９８年/t  新年/t"])) == [["1998年", "新年"]]  # NFKC


def test_train_and_formats(kv, tmp_path):
    assert "国家" in kv.key_to_index and kv.vector_size == 16
    sim = VectorSimilarity(kv)
    assert 0.0 <= sim.similarity("国家", "主席") <= 1.0
    assert sim.similarity("国家", "国家") == 1.0
    assert sim.similarity("国家", "没有这个词") == 0.0
    for name in ("v.kv", "v.bin", "v.txt"):
        p = save_vectors(kv, tmp_path / name)
        loaded = VectorSimilarity.from_path(p)
        assert loaded.cosine("国家", "主席") == pytest.approx(sim.cosine("国家", "主席"), abs=1e-4)
    m = sim.matrix(["国家", "主席", "没有这个词"], ["主席", "国家"])
    assert m.shape == (3, 2) and m[0, 1] == pytest.approx(1.0) and m[2, 0] == 0.0


def test_training_is_reproducible_across_processes(tmp_path):
    """One worker (the default): the same corpus gives the same vectors in two processes,
    whatever their hash seeds."""
    import os
    import subprocess
    import sys

    corpus = tmp_path / "c.txt"
    with data_path("corpus", "peoples_daily_199801.txt").open(encoding="utf-8") as fh:
        corpus.write_text("".join(itertools.islice(fh, 600)), encoding="utf-8")
    code = (
        "import sys; from relevance.vectors import train_vectors; "
        "train_vectors([sys.argv[1]], sys.argv[2], vector_size=16, min_count=2, epochs=2, "
        "progress=False)"
    )
    outs = []
    for hash_seed in ("1", "2"):
        out = tmp_path / f"v{hash_seed}.kv"
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        subprocess.run([sys.executable, "-c", code, str(corpus), str(out)], env=env, check=True)
        outs.append(VectorSimilarity.from_path(out).kv)
    a, b = outs
    assert a.index_to_key == b.index_to_key
    assert np.array_equal(a.vectors, b.vectors)


def test_missing_vectors_file(tmp_path):
    with pytest.raises(ResourceMissingError, match="topicrawl vectors train"):
        VectorSimilarity.from_path(tmp_path / "none.kv")


@pytest.mark.parametrize(
    "h, d, expected",
    [
        (0.0, 0.6, 0.8 * 0.6),  # SimH = 0 -> α·SimD
        (0.6, 0.4, 0.5 * 0.6 + 0.5 * 0.4),  # β·SimH + (1-β)·SimD
        (0.6, -0.3, 0.0),  # SimD < 0 -> 0, then 0 < Th1 -> Sim = 0
        (0.05, 0.6, 0.8 * 0.6),  # SimH < Th2 -> 0
        (0.6, 0.05, 0.0),  # SimD < Th1 -> Sim = 0 at once (paper 001, step 1)
        (0.0, 0.11, 0.0),  # α·SimD = 0.088 < Th1: final cut
    ],
)
def test_algorithm1_cases(h, d, expected):
    assert float(combine(h, d, th1=0.1, th2=0.1, alpha=0.8, beta=0.5)) == pytest.approx(expected)


def test_algorithm1_cut_variant():
    """step1 = "cut" (the former behaviour, kept as a named option): SimD < Th1 sets SimD = 0
    and goes on, so Sim = β·SimH."""
    assert float(combine(0.6, 0.05, step1="cut")) == pytest.approx(0.5 * 0.6)
    assert float(combine(0.6, 0.4, step1="cut")) == pytest.approx(0.5)
    with pytest.raises(ValueError):
        combine(0.6, 0.4, step1="nope")


@pytest.mark.parametrize("step1", ["paper", "cut"])
def test_algorithm1_unknown_word_never_beats_a_known_one(step1):
    """A word without a vector scores as a known word with the lowest SimD, never above it."""
    unknown = float(combine(0.9, 0.0, d_known=False, step1=step1))
    for d in (-0.5, 0.0, 0.05, 0.1, 0.3, 0.9):
        assert unknown <= float(combine(0.9, d, step1=step1)) + 1e-7
    assert unknown == pytest.approx(0.0 if step1 == "paper" else 0.45)


class FakeHowNet:
    name = "hownet"

    def __init__(self, table):
        self.table = table

    def __contains__(self, w):
        return any(w in k for k in self.table)

    def matrix(self, a, b):
        return np.asarray(
            [
                [self.table.get((x, y), self.table.get((y, x), 1.0 if x == y else 0.0)) for y in b]
                for x in a
            ],
            dtype=np.float32,
        )

    def most_similar(self, w, topn=10):
        return [(y if x == w else x, s) for (x, y), s in self.table.items() if w in (x, y)]


def test_combined_source(kv):
    h = FakeHowNet({("国家", "主席"): 0.6, ("国家", "不在词向量"): 0.7})
    v = VectorSimilarity(kv)
    comb = CombinedSimilarity(h, v)
    d = max(0.0, v.cosine("国家", "主席"))
    expected = 0.5 * 0.6 + 0.5 * d if d >= 0.1 else 0.0
    assert comb.similarity("国家", "主席") == pytest.approx(expected, abs=1e-6)
    assert comb.similarity("国家", "不在词向量") == 0.0  # no vector: SimD = 0 < Th1 -> 0
    cut = CombinedSimilarity(h, v, step1="cut")
    assert cut.similarity("国家", "不在词向量") == pytest.approx(0.5 * 0.7)  # β·SimH
    assert comb.similarity("x", "x") == 1.0
    only_h = CombinedSimilarity(h, None)
    assert only_h.similarity("国家", "主席") == pytest.approx(0.6)
    with pytest.raises(ResourceMissingError):
        CombinedSimilarity(None, None)
    assert comb.most_similar("国家", topn=3)


def test_fasttext_gives_vectors_to_unseen_words(tmp_path):
    """fastText: a word the corpus never had gets a vector from its seen character n-grams;
    a word of unseen characters stays unknown."""
    with data_path("corpus", "peoples_daily_199801.txt").open(encoding="utf-8") as fh:
        text = "".join(itertools.islice(fh, 400))
    kv = train_vectors(
        texts=[text], model="fasttext", vector_size=16, min_count=2, epochs=2, progress=False
    )
    sim = VectorSimilarity(kv)
    assert sim.subword and "国家" in sim
    unseen = "国家队长"
    assert unseen not in kv.key_to_index and unseen in sim
    assert sim.known(["国家", unseen, "龘靐"]).tolist() == [True, True, False]
    assert 0.0 <= sim.similarity(unseen, "国家") <= 1.0
    m = sim.matrix([unseen, "龘靐"], ["国家"])
    assert m[0, 0] == pytest.approx(sim.cosine(unseen, "国家"), abs=1e-5) and m[1, 0] == 0.0
    loaded = VectorSimilarity.from_path(save_vectors(kv, tmp_path / "ft.kv"))
    assert loaded.subword and loaded.cosine(unseen, "国家") == pytest.approx(
        sim.cosine(unseen, "国家"), abs=1e-5
    )
    with pytest.raises(ValueError):
        train_vectors(texts=[text], model="glove", progress=False)
