"""The ``topic`` spider: a best-first focused crawl driven by a topic file.

scrapy crawl topic -a seeds=URL[,URL...]|@FILE -a topic=FILE [-a max_pages=N]
                   [-a max_depth=N] [-a run_id=N] [-a discover=sitemaps,feeds]
                   [-a recrawl=1 -a run_id=N]   (what ``topicrawl recrawl --run N`` runs)
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter, deque
from collections.abc import AsyncIterator, Iterable, Iterator
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import urlsplit

import scrapy
from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import CloseSpider, DontCloseSpider
from scrapy.http import HtmlResponse, Response, TextResponse
from scrapy.linkextractors import IGNORED_EXTENSIONS
from scrapy.utils.misc import load_object

from crawler import discovery
from crawler.extractpool import PageWork
from crawler.items import PageItem
from crawler.lease import LEASE, LEASE_KEPT, lease_of
from crawler.middlewares import (
    RECOVERED,
    RequestDeferred,
    TrapRefused,
    redis_errors,
    scaleout_redis,
    sleep,
)
from crawler.pagelinks import link_extractor, page_links
from crawler.threadcpu import ThreadCpu
from relevance.hostprior import HostPrior, section_sample
from relevance.linkscore import PRIORITY_SCALE, Link, LinkScore, LinkScorer, PageInfo, quantize
from topicrawl.documents import SUFFIXES as DOCUMENT_SUFFIXES
from topicrawl.documents import document_format, extract_document
from topicrawl.errors import ConfigError, TopicFileError
from topicrawl.extract import Extracted, decode_html, extract_page, justext_stoplists_built
from topicrawl.interrupt import interruptible
from topicrawl.outcome import NO_SEED_REACHABLE, set_outcome

log = logging.getLogger(__name__)

_BINARY_SUFFIXES = tuple(f".{ext}" for ext in IGNORED_EXTENSIONS)
_REDIRECTS = [301, 302, 303, 307, 308]
#: ``TopicSpider.best_priority`` of a URL already fetched: never re-queued.
FETCHED = 1 << 62
#: URL fingerprints remembered (:meth:`TopicSpider._fingerprint`; ~200 bytes each; the
#: oldest forgotten first)
URL_FINGERPRINTS = 1 << 14
#: links' URLs whose kind (:meth:`TopicSpider._url_kind`) is remembered (a site's menu links
#: recur on every page; the memo is emptied when full)
URL_KINDS = 1 << 13
#: pages that cannot be parsed, logged one line each (WARNING) before they are only counted
BROKEN_LOGGED = 5
#: the reactor the extraction pool needs (its pages are awaited as asyncio futures)
ASYNCIO_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"
#: ``TopicSpider.take_page``: another worker owns the request now (crawler.lease)
LEASE_LOST = -1
#: ``TopicSpider.take_shared_page``: Redis did not answer within its retry budget (the crawl
#: is ending with ``redis_unreachable``); the page is left to the resume
BUDGET_UNREACHABLE = -2


def _request_meta(response: Response) -> dict:
    """The meta of ``response``'s request (empty for a response tied to none)."""
    return response.request.meta if response.request is not None else {}


def meta_url(response: Response) -> str:
    """The URL a page is stored under: the first of its redirects."""
    return response.meta.get("redirect_urls", [response.url])[0]


def parse_seeds(value: str | None) -> list[str]:
    """``URL[,URL...]`` or ``@FILE`` (one URL a line, ``#`` comments) -> list of URLs."""
    if not value:
        raise ConfigError("no seeds: pass -a seeds=URL[,URL...] or -a seeds=@FILE")
    if value.startswith("@"):
        path = Path(value[1:])
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise ConfigError(f"cannot read the seeds file {path}: {exc.strerror}") from exc
    else:
        lines = value.split(",")
    seeds = [s.strip() for s in lines if s.strip() and not s.strip().startswith("#")]
    for seed in seeds:
        if urlsplit(seed).scheme not in ("http", "https") or not urlsplit(seed).hostname:
            raise ConfigError(f"seed {seed!r} is not an http(s) URL{seed_hint(seed)}")
    if not seeds:
        raise ConfigError(f"no seeds in {value!r}")
    return seeds


def seed_hint(seed: str) -> str:
    """A hint for a common mistake in a seed: no scheme (``example.com``), a typo in the
    scheme (``htp://``) or a missing slash (``http:/example.com``)."""
    head = seed.split("/", 1)[0]
    if "://" not in seed and not seed.lower().startswith(("http:", "https:")):
        host, colon, port = head.partition(":")
        if ("." in host or host == "localhost") and (not colon or port.isdigit()):
            return f": did you mean 'http://{seed}'?"
        return ""
    scheme, _, rest = seed.partition(":")
    scheme = scheme.lower()
    if scheme in ("http", "https") or scheme in _SCHEME_TYPOS:
        fixed = scheme if scheme in ("http", "https") else "http"
        return f": did you mean '{fixed}://{rest.lstrip('/')}'?"
    return ""


_SCHEME_TYPOS = ("htp", "htps", "hhtp", "htttp", "ttp", "http;", "https;", "hppt", "htpp")


#: the arguments of the topic spider (``-a NAME=VALUE``)
SPIDER_ARGS = ("seeds", "topic", "max_pages", "max_depth", "run_id", "discover", "recrawl")


def parse_count(
    name: str, value: str | int | None, *, minimum: int, example: int = 100
) -> int | None:
    """A whole-number spider argument (None when not given), at least ``minimum``."""
    if value is None or value == "":
        return None
    try:
        number = int(str(value).strip())
    except ValueError:
        raise ConfigError(
            f"-a {name}={value!r} is not a whole number: pass e.g. -a {name}={example}"
        ) from None
    if number < minimum:
        raise ConfigError(f"-a {name}={number} must be at least {minimum}")
    return number


def parse_spider_args(args: dict[str, Any]) -> dict[str, int | None]:
    """``max_pages`` (>= 1), ``max_depth`` (>= 0) and ``run_id`` (>= 1), checked."""
    return {
        "max_pages": parse_count("max_pages", args.get("max_pages"), minimum=1, example=300),
        "max_depth": parse_count("max_depth", args.get("max_depth"), minimum=0, example=5),
        "run_id": parse_count("run_id", args.get("run_id"), minimum=1, example=1),
    }


def host_allowed(host: str, patterns: list[str]) -> bool:
    """``host`` equals a pattern, or matches a ``*.suffix`` pattern."""
    host = host.lower()
    for pattern in patterns:
        pattern = pattern.lower()
        if pattern.startswith("*."):
            if host == pattern[2:] or host.endswith(pattern[1:]):
                return True
        elif host == pattern:
            return True
    return False


def describe_failure(failure: Any) -> str:
    """A short cause of a failed request: "DNS lookup failed", "HTTP 404" …"""
    value = failure.value
    response = getattr(value, "response", None)
    if response is not None and getattr(response, "status", None):
        return f"HTTP {response.status}"
    name = type(value).__name__
    if "DNS" in name or "Resolve" in name:
        return "DNS lookup failed: no such host"
    if "Refused" in name:
        return "connection refused"
    if "Timeout" in name or "TimedOut" in name:
        return "timed out"
    if name == "IgnoreRequest":
        return str(value) or "ignored"
    text = " ".join(failure.getErrorMessage().split())
    return f"{name}: {text}" if text else name


def _header(headers: Any, name: bytes) -> str | None:
    value = headers.get(name)
    return value.decode("latin-1")[:256] if value else None


def judged_again(record: dict[str, Any], html: str | None, text: str | None, relevance: float,
                 parts: dict[str, float], *, accepted: bool, origin: str) -> dict[str, Any]:
    """The fields of a held page judged again (``[learning] rejudge`` or
    ``final_judgement``) as an item: its stored record with its HTML and text, the new
    relevance and decision, no duplicate yet (dedup decides again), and its relevance at
    fetch kept as ``relevance_parts["<origin>_from"]``."""
    parts = {**parts, f"{origin}_from": float(record.get("relevance") or 0.0)}
    return {**record, "html": html, "text": text, "relevance": relevance,
            "relevance_parts": parts, "accepted": accepted, "duplicate": None}  # fmt: skip


class Prepared(NamedTuple):
    """A page decoded by the spider and extracted by the extraction pool (``work``: the
    worker's links and feeds too; None when it was extracted inline), or a document's text
    (``fmt``; no page, codec nor work)."""

    page: HtmlResponse | None
    codec: str | None
    extracted: Extracted
    work: PageWork | None = None
    fmt: str | None = None


class HarvestWindow:
    """Share of accepted pages among the last ``size`` fetched pages."""

    def __init__(self, size: int):
        self.flags: deque[bool] = deque(maxlen=max(1, size))

    def add(self, accepted: bool) -> None:
        self.flags.append(accepted)

    @property
    def full(self) -> bool:
        return len(self.flags) == self.flags.maxlen

    def rate(self) -> float:
        return sum(self.flags) / len(self.flags) if self.flags else 0.0


