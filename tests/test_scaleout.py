"""Scale-out: two crawler workers share one frontier and dupefilter in Redis (scrapy-redis),
one dedup index in Redis and one database; together they fetch each page once."""

from __future__ import annotations

import json
import re
import subprocess
import time
import uuid

import pytest
from conftest import ROOT, crawl_command, run_crawl

from models.store import Store
from sitegen.server import ServerProcess

KEYWORD = {"TOPICRAWL_LINK_SCORER": "crawler.linkscore.KeywordLinkScorer"}


def _stored(db: str, at_least: int = 10) -> bool:
    try:
        store = Store.from_url(db, migrate=False)
        return store.count_pages(77) >= at_least
    except Exception:  # the first worker has not created the database yet
        return False


def final_stat(log: str, key: str) -> int:
    match = re.search(rf"'{re.escape(key)}': (\d+)", log)
    return int(match.group(1)) if match else 0


@pytest.mark.redis
def test_two_workers_share_the_frontier_and_fetch_each_page_once(
    small_web, proxy, redis_url, tmp_path
):
    import redis

    truth = json.loads((small_web / "ground_truth.json").read_text(encoding="utf-8"))
    seeds = truth["seeds"]["portal"]
    topic = tmp_path / "t.toml"
    # 新闻 is in section and menu anchors: a URL found again under a better anchor is re-queued
    topic.write_text(
        'name = "t"\n[words]\n"政治" = 1.0\n"新闻" = 1.0\n[page]\nthreshold = 0.0\n',
        encoding="utf-8",
    )

    single_db = f"sqlite:///{tmp_path / 'single.db'}"
    single = run_crawl(proxy, seeds, topic, single_db, settings=KEYWORD)
    assert single.returncode == 0, single.stderr[-2000:]
    store = Store.from_url(single_db)
    expected = {p.url for p in store.iter_pages(store.list_runs()[-1].id)}

    prefix = f"topicrawl_test_{uuid.uuid4().hex[:8]}"
    db = f"sqlite:///{tmp_path / 'shared.db'}"
    backend = json.dumps({"type": "redis", "url": redis_url, "namespace": f"{prefix}:dedup"})
    settings = {**KEYWORD, "TOPICRAWL_DEDUP_BACKEND": backend, "CONCURRENT_REQUESTS_PER_DOMAIN": 1}
    slow = ServerProcess(small_web, latency_ms=150)
    logs = []
    try:
        procs = []
        for worker in range(2):
            cmd, env = crawl_command(
                slow.url, seeds, topic, db, args={"run_id": 77}, settings=settings
            )
            env.update(TOPICRAWL_REDIS_URL=redis_url, TOPICRAWL_REDIS_PREFIX=prefix)
            log = tmp_path / f"worker{worker}.log"
            logs.append(log)
            procs.append(
                subprocess.Popen(
                    cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=log.open("w")
                )
            )
            if worker == 0:  # the second worker joins a running crawl with a full frontier
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline and not _stored(db):
                    time.sleep(0.2)
        for proc in procs:
            assert proc.wait(timeout=300) == 0
    finally:
        slow.stop()
        client = redis.Redis.from_url(redis_url)
        keys = list(client.scan_iter(f"{prefix}*"))
        if keys:
            client.delete(*keys)
    texts = [log.read_text() for log in logs]
    fetched = [final_stat(t, "topicrawl/pages/fetched") for t in texts]
    assert all(n > 0 for n in fetched), fetched
    assert all("scrapy_redis.scheduler.Scheduler" in t for t in texts)
    shared = Store.from_url(db)
    assert [r.id for r in shared.list_runs()] == [77]
    urls = [p.url for p in shared.iter_pages(77)]
    assert sum(fetched) == len(urls) == len(set(urls)), "no page was fetched by both workers"
    # links were re-queued in the shared frontier; the shared fetched set kept each URL to
    # one download across both workers
    requeued = sum(final_stat(t, "topicrawl/links/requeued") for t in texts)
    superseded = sum(final_stat(t, "topicrawl/links/requeue_superseded") for t in texts)
    assert requeued > 0 and superseded > 0

    def untrapped(found):  # each worker's trap guard admits its own 30 calendar pages
        return {u for u in found if not any(u.startswith(t) for t in truth["traps"])}

    assert untrapped(urls) == untrapped(expected)
