"""The Redis dedup index's lock (the scale-out's lock on the shared index, issue 11): a short
lease whose holder's death costs the others at most about its time to live, and whose
holder cannot write once it lost it (its step is done again on a fresh read)."""

from __future__ import annotations

import threading
import time
import uuid

import pytest

from dedup.base import Doc
from dedup.cascade import Cascade
from dedup.storage import LockLostError, RedisStorage

pytestmark = pytest.mark.redis

METHODS = ["exact", "spotsigs", "containment"]
#: SpotSigs' eager index, mirrored by the log these tests look at (a new Redis index's
#: default; the chain with ``dedup.cascade.LETTER_OPTIONS`` verifies letter candidates)
EAGER = {"exact": {"basis": "tokens"}, "spotsigs": {"candidates": "signatures"}}
TEXT = (
    "本赛季的联赛进入了最后阶段，主队在主场的比赛中以三比一战胜了对手。球队的主教练是在赛后"
    "接受采访的，他说球员的表现是出色的。下一轮的比赛将在周六进行，球迷的热情是高涨的。"
)
NEAR = "来源：新华网\n" + TEXT + "责任编辑：王明"


@pytest.fixture
def namespace(redis_url):
    ns = f"test-dlock-{uuid.uuid4().hex[:12]}"
    yield ns
    cleanup = RedisStorage(redis_url, ns)
    cleanup.clear()
    cleanup.close()


def test_a_dead_holder_delays_a_check_and_add_by_about_the_lock_ttl(redis_url, namespace):
    """A holder that took the lock and never releases it (killed, stopped) holds the other
    workers up for about lock_timeout (5 s by default), not the 60 s it used to."""
    dead = RedisStorage(redis_url, namespace)
    held = dead.lock("cascade")
    held.__enter__()  # never released, as by a worker killed while holding it
    taken = time.monotonic()
    worker = Cascade(RedisStorage(redis_url, namespace), METHODS, options=EAGER)
    try:
        decision = worker.check_and_add("http://a/1", Doc(TEXT))
        waited = time.monotonic() - taken
        assert decision.duplicate is None
        assert dead.lock_timeout == 5.0
        assert 4.0 < waited < 7.0, waited
        # the dead holder, were it to wake up, could not write
        dead.rpush("spotsigs:log", '["a","http://stale",{}]')
        with pytest.raises(LockLostError):
            held.__exit__(None, None, None)
        assert worker.storage.llen("spotsigs:log") == 1
    finally:
        worker.storage.close()
        dead.close()


@pytest.mark.parametrize("taken_by_another", [True, False])
def test_a_holder_whose_lock_expired_cannot_write(redis_url, namespace, taken_by_another):
    a = RedisStorage(redis_url, namespace, lock_timeout=0.3)
    b = RedisStorage(redis_url, namespace, lock_timeout=0.3)
    try:
        with pytest.raises(LockLostError):
            with a.lock("x"):
                a.rpush("log", "stale")  # queued: sent when the lock ends
                time.sleep(0.5)  # stalled past the lease
                if taken_by_another:
                    with b.lock("x"):
                        b.rpush("log", "fresh")
        assert a.lrange("log") == ([b"fresh"] if taken_by_another else [])
        with a.lock("x"):  # the lock is free again, and works
            a.rpush("log", "next")
        assert a.lrange("log")[-1] == b"next"
    finally:
        a.close()
        b.close()


def test_a_holder_that_keeps_working_keeps_its_lock(redis_url, namespace):
    """Reads and writes renew the lease: a step longer than the time to live is not cut."""
    a = RedisStorage(redis_url, namespace, lock_timeout=0.3)
    b = RedisStorage(redis_url, namespace, lock_timeout=0.3, lock_wait=0.05)
    try:
        with a.lock("x"):
            for i in range(20):  # 1 s, three leases
                a.rpush("log", str(i))
                assert a.llen("log") == i + 1
                time.sleep(0.05)
            with pytest.raises(Exception, match="timed out"):
                with b.lock("x"):
                    pass
        assert a.llen("log") == 20
    finally:
        a.close()
        b.close()


