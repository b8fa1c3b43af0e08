"""Memory bounds of a long crawl: malloc_trim every minute, the reservoir's compact pages."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

from crawler.memory import GcFreeze, MallocTrim, malloc_trim
from relevance.learning.selftrain import SelfTrainingPageModel, bag, bag_counts


def test_malloc_trim_counts_its_calls():
    calls: list[int] = []
    crawler = get_crawler(settings_dict={"TOPICRAWL_MALLOC_TRIM_INTERVAL": 5})
    ext = MallocTrim(crawler.stats, calls.append, 5)
    assert ext.run() >= 0.0
    assert calls == [0]
    assert crawler.stats.get_value("topicrawl/memory/trims") == 1


def test_malloc_trim_off_at_zero():
    crawler = get_crawler(settings_dict={"TOPICRAWL_MALLOC_TRIM_INTERVAL": 0})
    with pytest.raises(NotConfigured):
        MallocTrim.from_crawler(crawler)


def test_gc_freeze_moves_the_start_up_heap_out_of_the_collectors_passes():
    import gc

    crawler = get_crawler(settings_dict={})
    ext = GcFreeze.from_crawler(crawler)
    kept = {"held": [1, 2, 3]}
    gc.collect()
    assert any(o is kept for o in gc.get_objects(generation=2))
    try:
        frozen = ext.spider_opened()
        assert frozen == gc.get_freeze_count() > 0
        assert not any(o is kept for o in gc.get_objects(generation=2))  # permanent now
        assert crawler.stats.get_value("topicrawl/memory/gc_frozen") == frozen
        assert crawler.stats.get_value("topicrawl/memory/gc_freeze_s") >= 0.0
    finally:
        gc.unfreeze()
    assert any(o is kept for o in gc.get_objects(generation=2))


def test_gc_freeze_off():
    crawler = get_crawler(settings_dict={"TOPICRAWL_GC_FREEZE": False})
    with pytest.raises(NotConfigured):
        GcFreeze.from_crawler(crawler)


@pytest.mark.skipif(malloc_trim() is None, reason="not glibc")
def test_malloc_trim_returns_freed_heap():
    """In a fresh interpreter: a test process that has run others already holds enough
    freed heap for the chunks (CI: RSS 1,411 MB before and after allocating them)."""
    import json
    import subprocess
    import sys

    code = (
        "import json\n"
        "from crawler.memory import malloc_trim, rss_mb\n"
        "before = rss_mb()\n"
        "chunks = [bytearray(50_000 + i) for i in range(4_000)]  # ~200 MB in glibc's heap\n"
        "del chunks[::2]\n"
        "kept = rss_mb()\n"
        "malloc_trim()(0)\n"
        "print(json.dumps([before, kept, rss_mb()]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=Path(__file__).resolve().parent.parent)  # fmt: skip
    before, kept, after = json.loads(out.stdout)
    assert kept > before + 50 and after < kept - 50


def test_bag_round_trip_and_shared_words():
    words = ["经济", "发展", "经济", "会议", "经济"]
    b = bag(words)
    assert bag_counts(b) == Counter(words)
    other = bag(["".join(["经", "济"])])  # a new str equal to 经济
    assert other[0][0] is b[0][0]  # interned: one string however many pages hold the word


def test_reservoir_keeps_bags_and_trains():
    m = SelfTrainingPageModel(retrain_every=4, min_positives=1, min_negatives=1)
    for i in range(12):
        m.observe(["经济", "发展", f"词{i}"] if i % 2 else ["体育", "比赛"], 0.9 if i % 2 else 0.0)
    assert isinstance(m.pages[0][0], tuple) and m.ready
    assert m.terms["经济"][1] > 0 > m.terms["体育"][1]


def test_frontier_queue_page_cache_is_small(tmp_path):
    from scrapy import Request

    from crawler.queues import DurableLifoQueue

    crawler = get_crawler(settings_dict={"TOPICRAWL_QUEUE_CACHE_KB": 64})
    q = DurableLifoQueue(crawler, str(tmp_path / "q"))
    assert q._db.execute("PRAGMA cache_size").fetchone()[0] == -64
    q.push(Request("http://example.cn/a"))
    assert len(q) == 1 and q.pop().url == "http://example.cn/a" and len(q) == 0
    q.close()
