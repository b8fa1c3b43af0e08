"""crawler.sharedlearn: Algorithm 3's URL sample as one Redis reservoir, the learned models'
training examples shared through a Redis stream, and the learned state kept in JOBDIR."""

from __future__ import annotations

import json
import random
import threading
from collections import Counter
from types import SimpleNamespace

import pytest

from crawler.sharedlearn import (
    LEARNED_FILE,
    RedisURLReservoir,
    SharedLearningStream,
    SharedStructureSample,
    load_learned,
    reset_sample,
    save_learned,
)
from relevance.learning.linkmodel import OnlineLinkModel
from relevance.learning.selftrain import SelfTrainingPageModel
from relevance.urls import PerHostStructureSample, StructureSample


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def urls(host: str, k: int, start: int = 0) -> list[tuple[str, str]]:
    return [(host, f"http://{host}/news/{i}.html") for i in range(start, start + k)]


@pytest.mark.redis
def test_reservoir_is_bounded_per_host(redis_keys):
    client, prefix = redis_keys
    res = RedisURLReservoir(client, f"{prefix}:urlsample", n=20, max_hosts=2)
    res.add_many(urls("a.example", 500) + urls("b.example", 5) + urls("c.example", 3))
    samples, refused = res.snapshot()
    assert refused == 0
    assert len(samples["a.example"]) == 20 and len(samples["b.example"]) == 5
    assert "c.example" not in samples  # past max_hosts
    assert int(client.hget(f"{prefix}:urlsample:seen", "a.example")) == 500
    assert client.hlen(f"{prefix}:urlsample:sample") == 25


@pytest.mark.redis
def test_reservoir_keeps_every_url_about_equally_often(redis_keys):
    client, prefix = redis_keys
    kept: Counter = Counter()
    trials, k, n = 150, 100, 10
    for t in range(trials):
        res = RedisURLReservoir(client, f"{prefix}:u{t}", n=n, rng=random.Random(t))
        res.add_many(urls("h.example", k))
        kept.update(res.snapshot()[0]["h.example"])
    # each URL kept with probability n/k = 0.1: 15 expected per URL over 150 trials
    first = sum(kept[f"http://h.example/news/{i}.html"] for i in range(50))
    last = sum(kept[f"http://h.example/news/{i}.html"] for i in range(50, 100))
    assert first + last == trials * n
    assert abs(first - last) < 0.2 * trials * n  # 750 each expected; σ ≈ 27
    assert max(kept.values()) < 40


