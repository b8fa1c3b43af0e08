"""OpenHowNet source on a tiny resources directory in OpenHowNet's own format (no download)."""

from __future__ import annotations

import pickle

import pytest
from anytree import Node

from relevance.openhownet import OpenHowNetSimilarity
from topicrawl.errors import ResourceMissingError

SEMEMES = {"human|人": 100, "male|男": 10, "female|女": 10, "fruit|水果": 5}
SENSES = {
    "4000": ("man", "男人", "{human|人:modifier={male|男}}", "human|人", "male|男"),
    "4001": ("woman", "女人", "{human|人:modifier={female|女}}", "human|人", "female|女"),
    "4002": ("apple", "苹果", "{fruit|水果}", "fruit|水果", None),
}
SIM = {
    ("human|人", "human|人"): 1.0,
    ("male|男", "female|女"): 0.5,
    ("male|男", "male|男"): 1.0,
    ("female|女", "female|女"): 1.0,
    ("fruit|水果", "fruit|水果"): 1.0,
    ("human|人", "fruit|水果"): 0.1,
    ("human|人", "male|男"): 0.2,
    ("human|人", "female|女"): 0.2,
    ("fruit|水果", "male|男"): 0.05,
    ("fruit|水果", "female|女"): 0.05,
}


def build_resources(root):
    res = root / "resources"
    res.mkdir(parents=True)
    (res / "sememe_all").write_bytes(pickle.dumps(SEMEMES))
    (res / "sememe_triples_taxonomy.txt").write_text(
        "male|男 hypernym human|人\nfemale|女 hypernym human|人\n", encoding="utf-8"
    )
    senses, trees = {}, {}
    for no, (en, zh, definition, head, mod) in SENSES.items():
        senses[no] = {
            "No": no,
            "en_word": en,
            "en_grammar": "noun",
            "ch_word": zh,
            "ch_grammar": "noun",
            "Def": definition,
        }
        tree = Node(head, role="None")
        if mod:
            Node(mod, role="modifier", parent=tree)
        trees[no] = tree
    (res / "HowNet_dict_complete").write_bytes(pickle.dumps(senses))
    (res / "sememe_sim_table").write_bytes(pickle.dumps(SIM))
    (res / "sense_tree").write_bytes(pickle.dumps(trees))
    (res / "synonym").write_bytes(pickle.dumps({}))
    return root


def test_openhownet_tiny_resources(tmp_path):
    sim = OpenHowNetSimilarity.from_resources(build_resources(tmp_path / "oh"))
    assert "男人" in sim and "苹果" in sim and "汽车" not in sim
    # hybrid method: 0.3 * relation (children: male-female 0.5) + 0.7 * head (human-human 1)
    assert sim.similarity("男人", "女人") == pytest.approx(0.3 * 0.5 + 0.7 * 1.0)
    # a leaf against a tree: relation part counts δ = 0.1 per unmatched child
    assert sim.similarity("男人", "苹果") == pytest.approx(0.3 * 0.1 + 0.7 * 0.1)
    assert sim.similarity("男人", "汽车") == 0.0
    m = sim.matrix(["男人", "苹果"], ["女人"])
    assert m[0, 0] == pytest.approx(0.85)
    assert [w for w, _ in sim.most_similar("男人", topn=2)] == ["女人", "苹果"]
    # the resources directory itself is accepted too
    assert OpenHowNetSimilarity.from_resources(tmp_path / "oh" / "resources").similarity(
        "男人", "女人"
    ) == pytest.approx(0.85)


def test_openhownet_missing(tmp_path):
    with pytest.raises(ResourceMissingError, match="sememe_all"):
        OpenHowNetSimilarity.from_resources(tmp_path)
