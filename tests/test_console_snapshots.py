"""CrawlProgress writes the console's live snapshots; a database error is counted, not raised."""

from __future__ import annotations

from pathlib import Path

from scrapy.utils.test import get_crawler

from crawler.extensions import CrawlProgress
from models.orm import RunSnapshot
from models.store import Store


def progress(db_url: str) -> CrawlProgress:
    crawler = get_crawler(settings_dict={"TOPICRAWL_DB_URL": db_url})
    return CrawlProgress(crawler, 1.0, snapshots=True, db_url=db_url)


def test_snapshot_rows_carry_the_progress_and_the_counters(tmp_path: Path):
    db = f"sqlite:///{tmp_path / 'snap.db'}"
    store = Store.from_url(db)
    run = store.start_run("t")
    ext = progress(db)
    ext.crawler.stats.set_value("topicrawl/run_id", run)
    ext.crawler.stats.set_value("topicrawl/links/followed", 12)
    ext.crawler.stats.set_value("scheduler/enqueued", 99)  # not a topicrawl counter
    ext.record({"fetched": 3, "frontier": 7})
    ext.record({"fetched": 5, "frontier": 4})
    with store._session() as s:
        rows = s.query(RunSnapshot).order_by(RunSnapshot.id).all()
    assert [r.stats["fetched"] for r in rows] == [3, 5]
    assert rows[0].run_id == run and rows[0].worker == ext.worker
    assert rows[1].stats["stats"] == {"topicrawl/run_id": run, "topicrawl/links/followed": 12}


def test_no_run_id_yet_writes_nothing(tmp_path: Path):
    ext = progress("postgresql+psycopg://nobody@127.0.0.1:1/none")
    ext.record({"fetched": 1})
    assert ext._store is None


def test_unreachable_database_is_counted_not_raised():
    ext = progress("postgresql+psycopg://nobody@127.0.0.1:1/none")
    ext.crawler.stats.set_value("topicrawl/run_id", 1)
    ext.record({"fetched": 1})
    ext.record({"fetched": 2})
    assert ext.crawler.stats.get_value("topicrawl/progress/snapshot_failed") == 2
