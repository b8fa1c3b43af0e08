"""The calibrated mode (issue 10): literal evidence, self-trained page model, online link
model, lazy frontier re-scoring, ``topicrawl topic learn``."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from relevance.calibrated import CalibratedLinkScorer, anchor_context
from relevance.evidence import LiteralEvidence
from relevance.learning.labels import UserLabels, section_of
from relevance.learning.linkmodel import OnlineLinkModel, link_features, url_features
from relevance.learning.selftrain import SelfTrainingPageModel
from relevance.linkscore import Link, PageInfo
from relevance.topic import load_topic, parse_topic
from topicrawl.errors import ResourceMissingError, TopicFileError

TOPICS = Path(__file__).resolve().parent.parent / "topics"
SPORT = ["比赛", "球队", "球员", "进球", "联赛"]
ON = ["比赛 球队 球员 进球 主场 教练 联赛 冠军", "球队 比赛 主场 客场 教练 球迷 联赛",
      "球员 进球 冠军 联赛 主场 教练 球迷"]  # fmt: skip
OFF = [
    "股票 基金 银行 利率 市场 投资",
    "电影 导演 演员 票房 首映 明星",
    "高考 考生 学校 招生 分数线",
]


def words(text: str) -> list[str]:
    return text.split()


def test_words_only_topic_defaults_to_calibrated_mode():
    t = parse_topic('name = "体育"\n[words]\n"比赛" = 1.0\n')
    assert t.priority.mode == "calibrated"
    assert t.page_threshold == 0.5  # a probability
    assert t.learning.self_train and t.learning.link_model
    paper = parse_topic('name = "x"\n[words]\n"a" = 1.0\n[priority]\nmode = "paper"\n')
    assert paper.page_threshold == 0.25 and paper.priority.threshold == 0.2
    with pytest.raises(TopicFileError, match="negative"):
        parse_topic('name = "x"\n[words]\n"a" = 1\n[learning]\npositive = 0.2\nnegative = 0.3\n')
    with pytest.raises(TopicFileError, match="mode"):
        parse_topic('name = "x"\n[words]\n"a" = 1\n[priority]\nmode = "magic"\n')


def test_shipped_topics_keep_the_papers_method():
    for path in TOPICS.glob("*.toml"):
        assert load_topic(path).priority.mode == "paper", path


def test_literal_evidence_is_calibrated():
    ev = LiteralEvidence({w: 1.0 for w in SPORT}, words)
    strong = ev.page(words("比赛 球队"), words(ON[0]))
    none = ev.page(words("股票 基金"), words(OFF[0]))
    assert ev.page_probability(strong) > 0.9
    assert ev.page_probability(none) < 0.1
    assert ev.anchor_probability(["球队", "比赛"]) > 0.5 > ev.anchor_probability(["股票"])


def test_contrast_topics_make_literal_evidence_a_one_of_k_posterior():
    film = ["电影", "导演", "演员", "票房", "明星"]
    plain = LiteralEvidence({w: 1.0 for w in SPORT + ["明星"]}, words)
    ev = LiteralEvidence({w: 1.0 for w in SPORT + ["明星"]}, words, contrast=[{w: 1.0 for w in film}])
    sport_page = (words("比赛 球队"), words(ON[0]))
    film_page = (words("明星 球队 导演"), words("电影 导演 演员 票房 明星 首映 导演 演员 球队"))
    # no contrast evidence: the same probability as without contrast topics
    assert ev.page_probability(ev.page(*sport_page)) == plain.page_probability(plain.page(*sport_page))
    # a page of the contrast topic that shares some of the topic's words sinks below 0.5
    assert plain.page_probability(plain.page(*film_page)) > 0.5
    assert ev.page_probability(ev.page(*film_page)) < 0.5
    # a word of the topic itself never counts for the contrast topic ("明星")
    assert ev.contrast_counts(["明星", "导演"]) == [1.0]
    assert ev.anchor_probability(["球队", "导演", "电影"]) < plain.anchor_probability(["球队", "导演"])
    assert ev.anchor_probability(["球队", "比赛"]) == plain.anchor_probability(["球队", "比赛"])
    # λ = 0 switches the contrast off
    off = LiteralEvidence({w: 1.0 for w in SPORT}, words, contrast=[{w: 1.0 for w in film}],
                          contrast_weight=0.0)  # fmt: skip
    bare = LiteralEvidence({w: 1.0 for w in SPORT}, words)
    assert off.page_probability(off.page(*film_page)) == pytest.approx(
        bare.page_probability(bare.page(*film_page)))


def test_contrast_reads_a_directory_of_topics_but_not_the_topic_itself(tmp_path):
    (tmp_path / "sport.toml").write_text('name = "sport"\n[words]\n"比赛" = 1\n"球队" = 1\n', "utf-8")
    (tmp_path / "film.toml").write_text('name = "film"\n[words]\n"电影" = 1\n"导演" = 1\n', "utf-8")
    topic = tmp_path / "run" / "sport.toml"
    topic.parent.mkdir()
    topic.write_text('name = "sport"\n[words]\n"比赛" = 1\n[learning]\ncontrast = ".."\n', "utf-8")
    s = CalibratedLinkScorer.from_topic(load_topic(topic))
    assert s.evidence.n_contrast == 1 and set(s.evidence.contrast) == {"电影", "导演"}
    topic.write_text('name = "sport"\n[words]\n"比赛" = 1\n[learning]\ncontrast = "nope"\n', "utf-8")
    with pytest.raises(TopicFileError, match="contrast"):
        CalibratedLinkScorer.from_topic(load_topic(topic))


def test_self_training_labels_learns_and_round_trips(tmp_path):
    m = SelfTrainingPageModel(retrain_every=1000, min_positives=3, min_negatives=3)
    assert m.label(0.95) == 1 and m.label(0.05) == 0 and m.label(0.5) is None
    for _ in range(2):
        for t in ON:
            m.observe(words(t), 0.95)
        for t in OFF:
            m.observe(words(t), 0.02)
    m.observe(words("教练 球迷 客场"), 0.5)  # unlabelled: joins through EM
    assert not m.ready
    assert m.retrain()
    on, off, unknown = m.probability_words([["球迷", "教练"], ["票房", "银行"], ["未知词"]])
    assert on > 0.5 > off
    assert unknown is None  # abstains on words it has never seen
    assert m.top_words(3)[0][0] in {w for t in ON for w in t.split()}
    path = tmp_path / "m.json"
    m.save(path)
    again = SelfTrainingPageModel.load(path)
    assert again.probability_words([["球迷", "教练"]])[0] == pytest.approx(on, abs=1e-3)
    path.write_text(json.dumps({"kind": "other"}), encoding="utf-8")
    with pytest.raises(ResourceMissingError):
        SelfTrainingPageModel.load(path)


def _random_bags(rng, n, vocab):
    from collections import Counter

    from relevance.learning.selftrain import bag_of_counts

    return [bag_of_counts(Counter(rng.choice(vocab) for _ in range(rng.randrange(0, 60))))
            for _ in range(n)]  # fmt: skip


def test_word_matrix_is_dict_vectorizers_matrix():
    """The training's matrix is the one scikit-learn's DictVectorizer made of the pages'
    {word: count} dicts before: the same words, shape, dtype and arrays, index for index."""
    import random
    from collections import Counter

    import numpy as np
    from sklearn.feature_extraction import DictVectorizer

    from relevance.learning.selftrain import bag_counts, word_matrix

    rng = random.Random(3)
    vocab = [w for t in ON + OFF for w in t.split()] + [f"词{i}" for i in range(300)]
    bags = _random_bags(rng, 120, vocab)
    fixed = Counter(["球迷", "教练", "球迷", "银行"])
    names, x = word_matrix([*bags, (fixed.keys(), fixed.values())])
    dv = DictVectorizer()
    ref = dv.fit_transform([bag_counts(b) for b in bags] + [dict(fixed)])
    assert names == dv.feature_names_
    assert x.shape == ref.shape and x.dtype == ref.dtype == np.float64
    assert x.has_sorted_indices and ref.has_sorted_indices
    for a, b in ((x.indptr, ref.indptr), (x.indices, ref.indices), (x.data, ref.data)):
        assert np.array_equal(a, b)


def test_self_training_trains_what_dict_vectorizer_trained(monkeypatch):
    """The same model, term for term and bit for bit, as with DictVectorizer's matrix."""
    import random

    from sklearn.feature_extraction import DictVectorizer

    from relevance.learning import selftrain

    on_words = [w for t in ON for w in t.split()] + [f"甲{i}" for i in range(80)]
    off_words = [w for t in OFF for w in t.split()] + [f"乙{i}" for i in range(80)]

    def train() -> SelfTrainingPageModel:
        m = SelfTrainingPageModel(retrain_every=10_000, seed=1)
        m.add_examples([["球迷", "教练", "甲1"]], [True], weight=0.5)
        r = random.Random(11)
        for _ in range(150):
            side = r.random()
            vocab = on_words if side < 0.5 else off_words
            words_ = [r.choice(vocab) for _ in range(r.randrange(1, 40))]
            words_ += [r.choice(on_words + off_words) for _ in range(r.randrange(0, 8))]
            m.observe(words_, 0.9 if side < 0.3 else 0.05 if side > 0.7 else 0.4)
        assert m.retrain()
        return m

    new = train()

    def reference(docs):
        dv = DictVectorizer()
        x = dv.fit_transform([dict(zip(w, c, strict=True)) for w, c in docs])
        return dv.feature_names_, x

    monkeypatch.setattr(selftrain, "word_matrix", reference)
    old = train()
    assert new.terms == old.terms and len(new.terms) > 50
    assert new.intercept == old.intercept


