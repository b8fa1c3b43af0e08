"""The index-storage contract, run against every backend (memory, SQLite, the real Redis),
and a race of real processes adding near duplicates at the same moment."""

from __future__ import annotations

import multiprocessing as mp
import os
import time
import uuid

import pytest

from dedup.base import Doc
from dedup.exact import ExactDetector
from dedup.spotsigs import SpotSigsDetector
from dedup.storage import (
    MemoryStorage,
    RedisStorage,
    SQLiteStorage,
    make_storage,
)
from topicrawl.errors import ConfigError

REDIS_URL = os.environ.get("TOPICRAWL_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


def _redis_or_skip() -> None:
    import redis

    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1).ping()
    except redis.RedisError as exc:
        msg = f"Redis not reachable at {REDIS_URL}: {exc}"
        if os.environ.get("CI") == "true":
            pytest.fail(msg)
        pytest.skip(msg)


def _config(kind: str, tmp_path, namespace: str | None = None) -> dict:
    ns = namespace or f"test-{uuid.uuid4().hex[:12]}"
    if kind == "sqlite":
        return {"type": "sqlite", "path": str(tmp_path / "idx.sqlite"), "namespace": ns}
    if kind == "redis":
        return {"type": "redis", "url": REDIS_URL, "namespace": ns}
    return {"type": "memory", "namespace": ns}


@pytest.fixture(params=["memory", "sqlite", "redis"])
def backend(request, tmp_path):
    """A config factory for one backend; every storage it makes is cleared afterwards."""
    kind = request.param
    if kind == "redis":
        _redis_or_skip()
    made = []

    def make(namespace: str | None = None):
        s = make_storage(_config(kind, tmp_path, namespace))
        made.append(s)
        return s

    make.kind = kind
    yield make
    for s in made:
        try:
            s.clear()
        finally:
            s.close()


def test_factory_types_and_errors(tmp_path):
    assert isinstance(make_storage(None), MemoryStorage)
    assert isinstance(
        make_storage({"type": "sqlite", "path": str(tmp_path / "a.db")}), SQLiteStorage
    )
    with pytest.raises(ConfigError, match="unknown dedup storage type"):
        make_storage({"type": "mongo"})
    with pytest.raises(ConfigError):
        make_storage({"type": "memory", "namespace": ""})
    with pytest.raises(ConfigError):
        make_storage({"type": "sqlite", "path": str(tmp_path / "b.db"), "bogus": 1})


def test_values_counters_json(backend):
    s = backend()
    assert s.get("k") is None and not s.exists("k")
    s.set("k", "värde")
    assert s.get("k") == "värde".encode() and s.exists("k")
    s.set("k", b"\x00\xff")
    assert s.get("k") == b"\x00\xff"
    s.set_json("j", {"a": [1, "二"]})
    assert s.get_json("j") == {"a": [1, "二"]} and s.get_json("nope", 5) == 5
    assert s.incr("c") == 1 and s.incr("c", 41) == 42
    s.delete("k", "j", "missing")
    assert s.get("k") is None and s.get("j") is None