def test_a_cascade_that_lost_its_lock_redoes_its_check_and_add(redis_url, namespace):
    """Worker A reads (nothing matches), stalls past its lease; worker B takes the lock and
    admits a near duplicate. A's write is refused and its check-and-add is done again: it
    finds B's document, and only one of the pair is in the index, in Redis and in A's
    in-memory SpotSigs mirror alike."""
    a = Cascade(RedisStorage(redis_url, namespace, lock_timeout=0.5), METHODS, options=EAGER)
    b = Cascade(RedisStorage(redis_url, namespace, lock_timeout=0.5), METHODS, options=EAGER)
    b_decision = []
    last = a.detectors[-1]  # containment: A has read every index when it stalls
    original = last.query
    calls = []

    def stalling_query(doc):
        found = original(doc)
        calls.append(found)
        if len(calls) == 1:  # the first time only: B runs while A holds a stale read
            t = threading.Thread(target=lambda: b_decision.append(b.check_and_add("y", Doc(NEAR))))
            t.start()
            t.join(10)
        return found

    last.query = stalling_query
    lost = []
    refuse = a.storage._lost
    a.storage._lost = lambda held: lost.append(held) or refuse(held)
    try:
        decision = a.check_and_add("x", Doc(TEXT))
        assert len(lost) == 1  # A's step was refused once, then done again
        assert b_decision and b_decision[0].duplicate is None  # B admitted y
        assert decision.duplicate is not None and decision.duplicate.doc_id == "y"
        assert len(calls) == 1 or calls[0] == []  # the stale read found nothing
        assert a.checked == 1 and sum(a.counts.values()) == 1
        for storage in (a.storage, b.storage):
            assert storage.hget("exact:d", "x") is None
            assert storage.hget("containment:docs", "x") is None
            assert storage.llen("spotsigs:log") == 1
        spot = a.detectors[1]
        assert sorted(spot.index.docs) == ["y"] and spot._cursor == 1
        # both workers agree afterwards
        for worker in (a, b):
            assert worker.query(Doc(TEXT)).doc_id == "y"
    finally:
        a.storage.close()
        b.storage.close()


def test_a_cascade_writes_every_method_in_one_fenced_transaction(redis_url, namespace):
    """The methods' own locks, taken inside the cascade's, end with it: a lost cascade lock
    refuses the writes of every method, not only those queued after the loss."""
    storage = RedisStorage(redis_url, namespace, lock_timeout=0.3)
    cascade = Cascade(storage, METHODS, options=EAGER)
    try:
        with pytest.raises(LockLostError):
            with storage.lock("cascade"):
                cascade.detectors[0].add("x", Doc(TEXT))  # exact: its own lock, nested
                cascade.detectors[1].add("x", Doc(TEXT))  # spotsigs: likewise
                assert storage.holding()
                time.sleep(0.5)
        assert storage.keys() == []
        assert not storage.holding()
        cascade.add("x", Doc(TEXT))  # the retried step writes everything
        assert storage.hget("exact:d", "x") is not None
        assert storage.llen("spotsigs:log") == 1
        assert sorted(cascade.detectors[1].index.docs) == ["x"]
    finally:
        storage.clear()
        storage.close()


def test_letter_candidates_are_written_in_the_fenced_transaction_too(redis_url, namespace):
    """The chain with LETTER_OPTIONS (exact on letters, SpotSigs on letter candidates): its
    writes (text, minhash, band sets) are refused with the lost lock, then done again."""
    from dedup.cascade import LETTER_OPTIONS

    storage = RedisStorage(redis_url, namespace, lock_timeout=0.3)
    cascade = Cascade(storage, METHODS, options=LETTER_OPTIONS)
    assert type(cascade.detectors[1]).__name__ == "LetterCandidatesSpotSigs"
    try:
        with pytest.raises(LockLostError):
            with storage.lock("cascade"):
                cascade.detectors[0].add("x", Doc(TEXT))
                cascade.detectors[1].add("x", Doc(TEXT))
                time.sleep(0.5)
        assert storage.keys() == []
        cascade.add("x", Doc(TEXT))
        assert storage.get("exact:basis") == b"letters" and storage.hlen("spotsigs:lt") == 1
        assert cascade.check_and_add("y", Doc(NEAR)).duplicate.doc_id == "x"
    finally:
        storage.clear()
        storage.close()


def test_the_pipeline_waits_for_a_busy_lock_without_blocking(redis_url, namespace):
    """With ``lock_poll`` (on in a crawl, ``TOPICRAWL_DEDUP_LOCK_POLL``), a page that meets
    the cascade's lock held by another worker gets a Deferred, checked once the lock is
    free; the reactor (here a test clock) is not blocked meanwhile."""
    from twisted.internet.task import Clock

    from crawler.items import PageItem
    from dedup.pipeline import DedupPipeline

    backend = {"type": "redis", "url": redis_url, "namespace": namespace}
    pipe = DedupPipeline(METHODS, backend=backend, lock_poll=0.05)
    pipe.clock = Clock()
    other = RedisStorage(redis_url, namespace)
    try:
        first = pipe.process_item(PageItem(url="http://a/1", text=TEXT, title="t"))
        assert first.get("duplicate") is None  # the lock was free: checked at once
        held = other.lock("cascade")
        held.__enter__()
        started = time.monotonic()
        result = pipe.process_item(PageItem(url="http://b/1", text=NEAR, title="t"))
        assert time.monotonic() - started < 1.0  # returned at once, not after the lease
        got = []
        result.addCallback(got.append)
        pipe.clock.advance(0.05)
        pipe.clock.advance(0.05)
        assert got == []  # still held: still waiting
        held.__exit__(None, None, None)
        pipe.clock.advance(0.05)
        assert got and got[0]["duplicate"]["of"] == "http://a/1"
    finally:
        pipe.close_spider(None)
        other.close()