def test_self_training_fits_with_one_blas_thread(monkeypatch):
    """The solver's BLAS calls run on one thread whatever the process's BLAS threads (OpenBLAS
    splitting them over two cores cost 0.1-2.9 s of the crawl's thread a training)."""
    from threadpoolctl import threadpool_info, threadpool_limits

    from relevance.learning import logistic

    seen: list[int] = []
    fit = logistic.fit_logistic

    def recording_fit(*args, **kwargs):
        seen.extend(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")
        return fit(*args, **kwargs)

    monkeypatch.setattr(logistic, "fit_logistic", recording_fit)
    m = SelfTrainingPageModel(retrain_every=1000, min_positives=3, min_negatives=3)
    for t in ON + ON:
        m.observe(words(t), 0.95)
    for t in OFF + OFF:
        m.observe(words(t), 0.02)
    m.observe(words("教练 球迷 客场"), 0.5)
    with threadpool_limits(limits=2, user_api="blas"):
        assert m.retrain()
        assert any(i["num_threads"] == 2 for i in threadpool_info() if i["user_api"] == "blas")
    assert seen and set(seen) == {1}


@pytest.mark.parametrize("em_steps", [0, 3])
def test_unlabelled_pages_teach_the_model_only_through_em(em_steps):
    """A word seen only on unlabelled pages (P_lit between the cuts) gets a weight through
    the EM steps, which label those pages with the model's own prediction; without EM steps
    the model learns from the pseudo-labelled pages only."""
    m = SelfTrainingPageModel(retrain_every=1000, min_positives=3, min_negatives=3,
                              em_steps=em_steps)  # fmt: skip
    for t in ON + ON:
        m.observe(words(t), 0.95)
    for t in OFF + OFF:
        m.observe(words(t), 0.02)
    for t in ON:
        m.observe(words(t) + ["新词"], 0.5)  # unlabelled
    assert m.retrain()
    assert m.trained_on["unlabelled"] == len(ON)
    learned = m.terms.get("新词", (0.0, 0.0))[1]
    assert (learned > 0) if em_steps else (learned == 0.0)


def test_self_training_waits_for_both_classes():
    m = SelfTrainingPageModel(retrain_every=1000)
    for t in ON * 5:
        m.observe(words(t), 0.95)
    assert not m.retrain() and not m.ready


def test_url_features_fold_digits_and_drop_extensions():
    f = url_features("http://news.example.com/sports/2019/04/12/995617.html")
    assert "h:news.example.com" in f
    assert "s:news.example.com/sports/0/0/0" in f
    assert "u:sports" in f and "u:html" not in f
    assert link_features("http://a.cn/x/", ["球队", "球队"]).count("a:球队") == 1


def test_online_link_model_sinks_a_section_that_yields_off_topic_pages():
    m = OnlineLinkModel(max_features=50)
    bad = link_features("http://a.cn/finance/1.html", ["基金"])
    good = link_features("http://a.cn/sports/2.html", ["比赛"])
    assert m.probability(0.6, bad) == pytest.approx(0.6)
    for i in range(10):
        m.observe(0.6, link_features(f"http://a.cn/finance/{i}.html", ["基金"]), 0.0)
        m.observe(0.6, link_features(f"http://a.cn/sports/{i}.html", ["比赛"]), 1.0)
    assert m.probability(0.6, bad) < 0.4 < 0.8 < m.probability(0.6, good)
    again = OnlineLinkModel.from_state(json.loads(json.dumps(m.to_state())))
    assert again.probability(0.6, bad) == pytest.approx(m.probability(0.6, bad), abs=1e-3)
    for i in range(100):  # bounded: the least-updated half is dropped
        m.observe(0.5, [f"x:{i}"], 1.0)
    assert len(m.weights) <= 50


def scorer() -> CalibratedLinkScorer:
    """A words-only scorer without the anchor context: these tests score two links of one
    page, where each link's context would be the other's anchor alone."""
    topic = parse_topic('name = "体育"\n[words]\n' + "".join(f'"{w}" = 1.0\n' for w in SPORT)
                        + "[learning]\nanchor_context = 0\n")  # fmt: skip
    s = CalibratedLinkScorer.from_topic(topic)
    s.page_model.min_positives = s.page_model.min_negatives = 2
    s.page_model.retrain_every = 4
    return s


def test_calibrated_scorer_learns_from_the_crawl():
    s = scorer()
    sports = PageInfo(
        "http://a.cn/sports/1.html", "球队比赛", "", "", "球队在联赛比赛中进球，球员表现出色。"
    )
    money = PageInfo("http://a.cn/finance/1.html", "基金市场", "", "", "银行基金利率市场投资股票。")
    assert s.page_relevance(sports) >= 0.5 > s.page_relevance(money)
    links = [
        Link("http://a.cn/sports/2.html", "联赛球员进球"),
        Link("http://a.cn/finance/2.html", "基金"),
    ]
    scores = s.score_links(sports, links)
    assert scores[0].score > scores[1].score
    b = scores[1].breakdown
    assert b["method"] == "calibrated" and b["features"] and "prior" in b
    before = s.rescore(b, "基金")
    assert before == pytest.approx(scores[1].score, abs=1e-3)
    for i in range(8):  # pages of the finance section keep coming back off-topic
        page = PageInfo(f"http://a.cn/finance/{i + 3}.html", "基金", "", "", "银行基金利率市场。")
        rel = s.page_relevance(page)
        s.observe_page(page, rel, {**b, "features": link_features(page.url, ["基金"])})
        s.observe_page(sports, s.page_relevance(sports), None)
    assert s.page_model.ready
    assert s.rescore(b, "基金") < before
    state = json.loads(json.dumps(s.learned_state()))
    assert state["page_model"]["kind"] == "self-training-page-model"
    assert state["link_model"]["observed"] == 8


def test_memoised_anchors_score_links_as_computed_link_by_link():
    """score_links (and rescore) memoise each anchor's words, P_lit and P_model by text while the
    evidence's contrast and the page model's table are the same objects: every score and
    breakdown equals those of a scorer that memoises nothing, before and after the page model
    retrains and the contrast topics change, and the features list is the link's own."""
    memo, plain = scorer(), scorer()
    plain.memo_chars = 0  # no text memoised: every anchor judged afresh
    home = PageInfo("http://a.cn/", "首页", "", "", "")
    anchors = ["联赛球员进球", "基金", "球队 比赛", "银行 利率", "联赛球员进球", "主帅 发言"]
    links = [
        Link(f"http://a.cn/{d}/{i}.html", a)
        for i, (d, a) in enumerate(zip(["sports", "finance"] * 3, anchors, strict=True))
    ]

    def same() -> None:
        a, b = memo.score_links(home, links), plain.score_links(home, links)
        assert [(x.score, x.follow, x.breakdown) for x in a] == [
            (x.score, x.follow, x.breakdown) for x in b
        ]
        assert a[0].breakdown["features"] is not a[4].breakdown["features"]
        for x, link in zip(a, links, strict=True):  # a queued link scored again at its pop
            assert memo.rescore(x.breakdown, link.anchor) == plain.rescore(x.breakdown, link.anchor)

    same()
    same()  # from the memo
    assert set(memo._anchors) == set(anchors) and not plain._anchors
    for i in range(12):  # both retrain (the page model is then ready) and rebuild contrast
        sport = i % 2 == 0
        page = PageInfo(f"http://a.cn/{'sports' if sport else 'finance'}/{i + 9}.html",
                        "球队比赛" if sport else "基金市场", "", "",
                        "球队在联赛比赛中进球。" if sport else "银行基金利率市场投资。")  # fmt: skip
        for s in (memo, plain):
            s.observe_page(page, s.page_relevance(page), None)
        same()
    assert memo.page_model.ready and memo.page_model.trainings >= 2
    memo.evidence.set_contrast([{"基金": 1.0, "银行": 1.0}])
    plain.evidence.set_contrast([{"基金": 1.0, "银行": 1.0}])
    same()


def test_term_table_is_the_loop_over_every_column():
    import numpy as np

    from relevance.learning.selftrain import term_table

    rng = np.random.default_rng(5)
    names = [f"w{j}" for j in range(500)]
    coef = rng.normal(size=500) * (rng.random(500) < 0.4)
    coef[3], coef[7] = -0.0, np.nan
    idf = rng.random(500) * 6
    loop = {names[j]: (float(idf[j]), float(coef[j])) for j in range(len(names))
            if coef[j] != 0.0}  # fmt: skip
    table = term_table(names, idf, coef)
    assert list(table) == list(loop) and "w3" not in table and "w7" in table
    assert all(table[w][0] == loop[w][0] for w in loop)
    assert all(table[w][1] == loop[w][1] or np.isnan(loop[w][1]) for w in loop)
    assert all(type(x) is float for pair in table.values() for x in pair)
    dense = rng.normal(size=500)  # no coefficient 0: every column
    table = term_table(names, idf, dense)
    assert list(table.items()) == [(names[j], (float(idf[j]), float(dense[j]))) for j in range(500)]
    assert all(type(x) is float for pair in table.values() for x in pair)


def test_url_features_are_a_new_list_each_call():
    a = url_features("http://a.cn/sports/2024/05/1.html")
    a.append("x")
    again = url_features("http://a.cn/sports/2024/05/1.html")
    assert again == ["h:a.cn", "s:a.cn/sports/0/0", "u:sports"]


def test_anchor_context_is_the_mean_of_the_neighbours_evidence():
    assert anchor_context([1.0, 0.0, 0.0, 1.0, 0.0], 1) == [0.0, 0.5, 0.5, 0.0, 1.0]
    assert anchor_context([1.0, 0.0, 1.0], 2) == [0.5, 1.0, 0.5]
    assert anchor_context([0.9], 2) == [0.0]
    assert anchor_context([0.9, 0.1], 0) == [0.0, 0.0]


def test_anchor_context_lifts_a_headline_among_on_topic_headlines():
    """A link without a topic word rises when its neighbours on the page have them (a
    section's block of headlines, the section link heading it); on by default (k = 2)."""
    topic_text = 'name = "体育"\n[words]\n' + "".join(f'"{w}" = 1.0\n' for w in SPORT)
    page = PageInfo("http://a.cn/", "首页", "", "", "")
    links = [Link("http://a.cn/c/ty/", "运动"), Link("http://a.cn/a/1", "球队 联赛"),
             Link("http://a.cn/a/2", "球员 进球"), Link("http://a.cn/a/3", "主帅 发言"),
             Link("http://a.cn/a/7", "联赛 比赛"), Link("http://a.cn/c/cj/", "理财"),
             Link("http://a.cn/a/4", "股票 基金"), Link("http://a.cn/a/5", "银行 利率"),
             Link("http://a.cn/a/6", "市场 投资")]  # fmt: skip
    off = CalibratedLinkScorer.from_topic(parse_topic(topic_text + "[learning]\nanchor_context = 0\n"))
    on = CalibratedLinkScorer.from_topic(parse_topic(topic_text))
    assert off.context == 0 and on.context == 2
    base = [x.score for x in off.score_links(page, links)]
    ctx = on.score_links(page, links)
    lifted = [x.score for x in ctx]
    assert base[0] == pytest.approx(base[5]) and base[3] == pytest.approx(base[6])
    assert lifted[0] > base[0] and lifted[3] > base[3]  # the section link, the plain headline
    assert lifted[0] > lifted[5] and lifted[3] > lifted[7]  # above the finance block's
    assert lifted[1] == pytest.approx(base[1])  # own evidence above the context: unchanged
    # "股票 基金" has one sports headline among its four neighbours: lifted less than the
    # headline in the sports block
    assert 0 < ctx[6].breakdown["anchor_context"] < ctx[3].breakdown["anchor_context"]
    assert base[6] < lifted[6] < lifted[3]
    b = ctx[3].breakdown
    assert b["anchor_context"] > b["anchor_literal"]
    assert on.rescore(b, "主帅 发言") == pytest.approx(ctx[3].score, abs=1e-3)
    assert off.rescore(b, "主帅 发言") == pytest.approx(base[3], abs=1e-3)  # off: ignored


def test_anchor_context_as_a_learned_feature_of_the_link_model():
    """``anchor_context_use = "feature"``: the context is a link-model feature in three bins
    (its weight learned from outcomes), not in the prior."""
    topic_text = ('name = "体育"\n[words]\n' + "".join(f'"{w}" = 1.0\n' for w in SPORT)
                  + '[learning]\nanchor_context = 1\nanchor_context_use = "feature"\n')  # fmt: skip
    s = CalibratedLinkScorer.from_topic(parse_topic(topic_text))
    page = PageInfo("http://a.cn/", "首页", "", "", "")
    links = [Link("http://a.cn/a/1", "球队 联赛"), Link("http://a.cn/c/ty/", "运动"),
             Link("http://a.cn/a/2", "球员 进球"), Link("http://a.cn/c/cj/", "理财"),
             Link("http://a.cn/a/3", "银行")]  # fmt: skip
    out = s.score_links(page, links)
    assert out[1].breakdown["features"][-1] == "c:hi" and out[3].breakdown["features"][-1] == "c:mid"
    assert out[1].score == pytest.approx(out[3].score)  # the prior does not see it
    for _ in range(5):  # links in on-topic neighbourhoods keep leading to on-topic pages
        s.link_model.observe(0.1, ["h:b.cn", "c:hi"], 1.0)
    assert s.rescore(out[1].breakdown, "运动") > s.rescore(out[3].breakdown, "理财")


def test_anchor_context_is_checked():
    with pytest.raises(TopicFileError):
        parse_topic('name = "x"\n[words]\n"a" = 1\n[learning]\nanchor_context = -1\n')


def test_user_labels_resolve_page_over_section_over_host():
    labels = UserLabels.from_rows([
        ("host", "a.cn", False),
        ("section", "http://a.cn/sports/", True),
        ("page", "http://a.cn/sports/9.html", False),
    ])  # fmt: skip
    assert section_of("http://a.cn/sports/1.html") == "http://a.cn/sports/"
    assert section_of("http://a.cn/index.html") == "http://a.cn/"
    assert labels.lookup("http://a.cn/sports/1.html") is True
    assert labels.lookup("http://a.cn/sports/9.html") is False
    assert labels.lookup("http://A.cn/finance/1.html") is False
    assert labels.lookup("http://b.cn/sports/1.html") is None
    with pytest.raises(ValueError, match="scope"):
        UserLabels.from_rows([("site", "a.cn", True)])


def test_user_labels_override_pseudo_labels_and_link_outcomes():
    m = SelfTrainingPageModel(retrain_every=1000)
    m.observe(words(ON[0]), 0.02, label=True)  # evidence says off-topic, the user says on
    m.observe(words(OFF[0]), 0.95, label=False)
    m.observe(words(OFF[1]), 0.95)
    assert [p[1] for p in m.pages] == [1, 0, 1]

    s = scorer()
    s.set_labels(UserLabels(sections={"http://a.cn/finance/": True}))
    b = s.score_links(
        PageInfo("http://a.cn/", "", "", "", ""), [Link("http://a.cn/finance/2.html", "基金")]
    )[0].breakdown
    for i in range(8):  # off-topic by their text, relevant by the user's section label
        page = PageInfo(f"http://a.cn/finance/{i + 3}.html", "基金", "", "", "银行基金利率市场。")
        s.observe_page(
            page, s.page_relevance(page), {**b, "features": link_features(page.url, ["基金"])}
        )
    assert s.page_model.pages[-1][1] == 1
    assert s.rescore(b, "基金") > b["prior"]


class StubScorer:
    def __init__(self, value):
        self.value = value

    def rescore(self, link, anchor):
        return self.value


def test_rescore_middleware_defers_a_link_whose_score_fell():
    from scrapy import Request

    from crawler.middlewares import LinkRescoreMiddleware, RequestDeferred

    crawled = []
    stats = {}
    spider = SimpleNamespace(scorer=StubScorer(0.75))
    crawler = SimpleNamespace(
        engine=SimpleNamespace(crawl=crawled.append),
        stats=SimpleNamespace(inc_value=lambda k: stats.__setitem__(k, stats.get(k, 0) + 1)),
        spider=spider,
    )
    mw = LinkRescoreMiddleware(crawler, margin=0.1, max_deferrals=1)
    meta = {"anchor": "基金", "link_score": {"p": 0.8, "parent": 0.9, "features": ["h:a"]}}
    assert mw.process_request(Request("http://a.cn/1", priority=800, meta=meta)) is None
    spider.scorer.value = 0.3
    with pytest.raises(RequestDeferred):
        mw.process_request(Request("http://a.cn/1", priority=800, meta=meta))
    (again,) = crawled
    assert again.priority == 300 and again.dont_filter
    assert again.meta["link_score"]["rescored_from"] == 0.8
    assert stats == {"topicrawl/links/deferred": 1}
    assert mw.process_request(again) is None  # at most max_deferrals times
    seed = Request("http://a.cn/", meta={"link_score": {"seed": True}})
    assert mw.process_request(seed) is None


def test_frontier_rescores_in_place_as_it_pops():
    from scrapy import Request
    from scrapy.settings import Settings
    from scrapy.squeues import LifoMemoryQueue

    from crawler.middlewares import RESCORED, LinkRescoreMiddleware
    from crawler.queues import DurablePriorityQueue

    stats = {}
    scores = {"http://a.cn/low": 0.2, "http://a.cn/high": 0.75}
    scorer = SimpleNamespace(rescore=lambda link, anchor: scores[link["url"]])
    crawler = SimpleNamespace(
        settings=Settings({"TOPICRAWL_RESCORE_MAX": 1}),
        spider=SimpleNamespace(scorer=scorer),
        stats=SimpleNamespace(inc_value=lambda k: stats.__setitem__(k, stats.get(k, 0) + 1)),
    )
    q = DurablePriorityQueue(crawler, LifoMemoryQueue, "")
    for url, p in (("http://a.cn/low", 900), ("http://a.cn/high", 800)):
        meta = {"anchor": "x", "link_score": {"url": url, "p": p / 1000, "parent": 0.5,
                                              "features": ["h:a"]}}  # fmt: skip
        q.push(Request(url, priority=p, meta=meta))
    q.push(Request("http://a.cn/", priority=100, meta={"link_score": {"seed": True}}))
    first = q.pop()  # /low fell from 0.9 to 0.2: back in the queue, below /high
    assert first.url == "http://a.cn/high" and first.meta[RESCORED]
    assert stats == {"topicrawl/links/deferred": 1}
    low = q.pop()
    assert low.url == "http://a.cn/low" and low.priority == 200
    assert low.meta["link_score"]["rescored_from"] == 0.9 and low.meta["topicrawl_deferred"] == 1
    assert q.pop().url == "http://a.cn/" and q.pop() is None
    mw = LinkRescoreMiddleware(SimpleNamespace(spider=crawler.spider), max_deferrals=5)
    assert mw.process_request(first) is None  # re-scored by the frontier: not again


def test_frontier_pops_in_scrapys_order_with_its_heap_of_priorities():
    """``DurablePriorityQueue._update_curprio`` (a heap) against Scrapy's own scan: the same
    requests in the same order through random pushes and pops of links and start requests,
    priorities reused after their queue ran empty, and priorities given at start."""
    import random

    from scrapy import Request
    from scrapy.pqueues import ScrapyPriorityQueue
    from scrapy.settings import Settings
    from scrapy.squeues import FifoMemoryQueue, LifoMemoryQueue

    from crawler.queues import DurablePriorityQueue

    crawler = SimpleNamespace(settings=Settings(), spider=None, stats=None)
    for seed in range(20):
        rng = random.Random(seed)
        queues = [cls(crawler, LifoMemoryQueue, "", start_queue_cls=FifoMemoryQueue)
                  for cls in (ScrapyPriorityQueue, DurablePriorityQueue)]  # fmt: skip
        popped: list[list[str | None]] = [[], []]
        for step in range(600):
            if rng.random() < 0.55:
                p = rng.choice([rng.randrange(-5, 1005), rng.randrange(990, 1000)])
                meta = {"is_start_request": rng.random() < 0.1}
                for q in queues:
                    q.push(Request(f"http://a.cn/{step}", priority=p, meta=meta))
            else:
                for q, out in zip(queues, popped, strict=True):
                    r = q.pop()
                    out.append(r.url if r is not None else None)
            assert len(queues[0]) == len(queues[1])
        while len(queues[0]):
            for q, out in zip(queues, popped, strict=True):
                out.append(q.pop().url)
        assert popped[0] == popped[1] and queues[1].pop() is None
    assert any(u is None for u in popped[0])  # the queue ran empty on the way


def test_frontier_holds_back_a_weak_link_while_pages_are_in_flight():
    """``TOPICRAWL_DISPATCH_FLOOR``: the best request scored under the floor waits while at
    least ``TOPICRAWL_DISPATCH_IN_FLIGHT`` requests are downloaded or parsed; it goes when
    fewer are; a request over the floor and a seed go at once."""
    from scrapy import Request
    from scrapy.settings import Settings
    from scrapy.squeues import LifoMemoryQueue

    from crawler.queues import DurablePriorityQueue

    stats = {}
    downloading, parsing = set(), set()
    crawler = SimpleNamespace(
        settings=Settings({"TOPICRAWL_DISPATCH_FLOOR": 0.5, "TOPICRAWL_DISPATCH_IN_FLIGHT": 2}),
        spider=SimpleNamespace(scorer=SimpleNamespace(rescore=lambda link, anchor: None)),
        stats=SimpleNamespace(inc_value=lambda k: stats.__setitem__(k, stats.get(k, 0) + 1)),
        engine=SimpleNamespace(downloader=SimpleNamespace(active=downloading),
                               scraper=SimpleNamespace(slot=SimpleNamespace(active=parsing))),
    )  # fmt: skip
    q = DurablePriorityQueue(crawler, LifoMemoryQueue, "")

    def link(url: str, p: float) -> Request:
        return Request(url, priority=round(p * 1000),
                       meta={"link_score": {"url": url, "p": p, "features": ["h:a"]}})  # fmt: skip

    q.push(link("http://a.cn/good", 0.7))
    q.push(link("http://a.cn/weak", 0.3))
    downloading.add("r1")
    parsing.add("r2")  # two in flight
    assert q.pop().url == "http://a.cn/good"  # over the floor: goes
    assert q.pop() is None and len(q) == 1  # under it: waits, still queued
    assert stats == {"topicrawl/links/waited": 1}
    parsing.clear()  # one in flight: the weak link goes
    assert q.pop().url == "http://a.cn/weak" and q.pop() is None
    parsing.add("r2")
    q.push(Request("http://b.cn/", priority=100, meta={"link_score": {"seed": True}}))
    assert q.pop().url == "http://b.cn/"  # a seed is not held back
    off = DurablePriorityQueue(SimpleNamespace(**{**vars(crawler), "settings": Settings()}),
                               LifoMemoryQueue, "")  # fmt: skip
    off.push(link("http://a.cn/weak", 0.3))
    assert off.pop().url == "http://a.cn/weak"  # off by default


def test_topic_learn_writes_the_model_into_the_topic(tmp_path):
    from models.store import Store
    from topicrawl.cli import main

    m = SelfTrainingPageModel(retrain_every=1000, min_positives=3, min_negatives=3)
    for t in ON * 2:
        m.observe(words(t), 0.95)
    for t in OFF * 2:
        m.observe(words(t), 0.02)
    assert m.retrain()
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    store = Store.from_url(db)
    run_id = store.start_run(topic_name="体育", topic_text="", settings={})
    store.finish_run(run_id, {"learned": {"page_model": m.to_state()}})
    empty = store.start_run(topic_name="体育", topic_text="", settings={})
    store.close()
    topic = tmp_path / "tiyu.toml"
    topic.write_text('name = "体育"\n[words]\n"比赛" = 1.0\n', encoding="utf-8")
    assert main(["topic", "learn", str(topic), "--run", str(run_id), "--db", db, "--add", "2"]) == 0
    t = load_topic(topic)
    assert t.learning.model == "tiyu.model.json"
    assert t.learning.suggested and "比赛" not in t.learning.suggested
    assert len(t.words) == 3
    assert SelfTrainingPageModel.load(tmp_path / "tiyu.model.json").ready
    # the next crawl starts from the saved model
    assert CalibratedLinkScorer.from_topic(t).page_model.ready
    assert main(["topic", "learn", str(topic), "--run", str(empty), "--db", db]) == 1


def test_a_crawl_reads_the_console_labels_of_its_topic(tmp_path):
    from sqlalchemy.orm import Session

    from crawler.pipelines import StorePipeline
    from models.orm import Label
    from models.store import Store

    db = f"sqlite:///{tmp_path / 'l.db'}"
    store = Store.from_url(db)
    with Session(store.engine) as s, s.begin():
        s.add_all([
            Label(topic_name="体育", scope="section", target="http://a.cn/finance/", label=True),
            Label(topic_name="体育", scope="host", target="b.cn", label=False),
            Label(topic_name="财经", scope="host", target="a.cn", label=False),
        ])  # fmt: skip
    store.close()
    spider = SimpleNamespace(name="topic", run_id=None, seeds=[], scorer=scorer(),
                             topic=SimpleNamespace(name="体育", raw="", clean=None))  # fmt: skip
    pipe = StorePipeline(db, clean=False)
    pipe.open_spider(spider)
    try:
        labels = spider.scorer.labels
        assert len(labels) == 2  # the topic's own labels only
        assert labels.lookup("http://a.cn/finance/3.html") is True
        assert labels.lookup("http://b.cn/x.html") is False
        assert labels.lookup("http://a.cn/sports/1.html") is None
    finally:
        pipe.store.close()


def test_page_model_trains_without_scikit_learn():
    """Memory (issue 16): the page model trains and predicts in a fresh interpreter without
    importing scikit-learn (its import cost a crawl process ≈ 70 MB)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from relevance.learning.selftrain import SelfTrainingPageModel\n"
        "m = SelfTrainingPageModel(retrain_every=1000)\n"
        "for i in range(12):\n"
        "    m.observe(['体育', '比赛', f'w{i}'], 0.9)\n"
        "    m.observe(['股票', '市场', f'v{i}'], 0.05)\n"
        "    m.observe(['体育', '市场', f'u{i}'], 0.4)\n"
        "assert m.retrain(), 'no training'\n"
        "p, q = m.probability_words([['体育', '比赛'], ['股票', '市场']])\n"
        "assert p > 0.5 > q, (p, q)\n"
        "assert not [k for k in sys.modules if k.split('.')[0] in ('sklearn', 'pandas')]\n"
        "print('ok')\n"
    )
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True,
                          text=True, timeout=180, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "ok"


def _two_sites(m: OnlineLinkModel, rounds: int = 60) -> None:
    """Issue 10's family b beside family a: s.cn's articles are all /article.php (40 % of
    them on topic, priors that barely tell them apart); t.cn names its sections, /sports/
    on topic, /finance/ not, also 40 % on topic: the crawl's base rate is 0.4."""
    for i in range(rounds):
        for k in range(5):
            on = k < 2
            m.observe(0.45 if on else 0.4, link_features("http://s.cn/article.php", []),
                      1.0 if on else 0.0)  # fmt: skip
            section = "sports" if on else "finance"
            m.observe(0.4, link_features(f"http://t.cn/{section}/{i}.html", []),
                      1.0 if on else 0.0)  # fmt: skip


def test_link_gate_silences_a_template_feature_at_the_base_rate():
    article = link_features("http://s.cn/article.php", [])
    plain, gated = OnlineLinkModel(), OnlineLinkModel(gate=2.0)
    for m in (plain, gated):
        _two_sites(m)
    # the host's and the article template's outcome rate is the crawl's: the gate leaves
    # the article at its prior; ungated SGD moves it by the chase of the last outcomes
    for f in ("h:s.cn", "s:s.cn/", "u:article", "h:t.cn"):
        assert gated.value(f) == 0.0
    assert gated.probability(0.4, article) == pytest.approx(0.4, abs=1e-9)
    assert abs(plain.probability(0.4, article) - 0.4) > 0.05
    # the named sections depart from the base rate confidently and keep their weights
    assert gated.value("s:t.cn/sports") > 0.5 and gated.value("u:finance") > 0.5
    assert gated.probability(0.4, link_features("http://t.cn/sports/99.html", [])) > 0.8
    assert gated.probability(0.4, link_features("http://t.cn/finance/99.html", [])) < 0.1


def test_link_gate_keeps_a_section_that_tells_on_from_off():
    m = OnlineLinkModel(gate=2.0)
    for i in range(30):
        m.observe(0.5, link_features(f"http://a.cn/finance/{i}.html", ["基金"]), 0.0)
        m.observe(0.5, link_features(f"http://a.cn/sports/{i}.html", ["比赛"]), 1.0)
    assert m.value("s:a.cn/sports") > 0.5 and m.value("h:a.cn") == 0.0
    good = link_features("http://a.cn/sports/99.html", [])
    bad = link_features("http://a.cn/finance/99.html", [])
    assert m.probability(0.5, bad) < 0.4 < 0.6 < m.probability(0.5, good)
    # the anchor words are not gated (scope "url"): learned at once, as without the gate
    assert m.value("a:比赛") == 1.0 and m.weights["a:比赛"] > 1.0
    every = OnlineLinkModel(gate=2.0, gate_scope="all")
    for i in range(3):
        every.observe(0.5, link_features(f"http://a.cn/sports/{i}.html", ["比赛"]), 1.0)
        every.observe(0.5, link_features(f"http://a.cn/finance/{i}.html", ["基金"]), 0.0)
    assert every.value("a:比赛") == 0.0  # three outcomes: not yet confident


def test_link_gate_counts_do_not_depend_on_the_order_and_round_trip():
    """Scale-out: every worker applies every outcome, in its own order; the gate's counts
    (sums) are the same on each, and they travel in the state."""
    examples = [(0.4, link_features(f"http://s.cn/{'a' if i % 3 else 'b'}/{i}.html", []),
                 float(i % 2)) for i in range(40)]  # fmt: skip
    one, two = OnlineLinkModel(gate=1.0), OnlineLinkModel(gate=1.0)
    for ex in examples:
        one.observe(*ex)
    for ex in examples[20:] + examples[:20]:
        two.observe(*ex)
    for f in ("h:s.cn", "s:s.cn/a", "s:s.cn/b", "u:a", "u:b"):
        assert one.value(f) == pytest.approx(two.value(f))
    again = OnlineLinkModel.from_state(json.loads(json.dumps(one.to_state())))
    assert again.gate == 1.0
    for f in ("h:s.cn", "s:s.cn/a", "s:s.cn/b"):
        assert again.value(f) == pytest.approx(one.value(f), abs=1e-3)
    with pytest.raises(ValueError):
        OnlineLinkModel.from_state({**one.to_state(), "counts": {"u:a": [2, 5.0]}})


def test_link_gate_is_a_learning_setting():
    topic = parse_topic('name = "体育"\n[words]\n"比赛" = 1.0\n[learning]\nlink_gate = 2\n')
    assert CalibratedLinkScorer.from_topic(topic).link_model.gate == 2.0
    default = parse_topic('name = "体育"\n[words]\n"比赛" = 1.0\n')
    assert CalibratedLinkScorer.from_topic(default).link_model.gate == 0.0
    with pytest.raises(TopicFileError):
        parse_topic('name = "体育"\n[words]\n"比赛" = 1.0\n[learning]\nlink_gate = -1\n')
    with pytest.raises(TopicFileError):
        parse_topic('name = "体育"\n[words]\n"比赛" = 1.0\n[learning]\nlink_gate_scope = "a"\n')
