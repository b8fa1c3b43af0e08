"""Contrast topics learned from the web's own sections (relevance.learning.contrast)."""

from __future__ import annotations

import pytest

from relevance.calibrated import CalibratedLinkScorer, contrast_weights
from relevance.learning.contrast import LearnedContrast, label_key, section_key, url_section
from relevance.linkscore import PageInfo
from relevance.topic import parse_topic
from topicrawl.errors import TopicFileError

SPORT = ["比赛", "球队", "球员", "进球", "联赛"]
SPORT_PAGE = "比赛 球队 球员 进球 主场 教练 联赛 冠军 新闻 记者 版权所有".split()
FILM_PAGE = "电影 导演 演员 票房 首映 明星 比赛 新闻 记者 版权所有".split()
MONEY_PAGE = "股票 基金 银行 利率 市场 投资 新闻 记者 版权所有".split()


def feed(m: LearnedContrast, host: str, section: str, words: list[str], lit: float,
         n: int) -> None:  # fmt: skip
    for i in range(n):
        m.observe(f"http://{host}/{section}/2019/{i}.html", words, lit)


def test_url_section_is_host_and_first_directory():
    assert url_section("http://a.test/sports/2019/04/11/1.html") == "a.test/sports"
    assert url_section("http://a.test/article.php?id=7") is None
    assert url_section("http://a.test/") is None


def test_a_section_without_topic_evidence_becomes_a_contrast_topic_of_its_own_words():
    m = LearnedContrast(SPORT, ratio=0.5, min_pages=5, top=10)
    feed(m, "p.test", "sports", SPORT_PAGE, 0.9, 8)
    feed(m, "p.test", "film", FILM_PAGE, 0.3, 8)
    feed(m, "p.test", "money", MONEY_PAGE, 0.6, 8)  # above half the best: not a contrast
    feed(m, "p.test", "tiny", MONEY_PAGE, 0.0, 3)  # too few pages
    topics = m.rebuild()
    assert list(m.topics) == ["p.test/film"] and len(topics) == 1
    words = set(topics[0])
    assert {"电影", "导演", "演员", "票房"} <= words
    # the topic's own words never count, nor the words every section has (the template)
    assert not words & set(SPORT) and not words & {"新闻", "记者", "版权所有"}
    back = LearnedContrast.from_state(m.to_state())
    assert back.topics == m.topics and set(back.sections) == set(m.sections)


def test_a_word_common_across_the_crawl_is_no_contrast_word():
    """A small section may hold a generic word (发展) more often than its host's few topic
    pages by chance; it is on the crawl's other pages too, the topic's, so it is no word of
    the section's own (it would pull on-topic pages toward the contrast)."""
    m = LearnedContrast(SPORT, ratio=0.5, min_pages=5, top=10, against_crawl=True)
    feed(m, "p.test", "sports", SPORT_PAGE, 0.9, 8)
    feed(m, "p.test", "film", FILM_PAGE + ["发展"], 0.1, 8)
    for i in range(40):  # another host's topic pages (no section): 发展 on three in four
        extra = ["发展"] if i % 4 else []
        m.observe(f"http://q.test/article.php?id={i}", SPORT_PAGE + extra, 0.9)
    topics = m.rebuild()
    assert list(m.topics) == ["p.test/film"]
    words = set(topics[0])
    assert {"电影", "导演", "演员", "票房"} <= words and "发展" not in words
    # against the host's topic pages alone, 发展 stands out as much as the section's words
    film = {w: 8 for w in FILM_PAGE + ["发展"]}
    assert "发展" in m.distinctive(film, 8, {w: 8 for w in SPORT_PAGE}, 8)
    # off by default (held out, family b seeds 11-13: precision -0.005, not a gain)
    assert not LearnedContrast(SPORT).against_crawl
    topic = parse_topic(
        'name = "x"\n[words]\n"比赛" = 1\n[learning]\ncontrast_against_crawl = true\n'
    )
    lc = CalibratedLinkScorer.from_topic(topic).learned_contrast
    assert lc is not None and lc.against_crawl


