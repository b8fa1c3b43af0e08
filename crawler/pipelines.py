"""Item pipelines: storage of every fetched page, duplicates and corpus documents.

Order (ITEM_PIPELINES): extract (in the spider) -> dedup (dedup.pipeline.DedupPipeline)
-> store (StorePipeline). Off-topic and duplicate pages are stored as crawl records and then
dropped with ``DropItem``, so feeds and the corpus hold only accepted, unique pages.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections import deque
from datetime import UTC, datetime
from functools import partial
from itertools import groupby
from pathlib import Path
from typing import Any

from itemadapter import ItemAdapter
from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import CloseSpider, DropItem

from crawler.journal import PageJournal, journal_segments, read_batches
from crawler.storewriter import StoreWriter
from dedup.pipeline import document_replaced, document_revived, duplicate_reattributed
from models.store import Store, retry_budget, run_end_line, spill_line
from postprocess.clean import Cleaner, HostLineModel
from topicrawl.errors import StorageError
from topicrawl.outcome import (
    DATABASE_UNREACHABLE,
    DISK_FULL,
    PAGES_SPILLED,
    command,
    finish_reason,
    is_disk_full,
    set_outcome,
)

log = logging.getLogger(__name__)

RUN_STATE_FILE = "topicrawl-run.json"
#: replaced records sent again with one batch at most (the rest wait for the next)
REPLACED_RETRY_BOUND = 1000


def _record_kind(record: dict[str, Any]) -> str:
    """What a dedup record after a batch asks of the store: ``"revive"`` (a dropped page back
    into the corpus), ``"move"`` (a duplicate record re-attributed) or ``"reject"`` (a
    document out, a duplicate of another page)."""
    return "revive" if record.get("revive") else "move" if "was" in record else "reject"


HOST_MODEL_FILE = "topicrawl-hostlines.json"


def _absolute(path: str | None) -> str | None:
    return str(Path(path).resolve()) if path else None


#: values ``ItemAdapter.asdict`` returns as they are (no item, dict or sequence can be one)
_PLAIN = frozenset({str, int, float, bool, type(None), datetime, bytes})


def _plain(value: Any) -> Any:
    if type(value) in _PLAIN:
        return value
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, set, tuple)):
        return value.__class__(_plain(v) for v in value)
    return ItemAdapter._asdict(value)  # noqa: SLF001 - an item, or another type: as asdict


def item_dict(item: Any) -> dict[str, Any]:
    """``ItemAdapter(item).asdict()`` (nested dicts, sequences and items copied), without
    asking each field's value whether it is an item of every kind itemadapter knows (≈ 50
    checks a field: 0.8 ms a page item, the most of the store's per-page work that is not
    the cleaning)."""
    return {k: _plain(v) for k, v in ItemAdapter(item).items()}


class StorePipeline:
    """Batches pages into the database; records duplicates, documents and the URL history.

    Writes leave the event loop: a :class:`crawler.storewriter.StoreWriter` thread writes the
    batches, retrying through a database outage while the crawl goes on; batches wait in
    memory (``TOPICRAWL_STORE_MEMORY_PAGES``), then in a spool file on disk
    (``TOPICRAWL_STORE_SPOOL_PAGES``); past both the engine is paused until the writer
    catches up (backpressure). At the end of the crawl, whatever the database still refuses
    (after ``TOPICRAWL_STORE_CLOSE_WAIT`` seconds) is written to a spill file, the run ends
    with reason ``pages_spilled`` and the command names ``topicrawl import-spill``.
    """

    def __init__(
        self,
        db_url: str | None = None,
        *,
        batch_size: int = 50,
        spill_dir: str = "topicrawl-spill",
        jobdir: str | None = None,
        stats: Any = None,
        settings_snapshot: dict[str, Any] | None = None,
        clean: bool = True,
        retry_seconds: float | None = None,
        memory_pages: int = 1000,
        spool_pages: int = 20000,
        close_wait: float = 5.0,
    ):
        self.db_url = db_url or None
        self.batch_size = max(1, batch_size)
        self.spill_dir = Path(spill_dir)
        self.jobdir = Path(jobdir) if jobdir else None
        self.stats = stats
        self.settings_snapshot = settings_snapshot or {}
        self.clean_enabled = clean
        #: seconds the database is retried when it does not answer (None: the default)
        self.retry_seconds = retry_seconds
        self.cleaner: Cleaner | None = None
        self.store: Store | None = None
        self.run_id: int | None = None
        self.buffer: list[dict[str, Any]] = []
        self.replaced: list[dict[str, Any]] = []
        #: replaced documents (and re-attributed duplicate records) whose page was not stored
        #: yet when their reject (move) was written (a scale-out: the worker that fetched it
        #: has not written it): sent again with each batch until the page is there (appended
        #: by the writer thread)
        self.replaced_later: deque[dict[str, Any]] = deque()
        self.crawler: Crawler | None = None
        self.journal: PageJournal | None = None  # JOBDIR segments while the spider is open
        self.spilled = 0  # pages written to a spill file at the end (database down)
        self.spill_path: Path | None = None  # that file (the run's end record joins it)
        self.memory_pages = memory_pages
        self.spool_pages = spool_pages
        #: seconds of refused writes after which the close gives up and spills
        self.close_wait = close_wait
        self.writer: StoreWriter | None = None
        self.written_documents = 0  # counted by the writer thread
        self.revived_documents = 0  # dropped pages taken back (the writer thread)
        #: the cleaner is called by the writer thread too (a dropped page taken back)
        self._clean_lock = threading.Lock()
        self._paused = False  # the engine is paused by our backpressure
        self._watch: Any = None  # the LoopingCall of :meth:`watch`
        self._writer_error: BaseException | None = None
        self._closing = False
        #: scale-out: crawler.lease.WorkerLease (a stored page's lease ends)
        self.lease: Any = None
        self._lease_counts = False  # the pages count against a shared budget
        self._lease_limit: int | None = None  # that budget (the spider's max_pages)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> StorePipeline:
        s = crawler.settings
        snapshot = {
            k: s.get(k)
            for k in sorted(s.attributes)
            if k.startswith(("TOPICRAWL_", "CONCURRENT_", "AUTOTHROTTLE_", "DEPTH_"))
            or k in ("ROBOTSTXT_OBEY", "USER_AGENT", "SCHEDULER", "SCHEDULER_PRIORITY_QUEUE")
        }
        pipe = cls(
            s.get("TOPICRAWL_DB_URL") or None,
            batch_size=s.getint("TOPICRAWL_DB_BATCH"),
            spill_dir=s.get("TOPICRAWL_SPILL_DIR"),
            jobdir=s.get("JOBDIR"),
            stats=crawler.stats,
            settings_snapshot=snapshot,
            clean=s.getbool("TOPICRAWL_CLEAN_ENABLED", True),
            retry_seconds=retry_budget(s.get("TOPICRAWL_DB_RETRY_SECONDS")),
            memory_pages=s.getint("TOPICRAWL_STORE_MEMORY_PAGES", 1000),
            spool_pages=s.getint("TOPICRAWL_STORE_SPOOL_PAGES", 20000),
            close_wait=s.getfloat("TOPICRAWL_STORE_CLOSE_WAIT", 5.0),
        )
        pipe.crawler = crawler
        from crawler.lease import lease_of

        pipe.lease = lease_of(crawler)
        crawler.signals.connect(pipe.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(pipe.document_replaced, signal=document_replaced)
        crawler.signals.connect(pipe.duplicate_reattributed, signal=duplicate_reattributed)
        crawler.signals.connect(pipe.document_revived, signal=document_revived)
        return pipe

    def document_replaced(self, old_url: str, new_url: str, method: str, score: float, **_: Any):
        """Dedup kept a new page over a stored one (keep "longer"/"earlier"): the old page
        leaves the corpus and is recorded as a duplicate of the new one."""
        self.replaced.append({"url": old_url, "of": new_url, "method": method, "score": score})

    def duplicate_reattributed(self, old_url: str, new_url: str, previous: str, method: str,
                               score: float, **_: Any) -> None:  # fmt: skip
        """Dedup found a better original for a page dropped earlier (a commentary page met
        before its source): its duplicate record names the new page, if it still names
        ``previous`` (:meth:`models.store.Store.reattribute_duplicates`)."""
        self.replaced.append({"url": old_url, "of": new_url, "method": method, "score": score,
                              "was": previous})  # fmt: skip

    def document_revived(self, old_url: str, new_url: str, method: str, score: float,
                         **_: Any) -> None:
        """Dedup found that a page dropped earlier (``new_url``, recorded as a duplicate of
        ``old_url``) is the original of the page it was dropped for (a source met after its
        commentary page): after the batch, the dropped page is cleaned from its stored HTML
        and text and taken back into the corpus, and then ``old_url`` leaves it as its
        duplicate (:meth:`models.store.Store.revive_pages`; a page the cleaner drops stays
        out and ``old_url`` stays in)."""
        self.replaced.append({"url": new_url, "of": old_url, "method": method, "score": score,
                              "revive": True})  # fmt: skip

    # -- lifecycle ---------------------------------------------------------------------------
    def _spider(self, spider: Spider | None) -> Spider | None:
        if spider is None and self.crawler is not None:
            return self.crawler.spider
        return spider

    def open_spider(self, spider: Spider | None = None) -> None:
        spider = self._spider(spider)
        if self.clean_enabled:
            config = getattr(getattr(spider, "topic", None), "clean", None)
            model = None
            if self.jobdir and (self.jobdir / HOST_MODEL_FILE).exists():
                model = HostLineModel.load(self.jobdir / HOST_MODEL_FILE)
            self.cleaner = Cleaner.from_config(config, host_model=model)
            pool = getattr(spider, "extract_pool", None)
            if pool is not None:  # a page extracted again by the cleaner: in its worker
                from crawler.extractpool import extract_clean_text

                self.cleaner.remote_extract = partial(pool.call, extract_clean_text)
        try:
            self.store = Store.from_url(self.db_url, retry_seconds=self.retry_seconds)
        except StorageError as exc:  # one line and exit status 4, not a traceback
            reason = DISK_FULL if is_disk_full(exc) else DATABASE_UNREACHABLE
            set_outcome(self.stats, reason, str(exc))
            log.error("%s", exc)
            raise CloseSpider(reason) from exc
        self.run_id = getattr(spider, "run_id", None) or self._saved_run_id()
        run = self.store.get_run(self.run_id) if self.run_id is not None else None
        if run is None:
            topic = getattr(spider, "topic", None)
            self.run_id = self.store.start_run(
                getattr(topic, "name", spider.name),
                getattr(topic, "raw", ""),
                {**self.settings_snapshot, "seeds": getattr(spider, "seeds", []),
                 # the file itself, for `topicrawl recrawl` (relative paths inside it)
                 "topic_file": _absolute(getattr(spider, "topic_path", None))},
                run_id=self.run_id,
            )
            log.info("crawl run %d started", self.run_id)
        else:
            log.info("crawl run %d resumed", self.run_id)
            self._replay_journal()
            self._reload_history(spider)
            recrawl = getattr(spider, "recrawl", False)
            if hasattr(spider, "pages_seen") and not recrawl:  # the budget is the run's
                spider.pages_seen = self.store.count_pages(self.run_id)
            if self.jobdir is not None and run.finished_at is None and not recrawl:
                # the crawl was killed (no clean close): its requests in flight are lost
                spider.recovered_urls = self._unstored_sent_urls()
            self.store.reopen_run(self.run_id)
        spider.run_id = self.run_id
        if self.lease is not None:
            self.lease.stored_check = self._stored_urls
            self._lease_counts = getattr(spider, "pages_redis", None) is not None
            self._lease_limit = getattr(spider, "max_pages", None)
        self._save_run_id()
        self._give_labels(spider)
        if self.jobdir:
            self.journal = PageJournal(self.jobdir, self.run_id)
        if self.stats is not None:
            self.stats.set_value("topicrawl/run_id", self.run_id)
        if self.crawler is not None:
            from twisted.internet import task

            self._watch = task.LoopingCall(self.watch)
            self._watch.start(1.0, now=False)

    def _give_labels(self, spider: Spider) -> None:
        """The topic's labels from the console go to the scorer's learning models, where
        they override pseudo-labels (``relevance.learning.labels``)."""
        set_labels = getattr(getattr(spider, "scorer", None), "set_labels", None)
        topic = getattr(spider, "topic", None)
        if set_labels is None or topic is None or self.store is None:
            return
        from relevance.learning.labels import UserLabels

        try:
            rows = self.store.topic_labels(topic.name)
        except StorageError as exc:  # the crawl goes on with pseudo-labels alone
            log.warning("labels of topic %r not read: %s", topic.name, exc)
            return
        if rows:
            set_labels(UserLabels.from_rows(rows))
            if self.stats is not None:
                self.stats.set_value("topicrawl/learning/labels", len(rows))

    def _saved_run_id(self) -> int | None:
        if self.jobdir and (self.jobdir / RUN_STATE_FILE).exists():
            return int(json.loads((self.jobdir / RUN_STATE_FILE).read_text())["run_id"])
        return None

    def _save_run_id(self) -> None:
        if self.jobdir:
            self.jobdir.mkdir(parents=True, exist_ok=True)
            (self.jobdir / RUN_STATE_FILE).write_text(json.dumps({"run_id": self.run_id}))

    def _replay_journal(self) -> None:
        """Store the pages an interrupted crawl had not written (its journal segments, and an
        older version's single file), ``batch_size`` at a time, oldest first; each file is
        deleted once stored. Pages the run already holds whole (written, then killed before
        their segment was deleted) are skipped, so nothing is stored twice and a page since
        taken out of the corpus (a replaced document) is not put back."""
        if self.jobdir is None:
            return
        assert self.store is not None and self.run_id is not None
        replayed = skipped = 0
        for path in journal_segments(self.jobdir):
            for rows in read_batches(path, self.batch_size):
                urls = [r["url"] for r in rows]
                done = self.store.complete_page_urls(self.run_id, urls)
                # a recrawl's page is the newer fetch of a stored URL: written again
                todo = [r for r in rows if r.get("recrawled") or r["url"] not in done]
                skipped += len(rows) - len(todo)
                if todo:
                    self.store.save_crawl_batch(self.run_id, todo)
                    replayed += len(todo)
            path.unlink()
        # a killed writer's spool (its own file per process): its pages were in the journal
        for spool in self.jobdir.glob(f"spool-run{self.run_id}-*.jsonl"):
            spool.unlink(missing_ok=True)
        if replayed or skipped:
            log.warning("stored %d pages that the interrupted crawl had not written (%d in its "
                        "journal were stored already)", replayed, skipped)  # fmt: skip
        if self.stats is not None and (replayed or skipped):
            self.stats.set_value("topicrawl/storage/journal_replayed", replayed)
            self.stats.set_value("topicrawl/storage/journal_already_stored", skipped)

    def _unstored_sent_urls(self) -> list[str]:
        """URLs sent to download (FetchOnceMiddleware's JOBDIR file) whose page was never
        stored: the requests in flight when a crawl was killed, to be requested again.
        Redirect hops are left out: their first URL is requested again instead."""
        from crawler.middlewares import read_sent_urls

        sent = read_sent_urls(self.jobdir)
        if not sent:
            return []
        assert self.store is not None
        stored = self.store.page_urls(self.run_id)
        return [url for url in sent if url not in stored]

    def _reload_history(self, spider: Spider) -> None:
        scorer = getattr(spider, "scorer", None)
        if scorer is not None and self.store is not None and self.run_id is not None:
            if getattr(spider, "url_sample_restored", False):
                from crawler.sharedlearn import reset_sample

                # the run's history is complete, the JOBDIR copy (crawler.sharedlearn) may be
                # up to a minute old after a kill: the history wins
                reset_sample(getattr(scorer, "structure", None))
            # a shared sample (scale-out) holds the run's URLs already: only the local copy
            local = getattr(getattr(scorer, "structure", None), "add_local", None)
            for url in self.store.iter_history(self.run_id):
                if local is not None:
                    local(url)
                else:
                    scorer.observe_accepted(url)

    def close_spider(self, spider: Spider | None = None) -> Any:
        """Wait (off the event loop) for the writer, at most ``close_wait`` seconds of
        refused writes; then spill what is left."""
        if self._watch is not None and self._watch.running:
            self._watch.stop()
        self._closing = True
        self._resume_engine()
        self._hand_over()
        if self.writer is None or self.crawler is None:
            self._close()
            return None
        return self._close_off_loop()

    async def _close_off_loop(self) -> None:
        from scrapy.utils.defer import maybe_deferred_to_future
        from twisted.internet import threads

        assert self.writer is not None
        await maybe_deferred_to_future(
            threads.deferToThread(self.writer.wait_drained, self.close_wait)
        )
        self._close()

    def _close(self) -> None:
        self.flush(final=True)
        if self.journal is not None:
            self.journal.close()
            self.journal = None
        if self.cleaner is not None and self.jobdir:
            self.cleaner.host_model.save(self.jobdir / HOST_MODEL_FILE)
        if self.cleaner is not None and self.stats is not None:
            for key, value in self.cleaner.stats.items():
                self.stats.set_value(f"topicrawl/clean/{key}", value)

    def spider_closed(self, spider: Spider, reason: str) -> None:
        if self.store is None or self.run_id is None:
            return
        stats = dict(self.stats.get_stats()) if self.stats is not None else {}
        # an outcome of ours (pages left in a spill file, …) wins over Scrapy's reason
        stats["finish_reason"] = finish_reason(stats, reason)
        learned = getattr(getattr(spider, "scorer", None), "learned_state", None)
        if learned is not None:  # the run's learned models (JSON), for `topic learn --run`
            stats["learned"] = learned()
        recrawl = bool(getattr(spider, "recrawl", False))
        if self.crawler is None:
            self._finish_run(stats, recrawl)
            return None
        return self._finish_run_off_loop(stats, recrawl)

    async def _finish_run_off_loop(self, stats: dict[str, Any], recrawl: bool) -> None:
        from scrapy.utils.defer import maybe_deferred_to_future
        from twisted.internet import threads

        await maybe_deferred_to_future(threads.deferToThread(self._finish_run, stats, recrawl))

    def _finish_run(self, stats: dict[str, Any], recrawl: bool = False) -> None:
        """Record the run's end; a database still down is given ``close_wait`` seconds,
        then the end record goes to the spill file (``import-spill`` writes it).
        A recrawl keeps the run's stats and appends its own under ``recrawls``."""
        assert self.store is not None and self.run_id is not None
        wait = 1.0 if self._writer_error is not None else self.close_wait  # already waited
        store = Store(self.store.engine, retries=10_000, retry_seconds=wait)
        finished_at = datetime.now(UTC)
        own = stats
        try:
            if recrawl:
                old = store.get_run(self.run_id)
                before = dict(old.stats or {}) if old is not None else {}
                stats = {**before, "recrawls": [*before.get("recrawls", []), own]}
            store.finish_run(self.run_id, stats, finished_at=finished_at)
        except StorageError as exc:
            self._spill_run_end(own, finished_at, recrawl, exc)
        self.store.close()

    def _spill_run_end(
        self, stats: dict[str, Any], finished_at: datetime, recrawl: bool, exc: StorageError
    ) -> None:
        """The database refused the run's end: append it to the spill file (or write one
        holding it alone), so that ``topicrawl import-spill`` marks the run."""
        assert self.run_id is not None
        path = self.spill_path
        if path is None:
            stamp = finished_at.strftime("%Y%m%dT%H%M%S")
            path = self.spill_dir / f"run{self.run_id}-{stamp}-{os.getpid()}-end.jsonl"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a", encoding="utf-8") as fh:
                fh.write(run_end_line(self.run_id, stats, finished_at, recrawl=recrawl))
        except OSError as oserr:
            log.error("could not record the end of run %d (%s) nor write it to %s: %s",
                      self.run_id, exc, path, oserr.strerror or oserr)  # fmt: skip
            return
        log.error("could not record the end of run %d (%s): it waits in %s; when the "
                  "database is back, run: %s import-spill %s",
                  self.run_id, exc, path, command(), path)  # fmt: skip

    # -- items -------------------------------------------------------------------------------
    def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        """Store the page; decide whether it enters the corpus.

        A page is accepted when its relevance passed the topic's page threshold (the
        spider), it is not a duplicate (dedup) and its text survives cleaning. Only
        accepted pages become documents and count in the harvest window. The run's URL
        history (the URL-structure sample of a resumed crawl, Algorithm 3) also takes
        relevant duplicates: a copy of an accepted text still shows where its host files the
        topic, and leaving such copies out would starve the sample of a host that
        republishes other sites' articles. The running crawl's sample is fed by the spider
        before the page's links are scored (they are queued before the page comes here).
        """
        spider = self._spider(spider)
        row = item_dict(item)
        dup = row.get("duplicate")
        # judged again at the crawl's end (relevance.learning.final): counted when fetched
        final = row.pop("rejudged", None) == "final"
        late = final and bool(row.get("accepted"))  # else: it leaves the corpus
        reason = None
        if dup:
            row["_history"] = bool(row.get("accepted"))
            row["accepted"] = False
            reason = f"duplicate of {dup['of']} ({dup['method']}, {dup['score']:.3f})"
        elif final and not late:
            reason = f"left the corpus at the final re-judgement (relevance {row['relevance']:.3f})"
            self._inc("topicrawl/dropped/final_revoked")
        elif not row.get("accepted"):
            reason = f"off-topic (relevance {row.get('relevance') or 0:.3f})"
            self._inc("topicrawl/dropped/off_topic")
        else:
            text, meta, dropped = self._clean(row)
            copy = None if dropped else self._copy_of(spider, row["url"], text)
            if dropped:
                row["accepted"] = False
                reason = f"cleaned away ({dropped})"
                self._inc("topicrawl/dropped/cleaned")
            elif copy is not None:  # its corpus text is another document's
                row["duplicate"] = {"of": copy.doc_id, "method": copy.method, "score": copy.score}
                row["_history"], row["accepted"] = True, False
                reason = f"duplicate of {copy.doc_id} (cleaned text, {copy.method})"
            else:
                row["_document"] = (text, meta)
        accepted = bool(row.get("accepted"))
        if not final:
            self._inc("topicrawl/pages/accepted" if accepted else "topicrawl/pages/not_accepted")
            window = getattr(spider, "harvest_window", None)
            if window is not None:
                window.add(accepted)
            stored = getattr(spider, "page_stored", None)
            if stored is not None:
                stored(row["url"], accepted)
        elif accepted or not late:  # the decision changed: one page moves between the counts
            self._inc("topicrawl/pages/accepted", 1 if accepted else -1)
            self._inc("topicrawl/pages/not_accepted", -1 if accepted else 1)
        self.buffer.append(row)
        if self.journal is not None:
            self.journal.append(row)
        if len(self.buffer) >= self.batch_size:
            self.flush()
        if reason:
            raise DropItem(reason)
        return item

    def _inc(self, key: str, count: int = 1) -> None:
        if self.stats is not None:
            self.stats.inc_value(key, count)

    @staticmethod
    def _copy_of(spider: Spider | None, url: str, text: str | None) -> Any:
        """The document whose corpus text is ``text`` already (the dedup pipeline's exact
        check of cleaned texts, ``spider.dedup``), or None."""
        dedup = getattr(spider, "dedup", None)
        if dedup is None or not text:
            return None
        return dedup.check_document(url, text)

    # -- the writer ------------------------------------------------------------------------
    def _writer(self) -> StoreWriter | None:
        if self.writer is None and self.store is not None and self.run_id is not None:
            base = self.jobdir if self.jobdir else self.spill_dir
            self.writer = StoreWriter(
                self._write_batch, run_id=self.run_id,
                spool_path=base / f"spool-run{self.run_id}-{os.getpid()}.jsonl",
                memory_pages=self.memory_pages, spool_pages=self.spool_pages,
            )  # fmt: skip
        return self.writer

    def _write_batch(self, batch: list[dict[str, Any]], replaced: list[dict[str, Any]]) -> None:
        """One batch and the replaced documents after it (called by the writer thread)."""
        assert self.store is not None and self.run_id is not None
        if self.lease is not None and self._lease_counts:
            batch = self._claim_for_write(batch)
        self.written_documents += self.store.save_crawl_batch(self.run_id, batch)
        if replaced:  # (written in the order dedup decided: a page replaced, then moved on)
            later: list[dict[str, Any]] = []
            for kind, part in groupby(replaced, key=_record_kind):
                rows = list(part)
                if kind == "move":  # a move whose dropped page is not written yet waits too
                    self.store.reattribute_duplicates(self.run_id, rows, waiting=later)
                elif kind == "revive":  # a dropped page back into the corpus, cleaned now
                    revived = self.store.revive_pages(self.run_id, rows, self._clean,
                                                      waiting=later)  # fmt: skip
                    self.revived_documents += len(revived)
                    self.written_documents += len(revived)
                else:
                    unstored = self.store.reject_pages(self.run_id, [r["url"] for r in rows])
                    self.store.add_duplicates(self.run_id, rows)
                    later += [r for r in rows if r["url"] in unstored]
            # after the writes: a batch retried after a failure does not queue them twice
            self.replaced_later.extend(later)
        if self.journal is not None:  # committed: the batch's journal segment goes
            self.journal.written()
        if self.lease is not None:  # the pages are in the database: their leases end
            try:
                # a URL twice in a batch (a page accepted on re-judgement): its lease once
                self.lease.stored(dict.fromkeys(row["url"] for row in batch),
                                  count=self._lease_counts)  # fmt: skip
            except self.lease.errors as exc:  # reclaimed later, found stored then
                log.warning("leases of %d stored pages not ended (%s)", len(batch), exc)

    def _claim_for_write(self, batch: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Claim the batch's counted pages for this write (crawler.lease's store-claim: a
        reclaimed copy's count is not given back while the write may land); a page whose
        count went back while this worker was slow and that the budget no longer allows is
        left out."""
        try:
            dropped = self.lease.storing(dict.fromkeys(row["url"] for row in batch),
                                         limit=self._lease_limit)  # fmt: skip
        except self.lease.errors as exc:  # written unclaimed, as before the claims
            log.warning("store-claim of %d pages not made (%s): written without it",
                        len(batch), exc)  # fmt: skip
            return batch
        return [row for row in batch if row["url"] not in dropped] if dropped else batch

    def _stored_urls(self, urls: list[str]) -> set[str]:
        """Which of ``urls`` the run holds whole (a reclaimer's check, crawler.lease)."""
        assert self.store is not None and self.run_id is not None
        return self.store.complete_page_urls(self.run_id, urls)

    def _hand_over(self) -> None:
        """Give the buffered pages to the writer; past its bound, pause the engine."""
        # the replaced records waiting for their page ride on batches, and alone at the close
        later = self._closing and self.replaced_later
        if not (self.buffer or self.replaced or later) or self._writer() is None:
            return
        assert self.writer is not None
        batch, self.buffer = self.buffer, []
        # the older records first (dedup's order: a page replaced, then perhaps moved on)
        replaced: list[dict[str, Any]] = []
        while self.replaced_later and len(replaced) < REPLACED_RETRY_BOUND:
            replaced.append(self.replaced_later.popleft())
        replaced += self.replaced
        self.replaced = []
        if self.journal is not None:  # before put: the writer may commit it at once
            self.journal.seal()
        self.writer.put(batch, replaced)
        if self.writer.full and not self._paused and not self._closing and self.crawler is not None:
            engine = self.crawler.engine
            if engine is not None and not getattr(engine, "paused", True):
                engine.pause()
                self._paused = True
                self._inc("topicrawl/storage/backpressure")
                log.warning("database writes behind by %d pages (bound %d): crawl paused until "
                            "they are written", self.writer.pending, self.writer.bound)  # fmt: skip

    def _resume_engine(self) -> None:
        if self._paused and self.crawler is not None and self.crawler.engine is not None:
            self._paused = False
            engine = self.crawler.engine
            engine.unpause()
            slot = getattr(engine, "_slot", None)
            if slot is not None:
                slot.nextcall.schedule()

    def watch(self) -> None:
        """Every second on the event loop: the writer's figures into the stats (the progress
        line names an outage), the engine resumed when the writer caught up."""
        writer = self.writer
        if writer is None:
            return
        self._sync_stats()
        if self._paused and writer.pending <= 0.9 * writer.bound:
            self._resume_engine()
            log.info("database writes caught up (%d pages waiting): crawl resumed",
                     writer.pending)  # fmt: skip

    def _sync_stats(self) -> None:
        writer = self.writer
        if writer is None or self.stats is None:
            return
        self.stats.set_value("topicrawl/storage/pages", writer.written_pages)
        self.stats.set_value("topicrawl/storage/documents", self.written_documents)
        if self.revived_documents:
            self.stats.set_value("topicrawl/storage/revived", self.revived_documents)
        self.stats.set_value("topicrawl/storage/waiting", writer.pending + len(self.buffer))
        self.stats.set_value("topicrawl/storage/spooled", writer.spooled)
        self.stats.set_value("topicrawl/storage/failed_batches", writer.failed_attempts)
        if self.journal is not None:
            self.stats.set_value("topicrawl/storage/journal_segments", self.journal.sealed)
        if self.lease is not None:
            for key, value in (("lease_taken_back", self.lease.taken_back),
                               ("store_recounted", self.lease.recounted),
                               ("store_dropped", self.lease.dropped),
                               ("stored_past_claim", self.lease.late)):  # fmt: skip
                if value:
                    self.stats.set_value(f"topicrawl/frontier/{key}", value)
        since = writer.outage_since
        self.stats.set_value("topicrawl/storage/outage_seconds",
                             round(time.monotonic() - since) if since is not None else 0)  # fmt: skip

    def flush(self, final: bool = False) -> None:
        """Hand the buffered pages to the writer thread. ``final``: wait for it (at most
        ``close_wait`` seconds of refused writes), stop it, and spill what it could not
        write."""
        self._hand_over()
        if not final or self.writer is None:
            return
        self.writer.wait_drained(self.close_wait)
        left = self.writer.stop()
        self._sync_stats()
        # replaced records not written: their page not stored yet, or the database down
        records = [*self.replaced_later, *(r for _, replaced in left for r in replaced)]
        moves = sum(_record_kind(r) == "move" for r in records)
        revives = sum(_record_kind(r) == "revive" for r in records)
        unwritten = len(records) - moves - revives
        if revives:
            self._inc("topicrawl/dedup/revived_unstored", revives)
            log.warning("%d dropped pages found to be originals were not taken back into the "
                        "corpus: their page was not stored by the close, or the database did "
                        "not answer", revives)  # fmt: skip
        if unwritten:
            self._inc("topicrawl/dedup/replaced_unstored", unwritten)
            log.warning("%d replaced documents were not taken out of the corpus (their page "
                        "was not stored by the close, or the database did not answer)",
                        unwritten)  # fmt: skip
        if moves:
            self._inc("topicrawl/dedup/reattributed_unstored", moves)
            log.warning("%d duplicate records keep the original they were dropped for: a "
                        "better one was found, but their page was not stored by the close, "
                        "or the database did not answer", moves)  # fmt: skip
        self._writer_error = self.writer.last_exc
        self.writer = None
        batch = [row for rows, _ in left for row in rows]
        if not batch:
            return
        writer_error = self._writer_error
        disk_full = writer_error is not None and is_disk_full(writer_error)
        try:
            path = self._spill(batch)
        except StorageError:  # logged and recorded as the outcome by _spill
            return
        self.spilled += len(batch)
        if self.stats is not None:
            self.stats.inc_value("topicrawl/storage/spilled", len(batch))
            self.stats.set_value("topicrawl/storage/spill_file", str(path))
        log.error(
            "database unavailable: %d pages written to %s (%s); store them with: "
            "topicrawl import-spill %s", len(batch), path, writer_error, path,
        )
        set_outcome(
            self.stats,
            PAGES_SPILLED,
            f"{len(batch)} pages could not be stored ("
            + ("its disk is full" if disk_full else "the database stayed unreachable")
            + ") "
            f"and wait in {path}: when the database is back, run "
            f"{command()} import-spill {path}",
        )
        if self.journal is not None:  # the spill file keeps them now
            self.journal.release_all()

    def _clean(self, row: dict[str, Any]) -> tuple[str | None, dict[str, Any], str | None]:
        """Corpus text, document meta and the reason the cleaner dropped the page (or None)."""
        with self._clean_lock:  # (the writer thread cleans a page taken back)
            return self._clean_unlocked(row)

    def _clean_unlocked(self, row: dict[str, Any]
                        ) -> tuple[str | None, dict[str, Any], str | None]:  # fmt: skip
        meta: dict[str, Any] = {"title": row.get("title"), "published": row.get("published")}
        if self.cleaner is None:
            text = row.get("text")
            return text, meta, None if text else "no_text"
        result = self.cleaner.clean(
            html=row.get("html"), text=row.get("text"), host=row.get("host"), url=row["url"]
        )
        meta["removed"] = dict(result.removed)
        if result.reextracted:
            meta["reextracted"] = True
        if result.fallback:
            meta["extractor"] = "readability"
        return result.text, meta, result.dropped

    def _spill(self, batch: list[dict[str, Any]]) -> Path:
        self.spill_dir.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
        path = self.spill_dir / f"run{self.run_id}-{stamp}-{os.getpid()}.jsonl"
        try:
            with path.open("a", encoding="utf-8") as fh:
                fh.writelines(spill_line(self.run_id, row) for row in batch)
        except OSError as exc:  # nowhere left to keep them: say so in one line
            message = (
                f"{len(batch)} pages could be neither stored nor spilled to {path}: "
                f"{exc.strerror or exc}"
                + ("; free some space" if is_disk_full(exc) else "")
                + (f" (the journal in {self.jobdir} keeps them for a resume)" if self.jobdir else "")
            )
            log.error("%s", message)
            set_outcome(self.stats, DISK_FULL if is_disk_full(exc) else PAGES_SPILLED, message)
            raise StorageError(message) from exc
        self.spill_path = path
        return path
