"""Per-worker leases on the requests in flight (crawler.lease), against Redis directly."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable

import pytest
from conftest import CountingStats, delete_prefix

from crawler import serialization
from crawler.lease import WorkerLease, requeued_entry, stored_url
from crawler.middlewares import RECOVERED


def _entry(url: str, priority: int = 0, **meta: object) -> bytes:
    return serialization.dumps({"url": url, "callback": "parse", "method": "GET",
                                "priority": priority, "meta": {"depth": 1, **meta}})  # fmt: skip


@pytest.fixture
def crawl(redis_keys):
    return redis_keys


def _worker(client, prefix: str, name: str, stats=None, seconds: float = 5.0) -> WorkerLease:
    lease = WorkerLease(client, f"{prefix}:topic", frontier_key=f"{prefix}:topic:requests",
                        pages_key=f"{prefix}:topic:pages", lease_seconds=seconds,
                        worker=name, stats=stats)  # fmt: skip
    lease.beat()
    return lease


def _slow_and_other(client, prefix: str) -> tuple[WorkerLease, WorkerLease]:
    """Two workers: ``slow`` (whose heartbeat the test lets lapse) and ``other``, whose
    database holds none of the slow one's pages when it reclaims them."""
    slow, other = _worker(client, prefix, "slow"), _worker(client, prefix, "other")
    other.stored_check = lambda urls: set()
    return slow, other


def _kill(lease: WorkerLease) -> None:
    """kill -9: the heartbeat is simply not refreshed any more (here: gone at once)."""
    lease.client.delete(lease.alive_key(lease.worker))


def test_requeued_entry_is_deterministic_and_marked_recovered():
    entry = _entry("http://a.cn/x", priority=1200, topicrawl_lease="abc")
    data, score = requeued_entry(entry)
    assert data == requeued_entry(entry)[0] and score == -1200.0
    meta = serialization.loads(data)["meta"]
    assert meta[RECOVERED] == "http://a.cn/x" and "topicrawl_lease" not in meta
    assert meta["depth"] == 1 and meta["dont_redirect"] is True
    assert stored_url(_entry("http://a.cn/b", redirect_urls=["http://a.cn/a"])) == "http://a.cn/a"


@pytest.mark.redis
def test_a_popped_request_is_leased_until_its_page_is_stored(crawl):
    client, prefix = crawl
    lease = _worker(client, prefix, "w1")
    client.zadd(lease.frontier_key, {_entry("http://a.cn/1"): -5, _entry("http://a.cn/2"): 0})
    data, lid = lease.pop(limit=10)
    assert serialization.loads(data)["url"] == "http://a.cn/1"  # best first
    assert client.zcard(lease.frontier_key) == 1 and client.hget(lease.inflight, lid) == data
    assert lease.take(lid, "http://a.cn/1", count=True, limit=10) == 1
    assert client.hexists(lease.inflight, f"c:{lid}")
    assert lease.stored(["http://a.cn/1"]) == 1
    assert client.hlen(lease.inflight) == 0 and int(client.get(lease.pages_key)) == 1
    # a page not counted (no item) ends its lease after the callback; a spent budget pops nothing
    data, lid = lease.pop(limit=10)
    lease.release(lid)
    assert client.hlen(lease.inflight) == 0
    client.zadd(lease.frontier_key, {_entry("http://a.cn/3"): 0})
    assert lease.pop(limit=1) is None and client.zcard(lease.frontier_key) == 1


@pytest.mark.redis
def test_two_reclaimers_take_each_entry_of_a_dead_worker_once(crawl):
    """A dead worker held 40 requests: 10 counted and stored, 10 counted and not stored, 20
    not counted. Two survivors reclaim at the same moment (20 rounds): each entry is back in
    the frontier once, the 10 unstored pages hand their count on to their queued copies (one
    mark each), the stored ones stay counted."""
    client, prefix = crawl
    for round_ in range(20):
        delete_prefix(client, prefix)
        dead = _worker(client, prefix, f"dead{round_}")
        urls = [f"http://a.cn/{round_}/{i}" for i in range(40)]
        client.zadd(dead.frontier_key, {_entry(u, priority=i): -i for i, u in enumerate(urls)})
        leases = {serialization.loads(data)["url"]: lid for data, lid in (dead.pop() for _ in urls)}
        for url in urls[:20]:
            assert dead.take(leases[url], url, count=True, limit=100) > 0
        assert int(client.get(dead.pages_key)) == 20
        stored = set(urls[:10])
        _kill(dead)
        stats = CountingStats()
        survivors = [_worker(client, prefix, f"s{k}", stats) for k in range(2)]
        for s in survivors:
            s.stored_check = lambda found, stored=stored: {u for u in found if u in stored}
        start = threading.Barrier(2)
        moved: list[int] = []

        def run(s: WorkerLease, start=start, moved=moved) -> None:
            start.wait()
            moved.append(s.reclaim())

        threads = [threading.Thread(target=run, args=(s,)) for s in survivors]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
        assert sorted(moved) == [0, 30]  # the whole hash went to one of them
        back = [serialization.loads(m)["url"] for m in client.zrange(dead.frontier_key, 0, -1)]
        assert sorted(back) == sorted(urls[10:]), "each unstored entry back once"
        assert int(client.get(dead.pages_key)) == 20  # no count given back: 10 handed on
        marks = client.hgetall(f"{prefix}:topic:precounted")
        assert sorted(serialization.loads(m)["url"] for m in marks.values()) == sorted(urls[10:20])
        assert all(client.hlen(s.inflight) == 0 for s in survivors)
        assert not client.exists(dead.inflight)
        assert stats.values["topicrawl/frontier/recovered_from_dead_worker"] == 30
        assert stats.values["topicrawl/frontier/recovered_stored"] == 10
        assert stats.values["topicrawl/frontier/recovered_count_handed_on"] == 10
        # the dead worker is gone from the registry once its hash is empty
        for s in survivors:
            s.reclaim()
        assert client.smembers(dead.registry) == {b"s0", b"s1"}