def test_no_sections_no_contrast():
    m = LearnedContrast(SPORT)
    for i in range(30):  # URLs without a directory
        m.observe(f"http://p.test/article.php?id={i}", FILM_PAGE, 0.0)
        m.observe(f"http://p.test/a.php?id={i}", SPORT_PAGE, 0.9)
    assert m.rebuild() == [] and m.sections == {}
    # one section a host is the host's template, not a section: no contrast
    n = LearnedContrast(SPORT)
    feed(n, "film.test", "a", FILM_PAGE, 0.1, 20)
    feed(n, "sport.test", "a", SPORT_PAGE, 0.9, 20)
    assert n.rebuild() == [] and len(n.sections) == 2


def test_the_scorer_learns_contrast_from_the_sections_of_its_crawl():
    topic = parse_topic('name = "体育"\n[words]\n' + "".join(f'"{w}" = 1\n' for w in SPORT)
                        + "[learning]\nlearn_contrast = true\nretrain_every = 5\n")  # fmt: skip
    s = CalibratedLinkScorer.from_topic(topic)
    s.extract = s.evidence.words = str.split  # whitespace-separated test texts
    film_text = "电影 导演 演员 票房 首映 明星 比赛 球队 " * 2
    probe = PageInfo(url="http://p.test/film/x.html", title="电影 首映 票房", text=film_text)
    before = s.page_scores(probe)
    for i in range(12):
        for sec, title, text in (("sports", "比赛 球队", " ".join(SPORT_PAGE) * 2),
                                 ("film", "电影 首映", " ".join(FILM_PAGE)),
                                 ("money", "股票", " ".join(MONEY_PAGE))):  # fmt: skip
            page = PageInfo(url=f"http://p.test/{sec}/{i}.html", title=title, text=text)
            s.observe_page(page, s.page_relevance(page), None)
    assert s.learned_contrast is not None
    assert set(s.learned_contrast.topics) == {"p.test/film", "p.test/money"}
    assert "电影" in s.evidence.contrast and s.evidence.n_contrast == 2
    after = s.page_scores(probe)
    assert after[1] < before[1]  # P_lit against the learned contrast
    assert "learned_contrast" in s.learned_state()


def test_generic_contrast_set_drops_the_topics_overlapping_the_topic():
    from relevance.calibrated import GENERIC_CONTRAST
    from relevance.topic import load_topic

    sports = load_topic(GENERIC_CONTRAST / "sports.toml")
    words = "".join(f'"{w}" = 1\n' for w in list(sports.weights)[:10])
    topic = parse_topic(f'name = "x"\n[words]\n{words}[learning]\ncontrast = "thucnews"\n')
    lists = contrast_weights(topic)
    assert len(lists) == len(list(GENERIC_CONTRAST.glob("*.toml"))) - 1
    assert dict(sports.weights) not in lists


def test_section_key_of_a_breadcrumb_link():
    assert section_key("a.test", "http://a.test/sports/index.html") == "a.test/sports"
    assert section_key("a.test", "http://a.test/sports/") == url_section(
        "http://a.test/sports/1.html"
    )
    assert section_key("a.test", "http://a.test/col/col1234/index.html") == "a.test/col/col1234"
    assert section_key("a.test", "http://a.test/list.asp?classid=3") == "a.test/list.asp?classid=3"
    assert section_key("a.test", "http://b.test/nba/") == "a.test/b.test/nba"
    assert section_key("a.test", "http://a.test/") is None
    assert section_key("a.test", "http://[oops/") is None
    assert len(section_key("a.test", "http://a.test/" + "x" * 5000) or "") == 200


def feed_crumbs(m: LearnedContrast, host: str, section: str | None, words: list[str],
                lit: float, n: int, start: int = 0) -> None:  # fmt: skip
    for i in range(start, start + n):  # article URLs that name no section (family b's)
        m.observe(f"http://{host}/article.php?id={i}", words, lit,
                  section=f"http://{host}/channel/{section}/" if section else None)  # fmt: skip


