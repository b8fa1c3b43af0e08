"""Topic files: loading, errors with file and line, tomlkit edits, formula 2, the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from relevance.topic import key_line, load_topic, parse_topic
from relevance.topicedit import add_words, init_text, remove_words, set_value
from relevance.weights import CandidateExtractor, formula2_weights
from topicrawl.cli import main
from topicrawl.errors import TopicFileError

TOPICS = Path(__file__).resolve().parent.parent / "topics"

GOOD = """\
# my topic
name = "时政"
language = "zh"

[words]
"政治" = 1.0   # the core word
"政府" = 0.5

[overrides]
"中国" = 0.2

[priority]
threshold = 0.3
focus = "hard"
"""


def test_load_example_topics():
    for name in ("shizheng", "dangjian", "caijing"):
        t = load_topic(TOPICS / f"{name}.toml")
        assert t.words and t.raw and t.language == "zh"
    t = load_topic(TOPICS / "dangjian.toml")
    assert len(t.words) > 500


def test_parse_values_and_defaults():
    t = parse_topic(GOOD, path="x.toml")
    assert t.name == "时政" and t.words == {"政治": 1.0, "政府": 0.5}
    assert t.weights == {"政治": 1.0, "政府": 0.5, "中国": 0.2}
    assert t.link_threshold == 0.3 and t.focus == "hard"
    # calibrated mode (the default): the page threshold is a probability
    assert t.page_threshold == 0.5 and t.similarity.sources == ["hownet"]
    assert t.hownet.beta == (0.5, 0.2, 0.17, 0.13) and t.urls.mode == "path"
    assert t.urls.per_host is True
    assert parse_topic(GOOD + "\n[urls]\nper_host = false\n").urls.per_host is False
    assert t.allowed_hosts == [] and t.raw == GOOD


@pytest.mark.parametrize(
    "text, line, msg",
    [
        (GOOD.replace('focus = "hard"', 'focus = "medium"'), 14, "not one of"),
        (GOOD.replace('"政府" = 0.5', '"政府" = "high"'), 7, "must be a number"),
        (GOOD.replace("threshold = 0.3", "threshold = 3"), 13, "outside"),
        (GOOD.replace("threshold = 0.3", "treshold = 0.3"), 13, "unknown key 'treshold'"),
        (GOOD.replace('"政治" = 1.0', '"政治" = 1.0 = 2'), 6, "invalid TOML"),
        (GOOD.replace('name = "时政"', 'name = ""'), 2, "name"),
        (GOOD + '\n[similarity]\nsources = ["word2vec"]\n', 17, "vectors"),
        (GOOD + '\n[crawl]\nallowed_hosts = ["bad host!"]\n', 17, "allowed_hosts"),
        (GOOD + "\n[urls]\nper_host = 1\n", 17, "true or false"),
        ('name = "x"\n[words]\n"a" = 0\n', 2, "weight 0"),  # the [words] header
    ],
)
def test_errors_name_file_and_line(text, line, msg):
    with pytest.raises(TopicFileError, match=msg) as err:
        parse_topic(text, path="topic.toml")
    assert err.value.path == "topic.toml"
    assert err.value.line == line
    assert str(err.value).startswith(f"topic.toml:{line}: ")


def test_missing_file(tmp_path):
    with pytest.raises(TopicFileError, match="not found") as err:
        load_topic(tmp_path / "none.toml")
    assert err.value.path.endswith("none.toml")


def test_key_line():
    assert key_line(GOOD, "words", "政府") == 7
    assert key_line(GOOD, None, "language") == 3
    assert key_line(GOOD, "priority", "focus") == 14


def test_edits_keep_comments():
    text = add_words(GOOD, ["外交", "国防"], weight=0.7)
    assert "# the core word" in text and "# my topic" in text
    assert parse_topic(text).words["外交"] == 0.7
    text = remove_words(text, ["政府"])
    assert "政府" not in parse_topic(text).words and "# the core word" in text
    text = set_value(text, "priority.threshold", "0.25")
    assert parse_topic(text).priority.threshold == 0.25
    text = set_value(text, "similarity.sources", '["hownet"]')
    assert parse_topic(text).similarity.sources == ["hownet"]
    with pytest.raises(TopicFileError, match="not one of"):
        set_value(text, "priority.focus", "medium")
    with pytest.raises(TopicFileError, match="not in"):
        remove_words(text, ["没有"])
    t = parse_topic(init_text("新话题", words={"经济": 1.0}))
    assert t.name == "新话题" and t.words == {"经济": 1.0}


def test_formula2_by_hand():
    docs = ["政治 政治 经济", "政治 文化", "体育"]
    w = formula2_weights(docs, ["政治", "经济", "外交"], scale_max=False)
    import math

    raw_p = 3 * math.log(3 / 2 + 0.01)
    raw_e = 1 * math.log(3 / 1 + 0.01)
    norm = math.hypot(raw_p, raw_e)
    assert w["政治"] == pytest.approx(raw_p / norm)
    assert w["经济"] == pytest.approx(raw_e / norm)
    assert w["外交"] == pytest.approx((raw_p + raw_e) / norm / 2)  # absent: the mean
    assert max(formula2_weights(docs, ["政治", "经济"]).values()) == 1.0


def test_candidate_words_pos_filter():
    ex = CandidateExtractor(topic_words=["全面从严治党"])
    words = ex("我们的全面从严治党工作在北京取得了很大的成绩")
    assert "全面从严治党" in words  # topic term kept whole
    assert "我们" not in words and "的" not in words and "了" not in words
    assert "北京" in words and "成绩" in words
    en = CandidateExtractor(language="en")
    assert en("The Party held a meeting in Beijing") == ["party", "held", "meeting", "beijing"]


def test_cli_edit_cycle_and_exit_status(tmp_path, capsys):
    f = tmp_path / "t.toml"
    assert main(["topic", "init", str(f), "--name", "测试"]) == 0
    assert main(["topic", "add", str(f), "政治", "经济", "--weight", "0.5"]) == 0
    assert main(["topic", "add", str(f), "中国", "--weight", "0.1", "--override"]) == 0
    assert main(["topic", "remove", str(f), "经济"]) == 0
    assert main(["topic", "set", str(f), "priority.threshold", "0.3"]) == 0
    assert main(["topic", "validate", str(f), "--no-load"]) == 0
    t = load_topic(f)
    assert t.words == {"政治": 0.5} and t.overrides == {"中国": 0.1}
    assert t.priority.threshold == 0.3
    assert "# topicrawl topic file" in f.read_text(encoding="utf-8")
    capsys.readouterr()
    assert main(["topic", "set", str(f), "priority.focus", "medium"]) == 2
    err = capsys.readouterr().err
    assert str(f) in err and "focus" in err and "medium" in err
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\n[words]\n"a" = \n', encoding="utf-8")
    assert main(["topic", "show", str(bad)]) == 2
    assert f"{bad}:3:" in capsys.readouterr().err
    assert main(["topic", "show", str(tmp_path / "missing.toml")]) == 2


def test_cli_weights(tmp_path, capsys):
    f = tmp_path / "t.toml"
    main(["topic", "init", str(f), "--name", "测试"])
    main(["topic", "add", str(f), "政治", "经济"])
    corpus = tmp_path / "c.txt"
    corpus.write_text("时政\t政治 政治 经济\n时政\t政治 文化\n体育\t足球\n", encoding="utf-8")
    assert main(["topic", "weights", str(f), "--corpus", str(corpus)]) == 0
    w = load_topic(f).words
    assert w["政治"] == 1.0 and 0 < w["经济"] < 1.0


def test_clean_and_dedup_tables_are_kept_for_their_owners():
    from relevance.topic import parse_topic

    topic = parse_topic(
        'name = "x"\n[words]\n"政治" = 1.0\n[clean]\nto_simplified = true\n'
        '[dedup]\nmethods = ["exact", "spotsigs"]\n[dedup.spotsigs]\ntau = 0.6\n'
    )
    assert topic.clean == {"to_simplified": True}
    assert topic.dedup == {"methods": ["exact", "spotsigs"], "spotsigs": {"tau": 0.6}}
    with pytest.raises(TopicFileError, match=":2: 'clean' must be a table"):
        parse_topic('name = "x"\nclean = 3\n[words]\n"政治" = 1.0\n')


def test_cilin_and_hybrid_sources(tmp_path):
    from relevance.combined import HybridSimilarity
    from relevance.priority import build_similarity
    from relevance.topic import parse_topic

    base = 'name = "t"\n[words]\n"政治" = 1.0\n[similarity]\n'
    t = parse_topic(base + 'sources = ["cilin"]\n', path="t.toml")
    assert t.similarity.cilin_method == "ic" and t.similarity.step1 == "paper"
    sim = build_similarity(t)
    assert sim.dictionary.name == "cilin" and sim.similarity("人民", "群众") > 0.5
    t = parse_topic(
        base + 'sources = ["hownet", "cilin"]\ncilin_method = "path"\nhybrid_weight = 0.7\n'
        'step1 = "cut"\n',
        path="t.toml",
    )
    sim = build_similarity(t)
    assert isinstance(sim.dictionary, HybridSimilarity) and sim.dictionary.weight == 0.7
    assert sim.dictionary.cilin.method == "path" and sim.step1 == "cut"
    for bad, key in (('cilin_method = "x"', "cilin_method"), ('step1 = "x"', "step1")):
        with pytest.raises(TopicFileError, match=key):
            parse_topic(base + 'sources = ["cilin"]\n' + bad + "\n", path="t.toml")
    # Algorithm 2 as published: the paper's threshold unless the file sets one
    t = parse_topic('name = "t"\n[words]\n"政治" = 1.0\n[urls]\nmode = "paper"\n', path="t")
    assert t.urls.threshold == 0.1