def test_sets_hashes_lists(backend):
    s = backend()
    s.sadd("s", "a", "b", "b", "中")
    assert s.smembers("s") == {"a", "b", "中"} and s.scard("s") == 3
    assert s.sismember("s", "中") and not s.sismember("s", "z")
    s.sadd("t", "b", "c")
    s.sadd("single", "a")
    many = s.smembers_many(["s", "none", "t", "single"])
    assert many == [{"a", "b", "中"}, set(), {"b", "c"}, {"a"}]
    many[3].add("new")  # the sets handed back are copies
    assert s.smembers("single") == {"a"}
    s.delete("single")
    assert s.smembers_count(["s", "t", "none"]) == {"a": 1, "b": 2, "中": 1, "c": 1}
    assert s.smembers_count(["s", "t", "none"], max_len=2) == {"b": 1, "c": 1}  # "s" too long
    assert s.smembers_count(["s", "t"], max_len=3) == s.smembers_count(["s", "t"])
    s.sadd_many(["u", "v", "t"], "d")
    assert s.smembers("u") == s.smembers("v") == {"d"} and s.smembers("t") == {"b", "c", "d"}
    s.srem_many(["u", "t", "none"], "d")
    assert not s.exists("u") and s.smembers("v") == {"d"} and s.smembers("t") == {"b", "c"}
    s.delete("t", "v")
    s.srem("s", "a", "zz")
    assert s.smembers("s") == {"b", "中"}
    s.srem("s", "b", "中")
    assert s.smembers("s") == set() and not s.exists("s")

    # a set of one member (the memory backend keeps it as the member): growing, shrinking
    s.sadd("one", "x")
    s.sadd_many(["one"], "x")
    assert s.smembers("one") == {"x"} and s.scard("one") == 1 and s.sismember("one", "x")
    assert not s.sismember("one", "xy") and s.smembers_count(["one", "one2"], max_len=1) == {"x": 1}
    s.sadd("one", "y")
    s.srem("one", "x")
    assert s.smembers("one") == {"y"} and s.keys("one") == ["one"]
    s.srem("one", "x")
    s.srem("one", "y")
    assert not s.exists("one") and s.scard("one") == 0 and s.smembers_count(["one"]) == {}

    s.hset("h", "f1", "1")
    s.hset_many("h", {"f2": b"2", "f3": 3})
    assert s.hget("h", "f1") == b"1" and s.hget("h", "zz") is None
    assert s.hmget("h", ["f3", "zz", "f2"]) == [b"3", None, b"2"]
    assert s.hgetall("h") == {"f1": b"1", "f2": b"2", "f3": b"3"} and s.hlen("h") == 3
    s.hdel("h", "f1", "zz")
    assert s.hgetall("h") == {"f2": b"2", "f3": b"3"}

    s.rpush("l", "a", "b")
    s.rpush("l", "c")
    assert s.llen("l") == 3
    assert s.lrange("l") == [b"a", b"b", b"c"]
    assert s.lrange("l", 1) == [b"b", b"c"] and s.lrange("l", 3) == []
    assert s.lrange("l", 0, 1) == [b"a", b"b"] and s.lrange("l", -2, -1) == [b"b", b"c"]
    s.delete("l")
    assert s.llen("l") == 0 and s.lrange("l") == []
    s.rpush("l", "again")
    assert s.lrange("l") == [b"again"]


def test_batch_and_lock_see_their_own_writes(backend):
    s = backend()
    with s.batch():
        s.set("a", "1")
        s.rpush("log", "x")
        assert s.get("a") == b"1" and s.lrange("log") == [b"x"]
        with s.lock("n"):  # nests, and is re-entrant
            with s.lock("n"):
                s.sadd("set", "m")
            assert s.smembers("set") == {"m"}
    assert s.get("a") == b"1" and s.llen("log") == 1 and s.smembers("set") == {"m"}


def test_keys_and_clear_are_namespaced(backend):
    a, b = backend(), backend()
    a.set("x:1", "a")
    a.sadd("x:s", "1")
    a.rpush("y", "1")
    b.set("x:1", "b")
    assert a.get("x:1") == b"a" and b.get("x:1") == b"b"
    assert a.keys() == ["x:1", "x:s", "y"] and a.keys("x:") == ["x:1", "x:s"]
    assert b.keys() == ["x:1"]
    a.clear()
    assert a.keys() == [] and b.get("x:1") == b"b"


def test_persistent_backends_reattach_by_namespace(backend):
    if backend.kind == "memory":
        pytest.skip("the memory backend lives in one storage object")
    ns = f"test-{uuid.uuid4().hex[:12]}"
    first = backend(ns)
    first.hset("h", "f", "v")
    again = backend(ns)
    assert again.hget("h", "f") == b"v"


def test_detectors_share_an_index_through_the_storage_and_delete(backend):
    if backend.kind == "memory":
        s1 = s2 = backend()
    else:
        ns = f"test-{uuid.uuid4().hex[:12]}"
        s1, s2 = backend(ns), backend(ns)
    text = (
        "The committee said the plan is a step forward. There was a debate in the city "
        "about the budget, and the mayor is expected to sign the bill after the vote."
    )
    d1, d2 = SpotSigsDetector(s1), SpotSigsDetector(s2)
    assert d1.check_and_add("u1", Doc(text, lang="en")) is None
    m = d2.check_and_add("u2", Doc(text + " Reporting by staff.", lang="en"))
    assert m is not None and m.doc_id == "u1"
    d2.remove("u1")
    assert d1.query(Doc(text, lang="en")) == []  # d1 replays the deletion from the log
    assert len(d1) == 0

    e1, e2 = ExactDetector(s1), ExactDetector(s2)
    assert e1.check_and_add("p", Doc("同一段\n文字")) is None
    assert e2.check_and_add("q", Doc("同一段 文字 ")).doc_id == "p"
    e2.remove("p")
    assert e1.query(Doc("同一段文字")) == []