@pytest.mark.redis
def test_a_live_worker_is_left_alone_and_a_slow_one_takes_back_or_drops(crawl):
    client, prefix = crawl
    slow = _worker(client, prefix, "slow")
    other = _worker(client, prefix, "other")
    client.zadd(slow.frontier_key, {_entry("http://a.cn/1"): 0, _entry("http://a.cn/2"): 1})
    (_, lid1), (_, lid2) = slow.pop(), slow.pop()
    assert other.reclaim() == 0 and client.hlen(slow.inflight) == 2  # alive: not touched
    _kill(slow)  # a stall longer than the lease: the other worker takes its requests
    assert other.reclaim() == 2 and client.zcard(slow.frontier_key) == 2
    slow.beat()  # the slow worker goes on: request 1 still waits in the frontier
    assert slow.take(lid1, "http://a.cn/1", count=True, limit=10) == 1
    assert client.zcard(slow.frontier_key) == 1 and client.hexists(slow.inflight, f"c:{lid1}")
    taken = other.pop()  # request 2 was popped by the other worker: the slow one drops it
    assert taken is not None and serialization.loads(taken[0])["url"] == "http://a.cn/2"
    assert slow.take(lid2, "http://a.cn/2", count=True, limit=10) == -1
    assert int(client.get(slow.pages_key)) == 1


@pytest.mark.redis
def test_a_broken_page_gives_its_count_back_once(crawl):
    """Page 2 is counted, reclaimed (its count handed on to the queued copy), broken at the
    slow worker, and the copy fails for good at the worker that popped it: the count goes back
    once, when that lease ends."""
    client, prefix = crawl
    slow, other = _slow_and_other(client, prefix)
    client.zadd(slow.frontier_key, {_entry("http://a.cn/1"): 0, _entry("http://a.cn/2"): 0})
    (_, lid1), (_, lid2) = slow.pop(), slow.pop()
    for lid, n in ((lid1, 1), (lid2, 2)):
        assert slow.take(lid, f"http://a.cn/{n}", count=True, limit=10) == n
    assert slow.uncount(lid1, count=True)  # broken: the count goes back
    assert int(client.get(slow.pages_key)) == 1
    _kill(slow)
    assert other.reclaim() == 2  # page 2 was counted, not stored: its count goes on with it
    assert int(client.get(slow.pages_key)) == 1
    assert not slow.uncount(lid2, count=True)  # not the slow worker's to give back any more
    assert int(client.get(slow.pages_key)) == 1
    popped = other.pop(limit=1)  # the budget looks spent: only the counted copy is popped
    assert popped is not None and serialization.loads(popped[0])["url"] == "http://a.cn/2"
    assert other.pop(limit=1) is None and client.zcard(other.frontier_key) == 1
    other.release(popped[1])  # it failed for good: the count goes back
    assert int(client.get(slow.pages_key)) == 0 and other.precounted() == 0
    other.release(popped[1])
    assert int(client.get(slow.pages_key)) == 0


@pytest.mark.redis
def test_an_idle_worker_waits_for_a_dead_workers_pages_before_ending_on_the_budget(crawl):
    """The budget looks spent, but a worker whose heartbeat is late holds a counted page that
    is not stored: the idle worker waits, takes it back when the heartbeat expires (the page
    goes back to the frontier with its count), and ends only when that page is stored."""
    import time
    from types import SimpleNamespace

    from scrapy.exceptions import CloseSpider, DontCloseSpider
    from scrapy.statscollectors import MemoryStatsCollector

    from crawler.idle import SharedIdleClose

    client, prefix = crawl
    dead = _worker(client, prefix, "dead")
    client.zadd(dead.frontier_key, {_entry("http://a.cn/1"): 0})
    _, lid = dead.pop()
    assert dead.take(lid, "http://a.cn/1", count=True, limit=1) == 1
    client.set(dead.alive_key("dead"), 1, px=300)  # last beat long ago: about to expire
    survivor = _worker(client, prefix, "survivor")
    survivor.stored_check = lambda urls: set()
    engine = SimpleNamespace(_slot=object(), spider_is_idle=lambda: True)
    stats = MemoryStatsCollector(
        SimpleNamespace(settings=SimpleNamespace(getbool=lambda *a, **k: False))
    )
    survivor.stats = stats
    crawler = SimpleNamespace(engine=engine, stats=stats)
    ext = SharedIdleClose(crawler, client, f"{prefix}:topic:active", 0, lease=survivor)
    spider = SimpleNamespace(pages_redis=client, pages_key=dead.pages_key, max_pages=1)
    with pytest.raises(DontCloseSpider):  # the budget is spent, but by a page not stored
        ext.spider_idle(spider)
    time.sleep(0.5)  # the heartbeat expires (Redis's clock)
    with pytest.raises(DontCloseSpider):
        ext.spider_idle(spider)  # reclaimed: the page is back in the frontier, with its count
    assert int(client.get(dead.pages_key)) == 1 and client.zcard(dead.frontier_key) == 1
    assert stats.get_value("topicrawl/frontier/recovered_from_dead_worker") == 1
    assert not ext.budget_spent(spider)  # the counter is at the budget, the page still to fetch
    assert survivor.precounted(waiting=True) == 1
    _, again = survivor.pop(limit=1)  # fetched and stored again by someone
    # popped: its mark stays until it is counted, but no idle worker waits for it any more
    assert survivor.precounted() == 1 and survivor.precounted(waiting=True) == 0
    assert survivor.take(again, "http://a.cn/1", count=True, limit=1) == 1
    survivor.stored(["http://a.cn/1"])
    with pytest.raises(CloseSpider):
        ext.spider_idle(spider)


# -- a crawl: three workers, one killed with kill -9 mid-crawl ---------------------------------
#: a fixed query-string budget per path: the pages one crawl reaches do not depend on the
#: order of fetches, so the budget of an unkilled crawl is spent on the same pages
KEYWORD = {"TOPICRAWL_LINK_SCORER": "relevance.linkscore.KeywordLinkScorer",
           "TOPICRAWL_QUERY_VARIANTS_PER_PAGE": 0}  # fmt: skip


def _victim(client, prefix: str, pids: set[int]) -> tuple[int, str] | None:
    """A running worker (pid, worker id) that holds counted pages and requests in flight."""
    for raw in client.smembers(f"{prefix}:topic:workers"):
        worker = raw.decode()
        pid = int(worker.split(":")[-2])
        fields = client.hkeys(f"{prefix}:topic:inflight:{worker}")
        counted = sum(f.startswith(b"c:") for f in fields)
        if pid in pids and counted >= 2 and len(fields) - 2 * counted >= 2:
            return pid, worker
    return None