@pytest.mark.redis
def test_concurrent_workers_fill_one_reservoir(redis_keys, redis_url):
    import redis

    _, prefix = redis_keys

    def worker(w: int) -> None:
        res = RedisURLReservoir(redis.Redis.from_url(redis_url), f"{prefix}:urlsample", n=20)
        for i in range(0, 250, 25):  # 10 pipelines of 25 each, interleaved with the others
            res.add_many(urls("h.example", 25, start=w * 1000 + i))

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    client = redis.Redis.from_url(redis_url)
    assert int(client.hget(f"{prefix}:urlsample:seen", "h.example")) == 1000
    sample = RedisURLReservoir(client, f"{prefix}:urlsample", n=20).snapshot()[0]["h.example"]
    assert len(sample) == 20
    owners = {int(u.rsplit("/", 1)[1].split(".")[0]) // 1000 for u in sample}
    assert len(owners) >= 2  # URLs of several workers (all four: p ≈ 0.99)


def structure(n: int = 10) -> PerHostStructureSample:
    return PerHostStructureSample(n, seed=0, mode="path")


@pytest.mark.redis
def test_workers_score_with_the_shared_sample(redis_keys):
    client, prefix = redis_keys
    clock = Clock()
    a = SharedStructureSample(structure(), RedisURLReservoir(client, f"{prefix}:s", n=10),
                              refresh_adds=5, clock=clock)  # fmt: skip
    b = SharedStructureSample(structure(), RedisURLReservoir(client, f"{prefix}:s", n=10),
                              refresh_adds=5, clock=clock)  # fmt: skip
    probe = "http://h.example/news/999.html"
    assert b.struct(probe) == 0.0  # nothing accepted yet
    for _, url in urls("h.example", 10):
        a.add(url)  # worker a accepts; worker b accepts nothing
    assert a.struct(probe) == 1.0
    assert b.struct(probe) == 0.0  # b's copy is not due yet: no round trip per link
    clock.t += 2.5
    assert b.struct(probe) == 1.0 and b.has_structure(probe)
    assert b.local.samples == {}  # from the shared copy, not from b's own pages
    assert a.failures == b.failures == 0


@pytest.mark.redis
def test_malformed_shared_values_are_refused_and_counted(redis_keys):
    client, prefix = redis_keys
    key = f"{prefix}:s"
    res = RedisURLReservoir(client, key, n=10)
    res.add_many(urls("h.example", 3))
    client.hset(f"{key}:sample", mapping={
        "h.example\n99": "http://h.example/a.html",  # slot not below n
        "h.example\nx": "http://h.example/b.html",  # slot not a number
        "h.example\n7": "javascript:alert(1)",  # not http(s)
        "h.example\n8": b"\xff\xfe",  # not UTF-8
        "h.example\n9": "http://h.example/" + "x" * 5000,  # too long: never read
        "other.example\n6": "http://h.example/c.html",  # another host's URL
    })  # fmt: skip
    samples, refused = res.snapshot()
    assert refused == 6 and len(samples["h.example"]) == 3
    shared = SharedStructureSample(structure(), res, clock=Clock())
    shared.struct("http://h.example/news/1.html")
    assert shared.malformed == 6 and shared.failures == 0 and shared.view is not None

    client.set(f"{key}:version", "not a number")  # a hostile version: the local sample answers
    shared.refresh()
    assert shared.failures == 1 and shared.view is None
    client.set(f"{key}:version", 10**6)
    client.hset(f"{key}:sample", mapping={f"h.example\n{i}": "http://h.example/" for i in
                                          range(200)})  # fmt: skip
    small = SharedStructureSample(structure(), RedisURLReservoir(client, key, n=10,
                                  max_hosts=1), clock=Clock())  # fmt: skip
    small.refresh()  # 200+ fields for at most 1 host × 10: refused whole
    assert small.failures == 1 and small.view is None


def test_redis_errors_fall_back_to_the_local_sample():
    import redis

    client = redis.Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.2)
    clock = Clock()
    shared = SharedStructureSample(StructureSample(10, mode="path"),
                                   RedisURLReservoir(client, "x", n=10), clock=clock)  # fmt: skip
    for _, url in urls("h.example", 10):
        shared.add(url)
    clock.t += 3
    assert shared.struct("http://h.example/news/77.html") == 1.0  # the worker's own sample
    assert shared.failures >= 1 and len(shared.pending) == 10  # kept for when Redis answers


# -- the learned models ---------------------------------------------------------------------

POS = ["政治", "会议", "主席", "外交", "政府"]
NEG = ["足球", "比赛", "球员", "进球", "联赛"]


def pages(k: int, seed: int) -> list[tuple[list[str], float]]:
    rng = random.Random(seed)
    out = []
    for i in range(k):
        on = i % 2 == 0
        words = rng.choices(POS if on else NEG, k=20) + rng.choices(["今天", "记者"], k=5)
        out.append((words, 0.9 if on else 0.02))
    return out