def test_spotsigs_refuses_an_index_built_with_other_options(backend):
    if backend.kind == "memory":
        pytest.skip("needs two storage objects on one index")
    ns = f"test-{uuid.uuid4().hex[:12]}"
    SpotSigsDetector(backend(ns), tau=0.5).add("a", Doc("the cat is on the mat", lang="en"))
    with pytest.raises(ConfigError, match="built with"):
        SpotSigsDetector(backend(ns), tau=0.7).query(Doc("the dog", lang="en"))


# -- a race of real processes --------------------------------------------------------------

RACE_TEXT = (
    "The council is meeting on Monday to discuss the new transport plan for the region. "
    "There were protests at the station last week, and the minister is under pressure. "
    "A spokesman said the proposal was a compromise and the final vote is due in March."
)


class _SlowSpotSigs(SpotSigsDetector):
    """Widens the window between the check and the add, so a missing lock would show."""

    def _add_locked(self, doc_id, sigs):
        time.sleep(0.05)
        super()._add_locked(doc_id, sigs)


def _assert_one_kept(got, config) -> None:
    """Of the racing workers' ``(i, duplicate of)``, exactly one kept its page and every
    other is its duplicate, and the index holds one SpotSigs document; then it is cleared."""
    kept = [i for i, dup in got if dup is None]
    assert len(kept) == 1, got
    assert all(dup == f"doc{kept[0]}" for _, dup in got if dup is not None)
    storage = make_storage(config)
    try:
        assert len(SpotSigsDetector(storage)) == 1
    finally:
        storage.clear()
        storage.close()


def _race(ctx, worker, config, n):
    """Start ``n`` processes of ``worker(config, i, barrier, results)`` released together by a
    barrier; returns their results, after checking every process exited cleanly."""
    barrier, results = ctx.Barrier(n), ctx.Queue()
    procs = [ctx.Process(target=worker, args=(config, i, barrier, results)) for i in range(n)]
    for p in procs:
        p.start()
    got = [results.get(timeout=30) for _ in range(n)]
    for p in procs:
        p.join(timeout=30)
        assert p.exitcode == 0
    return got


def _race_worker(config, i, barrier, results):
    storage = make_storage(config)
    det = _SlowSpotSigs(storage)
    doc = Doc(RACE_TEXT + f" Edited by desk {i}.", lang="en")
    sigs = det.features(doc)
    barrier.wait()
    m = det.check_and_add_signatures(f"doc{i}", sigs)
    results.put((i, None if m is None else m.doc_id))
    storage.close()


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
def test_race_exactly_one_near_duplicate_wins(kind, tmp_path):
    if kind == "redis":
        _redis_or_skip()
    ctx = mp.get_context("fork")
    n = 4
    for round_ in range(2):
        config = _config(kind, tmp_path)
        config["path"] = str(tmp_path / f"race{round_}.sqlite") if kind == "sqlite" else None
        config = {k: v for k, v in config.items() if v is not None}
        _assert_one_kept(_race(ctx, _race_worker, config, n), config)


def test_redis_lock_times_out_with_a_clear_error():
    _redis_or_skip()
    from topicrawl.errors import StorageError

    ns = f"test-{uuid.uuid4().hex[:12]}"
    a = RedisStorage(REDIS_URL, ns)
    b = RedisStorage(REDIS_URL, ns, lock_wait=0.2)
    try:
        with a.lock("x"):
            with pytest.raises(StorageError, match="timed out"):
                with b.lock("x"):
                    pass
    finally:
        a.clear()
        a.close()
        b.close()


def test_redis_nested_lock_publishes_its_writes_before_release():
    """A lock taken inside an outer batch must not release while its writes are queued."""
    _redis_or_skip()
    ns = f"test-{uuid.uuid4().hex[:12]}"
    a, b = RedisStorage(REDIS_URL, ns), RedisStorage(REDIS_URL, ns)
    try:
        with a.batch():
            with a.lock("x"):
                a.rpush("log", "entry")
            with b.lock("x"):  # the next holder sees the entry
                assert b.lrange("log") == [b"entry"]
    finally:
        a.clear()
        a.close()
        b.close()


