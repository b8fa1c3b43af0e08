"""The page classifier trained on labelled examples (relevance.classifier) and its mix with
formula 3 in the link scorer."""

from __future__ import annotations

import numpy as np
import pytest

from relevance.classifier import TopicClassifier, mix, read_examples
from relevance.linkscore import Link, PageInfo
from relevance.page import TopicRelevance
from relevance.priority import SemanticLinkScorer, build_classifier
from relevance.topic import parse_topic
from topicrawl.data import data_path
from topicrawl.errors import ResourceMissingError, TopicFileError

EXAMPLES = [
    ("时政", "国务院 总理 会见 外国 代表团"),
    ("时政", "人大 代表 审议 政府 工作 报告"),
    ("时政", "外交部 发言人 回应 记者 提问"),
    ("时政", "中央 纪委 通报 干部 违纪 案件"),
    ("体育", "湖人 客场 击败 勇士 詹姆斯 得分"),
    ("体育", "国足 主场 战平 对手 球迷 失望"),
    ("体育", "网球 公开赛 决赛 冠军 诞生"),
    ("财经", "股市 大盘 上涨 基金 净值 回升"),
    ("财经", "银行 利率 下调 贷款 成本 降低"),
]


def write(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_read_examples_both_column_orders_and_class_ids(tmp_path):
    a = read_examples(write(tmp_path / "a.txt", [f"{lb}\t{t}" for lb, t in EXAMPLES]),
                      positive=["时政"])  # fmt: skip
    assert a.positive.tolist() == [True] * 4 + [False] * 5
    assert a.texts[0] == "国务院 总理 会见 外国 代表团"
    ids = {"时政": 0, "体育": 1, "财经": 2}
    b = read_examples(
        write(tmp_path / "b.txt", [f"{t}\t{ids[lb]}" for lb, t in EXAMPLES]),
        positive=["politics"],
        fmt="text-label",
        classes=write(tmp_path / "classes.txt", ["politics", "sports", "finance"]),
    )
    assert b.texts == a.texts and b.positive.tolist() == a.positive.tolist()
    assert set(b.labels) == {"politics", "sports", "finance"}


def test_read_examples_errors_say_what_is_wrong(tmp_path):
    f = write(tmp_path / "a.txt", [f"{lb}\t{t}" for lb, t in EXAMPLES])
    with pytest.raises(ResourceMissingError, match=r"军事.*labels found: 体育, 时政, 财经"):
        read_examples(f, positive=["军事"])
    with pytest.raises(ResourceMissingError, match=r"bad\.txt:2: expected label<TAB>text"):
        read_examples(write(tmp_path / "bad.txt", ["时政\t政府", "no tab here"]), positive=["时政"])
    with pytest.raises(ResourceMissingError, match="every example is positive"):
        read_examples(write(tmp_path / "pos.txt", ["时政\t政府", "时政\t总理"]), positive=["时政"])
    with pytest.raises(ResourceMissingError, match="class id"):
        read_examples(write(tmp_path / "c.txt", ["政府\t7"]), positive=["x"], fmt="text-label",
                      classes=write(tmp_path / "cl.txt", ["x", "y"]))  # fmt: skip
    with pytest.raises(ResourceMissingError, match="example file"):
        read_examples(tmp_path / "missing.txt", positive=["时政"])


def trained(tmp_path) -> TopicClassifier:
    f = write(tmp_path / "ex.txt", [f"{lb}\t{t}" for lb, t in EXAMPLES])
    return TopicClassifier.train(read_examples(f, positive=["时政"]), str.split)


def test_classifier_ranks_and_abstains_on_unknown_words(tmp_path):
    clf = trained(tmp_path)
    pol, sport, unknown = clf.probability(["总理 会见 代表团", "詹姆斯 得分 击败", "甲乙 丙丁"])
    assert pol is not None and sport is not None and pol > 0.5 > sport
    assert unknown is None  # no word of the vocabulary: no evidence either way
    assert clf.probability([]) == []
    assert mix(0.2, None, 0.5) == 0.2  # abstention: formula 3 alone
    assert mix(0.2, 0.8, 0.5) == pytest.approx(0.5)
    assert mix(0.2, 0.8, 0.0) == 0.2


def test_classifier_fits_with_one_blas_thread(tmp_path, fit_blas_threads):
    """lbfgs's BLAS calls run on one thread whatever the process's BLAS threads (on two
    threads OpenBLAS spun 3-8 s of CPU training the shipped topic's headlines, not 0.3 s)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=2, user_api="blas"):
        trained(tmp_path)
    assert fit_blas_threads and set(fit_blas_threads) == {1}


class ZeroSim:
    """Similarity that knows nothing: formula 3 is 0 except for the topic words themselves."""

    def __contains__(self, w):
        return True

    def matrix(self, a, b):
        return np.asarray([[1.0 if x == y else 0.0 for y in b] for x in a], dtype=np.float32)


def test_scorer_mixes_the_classifier_into_anchor_and_page_relevance(tmp_path):
    clf = trained(tmp_path)
    rel = TopicRelevance({"政府": 1.0}, ZeroSim(), str.split)
    plain = SemanticLinkScorer(rel, alpha=0.0, beta=1.0, lam=0.0, threshold=0.1)
    mixed = SemanticLinkScorer(
        rel, alpha=0.0, beta=1.0, lam=0.0, threshold=0.2, classifier=clf, classifier_weight=0.5
    )
    page = PageInfo(url="http://a.cn/", title="新闻 首页")
    links = [Link("http://a.cn/1", "总理 会见 代表团"), Link("http://a.cn/2", "詹姆斯 得分 击败")]
    # formula 3 sees no topic word in either anchor; the classifier tells them apart
    assert [x.score for x in plain.score_links(page, links)] == [0.0, 0.0]
    pol, sport = mixed.score_links(page, links)
    p_pol, p_sport = clf.probability(["总理 会见 代表团", "詹姆斯 得分 击败"])
    assert pol.score == pytest.approx(0.5 * p_pol, abs=1e-4)
    assert sport.score == pytest.approx(0.5 * p_sport, abs=1e-4)
    assert pol.follow and not sport.follow
    assert pol.breakdown["anchor_formula3"] == 0.0
    assert pol.breakdown["anchor_classifier"] == pytest.approx(p_pol, abs=1e-4)
    # anchors = false: anchors keep formula 3, pages still use the classifier
    no_anchor = SemanticLinkScorer(rel, alpha=0.0, beta=1.0, lam=0.0, classifier=clf,
                                   classify_anchors=False)  # fmt: skip
    assert [x.score for x in no_anchor.score_links(page, links)] == [0.0, 0.0]
    article = PageInfo(url="http://a.cn/1", title="总理 会见 代表团", text="人大 代表 审议 报告")
    p_info, p_text = clf.probability([article.title, article.text])
    w = mixed.description_weight
    assert mixed.page_relevance(article) == pytest.approx(0.5 * (w * p_info + (1 - w) * p_text))
    assert plain.page_relevance(article) == 0.0
    with pytest.raises(ValueError, match="classifier_weight"):
        SemanticLinkScorer(rel, classifier=clf, classifier_weight=1.5)


BASE = 'name = "t"\n[words]\n"政府" = 1.0\n'


def test_topic_classifier_table_is_validated_with_line_numbers():
    t = parse_topic(BASE + '[classifier]\nexamples = "ex.txt"\npositive = ["时政"]\n')
    assert t.classifier is not None
    assert (t.classifier.weight, t.classifier.format, t.classifier.anchors) == (
        0.5,
        "label-text",
        True,
    )
    assert parse_topic(BASE).classifier is None
    bad = {
        '[classifier]\npositive = ["时政"]\n': r"t\.toml:4: \[classifier\] needs examples",
        '[classifier]\nexamples = "e"\n': r"t\.toml:4: \[classifier\] positive must be",
        '[classifier]\nexamples = "e"\npositive = ["x"]\nweight = 2\n': r"t\.toml:7: .*weight",
        '[classifier]\nexamples = "e"\npositive = ["x"]\nformat = "csv"\n': r":7: format",
        '[classifier]\nexamples = "e"\npositive = ["x"]\nmodel = 1\n': r":7: unknown key 'model'",
    }
    for extra, pattern in bad.items():
        with pytest.raises(TopicFileError, match=pattern):
            parse_topic(BASE + extra, path="t.toml")


def test_build_classifier_resolves_data_paths(tmp_path, monkeypatch):
    write(tmp_path / "corpus.txt", [f"{lb}\t{t}" for lb, t in EXAMPLES])
    monkeypatch.setenv("TOPICRAWL_DATA", str(tmp_path))
    t = parse_topic(BASE + '[classifier]\nexamples = "data:corpus.txt"\npositive = ["时政"]\n')
    assert t.resolve("data:corpus.txt") == tmp_path / "corpus.txt"
    rel = TopicRelevance({"政府": 1.0}, ZeroSim(), str.split)
    clf = build_classifier(t, rel)
    assert clf.vocabulary_size > 20
    t = parse_topic(BASE + '[classifier]\nexamples = "data:none.txt"\npositive = ["时政"]\n')
    with pytest.raises(ResourceMissingError, match="none.txt"):
        build_classifier(t, rel)


def test_thucnews_headlines_separate_politics_from_sport():
    """The shipped 时政 topic's example set (THUCNews headlines of the shared data)."""
    path = data_path("corpus", "thucnews_titles_dev.txt")
    ex = read_examples(path, positive=["politics"], fmt="text-label",
                       classes=data_path("corpus", "thucnews_titles_classes.txt"))  # fmt: skip
    assert len(ex.texts) == 10_000 and 500 < ex.positive.sum() < 2_000
    import jieba

    clf = TopicClassifier.train(ex, jieba.lcut)
    pol, sport, money = clf.probability(
        [
            "国务院召开常务会议 部署深化医疗体制改革",
            "湖人客场击败勇士 詹姆斯砍下三十分",
            "央行下调存款准备金率 股市大涨",
        ]  # fmt: skip
    )
    # about 10 % of the headlines are politics: P is calibrated to that prior
    assert pol > 0.3 and max(sport, money) < 0.05
    # the hot path computes what scikit-learn computes
    docs = [jieba.lcut(t) for t in ex.texts[:300]] + [["政府", "政府", "改革"], ["未见词"], []]
    fast, slow = clf.probability_words(docs), clf.probability_sklearn(docs)
    assert [f is None for f in fast] == [s is None for s in slow]
    assert fast[-2:] == [None, None]
    assert all(f is None or abs(f - s) < 1e-9 for f, s in zip(fast, slow, strict=True))


def test_show_and_validate_report_the_classifier(tmp_path, monkeypatch, capsys):
    from relevance.topicedit import show
    from topicrawl.cli import main

    write(tmp_path / "ex.txt", [f"{lb}\t{t}" for lb, t in EXAMPLES])
    topic = tmp_path / "t.toml"
    topic.write_text(
        BASE + '[classifier]\nexamples = "ex.txt"\npositive = ["时政"]\nweight = 0.4\n',
        encoding="utf-8",
    )
    assert "classifier weight=0.4 positive=时政 examples=ex.txt" in show(parse_topic(
        topic.read_text(encoding="utf-8")))  # fmt: skip
    assert "classifier (none" in show(parse_topic(BASE))
    assert main(["topic", "validate", str(topic)]) == 0
    assert "classifier: 9 examples (4 on-topic: 时政)" in capsys.readouterr().out
    topic.write_text(BASE + '[classifier]\nexamples = "none.txt"\npositive = ["x"]\n', "utf-8")
    assert main(["topic", "validate", str(topic)]) == 1  # a missing resource, not a bad file
    assert "none.txt" in capsys.readouterr().err
