"""The store pipeline's JOBDIR page journal (crawler.journal): bounded on disk in a busy
crawl, every acknowledged page in the database or in a live segment, and a resume that
streams the segments and stores nothing twice."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from test_store import FailingStore, Stats, page

from crawler.journal import LEGACY_JOURNAL_FILE, journal_bytes, journal_segments
from crawler.pipelines import StorePipeline
from models.store import Store, spill_line, spill_row


class Spider:
    """What the store pipeline reads of a spider."""

    name = "topic"

    def __init__(self) -> None:
        self.recovered_urls: list[str] = []


def url(i: int) -> str:
    return f"http://news.example.cn/{i}.html"


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'j.db'}"
    return request.getfixturevalue("pg_url")


def journaled_urls(jobdir: Path) -> set[str]:
    """URLs in the journal files now (a file deleted while being listed is skipped)."""
    found = set()
    for path in journal_segments(jobdir):
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            continue
        found.update(json.loads(line)["url"] for line in text.splitlines() if line.strip())
    return found


def open_pipe(db: str, jobdir: Path, batch_size: int = 5, **kw) -> tuple[StorePipeline, Spider]:
    pipe = StorePipeline(db, batch_size=batch_size, jobdir=str(jobdir), clean=False,
                         stats=Stats(), **kw)  # fmt: skip
    spider = Spider()
    pipe.open_spider(spider)
    return pipe, spider


def test_a_busy_crawls_journal_stays_bounded_and_covers_every_page(db_url, tmp_path):
    """The buffer is never empty (a page arrives before each write ends, as in a crawl that
    never idles): segments are deleted as their batches are committed, so the journal holds
    about the pages not yet written, while every acknowledged page is always either in the
    database or in a journal file (what a kill -9 at that instant would find)."""
    jobdir = tmp_path / "job"
    pipe, spider = open_pipe(db_url, jobdir)
    store = Store.from_url(db_url, migrate=False)
    peak = line = 0
    n = 300
    for i in range(n):
        pipe.process_item(page(url(i)), spider)
        if i == 0:  # a page's journal line, as the pipeline keeps the row
            line = journal_bytes(jobdir) + 16
        assert pipe.buffer or i % 5 == 4, "the busy crawl: a page waits all along"
        peak = max(peak, journal_bytes(jobdir))
        if i % 25 == 24:  # what a kill -9 now would leave: nothing lost
            journaled = journaled_urls(jobdir)  # before the database: a deleted segment
            stored = store.page_urls(pipe.run_id)  # was committed first
            assert {url(k) for k in range(i + 1)} <= journaled | stored, i
        if i % 5 == 3:  # let the writer catch up with all but the buffer
            deadline = time.monotonic() + 10
            while pipe.writer is not None and pipe.writer.pending and time.monotonic() < deadline:
                time.sleep(0.01)
    # the pages not yet written are at most the buffer and one or two batches in the writer
    assert peak <= 3 * 5 * line, f"journal peaked at {peak} bytes"
    assert pipe.journal is not None and pipe.journal.deleted >= n // 5 - 2
    assert len(journal_segments(jobdir)) <= 3
    pipe.close_spider(spider)
    assert journal_segments(jobdir) == [], "a clean close leaves no journal"
    assert store.count_pages(pipe.run_id) == n


def test_a_kill_between_commit_and_segment_deletion_stores_nothing_twice(db_url, tmp_path):
    """Killed after the batches were committed but before their segments were deleted, and
    with three pages never written: the resume stores those three, skips the rest, and does
    not put back a page that a later batch took out of the corpus (replaced)."""
    jobdir = tmp_path / "job"
    pipe, spider = open_pipe(db_url, jobdir)
    assert pipe.journal is not None
    pipe.journal.written = lambda: None  # the kill comes before any segment is deleted
    for i in range(10):
        pipe.process_item(page(url(i)), spider)
    pipe.document_replaced(url(1), url(8), "spotsigs", 0.9)  # url(1) leaves the corpus
    for i in range(10, 23):
        pipe.process_item(page(url(i)), spider)
    pipe.writer.wait_drained(5)
    run = pipe.run_id
    store = Store.from_url(db_url, migrate=False)
    assert store.count_pages(run) == 20 and store.count_documents(run) == 19
    pipe.writer.stop()  # kill -9: no close, the files stay as they are
    pipe.journal._close_file()
    assert len(journal_segments(jobdir)) == 5  # 4 written batches, 3 pages never written

    again, spider2 = open_pipe(db_url, jobdir)
    assert again.run_id == run
    stats = again.stats.values
    assert stats["topicrawl/storage/journal_replayed"] == 3
    assert stats["topicrawl/storage/journal_already_stored"] == 20
    assert journal_segments(jobdir) == [], "replayed segments are deleted"
    assert store.count_pages(run) == 23
    assert store.count_documents(run) == 22, "the replaced page stays out of the corpus"
    pages = {p.url: p for p in store.iter_pages(run)}
    assert sorted(pages) == sorted(url(i) for i in range(23))
    assert not pages[url(1)].accepted
    again.close_spider(spider2)


def test_an_older_versions_single_journal_is_replayed_in_batches_and_deleted(tmp_path, monkeypatch):
    """The single ``topicrawl-unwritten.jsonl`` of a JOBDIR from before segments is read on
    resume, streamed ``batch_size`` pages at a time (a line cut by the kill is skipped)."""
    db = f"sqlite:///{tmp_path / 'l.db'}"
    jobdir = tmp_path / "job"
    first, spider = open_pipe(db, jobdir)
    run = first.run_id
    first.close_spider(spider)
    lines = [spill_line(run, dict(page(url(i)))) for i in range(12)]
    (jobdir / LEGACY_JOURNAL_FILE).write_text("".join(lines) + lines[0][:40], encoding="utf-8")
    (jobdir / f"spool-run{run}-99999.jsonl").write_text(lines[0])  # a killed writer's spool
    store = Store.from_url(db, migrate=False)
    store.reopen_run(run)  # killed, not closed
    sizes: list[int] = []
    save = Store.save_crawl_batch

    def recorded(self, run_id, rows):
        sizes.append(len(rows))
        return save(self, run_id, rows)

    monkeypatch.setattr(Store, "save_crawl_batch", recorded)
    again, spider2 = open_pipe(db, jobdir)
    monkeypatch.undo()
    assert sizes == [5, 5, 2]
    assert not (jobdir / LEGACY_JOURNAL_FILE).exists()
    assert not list(jobdir.glob("spool-run*.jsonl"))
    assert store.count_pages(run) == 12
    again.close_spider(spider2)


def test_spilled_pages_leave_the_journal(tmp_path):
    """The database stays down to the end: the pages go to the spill file and their journal
    segments are deleted (the spill file keeps them)."""
    db = f"sqlite:///{tmp_path / 's.db'}"
    jobdir = tmp_path / "job"
    pipe = StorePipeline(db, batch_size=2, spill_dir=str(tmp_path / "spill"), jobdir=str(jobdir),
                         clean=False, close_wait=0.5, stats=Stats())  # fmt: skip
    pipe.open_spider(Spider())
    pipe.store = FailingStore(pipe.store)
    for i in range(5):
        pipe.process_item(page(url(i)))
    assert journaled_urls(jobdir) == {url(i) for i in range(5)}
    pipe.close_spider()
    spilled = list((tmp_path / "spill").glob("*.jsonl"))
    assert len(spilled) == 1
    rows = [spill_row(line)[1]["url"] for line in spilled[0].read_text().splitlines()]
    assert sorted(rows) == sorted(url(i) for i in range(5))
    assert journal_segments(jobdir) == []


def test_journal_bytes_counts_a_segment_deleted_while_read_as_0(tmp_path, monkeypatch):
    """The store's writer thread deletes a committed segment at any time: between the
    listing and the stat (a CI failure of the busy-crawl test above), it counts 0."""
    import crawler.journal as journal

    class Deleted(type(tmp_path)):  # listed, and there when asked; gone at the stat
        def exists(self, *args, **kwargs):
            return True

        def stat(self, *args, **kwargs):
            raise FileNotFoundError(str(self))

    kept = tmp_path / "topicrawl-unwritten.000001.jsonl"
    kept.write_text("x" * 10)
    gone = Deleted(tmp_path / "topicrawl-unwritten.000002.jsonl")
    monkeypatch.setattr(journal, "journal_segments", lambda directory: [kept, gone])
    assert journal_bytes(tmp_path) == 10