def _pipeline_worker(backend, i, barrier, results):
    from crawler.items import PageItem
    from dedup.cascade import Cascade
    from dedup.pipeline import DedupPipeline

    original = Cascade.add

    def slow_add(self, doc_id, doc):  # widen the check-to-add window
        time.sleep(0.05)
        original(self, doc_id, doc)

    Cascade.add = slow_add
    pipe = DedupPipeline(["exact", "spotsigs"], backend=backend)
    pipe.open_spider(None)
    item = PageItem(url=f"http://site{i}/a", text=RACE_TEXT + f" Desk {i}.", language="en")
    barrier.wait()
    out = pipe.process_item(item)
    results.put((i, (out.get("duplicate") or {}).get("of")))
    pipe.close_spider(None)


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
def test_race_pipeline_cascade_keeps_exactly_one(kind, tmp_path):
    if kind == "redis":
        _redis_or_skip()
    backend = _config(kind, tmp_path)
    ctx = mp.get_context("fork")
    n = 3
    got = _race(ctx, _pipeline_worker, backend, n)
    kept = [i for i, of in got if of is None]
    assert len(kept) == 1, got
    assert all(of == f"http://site{kept[0]}/a" for _, of in got if of is not None)
    storage = make_storage(backend)
    storage.clear()
    storage.close()


def test_spotsigs_compaction_is_seen_by_other_processes(backend):
    if backend.kind == "memory":
        s1 = s2 = backend()
    else:
        ns = f"test-{uuid.uuid4().hex[:12]}"
        s1, s2 = backend(ns), backend(ns)
    texts = [
        "The council is meeting on Monday about the plan. There was a vote on the budget.",
        "The team won the final on Sunday. There is a parade in the city for the players.",
        "A storm is expected in the north. The roads were closed and the schools are shut.",
    ]
    d1, d2 = SpotSigsDetector(s1), SpotSigsDetector(s2)
    for i, t in enumerate(texts):
        d1.add(f"u{i}", Doc(t, lang="en"))
    d1.add("u1", Doc(texts[1] + " The mayor is there.", lang="en"))  # replaced version
    d1.remove("u2")
    assert len(d2) == 2 and d2.query(Doc(texts[0], lang="en"))[0].doc_id == "u0"
    before, after = d1.compact()
    assert (before, after) == (5, 2)
    assert d1.storage.llen(d1._log_key()) == 2
    assert not [k for k in s1.keys("spotsigs:log") if k != d1._log_key()]  # old log deleted
    # d2 rebuilds from the compacted log, and both keep working on it
    assert d2.check_and_add("u3", Doc(texts[2], lang="en")) is None
    assert d1.query(Doc(texts[2], lang="en"))[0].doc_id == "u3"
    assert sorted(d2.index.docs) == ["u0", "u1", "u3"] and len(d1) == 3
    fresh = SpotSigsDetector(s2)
    assert sorted(fresh.index.docs) == [] and len(fresh) == 3


# -- the default chain with letter candidates (issue 13 item 5) -------------------------------

LETTER_TEXT = (
    "国家统计局今天发布了上半年的经济数据，专家认为消费是拉动增长的主要力量。在政策的支持下，"
    "制造业投资继续回升，记者了解到多地出台了稳定就业的措施。这是近三年来的最好水平，市场的"
    "信心在逐步恢复之中。他说企业的订单已经排到了年底，在出口方面一些新兴市场的需求明显增加。"
)


def test_letter_candidates_share_an_index_through_the_storage(backend):
    if backend.kind == "memory":
        s1 = s2 = backend()
    else:
        ns = f"test-{uuid.uuid4().hex[:12]}"
        s1, s2 = backend(ns), backend(ns)
    d1 = SpotSigsDetector(s1, candidates="letters")
    assert d1.check_and_add("u1", Doc(LETTER_TEXT)) is None
    d2 = SpotSigsDetector(s2)  # the index's own stage, read from its config
    assert d2.candidates(Doc(LETTER_TEXT)) == ["u1"]
    m = d2.check_and_add("u2", Doc("（责任编辑：王编辑）" + LETTER_TEXT))
    assert m is not None and m.doc_id == "u1" and m.method == "spotsigs"
    d2.remove("u1")
    assert d1.query(Doc(LETTER_TEXT)) == [] and len(d1) == 0
    e1 = ExactDetector(s1, basis="letters")
    assert e1.check_and_add("p", Doc("同一段\n文字")) is None
    e2 = ExactDetector(s2)
    assert e2.basis == "letters" and e2.check_and_add("q", Doc("同一段，文字 ")).doc_id == "p"


