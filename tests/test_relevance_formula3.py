"""Formula 3: the published form (w_d = tf·idf, no normalisation, no cap) beside the default."""

from __future__ import annotations

import numpy as np
import pytest

from relevance.page import TopicRelevance, _jieba_idf

WEIGHTS = {"政府": 1.0, "经济": 0.5}
TABLE = {("政府", "政府"): 1.0, ("经济", "经济"): 1.0, ("财政", "政府"): 0.9, ("财政", "经济"): 0.8}


class TableSim:
    def matrix(self, a, b):
        return np.asarray(
            [[TABLE.get((x, y), 1.0 if x == y else 0.0) for y in b] for x in a], dtype=np.float32
        )


def test_paper_form_by_hand():
    idf, median = _jieba_idf()
    assert idf["政府"] > 0 and median > 0
    rel = TopicRelevance(WEIGHTS, TableSim(), str.split, form="paper")
    # aff(d) = Σ_t w_t·Sim(d,t)², w_t scaled so the largest is 1; no Z, no cap
    aff = {"政府": 1.0, "经济": 0.5, "财政": 0.9**2 + 0.5 * 0.8**2, "足球": 0.0}
    words = "政府 财政 财政 足球".split()
    expected = sum(idf.get(w, median) * aff[w] for w in words) / len(words)
    assert rel.relevance(" ".join(words)) == pytest.approx(expected, rel=1e-5)
    assert rel.relevance_many([" ".join(words), ""]) == pytest.approx([expected, 0.0], rel=1e-5)
    assert rel.affinity("财政") == pytest.approx(aff["财政"], rel=1e-5)  # above 1: not capped


def test_default_form_normalises_and_caps():
    rel = TopicRelevance(WEIGHTS, TableSim(), str.split)
    z = float(np.median([1.0, 0.5]))
    assert rel.normalizer == pytest.approx(z)
    assert rel.affinity("财政") == 1.0  # (0.81 + 0.32) / 0.75 capped at 1
    assert rel.relevance("政府 足球") == pytest.approx(0.5)
    with pytest.raises(ValueError):
        TopicRelevance(WEIGHTS, TableSim(), str.split, form="nope")


def test_topic_file_selects_the_form(monkeypatch):
    """``[page] formula3`` picks the form for a topic; a wrong value names its line."""
    from relevance import priority
    from relevance.cache import topic_fingerprint
    from relevance.topic import parse_topic
    from topicrawl.errors import TopicFileError

    base = 'name = "t"\n[words]\n"政府" = 1.0\n"经济" = 0.5\n'
    default = parse_topic(base)
    paper = parse_topic(base + '[page]\nformula3 = "paper"\n')
    assert (default.page_formula3, paper.page_formula3) == ("normalized", "paper")
    # the shared affinity cache never mixes the two forms' affinities
    assert topic_fingerprint(default) != topic_fingerprint(paper)
    rel = priority.build_relevance(paper, TableSim())
    assert rel.form == "paper" and rel.affinity("财政") > 1.0
    assert priority.build_relevance(default, TableSim()).form == "normalized"
    with pytest.raises(TopicFileError, match="not one of") as err:
        parse_topic(base + '[page]\nformula3 = "tfidf"\n')
    assert err.value.line == 6