@pytest.mark.redis
def test_workers_train_on_each_others_pages_and_outcomes(redis_keys):
    client, prefix = redis_keys
    clock = Clock()
    models = [(SelfTrainingPageModel(retrain_every=10), OnlineLinkModel()) for _ in range(2)]
    streams = [SharedLearningStream(client, f"{prefix}:learn", worker=f"w{i}", clock=clock)
               for i in range(2)]  # fmt: skip
    for i, (words, ev) in enumerate(pages(60, 1)):
        w = i % 2  # the workers fetch alternate pages
        page_model, link_model = models[w]
        page_model.observe(words, ev)
        streams[w].publish_page(words, ev, None)
        feats = [f"s:h.example/{'politics' if ev > 0.5 else 'sports'}"]
        link_model.observe(0.5, feats, 1.0 if ev > 0.5 else 0.0)
        streams[w].publish_link(0.5, feats, 1.0 if ev > 0.5 else 0.0)
    for s, (p, lm) in zip(streams, models, strict=True):
        s.sync(p, lm)
    for s, (p, lm) in zip(streams, models, strict=True):
        s.sync(p, lm)  # the first worker reads the second's pages now
    assert [p.seen for p, _ in models] == [60, 60]
    assert streams[0].applied == streams[1].applied == 60  # 30 pages + 30 outcomes each
    (p0, l0), (p1, l1) = models
    assert p0.ready and p1.ready
    doc = [["政治", "会议", "外交"]]
    assert abs(p0.probability_words(doc)[0] - p1.probability_words(doc)[0]) < 0.1
    assert l0.weights.keys() == l1.weights.keys()
    assert l0.weights["s:h.example/politics"] > 0 > l0.weights["s:h.example/sports"]


@pytest.mark.redis
def test_malformed_stream_entries_are_refused_and_counted(redis_keys):
    client, prefix = redis_keys
    key = f"{prefix}:learn"
    bad = [
        {"w": "x", "k": "p", "d": "not json"},
        {"w": "x", "k": "p", "d": json.dumps({"c": {"词": -1}, "e": 0.9, "y": None})},
        {"w": "x", "k": "p", "d": json.dumps({"c": {"词": 1}, "e": 7, "y": None})},
        {"w": "x", "k": "l", "d": json.dumps({"p": 0.5, "f": [1, 2], "y": 1.0})},
        {"w": "x", "k": "l", "d": json.dumps({"p": 0.5, "f": ["a"] * 1000, "y": 1.0})},
        {"w": "x", "k": "?", "d": "{}"},
        {"w": "x", "k": "p", "d": "[" * 100_000},
        {"w": "x", "k": "p", "d": "\x80" * 10},
        {"w": "x", "k": "p", "d": json.dumps({"c": {"词": 1}, "e": 0.9, "y": None, "s": 7})},
        {"w": "x", "k": "p", "d": json.dumps({"c": {"词": 1}, "e": 0.9, "y": None,
                                               "s": "h/" * 600})},
        # a host that is not one, too long, or not the host of the page's section
        {"w": "x", "k": "p", "d": json.dumps({"c": {"词": 1}, "e": 0.9, "y": None,
                                               "h": "a.cn/x", "r": 0.5})},
        {"w": "x", "k": "p", "d": json.dumps({"c": {"词": 1}, "e": 0.9, "y": None,
                                               "h": "a" * 300, "r": 0.5})},
        {"w": "x", "k": "p", "d": json.dumps({"c": {"词": 1}, "e": 0.9, "y": None,
                                               "h": "a.cn", "s": "b.cn/x", "r": 0.5})},
        {"w": "x", "k": "p", "d": json.dumps({"c": {"词": 1}, "e": 0.9, "y": None,
                                               "h": "a.cn", "r": 2})},
    ]
    for entry in bad:
        client.xadd(key, entry)
    client.xadd(key, {"w": "x", "k": "l", "d": json.dumps({"p": 0.5, "f": ["a:政治"], "y": 1.0})})
    page_model, link_model = SelfTrainingPageModel(), OnlineLinkModel()
    stream = SharedLearningStream(client, key, worker="me", clock=Clock())
    assert stream.sync(page_model, link_model) == 1
    assert stream.malformed == len(bad) and stream.failures == 0
    assert page_model.seen == 0 and list(link_model.weights) == ["a:政治"]


