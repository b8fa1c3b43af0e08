"""`topicrawl demo`'s summary: corpus precision and recall against the sitegen ground truth."""

from __future__ import annotations

from pathlib import Path

import pytest

from crawler.demo import DEFAULT_TOPIC, summary
from sitegen.build import build_web, topic_targets
from sitegen.evaluate import corpus_score


@pytest.fixture(scope="module")
def truth(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return build_web(tmp_path_factory.mktemp("demo-web"), scale="small", seed=1)


def test_corpus_score_counts_reprints_once(truth):
    targets = sorted(topic_targets(truth, "时政"))
    portals = [s["host"] for s in truth["sites"] if s["kind"] == "portal"]
    on_portals = [u for u in targets if truth["pages"][u]["host"] in portals]
    groups = {truth["pages"][u]["dup_group"] or u for u in on_portals}
    score = corpus_score(truth, "时政", on_portals, portals)
    assert (score.documents, score.on_topic, score.found, score.articles) == (
        len(on_portals), len(on_portals), len(groups), len(groups)
    )  # fmt: skip
    assert score.precision == score.recall == 1.0
    # one copy of a reprinted article finds it; an off-topic page lowers precision only
    copy = next(urls[1] for urls in truth["dup_groups"].values() if urls[1] in on_portals)
    off = next(u for u, p in truth["pages"].items()
               if p["kind"] == "article" and p["category"] == "体育")  # fmt: skip
    score = corpus_score(truth, "时政", [copy, off], portals)
    assert (score.documents, score.on_topic, score.found) == (2, 1, 1)
    assert score.precision == 0.5 and score.recall == pytest.approx(1 / len(groups))
    assert corpus_score(truth, "时政", [], portals).precision == 0.0


def test_summary_lines(truth, tmp_path):
    seeds = truth["seeds"]["portal"]
    targets = sorted(u for u in topic_targets(truth, "时政")
                     if any(u.startswith(s) for s in seeds))  # fmt: skip
    text = summary(truth, DEFAULT_TOPIC, seeds, targets[:3])
    lines = text.splitlines()
    assert len(lines) == 3 and "3 crawled sites" in lines[0]
    assert lines[1].split()[:2] == ["precision", "1.00"] and "3 of 3 documents" in lines[1]
    assert lines[2].split()[0] == "recall"
    other = tmp_path / "t.toml"
    other.write_text('name = "天气"\nlanguage = "zh"\n\n[words]\n"下雨" = 1.0\n', "utf-8")
    assert summary(truth, Path(other), seeds, targets).startswith("no ground truth")
