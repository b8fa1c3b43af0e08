"""The JOBDIR page journal's size on disk in a busy crawl, and a resume after a kill (issue 11).

    nice python bench/journal.py [--pages 20000] [--batch 50] [--page-kb 9] [--db-url URL]

The store pipeline (``crawler.pipelines.StorePipeline``, JOBDIR, SQLite by default) takes
``--pages`` pages of ``--page-kb`` kB (HTML and text, half each) as fast as the writer
thread stores them: a page arrives while the previous batch is written, so the buffer is
never empty (the busy crawl that the single-file journal never emptied). The producer waits
when the writer is more than ``TOPICRAWL_STORE_MEMORY_PAGES`` (1000) pages behind, as the
crawl's backpressure would. Printed: the journal's peak size on disk and the bytes journaled
in all (what one never-emptied file would have held), at 10 % and 100 % of the run. Then a
kill -9 is simulated after 10 more batches are committed but before their segments are
deleted, and 5 more never written (the writer stopped, nothing closed), and the resume's
replay is timed, with its
traced Python peak (tracemalloc): it must skip those pages, not store them again. Nothing
is asserted.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from crawler.journal import journal_bytes  # noqa: E402
from crawler.pipelines import StorePipeline  # noqa: E402


class Spider:
    name = "topic"
    recovered_urls: list[str] = []


def page(i: int, kb: float) -> dict:
    body = "时政新闻正文。" * int(kb * 1024 / 21 / 2 or 1)
    url = f"http://news.example.cn/{i}.html"
    return {"url": url, "final_url": url, "host": "news.example.cn", "status": 200,
            "depth": 1, "fetched_at": datetime.now(UTC), "title": f"标题 {i}",
            "html": f"<p>{body}</p>", "text": body, "relevance": 0.9, "accepted": True,
            "duplicate": None}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=20000)
    ap.add_argument("--batch", type=int, default=50, help="TOPICRAWL_DB_BATCH (50)")
    ap.add_argument("--page-kb", type=float, default=9.0)
    ap.add_argument("--db-url", default="")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="topicrawl-journal-"))
    db = args.db_url or f"sqlite:///{work / 'j.db'}"
    jobdir = work / "job"
    pipe = StorePipeline(db, batch_size=args.batch, jobdir=str(jobdir), clean=False)
    pipe.open_spider(Spider())
    peak = total = line = 0
    start = time.monotonic()
    for i in range(args.pages):
        pipe.process_item(page(i, args.page_kb))
        if i == 0:  # a journal line: the row as the pipeline keeps it (its document too)
            line = journal_bytes(jobdir)
        total += line
        while pipe.writer is not None and pipe.writer.pending > pipe.memory_pages:
            time.sleep(0.005)  # the crawl's backpressure
        if i % 10 == 0:
            peak = max(peak, journal_bytes(jobdir))
        if i + 1 in (args.pages // 10, args.pages):
            print(f"{i + 1:>7,} pages: journal peak {peak / 2**20:7.2f} MB, now "
                  f"{journal_bytes(jobdir) / 2**20:6.2f} MB; journaled in all "
                  f"{total / 2**20:8.1f} MB ({time.monotonic() - start:.0f} s)", flush=True)  # fmt: skip
    assert pipe.writer is not None and pipe.journal is not None
    pipe.writer.wait_drained(30)
    pipe.journal.written = lambda: None  # type: ignore[method-assign]  # the kill comes now
    extra = [page(args.pages + k, args.page_kb) for k in range(10 * args.batch)]
    for item in extra:
        pipe.process_item(item)
    pipe.writer.wait_drained(30)
    pipe.writer.stop()  # the writer is dead: the next 5 batches are never written
    for k in range(5 * args.batch):
        pipe.process_item(page(args.pages + len(extra) + k, args.page_kb))
    pipe.journal._close_file()
    left = journal_bytes(jobdir)
    tracemalloc.start()
    t0 = time.monotonic()
    again = StorePipeline(db, batch_size=args.batch, jobdir=str(jobdir), clean=False)
    again.open_spider(Spider())
    secs = time.monotonic() - t0
    _, traced = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert again.store is not None
    stored = again.store.count_pages(again.run_id)
    print(f"kill with {len(extra)} pages committed but their segments kept and "
          f"{5 * args.batch} never written ({left / 2**20:.2f} MB of journal): resume replay "
          f"{secs:.2f} s, traced peak {traced / 2**20:.1f} MB, pages in the run {stored:,} "
          f"(of {args.pages + len(extra) + 5 * args.batch:,}), journal left "
          f"{journal_bytes(jobdir)} B")  # fmt: skip
    again.close_spider()
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
