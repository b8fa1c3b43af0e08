"""The store writer: memory, then spool, in order; nothing lost when the database refuses."""

from __future__ import annotations

import time

from crawler.storewriter import StoreWriter
from topicrawl.errors import StorageError


def rows(start: int, n: int) -> list[dict]:
    return [{"url": f"http://a.example/{i}", "accepted": True} for i in range(start, start + n)]


def test_batches_spool_past_memory_and_are_written_in_order_after_an_outage(tmp_path):
    written: list[str] = []
    down = {"on": True}

    def write(batch, replaced):
        if down["on"]:
            raise StorageError("database down")
        written.extend(r["url"] for r in batch)

    w = StoreWriter(write, run_id=1, spool_path=tmp_path / "spool.jsonl", memory_pages=4,
                    spool_pages=6, retry_pause=0.05)  # fmt: skip
    for k in range(5):
        w.put(rows(2 * k, 2), [])
    assert (tmp_path / "spool.jsonl").exists() and w.spooled > 0
    assert w.pending == 10 and w.full
    assert w.wait_drained(0.3) is False  # the database refuses: gives up, keeps everything
    down["on"] = False
    assert w.wait_drained(5.0) is True
    assert written == [f"http://a.example/{i}" for i in range(10)], "in order, once each"
    assert w.pending == 0 and not (tmp_path / "spool.jsonl").exists()
    w.stop()


def test_stop_hands_back_every_unwritten_page(tmp_path):
    def write(batch, replaced):
        raise StorageError("database down")

    w = StoreWriter(write, run_id=1, spool_path=tmp_path / "s.jsonl", memory_pages=3,
                    spool_pages=100, retry_pause=0.05)  # fmt: skip
    for k in range(4):
        w.put(rows(3 * k, 3), [{"url": "x", "of": "y", "method": "exact", "score": 1.0}])
    time.sleep(0.2)
    left = w.stop()
    urls = [r["url"] for batch, _ in left for r in batch]
    assert sorted(urls) == sorted(f"http://a.example/{i}" for i in range(12))
    assert len(urls) == 12 and not (tmp_path / "s.jsonl").exists()
