"""Formula 3 (page relevance with the affinity cache) and formula 5 (SemanticLinkScorer)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from relevance.linkscore import Link, LinkScorer, PageInfo
from relevance.page import TopicRelevance, page_relevance
from relevance.priority import SemanticLinkScorer
from relevance.topic import load_topic, parse_topic
from relevance.urls import PerHostStructureSample, StructureSample
from topicrawl.errors import ResourceMissingError

TOPICS = Path(__file__).resolve().parent.parent / "topics"


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    """Keep the parsed-HowNet cache out of the home directory."""
    monkeypatch.setenv("TOPICRAWL_CACHE", str(tmp_path_factory.getbasetemp() / "tr-cache"))


TABLE = {("政治", "经济"): 0.5, ("政治", "政府"): 0.8, ("经济", "政府"): 0.4, ("经济", "财政"): 0.9}


class TableSim:
    """Similarity from a table; counts the words it is asked about (to check the cache)."""

    def __init__(self):
        self.asked: list[str] = []

    def __contains__(self, w):
        return True

    def matrix(self, a, b):
        self.asked.extend(a)
        return np.asarray(
            [[1.0 if x == y else TABLE.get((x, y), TABLE.get((y, x), 0.0)) for y in b] for x in a],
            dtype=np.float32,
        )


WEIGHTS = {"政治": 1.0, "经济": 0.5}


def test_formula3_by_hand():
    sim = TableSim()
    rel = TopicRelevance(WEIGHTS, sim, str.split)
    # aff(d) = Σ_t w_t Sim(d,t)²; Z = median of the topic words' own affinities
    aff_pol = 1.0 + 0.5 * 0.25
    aff_eco = 1.0 * 0.25 + 0.5
    z = float(np.median([aff_pol, aff_eco]))
    assert rel.normalizer == pytest.approx(z)
    aff_gov = 1.0 * 0.64 + 0.5 * 0.16
    aff_fin = 0.5 * 0.81
    words = "政治 政府 财政 足球 政府"
    expected = (min(1, aff_pol / z) + 2 * min(1, aff_gov / z) + aff_fin / z + 0.0) / 5
    assert rel.relevance(words) == pytest.approx(expected)
    assert page_relevance(words.split(), WEIGHTS, TableSim(), normalizer=z) == pytest.approx(
        expected
    )
    assert rel.relevance("") == 0.0


def test_affinity_is_cached():
    sim = TableSim()
    rel = TopicRelevance(WEIGHTS, sim, str.split)
    sim.asked.clear()
    first = rel.relevance_many(["政府 财政", "政府 足球"])
    assert sorted(sim.asked) == ["政府", "财政", "足球"]  # one batch, each word once
    sim.asked.clear()
    assert rel.relevance_many(["政府 财政", "政府 足球"]) == first
    assert sim.asked == []
    small = TopicRelevance(WEIGHTS, TableSim(), str.split, cache_size=3)
    assert small.relevance("政府 财政 足球 篮球") == pytest.approx(
        TopicRelevance(WEIGHTS, TableSim(), str.split).relevance("政府 财政 足球 篮球")
    )


def scorer(**kw) -> SemanticLinkScorer:
    rel = TopicRelevance(WEIGHTS, TableSim(), str.split)
    return SemanticLinkScorer(rel, structure=StructureSample(4, seed=0), **kw)


PAGE = PageInfo(url="http://a.cn/politics/", title="政治 政府", description="经济")
OFF = PageInfo(url="http://a.cn/sports/", title="足球 篮球", description="比赛")
LINKS = [
    Link("http://a.cn/politics/1.html", "政府 财政"),
    Link("http://a.cn/sports/2.html", "足球"),
]


def test_formula5_breakdown_and_decision():
    s = scorer(holding_page=False)  # the paper's struct: from the (empty) sample only
    assert isinstance(s, LinkScorer)
    on, off = s.score_links(PAGE, LINKS)
    rel = s.relevance
    f = rel.relevance("政治 政府 经济")
    a = rel.relevance("政府 财政")
    assert on.score == pytest.approx(0.4 * f + 0.4 * a + 0.2 * 0.0)
    b = on.breakdown
    for key in (
        "f_info",
        "anchor",
        "struct",
        "alpha",
        "beta",
        "lambda",
        "p",
        "threshold",
        "follow",
        "description_relevant",
        "focus",
    ):
        assert key in b
    assert b["follow"] is on.follow is True and b["threshold"] == 0.2
    assert off.score < on.score and off.breakdown["anchor"] == 0.0
    assert on.priority == round(on.score * 1000)


def test_struct_term_uses_accepted_sample():
    s = scorer()
    for i in range(4):
        s.observe_accepted(f"http://a.cn/politics/{i}.html")
    on, off = s.score_links(PAGE, LINKS)
    assert on.breakdown["struct"] == 1.0 and off.breakdown["struct"] == 0.0


def test_description_gate_soft_hard_and_seeds():
    soft = scorer(focus="soft")
    on, off = soft.score_links(OFF, LINKS)
    assert on.breakdown["description_relevant"] is False
    assert on.breakdown["f_info"] == 0.0  # plain matching: no topic word in the description
    assert on.follow is (on.score > 0.2)
    hard = scorer(focus="hard")
    on_h, _ = hard.score_links(OFF, LINKS)
    assert on_h.follow is False and on_h.breakdown["reason"] == "description-gate"
    seed = PageInfo(url=OFF.url, title=OFF.title, is_seed=True)
    assert all(x.follow for x in hard.score_links(seed, LINKS))
    with pytest.raises(ValueError):
        scorer(focus="medium")


def test_page_relevance_uses_text():
    s = scorer()
    page = PageInfo(url="u", title="政治", text="足球 足球 足球 政府")
    r_info = s.relevance.relevance("政治")
    r_text = s.relevance.relevance("足球 足球 足球 政府")
    assert s.page_relevance(page) == pytest.approx(0.5 * (r_info + r_text))
    assert 0.0 <= s.page_relevance(OFF) < s.page_relevance(PAGE) <= 1.0
    heavy = scorer(description_weight=0.8)
    assert heavy.page_relevance(page) == pytest.approx(0.8 * r_info + 0.2 * r_text)
    assert heavy.page_relevance(PageInfo(url="u", text="足球 政府")) == pytest.approx(
        s.relevance.relevance("足球 政府")
    )  # no description: the text alone
    with pytest.raises(ValueError, match="description_weight"):
        scorer(description_weight=1.5)


def test_holding_page_stands_in_for_an_unstructured_sample():
    s = scorer(lam=0.2, holding_page=True)
    plain = scorer(lam=0.2, holding_page=False)
    section = PageInfo(url="http://a.cn/politics/", title="政治 政府", description="经济")
    links = [
        Link("http://a.cn/politics/2024/1.html", "足球"),  # same section, off-topic anchor
        Link("http://a.cn/sports/2024/2.html", "足球"),
        Link("http://a.cn/politics/?page=2", "足球"),  # same path, other parameters
    ]
    on, off, again = s.score_links(section, links)
    assert on.breakdown["struct"] == 1.0 and on.breakdown["struct_source"] == "holding-page"
    assert off.breakdown["struct"] == 0.0 and again.breakdown["struct"] == 0.0
    assert on.score == pytest.approx(off.score + 0.2)
    assert [x.breakdown["struct"] for x in plain.score_links(section, links)] == [0.0] * 3
    # an irrelevant holding page (description gate) is no evidence
    assert all(x.breakdown["struct"] == 0.0 for x in s.score_links(OFF, links))
    # once the host's sample has a majority structure, the sample decides
    for i in range(3):
        s.structure.add(f"http://a.cn/world/2024/{i}.html")
    on, _, _ = s.score_links(section, links)
    assert on.breakdown["struct"] == 0.0 and on.breakdown["struct_source"] == "sample"


def test_page_relevance_struct_weight():
    s = scorer(page_struct_weight=0.5)
    plain = scorer(page_struct_weight=0.0)
    section = PageInfo(
        url="http://a.cn/politics/2024/9.html", title="足球 政府", text="足球 足球 政府"
    )
    elsewhere = PageInfo(
        url="http://a.cn/sports/2024/9.html", title="足球 政府", text="足球 足球 政府"
    )
    r = plain.page_relevance(section)
    assert 0.0 < r < 0.6
    assert s.page_relevance(section) == s.page_relevance(elsewhere) == pytest.approx(r)
    for i in range(3):  # the host's accepted pages now have a majority structure
        s.structure.add(f"http://a.cn/politics/2024/{i}.html")
    assert s.page_relevance(section) == pytest.approx(1.5 * r)
    assert s.page_relevance(elsewhere) == pytest.approx(0.5 * r)
    with pytest.raises(ValueError, match="page_struct_weight"):
        scorer(page_struct_weight=-0.1)


def test_from_topic_reads_per_host_and_description_weight(tmp_path):
    base = 'name = "t"\n[words]\n"政治" = 1.0\n'
    s = SemanticLinkScorer.from_topic(parse_topic(base), sim=TableSim())
    assert isinstance(s.structure, PerHostStructureSample) and s.description_weight == 0.5
    assert s.page_struct_weight == 0.5 and s.holding_page is True
    t = parse_topic(
        base + "[page]\ndescription_weight = 0.7\nstruct_weight = 0\n"
        "[urls]\nper_host = false\nholding_page = false\n"
    )
    s = SemanticLinkScorer.from_topic(t, sim=TableSim())
    assert isinstance(s.structure, StructureSample) and s.description_weight == 0.7
    assert s.page_struct_weight == 0.0 and s.holding_page is False


def test_from_topic_ranks_politics_first():
    s = SemanticLinkScorer.from_topic(load_topic(TOPICS / "shizheng.toml"))
    page = PageInfo(url="http://news.example.cn/", title="新闻网 首页")
    links = [
        Link("http://news.example.cn/politics/1.html", "国务院总理主持召开常务会议 部署改革工作"),
        Link("http://news.example.cn/politics/2.html", "外交部长会见外国议会代表团"),
        Link("http://news.example.cn/sports/3.html", "湖人队客场击败勇士队 詹姆斯砍下三十分"),
        Link("http://news.example.cn/ent/4.html", "周杰伦新专辑销量火爆 歌迷排队购买"),
    ]
    scores = [x.score for x in s.score_links(page, links)]
    assert min(scores[:2]) > max(scores[2:])


def test_from_topic_missing_vectors_is_an_error(tmp_path):
    f = tmp_path / "t.toml"
    f.write_text(
        'name = "t"\n[words]\n"政治" = 1.0\n[similarity]\nsources = ["hownet", "word2vec"]\n'
        'vectors = "missing.kv"\n',
        encoding="utf-8",
    )
    with pytest.raises(ResourceMissingError, match="topicrawl vectors train"):
        SemanticLinkScorer.from_topic(load_topic(f))
    t = parse_topic(
        'name = "t"\n[words]\n"x" = 1\n[similarity]\nsources = ["openhownet"]\n'
        f'openhownet = "{tmp_path}"\n'
    )
    with pytest.raises(ResourceMissingError, match="OpenHowNet resources missing"):
        SemanticLinkScorer.from_topic(t)


def test_candidate_words_of_short_texts_are_memoised():
    calls: list[str] = []

    def extract(text: str) -> list[str]:
        calls.append(text)
        return text.split()

    rel = TopicRelevance(WEIGHTS, TableSim(), extract, memo_size=2, memo_chars=10)
    calls.clear()
    assert rel.relevance_many(["政府 财政", "政府 财政"]) == [rel.relevance("政府 财政")] * 2
    assert calls == ["政府 财政"]  # an anchor that recurs is segmented once
    long = "政府 " * 10
    rel.words(long), rel.words(long)
    assert calls.count(long) == 2  # long texts (page bodies) are not kept
    rel.words("a"), rel.words("b")  # the memo is bounded: full, it starts again
    assert len(rel._words) <= 2