def test_breadcrumb_sections_give_contrast_where_urls_name_none():
    m = LearnedContrast(SPORT, ratio=0.5, min_pages=5, top=10)
    feed_crumbs(m, "p.test", "sports", SPORT_PAGE, 0.9, 8)
    feed_crumbs(m, "p.test", "film", FILM_PAGE, 0.2, 8, start=100)
    feed_crumbs(m, "p.test", None, MONEY_PAGE, 0.2, 8, start=200)  # no breadcrumb: no section
    topics = m.rebuild()
    assert set(m.sections) == {"p.test/channel/sports", "p.test/channel/film"}
    assert list(m.topics) == ["p.test/channel/film"] and {"电影", "导演"} <= set(topics[0])
    # without breadcrumbs (the URL directory only) these pages have no section at all
    off = LearnedContrast(SPORT, ratio=0.5, min_pages=5, top=10, breadcrumbs=False)
    feed_crumbs(off, "p.test", "sports", SPORT_PAGE, 0.9, 8)
    feed_crumbs(off, "p.test", "film", FILM_PAGE, 0.2, 8, start=100)
    assert off.rebuild() == [] and off.sections == {}


def test_the_scorer_takes_the_section_from_the_pages_breadcrumb():
    words = "".join(f'"{w}" = 1\n' for w in SPORT)
    text = f'name = "体育"\n[words]\n{words}[learning]\nretrain_every = 5\n'
    assert parse_topic(text).learning.contrast_breadcrumbs  # on by default
    learned = {}
    for crumbs in ("true", "false"):
        s = CalibratedLinkScorer.from_topic(parse_topic(f"{text}contrast_breadcrumbs = {crumbs}\n"))
        s.extract = s.evidence.words = str.split
        for i in range(12):
            for sec, title, body in (("sports", "比赛 球队", " ".join(SPORT_PAGE) * 2),
                                     ("film", "电影 首映", " ".join(FILM_PAGE)),
                                     ("money", "股票", " ".join(MONEY_PAGE))):  # fmt: skip
                page = PageInfo(url=f"http://p.test/show.php?id={sec}{i}", title=title,
                                text=body, section=f"http://p.test/channel/{sec}/")  # fmt: skip
                s.observe_page(page, s.page_relevance(page), None)
        assert s.learned_contrast is not None
        learned[crumbs] = set(s.learned_contrast.topics)
        if crumbs == "true":
            assert "电影" in s.evidence.contrast
    assert learned["true"] == {"p.test/channel/film", "p.test/channel/money"}
    assert learned["false"] == set()  # the URLs name no section


def test_contrast_forms_while_the_page_model_has_not_trained():
    """A page model that never trains (no confident negatives) must not keep the learned
    contrast from forming: it is rebuilt on its own schedule until the model trains."""
    topic = parse_topic('name = "体育"\n[words]\n' + "".join(f'"{w}" = 1\n' for w in SPORT))
    s = CalibratedLinkScorer.from_topic(topic)
    s.extract = s.evidence.words = str.split
    assert s.page_model is not None
    s.page_model.min_negatives = 10**9  # it never trains
    for i in range(12):
        for sec, title, text in (("sports", "比赛 球队", " ".join(SPORT_PAGE) * 2),
                                 ("film", "电影 首映", " ".join(FILM_PAGE))):  # fmt: skip
            page = PageInfo(url=f"http://p.test/{sec}/{i}.html", title=title, text=text)
            s.observe_page(page, s.page_relevance(page), None)
    assert s.page_model.trainings == 0 and s.learned_contrast is not None
    assert set(s.learned_contrast.topics) == {"p.test/film"}
    assert "电影" in s.evidence.contrast


def test_learned_contrast_is_on_by_default_in_calibrated_mode():
    topic = parse_topic('name = "x"\n[words]\n"比赛" = 1\n')
    assert topic.learning.learn_contrast and topic.learning.contrast_ratio == 0.7
    s = CalibratedLinkScorer.from_topic(topic)
    assert s.learned_contrast is not None and s.learned_contrast.ratio == 0.7
    off = parse_topic('name = "x"\n[words]\n"比赛" = 1\n[learning]\nlearn_contrast = false\n')
    assert CalibratedLinkScorer.from_topic(off).learned_contrast is None


def test_learn_contrast_is_validated():
    with pytest.raises(TopicFileError, match="contrast_ratio"):
        parse_topic('name = "x"\n[words]\n"a" = 1\n[learning]\ncontrast_ratio = 2\n')


