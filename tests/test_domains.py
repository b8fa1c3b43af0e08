"""HowNet domains as sibling knowledge for the page model (relevance.learning.domains)."""

from __future__ import annotations

import pytest

from relevance.calibrated import CalibratedLinkScorer
from relevance.learning.domains import DomainProfile, load_domains, read_domains
from relevance.learning.selftrain import SelfTrainingPageModel
from relevance.linkscore import PageInfo
from relevance.topic import parse_topic
from topicrawl.errors import ResourceMissingError, TopicFileError

GLOSSARY = """\
明星 N human|人,entertainment|艺,desired|良
演唱会 N fact|事情,entertainment|艺
导演 N human|人,entertainment|艺
时装 N clothing|衣物,industrial|工
面料 N material|材料,industrial|工
大学 N InstitutePlace|场所,education|教育,study|学
留学 V study|学,education|教育
电影 N shows|表演物,entertainment|艺
股票 N bill|票据,commercial|商
新闻 N information|信息
"""
DOMAINS = {"明星": {"艺"}, "演唱会": {"艺"}, "导演": {"艺"}, "时装": {"工"}, "面料": {"工"},
           "大学": {"教育"}, "留学": {"教育"}, "电影": {"艺"}, "股票": {"商"}}  # fmt: skip


@pytest.fixture
def glossary(tmp_path):
    path = tmp_path / "glossary.dat"
    path.write_bytes(GLOSSARY.encode("gbk"))
    return path


def test_the_glossarys_domain_features_by_word(glossary):
    assert {w: set(d) for w, d in read_domains(glossary).items()} == DOMAINS


def test_the_lexicon_is_cached(glossary, tmp_path, monkeypatch):
    monkeypatch.setenv("TOPICRAWL_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("TOPICRAWL_NO_CACHE", raising=False)
    first = load_domains(glossary.parent)
    assert list((tmp_path / "cache").glob("hownet-domains-*.json"))
    assert load_domains(glossary.parent) == first


def test_a_page_whose_domain_words_are_foreign_is_vetoed(glossary):
    d = read_domains(glossary)
    p = DomainProfile(["明星", "演唱会", "性感"], d, veto=0.7, min_words=2)
    assert p.topic == {"艺"}
    fashion = "明星 时装 面料 时装 新闻".split()  # 3 of 4 domain words 工
    assert p.foreign_share(fashion) == (4.0, 0.75) and p.vetoes(fashion)
    assert not p.vetoes("明星 演唱会 导演 时装 新闻".split())  # one of four foreign
    assert not p.vetoes("时装 新闻".split())  # one domain word: too few
    assert not DomainProfile(["新闻"], d).vetoes(fashion)  # a topic without domains


def test_a_vetoed_pseudo_positive_is_unlabelled_or_a_negative():
    m = SelfTrainingPageModel()
    m.observe(["a"], 0.9, veto=True)
    m.observe(["a"], 0.9, label=True, veto=True)  # a user's label stays
    m.observe(["a"], 0.05, veto=True)  # a negative stays a negative
    m.veto_negative = True
    m.observe(["a"], 0.9, veto=True)
    assert [p[1] for p in m.pages] == [None, 1, 0, 0]


def _scorer(glossary, monkeypatch, extra: str) -> CalibratedLinkScorer:
    monkeypatch.setattr("relevance.learning.domains.load_domains",
                        lambda directory=None: read_domains(glossary))  # fmt: skip
    topic = parse_topic(f'name = "娱乐"\n[words]\n"明星" = 1\n"演唱会" = 1\n[learning]\n{extra}')
    s = CalibratedLinkScorer.from_topic(topic)
    s.extract = s.evidence.words = str.split
    return s


def test_domain_veto_labels_the_scorers_page_model(glossary, monkeypatch):
    s = _scorer(glossary, monkeypatch, "domain_veto = 0.7\ndomain_negative = true\n")
    assert s.domain_profile is not None and s.page_model is not None
    fashion = PageInfo(url="http://p.test/1", title="明星 演唱会",
                       text="明星 演唱会 " + "时装 面料 " * 6)  # fmt: skip
    # 艺 4, 工 12: 0.75 foreign
    show = PageInfo(url="http://p.test/2", title="明星 演唱会", text="明星 演唱会 导演 电影")
    for page in (fashion, show):
        rel, lit, _ = s.page_scores(page)
        assert lit >= 0.7
        s.observe_page(page, rel, None)
    assert [p[1] for p in s.page_model.pages] == [0, 1]


def test_domain_veto_is_off_by_default_and_validated():
    topic = parse_topic('name = "x"\n[words]\n"比赛" = 1\n')
    assert topic.learning.domain_veto == 0.0
    assert CalibratedLinkScorer.from_topic(topic).domain_profile is None
    with pytest.raises(TopicFileError, match="domain_veto"):
        parse_topic('name = "x"\n[words]\n"a" = 1\n[learning]\ndomain_veto = 2\n')


def test_domain_accept_rejects_a_vetoed_page_unless_the_page_model_is_confident(
    glossary, monkeypatch
):
    s = _scorer(glossary, monkeypatch, "domain_veto = 0.7\ndomain_accept = 0.8\n")
    fashion = PageInfo(url="http://p.test/1", title="明星 演唱会",
                       text="明星 演唱会 " + "时装 面料 " * 6)  # fmt: skip
    show = PageInfo(url="http://p.test/2", title="明星 演唱会", text="明星 演唱会 导演 电影")
    p, parts = s.page_relevance_parts(fashion)
    assert parts["accept"] == 0.0 and parts["domain_veto"] == 1.0 and p > 0.5
    assert "accept" not in s.page_relevance_parts(show)[1]
    assert not s.domain_rejected("http://p.test/1", 0.9)  # checked against the last page
    s.page_scores(fashion)
    assert s.domain_rejected("http://p.test/1", 0.5)
    assert not s.domain_rejected("http://p.test/1", 0.85)


@pytest.mark.parametrize("hownet_dir", [False, True])  # no hownet/; hownet/ without glossary.dat
def test_domain_veto_without_the_glossary_fails_clearly(tmp_path, monkeypatch, hownet_dir):
    monkeypatch.setenv("TOPICRAWL_DATA", str(tmp_path))
    monkeypatch.setenv("TOPICRAWL_NO_CACHE", "1")
    if hownet_dir:
        (tmp_path / "hownet").mkdir()
    topic = parse_topic('name = "x"\n[words]\n"比赛" = 1\n[learning]\ndomain_veto = 0.9\n')
    with pytest.raises(ResourceMissingError, match="domain_veto = 0"):
        CalibratedLinkScorer.from_topic(topic)


def test_domain_veto_lets_other_errors_through(monkeypatch):
    def corrupt(directory=None):
        raise ValueError("not a glossary")

    monkeypatch.setattr("relevance.learning.domains.load_domains", corrupt)
    topic = parse_topic('name = "x"\n[words]\n"比赛" = 1\n[learning]\ndomain_veto = 0.9\n')
    with pytest.raises(ValueError, match="not a glossary"):
        CalibratedLinkScorer.from_topic(topic)