@pytest.mark.redis
@pytest.mark.parametrize("how", ["kill", "stop"])
def test_a_killed_workers_share_is_finished_by_the_others(small_web, proxy, redis_url, pg_url,
                                                           tmp_path, how):  # fmt: skip
    """Three workers share a budget equal to what one unkilled crawl stores; one is killed
    with kill -9 while it holds requests in flight and counted pages not yet written. The two
    others reclaim its requests, store every page once, and spend the budget exactly.
    ``stop``: the worker is only slow (SIGSTOP until its requests are reclaimed, then
    SIGCONT): no page is lost or stored twice, and the budget is still exact."""
    import json
    import os
    import re
    import signal
    import subprocess
    import time

    import redis
    from conftest import ROOT, crawl_command, run_crawl
    from test_scaleout import final_stat

    from models.store import Store
    from sitegen.server import ServerProcess

    truth = json.loads((small_web / "ground_truth.json").read_text(encoding="utf-8"))
    seeds = truth["seeds"]["portal"]
    topic = tmp_path / "t.toml"
    topic.write_text('name = "t"\n[words]\n"政治" = 1.0\n[page]\nthreshold = 0.0\n', "utf-8")
    single_db = f"sqlite:///{tmp_path / 'single.db'}"
    single = run_crawl(proxy, seeds, topic, single_db, settings=KEYWORD)
    assert single.returncode == 0, single.stderr[-2000:]
    store = Store.from_url(single_db)
    expected = {p.url for p in store.iter_pages(store.list_runs()[-1].id)}
    budget = len(expected)

    client = redis.Redis.from_url(redis_url)
    prefix = f"topicrawl_test_{uuid.uuid4().hex[:8]}"
    backend = json.dumps({"type": "redis", "url": redis_url, "namespace": f"{prefix}:dedup"})
    settings = {
        **KEYWORD, "TOPICRAWL_DEDUP_BACKEND": backend, "CONCURRENT_REQUESTS_PER_DOMAIN": 4,
        "TOPICRAWL_DB_BATCH": 5, "TOPICRAWL_LEASE_SECONDS": 6,
        "TOPICRAWL_LEASE_CHECK_SECONDS": 1, "TOPICRAWL_IDLE_CLOSE_SECONDS": 8,
    }  # fmt: skip
    slow = ServerProcess(small_web, latency_ms=300)
    procs: list[subprocess.Popen] = []
    logs = [tmp_path / f"worker{i}.log" for i in range(3)]
    held: list[str] = []
    try:
        for log in logs:
            cmd, env = crawl_command(slow.url, seeds, topic, pg_url,
                                     args={"run_id": 5, "max_pages": budget}, settings=settings)  # fmt: skip
            env.update(TOPICRAWL_REDIS_URL=redis_url, TOPICRAWL_REDIS_PREFIX=prefix)
            procs.append(subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                                          stderr=log.open("w")))  # fmt: skip
            time.sleep(1.0)
        deadline = time.monotonic() + 240
        found = None
        while found is None and time.monotonic() < deadline:
            time.sleep(0.1)
            ended = [log for log, p in zip(logs, procs, strict=True) if p.poll() is not None]
            assert not ended, ended[0].read_text()[-3000:]
            if int(client.get(f"{prefix}:topic:pages") or 0) >= 10:
                found = _victim(client, prefix, {p.pid for p in procs})
        assert found is not None, "no worker held counted pages and requests in flight"
        pid, worker = found
        os.kill(pid, signal.SIGKILL if how == "kill" else signal.SIGSTOP)
        killed_at = time.time()
        victim = next(p for p in procs if p.pid == pid)
        if how == "kill":
            victim.wait(timeout=30)
        else:
            time.sleep(0.5)  # a write the process had sent to Redis lands
        from crawler.lease import stored_url

        inflight = f"{prefix}:topic:inflight:{worker}"
        fields = client.hgetall(inflight)
        held = [stored_url(v) for k, v in fields.items() if not k.startswith((b"c:", b"s:"))]
        counted = sum(k.startswith(b"c:") for k in fields)
        if how == "stop":  # slow, not dead: it goes on once the others have taken its share
            deadline = time.monotonic() + 120
            while client.exists(inflight) and time.monotonic() < deadline:
                time.sleep(0.2)
            os.kill(pid, signal.SIGCONT)
        survivors = [p for p in procs if p is not victim or how == "stop"]
        for proc in survivors:
            assert proc.wait(timeout=300) == 0
        pages_counter = int(client.get(f"{prefix}:topic:pages") or 0)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()  # a stopped process too
        slow.stop()
        delete_prefix(client, prefix)
    texts = [log.read_text() for log, p in zip(logs, procs, strict=True)
             if p.pid != pid or how == "stop"]  # fmt: skip
    # the killed worker's reclaim (a worker only slow on the loaded machine may be reclaimed
    # too: its requests are counted in the stats, and its lines name it)
    line = re.compile(
        rf"(?m)^(\S+ \S+) \[crawler.lease\] INFO: worker {re.escape(worker)} stopped answering: (\d+) .*?\((\d+) pages .*?, (\d+) already"
    )
    claims = [m.groups() for t in texts for m in line.finditer(t)]
    after = min(time.mktime(time.strptime(c[0], "%Y-%m-%d %H:%M:%S")) for c in claims) - killed_at
    recovered, given_back, already = (sum(int(c[i]) for c in claims) for i in (1, 2, 3))
    if how == "kill":
        assert len(claims) == 1, claims
        assert recovered + already == len(held) > 0  # every request it held, once
        assert given_back + already == counted > 0  # every counted page: stored, or given back
    else:  # it may be reclaimed again after SIGCONT, before its next heartbeat
        assert recovered + already >= len(held) > 0 and given_back + already >= counted
    assert (
        sum(final_stat(t, "topicrawl/frontier/recovered_from_dead_worker") for t in texts)
        >= recovered
    )
    shared = Store.from_url(pg_url)
    urls = [p.url for p in shared.iter_pages(5)]
    assert len(urls) == len(set(urls)) == budget == pages_counter  # the budget is exact
    # what the killed worker held was stored by the others (some of it never is: a URL
    # robots.txt disallows, or a redirect whose target was queued before)
    assert set(held) & expected <= set(urls) and set(held) & expected
    assert shared.count_documents(5) == shared.count_pages(5, accepted_only=True) > 0

    def trapped(found):
        return {u for u in found if any(u.startswith(t) for t in truth["traps"])}

    assert set(urls) - trapped(urls) == expected - trapped(expected)
    print(f"budget {budget}, killed worker held {len(held)} ({counted} counted), recovered "
          f"{recovered}, already stored {already}, {after:+.0f} s after the kill (1 s steps)")  # fmt: skip