def _letters_race_worker(config, i, barrier, results):
    from dedup.cascade import LETTER_OPTIONS, Cascade

    storage = make_storage(config)
    cascade = Cascade(storage, ["exact", "spotsigs", "containment"],
                      options={k: dict(v) for k, v in LETTER_OPTIONS.items()})  # fmt: skip
    spot = cascade.detectors[1]
    original = spot.add

    def slow_add(doc_id, doc):  # widen the check-to-add window
        time.sleep(0.05)
        original(doc_id, doc)

    spot.add = slow_add
    doc = Doc(LETTER_TEXT + f"（编辑：{'王李张刘'[i]}）")
    barrier.wait()
    d = cascade.check_and_add(f"doc{i}", doc)
    results.put((i, None if d.duplicate is None else d.duplicate.doc_id))
    storage.close()


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
def test_race_letter_cascade_keeps_exactly_one(kind, tmp_path):
    if kind == "redis":
        _redis_or_skip()
    config = _config(kind, tmp_path)
    _assert_one_kept(_race(mp.get_context("fork"), _letters_race_worker, config, 4), config)


def test_memory_lock_excludes_other_threads_and_is_reentrant():
    """The memory backend's lock (a plain context manager since the check-and-add speed-up):
    a second thread waits for the holder of the same name; the holder re-enters it and
    batches inside it; both hand back the storage."""
    import threading
    import time

    s = MemoryStorage()
    order: list[str] = []
    inside = threading.Event()

    def other() -> None:
        inside.wait()
        with s.lock("cascade"):
            order.append("other")

    t = threading.Thread(target=other)
    t.start()
    with s.lock("cascade") as got:
        assert got is s
        inside.set()
        with s.lock("cascade"), s.batch() as again:  # re-entrant
            assert again is s
        time.sleep(0.05)
        order.append("holder")
    t.join(5)
    assert order == ["holder", "other"]
    with pytest.raises(ValueError):
        with s.lock("cascade"):
            raise ValueError  # an exception passes through and releases the lock
    t = threading.Thread(target=other)
    t.start()
    t.join(5)
    assert order[-1] == "other" and not t.is_alive()


def test_sets_named_by_a_hash_are_the_sets_of_their_hex_keys(backend):
    """``sadd_hashed`` and the rest reach the sets ``prefix`` + the hash in hex on every
    backend (the memory backend keys them by the integer): the string API sees them under
    those keys and the hashed API sees sets written under those keys before it was used."""
    s = backend()
    s.sadd("x:p:ff", "early")  # before the prefix is used by hash (memory: moved in)
    s.sadd("x:p:0ff", "not-canonical")  # another key: "0ff" is not format(255, "x")
    s.sadd_hashed("x:p:", [255, 0, 2**40], "a")
    s.sadd_hashed("x:p:", (255,), "b")
    s.sadd_hashed("x:q:", [255], "c")
    assert s.smembers("x:p:ff") == {"early", "a", "b"} and s.smembers("x:p:0") == {"a"}
    assert s.smembers_hashed("x:p:", [255, 1, 2**40]) == [{"early", "a", "b"}, set(), {"a"}]
    assert s.smembers_count_hashed("x:p:", [255, 0, 7]) == {"early": 1, "a": 2, "b": 1}
    assert s.smembers_count_hashed("x:p:", [255, 0], max_len=2) == {"a": 1}
    assert s.smembers_count(["x:p:ff", "x:q:ff"]) == {"early": 1, "a": 1, "b": 1, "c": 1}
    assert s.sothers_hashed("x:p:", [255, 0, 1, 2**40], "a") == [True, False, False, False]
    assert s.sothers_hashed("x:p:", [0, 2**40], "nobody") == [True, True]
    assert s.smembers("x:p:0ff") == {"not-canonical"}
    assert s.keys("x:p:") == ["x:p:0", "x:p:0ff", "x:p:10000000000", "x:p:ff"]
    assert s.keys("x:p:f") == ["x:p:ff"] and s.keys("x:") == [*s.keys("x:p:"), "x:q:ff"]
    s.sadd("x:p:0", "z")  # the string API writes into the hashed set
    s.srem_hashed("x:p:", [255, 0], "a")
    assert s.smembers_hashed("x:p:", [255, 0]) == [{"early", "b"}, {"z"}]
    assert s.sismember("x:p:ff", "b") and s.scard("x:p:ff") == 2
    s.srem("x:p:ff", "early", "b")
    s.delete("x:p:0")
    assert not s.exists("x:p:ff") and not s.exists("x:p:0") and s.exists("x:p:10000000000")
    assert s.smembers_count_hashed("x:p:", [255, 0]) == {}
    with pytest.raises(ValueError, match="ends with ':'"):
        s.sadd_hashed("x:p", [1], "a")
    s.clear()
    assert s.keys() == [] and s.smembers_hashed("x:p:", [2**40]) == [set()]