# -- JOBDIR ---------------------------------------------------------------------------------


def trained_scorer() -> SimpleNamespace:
    page_model, link_model = SelfTrainingPageModel(retrain_every=10), OnlineLinkModel()
    for words, ev in pages(40, 2):
        page_model.observe(words, ev)
        link_model.observe(0.5, [f"a:{words[0]}"], ev)
    sample = structure()
    for _, url in urls("h.example", 30) + urls("g.example", 4):
        sample.add(url)
    return SimpleNamespace(page_model=page_model, link_model=link_model, structure=sample)


def fresh_scorer() -> SimpleNamespace:
    return SimpleNamespace(page_model=SelfTrainingPageModel(retrain_every=10),
                           link_model=OnlineLinkModel(), structure=structure())  # fmt: skip


def test_learned_state_round_trips_through_jobdir(tmp_path):
    before = trained_scorer()
    assert before.page_model.ready
    save_learned(tmp_path, before)
    after = fresh_scorer()
    restored = load_learned(tmp_path, after)
    assert restored == {"page_model": 1, "link_model": 1, "url_sample": 14}
    doc = [["政治", "会议", "今天"]]
    assert after.page_model.probability_words(doc) == pytest.approx(
        before.page_model.probability_words(doc), abs=1e-4)  # fmt: skip
    assert after.page_model.pages == before.page_model.pages
    assert after.page_model.seen == 40
    assert after.link_model.weights == pytest.approx(before.link_model.weights, abs=1e-4)
    for h in ("h.example", "g.example"):
        assert after.structure.samples[h].sample == before.structure.samples[h].sample
        assert after.structure.samples[h].seen == before.structure.samples[h].seen
    assert after.structure.struct("http://h.example/news/5.html") == 1.0
    # the resumed model keeps learning: the next page counts after the restored ones
    after.page_model.observe(["政治"] * 5, 0.9)
    assert after.page_model.seen == 41


def test_a_shared_sample_saves_its_local_sample(tmp_path):
    shared = SharedStructureSample(structure(), reservoir=None, clock=Clock())
    shared.local.add("http://h.example/news/1.html")
    save_learned(tmp_path, SimpleNamespace(structure=shared))
    again = SharedStructureSample(structure(), reservoir=None, clock=Clock())
    assert load_learned(tmp_path, SimpleNamespace(structure=again)) == {"url_sample": 1}
    assert again.local.samples["h.example"].sample == ["http://h.example/news/1.html"]
    reset_sample(again)  # a run with a store replays its complete history instead
    assert again.local.samples == {}


@pytest.mark.parametrize("corrupt", [
    lambda s: "not json",
    lambda s: json.dumps({**s, "v": 2}),
    lambda s: json.dumps({**s, "page_model": {**s["page_model"], "intercept": "NaN"}}),
    lambda s: json.dumps({**s, "page_model": {**s["page_model"], "pages": [[{"词": -3}, 1]]}}),
    lambda s: json.dumps({**s, "link_model": {**s["link_model"], "weights": {"a": "inf"}}}),
    lambda s: json.dumps({**s, "url_sample": {"hosts": {"h": {"seen": 1, "sample": ["ftp://x"]}}}}),
    lambda s: json.dumps({**s, "url_sample": {"hosts": {"h": {"seen": 0, "sample": ["http://h/"]}}}}),
])  # fmt: skip
def test_a_malformed_jobdir_state_is_refused_whole(tmp_path, corrupt):
    save_learned(tmp_path, trained_scorer())
    path = tmp_path / LEARNED_FILE
    path.write_text(corrupt(json.loads(path.read_text(encoding="utf-8"))), encoding="utf-8")
    after = fresh_scorer()
    assert load_learned(tmp_path, after) == {}
    assert not after.page_model.ready and not after.link_model.weights
    assert after.structure.samples == {}