@pytest.mark.redis
def test_a_slow_worker_that_stores_a_reclaimed_page_takes_it_back_with_its_count(crawl):
    client, prefix = crawl
    slow, other = _slow_and_other(client, prefix)
    client.zadd(slow.frontier_key, {_entry("http://a.cn/1"): 0, _entry("http://a.cn/2", 1): -1})
    (_, lid2), (_, lid1) = slow.pop(), slow.pop()
    assert slow.take(lid1, "http://a.cn/1", count=True, limit=10) == 1
    assert slow.take(lid2, "http://a.cn/2", count=True, limit=10) == 2
    _kill(slow)
    assert other.reclaim() == 2 and int(client.get(slow.pages_key)) == 2  # handed on
    assert other.precounted() == 2
    popped = other.pop()  # page 2 (as requeued) is fetched again by the other worker
    assert popped is not None and serialization.loads(popped[0])["url"] == "http://a.cn/2"
    assert slow.stored(["http://a.cn/1", "http://a.cn/2"]) == 2  # the slow worker's writes
    # page 1 waited in the frontier: taken back with its count (its mark consumed, nothing
    # counted again); page 2 is the other's to count, through its mark
    assert slow.taken_back == 1 and client.zcard(slow.frontier_key) == 0
    assert int(client.get(slow.pages_key)) == 2 and other.precounted() == 1
    assert other.take(popped[1], "http://a.cn/2", count=True, limit=10) == 2
    assert int(client.get(slow.pages_key)) == 2 and other.precounted() == 0


def test_a_page_written_without_its_document_is_not_stored_whole(tmp_path):
    """A batch is several transactions: a worker killed after the pages but before the
    documents leaves an accepted page that the reclaimer must fetch again."""
    from models.store import Store

    store = Store.from_url(f"sqlite:///{tmp_path / 's.db'}")
    run = store.start_run("t", "", {})
    rows = [{"url": f"http://a.cn/{i}", "accepted": i < 2, "text": "正文"} for i in range(4)]
    store.save_crawl_batch(run, rows[:1] + rows[2:])
    store.save_pages(run, rows[1:2])  # killed before its document and history
    urls = [r["url"] for r in rows] + ["http://a.cn/none"]
    assert store.complete_page_urls(run, urls) == {
        "http://a.cn/0",
        "http://a.cn/2",
        "http://a.cn/3",
    }


@pytest.mark.redis
def test_a_sent_request_comes_back_once_past_the_fetch_once_set_and_an_unsent_one_as_it_was(
    crawl,
):
    """The dead worker had sent request 1 (its URL is in the fetch-once set), not request 2:
    1 comes back marked to pass the set once, and a second queued copy of its URL is still
    refused; 2 comes back as it was and is checked as usual."""
    from scrapy import Request
    from scrapy.exceptions import IgnoreRequest
    from scrapy.utils.test import get_crawler

    from crawler.lease import LEASE
    from crawler.middlewares import FetchOnceMiddleware
    from crawler.spiders.topic import TopicSpider

    client, prefix = crawl
    fetched = f"{prefix}:topic:fetched"
    fp = get_crawler(TopicSpider).request_fingerprinter.fingerprint
    dead = _worker(client, prefix, "dead")
    other = _worker(client, prefix, "other")
    mw_dead, mw_other = (
        FetchOnceMiddleware(CountingStats(), fp, redis=client, key=fetched) for _ in "ab"
    )
    mw_dead.lease, mw_other.lease = dead, other
    client.zadd(dead.frontier_key, {_entry("http://a.cn/1"): -1, _entry("http://a.cn/2"): 0})
    (_, lid1), (_, lid2) = dead.pop(), dead.pop()
    assert mw_dead.process_request(Request("http://a.cn/1", meta={LEASE: lid1})) is None
    assert client.hexists(dead.inflight, f"s:{lid1}") and not client.hexists(
        dead.inflight, f"s:{lid2}"
    )
    _kill(dead)
    assert other.reclaim() == 2
    back = {
        serialization.loads(m)["url"]: serialization.loads(m)["meta"]
        for m in client.zrange(dead.frontier_key, 0, -1)
    }
    assert (
        back["http://a.cn/1"][RECOVERED] == "http://a.cn/1"
        and RECOVERED not in back["http://a.cn/2"]
    )
    again = Request("http://a.cn/1", meta={RECOVERED: "http://a.cn/1"}, dont_filter=True)
    assert mw_other.process_request(again) is None  # passes once
    with pytest.raises(IgnoreRequest):  # another queued copy of the URL
        FetchOnceMiddleware(CountingStats(), fp, redis=client, key=fetched).process_request(
            Request("http://a.cn/1", dont_filter=True)
        )
    assert mw_other.process_request(Request("http://a.cn/2")) is None  # never sent: as usual


@pytest.mark.redis
@pytest.mark.parametrize("bloom", [False, True])
def test_a_slow_workers_unsent_request_is_not_sent_after_its_reclaim(crawl, bloom):
    """The slow worker had popped request 1 but not sent it when another worker reclaimed
    it. Sent now, its URL would enter the fetch-once set, the queued copy the other worker
    pops would be refused, and the slow worker would drop its own page as the lease's loser:
    the page lost (test_a_killed_workers_share_is_finished_by_the_others, stop case). The
    slow worker's copy is refused instead, and the queued copy is fetched."""
    from scrapy import Request
    from scrapy.exceptions import IgnoreRequest
    from scrapy.utils.test import get_crawler

    from crawler.lease import LEASE
    from crawler.middlewares import FetchOnceMiddleware
    from crawler.seen import RedisBloomFilter
    from crawler.spiders.topic import TopicSpider

    client, prefix = crawl
    fetched = f"{prefix}:topic:fetched"
    fp = get_crawler(TopicSpider).request_fingerprinter.fingerprint
    slow, other = _slow_and_other(client, prefix)
    stats = CountingStats()
    mws = [FetchOnceMiddleware(s, fp, redis=client, key=fetched) for s in (stats, CountingStats())]
    if bloom:
        for mw in mws:
            mw.bloom = RedisBloomFilter(client, f"{fetched}:bloom", capacity=1000)
    mw_slow, mw_other = mws
    mw_slow.lease, mw_other.lease = slow, other
    client.zadd(slow.frontier_key, {_entry("http://a.cn/1"): 0})
    _, lid = slow.pop()
    _kill(slow)
    assert other.reclaim() == 1
    with pytest.raises(IgnoreRequest, match="reclaimed"):
        mw_slow.process_request(Request("http://a.cn/1", meta={LEASE: lid}))
    assert stats.values["topicrawl/frontier/lease_lost_unsent"] == 1
    _, lid2 = other.pop()
    assert mw_other.process_request(Request("http://a.cn/1", meta={LEASE: lid2})) is None


