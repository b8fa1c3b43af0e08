"""The start-up cache (topicrawl.modelcache): a topic's trained models are read back from
disk when nothing changed, retrained once when the topic or its data changed, and a cache
entry that is not ours is never trusted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from relevance.classifier import TopicClassifier, train_cached
from relevance.weights import CandidateExtractor
from topicrawl import modelcache

POS = ["政府 召开 会议 部署 改革", "总理 会见 外交 代表", "人大 代表 审议 法律", "国务院 政策 出台"]
NEG = ["球队 赢得 比赛 冠军", "电影 票房 明星 首映", "股市 上涨 基金 收益", "手机 发布 芯片 性能"]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.delenv("TOPICRAWL_NO_CACHE", raising=False)
    modelcache.set_cache_dir(tmp_path / "cache")
    for k in modelcache.STATS:
        modelcache.STATS[k] = 0
    yield tmp_path / "cache"
    modelcache.set_cache_dir(None)


def _examples(path, extra: str = "") -> None:
    lines = [f"时政\t{t}" for t in POS] + [f"其他\t{t}" for t in NEG]
    path.write_text("\n".join(lines) + extra + "\n", encoding="utf-8")


def _calibrated_topic(tmp_path) -> Path:
    """A calibrated-mode topic with a [classifier] over the example file beside it."""
    _examples(tmp_path / "ex.txt")
    topic_file = tmp_path / "t.toml"
    topic_file.write_text(
        'name = "t"\n[words]\n"政府" = 1.0\n[priority]\nmode = "calibrated"\n'
        '[classifier]\nexamples = "ex.txt"\npositive = ["时政"]\n',
        encoding="utf-8",
    )
    return topic_file


def _train_counter(monkeypatch) -> list[int]:
    calls = []
    real = TopicClassifier.train.__func__

    def counting(cls, *args, **kwargs):
        calls.append(1)
        return real(cls, *args, **kwargs)

    monkeypatch.setattr(TopicClassifier, "train", classmethod(counting))
    return calls


def test_classifier_is_trained_once_and_read_back_with_the_same_probabilities(
    cache, tmp_path, monkeypatch
):
    examples = tmp_path / "ex.txt"
    _examples(examples)
    extract = CandidateExtractor(topic_words=["政府"])
    calls = _train_counter(monkeypatch)
    first = train_cached(examples, extract, positive=["时政"], c=10.0)
    second = train_cached(examples, extract, positive=["时政"], c=10.0)
    assert len(calls) == 1 and modelcache.STATS["hit"] == 1
    assert second.vectorizer is None  # read from the JSON table, no scikit-learn model
    docs = [extract(t) for t in ("国务院 召开 会议", "球队 比赛", "总理 电影", "无关 文字")]
    assert second.probability_words(docs) == first.probability_words(docs)
    assert first.probability_words(docs)[:3] == pytest.approx(first.probability_sklearn(docs)[:3])
    assert (second.examples, second.positives, second.vocabulary_size) == (
        first.examples, first.positives, first.vocabulary_size)  # fmt: skip
    with pytest.raises(ValueError, match="start-up cache"):
        second.probability_sklearn(docs)


def test_a_changed_example_file_or_setting_retrains_once(cache, tmp_path, monkeypatch):
    examples = tmp_path / "ex.txt"
    _examples(examples)
    extract = CandidateExtractor()
    calls = _train_counter(monkeypatch)
    train_cached(examples, extract, positive=["时政"])
    _examples(examples, extra="\n时政\t选举 议会 总统")  # the data changed
    changed = train_cached(examples, extract, positive=["时政"])
    assert len(calls) == 2 and changed.examples == 9
    train_cached(examples, extract, positive=["时政"])  # unchanged since: read back
    assert len(calls) == 2
    train_cached(examples, extract, positive=["时政"], c=1.0)  # another setting
    assert len(calls) == 3
    train_cached(examples, CandidateExtractor(min_length=3), positive=["时政"])  # tokenizer
    assert len(calls) == 4
    assert len(list(cache.glob("classifier-*.json"))) == 4


def test_an_entry_that_is_not_ours_is_rebuilt_never_trusted(cache, tmp_path, monkeypatch):
    examples = tmp_path / "ex.txt"
    _examples(examples)
    extract = CandidateExtractor()
    good = train_cached(examples, extract, positive=["时政"])
    (entry,) = cache.glob("classifier-*.json")
    calls = _train_counter(monkeypatch)
    for garbage in (b"\x80\x04\x95 pickle bytes", b'{"kind": "classifier"}', b"[1, 2]",
                    json.dumps({"kind": "classifier", "key": entry.stem.split("-", 1)[1],
                                "value": {"terms": 5}}).encode()):  # fmt: skip
        entry.write_bytes(garbage)
        again = train_cached(examples, extract, positive=["时政"])
        docs = [extract("政府 会议")]
        assert again.probability_words(docs) == good.probability_words(docs)
    assert len(calls) == 4 and modelcache.STATS["bad"] == 4
    json.loads(entry.read_text(encoding="utf-8"))  # rewritten as a valid entry


def test_cache_off_trains_every_time(cache, tmp_path, monkeypatch):
    examples = tmp_path / "ex.txt"
    _examples(examples)
    monkeypatch.setenv("TOPICRAWL_NO_CACHE", "1")
    calls = _train_counter(monkeypatch)
    for _ in range(2):
        train_cached(examples, CandidateExtractor(), positive=["时政"])
    assert len(calls) == 2 and not cache.exists()


def test_cache_directory_precedence(tmp_path, monkeypatch):
    modelcache.set_cache_dir(None)
    monkeypatch.delenv("TOPICRAWL_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert modelcache.cache_dir() == tmp_path / "xdg" / "topicrawl"
    monkeypatch.setenv("TOPICRAWL_CACHE", str(tmp_path / "env"))
    assert modelcache.cache_dir() == tmp_path / "env"
    modelcache.set_cache_dir(tmp_path / "setting")  # the crawl's TOPICRAWL_CACHE_DIR
    try:
        assert modelcache.cache_dir() == tmp_path / "setting"
    finally:
        modelcache.set_cache_dir(None)


def test_jieba_tag_table_from_the_cache_is_jiebas(cache):
    import jieba.posseg

    import relevance.weights as weights

    weights._WORD_TAGS = weights._TAG_GROUPS = None
    built = weights.jieba_word_tags()  # cold: parsed by jieba, written
    weights._WORD_TAGS = weights._TAG_GROUPS = None
    read = weights.jieba_word_tags()  # warm: read back
    assert modelcache.STATS["miss"] == 1 and modelcache.STATS["hit"] == 1
    assert read == built == jieba.posseg.dt.word_tag_tab


def test_calibrated_scorer_seeds_from_cached_segmented_examples(cache, tmp_path, monkeypatch):
    from relevance.calibrated import CalibratedLinkScorer
    from relevance.topic import load_topic

    topic_file = _calibrated_topic(tmp_path)
    topic = load_topic(topic_file)
    cold = CalibratedLinkScorer.from_topic(topic).page_model
    assert modelcache.STATS["miss"] >= 1
    segmented = []
    monkeypatch.setattr(CandidateExtractor, "__call__",
                        lambda self, text: segmented.append(text) or [])  # fmt: skip
    warm = CalibratedLinkScorer.from_topic(topic).page_model
    assert not segmented  # the examples were not segmented again
    assert [(sorted(c.items()), y, w) for c, y, w in warm.fixed] == [
        (sorted(c.items()), y, w) for c, y, w in cold.fixed
    ]
    assert len(warm.fixed) == 8


def test_extractor_on_the_excluded_words_keeps_the_same_words_as_on_the_tag_table():
    """The default POS set admits unknown words, so an extractor needs only the 38,000
    dictionary words of other tags (not the 349,000-word tag table): the same words."""
    from topicrawl.data import data_path

    lines = data_path("corpus", "cnews_train.txt").read_text(encoding="utf-8").splitlines()
    terms = ["政府", "全面从严治党", "时政"]
    compact = CandidateExtractor(topic_words=terms)
    table = CandidateExtractor(topic_words=terms, unknown_pos="x")  # the tag-table path
    table.unknown_pos = "nz"
    assert compact._excluded is not None and table._excluded is None
    for line in lines[:40]:
        text = line.split("\t", 1)[1]
        assert compact(text) == table(text)


def test_topic_validate_warms_the_cache_for_the_crawl(cache, tmp_path, monkeypatch, capsys):
    """`topicrawl topic validate` trains once; building the crawl's scorer then trains
    nothing."""
    from relevance.priority import build_scorer
    from relevance.topic import load_topic
    from topicrawl.cli import main

    topic_file = _calibrated_topic(tmp_path)
    monkeypatch.setenv("TOPICRAWL_CACHE", str(cache))
    modelcache.set_cache_dir(None)  # the environment variable, as a user's shell sets it
    calls = _train_counter(monkeypatch)
    assert main(["topic", "validate", str(topic_file), "--no-load"]) == 0  # no sources
    assert not calls
    assert main(["topic", "validate", str(topic_file)]) == 0
    assert len(calls) == 1 and "start-up cache warm" in capsys.readouterr().out
    segmented = []
    monkeypatch.setattr(CandidateExtractor, "__call__",
                        lambda self, text: segmented.append(text) or [])  # fmt: skip
    build_scorer(load_topic(topic_file))
    assert len(calls) == 1 and not segmented


def _dictionary_topic(tmp_path, hownet_dir: str = "") -> Path:
    topic_file = tmp_path / "d.toml"
    source = f'hownet = "{hownet_dir}"\n' if hownet_dir else ""
    topic_file.write_text(
        'name = "d"\n[words]\n"政府" = 1.0\n"总理" = 0.8\n"改革" = 0.6\n'
        f'[similarity]\nsources = ["hownet"]\nth2 = 0.8\n{source}',
        encoding="utf-8",
    )
    return topic_file


TEXTS = ["国务院总理主持召开常务会议，部署深化改革", "球队昨晚赢得了比赛", "政府官员会见代表团",
         "", "经济增长放缓，部长表示将出台政策"]  # fmt: skip


def test_dictionary_topic_reads_its_affinities_without_loading_the_dictionary(
    cache, tmp_path, monkeypatch
):
    """Issue 16 (start-up): a HowNet topic's word affinities are computed once over the whole
    glossary and read back from the cache; the scores are those of the dictionary itself,
    and the dictionary is loaded only when something asks for it."""
    from relevance import priority
    from relevance.page import TopicRelevance
    from relevance.topic import load_topic

    topic = load_topic(_dictionary_topic(tmp_path))
    first = priority.build_relevance(topic)
    assert first.table is not None and modelcache.STATS["miss"] == 1
    sim = first.sim  # loaded to build the table
    reference = TopicRelevance(topic.weights, sim, first.extract)
    loads = []
    real = priority.build_similarity
    monkeypatch.setattr(priority, "build_similarity", lambda t: loads.append(1) or real(t))
    second = priority.build_relevance(topic)
    assert modelcache.STATS["hit"] >= 1 and not loads
    assert second.relevance_many(TEXTS) == reference.relevance_many(TEXTS)
    assert any(x > 0 for x in reference.relevance_many(TEXTS))
    # every word of the glossary, not only those of the texts above
    some = [w for w in list(sim.dictionary.words)[::997]] + ["不在词典里的词", "政府"]
    assert second.affinities(some) == reference.affinities(some)
    assert not loads
    assert second.sim is not None and loads == [1]  # on demand


def test_a_changed_dictionary_file_rebuilds_the_table(cache, tmp_path):
    import shutil

    from relevance.priority import build_relevance
    from relevance.topic import load_topic
    from topicrawl.data import data_dir

    own = tmp_path / "hownet"
    own.mkdir()
    for name in ("glossary.dat", "WHOLE.DAT"):
        shutil.copy(data_dir() / "hownet" / name, own / name)
    topic = load_topic(_dictionary_topic(tmp_path, str(own)))
    build_relevance(topic)
    build_relevance(topic)
    assert modelcache.STATS["miss"] == 1
    with (own / "glossary.dat").open("ab") as fh:  # a new word similar to 政府
        fh.write("新政府词\tN\tinstitution|机构,politics|政\r\n".encode("gbk"))
    rebuilt = build_relevance(load_topic(_dictionary_topic(tmp_path, str(own))))
    assert modelcache.STATS["miss"] == 2
    assert "新政府词" in rebuilt.sim.dictionary.words


def test_topics_with_word_vectors_have_no_table(tmp_path):
    from relevance.affinity import dictionary_files
    from relevance.topic import load_topic

    topic_file = tmp_path / "v.toml"
    topic_file.write_text('name = "v"\n[words]\n"政府" = 1.0\n[similarity]\n'
                          'sources = ["hownet", "word2vec"]\nvectors = "v.kv"\n',
                          encoding="utf-8")  # fmt: skip
    assert dictionary_files(load_topic(topic_file)) is None
    assert dictionary_files(load_topic(_dictionary_topic(tmp_path))) is not None