class TopicSpider(scrapy.Spider):
    """Crawls from the seeds, keeps to the allowed hosts, follows links best-first."""

    name = "topic"
    #: the callbacks a request read back from the shared frontier may name (crawler.queues)
    frontier_callbacks = frozenset({"parse", "on_error", "parse_robots", "parse_sitemap",
                                    "parse_feed", "on_discovery_error"})  # fmt: skip

    def __init__(
        self,
        seeds: str | None = None,
        topic: str | None = None,
        max_pages: str | int | None = None,
        max_depth: str | int | None = None,
        run_id: str | int | None = None,
        discover: str | None = None,
        recrawl: str | int | None = None,
        **kwargs: Any,
    ):
        super().__init__(**kwargs)
        from relevance.topic import load_topic

        if not topic:
            raise TopicFileError("no topic file: pass -a topic=FILE (see topics/ for examples)")
        self.topic = load_topic(topic)
        self.topic_path = topic
        self.seeds = parse_seeds(seeds)
        numbers = parse_spider_args(
            {"max_pages": max_pages, "max_depth": max_depth, "run_id": run_id}
        )
        self.max_pages = numbers["max_pages"]
        self.max_depth = numbers["max_depth"]
        self.run_id = numbers["run_id"]
        #: discovery sources (-a discover=sitemaps,feeds; crawler.discovery)
        self.discover = discovery.parse_discover(discover)
        self.feeds_requested: set[str] = set()
        #: recrawl (-a recrawl=1 -a run_id=N): the stored pages fetched again (URL ->
        #: crawler-side record) and every URL the run holds (links to them are not new)
        self.recrawl = str(recrawl or "").strip().lower() not in ("", "0", "false", "no")
        if self.recrawl and self.run_id is None:
            raise ConfigError("-a recrawl=1 needs the run: pass -a run_id=N "
                              "(or use: topicrawl recrawl --run N)")  # fmt: skip
        self.recrawl_targets: dict[str, Any] = {}
        self.known_urls: set[str] = set()
        #: read PDF and .docx responses (TOPICRAWL_DOCUMENTS_ENABLED), at most this many
        #: PDF pages each (TOPICRAWL_MAX_DOCUMENT_PAGES)
        self.documents = True
        self.max_document_pages = 200
        #: sitemaps and feeds: most bytes unpacked, most URLs taken from one file
        self.discovery_max_bytes = 50 * 1024 * 1024
        self.discovery_max_urls = 50_000
        #: sitemap entries queued in turn across sitemaps (TOPICRAWL_SITEMAP_INTERLEAVE;
        #: crawler.discovery.sitemap_ranks), once every sitemap of their host requested by
        #: this process is read, or after TOPICRAWL_SITEMAP_HOLD_SECONDS
        self.sitemap_interleave = True
        self.sitemap_hold_seconds = 30.0
        self.sitemaps_requested: set[str] = set()
        #: per host: sitemaps requested and not read yet; the entries of those read, held
        self._sitemaps_pending: Counter[str] = Counter()
        #: (since when, monotonic; [(sitemap URL, its entries, its request's meta)]): the meta
        #: names the sitemap's discovery journal key and, in a scale-out, its lease, both
        #: ended when the entries are queued
        self._sitemaps_held: dict[str, tuple[float, list[tuple[str, list[str], dict]]]] = {}
        #: JOBDIR: the discovery requests not done yet (crawler.discovery.DiscoveryJournal),
        #: and those a stopped or killed crawl left, requested again by :meth:`start`
        self.discovery_journal: discovery.DiscoveryJournal | None = None
        self._discovery_resumed: list[tuple[str, str]] = []
        #: seed URL -> why it could not be fetched (the no_seed_reachable outcome)
        self.seed_failures: dict[str, str] = {}
        seed_hosts = [urlsplit(s).hostname or "" for s in self.seeds]
        self.host_patterns = list(dict.fromkeys([*seed_hosts, *self.topic.allowed_hosts]))
        self.allowed_domains = [p.removeprefix("*.") for p in self.host_patterns]
        self.pages_seen = 0  # pages of the budget parsed by this process
        #: pages taken while the shared counter did not answer (added to it later)
        self._budget_debt = 0
        #: pages a killed crawl had sent to download but not stored (StorePipeline, resume)
        self.recovered_urls: list[str] = []
        #: crawler.middlewares.TrapGuardMiddleware, when enabled (it registers itself)
        self.trap_guard: Any = None
        #: dedup.pipeline.DedupPipeline, when enabled (it registers itself): the store
        #: pipeline checks cleaned texts with it
        self.dedup: Any = None
        #: scale-out: the crawl's page counter in Redis (INCR by every worker), when
        #: ``max_pages`` is set (from_crawler)
        self.pages_redis: Any = None
        self.pages_redis_errors: tuple[type[Exception], ...] = ()
        self.pages_key = "topicrawl:topic:pages"
        #: scale-out: how long a page waits for the shared counter while Redis does not
        #: answer (TOPICRAWL_REDIS_RETRY_SECONDS), asking again every ``budget_poll`` seconds
        self.budget_retry_seconds = 30.0
        self.budget_poll = 1.0
        #: when the first page found the shared counter unreachable (monotonic; None while
        #: Redis answers): a page arriving later in the outage waits only what is left of it
        self._budget_outage: float | None = None
        #: scale-out: this worker's leases on the requests it holds (crawler.lease)
        self.lease: Any = None
        self.scorer: LinkScorer | None = None
        #: the topic's host-level prior for the page decision ([page] host_prior), state per
        #: host in this process (relevance.hostprior)
        self.host_prior: HostPrior | None = None
        cfg = self.topic.page_host_prior
        if cfg.enabled:
            scale = "probability" if self.topic.priority.mode == "calibrated" else "power"
            self.host_prior = HostPrior.from_config(cfg, scale=scale,
                                                    sections=section_sample(self.topic))  # fmt: skip
        self.harvest_window = HarvestWindow(200)
        #: scale-out: seconds an idle worker waits for the shared frontier (from_crawler)
        self.shared_frontier = False
        self.harvest_floor = 0.0
        #: most bytes of HTML parsed per page (TOPICRAWL_MAX_HTML_BYTES; 0: no limit)
        self.max_html = 0
        #: most links followed from one page (TOPICRAWL_MAX_LINKS_PER_PAGE; 0: no limit)
        self.max_links = 0
        #: longest main text kept per page, in characters (TOPICRAWL_MAX_TEXT_CHARS)
        self.max_text = 0
        #: worker processes that extract pages off the reactor thread
        #: (TOPICRAWL_EXTRACT_WORKERS; crawler.extractpool); None: inline
        self.extract_pool: Any = None
        #: the crawl thread's CPU from spider open to close, into the stats at close
        self.thread_cpu = ThreadCpu()
        #: pages counted in the budget and in the extraction pool; the budget was spent
        #: while some were (the crawl closes once none is left, unless one broke)
        self._extracting = 0
        self._close_pending = False
        #: set when no page is left in the extraction pool (:meth:`_wait_for_pool`)
        self._pool_drained: asyncio.Event | None = None
        self.link_extractor = link_extractor()
        #: Re-prioritisation: a URL found again with a priority at least this much higher
        #: (in priority units) is enqueued again; 0: off (set by TOPICRAWL_REQUEUE_MARGIN).
        self.requeue_margin = 0
        #: Best priority issued per request fingerprint; FETCHED once the page was parsed.
        self.best_priority: dict[bytes, int] = {}
        #: request fingerprint by URL (:meth:`_fingerprint`, :meth:`_link_request`)
        self._url_fingerprints: dict[str, bytes] = {}
        self._url_kinds: dict[str, str | None] = {}
        self._state_restored = False
        #: JOBDIR (from_crawler): the learned state is saved there and restored on resume
        self.jobdir: str | None = None
        self.url_sample_restored = False
        self.learned_save_seconds = 60.0
        self._learned_saved_at = time.monotonic()

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> TopicSpider:
        spider: TopicSpider | None = None
        try:
            # a long start-up (a big topic, a cold model build) ends at SIGTERM/SIGINT, which
            # Scrapy's handlers would only queue behind it (topicrawl.interrupt)
            with interruptible("loading the topic and building the scorer"):
                spider = super().from_crawler(crawler, *args, **kwargs)
                s = crawler.settings
                if s.get("TOPICRAWL_CACHE_DIR"):  # trained topic models (topicrawl.modelcache)
                    from topicrawl.modelcache import set_cache_dir

                    set_cache_dir(s.get("TOPICRAWL_CACHE_DIR"))
                # the extraction pool's workers import while the scorer is built
                spider.max_links = max(0, s.getint("TOPICRAWL_MAX_LINKS_PER_PAGE"))
                crawler.signals.connect(spider._close_extract_pool, signal=signals.spider_closed)
                crawler.signals.connect(spider.thread_cpu.start, signal=signals.spider_opened)
                spider.open_extract_pool(crawler)
                spider.scorer = spider._build_scorer(
                    s.get("TOPICRAWL_LINK_SCORER"),
                    s.get("TOPICRAWL_AFFINITY_REDIS") or None,
                    s.get("TOPICRAWL_REDIS_PREFIX") or "topicrawl",
                )
            spider._configure(crawler)
        except BaseException:
            if spider is not None:
                spider._drop_extract_pool()
            raise
        return spider

    def _drop_extract_pool(self) -> None:
        """The spider is not made after all: its pool's workers are killed (still starting,
        they would hold the process's exit until warm)."""
        if self.extract_pool is not None:
            self.extract_pool.close()

    def _configure(self, crawler: Crawler) -> None:
        """The rest of :meth:`from_crawler`, once the scorer is built."""
        spider, s = self, crawler.settings
        spider.share_learning(scaleout_redis(s) if s.getbool("TOPICRAWL_SHARED_LEARNING", True)
                              else None, s)  # fmt: skip
        crawler.signals.connect(spider.flush_shared, signal=signals.spider_closed)
        spider.jobdir = s.get("JOBDIR") or None
        if spider.jobdir:
            spider.restore_learned()
        spider.harvest_window = HarvestWindow(s.getint("TOPICRAWL_HARVEST_WINDOW"))
        spider.shared_frontier = s.get("SCHEDULER") == "crawler.scheduler.RedisScheduler"
        spider.harvest_floor = s.getfloat("TOPICRAWL_HARVEST_FLOOR")
        spider.max_html = max(0, s.getint("TOPICRAWL_MAX_HTML_BYTES"))
        spider.max_text = max(0, s.getint("TOPICRAWL_MAX_TEXT_CHARS"))
        margin = s.getfloat("TOPICRAWL_REQUEUE_MARGIN")
        spider.requeue_margin = max(1, round(margin * PRIORITY_SCALE)) if margin > 0 else 0
        if spider.max_pages is not None:
            key = s.get("TOPICRAWL_PAGES_KEY", "topicrawl:%(spider)s:pages")
            spider.share_page_budget(scaleout_redis(s), key % {"spider": spider.name})
            spider.budget_retry_seconds = s.getfloat("TOPICRAWL_REDIS_RETRY_SECONDS", 30.0)
        spider.lease = lease_of(crawler)
        spider.documents = s.getbool("TOPICRAWL_DOCUMENTS_ENABLED", True)
        spider.max_document_pages = max(1, s.getint("TOPICRAWL_MAX_DOCUMENT_PAGES", 200))
        spider.discovery_max_bytes = s.getint("TOPICRAWL_DISCOVERY_MAX_BYTES", 50 * 1024 * 1024)
        spider.discovery_max_urls = max(1, s.getint("TOPICRAWL_DISCOVERY_MAX_URLS", 50_000))
        spider.sitemap_interleave = s.getbool("TOPICRAWL_SITEMAP_INTERLEAVE", True)
        spider.sitemap_hold_seconds = s.getfloat("TOPICRAWL_SITEMAP_HOLD_SECONDS", 30.0)
        if spider.jobdir and spider.discover:
            journal = spider.discovery_journal = discovery.DiscoveryJournal(spider.jobdir)
            spider._discovery_resumed = journal.open()
            crawler.signals.connect(lambda **_: journal.close(), signal=signals.spider_closed,
                                    weak=False)  # fmt: skip
        crawler.signals.connect(spider.spider_idle, signal=signals.spider_idle)
        crawler.signals.connect(spider.frontier_report, signal=signals.spider_closed)
        if spider.recrawl:
            spider.load_recrawl(s.get("TOPICRAWL_DB_URL") or None)

    def open_extract_pool(self, crawler: Crawler) -> None:
        """The extraction pool (crawler.extractpool), started now (its workers import while
        the spider builds its scorer and Scrapy its engine), counting into the stats from
        spider open, closed with the spider; off with ``TOPICRAWL_EXTRACT_WORKERS = 0``, or
        without the asyncio reactor."""
        from scrapy.exceptions import NotConfigured
        from scrapy.utils.reactor import is_asyncio_reactor_installed

        from crawler.extractpool import ExtractionPool, extract_with_links

        # the worker extracts the page's links (and feeds) too: the crawl's thread does not
        # parse the page (crawler.extractpool.extract_with_links)
        work = partial(extract_with_links, max_links=self.max_links,
                       feeds=discovery.FEEDS in self.discover)  # fmt: skip
        try:
            pool = ExtractionPool.from_crawler(crawler, work)
        except NotConfigured:
            return
        if not is_asyncio_reactor_installed():
            log.warning("TOPICRAWL_EXTRACT_WORKERS needs the asyncio reactor (TWISTED_REACTOR = "
                        "%r): pages are extracted inline", ASYNCIO_REACTOR)  # fmt: skip
            return
        self.extract_pool = pool
        pool.start()
        crawler.signals.connect(self._start_extract_pool, signal=signals.spider_opened)

    def _start_extract_pool(self, spider: Any = None) -> None:
        self.extract_pool.start(self.crawler.stats)  # started already: the stats from now

    def _close_extract_pool(self, spider: Any = None, reason: str = "") -> None:
        """The pool closed (its workers' memory and CPU into the stats), and the crawl
        process's memory: peak RSS, and RSS, PSS and USS now (``topicrawl/memory/*``)."""
        from crawler.extractpool import memory_mb, peak_rss_mb

        stats = self.crawler.stats
        self.thread_cpu.stop(stats)  # the crawl's thread from spider open (crawler.threadcpu)
        now = memory_mb()  # before the workers exit: the pages they share are shared still
        if self.extract_pool is not None:
            self.extract_pool.close()
        stats.set_value("topicrawl/memory/peak_rss_mb", round(peak_rss_mb(), 1))
        for key, value in now.items():
            stats.set_value(f"topicrawl/memory/{key}_mb", round(value, 1))
        # whether a page extracted here (the pool full, or off) made trafilatura build its
        # jusText fallback's stoplist of every language (≈ 19 MB: docs/scale.md)
        stats.set_value("topicrawl/memory/justext_stoplists", int(justext_stoplists_built()))

    # -- shared and kept learning (crawler.sharedlearn) -------------------------------------
    def share_learning(self, client: Any, settings: Any) -> None:
        """Scale-out: Algorithm 3's URL sample becomes one reservoir in Redis, and the learned
        models of calibrated mode learn from every worker's pages (crawler.sharedlearn)."""
        if client is None or self.scorer is None:
            return
        from crawler.sharedlearn import RedisURLReservoir, SharedLearningStream
        from crawler.sharedlearn import SharedStructureSample as Shared

        prefix = f"{settings.get('TOPICRAWL_REDIS_PREFIX') or 'topicrawl'}:{self.name}"
        every = settings.getfloat("TOPICRAWL_SHARED_REFRESH_SECONDS", 2.0)
        structure = getattr(self.scorer, "structure", None)
        if structure is not None and not isinstance(structure, Shared):
            reservoir = RedisURLReservoir(client, f"{prefix}:urlsample", n=structure.n)
            self.scorer.structure = Shared(structure, reservoir, refresh_seconds=every)
        scorer: Any = self.scorer
        if hasattr(scorer, "shared") and (getattr(scorer, "page_model", None) is not None
                                          or getattr(scorer, "link_model", None) is not None):
            scorer.shared = SharedLearningStream(client, f"{prefix}:learn", sync_seconds=every)

    def flush_shared(self, spider: Any = None, reason: str = "") -> None:
        """At close: send the accepted URLs and training examples still queued for the
        other workers (Redis errors are counted, never raised)."""
        st = getattr(self.scorer, "structure", None)
        if hasattr(st, "reservoir"):
            st.refresh()
        sh = getattr(self.scorer, "shared", None)
        if sh is not None:
            sh.sync(getattr(self.scorer, "page_model", None),
                    getattr(self.scorer, "link_model", None),
                    getattr(self.scorer, "learned_contrast", None))  # fmt: skip

    def restore_learned(self) -> None:
        """A resumed JOBDIR crawl starts from the learned models and URL sample it saved."""
        from crawler.sharedlearn import load_learned

        assert self.jobdir is not None
        restored = load_learned(self.jobdir, self.scorer)
        if restored:
            log.info("learned state restored from JOBDIR: %s", restored)
        #: the URL sample came back from JOBDIR (StorePipeline replaces it by the run's
        #: stored history when there is one)
        self.url_sample_restored = "url_sample" in restored
        self.crawler.signals.connect(self.save_learned, signal=signals.spider_closed)
        buf = getattr(self.scorer, "rejudge", None)
        if buf is not None:  # the rejected pages to judge again (relevance.learning.rejudge)
            from relevance.learning.rejudge import load_held

            if n := load_held(self.jobdir, buf):
                log.info("%d rejected pages to judge again restored from JOBDIR", n)
            self.crawler.signals.connect(self.save_held, signal=signals.spider_closed)

    def save_held(self, spider: Any = None, reason: str = "") -> None:
        """At close: the rejected pages to judge again, to JOBDIR (a resume reads them)."""
        from relevance.learning.rejudge import save_held

        buf = getattr(self.scorer, "rejudge", None)
        if self.jobdir and buf is not None:
            try:
                save_held(self.jobdir, buf)
            except OSError as exc:
                log.warning("rejected pages to judge again not saved in JOBDIR: %s", exc)

    def save_learned(self, spider: Any = None, reason: str = "") -> None:
        """Write the learned state to JOBDIR (at close, and every
        ``learned_save_seconds`` while crawling)."""
        from crawler.sharedlearn import save_learned

        self._learned_saved_at = time.monotonic()
        if self.jobdir and self.scorer is not None:
            try:
                save_learned(self.jobdir, self.scorer)
            except OSError as exc:
                log.warning("learned state not saved in JOBDIR: %s", exc)

    def shared_learning_stats(self) -> dict[str, int]:
        """Counters of the shared URL sample and learning stream (failures: Redis errors,
        the worker used its own; malformed: entries refused)."""
        out: dict[str, int] = {}
        st = getattr(self.scorer, "structure", None)
        if hasattr(st, "reservoir"):
            out["topicrawl/urlsample/unshared"] = st.failures
            out["topicrawl/urlsample/malformed"] = st.malformed
            out["topicrawl/urlsample/shared_reads"] = st.refreshes
        sh = getattr(self.scorer, "shared", None)
        if sh is not None:
            out["topicrawl/learning/unshared"] = sh.failures
            out["topicrawl/learning/malformed"] = sh.malformed
            out["topicrawl/learning/applied_from_others"] = sh.applied
        return {k: v for k, v in out.items() if v}

    # -- recrawl (topicrawl recrawl --run N) -------------------------------------------------
    def load_recrawl(self, db_url: str | None) -> None:
        """Read the run's pages to fetch again and the URLs it holds (``models.store``)."""
        from models.store import Store

        store = Store.from_url(db_url)
        try:
            if store.get_run(self.run_id) is None:
                raise ConfigError(f"no crawl run {self.run_id} to recrawl in this database "
                                  "(list them: topicrawl runs)")  # fmt: skip
            self.recrawl_targets = {t.url: t for t in store.recrawl_targets(self.run_id)}
            self.known_urls = store.page_urls(self.run_id)
        finally:
            store.close()
        log.info("recrawl of run %d: %d pages to fetch again (%d accepted, %d list pages)",
                 self.run_id, len(self.recrawl_targets),
                 sum(t.accepted for t in self.recrawl_targets.values()),
                 sum(t.hub for t in self.recrawl_targets.values()))  # fmt: skip

    def dedup_preload(self) -> Iterator[tuple[str, Any]]:
        """Recrawl: the run's accepted pages, for the dedup index (``DedupPipeline``), so
        that a new page that copies a stored document is dropped as a duplicate."""
        if not self.recrawl:
            return
        from models.store import Store

        store = Store.from_url(self.crawler.settings.get("TOPICRAWL_DB_URL") or None)
        try:
            yield from ((p.url, p) for p in store.iter_pages(self.run_id, accepted_only=True))
        finally:
            store.close()

    def dedup_preload_documents(self) -> Iterator[tuple[str, str]]:
        """Recrawl: the run's documents (URL, corpus text), for the dedup pipeline's exact
        check of cleaned texts."""
        if not self.recrawl:
            return
        from models.store import Store

        store = Store.from_url(self.crawler.settings.get("TOPICRAWL_DB_URL") or None)
        try:
            yield from ((d.url, d.text) for d in store.iter_documents(self.run_id))
        finally:
            store.close()

    def _recrawl_requests(self) -> Iterator[scrapy.Request]:
        """Conditional requests (If-None-Match / If-Modified-Since) for the stored pages."""
        for target in self.recrawl_targets.values():
            headers = {}
            if target.etag:
                headers["If-None-Match"] = target.etag
            if target.last_modified:
                headers["If-Modified-Since"] = target.last_modified
            yield scrapy.Request(
                target.url, callback=self.parse, errback=self.on_error, headers=headers,
                priority=quantize(1.0) + (1 if target.hub else 0), dont_filter=True,
                meta={"parent_url": target.parent_url, "anchor": target.anchor,
                      "seed": target.url in self.seeds, "depth": target.depth,
                      "recrawl": target.url, "link_score": target.link_score,
                      "handle_httpstatus_list": [304]},
            )  # fmt: skip

    def frontier_report(self, spider: Any = None, reason: str = "") -> None:
        """A crawl that ended because its frontier ran dry (Scrapy's ``finished``, under
        its page budget) says so, and what would help (``topicrawl/frontier/empty_after``,
        ``topicrawl/frontier/hint``; the crawl command prints the hint)."""
        stats = self.crawler.stats
        fetched = int(stats.get_value("topicrawl/pages/fetched", 0) or 0)
        if reason != "finished" or not fetched or self.recrawl:
            return
        if self.max_pages is not None and fetched >= self.max_pages:
            return
        missing = [s for s in discovery.SOURCES if s not in self.discover]
        if missing:
            help_ = (f"try -a discover={','.join(discovery.SOURCES)} or more seeds"
                     if len(missing) == 2 else f"try -a discover={','.join(discovery.SOURCES)}"
                     " (sitemaps and feeds) or more seeds")  # fmt: skip
        else:
            help_ = "try more seeds, or allow more hosts in the topic file (allowed_hosts)"
        budget = f" of a budget of {self.max_pages}" if self.max_pages is not None else ""
        hint = f"frontier empty after {fetched} pages{budget}; {help_}"
        stats.set_value("topicrawl/frontier/empty_after", fetched)
        stats.set_value("topicrawl/frontier/hint", hint)
        log.warning("%s", hint)

    def spider_idle(self) -> None:
        """Ends a crawl that fetched no page because every seed failed with reason
        ``no_seed_reachable`` (exit status 3) and one line naming the seeds' errors.

        Scale-out: idle workers wait for each other in :class:`crawler.idle.SharedIdleClose`.

        Sitemap entries still held (:meth:`release_sitemaps`: a sitemap requested here was
        read by another worker) are queued now, and the crawl goes on."""
        if self._sitemaps_held:
            engine = self.crawler.engine
            for host in list(self._sitemaps_held):
                for request in self.release_sitemaps(host, force=True):
                    engine.crawl(request)
            raise DontCloseSpider
        # the frontier ran dry: the final re-judgement's items go to the pipelines, the
        # crawl ends at the next idle check (relevance.learning.final)
        changed = list(self.final_judged())
        if changed:
            from scrapy.utils.defer import deferred_from_coro

            scraper = self.crawler.engine.scraper
            for item in changed:
                deferred_from_coro(scraper.start_itemproc_async(item, response=None))
            raise DontCloseSpider
        stats = self.crawler.stats
        if stats.get_value("topicrawl/pages/fetched", 0) or not self.seed_failures:
            return
        if any(url not in self.seed_failures for url in self.seeds):
            return  # a seed was fetched (an empty or non-HTML page): not unreachable
        causes = "; ".join(f"{url} ({why})" for url, why in list(self.seed_failures.items())[:3])
        more = len(self.seed_failures) - 3
        if more > 0:
            causes += f"; and {more} more"
        set_outcome(
            stats,
            NO_SEED_REACHABLE,
            f"no seed was reachable: {causes}. Check the seed URLs, the network and the "
            "proxy (http_proxy), then run the same command again",
        )
        raise CloseSpider(NO_SEED_REACHABLE)

    def share_page_budget(self, client: Any, key: str) -> None:
        """Count ``max_pages`` in the Redis counter ``key`` that every worker shares (no
        client: this process counts alone)."""
        self.pages_redis, self.pages_key = client, key
        self.pages_redis_errors = redis_errors(client)

    def take_page(self, meta: dict[str, Any] | None = None, url: str = "") -> int | None:
        """Count a fetched page against ``max_pages``: its number in the crawl, or None when
        the budget is spent. Scale-out: one Redis counter for every worker (INCR), so the
        budget is the crawl's; a page refused as over budget gives its count back (DECR),
        so the counter never passes the budget. If Redis does not answer, this worker counts
        alone (logged, ``topicrawl/pages/budget_unshared``) and adds the pages it took
        meanwhile to the shared counter once Redis answers again (the crawl's callback waits
        instead: :meth:`take_shared_page`).

        With a lease (``meta``: the response's, crawler.lease) the count marks the lease in
        the same script; :data:`LEASE_LOST` when another worker owns the request now."""
        try:
            return self._take(meta, url, alone=True)
        except self.pages_redis_errors as exc:
            self.crawler.stats.inc_value("topicrawl/pages/budget_unshared")
            log.warning("page budget's Redis counter unavailable (%s): counting alone", exc)
        if self.max_pages is not None and self.pages_seen >= self.max_pages:
            return None
        self.pages_seen += 1
        if self.pages_redis is not None:
            self._budget_debt += 1
        return self.pages_seen

    def _take(self, meta: dict[str, Any] | None, url: str, *, alone: bool) -> int | None:
        """One try at :meth:`take_page`'s shared count; raises the Redis error when the
        shared counter does not answer (a lease that does not answer counts without it when
        ``alone``)."""
        lease_id = (meta or {}).get(LEASE)
        if self.lease is not None and lease_id:
            if self.lease.superseded(meta):  # its lease was popped again: that copy counts
                return LEASE_LOST
            try:
                n = self.lease.take(lease_id, url, count=self.pages_redis is not None,
                                    limit=self.max_pages, debt=self._budget_debt)  # fmt: skip
            except self.lease.errors as exc:
                if not alone:
                    raise
                log.warning("lease of %s not marked (%s): counting without it", url, exc)
            else:
                if n == -1:
                    return LEASE_LOST
                if n == 0:
                    return None
                self._budget_debt = 0
                self.pages_seen += 1
                return n if self.pages_redis is not None else self.pages_seen
        if self.pages_redis is not None:
            n = int(self.pages_redis.incrby(self.pages_key, 1 + self._budget_debt))
            self._budget_debt = 0
            if n > self.max_pages:
                self._give_back(n)
                return None
            self.pages_seen += 1
            return n
        if self.max_pages is not None and self.pages_seen >= self.max_pages:
            return None
        self.pages_seen += 1
        return self.pages_seen

    async def take_shared_page(self, meta: dict[str, Any] | None = None,
                               url: str = "") -> int | None:  # fmt: skip
        """:meth:`take_page` for the scale-out's shared budget: while Redis does not answer
        the page waits and asks again every ``budget_poll`` seconds, so it takes its number
        from the shared counter and the budget stays exact through an outage (issue 11: no
        extra round trip while Redis answers; the lease script's count is idempotent, so a
        count whose reply was lost is not counted twice). New requests wait at the fetch-once
        set meanwhile (crawler.middlewares.FetchOnceMiddleware). Past ``budget_retry_seconds`` the
        crawl is ending with ``redis_unreachable``: :data:`BUDGET_UNREACHABLE`, the page is
        not parsed and its lease stays in Redis, so the resume fetches it again (the budget
        runs from the outage's first failed take, not each page's). Counted as
        ``topicrawl/pages/budget_waited`` (pages that waited),
        ``topicrawl/pages/budget_wait_seconds`` and ``topicrawl/pages/budget_unreachable``."""
        errors = (*self.pages_redis_errors, *(self.lease.errors if self.lease else ()))
        stats = self.crawler.stats
        waited = False
        while True:
            try:
                n = self._take(meta, url, alone=False)
            except errors as exc:
                now = time.monotonic()
                if not waited:
                    waited = True
                    stats.inc_value("topicrawl/pages/budget_waited")
                if self._budget_outage is None:  # counted from the first page that failed
                    self._budget_outage = now
                    log.warning("Redis unreachable (%s): downloaded pages wait for the shared "
                                "page budget (up to %gs)", exc, self.budget_retry_seconds)  # fmt: skip
                if now - self._budget_outage >= self.budget_retry_seconds:
                    stats.inc_value("topicrawl/pages/budget_unreachable")
                    then = ("it is fetched again on resume" if (meta or {}).get(LEASE) else
                            "it is lost with the requests held in memory")  # fmt: skip
                    log.warning("%s not counted: the page budget's Redis did not answer for "
                                "%gs; %s", url, self.budget_retry_seconds, then)  # fmt: skip
                    return BUDGET_UNREACHABLE
                await sleep(self.budget_poll)
                continue
            if self._budget_outage is not None:  # the first count after an outage
                stats.inc_value("topicrawl/pages/budget_wait_seconds",
                                round(time.monotonic() - self._budget_outage))  # fmt: skip
                self._budget_outage = None
            return n

    def _give_back(self, n: int) -> None:
        """Undo the INCR of a page refused as over budget (at most down to the budget)."""
        try:
            self.pages_redis.decr(self.pages_key)
        except self.pages_redis_errors:
            pass

    def release_page(self, meta: dict[str, Any] | None = None) -> None:
        """Give back the budget of a taken page that will not be stored (it broke)."""
        self.pages_seen = max(0, self.pages_seen - 1)
        self._close_pending = False
        lease_id = self.lease.held_id(meta) if self.lease is not None else None
        if lease_id:
            try:  # a reclaimer that took the lease gave the count back already
                self.lease.uncount(lease_id, count=self.pages_redis is not None)
                return
            except self.lease.errors as exc:
                log.warning("lease of a broken page not updated (%s)", exc)
        if self.pages_redis is not None:
            try:
                self.pages_redis.decr(self.pages_key)
            except self.pages_redis_errors:
                self._budget_debt -= 1

    def _fingerprint(self, request_or_url: scrapy.Request | str) -> bytes:
        """The request fingerprint of a request, or of a GET of a URL (the URLs of the last
        :data:`URL_FINGERPRINTS` distinct URLs remembered: a site's navigation links recur on
        every page)."""
        if isinstance(request_or_url, str):
            fp = self._url_fingerprints.get(request_or_url)
            if fp is None:
                fp = self._remember_fingerprint(request_or_url, scrapy.Request(request_or_url))
            return fp
        return self.crawler.request_fingerprinter.fingerprint(request_or_url)

    def _remember_fingerprint(self, url: str, request: scrapy.Request) -> bytes:
        """The fingerprint of ``request`` (a GET of ``url``), remembered by URL. Scrapy's
        fingerprinter keeps it with the request too, so the dupefilter and the fetch-once
        guard do not compute it again for that request (:meth:`_link_request`)."""
        fps = self._url_fingerprints
        if len(fps) >= URL_FINGERPRINTS:
            del fps[next(iter(fps))]
        fp = fps[url] = self.crawler.request_fingerprinter.fingerprint(request)
        return fp

    def _restore_priorities(self) -> None:
        """A resumed crawl (JOBDIR: Scrapy's ``SpiderState`` keeps ``self.state``, set when
        the spider opens) keeps the priorities it issued, so a re-queue compares with them."""
        if self._state_restored:
            return
        self._state_restored = True
        state = getattr(self, "state", None)
        if isinstance(state, dict):
            saved = state.setdefault("topicrawl_best_priority", {})
            saved.update(self.best_priority)
            self.best_priority = saved

    def _build_scorer(
        self, spec: str | None, shared_cache: str | None = None, namespace: str = "topicrawl"
    ) -> LinkScorer:
        if not spec or spec == "relevance":
            from relevance.priority import build_scorer

            return build_scorer(self.topic, shared_cache=shared_cache, shared_namespace=namespace)
        cls = load_object(spec)
        return cls.from_topic(self.topic)

    # -- start -------------------------------------------------------------------------------
    async def start(self) -> AsyncIterator[scrapy.Request]:
        if self.recrawl:
            self.crawler.stats.set_value("topicrawl/recrawl/targets", len(self.recrawl_targets))
            if self.trap_guard is not None:  # the run's query variants count against traps
                for url in sorted(self.known_urls):
                    self.trap_guard.allowed(url)
            for request in self._recrawl_requests():
                yield request
        journal = self.discovery_journal
        if journal is not None and self.recovered_urls:  # sitemaps and feeds are no pages
            self.recovered_urls = [u for u in self.recovered_urls if u not in journal.urls]
        if self._discovery_resumed:
            self.crawler.stats.set_value("topicrawl/discovery/resumed",
                                         len(self._discovery_resumed))  # fmt: skip
            log.info("%d robots.txt, sitemaps and feeds not done when the crawl stopped are "
                     "requested again", len(self._discovery_resumed))  # fmt: skip
        for kind, url in self._discovery_resumed:
            if kind == "sitemap":
                again = self._sitemap_requests([url], resumed=True)
            elif kind == "feed":
                again = self._feed_requests([url], resumed=True)
            else:
                again = iter([self._discovery_request(url, kind, resumed=True)])
            for request in again:  # (start is an async generator: no yield from)
                yield request
        if self.recovered_urls:  # set by StorePipeline when a JOBDIR crawl resumes
            self.crawler.stats.set_value("topicrawl/pages/recovered", len(self.recovered_urls))
            log.info("%d pages sent to download but never stored are requested again",
                     len(self.recovered_urls))  # fmt: skip
        for url in self.recovered_urls:
            yield scrapy.Request(
                url,
                callback=self.parse,
                errback=self.on_error,
                priority=quantize(1.0),
                dont_filter=True,
                meta={"parent_url": None, "anchor": None, "seed": url in self.seeds,
                      RECOVERED: url, "link_score": {"recovered": True},
                      # a redirect is followed by parse, through the dupefilter
                      "dont_redirect": True, "handle_httpstatus_list": _REDIRECTS},
            )  # fmt: skip
        for url in self.seeds:
            if self.recrawl and url in self.known_urls:
                continue  # fetched again above, conditionally
            yield scrapy.Request(
                url,
                callback=self.parse,
                errback=self.on_error,
                priority=quantize(1.0) + 1,
                meta={"parent_url": None, "anchor": None, "seed": True,
                      "link_score": {"seed": True}},
            )  # fmt: skip
        if discovery.SITEMAPS in self.discover:
            for home in dict.fromkeys(f"{urlsplit(u).scheme}://{urlsplit(u).netloc}"
                                      for u in self.seeds):  # fmt: skip
                url = f"{home}/robots.txt"
                if journal is None or url not in journal.urls:  # else: requested before
                    yield self._discovery_request(url, "robots")

    # -- discovery: sitemaps and feeds (crawler.discovery) -------------------------------------
    def _discovery_request(self, url: str, kind: str, *, resumed: bool = False,
                           **meta: Any) -> scrapy.Request:  # fmt: skip
        """A request for a robots.txt, sitemap or feed, in the JOBDIR's discovery journal
        until done (:meth:`_discovery_done`); ``resumed``: one the journal gave back, which
        passes the dupefilter and the fetch-once guard (the stopped crawl had sent it)."""
        callback = {"robots": self.parse_robots, "sitemap": self.parse_sitemap,
                    "feed": self.parse_feed}[kind]  # fmt: skip
        self.crawler.stats.inc_value(f"topicrawl/discovery/{kind}/requested")
        if resumed:
            meta[RECOVERED] = url
        request = scrapy.Request(
            url, callback=callback, errback=self.on_discovery_error,
            priority=quantize(1.0) + 2, dont_filter=resumed,
            meta={discovery.DISCOVERY: kind, "dont_obey_robotstxt": kind == "robots", **meta},
        )  # fmt: skip
        if self.discovery_journal is not None:
            request.meta[discovery.JOURNAL_KEY] = request.url
            if not resumed:  # in the journal already
                self.discovery_journal.requested(kind, request.url)
        return request

    def _discovery_done(self, meta: dict | None) -> None:
        """The robots.txt, sitemap or feed of the request ``meta`` is done: its links and
        sitemaps are queued (a held sitemap's when released), or it failed."""
        if self.discovery_journal is not None and meta:
            key = meta.get(discovery.JOURNAL_KEY)
            if key:
                self.discovery_journal.done(key)

    def on_discovery_error(self, failure: Any) -> None:
        self.end_lease(failure)
        request = getattr(failure, "request", None)
        kind = request.meta.get(discovery.DISCOVERY, "?") if request is not None else "?"
        self.crawler.stats.inc_value(f"topicrawl/discovery/{kind}/failed")
        if kind == "robots" and request is not None:  # no robots.txt: the usual place
            yield from self._sitemap_requests([request.url.replace("/robots.txt", "/sitemap.xml")])
            self._discovery_done(request.meta)
            return
        if kind == "sitemap" and request is not None:  # its host's other sitemaps go on
            host = request.meta.get(discovery.SITEMAP_HOST, "")
            self._sitemap_read(host)
            yield from self.release_sitemaps(host)
        self._discovery_done(request.meta if request is not None else None)
        log.info("%s %s not fetched: %s", kind, request.url if request else "?",
                 describe_failure(failure))  # fmt: skip

    def parse_robots(self, response: Response) -> Iterator[scrapy.Request]:
        """robots.txt's ``Sitemap:`` lines, else ``/sitemap.xml``."""
        body = response.body[: self.discovery_max_bytes] if response.status == 200 else b""
        urls = discovery.robots_sitemaps(body, response.url)
        if not urls:
            urls = [response.urljoin("/sitemap.xml")]
        yield from self._sitemap_requests(urls)
        self._discovery_done(_request_meta(response))

    def _sitemap_requests(self, urls: Iterable[str], *, resumed: bool = False
                          ) -> Iterator[scrapy.Request]:  # fmt: skip
        """Requests for the sitemaps ``urls`` on allowed hosts, each once; each is counted
        as pending for its host (:meth:`release_sitemaps`). ``resumed``: the discovery
        journal's (:meth:`_discovery_request`)."""
        for url in urls:
            host = urlsplit(url).hostname or ""
            if url in self.sitemaps_requested or not host_allowed(host, self.host_patterns):
                continue
            self.sitemaps_requested.add(url)
            self._sitemaps_pending[host] += 1
            yield self._discovery_request(url, "sitemap", resumed=resumed,
                                          **{discovery.SITEMAP_HOST: host})  # fmt: skip

    def _sitemap_read(self, host: str) -> None:
        """A sitemap of ``host`` is read (or failed): one pending less."""
        if self._sitemaps_pending[host] > 1:
            self._sitemaps_pending[host] -= 1
        else:
            self._sitemaps_pending.pop(host, None)

    def release_sitemaps(self, host: str, *, force: bool = False) -> Iterator[scrapy.Request]:
        """Queue the entries held for ``host`` once no sitemap of the host requested by this
        process is left to read (``force``: now), so that they are queued together and
        fetched in turn across the host's sitemaps (:func:`crawler.discovery.sitemap_ranks`).
        Queued as each sitemap was read, the first sitemap's entries filled the downloader
        (it takes up to ``CONCURRENT_REQUESTS`` requests ahead) before the next was read.
        Entries held longer than ``TOPICRAWL_SITEMAP_HOLD_SECONDS`` (a slow sitemap; in the
        scale-out a sitemap requested here may be read by another worker) are released
        with the next page (:meth:`release_stale_sitemaps`), and any left when the crawl
        goes idle then (:meth:`spider_idle`)."""
        if not force and self._sitemaps_pending.get(host):
            return
        _, held = self._sitemaps_held.pop(host, (0.0, []))
        for sitemap_url, urls, meta in held:
            yield from self._follow_sitemap(sitemap_url, urls, discovery.sitemap_ranks(urls))
            self._discovery_done(meta)
            self._end_lease(meta, sitemap_url)

    def release_stale_sitemaps(self) -> Iterator[scrapy.Request]:
        """The entries held longer than ``TOPICRAWL_SITEMAP_HOLD_SECONDS``, queued now."""
        if not self._sitemaps_held:
            return
        now = time.monotonic()
        for host, (since, _) in list(self._sitemaps_held.items()):
            if now - since >= self.sitemap_hold_seconds:
                self.crawler.stats.inc_value("topicrawl/discovery/sitemap/released_late")
                yield from self.release_sitemaps(host, force=True)

    def parse_sitemap(self, response: Response) -> Iterator[Any]:
        """A sitemap index (its sitemaps are fetched) or a sitemap (its URLs are links,
        queued in turn with the host's other sitemaps: :meth:`release_sitemaps`)."""
        meta = _request_meta(response)
        host = meta.get(discovery.SITEMAP_HOST) or urlsplit(response.url).hostname or ""
        urls = yield from self._read_sitemap(response)
        self._sitemap_read(host)
        if urls and self.sitemap_interleave:  # done when released, its lease kept until then
            if self.lease is not None and meta.get(LEASE):
                meta[LEASE_KEPT] = True
            self._sitemaps_held.setdefault(host, (time.monotonic(), []))[1].append(
                (response.url, urls, meta))
        else:
            if urls:  # queued now, in the sitemap's own order
                yield from self._follow_sitemap(response.url, urls)
            self._discovery_done(meta)
        yield from self.release_sitemaps(host)

    def _follow_sitemap(self, sitemap_url: str, urls: list[str],
                        ranks: dict[str, int] | None = None) -> Iterator[scrapy.Request]:  # fmt: skip
        """The entries ``urls`` of a sitemap as links without anchor text, queued by their
        score (less their rank in ``ranks``)."""
        info = PageInfo(url=sitemap_url, is_seed=True)
        yield from self.follow(sitemap_url, info, [Link(url=u, anchor="") for u in urls], 0,
                               source="sitemap", ranks=ranks)  # fmt: skip

    def _read_sitemap(self, response: Response) -> Iterator[Any]:
        """Read a sitemap: yields the requests of a sitemap index's sitemaps; returns the
        URLs of a sitemap (None for an index or a file that is no sitemap)."""
        stats = self.crawler.stats
        try:
            xml = discovery.sitemap_body(response.body, max_size=self.discovery_max_bytes)
        except ValueError as exc:
            stats.inc_value("topicrawl/discovery/sitemap/too_large")
            log.warning("sitemap %s skipped: %s", response.url, exc)
            return None
        parsed = discovery.parse_sitemap(xml, max_urls=self.discovery_max_urls)
        if parsed is None:
            stats.inc_value("topicrawl/discovery/sitemap/invalid")
            return None
        stats.inc_value("topicrawl/discovery/sitemap/parsed")
        if parsed.cut:
            stats.inc_value("topicrawl/discovery/sitemap/urls_cut", parsed.cut)
        if parsed.kind == "sitemapindex":
            yield from self._sitemap_requests(parsed.urls)
            return None
        stats.inc_value("topicrawl/discovery/sitemap/urls", len(parsed.urls))
        return list(parsed.urls)

    def parse_feed(self, response: Response) -> Iterator[Any]:
        """An RSS or Atom feed: its entries are links, their titles the anchor texts."""
        stats = self.crawler.stats
        parsed = discovery.parse_feed(response.body[: self.discovery_max_bytes],
                                      max_entries=self.discovery_max_urls)  # fmt: skip
        if parsed is None:
            stats.inc_value("topicrawl/discovery/feed/invalid")
            self._discovery_done(_request_meta(response))
            return
        title, entries = parsed
        stats.inc_value("topicrawl/discovery/feed/parsed")
        stats.inc_value("topicrawl/discovery/feed/urls", len(entries))
        info = PageInfo(url=response.url, title=title, is_seed=True,
                        text="\n".join(f"{e.title} {e.summary}" for e in entries))  # fmt: skip
        links = [Link(url=response.urljoin(e.url), anchor=e.title) for e in entries]
        yield from self.follow(response.url, info, links, 0, source="feed")
        self._discovery_done(_request_meta(response))

    def _feeds_of(self, page: HtmlResponse, urls: list[str] | None = None
                  ) -> Iterator[scrapy.Request]:  # fmt: skip
        """Requests for the feeds ``page`` announces (``urls``: found by the extraction
        pool's worker already)."""
        yield from self._feed_requests(discovery.feed_urls(page) if urls is None else urls)

    def _feed_requests(self, urls: Iterable[str], *, resumed: bool = False
                       ) -> Iterator[scrapy.Request]:  # fmt: skip
        """Requests for the feeds ``urls`` on allowed hosts, each once (``resumed``: the
        discovery journal's)."""
        for url in urls:
            if url in self.feeds_requested:
                continue
            if host_allowed(urlsplit(url).hostname or "", self.host_patterns):
                self.feeds_requested.add(url)
                yield self._discovery_request(url, "feed", resumed=resumed)

    # -- parsing -----------------------------------------------------------------------------
    def decoded(self, response: Response) -> tuple[HtmlResponse, str]:
        """The response re-decoded by :func:`topicrawl.extract.decode_html`, and the codec."""
        header = None
        if isinstance(response, TextResponse):
            header = response._headers_encoding()  # noqa: SLF001 - Scrapy's own header parse
        body = response.body
        if self.max_html and len(body) > self.max_html:  # bounded memory and time per page
            self.crawler.stats.inc_value("topicrawl/pages/html_truncated")
            body = body[: self.max_html]
        text, codec = decode_html(body, header)
        return HtmlResponse(
            url=response.url,
            status=response.status,
            headers=response.headers,
            body=text.encode("utf-8"),
            encoding="utf-8",
            request=response.request,
        ), codec

    async def parse(self, response: Response, **kwargs: Any) -> Iterable[Any]:
        """The pages' callback: in the scale-out with a page budget the page first takes its
        number from the shared counter, waiting out a Redis outage
        (:meth:`take_shared_page`); with the extraction pool ready, an HTML page counted in
        the budget is decoded here and extracted by a worker process while the reactor goes
        on with other pages (:meth:`extract_off_thread`); then :meth:`parse_page` yields its
        item and links."""
        if response.status in _REDIRECTS or response.status == 304:
            return self.parse_page(response)
        taken, number = False, None
        if self.pages_redis is not None:
            taken, number = True, await self.take_shared_page(response.meta, meta_url(response))
        pool = self.extract_pool
        if not taken and self._extracting and self.pages_redis is None and self.lease is None:
            # over budget while pages are in the pool: wait for them, as inline extraction
            # would have, since one may break and give its budget back
            taken, number = True, self.take_page(response.meta, meta_url(response))
            while number is None and self._extracting:
                await self._wait_for_pool()
                number = self.take_page(response.meta, meta_url(response))
        if pool is not None and pool.warming:
            # the first second: wait for the workers rather than extract here (trafilatura's
            # fallbacks would load jusText's stoplists into the crawl's process, ≈ 30 MB)
            await pool.wait_warm()
        if pool is None or not pool.ready:
            return self.parse_page(response, number, taken=taken)
        fmt = self.document_format(response)
        if not taken:
            number = self.take_page(response.meta, meta_url(response))
        if number is None or number < 0:  # over budget, lease lost, Redis gone: not parsed
            return self.parse_page(response, number, taken=True)
        self._extracting += 1
        try:
            if fmt is None:
                prepared = await self.extract_off_thread(response)
            else:
                prepared = await self.document_off_thread(response, fmt)
        finally:
            self._extracting -= 1
            if not self._extracting and self._pool_drained is not None:
                self._pool_drained.set()
        if isinstance(prepared, Exception):
            self.count_fetched(response)
            self.broken_page(response, prepared, fmt)
            return ()
        return self.parse_page(response, number, taken=True, prepared=prepared)

    async def _wait_for_pool(self) -> None:
        """Until no page is left in the extraction pool (each may break and give its budget
        back: a page over budget meanwhile takes it instead of being dropped)."""
        if self._pool_drained is None:
            self._pool_drained = asyncio.Event()
        self._pool_drained.clear()
        await self._pool_drained.wait()

    async def extract_off_thread(self, response: Response) -> Prepared | Exception:
        """The page decoded here and extracted by the pool (inline when the pool cannot take
        it now), or the exception that makes it a broken page."""
        try:
            page, codec = self.decoded(response)
            # the pool runs extract_with_links (open_extract_pool); None: the pool is busy
            work: PageWork | None = await self.extract_pool.extract(page.body, page.url)
            if work is None:
                extracted = extract_page(page.text, page.url, tree=page.selector.root)
            else:
                extracted = work.extracted
        except Exception as exc:  # counted and logged by broken_page
            return exc
        return Prepared(page, codec, extracted, work)

    async def document_off_thread(self, response: Response, fmt: str) -> Prepared | Exception:
        """A PDF or .docx document's text, extracted by the pool (pypdf and python-docx are
        imported in its worker, not here) or inline when the pool cannot take it now; or the
        exception that makes it a broken page."""
        from crawler.extractpool import extract_document_body

        limits = self.document_limits()
        try:
            work = partial(extract_document_body, fmt=fmt, **limits)
            extracted = await self.extract_pool.extract(response.body, response.url, work)
            if extracted is None:
                extracted = extract_document(response.body, fmt, **limits)
        except Exception as exc:  # counted and logged by broken_page
            return exc
        return Prepared(None, None, extracted, fmt=fmt)

    def document_limits(self) -> dict[str, int]:
        """The bounds of a document's extraction: its pages, and its text's characters."""
        return {"max_pages": self.max_document_pages, "max_chars": self.max_text or 500_000}

    def document_format(self, response: Response) -> str | None:
        """'pdf' or 'docx' for a document response (topicrawl.documents), else None."""
        if not self.documents:
            return None
        ctype = response.headers.get(b"Content-Type", b"").decode("latin-1")
        return document_format(ctype, response.url)

    def count_fetched(self, response: Response) -> None:
        """A page counted in the budget is fetched: counted, and its URLs (with redirects)
        never re-queued (:meth:`_issue`)."""
        self.crawler.stats.inc_value("topicrawl/pages/fetched")
        if self.requeue_margin:
            self._restore_priorities()
            for url in {*response.meta.get("redirect_urls", ()), response.url}:
                self.best_priority[self._fingerprint(url)] = FETCHED

    def broken_page(self, response: Response, exc: Exception, fmt: str | None = None) -> None:
        """A page that cannot be parsed: counted (``topicrawl/pages/broken``), its budget
        given back, logged (the first :data:`BROKEN_LOGGED` ones at WARNING)."""
        stats = self.crawler.stats
        stats.inc_value("topicrawl/pages/broken")
        if fmt is not None:
            stats.inc_value(f"topicrawl/documents/{fmt}_broken")
        self.release_page(response.meta)
        broken = stats.get_value("topicrawl/pages/broken", 0)
        level = logging.WARNING if broken <= BROKEN_LOGGED else logging.DEBUG
        log.log(level, "cannot parse %s: %s: %s", response.url, type(exc).__name__, exc)
        if broken == BROKEN_LOGGED:
            log.warning("more pages that cannot be parsed are counted "
                        "(topicrawl/pages/broken), not logged")  # fmt: skip

    def parse_page(self, response: Response, number: int | None = None, *, taken: bool = False,
                   prepared: Prepared | None = None) -> Iterator[Any]:  # fmt: skip
        """Extract and score a page; yield its links, then the page
        (:class:`~crawler.items.PageItem`: stored only once its links are queued).
        ``taken``: :meth:`parse` took the page's ``number`` in the budget (None: over
        budget) already; else it is taken here (:meth:`take_page`). ``prepared``: the page
        decoded and extracted already (by the extraction pool, :meth:`parse`)."""
        stats = self.crawler.stats
        if response.status in _REDIRECTS:  # only requests sent again after a kill get here
            yield from self._follow_recovered_redirect(response)
            return
        if response.status == 304:  # recrawl: not modified since the stored copy
            stats.inc_value("topicrawl/recrawl/not_modified")
            return
        if not taken:
            number = self.take_page(response.meta, meta_url(response))
        if number == BUDGET_UNREACHABLE:  # the crawl ends: the resume fetches it again
            return
        if number == LEASE_LOST:  # reclaimed while this worker was slow: another has it
            log.debug("%s is fetched by another worker now (this one was too slow)", response.url)
            return
        if number is None:
            stats.inc_value("topicrawl/pages/over_budget")
            lease_id = response.meta.get(LEASE)
            if self.lease is not None and lease_id:  # back to the frontier for a larger budget;
                try:  # the idle extension ends the worker
                    self.lease.requeue_own(lease_id)
                    return
                except self.lease.errors as exc:
                    log.warning("%s not put back into the frontier (%s)", response.url, exc)
            if self.pages_redis is not None:  # another worker spent the crawl's budget
                raise CloseSpider("max_pages")
            return
        self.count_fetched(response)
        fmt = self.document_format(response) if prepared is None else prepared.fmt
        try:
            if prepared is not None and prepared.page is not None:  # decoded and extracted
                page, codec, extracted = prepared.page, prepared.codec, prepared.extracted
                html = page.text  # the decoded text: no parse (links and feeds: prepared.work)
            elif fmt is not None:  # a PDF or .docx: its text, no links
                page, codec, html = None, None, None
                if prepared is not None:  # by the extraction pool, in parse
                    extracted = prepared.extracted
                else:
                    extracted = extract_document(response.body, fmt, **self.document_limits())
                stats.inc_value(f"topicrawl/documents/{fmt}")
            else:
                page, codec = self.decoded(response)
                # one parse of the page: extraction and link extraction share its tree
                extracted = extract_page(page.text, page.url, tree=page.selector.root)
                html = page.text
            if self.max_text and len(extracted.text) > self.max_text:
                stats.inc_value("topicrawl/pages/text_truncated")
                extracted.text = extracted.text[: self.max_text]
        except Exception as exc:  # a broken page is logged and counted, never crashes a crawl
            self.broken_page(response, exc, fmt)
            return
        meta = response.meta
        target = self.recrawl_targets.get(meta["recrawl"]) if meta.get("recrawl") else None
        unchanged = False
        if target is not None:
            from models.store import text_hash

            unchanged = text_hash(extracted.text) == target.text_hash
            stats.inc_value(f"topicrawl/recrawl/{'unchanged' if unchanged else 'changed'}")
        elif self.recrawl:
            stats.inc_value("topicrawl/recrawl/new_pages")
        info = PageInfo(
            url=response.url,
            title=extracted.title,
            description=extracted.description,
            keywords=extracted.keywords,
            text=extracted.text,
            is_seed=bool(meta.get("seed")),
            section=extracted.section,
            section_nav=extracted.section_nav,
            section_label=extracted.section_label,
        )
        parts_of = getattr(self.scorer, "page_relevance_parts", None)
        if parts_of is not None:  # the score and its parts (exported with the corpus)
            relevance, relevance_parts = parts_of(info)
            relevance = float(relevance)
        else:
            relevance, relevance_parts = float(self.scorer.page_relevance(info)), None
        failures = getattr(getattr(self.scorer, "relevance", None), "shared_failures", 0)
        if failures:  # the shared word cache failed: computed locally, counted
            stats.set_value("topicrawl/cache/affinity_unshared", failures)
        for key, value in self.shared_learning_stats().items():
            stats.set_value(key, value)
        if self.jobdir and time.monotonic() - self._learned_saved_at > self.learned_save_seconds:
            self.save_learned()
        # relevant pages go on to dedup and cleaning; the store pipeline decides "accepted"
        accepted = self.judge_page(response.url, relevance, relevance_parts)
        stats.inc_value("topicrawl/pages/relevant" if accepted else "topicrawl/pages/irrelevant")
        # [learning] final_judgement: held (with its HTML when it may join the corpus later)
        final_html = (self.scorer.final_candidate(response.url, accepted, self.topic.page_threshold)
                      if self.final_judgement and not unchanged else None)  # fmt: skip
        # learned models (calibrated mode): the page trains the page model and labels the
        # link that led to it (relevance.calibrated.CalibratedLinkScorer.observe_page)
        observe = getattr(self.scorer, "observe_page", None)
        if observe is not None:
            observe(info, relevance, meta.get("link_score"))
        # [learning] rejudge: a rejected page is kept to be judged again after a retraining
        scorer: Any = self.scorer
        rejudge = getattr(scorer, "rejudge", None) is not None
        judged = scorer.last_judged(info.url) if rejudge and not accepted else None
        headers = response.headers
        item = PageItem(
            url=meta_url(response),
            final_url=response.url,
            host=urlsplit(response.url).hostname or "",
            status=response.status,
            fetched_at=datetime.now(UTC),
            depth=meta.get("depth", 0),
            parent_url=meta.get("parent_url"),
            anchor=meta.get("anchor"),
            title=extracted.title,
            description=extracted.description,
            keywords=extracted.keywords,
            language=extracted.language,
            charset=codec,
            published=extracted.published,
            html=html,
            text=extracted.text,
            link_score=meta.get("link_score"),
            relevance=relevance,
            relevance_parts=relevance_parts,
            accepted=accepted,
            etag=_header(headers, b"ETag"),
            last_modified=_header(headers, b"Last-Modified"),
            content_type=(_header(headers, b"Content-Type") or "").split(";")[0].strip() or None,
            recrawled=target is not None,
            duplicate=None,
        )
        # with leases the worker ends in the idle extension, after a killed worker's pages
        last = (
            self.max_pages is not None
            and self.lease is None
            and (number >= self.max_pages or self._close_pending)
        )
        # pages still in the extraction pool may break and give their budget back
        closing = last and not self._extracting
        # Algorithm 3's sample of accepted URLs takes a relevant page (a duplicate too: a copy
        # still shows where its host files the topic) before its links are scored
        if accepted and not unchanged:
            self.scorer.observe_accepted(item["url"])
        if self.trap_guard is not None and not unchanged:  # its text counts for its links
            self.trap_guard.page_fetched(item)
        # the links go to the frontier before the page goes to the store: a kill between the
        # two leaves a page that is not stored, so the resume fetches it again and finds its
        # links (the other order stored pages whose links were never queued: lost pages)
        yield from self.release_stale_sitemaps()
        if page is not None and not closing:  # the budget's last page: no links
            work = prepared.work if prepared is not None else None
            if discovery.FEEDS in self.discover:
                yield from self._feeds_of(page, None if work is None else work.feeds)
            yield from self.follow_links(page, info, meta.get("depth", 0), work)
        if unchanged:  # the same text as stored: nothing to store, its links are looked at
            self.release_page(meta)
        else:
            if final_html is not None:  # before the store reports what it made of it
                scorer.final.hold(dict(item), accepted, html=html if final_html else None)
            yield item
            if judged is not None:  # after the output middlewares (its WARC place is set)
                scorer.hold_rejected(dict(item), judged, html, self.topic.page_threshold)
            if final_html is not None:  # its WARC place, set by the output middlewares
                scorer.final.refresh(item)
        if rejudge:
            yield from self.rejudged()
        if closing:
            yield from self.final_judged()
            raise CloseSpider("max_pages")
        if last:
            self._close_pending = True
        if (
            self.harvest_floor > 0
            and self.harvest_window.full
            and self.harvest_window.rate() < self.harvest_floor
        ):
            yield from self.final_judged()
            raise CloseSpider("harvest_exhausted")

    @property
    def final_judgement(self) -> bool:
        """``[learning] final_judgement`` applies: calibrated mode, one process (the
        scale-out's workers end in the idle extension: not yet), no host prior (its
        thresholds are per host), not a recrawl."""
        return (getattr(self.scorer, "final", None) is not None and self.lease is None
                and self.pages_redis is None and self.host_prior is None
                and not self.recrawl)  # fmt: skip

    def final_judged(self) -> Iterator[PageItem]:
        """``[learning] final_judgement`` (calibrated mode; relevance.learning.final): when the
        crawl ends (its budget spent, its harvest exhausted, its frontier dry) every held page
        is judged again with the last models, once. A page whose decision changes becomes an
        item again (``rejudged = "final"``), with its new relevance and ``accepted`` and
        ``relevance_parts.final_from`` (its relevance at fetch): a page in the corpus now
        rejected leaves it (the store deletes its document), a page rejected as off-topic now
        accepted joins it through dedup, cleaning and the store. The budget counted each
        page when it was fetched; no link is followed."""
        if not self.final_judgement:
            return
        scorer: Any = self.scorer
        final = scorer.final
        if final is None or final.done:
            return
        held = len(final)
        started = time.monotonic()
        changes = scorer.final_changes(self.topic.page_threshold)
        stats = self.crawler.stats
        for key, value in (("judged", final.judged), ("revoked", final.revoked),
                           ("accepted", final.accepted), ("unheld", final.unheld),
                           ("unknown", final.unknown)):  # fmt: skip
            stats.set_value(f"topicrawl/final/{key}", value)
        log.info("final re-judgement: %d of %d held pages judged again with the last models in "
                 "%.1f s; %d left the corpus, %d joined it (through dedup and cleaning)%s",
                 final.judged, held, time.monotonic() - started, final.revoked, final.accepted,
                 f"; {final.unheld} pages over the cap not judged again" if final.unheld
                 else "")  # fmt: skip
        for change in changes:
            page = change.page
            fields = judged_again(page.record, page.html(), page.text(), change.relevance,
                                  change.parts, accepted=change.accepted, origin="final")  # fmt: skip
            yield PageItem(**fields, rejudged="final")

    def page_stored(self, url: str, in_corpus: bool) -> None:
        """The store pipeline's outcome of a page (a document, or not): the final
        re-judgement revokes only pages in the corpus (relevance.learning.final)."""
        if self.final_judgement:
            final = self.scorer.final
            if final is not None:
                final.outcome(url, in_corpus)

    def rejudged(self) -> Iterator[Any]:
        """``[learning] rejudge`` (calibrated mode): after a retraining of the page model the
        rejected pages it now puts at or above the page threshold are accepted
        (relevance.learning.rejudge). Each becomes an item again, with its new relevance
        and ``accepted``, and goes through dedup, cleaning and the store like any page (the
        store upserts its row; the budget counted the page when it was fetched). Its links
        are extracted again from its HTML and scored with its new relevance as the holding
        page's, as an accepted page's are: those not followed before may be followed now,
        those followed before are filtered as seen (or re-queued higher with
        ``TOPICRAWL_REQUEUE_MARGIN``)."""
        scorer: Any = self.scorer
        stats = self.crawler.stats
        for held, p, model in scorer.rejudge_pages(self.topic.page_threshold):
            stats.inc_value("topicrawl/pages/rejudged_accepted")
            rec = held.record
            parts = dict(rec.get("relevance_parts") or {})
            if model is not None:
                parts["model"] = float(model)
            if "accept" in parts:  # [learning] calibrate_accept: the new P(page)'s
                parts["accept"] = float(scorer.acceptance(p))
            html, text = held.html(), held.text()
            fields = judged_again(rec, html, text, p, parts, accepted=True, origin="rejudged")
            scorer.observe_accepted(fields["url"])
            if self.trap_guard is not None:  # observed when it was fetched
                self.trap_guard.page_fetched(fields, observe=False)
            if html is not None:  # its links first, as parse_page's (a document has none)
                page = HtmlResponse(rec.get("final_url") or held.url,
                                    body=html.encode("utf-8"), encoding="utf-8")  # fmt: skip
                info = PageInfo(url=page.url, title=rec.get("title"),
                                description=rec.get("description"),
                                keywords=rec.get("keywords"), text=text)  # fmt: skip
                scorer.set_page_relevance(page.url, p, held.literal)
                yield from self.follow_links(page, info, rec.get("depth") or 0)
            yield PageItem(**fields)
        buf = scorer.rejudge
        stats.set_value("topicrawl/pages/rejudge_held", len(buf))
        if buf.evicted:
            stats.set_value("topicrawl/pages/rejudge_evicted", buf.evicted)

    def judge_page(self, url: str, relevance: float,
                   parts: dict[str, float] | None = None) -> bool:  # fmt: skip
        """The page decision: relevance (its calibrated probability ``parts["accept"]`` when
        the scorer gives one: ``[learning] calibrate_accept``) ≥ the topic's page threshold,
        lowered on a host whose judged pages mostly pass when the topic's ``[page]
        host_prior`` is on
        (:mod:`relevance.hostprior`; the host's counts are this process's). A page accepted
        only thanks to the prior is counted (``topicrawl/pages/host_prior_accepted``) and
        its ``parts`` record the threshold it passed (``host_threshold``)."""
        base = self.topic.page_threshold
        if parts is not None and "accept" in parts:  # [learning] calibrate_accept
            relevance = parts["accept"]
        if self.host_prior is None:
            return relevance >= base
        host = urlsplit(url).hostname or ""
        accepted, threshold = self.host_prior.judge(host, relevance, base, url)
        if threshold < base:
            if parts is not None:
                parts["host_threshold"] = round(threshold, 4)
            if accepted and relevance < base:
                self.crawler.stats.inc_value("topicrawl/pages/host_prior_accepted")
        return accepted

    def extract_links(self, page: HtmlResponse) -> list[Link]:
        """Links of the page with anchor text (title/alt attributes where the text is empty;
        crawler.pagelinks, shared with the extraction pool's workers)."""
        return list(map(Link._make, page_links(page, self.link_extractor)))

    def follow_links(self, page: HtmlResponse, info: PageInfo, depth: int,
                     work: PageWork | None = None) -> Iterator[Any]:  # fmt: skip
        """Follow the page's links (:meth:`follow`): those the extraction pool's worker
        found (``work``: the first ``max_links``, and how many it found), else extracted
        here."""
        stats = self.crawler.stats
        if self.max_depth is not None and depth >= self.max_depth:
            stats.inc_value("topicrawl/links/depth_limited")
            return
        if work is not None:
            found = list(map(Link._make, work.links))  # (url, anchor) tuples
            total = work.found
        else:
            found = self.extract_links(page)
            total = len(found)
        if self.max_links and total > self.max_links:  # a link farm: bounded work
            stats.inc_value("topicrawl/links/capped_pages")
            stats.inc_value("topicrawl/links/capped", total - self.max_links)
            found = found[: self.max_links]
        yield from self.follow(page.url, info, found, depth)

    def follow(
        self, page_url: str, info: PageInfo, found: list[Link], depth: int, source: str = "",
        ranks: dict[str, int] | None = None,
    ) -> Iterator[scrapy.Request]:
        """Score the links ``found`` on ``page_url`` (a page, or a sitemap or feed:
        ``source``) and queue those to follow with their priority, less their rank in
        ``ranks`` (a sitemap's entries: :func:`crawler.discovery.sitemap_ranks`)."""
        # counted here and added to the stats once a page (Scrapy's stats are a Python-level
        # __getattribute__ and a deprecation wrapper a call: ≈ 15 calls a page saved)
        counts: Counter[str] = Counter()
        stats = self.crawler.stats
        try:
            yield from self._follow_links(page_url, info, found, source, counts, ranks)
        finally:  # also when the consumer stops early (CloseSpider)
            for key, n in counts.items():
                stats.inc_value(key, n)

    def _follow_links(self, page_url: str, info: PageInfo, found: list[Link], source: str,
                      counts: Counter[str], ranks: dict[str, int] | None = None
                      ) -> Iterator[scrapy.Request]:  # fmt: skip
        """:meth:`follow`'s work, its stats counted in ``counts``."""
        links = []
        kinds, known = self._url_kinds, self.known_urls
        for link in found:
            url = link.url
            if (kind := kinds.get(url, "")) == "":
                kind = self._url_kind(url)
                if len(kinds) >= URL_KINDS:
                    kinds.clear()
                kinds[url] = kind
            if kind == "topicrawl/links/not_http" or kind == "topicrawl/links/offsite":
                key = kind
            elif known and url in known:
                key = "topicrawl/recrawl/known_links"  # stored: fetched if listed
            elif kind is not None:
                key = kind  # non_html
            else:
                links.append(link)
                continue
            counts[key] += 1
        scores = self.scorer.score_links(info, links)
        counts["topicrawl/links/scored"] += len(links)
        guard = self.trap_guard
        for link, score in zip(links, scores, strict=True):
            if not score.follow:
                counts["topicrawl/links/dropped"] += 1
                continue
            # the trap guard before re-queueing, so that a trap's URL is never counted as
            # re-queued (its middleware would drop the request after this generator)
            if guard is not None and (reason := guard.allowed(link.url)):
                counts[f"topicrawl/links/trap/{reason}"] += 1
                continue
            priority = score.priority - (ranks.get(link.url, 0) if ranks else 0)
            request = None
            requeue: bool | None = False
            if self.requeue_margin:
                fp = self._url_fingerprints.get(link.url)
                if fp is None:  # a new URL, most likely: its request is fingerprinted once
                    request = self._link_request(link, page_url, priority, score, source)
                    fp = self._remember_fingerprint(link.url, request)
                requeue = self._issue(fp, priority)
                if requeue is None:  # the dupefilter would drop it: no request built
                    counts["topicrawl/links/known"] += 1
                    continue
                if requeue:
                    counts["topicrawl/links/requeued"] += 1
            counts["topicrawl/links/followed"] += 1
            if source:
                counts[f"topicrawl/discovery/{source}/followed"] += 1
            if request is None:
                request = self._link_request(link, page_url, priority, score, source)
            request.dont_filter = requeue
            yield request

    def _link_request(self, link: Link, page_url: str, priority: int, score: LinkScore,
                      source: str) -> scrapy.Request:  # fmt: skip
        """The request of a followed link, its score and breakdown (and the discovery
        ``source``, if any) in its meta; built only for a link that is requested, not for one
        :meth:`_issue` finds known (the link extractor's URLs are absolute and escaped
        already: no urljoin again)."""
        link_score = {"score": score.score, "follow": True, **score.breakdown}
        if source:
            link_score["source"] = source
        return scrapy.Request(
            link.url,
            callback=self.parse,
            errback=self.on_error,
            priority=priority,
            meta={"parent_url": page_url, "anchor": link.anchor, "link_score": link_score},
        )

    def _url_kind(self, url: str) -> str | None:
        """Why a link to ``url`` is not scored, from the URL alone (the stats key
        ``topicrawl/links/not_http``, ``…/offsite`` or ``…/non_html``), or None: the checks of
        :meth:`_follow_links` that depend on nothing that changes during a crawl (the allowed
        hosts and whether documents are fetched), memoised by URL there."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            return "topicrawl/links/not_http"
        if not host_allowed(parts.hostname or "", self.host_patterns):
            return "topicrawl/links/offsite"
        path = parts.path.lower()
        if path.endswith(_BINARY_SUFFIXES) and not (
            self.documents and path.endswith(tuple(DOCUMENT_SUFFIXES))
        ):
            return "topicrawl/links/non_html"
        return None

    def _follow_recovered_redirect(self, response: Response) -> Iterator[scrapy.Request]:
        """A URL requested again after a killed crawl answered with a redirect: follow it as
        Scrapy's RedirectMiddleware would, but through the dupefilter (the recovered request
        itself had to bypass it), so a target already queued is not fetched under this URL."""
        location = response.headers.get(b"Location")
        if not location:
            return
        meta = {k: v for k, v in response.meta.items()
                if k not in (RECOVERED, "dont_redirect", "handle_httpstatus_list")}  # fmt: skip
        meta["redirect_urls"] = [*response.meta.get("redirect_urls", ()), response.url]
        yield response.request.replace(
            url=response.urljoin(location.decode("latin-1")), meta=meta, dont_filter=False
        )

    def _issue(self, fp: bytes, priority: int) -> bool | None:
        """Whether a link to the URL of request fingerprint ``fp`` found with ``priority`` is
        requested: False — first found, a request the dupefilter checks; True — found before
        with a priority lower by at least the re-queue margin and not fetched yet, a request
        marked to pass the dupefilter; None — found before at about this priority or
        fetched: no request at all (the dupefilter would drop it; building it, passing it
        through the spider middlewares and the scheduler cost a calibrated crawl, which
        follows every link, about as much as the rest of a link's scoring: docs/scale.md).

        Scrapy's dupefilter keeps the priority a URL had when first found; a URL found again
        from a more relevant page (or after Algorithm 3's sample has grown) is enqueued once
        more with its better priority. The old queue entry stays and is dropped at download
        by :class:`crawler.middlewares.FetchOnceMiddleware`, which also keeps a URL from
        being downloaded twice. The priorities are kept by request fingerprint (a GET's
        fingerprint depends on its URL alone).
        """
        best = self.best_priority.get(fp)
        if best is None:
            self.best_priority[fp] = priority
            return False
        if best != FETCHED and priority >= best + self.requeue_margin:
            self.best_priority[fp] = priority
            return True
        return None

    def end_lease(self, failure: Any) -> None:
        """A request failed for good: its lease ends (crawler.lease)."""
        request = getattr(failure, "request", None)
        if request is not None:
            self._end_lease(request.meta, request.url)

    def _end_lease(self, meta: dict, url: str) -> None:
        """The lease of the request ``meta`` ends, uncounted (a copy whose lease was popped
        again leaves the new pop's lease alone)."""
        lease_id = self.lease.held_id(meta) if self.lease is not None else None
        if lease_id:
            try:
                self.lease.release(lease_id)
            except self.lease.errors as exc:
                log.debug("lease of %s not released (%s)", url, exc)

    def on_error(self, failure: Any) -> None:
        self.end_lease(failure)
        if failure.check(RequestDeferred):  # back in the frontier (LinkRescoreMiddleware)
            return
        if failure.check(TrapRefused):  # counted by the trap guard
            return
        self.crawler.stats.inc_value(f"topicrawl/errors/{failure.type.__name__}")
        request = getattr(failure, "request", None)
        url = request.url if request is not None else "?"
        log.debug("request failed: %s: %s", url, failure.getErrorMessage())
        if request is not None and request.meta.get("seed"):
            self.seed_failures[request.url] = describe_failure(failure)