@pytest.mark.redis
@pytest.mark.parametrize("kind", ["recovered", "retry"])
def test_a_slow_workers_request_past_the_fetch_once_set_is_not_sent_after_its_reclaim(crawl,
                                                                                      kind):
    """A request that passes the fetch-once set (a copy a reclaimer queued again after it was
    sent, or a retry) and whose lease was reclaimed before the slow worker sent it: the copy
    queued again passes the fetch-once set too, so both would be fetched and counted (the
    killed-worker test, stop case under load: the budget counted 226 for 222 stored pages).
    The slow worker's copy is refused; the other worker's is fetched and counted once."""
    from scrapy import Request
    from scrapy.exceptions import IgnoreRequest
    from scrapy.utils.test import get_crawler

    from crawler.lease import LEASE
    from crawler.middlewares import FetchOnceMiddleware
    from crawler.spiders.topic import TopicSpider

    client, prefix = crawl
    fetched = f"{prefix}:topic:fetched"
    fp = get_crawler(TopicSpider).request_fingerprinter.fingerprint
    slow, other = _slow_and_other(client, prefix)
    stats = CountingStats()
    mw_slow, mw_other = (FetchOnceMiddleware(s, fp, redis=client, key=fetched)
                         for s in (stats, CountingStats()))  # fmt: skip
    mw_slow.lease, mw_other.lease = slow, other
    url = "http://a.cn/1"
    meta = {RECOVERED: url} if kind == "recovered" else {"retry_times": 1}
    client.zadd(slow.frontier_key, {_entry(url, **meta): 0})
    _, lid = slow.pop()
    _kill(slow)
    assert other.reclaim() == 1
    slow.beat()
    _, lid2 = other.pop()  # the copy queued again, popped by the other worker
    assert mw_other.process_request(Request(url, meta={**meta, LEASE: lid2})) is None  # sent
    with pytest.raises(IgnoreRequest, match="reclaimed"):
        mw_slow.process_request(Request(url, meta={**meta, LEASE: lid}))
    assert stats.values["topicrawl/frontier/lease_lost_unsent"] == 1
    assert other.take(lid2, url, count=True, limit=10) == 1
    assert slow.take(lid, url, count=True, limit=10) == -1  # had it been sent: lost, uncounted
    assert int(client.get(slow.pages_key)) == 1


@pytest.mark.redis
@pytest.mark.parametrize("order", ["refused-first", "popped-first"])
def test_a_slow_worker_that_pops_its_reclaimed_request_again_keeps_the_new_lease(crawl, order):
    """The slow worker had popped request 1 but not sent it; a reclaimer queued it again as
    it was (the same entry: the same lease id) and the slow worker itself pops it again. Its
    first copy, refused (before or after the second pop), must neither end the new lease
    (its errback ran after the second pop in test_a_killed_workers_share_is_finished_by_the_
    others, stop case: the new copy's page was dropped as the lease's loser, lost) nor be
    sent under it; the second copy is sent and counted."""
    from scrapy import Request
    from scrapy.exceptions import IgnoreRequest
    from scrapy.utils.test import get_crawler

    from crawler.lease import LEASE_POP, LeaseMiddleware
    from crawler.middlewares import FetchOnceMiddleware
    from crawler.spiders.topic import TopicSpider

    client, prefix = crawl
    fp = get_crawler(TopicSpider).request_fingerprinter.fingerprint
    slow, other = _slow_and_other(client, prefix)
    stats = CountingStats()
    mw = FetchOnceMiddleware(stats, fp, redis=client, key=f"{prefix}:topic:fetched")
    mw.lease = slow
    client.zadd(slow.frontier_key, {_entry("http://a.cn/1"): 0})
    _, lid = slow.pop()
    first: dict = {}
    slow.stamp(lid, first)
    _kill(slow)
    assert other.reclaim() == 1
    slow.beat()  # it goes on

    def refuse() -> None:
        with pytest.raises(IgnoreRequest, match="reclaimed"):
            mw.process_request(Request("http://a.cn/1", meta=dict(first)))

    if order == "refused-first":
        refuse()
    _, lid2 = slow.pop()
    assert lid2 == lid  # the same entry again
    second: dict = {}
    slow.stamp(lid2, second)
    assert second[LEASE_POP] != first[LEASE_POP]
    if order == "popped-first":  # the first copy reaches the fetch-once check only now
        refuse()
    LeaseMiddleware(slow)._done(request=Request("http://a.cn/1", meta=dict(first)))  # its end
    assert client.hexists(slow.inflight, lid)
    assert mw.process_request(Request("http://a.cn/1", meta=dict(second))) is None  # sent
    assert slow.take(lid2, "http://a.cn/1", count=True, limit=10) == 1
    assert stats.values["topicrawl/frontier/lease_lost_unsent"] == 1


@pytest.mark.redis
def test_a_slow_workers_retry_replaces_its_reclaimed_copy_once(crawl):
    """A slow worker retries a timed-out download whose lease was reclaimed meanwhile: the
    retry replaces the copy queued by the reclaimer (one fetch, not two); when another worker
    popped that copy already, the retry is dropped. A request the slow worker sent only after
    the reclaim is its own (the plain copy queued then is refused by the fetch-once set)."""
    client, prefix = crawl
    slow, other = _slow_and_other(client, prefix)
    fetched = f"{prefix}:topic:fetched"
    client.zadd(
        slow.frontier_key,
        {
            _entry("http://a.cn/1", 3): -3,
            _entry("http://a.cn/2", 2): -2,
            _entry("http://a.cn/3"): 0,
        },
    )
    (_, lid1), (_, lid2), (_, lid3) = slow.pop(), slow.pop(), slow.pop()
    assert slow.send(lid1, fetched, "fp1") and slow.send(lid2, fetched, "fp2")
    _kill(slow)
    assert other.reclaim() == 3 and client.zcard(slow.frontier_key) == 3
    slow.beat()
    retry = _entry("http://a.cn/1", 3, retry_times=1)
    assert slow.push(retry, -3, lid1)  # the reclaimed copy still waited: replaced
    urls = [serialization.loads(m) for m in client.zrange(slow.frontier_key, 0, -1)]
    assert [(u["url"], u["meta"].get("retry_times")) for u in urls][0] == ("http://a.cn/1", 1)
    assert sum(u["url"] == "http://a.cn/1" for u in urls) == 1
    client.zrem(slow.frontier_key, requeued_entry(_entry("http://a.cn/2", 2))[0])  # popped
    assert not slow.push(_entry("http://a.cn/2", 2, retry_times=1), -2, lid2)
    # request 3 was still in the slow worker's download queue: it sends it now, and keeps it
    assert slow.send(lid3, fetched, "fp3")
    assert slow.take(lid3, "http://a.cn/3", count=True, limit=10) == 1
    assert not any(serialization.loads(m)["url"] == "http://a.cn/3"
                   for m in client.zrange(slow.frontier_key, 0, -1))  # fmt: skip