def _real_stream() -> list[tuple[str, str]]:
    """Pages made of cnews articles (the shared corpus) as a crawl meets them: articles,
    near-duplicates (a sentence dropped, an editor line), their halves met before and after
    them, reprints with another article's paragraphs spliced in, short excerpts (indexed
    apart) and small pages (measured on letters), and repeated ids (a recrawl replaces)."""
    import random
    import re

    from sitegen.articles import load_articles

    rng = random.Random(13)
    arts = [a.text for a in load_articles()[:400] if 400 <= len(a.text) <= 3000][:30]
    out: list[tuple[str, str]] = []
    for i, text in enumerate(arts):
        sents = re.findall(r"[^。！？]+[。！？]", text)
        other = re.findall(r"[^。！？]+[。！？]", arts[(i + 7) % len(arts)])
        half = "".join(sents[: len(sents) // 2])
        near = sents[:]
        del near[rng.randrange(len(near))]
        pages = [
            (f"half{i}", half),
            (f"a{i}", text),
            (f"near{i}", "".join(near) + "（责任编辑：王编辑）"),
            (f"reprint{i}", "".join(sents[:3] + other[:4] + sents[3:])),
            (f"short{i}", "".join(sents[:2])[:60]),
            (f"small{i}", "".join(sents[:4])[:150] + "来源：新华社"),
        ]
        rng.shuffle(pages)
        out += pages
        if i % 5 == 4:
            out.append((f"a{i - 2}", text))  # an id met again with another text
    return out


def test_memory_hashed_sets_decide_as_sqlite_on_real_text(tmp_path):
    """The default cascade on the memory backend (posting sets keyed by their hashes) takes
    the same decisions on real text as on SQLite (the string-keyed layout) and leaves the
    same index: every key with the same contents."""
    from dedup.cascade import DEFAULT_METHODS, LETTER_OPTIONS, Cascade

    config = {"methods": list(DEFAULT_METHODS), **{k: dict(v) for k, v in LETTER_OPTIONS.items()}}
    mem = MemoryStorage()
    sql = SQLiteStorage(tmp_path / "idx.sqlite")
    cascades = [Cascade.from_config(config, storage=s) for s in (mem, sql)]
    decided = [[c.check_and_add(d, Doc(t)) for d, t in _real_stream()] for c in cascades]
    assert decided[0] == decided[1]
    methods = {d.duplicate.method for d in decided[0] if d.duplicate}
    assert {"spotsigs", "containment"} <= methods
    assert any(d.retired or d.replaced for d in decided[0])
    # every kind of posting set the detectors name by a hash was written
    assert {"containment:p:", "containment:s:", "containment:sp:", "containment:q:",
            "containment:dp:", "spotsigs:lb:"} <= {p for p, t in mem._hashed.items() if t}  # fmt: skip
    keys = sql.keys()
    assert mem.keys() == keys and len(keys) > 1000

    def contents(s, key: str) -> tuple:
        return s.get(key), s.smembers(key), s.hgetall(key), s.lrange(key)

    assert [contents(mem, k) for k in keys] == [contents(sql, k) for k in keys]