def test_a_resumed_jobdir_crawl_starts_from_its_learned_state(proxy, small_web, tmp_path):
    """A calibrated crawl saves its learned models in JOBDIR at close; the resumed crawl
    loads them (it does not learn anew from nothing)."""
    from conftest import run_crawl

    truth = json.loads((small_web / "ground_truth.json").read_text(encoding="utf-8"))
    topic = tmp_path / "t.toml"
    topic.write_text('name = "t"\n[words]\n"政治" = 1.0\n"会议" = 1.0\n"主席" = 1.0\n'
                     '"外交" = 1.0\n"政府" = 1.0\n', encoding="utf-8")  # fmt: skip
    db = f"sqlite:///{tmp_path / 'c.db'}"
    settings = {"JOBDIR": str(tmp_path / "job")}
    first = run_crawl(proxy, truth["seeds"]["portal"], topic, db, args={"max_pages": 30},
                      settings=settings)  # fmt: skip
    assert first.returncode == 0, first.stderr[-2000:]
    state = json.loads((tmp_path / "job" / LEARNED_FILE).read_text(encoding="utf-8"))
    assert state["page_model"]["seen"] >= 30 and len(state["page_model"]["pages"]) >= 30
    assert state["link_model"]["observed"] > 0
    second = run_crawl(proxy, truth["seeds"]["portal"], topic, db, args={"max_pages": 45},
                       settings=settings)  # fmt: skip
    assert second.returncode == 0, second.stderr[-2000:]
    assert "learned state restored from JOBDIR: {'page_model': 1, 'link_model': 1}" in (
        second.stderr
    )
    again = json.loads((tmp_path / "job" / LEARNED_FILE).read_text(encoding="utf-8"))
    assert again["page_model"]["seen"] > state["page_model"]["seen"]


@pytest.mark.redis
def test_the_spider_shares_its_sample_and_models_in_a_scale_out(redis_keys):
    from scrapy.settings import Settings

    from crawler.spiders.topic import TopicSpider

    client, prefix = redis_keys
    scorer = SimpleNamespace(structure=structure(), shared=None,
                             page_model=SelfTrainingPageModel(), link_model=None)  # fmt: skip
    spider = SimpleNamespace(scorer=scorer, name="topic")
    settings = Settings({"TOPICRAWL_REDIS_PREFIX": prefix})
    TopicSpider.share_learning(spider, client, settings)
    assert isinstance(scorer.structure, SharedStructureSample)
    assert scorer.structure.reservoir.keys[1] == f"{prefix}:topic:urlsample:sample"
    assert scorer.shared.key == f"{prefix}:topic:learn"
    TopicSpider.share_learning(spider, client, settings)  # idempotent: not wrapped twice
    assert isinstance(scorer.structure.local, PerHostStructureSample)
    alone = SimpleNamespace(scorer=SimpleNamespace(structure=structure()), name="topic")
    TopicSpider.share_learning(alone, None, settings)  # no scale-out: nothing shared
    assert isinstance(alone.scorer.structure, PerHostStructureSample)
    scorer.structure.add("http://h.example/news/1.html")  # queued: 1 < 20 accepted URLs
    TopicSpider.flush_shared(spider)  # at close: sent
    assert client.hlen(f"{prefix}:topic:urlsample:sample") == 1
    scorer.structure.failures = 2
    assert TopicSpider.shared_learning_stats(spider) == {"topicrawl/urlsample/unshared": 2,
                                                         "topicrawl/urlsample/shared_reads": 1}