@pytest.mark.redis
def test_no_reclaim_for_a_lease_period_after_an_outage_this_worker_saw(crawl):
    """Through a Redis outage every worker's heartbeat lapses: a worker that saw the outage
    leaves the others one lease period to refresh theirs (two live workers reclaiming each
    other fetched pages twice in the 30 s outage test)."""
    import redis
    from faults.redis_outage import FlakyRedis

    client, prefix = crawl
    holder = _worker(client, prefix, "holder")
    other = _worker(client, prefix, "other", seconds=1.0)
    client.zadd(holder.frontier_key, {_entry("http://a.cn/1"): 0})
    assert holder.pop() is not None
    flaky = FlakyRedis(client)
    other.client = flaky
    flaky.down = True
    with pytest.raises(redis.ConnectionError):
        other.beat()
    assert other.reclaim() == 0  # still down
    flaky.down = False
    _kill(holder)  # its heartbeat lapsed during the outage (alive, about to beat again)
    other.beat()
    assert other.reclaim() == 0  # within a lease period of the outage's end
    time.sleep(1.1)
    assert other.reclaim() == 1  # a heartbeat still missing a lease period later: dead


@pytest.mark.redis
def test_a_take_sent_again_after_a_lost_reply_counts_once(crawl):
    """A Redis outage can lose the reply of a take that Redis executed; the page's callback
    sends it again (TopicSpider.take_shared_page): the same number, counted once."""
    client, prefix = crawl
    lease = _worker(client, prefix, "w")
    client.zadd(lease.frontier_key, {_entry("http://a.cn/1"): 0})
    _, lid = lease.pop()
    assert lease.take(lid, "http://a.cn/1", count=True, limit=10) == 1
    assert lease.take(lid, "http://a.cn/1", count=True, limit=10) == 1
    assert int(client.get(lease.pages_key)) == 1


# -- the reclaimer hands a counted page's count on with the request it queues again ------------
@pytest.mark.redis
def test_a_reclaimed_counted_page_never_overshoots_the_shared_budget(crawl):
    """Issue 11 item 4: the slow worker counts page 1 (the budget, 1, is spent) and its
    heartbeat lapses; the reclaimer queues page 1 again; worker x pops that copy; worker y
    counts page 2, which it held already; x counts its copy; the slow worker stores page 1.
    Before: the reclaimer gave the count back, so y counted page 2 and x's copy was over budget
    while the slow worker stored page 1 uncounted (2 pages stored, counter 1). Now the count
    goes on with the queued copy: y's page 2 is over budget, x's copy is page 1 (one row)."""
    client, prefix = crawl
    slow, other = _slow_and_other(client, prefix)
    x, y = _worker(client, prefix, "x"), _worker(client, prefix, "y")
    client.zadd(slow.frontier_key, {_entry("http://a.cn/2", 1): -1, _entry("http://a.cn/1"): 0})
    _, lid_q = y.pop(limit=1)
    _, lid_p = slow.pop(limit=1)
    assert slow.take(lid_p, "http://a.cn/1", count=True, limit=1) == 1  # the budget is spent
    _kill(slow)
    assert other.reclaim() == 1
    popped = x.pop(limit=1)  # the reclaimed copy of page 1
    assert popped is not None and serialization.loads(popped[0])["url"] == "http://a.cn/1"
    stored: list[str] = []
    for lease, lid, url in ((y, lid_q, "http://a.cn/2"), (x, popped[1], "http://a.cn/1")):
        if lease.take(lid, url, count=True, limit=1) > 0:
            lease.stored([url])
            stored.append(url)
        else:
            lease.requeue_own(lid)  # over budget: back to the frontier for a larger one
    slow.beat()
    slow.stored(["http://a.cn/1"])  # the slow worker's write of its copy
    stored.append("http://a.cn/1")
    pages = set(stored)
    assert len(pages) <= 1 and int(client.get(slow.pages_key)) == len(pages) == 1
    assert not client.exists(f"{prefix}:topic:precounted")


def _counted_and_reclaimed(client, prefix: str, limit: int = 1):
    """The slow worker counts page 1 (the budget ``limit`` spent when 1) and is reclaimed by
    ``other``: (slow, other, slow's lease id). Page 2 waits in the frontier."""
    slow, other = _slow_and_other(client, prefix)
    client.zadd(slow.frontier_key, {_entry("http://a.cn/1", 1): -1, _entry("http://a.cn/2"): 0})
    _, lid = slow.pop(limit=limit)
    assert slow.take(lid, "http://a.cn/1", count=True, limit=limit) == 1
    _kill(slow)
    assert other.reclaim() == 1 and other.precounted() == 1
    assert int(client.get(slow.pages_key)) == 1
    return slow, other, lid


@pytest.mark.redis
def test_a_reclaimed_copy_taken_by_another_worker_counts_no_second_time(crawl):
    client, prefix = crawl
    slow, other, _ = _counted_and_reclaimed(client, prefix, limit=1)
    x = _worker(client, prefix, "x")
    _, lid = x.pop(limit=1)  # the budget is spent: the counted copy still goes
    assert x.pop(limit=1) is None  # page 2 does not
    assert x.take(lid, "http://a.cn/1", count=True, limit=1) == 1  # no INCR, no limit check
    assert x.take(lid, "http://a.cn/1", count=True, limit=1) == 1  # sent again: counted once
    assert int(client.get(slow.pages_key)) == 1 and x.precounted() == 0
    x.stored(["http://a.cn/1"])
    assert int(client.get(slow.pages_key)) == 1 and client.hlen(x.inflight) == 0


@pytest.mark.redis
def test_a_reclaimed_copy_replaced_by_a_retry_gives_its_count_back(crawl):
    """The worker that popped the counted copy sends a retry of it instead: the count goes
    back (the retry is counted when its page comes)."""
    client, prefix = crawl
    slow, other, _ = _counted_and_reclaimed(client, prefix, limit=10)
    _, lid = other.pop(limit=10)
    assert other.push(_entry("http://a.cn/1", 1, retry_times=1), -1, lid)
    assert int(client.get(slow.pages_key)) == 0 and other.precounted() == 0