# -- [learning] section_negatives: the section view labels the page model's negatives ---------
def test_the_page_model_takes_the_pages_of_negative_sections_as_negatives():
    """A page of a vetoed section is a negative at training, whatever its evidence; the same
    pages without the veto are positives and the model learns their words as the topic's."""
    from relevance.learning.selftrain import SelfTrainingPageModel

    probs = {}
    for veto in (frozenset(), frozenset({"p.test/film"})):
        m = SelfTrainingPageModel(retrain_every=10**6, em_steps=0)
        for i in range(8):
            m.observe(SPORT_PAGE + [f"s{i}"], 0.9, section="p.test/sports")
            m.observe(FILM_PAGE + [f"f{i}"], 0.9, section="p.test/film")  # sibling: evidence
            m.observe(MONEY_PAGE + [f"m{i}"], 0.02, section="p.test/money")
        m.negative_sections = veto
        assert m.retrain()
        probs[bool(veto)] = m.probability_words([["电影", "导演", "票房"]])[0]
    assert probs[False] > 0.5 > probs[True]


def test_a_users_label_is_not_overridden_by_the_section():
    from relevance.learning.selftrain import SelfTrainingPageModel

    m = SelfTrainingPageModel()
    m.observe(FILM_PAGE, 0.02, label=True, section="p.test/film")
    assert m.pages[0][1:] == (1, None)


def test_the_page_models_state_keeps_the_pages_sections():
    from relevance.learning.selftrain import SelfTrainingPageModel

    m = SelfTrainingPageModel()
    m.observe(SPORT_PAGE, 0.9, section="p.test/sports")
    m.observe(FILM_PAGE, 0.5)
    state = m.to_state(pool=True)
    assert state["pages"][0][2] == "p.test/sports" and len(state["pages"][1]) == 2
    m2 = SelfTrainingPageModel()
    m2.apply_state(m2.parse_state(state))
    assert [p[2] for p in m2.pages] == ["p.test/sports", None]
    bad = {**state, "pages": [[{"a": 1}, 1, 7]]}
    with pytest.raises(ValueError):
        m2.parse_state(bad)


def _crawl_with_a_sibling_section(section_negatives: bool) -> CalibratedLinkScorer:
    """A crawl of three sections: the topic's, a sibling whose pages carry the topic's words
    in one of three pages (a contrast section all the same: its mean evidence is low), and an
    unrelated one."""
    words = "".join(f'"{w}" = 1\n' for w in SPORT)
    topic = parse_topic(f'name = "体育"\n[words]\n{words}[learning]\nretrain_every = 5\n'
                        f"section_negatives = {str(section_negatives).lower()}\n")  # fmt: skip
    s = CalibratedLinkScorer.from_topic(topic)
    s.extract = s.evidence.words = str.split
    for i in range(15):
        film_title = "电影 比赛 球队 进球" if i % 3 == 0 else "电影 首映"
        film_text = " ".join(FILM_PAGE) + (" 比赛 球队 进球 球员" * 2 if i % 3 == 0 else "")
        for sec, title, text in (("sports", "比赛 球队", " ".join(SPORT_PAGE) * 2),
                                 ("film", film_title, film_text),
                                 ("money", "股票", " ".join(MONEY_PAGE))):  # fmt: skip
            page = PageInfo(url=f"http://p.test/show.php?id={sec}{i}", title=title, text=text,
                            section=f"http://p.test/channel/{sec}/")  # fmt: skip
            s.observe_page(page, s.page_relevance(page), None)
    return s


def test_section_negatives_teach_the_page_model_the_sibling_section_is_off_topic():
    probe = PageInfo(url="http://p.test/show.php?id=x", title="电影 首映 导演",
                     text=" ".join(FILM_PAGE))  # fmt: skip
    models = {}
    for on in (False, True):
        s = _crawl_with_a_sibling_section(on)
        assert s.learned_contrast is not None
        assert "p.test/channel/film" in s.learned_contrast.topics
        assert s.page_model is not None and s.page_model.ready
        models[on] = s.page_scores(probe)[2]
        if on:  # the sibling's pages with the topic's words were trained on as negatives
            assert s.page_model.negative_sections == {"p.test/channel/film",
                                                      "p.test/channel/money"}  # fmt: skip
    assert models[True] is not None and models[False] is not None
    assert models[True] < models[False] - 0.05