@pytest.mark.redis
def test_a_resumed_worker_does_not_apply_the_stream_twice(redis_keys, tmp_path):
    client, prefix = redis_keys
    key = f"{prefix}:learn"
    other = SharedLearningStream(client, key, worker="other", clock=Clock())
    for words, ev in pages(6, 3):
        other.publish_page(words, ev, None)
    other.sync()
    me = SharedLearningStream(client, key, worker="me", clock=Clock())
    scorer = SimpleNamespace(page_model=SelfTrainingPageModel(), link_model=None, shared=me)
    me.sync(scorer.page_model)
    assert scorer.page_model.seen == 6
    save_learned(tmp_path, scorer)
    again = SimpleNamespace(page_model=SelfTrainingPageModel(), link_model=None,
                            shared=SharedLearningStream(client, key, clock=Clock()))  # fmt: skip
    assert load_learned(tmp_path, again) == {"page_model": 1, "stream": 1}
    assert again.shared.worker == "me" and again.shared.last_id == me.last_id
    again.shared.sync(again.page_model)
    assert again.page_model.seen == 6  # the 6 pages restored, none applied twice


def test_link_gate_counts_round_trip_through_jobdir(tmp_path):
    before = SimpleNamespace(link_model=OnlineLinkModel(gate=2.0))
    for i in range(40):
        before.link_model.observe(0.5, ["h:a.cn", f"s:a.cn/{'x' if i % 4 else 'y'}"],
                                  float(i % 4 == 0))  # fmt: skip
    save_learned(tmp_path, before)
    after = SimpleNamespace(link_model=OnlineLinkModel(gate=2.0))
    assert load_learned(tmp_path, after) == {"link_model": 1}
    assert after.link_model.label_sum == pytest.approx(10.0)
    for f in ("h:a.cn", "s:a.cn/x", "s:a.cn/y"):
        assert after.link_model.value(f) == pytest.approx(before.link_model.value(f), abs=1e-3)
    assert after.link_model.value("s:a.cn/y") > 0.5 and after.link_model.value("h:a.cn") == 0


@pytest.mark.redis
def test_a_shared_page_keeps_its_section_for_the_other_workers_vetoes(redis_keys):
    """[learning] section_negatives in a scale-out: a page another worker fetched carries its
    section key, so this worker's page model makes it a negative when that section is one of
    its contrast sections, like its own pages."""
    client, prefix = redis_keys
    key = f"{prefix}:learn"
    other = SharedLearningStream(client, key, worker="other", clock=Clock())
    other.publish_page(["房价", "楼市"], 0.9, None, "h.example/house")
    other.publish_page(["比赛", "球队"], 0.9, None)
    other.sync()
    page_model = SelfTrainingPageModel()
    SharedLearningStream(client, key, worker="me", clock=Clock()).sync(page_model)
    assert [(y, s) for _, y, s in page_model.pages] == [(1, "h.example/house"), (1, None)]


@pytest.mark.redis
def test_a_shared_page_joins_every_worker_s_learned_contrast(redis_keys):
    """A scale-out's learned contrast sees every worker's pages (with N workers each saw 1/N
    of them, so a sibling section reached the contrast's minimum of pages N times later): a
    page another worker fetched comes with its host, section key and literal evidence
    against the topic alone, and this worker's contrast finds the section from them."""
    from relevance.learning.contrast import LearnedContrast

    client, prefix = redis_keys
    key = f"{prefix}:learn"
    other = SharedLearningStream(client, key, worker="other", clock=Clock())
    for i in range(6):
        other.publish_page(["比赛", "球队", f"s{i}"], 0.9, None, "h.example/sports",
                           "h.example", 0.8)  # fmt: skip
        other.publish_page(["房价", "楼市", f"h{i}"], 0.3, None, "h.example/house",
                           "h.example", 0.05)  # fmt: skip
    other.publish_page(["旧"], 0.5, None)  # from a worker that sends no host: page model only
    other.sync()
    page_model, contrast = SelfTrainingPageModel(), LearnedContrast(["体育"])
    me = SharedLearningStream(client, key, worker="me", clock=Clock())
    assert me.sync(page_model, None, contrast) == 13
    assert page_model.seen == 13 and contrast.seen == 12
    contrast.rebuild()
    assert set(contrast.sections) == {"h.example/sports", "h.example/house"}
    assert list(contrast.topics) == ["h.example/house"]