@pytest.mark.redis
def test_a_reclaim_of_the_worker_that_popped_a_counted_copy_carries_its_count(crawl):
    """Worker x pops the counted copy of page 1, sends it to download and stops answering
    before counting it; z reclaims x: the copy goes back marked sent (another entry, another
    lease id) and the count goes with it. x, only slow, counts its page after all: it takes
    the copy back from the frontier with that count, counting nothing twice."""
    client, prefix = crawl
    slow, other, _ = _counted_and_reclaimed(client, prefix, limit=1)
    first = client.hkeys(other.precounted_key)
    x = _worker(client, prefix, "x")
    data, lid = x.pop(limit=1)
    assert x.send(lid, f"{prefix}:topic:fetched", "fp1")
    _kill(x)
    stats = CountingStats()
    z = _worker(client, prefix, "z", stats)
    z.stored_check = lambda urls: set()
    assert z.reclaim() == 1
    again = requeued_entry(data, sent=True)[0]
    assert again != data and client.zscore(z.frontier_key, again) is not None
    marks = client.hgetall(z.precounted_key)
    assert list(marks) != first and marks == {_sha1(again).encode(): again}
    assert stats.values["topicrawl/frontier/recovered_count_carried"] == 1
    assert int(client.get(slow.pages_key)) == 1
    x.beat()  # x was only slow: it counts its page now
    assert x.take(lid, "http://a.cn/1", count=True, limit=1) == 1
    assert int(client.get(slow.pages_key)) == 1 and z.precounted() == 0
    assert client.zscore(z.frontier_key, again) is None
    x.stored(["http://a.cn/1"])
    assert int(client.get(slow.pages_key)) == 1 and client.hlen(x.inflight) == 0


@pytest.mark.redis
def test_a_slow_worker_storing_its_page_takes_its_copy_back_and_counts_nothing_extra(crawl):
    client, prefix = crawl
    slow, other, _ = _counted_and_reclaimed(client, prefix, limit=1)
    slow.beat()
    assert slow.stored(["http://a.cn/1"]) == 1 and slow.taken_back == 1
    assert int(client.get(slow.pages_key)) == 1 and other.precounted() == 0
    assert [serialization.loads(m)["url"] for m in client.zrange(slow.frontier_key, 0, -1)] == [
        "http://a.cn/2"
    ]
    assert other.pop(limit=1) is None  # the budget is spent by the stored page


@pytest.mark.redis
@pytest.mark.parametrize("end", ["fails", "breaks"])
def test_a_copy_failing_after_the_slow_workers_write_keeps_the_stored_pages_count(crawl, end):
    """Worker x pops the counted copy of page 1; the slow worker stores its own copy (the
    database has page 1); x's copy then fails for good (or breaks once counted): its count is
    the stored page's and stays. Without the database's word it would go back: 1 page stored,
    counter 0, and the budget would let one page too many in."""
    client, prefix = crawl
    slow, other, _ = _counted_and_reclaimed(client, prefix, limit=1)
    x = _worker(client, prefix, "x")
    database: set[str] = set()
    x.stored_check = lambda urls: {u for u in urls if u in database}
    _, lid = x.pop(limit=1)
    slow.beat()
    assert slow.stored(["http://a.cn/1"]) == 1 and slow.taken_back == 0  # x has the copy
    database.add("http://a.cn/1")
    if end == "fails":
        x.release(lid)
    else:
        assert x.take(lid, "http://a.cn/1", count=True, limit=1) == 1
        x.uncount(lid, count=True)
        x.release(lid)  # the callback is done (LeaseMiddleware)
    assert int(client.get(slow.pages_key)) == 1 and x.precounted() == 0
    assert client.hlen(x.inflight) == 0 and x.pop(limit=1) is None


def _sha1(data: bytes) -> str:
    import hashlib

    return hashlib.sha1(data).hexdigest()


# -- the store-claim: a slow worker's write against a copy's give-back (issue 11 item 4) -------
class _Database:
    """The run's pages as the store writes them; ``during`` runs inside the next write,
    before it commits (the moment another worker may look and not find the page)."""

    def __init__(self) -> None:
        self.pages: set[str] = set()
        self.during: Callable[[], None] | None = None

    def save_crawl_batch(self, run_id: int, rows: list[dict]) -> int:
        during, self.during = self.during, None
        if during is not None:
            during()
        self.pages |= {row["url"] for row in rows}
        return 0

    def complete_page_urls(self, run_id: int, urls: list[str]) -> set[str]:
        return {u for u in urls if u in self.pages}


def _writer_of(lease: WorkerLease, database: _Database, limit: int):
    """The store's writer for ``lease`` (StorePipeline._write_batch: claim, write, leases end)."""
    from crawler.pipelines import StorePipeline

    pipe = StorePipeline(None)
    pipe.store, pipe.run_id, pipe.lease = database, 1, lease
    pipe._lease_counts, pipe._lease_limit = True, limit
    lease.stored_check = pipe._stored_urls
    return lambda *urls: pipe._write_batch([{"url": u, "accepted": True} for u in urls], [])


def _reclaimed_and_popped(client, prefix: str, database: _Database, limit: int = 1):
    """The slow worker counts page 1 (budget ``limit``), its heartbeat lapses, the reclaimer
    queues page 1 again with the count handed on and worker x pops that copy; the slow worker
    is alive again. Page 2 waits in the frontier. (slow, x, x's lease id, write of slow)"""
    slow, other, _ = _counted_and_reclaimed(client, prefix, limit=limit)
    x = _worker(client, prefix, "x")
    x.stored_check = lambda urls: database.complete_page_urls(1, urls)
    popped = x.pop(limit=limit)
    assert popped is not None and serialization.loads(popped[0])["url"] == "http://a.cn/1"
    slow.beat()
    return slow, x, popped[1], _writer_of(slow, database, limit)


def _end_without_page(x: WorkerLease, lid: str, end: str) -> None:
    """x's copy fails for good (``fails``), or breaks once counted under the mark (``breaks``;
    ``breaks busy``: while x also holds another counted page awaiting its write)."""
    if end.startswith("breaks"):
        assert x.take(lid, "http://a.cn/1", count=True, limit=1) == 1
        if end == "breaks busy":
            x._counted["http://a.cn/9"] = "another-lease"  # counted after page 1
        x.uncount(lid, count=True)
    x.release(lid)  # the callback is done (LeaseMiddleware)