def test_section_negatives_are_on_by_default_and_validated():
    topic = parse_topic('name = "x"\n[words]\n"比赛" = 1\n')
    assert topic.learning.section_negatives is True
    assert CalibratedLinkScorer.from_topic(topic).section_negatives is True
    off = parse_topic('name = "x"\n[words]\n"比赛" = 1\n[learning]\nsection_negatives = false\n')
    assert CalibratedLinkScorer.from_topic(off).section_negatives is False
    with pytest.raises(TopicFileError, match="section_negatives"):
        parse_topic('name = "x"\n[words]\n"a" = 1\n[learning]\nsection_negatives = 3\n')


# -- [learning] section_meta: the menu's current item and the metadata's section --------------
def test_label_key_starts_with_the_host_and_is_no_url_section():
    assert label_key("m.test", " 娱乐  八卦 ") == "m.test/§娱乐 八卦"
    assert label_key("m.test", "Sports") == label_key("m.test", "SPORTS") == "m.test/§sports"
    assert label_key("m.test", "  ") is None
    assert len(label_key("m.test", "x" * 5000) or "") == 200


def test_section_precedence_breadcrumb_menu_label_url():
    on = LearnedContrast(SPORT, meta=True)
    off = LearnedContrast(SPORT)  # the default: breadcrumb, else URL directory
    crumb, menu = "http://m.test/channel/3/", "http://m.test/c/yl/"
    url = "http://m.test/a/3f9c"
    assert on.section_of(url, crumb, menu, "娱乐") == "m.test/channel/3"
    assert on.section_of(url, None, menu, "娱乐") == "m.test/c/yl"
    assert on.section_of(url, None, "http://m.test/", "娱乐") == "m.test/§娱乐"  # home: none
    assert on.section_of(url, None, None, None) == "m.test/a"
    assert off.section_of(url, None, menu, "娱乐") == "m.test/a"
    assert off.section_of(url, crumb, menu, "娱乐") == "m.test/channel/3"


def test_metadata_sections_give_contrast_where_neither_urls_nor_breadcrumbs_name_one():
    learned = {}
    for meta in (True, False):
        m = LearnedContrast(SPORT, ratio=0.5, min_pages=5, top=10, meta=meta)
        for i in range(8):  # a blog: every post under /posts/, its category in its head
            for j, (lab, words, lit) in enumerate((("体育", SPORT_PAGE, 0.9),
                                                   ("影视", FILM_PAGE, 0.2))):  # fmt: skip
                m.observe(f"http://b.test/posts/a-{i}{j}/", words, lit, label=lab)
        m.rebuild()
        learned[meta] = set(m.topics)
    assert learned[True] == {"b.test/§影视"}
    assert learned[False] == set()  # one mixed URL directory: no section structure


def test_the_scorer_takes_the_menu_and_metadata_sections_with_section_meta():
    words = "".join(f'"{w}" = 1\n' for w in SPORT)
    text = f'name = "体育"\n[words]\n{words}[learning]\nretrain_every = 5\n'
    assert parse_topic(text).learning.section_meta is False  # off by default
    learned = {}
    for meta in ("true", "false"):
        s = CalibratedLinkScorer.from_topic(parse_topic(f"{text}section_meta = {meta}\n"))
        s.extract = s.evidence.words = str.split
        assert s.learned_contrast is not None and s.learned_contrast.meta is (meta == "true")
        for i in range(12):
            for sec, title, body in (("ty", "比赛 球队", " ".join(SPORT_PAGE) * 2),
                                     ("yl", "电影 首映", " ".join(FILM_PAGE))):  # fmt: skip
                page = PageInfo(url=f"http://m.test/a/{sec}{i}", title=title, text=body,
                                section_nav=f"http://m.test/c/{sec}/")  # fmt: skip
                s.observe_page(page, s.page_relevance(page), None)
                page = PageInfo(url=f"http://b.test/posts/{sec}{i}/", title=title, text=body,
                                section_label=sec)  # fmt: skip
                s.observe_page(page, s.page_relevance(page), None)
        learned[meta] = set(s.learned_contrast.topics)
    assert learned["true"] == {"m.test/c/yl", "b.test/§yl"}
    assert learned["false"] == set()


def test_section_meta_is_validated():
    with pytest.raises(TopicFileError, match="section_meta"):
        parse_topic('name = "x"\n[words]\n"a" = 1\n[learning]\nsection_meta = 3\n')
