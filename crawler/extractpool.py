"""Page extraction off the reactor thread, in a small process pool (issue 16).

With no network latency a crawl is CPU-bound on Scrapy's one thread, and the main-text
extraction (:func:`topicrawl.extract.extract_page`: lxml parse, trafilatura's
``bare_extraction``, htmldate; 6-11 ms a page) is as much as a plain spider's whole page.
:class:`ExtractionPool` runs it in ``TOPICRAWL_EXTRACT_WORKERS`` worker processes
(``concurrent.futures.ProcessPoolExecutor``, 'spawn' context: the Twisted reactor is never
forked), awaited from the spider's async ``parse`` callback (asyncio reactor), while the
reactor thread goes on with other pages.

- Same output: a worker parses the decoded page as Scrapy's selector does
  (:func:`extract_body`), so trafilatura and htmldate see the tree they see inline. The
  spider's workers (:func:`extract_with_links`) also extract the page's links and feeds on
  that tree as the spider does inline (crawler.pagelinks), so the reactor thread does not
  parse the page at all; that brings Scrapy's ``http`` and ``linkextractors`` (and Twisted)
  into the worker, ≈ 25 MB more (docs/scale.md).
- Bounded: at most ``workers × pending`` pages are in the pool at a time; a page that comes
  while it is full waits for a turn if fewer than ``workers × overflow_wait`` pages wait
  already (``TOPICRAWL_EXTRACT_OVERFLOW_WAIT``), else it is extracted inline, by Scrapy's
  thread (with the first such page, trafilatura's jusText stoplists, ≈ 30 MB, load into the
  crawl's process). Waiting for a turn instead would
  let pages pile up whenever the workers are slower than the rest of the crawl (small pages):
  Scrapy's own bound on responses in callbacks is ``SCRAPER_SLOT_MAX_ACTIVE_SIZE``, 5 MB of
  bodies, thousands of small pages, and what the crawl learns from a page (the trap guard's
  path budgets, the link scorer's sample) would come that much later. Inline extraction of
  the excess keeps both the reactor thread and the workers busy.
- Start-up off the critical path: the spider starts the pool as it is built, before its
  scorer, so the workers' imports overlap the crawl's own start; the pool counts as ready
  once each worker has imported trafilatura and extracted a first page. A page that comes
  before that waits for it (:meth:`ExtractionPool.wait_warm`, at most ``warm_wait``
  seconds), so that the crawl's process does not load trafilatura's fallbacks (jusText's
  stoplists, ≈ 30 MB: docs/scale.md) for the few pages of the first second; pages are
  extracted inline in the crawl's process when the pool is off, full, being replaced, or
  not warm after ``warm_wait``.
- Failures: a page whose extraction raises is the spider's broken page, as inline; a page
  still in a worker after ``timeout`` seconds is broken too, and its hung worker is killed
  (:meth:`ExtractionPool._time_left`). A pool whose worker died (killed, or crashed by a
  page) is replaced, with a WARNING and ``topicrawl/extract/pool_restarts``, and the pages
  it held go to the new one one at a time, so that a page that kills that one too is the
  page that does (broken, :class:`ExtractionCrashed`); after ``max_restarts`` replacements
  the pool is switched off (WARNING, ``topicrawl/extract/pool_off``) and pages are
  extracted inline.
- Closed at spider close; a worker also exits by itself when the crawl's process is gone
  (``kill -9``), and ignores SIGINT (a Ctrl-C reaches the whole process group; the crawl
  finishes its pages in the pool, then closes it).
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing.context
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.connection import wait as wait_sentinels
from pathlib import Path
from typing import Any, NamedTuple

from topicrawl.extract import Extracted, extract_page

log = logging.getLogger(__name__)

#: a first page for each worker: its imports and trafilatura's lazy set-up happen before the
#: pool is counted as ready
WARM_PAGE = (
    "<html><head><title>预热</title><meta name='description' content='预热'></head><body>"
    "<article><h1>预热页面</h1>"
    + "<p>国务院常务会议研究部署经济工作，会议强调抓好落实。</p>" * 5
    + "<p>2024-01-02</p></article></body></html>"
).encode()


def extract_body(body: bytes, url: str) -> Extracted:
    """:func:`~topicrawl.extract.extract_page` of a decoded page (``body``: its UTF-8 text,
    as ``TopicSpider.decoded`` makes it) on the tree Scrapy's selector builds of it — the
    tree the spider's inline extraction shares with link extraction — so the result is the
    same in a worker as inline. Built with parsel and w3lib as ``scrapy.Selector`` builds
    it (text, base URL from the first 4096 characters), without importing Scrapy and
    Twisted into the worker (≈ 20 MB)."""
    import parsel
    from w3lib.html import get_base_url

    text = body.decode("utf-8")
    base = get_base_url(text[:4096], url, "utf-8")
    root = parsel.Selector(text=text, type="html", base_url=base).root
    return extract_page(text, url, tree=root)


class PageWork(NamedTuple):
    """What a worker gives back for a page (:func:`extract_with_links`): plain, picklable."""

    extracted: Extracted
    #: ``(url, anchor)`` of the page's links (crawler.pagelinks), at most ``max_links``
    links: list[tuple[str, str]]
    #: the links found before that bound
    found: int
    #: the feeds the page announces (crawler.discovery.feed_urls), when asked for
    feeds: list[str]


_EXTRACTOR: Any = None


def extract_with_links(body: bytes, url: str, max_links: int = 0,
                       feeds: bool = False) -> PageWork:  # fmt: skip
    """The spider's whole use of a decoded page's tree, in a worker: the page as the
    spider's ``HtmlResponse`` (``body``: its UTF-8 text, as ``TopicSpider.decoded`` makes
    it), extracted (:func:`~topicrawl.extract.extract_page` on the response's selector
    tree), then its links (:func:`crawler.pagelinks.page_links`, the first ``max_links``
    of them when > 0) and, with ``feeds``, its feed URLs, on the same tree in the same order
    as the spider inline, so the crawl's thread does not parse the page at all. Imports
    ``scrapy.http`` and ``scrapy.linkextractors`` (and so Twisted: docs/scale.md measures
    what that costs a worker)."""
    global _EXTRACTOR
    from scrapy.http import HtmlResponse

    from crawler import discovery
    from crawler.pagelinks import link_extractor, page_links

    if _EXTRACTOR is None:
        _EXTRACTOR = link_extractor()
    page = HtmlResponse(url=url, body=body, encoding="utf-8")
    extracted = extract_page(page.text, url, tree=page.selector.root)
    links = page_links(page, _EXTRACTOR)
    found = len(links)
    if max_links and found > max_links:
        links = links[:max_links]
    return PageWork(extracted, links, found, list(discovery.feed_urls(page)) if feeds else [])


def extract_document_body(body: bytes, url: str, fmt: str = "pdf", max_pages: int = 200,
                          max_chars: int = 500_000) -> Extracted:  # fmt: skip
    """A PDF or .docx document's text (:func:`topicrawl.documents.extract_document`), in a
    worker: pypdf and python-docx are imported there, at the first document, not in the
    crawl's process; a document that hangs its parser is broken after the pool's timeout
    instead of holding the crawl's thread. A parser's own exception (pypdf's
    ``PdfReadError`` of a broken file) comes back as :class:`BrokenDocument`: unpickling
    pypdf's class would import pypdf into the crawl's process (≈ 10 MB, docs/scale.md)."""
    from topicrawl.documents import extract_document

    try:
        return extract_document(body, fmt, max_pages=max_pages, max_chars=max_chars)
    except Exception as exc:
        if type(exc).__module__ == "builtins":
            raise
        raise BrokenDocument(f"{type(exc).__name__}: {exc}") from None


def extract_clean_text(html: str, url: str | None, options: dict[str, Any]) -> str:
    """The cleaner's own extraction of a page's main text
    (:func:`postprocess.clean.extract_text` with the cleaner's ``options``), in a worker: when
    the cleaner drops the spider's text and extracts the page again, trafilatura's jusText
    fallback (its stoplist of every language, ≈ 30 MB) loads in the worker, not in the
    crawl's process."""
    from postprocess.clean import extract_text

    return extract_text(html, url=url, **options)


def warm_up(function: Callable[..., Any] = extract_body) -> int:
    """A worker's first task: the imports and one extraction; returns the worker's pid."""
    function(WARM_PAGE, "http://warm.invalid/1.html")
    return os.getpid()


def _init_worker(parent: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_exit_with_parent, args=(parent,), daemon=True).start()


def _exit_with_parent(parent: int, every: float = 1.0) -> None:
    """End the worker once the crawl's process is gone (killed): no orphan extracts on."""
    while os.getppid() == parent:
        time.sleep(every)
    os._exit(1)


class _Process(multiprocessing.context.SpawnProcess):
    """A spawned worker that does not import the parent's ``__main__`` again: a script that
    runs a crawl without an ``if __name__ == "__main__":`` guard (as in Scrapy's "run from a
    script" examples) would otherwise start its crawl again in every worker. The workers
    need only this module."""

    def start(self) -> None:
        main = sys.modules["__main__"]
        keys = ("__spec__", "__file__")
        saved = {k: main.__dict__[k] for k in keys if k in main.__dict__}
        main.__spec__ = None
        main.__dict__.pop("__file__", None)
        try:
            super().start()
        finally:
            for key in keys:
                if key in saved:
                    main.__dict__[key] = saved[key]
                else:
                    main.__dict__.pop(key, None)


class _SpawnContext(multiprocessing.context.SpawnContext):
    Process = _Process


class BrokenDocument(Exception):
    """A document its parser could not read, in a worker (the parser's exception class and
    message in the message)."""


class ExtractionTimeout(Exception):
    """A page was not extracted within the pool's timeout (its worker was killed)."""


class ExtractionCrashed(Exception):
    """The worker died with this page in it, in a replacement pool too."""


def cpu_seconds(pid: int | str = "self") -> float:
    """User + system CPU seconds of a process (``/proc/PID/stat``), 0 when unknown."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def peak_rss_mb(pid: int | str = "self") -> float:
    """Peak resident memory of a process in MB (``VmHWM`` of ``/proc/PID/status``), 0 when
    unknown (not Linux, or the process is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0.0


def memory_mb(pid: int | str = "self") -> dict[str, float]:
    """A process's memory now, in MB, from ``/proc/PID/smaps_rollup``: ``rss`` (resident),
    ``pss`` (proportional: each page shared with other processes divided among them, so the
    PSS of processes add up without counting shared pages twice) and ``uss`` (unique: its
    private pages, what ending it would free); empty when unknown (not Linux, gone)."""
    keys = {"Rss:": "rss", "Pss:": "pss", "Private_Clean:": "uss", "Private_Dirty:": "uss"}
    out: dict[str, float] = {}
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            name, _, rest = line.partition(" ")
            if name in keys:
                key = keys[name]
                out[key] = out.get(key, 0.0) + int(rest.split()[0]) / 1024
    except (OSError, ValueError, IndexError):
        return {}
    return out


class ExtractionPool:
    """Worker processes that run :func:`extract_body` for the spider (module docstring).

    ``function``: what a worker runs on ``(body, url)`` (a module-level function or a
    ``functools.partial`` of one: the spider's is :func:`extract_with_links`; tests give
    failing ones)."""

    #: replacements of a dead pool before it is switched off
    MAX_RESTARTS = 3
    #: seconds from the pool's start that a page waits for its first warm-up (then inline)
    WARM_WAIT = 30.0

    def __init__(
        self,
        workers: int = 1,
        *,
        timeout: float = 60.0,
        pending: int = 16,
        overflow_wait: int = 0,
        max_restarts: int = MAX_RESTARTS,
        stats: Any = None,
        function: Callable[[bytes, str], Any] = extract_body,
        close_grace: float = 5.0,
        warm_wait: float = WARM_WAIT,
    ):
        self.workers = max(1, workers)
        self.timeout = timeout
        self.capacity = self.workers * max(1, pending)
        #: pages that may wait for a turn while the pool is full (then: inline)
        self.overflow_wait = self.workers * max(0, overflow_wait)
        self._waiting = 0
        self.max_restarts = max_restarts
        self.stats = stats
        self.function = function
        self.close_grace = close_grace
        self.warm_wait = warm_wait
        self.restarts = 0
        self.off = False
        self.closed = False
        self._executor: ProcessPoolExecutor | None = None
        self._warm: list[Future] = []
        self._started = 0.0
        self._ready_logged = False
        self._bound: asyncio.Semaphore | None = None
        self._alone: asyncio.Lock | None = None
        self._bound_loop: asyncio.AbstractEventLoop | None = None
        #: the current pool's pages, oldest first, and since when the oldest is the oldest
        self._inflight: dict[Future, None] = {}
        self._head_since = 0.0
        #: when every worker of the current pool was warm (set by the pool's thread)
        self._ready_at: float | None = None
        #: pids of every worker started (tests: none left running after close)
        self.started_pids: set[int] = set()

    @classmethod
    def from_crawler(cls, crawler: Any, function: Callable[[bytes, str], Any] | None = None
                     ) -> ExtractionPool:  # fmt: skip
        from scrapy.exceptions import NotConfigured

        s = crawler.settings
        workers = s.getint("TOPICRAWL_EXTRACT_WORKERS")
        if workers <= 0:
            raise NotConfigured("TOPICRAWL_EXTRACT_WORKERS is 0: pages are extracted inline")
        # the stats: given at spider open (start), when Scrapy has made them
        return cls(workers, timeout=s.getfloat("TOPICRAWL_EXTRACT_TIMEOUT"),
                   pending=s.getint("TOPICRAWL_EXTRACT_PENDING"),
                   overflow_wait=s.getint("TOPICRAWL_EXTRACT_OVERFLOW_WAIT"),
                   warm_wait=s.getfloat("TOPICRAWL_EXTRACT_WARM_WAIT", cls.WARM_WAIT),
                   function=function or extract_body)  # fmt: skip

    def _inc(self, key: str, count: int = 1) -> None:
        if self.stats is not None:
            self.stats.inc_value(f"topicrawl/extract/{key}", count)

    # -- life cycle -------------------------------------------------------------------------
    def start(self, stats: Any = None) -> None:
        """Start the workers (returns at once; they import trafilatura meanwhile); the pool
        counts into ``stats`` (Scrapy's) from now on when given."""
        if stats is not None:
            self.stats = stats
        if self._executor is not None or self.closed or self.off:
            return
        self._started = time.monotonic()
        self._executor = ProcessPoolExecutor(
            self.workers, mp_context=_SpawnContext(), initializer=_init_worker,
            initargs=(os.getpid(),),
        )  # fmt: skip
        self._warm = [self._executor.submit(warm_up, self.function)
                      for _ in range(self.workers)]  # fmt: skip
        self._inflight, self._ready_at = {}, None
        for f in self._warm:
            f.add_done_callback(lambda _, warm=self._warm: self._warm_done(warm))
        self.started_pids.update(self.pids())

    def _warm_done(self, warm: list[Future]) -> None:
        """(The pool's thread.) Every worker of the current pool is warm: its pages' time
        runs from now (:meth:`_time_left`)."""
        if warm is self._warm and all(f.done() for f in warm):
            self._ready_at = time.monotonic()

    def pids(self) -> list[int]:
        """The pids of the current workers."""
        procs = getattr(self._executor, "_processes", None) or {}
        return list(procs)

    @property
    def ready(self) -> bool:
        """Started, every worker warm, not switched off or closed. A failed warm-up counts
        as a dead pool (replaced, or the pool switched off)."""
        executor = self._executor
        if executor is None or not all(f.done() for f in self._warm):
            return False
        if any(f.exception() is not None for f in self._warm):
            self._replace(executor, f"did not start ({self._warm_error()})")
            return False
        if not self._ready_logged:
            self._ready_logged = True
            if self.stats is not None:
                ready_at = self._ready_at or time.monotonic()
                self.stats.set_value("topicrawl/extract/ready_seconds",
                                     round(ready_at - self._started, 2))  # fmt: skip
            log.info("extraction pool ready: %d worker process(es), pids %s", self.workers,
                     " ".join(map(str, self.pids())))  # fmt: skip
        return True

    @property
    def warming(self) -> bool:
        """The first workers are starting (not a replacement: its pages go inline)."""
        return (self._executor is not None and not self.restarts and not self.off
                and not self.closed and not all(f.done() for f in self._warm))  # fmt: skip

    async def wait_warm(self) -> bool:
        """Wait until the first workers are warm, at most ``warm_wait`` seconds from the
        pool's start; returns :attr:`ready`. A page that comes during the warm-up waits here
        instead of being extracted in the crawl's process (counted in
        ``topicrawl/extract/waited_warm``)."""
        if self.warming:
            self._inc("waited_warm")
        while self.warming:
            left = self._started + self.warm_wait - time.monotonic()
            if left <= 0:
                self._inc("warm_wait_expired")
                break
            pending = {asyncio.wrap_future(f) for f in self._warm if not f.done()}
            await asyncio.wait(pending, timeout=left)
        return self.ready

    def _warm_error(self) -> str:
        for f in self._warm:
            exc = f.exception()
            if exc is not None:
                return f"{type(exc).__name__}: {exc}"
        return "?"

    def close(self) -> None:
        """Stop the workers: they finish their page, then exit; any still running after
        ``close_grace`` seconds is killed, and so are workers still starting (a short crawl
        does not wait for their imports) and idle ones (no page in the pool: nothing to
        finish). Their peak memory and CPU time go to the stats."""
        self.closed = True
        executor, self._executor = self._executor, None
        if executor is None:
            return
        if self.stats is not None:  # the last pool's workers (not those replaced before)
            pids = list(getattr(executor, "_processes", {}) or {})
            self.stats.set_value("topicrawl/extract/workers_peak_rss_mb",
                                 round(sum(peak_rss_mb(pid) for pid in pids), 1))
            self.stats.set_value("topicrawl/extract/workers_cpu_s",
                                 round(sum(cpu_seconds(pid) for pid in pids), 2))  # fmt: skip
            now = [memory_mb(pid) for pid in pids]
            for key in ("rss", "pss", "uss"):  # at close (no peak of PSS is kept)
                self.stats.set_value(f"topicrawl/extract/workers_{key}_mb",
                                     round(sum(m.get(key, 0.0) for m in now), 1))  # fmt: skip
        # a crawl that ends before its workers are warm (a few pages) does not wait for them,
        # nor for idle workers to tear their interpreter down (≈ 0.25 s): they hold nothing
        warming = not all(f.done() for f in self._warm)
        idle = not self._inflight
        self._stop(executor, grace=self.close_grace, cancel=True, kill=warming or idle)

    def _stop(self, executor: ProcessPoolExecutor, *, grace: float, kill: bool = False,
              cancel: bool = False) -> None:  # fmt: skip
        # ProcessPoolExecutor has no way to kill its workers before Python 3.14
        # (kill_workers): its process table is used as it stands since 3.2
        procs = list((getattr(executor, "_processes", None) or {}).values())
        manager = getattr(executor, "_executor_manager_thread", None)
        if kill:
            for p in procs:
                p.kill()
        executor.shutdown(wait=False, cancel_futures=cancel)
        # a worker's sentinel is ready once it has exited (no race with the executor's own
        # thread, which reaps them)
        left = [p for p in procs if not wait_sentinels([p.sentinel], timeout=0)]
        deadline = time.monotonic() + grace
        for p in left:
            if not wait_sentinels([p.sentinel], timeout=max(0.0, deadline - time.monotonic())):
                log.warning("extraction worker %s did not exit: killed", p.pid)
                p.kill()
        if manager is not None:
            manager.join(timeout=grace)

    def _replace(self, executor: ProcessPoolExecutor, why: str, *, kill: bool = False) -> None:
        """A dead (or hung: ``kill``) pool: start a new one, or switch the pool off after
        ``max_restarts`` replacements. Once per pool, whichever page sees it first."""
        if executor is not self._executor:
            return
        self._executor, self._warm, self._ready_logged = None, [], False
        self._stop(executor, grace=1.0, kill=kill)
        if self.closed:
            return
        if self.restarts >= self.max_restarts:
            self.off = True
            if self.stats is not None:
                self.stats.set_value("topicrawl/extract/pool_off", 1)
            log.warning("extraction pool %s, after %d restarts: it is switched off and pages "
                        "are extracted in the crawl's process from now on", why,
                        self.restarts)  # fmt: skip
            return
        self.restarts += 1
        self._inc("pool_restarts")
        log.warning("extraction pool %s: a new worker is started (restart %d of %d; pages "
                    "are extracted inline until it is ready)", why, self.restarts,
                    self.max_restarts)  # fmt: skip
        self.start()

    def call(self, function: Callable[..., Any], *args: Any) -> Any:
        """``function(*args)`` in a worker, waited for on the caller's thread (the item
        pipelines' cleaner: a rare call whose result the item needs now, with the crawl's
        state as it is); None when the pool is not ready, switched off or closed, its worker
        died, or ``timeout`` passed: the caller runs it itself. Raises what it raised."""
        executor = self._executor
        if executor is None or not self.ready:
            return None
        try:
            future = executor.submit(function, *args)
            result = future.result(timeout=self.timeout)
        except BrokenProcessPool:  # the pages' path replaces the pool
            return None
        except TimeoutError:
            future.cancel()
            self._inc("call_timeouts")
            return None
        self._inc("calls")
        return result

    # -- pages ------------------------------------------------------------------------------
    def _slots(self) -> tuple[asyncio.Semaphore, asyncio.Lock]:
        """The bound on pages in the pool, and the turn of pages that must run alone (made
        for the running event loop: the crawl has one, tests several)."""
        loop = asyncio.get_running_loop()
        if self._bound is None or self._bound_loop is not loop:
            self._bound, self._alone = asyncio.Semaphore(self.capacity), asyncio.Lock()
            self._bound_loop = loop
        assert self._alone is not None
        return self._bound, self._alone

    async def extract(self, body: bytes, url: str,
                      function: Callable[[bytes, str], Any] | None = None) -> Any:  # fmt: skip
        """The page extracted by a worker (what the pool's ``function``, or the ``function``
        given, returns); None when the pool cannot take it now (not ready
        yet, switched off, closed, or ``capacity`` pages in it and ``overflow_wait`` waiting
        already): the caller extracts it inline. Raises what the extraction raised, :class:`ExtractionTimeout` or
        :class:`ExtractionCrashed`.

        A page whose worker died (with it, or with another page it held) is handed to the
        replacement pool alone: if it kills that one too, it is the page that does
        (:class:`ExtractionCrashed`); the others are extracted."""
        if not self.ready:
            return None
        bound, alone = self._slots()
        if bound.locked():  # the pool is busy: this page waits its turn, or is the caller's
            if self._waiting >= self.overflow_wait:
                self._inc("inline_busy")
                return None
            self._inc("waited_busy")
            self._waiting += 1
            try:
                await bound.acquire()
            finally:
                self._waiting -= 1
        else:
            await bound.acquire()
        try:
            return await self._run(body, url, function=function)
        except BrokenProcessPool:
            pass
        finally:
            bound.release()
        async with alone:
            for _ in range(self.capacity):
                await bound.acquire()
            try:
                return await self._run(body, url, alone=True, function=function)
            except BrokenProcessPool:
                raise ExtractionCrashed("the extraction worker died on this page, twice (the "
                                        "second time alone)") from None  # fmt: skip
            finally:
                for _ in range(self.capacity):
                    bound.release()

    async def _run(self, body: bytes, url: str, *, alone: bool = False,
                   function: Callable[[bytes, str], Any] | None = None) -> Any:  # fmt: skip
        executor = self._executor
        if executor is None:  # switched off (or closed) since the page came
            if alone:
                raise ExtractionCrashed("the extraction worker died with this page in it, "
                                        "and the pool is off")  # fmt: skip
            return None
        try:
            future = executor.submit(function or self.function, body, url)
        except BrokenProcessPool:
            self._replace(executor, "lost its worker (killed, or a page crashed it)")
            raise
        if not self._inflight:
            self._head_since = time.monotonic()
        self._inflight[future] = None
        waiter = asyncio.wrap_future(future)
        try:
            while not waiter.done():
                left = self._time_left(future)
                if left <= 0:
                    self._inc("timeouts")
                    self._replace(executor, f"took more than {self.timeout:g} s on {url}",
                                  kill=True)  # fmt: skip
                    raise ExtractionTimeout(f"not extracted within {self.timeout:g} s (its "
                                            "extraction worker was killed)")  # fmt: skip
                await asyncio.wait({waiter}, timeout=left)
            if future.cancelled():  # its pool was shut down before a worker took it
                raise BrokenProcessPool("the extraction pool was replaced")
            result = waiter.result()
        except BrokenProcessPool:
            self._replace(executor, "lost its worker (killed, or a page crashed it)")
            raise
        finally:
            if not waiter.done():  # timed out: what the killed worker's future gets is no one's
                waiter.cancel()
            if self._inflight and next(iter(self._inflight)) is future:
                self._head_since = time.monotonic()
            self._inflight.pop(future, None)
        self._inc("pages")
        return result

    def _time_left(self, future: Future) -> float:
        """Seconds ``future``'s page has left before its timeout. Only the oldest page in
        the pool is surely in a worker (the pool takes them in order), so its time runs from
        when it became the oldest, once the workers were warm; any other page looks again
        after ``timeout`` seconds. With one worker this is the page's time in the worker; with
        more, a hung page is found once the pages before it are done."""
        if next(iter(self._inflight), None) is not future or self._ready_at is None:
            return self.timeout
        return max(self._head_since, self._ready_at) + self.timeout - time.monotonic()