@pytest.mark.redis
@pytest.mark.parametrize("end", ["fails", "breaks", "breaks busy"])
def test_a_slow_workers_write_landing_after_the_copys_database_check_keeps_the_budget(crawl, end):
    """The window of issue 11 item 4, step by step: x's copy of page 1 ends without a page
    while the slow worker's write of page 1 is under way, after it decided to write and before
    it commits (x asks the database: not there yet). Before: x gave the count back, the write
    landed, and worker y then counted page 2 in the freed place: 2 pages stored, budget 1. Now
    the slow worker's store-claim (made before its write) keeps the count: y gets nothing."""
    client, prefix = crawl
    database = _Database()
    slow, x, lid, write = _reclaimed_and_popped(client, prefix, database)
    database.during = lambda: _end_without_page(x, lid, end)
    write("http://a.cn/1")
    assert database.pages == {"http://a.cn/1"}
    y = _worker(client, prefix, "y")
    popped = y.pop(limit=1)
    if popped is not None:  # the budget looked free: y counts and stores page 2
        if y.take(popped[1], "http://a.cn/2", count=True, limit=1) > 0:
            database.pages.add("http://a.cn/2")
    assert len(database.pages) == int(client.get(slow.pages_key)) == 1, database.pages
    assert client.hget(slow.handed_key, "http://a.cn/1") == b"s"  # stored: its count stays
    assert not client.exists(slow.claim_key("http://a.cn/1"))


@pytest.mark.redis
@pytest.mark.parametrize("spent", [False, True])
def test_a_slow_worker_whose_count_went_back_counts_again_or_does_not_write(crawl, spent):
    """x's copy of page 1 failed before the slow worker's write (the count went back, the
    database had no page 1 then). The slow worker's claim sees it: it counts page 1 afresh
    under the budget, or, when worker y has counted page 2 in the freed place, does not write
    page 1 (before: it wrote page 1 uncounted, 2 pages for a budget of 1)."""
    client, prefix = crawl
    database = _Database()
    slow, x, lid, write = _reclaimed_and_popped(client, prefix, database)
    x.release(lid)
    assert int(client.get(slow.pages_key)) == 0
    if spent:
        y = _worker(client, prefix, "y")
        _, lid2 = y.pop(limit=1)
        assert y.take(lid2, "http://a.cn/2", count=True, limit=1) == 1
        database.pages.add("http://a.cn/2")
    write("http://a.cn/1")
    assert len(database.pages) == int(client.get(slow.pages_key)) == 1
    assert database.pages == {"http://a.cn/2" if spent else "http://a.cn/1"}
    assert (slow.dropped, slow.recounted) == ((1, 0) if spent else (0, 1))
    assert client.hlen(slow.inflight) == 0 and not client.exists(slow.claim_key("http://a.cn/1"))


@pytest.mark.redis
@pytest.mark.parametrize("written", [False, True])
def test_a_worker_dying_between_its_claim_and_its_leases_end_loses_no_count(crawl, written):
    """The slow worker claims page 1 and dies before its write (or after it, before its
    leases end); x's copy fails meanwhile: its count is held for the claim, not given back.
    Once the claim lapses a reclaim settles it: given back when the database has no page 1,
    kept when it has (never lost, never twice; a settle sent again changes nothing)."""
    client, prefix = crawl
    database = _Database()
    slow, x, lid, _ = _reclaimed_and_popped(client, prefix, database)
    slow.claim_ms = 1000
    assert slow.storing(["http://a.cn/1"], limit=1) == set()
    _end_without_page(x, lid, "fails")  # during the write: the database has no page 1 yet
    if written:
        database.pages.add("http://a.cn/1")  # committed, then killed before lease.stored
    _kill(slow)
    assert int(client.get(slow.pages_key)) == 1
    assert client.hget(slow.handed_key, "http://a.cn/1") == b"p"
    assert x.precounted(waiting=True) == 1  # an idle worker waits for it
    z = _worker(client, prefix, "z")
    z.stored_check = lambda urls: database.complete_page_urls(1, urls)
    assert z.settle() == 0  # the claim still lives
    time.sleep(1.1)
    z.reclaim()  # settles it too
    assert int(client.get(slow.pages_key)) == len(database.pages) == int(written)
    assert z.settle() == 0 and int(client.get(slow.pages_key)) == int(written)
    assert x.precounted(waiting=True) == 0


def _sent_twice(lease: WorkerLease, *names: str) -> None:
    """redis-py sends a command again after a connection error: each of these scripts runs
    twice, and the second reply is the one the worker sees."""
    for name in names:
        script = lease._scripts[name]
        lease._scripts[name] = lambda script=script, **kw: (script(**kw), script(**kw))[1]


@pytest.mark.redis
def test_a_claim_a_give_back_and_a_writes_end_sent_again_count_once(crawl):
    """x's give-back, the slow worker's claim that counts page 1 afresh and the end of its
    write, each run twice: page 1 is counted once."""
    client, prefix = crawl
    database = _Database()
    slow, x, lid, write = _reclaimed_and_popped(client, prefix, database, limit=10)
    _sent_twice(x, "release")
    _sent_twice(slow, "storing", "stored")
    x.release(lid)
    assert int(client.get(slow.pages_key)) == 0
    write("http://a.cn/1")
    assert int(client.get(slow.pages_key)) == 1 and database.pages == {"http://a.cn/1"}
    assert slow.late == 0 and client.hlen(slow.inflight) == 0
    assert not client.exists(slow.writes_key)


@pytest.mark.redis
def test_a_claim_that_lapses_during_the_write_counts_the_late_page(crawl):
    """The remaining caveat: the slow worker stalls in its write past its claim's time to
    live; x's copy then gives the count back and y counts page 2. The write lands: the page is
    counted again when its lease ends (the counter says what is stored, 2 for a budget of 1),
    and ``stored_past_claim`` says so."""
    client, prefix = crawl
    database = _Database()
    slow, x, lid, write = _reclaimed_and_popped(client, prefix, database)
    slow.claim_ms = 1000
    y = _worker(client, prefix, "y")

    def stall() -> None:
        time.sleep(1.1)
        _end_without_page(x, lid, "fails")
        _, lid2 = y.pop(limit=1)
        assert y.take(lid2, "http://a.cn/2", count=True, limit=1) == 1
        database.pages.add("http://a.cn/2")

    database.during = stall
    write("http://a.cn/1")
    assert len(database.pages) == int(client.get(slow.pages_key)) == 2 and slow.late == 1
