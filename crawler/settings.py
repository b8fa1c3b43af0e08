"""Scrapy settings of the topicrawl project. Every TOPICRAWL_* setting has its default here.

Scale-out: with ``TOPICRAWL_REDIS_URL`` set in the environment, the frontier (a sorted-set
priority queue) and the request dupefilter live in Redis (scrapy-redis), shared by every
worker; the dedup index should then use the Redis backend too.
"""

import os

from scrapy.settings import default_settings as _scrapy_defaults

import topicrawl

BOT_NAME = "topicrawl"
SPIDER_MODULES = ["crawler.spiders"]
NEWSPIDER_MODULE = "crawler.spiders"
COMMANDS_MODULE = "crawler.commands"

# -- politeness ------------------------------------------------------------------------------
USER_AGENT = (
    f"topicrawl/{topicrawl.__version__} (focused research crawler; "
    "+https://github.com/topicrawl/topicrawl)"
)
ROBOTSTXT_OBEY = True
CONCURRENT_REQUESTS = 16
CONCURRENT_REQUESTS_PER_DOMAIN = 2
DOWNLOAD_DELAY = 0.25
AUTOTHROTTLE_ENABLED = True
AUTOTHROTTLE_START_DELAY = 1.0
AUTOTHROTTLE_MAX_DELAY = 30.0
AUTOTHROTTLE_TARGET_CONCURRENCY = 2.0
DOWNLOAD_TIMEOUT = 30
#: Scrapy's asyncio scraper starts this many worker tasks for every response's output,
#: however little it yields (scrapy.utils.asyncio._parallel_asyncio): at Scrapy's 100, ≈ 1.4 ms
#: of the reactor thread a response for ≈ 15 requests and at most a few items, at 16 ≈ 0.3 ms
#: (docs/scale.md). Items of one response processed at once in the item pipelines.
CONCURRENT_ITEMS = 16
DOWNLOAD_MAXSIZE = 16 * 1024 * 1024
RETRY_TIMES = 2
COOKIES_ENABLED = False
TELNETCONSOLE_ENABLED = False
#: Scrapy 2.19's remote control: an HTTP server in every crawl process that runs the Python
#: code it is sent (token in a job file under the user's profile). Off: a crawler (and each
#: scale-out worker) opens no code-execution endpoint; out of EXTENSIONS_BASE too (below), so
#: that its module (aiohttp) is not even loaded.
REMOTE_CONTROL_ENABLED = False

# -- frontier: a global best-first order -----------------------------------------------------
SCHEDULER_PRIORITY_QUEUE = "crawler.queues.DurablePriorityQueue"
#: JOBDIR frontier: SQLite queues committed at every push and pop, so that a crawl resumes
#: even after kill -9 (crawler/queues.py).
SCHEDULER_DISK_QUEUE = "crawler.queues.DurableLifoQueue"
SCHEDULER_START_DISK_QUEUE = "crawler.queues.DurableFifoQueue"
#: SQLite page cache of each priority's queue, KiB (SQLite's default is 2,000 KiB a
#: connection, one connection per priority: hundreds of MB for a large frontier)
TOPICRAWL_QUEUE_CACHE_KB = 128
DEPTH_PRIORITY = 0
DEPTH_STATS_VERBOSE = True

SPIDER_MIDDLEWARES = {
    # scale-out: a response's new links checked against the shared seen set in one Redis
    # round trip, last on the output (crawler/seen.py)
    "crawler.seen.SeenBatchMiddleware": 10,
    # scale-out: a response that gave no counted page ends its lease (crawler/lease.py)
    "crawler.lease.LeaseMiddleware": 100,
    "crawler.middlewares.TrapGuardMiddleware": 650,
    # the WARC place of a page's response into its item (off without TOPICRAWL_WARC_DIR)
    "crawler.warc.WarcReferenceMiddleware": 700,
}
DOWNLOADER_MIDDLEWARES = {
    # Scrapy's, with concurrent waiters on one robots.txt fixed (see the class docstring)
    "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
    # the address policy (issue 11): scheme, host, port and resolved address of every
    # request, redirects and re-queued links included (crawler/addresspolicy.py)
    "crawler.addresspolicy.AddressPolicyMiddleware": 40,
    # drops a request whose URL was already sent to download (re-queued links, redirects)
    # calibrated mode: a queued link whose score fell as the crawl learned goes back (issue 10)
    "crawler.middlewares.LinkRescoreMiddleware": 40,
    "crawler.middlewares.FetchOnceMiddleware": 50,
    "crawler.middlewares.RobotsTxtMiddleware": 100,
    # the trap guard's path-shape budget, as a request leaves the frontier
    "crawler.middlewares.PathTrapMiddleware": 120,
    "crawler.middlewares.NonHtmlGuardMiddleware": 950,
    # WARC capture of every fetched response, as it came (off without TOPICRAWL_WARC_DIR)
    "crawler.warc.WarcCaptureMiddleware": 980,
}
EXTENSIONS = {
    "crawler.extensions.CrawlProgress": 500,
    # scale-out: idle workers wait until the whole crawl has been idle (crawler/idle.py)
    "crawler.idle.SharedIdleClose": 510,
    # malloc_trim(0) every TOPICRAWL_MALLOC_TRIM_INTERVAL s: freed heap back to the system
    "crawler.memory.MallocTrim": 520,
    # gc.freeze() at spider open: the collector's full passes skip the start-up heap
    "crawler.memory.GcFreeze": 530,
}
#: Scrapy's own extensions without the remote control and the telnet console: a key of
#: EXTENSIONS is imported to be compared with the base's even when its value is None
#: (Scrapy 2.19's ``get_component_priority_dict_with_base``), and the remote control's module
#: imports aiohttp (≈ 8 MB of the crawl process, 0.3 s of start-up); a key of the base is not.
EXTENSIONS_BASE = {
    k: v
    for k, v in _scrapy_defaults.EXTENSIONS_BASE.items()
    if k not in ("scrapy.extensions.remote_control.RemoteControl",
                 "scrapy.extensions.telnet.TelnetConsole")  # fmt: skip
}
#: Scrapy's downloader middlewares with its cookie middleware imported only when
#: COOKIES_ENABLED (crawler.middlewares.CookiesWhenEnabled, same place): every enabled key is
#: imported before its ``from_crawler`` can say NotConfigured, and Scrapy's cookie module
#: imports tldextract and requests (≈ 4 MB of the crawl process) for a crawl without cookies.
DOWNLOADER_MIDDLEWARES_BASE = {
    ("crawler.middlewares.CookiesWhenEnabled"
     if k == "scrapy.downloadermiddlewares.cookies.CookiesMiddleware" else k): v
    for k, v in _scrapy_defaults.DOWNLOADER_MIDDLEWARES_BASE.items()
}  # fmt: skip
#: Scrapy's default stats collector without its per-access ``__getattribute__`` and
#: deprecation wrappers (≈ 5 µs an ``inc_value``, tens of calls a page: crawler/stats.py)
STATS_CLASS = "crawler.stats.QuickStatsCollector"
ITEM_PIPELINES = {
    "dedup.pipeline.DedupPipeline": 300,
    "crawler.pipelines.StorePipeline": 800,
}

# -- address policy (issue 11): http and https only, seeds' and allowed hosts and ports only,
# no internal addresses (crawler/addresspolicy.py) ---------------------------------------------
#: Scrapy's handlers of other schemes are off: nothing can read a local file or an FTP server.
DOWNLOAD_HANDLERS = {"file": None, "ftp": None, "s3": None, "data": None}
#: The policy middleware (off only for experiments).
TOPICRAWL_ADDRESS_POLICY = True
#: Allow hosts that resolve to loopback, private, link-local, multicast or reserved addresses.
TOPICRAWL_ALLOW_PRIVATE_ADDRESSES = False
#: Networks (CIDR) allowed even so, e.g. ["10.20.0.0/16"] for an intranet crawl.
TOPICRAWL_ALLOWED_NETWORKS: list[str] = []

# -- topicrawl -------------------------------------------------------------------------------
#: Database URL; empty means $TOPICRAWL_DB_URL or sqlite:///topicrawl.db.
TOPICRAWL_DB_URL = os.environ.get("TOPICRAWL_DB_URL", "")
#: Pages written to the database per batch.
TOPICRAWL_DB_BATCH = 50
#: Where pages go when the database stays down past the retries (imported with
#: `topicrawl import-spill`): nothing accepted is lost.
TOPICRAWL_SPILL_DIR = "topicrawl-spill"
#: Non-blocking storage (issue 11): pages waiting for the database (a writer thread stores
#: them) kept in memory, then in a spool file on disk; past both the crawl pauses.
TOPICRAWL_STORE_MEMORY_PAGES = 1000
TOPICRAWL_STORE_SPOOL_PAGES = 20000
#: Seconds of refused writes the end of a crawl waits before spilling the rest.
TOPICRAWL_STORE_CLOSE_WAIT = 5.0
#: The link scorer: "relevance" (the topic's semantic engine) or a dotted class path with a
#: ``from_topic(topic)`` classmethod, e.g. "relevance.linkscore.KeywordLinkScorer".
TOPICRAWL_LINK_SCORER = "relevance"
#: Start-up cache of trained topic models (classifier, segmented examples, jieba's tag table;
#: topicrawl.modelcache): empty means $TOPICRAWL_CACHE, $XDG_CACHE_HOME/topicrawl or
#: ~/.cache/topicrawl. `topicrawl topic validate FILE` warms it.
TOPICRAWL_CACHE_DIR = ""
#: Redis URL of the cross-process word-affinity cache of the relevance engine (workers of
#: one topic share their word scores); empty: an in-process cache only.
TOPICRAWL_AFFINITY_REDIS = os.environ.get("TOPICRAWL_REDIS_URL", "")
#: Trap guard: at most this many URLs that differ only in their query string per path.
TOPICRAWL_MAX_QUERY_VARIANTS = 30
#: ... plus this many for each page fetched under the path with a main text new to it, less
#: as many for each without (``/article.php?id=N`` stays reachable; a calendar stays at 30).
TOPICRAWL_QUERY_VARIANTS_PER_PAGE = 5
#: Trap guard: at most this many requests of one path shape (host + path with numbers, dates
#: and ids as placeholders, repeated segments collapsed: /calendar/2024/11/25/ and
#: /calendar/7/ are /calendar/{n}/; crawler.middlewares.path_shape) sent to download ...
TOPICRAWL_MAX_PATH_VARIANTS = 30
#: ... plus this many for each page fetched under the shape with a main text new to it, less
#: as many for each without; no limit while its pages mostly brought new text
#: (/news/2024/11/25/article-123.html stays reachable, a path calendar stays at 30).
TOPICRAWL_PATH_VARIANTS_PER_PAGE = 5
#: Trap guard: longest URL followed, most path segments (0: no limit), and most repeats of
#: one path segment.
TOPICRAWL_MAX_URL_LENGTH = 512
TOPICRAWL_MAX_PATH_DEPTH = 16
TOPICRAWL_MAX_SEGMENT_REPEATS = 3
#: Hostile pages (issue 11): most links taken from one page (the rest counted as
#: topicrawl/links/capped) and longest main text kept (counted as pages/text_truncated).
TOPICRAWL_MAX_LINKS_PER_PAGE = 2000
#: Most bytes of a page's HTML that are parsed (the rest is cut, counted as
#: topicrawl/pages/html_truncated): bounds the parse time and memory of one page.
TOPICRAWL_MAX_HTML_BYTES = 1_000_000
TOPICRAWL_MAX_TEXT_CHARS = 500_000
#: Extraction pool (issue 16, crawler/extractpool.py): worker processes that run each HTML
#: page's main-text extraction (lxml parse, trafilatura, htmldate) while Scrapy's thread goes
#: on with other pages; 0: inline, in the crawl's process. Default: 1 on a machine with at
#: least 2 CPUs (a worker costs ≈ 80-100 MB of memory), else 0; the environment variable of
#: the same name overrides it (docker-compose.yml sets 0: its N crawl workers share the cores).
_CPUS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
TOPICRAWL_EXTRACT_WORKERS = int(os.environ.get("TOPICRAWL_EXTRACT_WORKERS", 1 if _CPUS >= 2 else 0))
#: Seconds a page may take in the pool, its wait in the pool's queue included; past it the
#: page is broken (topicrawl/pages/broken) and its worker killed and replaced.
TOPICRAWL_EXTRACT_TIMEOUT = 60.0
#: Pages in the pool at a time, per worker; a page that comes while it is full is extracted
#: inline (counted as topicrawl/extract/inline_busy). 64 (16 before): at 16 ≈ 40 of 400
#: pages overflowed at no latency, each taking Scrapy's thread for its extraction and
#: loading jusText's stoplists (≈ 33 MB) into the crawl's process (docs/scale.md, run K);
#: the hostile web's path-trap bound holds at 64 (tests/test_crawl_traps.py).
TOPICRAWL_EXTRACT_PENDING = 64
#: Pages, per worker, that may wait for a turn while the pool is full (counted as
#: topicrawl/extract/waited_busy); beyond them a page is extracted inline, and the first such
#: page whose text is short loads jusText's stoplists (≈ 30 MB) into the crawl's process. A
#: bound, not a queue of every page: a page waiting is a page the crawl has not learnt from
#: yet (the trap guard, the link scorer's sample); the hostile web's crawl
#: (tests/test_crawl_traps.py) took 11 s at 0, 16 and 64, 18-23 s at 256 or unbounded. Off
#: (0) by default: at 64 the stoplists stayed out of the crawl's process (0 of 6 crawls
#: against 3 of 9), but on held-out webs (family b, seeds 50-51, 16 in flight) corpus recall
#: fell by 0.033 ± 0.012 (docs/scale.md, 2026-11-27).
TOPICRAWL_EXTRACT_OVERFLOW_WAIT = 0
#: Seconds from the pool's start (as the spider is built) that a page waits for its workers'
#: warm-up instead of being extracted inline (0: inline at once). Pages extracted in the
#: crawl's process make trafilatura load jusText's stoplists there (≈ 30 MB).
TOPICRAWL_EXTRACT_WARM_WAIT = 30.0
#: Content types that are parsed; anything else is counted and skipped.
TOPICRAWL_HTML_TYPES = ["text/html", "application/xhtml+xml"]
#: Documents (issue 15): PDF (pypdf) and Word .docx (python-docx) responses are read, scored,
#: deduplicated and stored like HTML pages (topicrawl/documents.py); larger ones than
#: TOPICRAWL_MAX_DOCUMENT_BYTES are stopped and counted (topicrawl/documents/too_large), and
#: at most TOPICRAWL_MAX_DOCUMENT_PAGES pages of a PDF are read.
TOPICRAWL_DOCUMENTS_ENABLED = True
TOPICRAWL_MAX_DOCUMENT_BYTES = 10 * 1024 * 1024
TOPICRAWL_MAX_DOCUMENT_PAGES = 200
#: Discovery (-a discover=sitemaps,feeds; crawler/discovery.py): most bytes of a sitemap or
#: feed once unpacked, and most URLs taken from one (the sitemap protocol's own limits).
TOPICRAWL_DISCOVERY_MAX_BYTES = 50 * 1024 * 1024
TOPICRAWL_DISCOVERY_MAX_URLS = 50_000
#: Sitemap entries are held until every sitemap of their host is read (at most
#: TOPICRAWL_SITEMAP_HOLD_SECONDS), then queued their rank (a pseudo-random order within their
#: sitemap) below their score, so that the host's sitemaps are fetched in turn and not section
#: by section (crawler/discovery.py, sitemap_ranks; TopicSpider.release_sitemaps); False: as
#: each sitemap is read, in its own order.
TOPICRAWL_SITEMAP_INTERLEAVE = True
TOPICRAWL_SITEMAP_HOLD_SECONDS = 30.0
#: Dedup (see dedup/pipeline.py and docs/dedup.md); a topic's [dedup] table overrides these.
TOPICRAWL_DEDUP_ENABLED = True
#: Cascade order; the first method that finds a match decides.
TOPICRAWL_DEDUP_METHODS = ["exact", "spotsigs", "containment"]
#: Per-method options, e.g. {"spotsigs": {"tau": 0.5}}.
TOPICRAWL_DEDUP_OPTIONS: dict = {}
#: Index storage ({"type": "memory"|"sqlite"|"redis", ...}); None: SQLite in JOBDIR when set,
#: else memory. With the scrapy-redis scale-out it is the shared Redis (below).
TOPICRAWL_DEDUP_BACKEND = None
#: "main" text (trafilatura) or every "visible" text of the page.
TOPICRAWL_DEDUP_TEXT = "main"
#: Which copy survives: "first", "longer" or "earlier" (published).
TOPICRAWL_DEDUP_KEEP = "first"
#: While the index storage fails (Redis down), check pages against a local in-memory copy of
#: the cascade and write what it added to the storage once it answers; False: keep such
#: pages unchecked.
TOPICRAWL_DEDUP_LOCAL_FALLBACK = True
#: Seconds between attempts to reach the failed index storage during its outage.
TOPICRAWL_DEDUP_FALLBACK_RETRY = 5.0
#: Seconds between looks at the Redis dedup index lock while another worker holds it: the
#: page waits on the reactor without blocking it (0: the check waits blocking, as before).
TOPICRAWL_DEDUP_LOCK_POLL = 0.05
#: A named corpus index (`topicrawl dedup index --name NAME ...`) checked first: pages the
#: corpus already holds are dropped as its duplicates (method corpus:<method>); "": none.
TOPICRAWL_DEDUP_INDEX = os.environ.get("TOPICRAWL_DEDUP_INDEX", "")
#: The storage of the named indexes (None: SQLite file topicrawl-dedup-indexes.sqlite).
TOPICRAWL_DEDUP_INDEX_BACKEND = None
#: Clean accepted pages into corpus documents inline (postprocess.clean.Cleaner).
TOPICRAWL_CLEAN_ENABLED = True
#: Harvest-window stop rule: stop when the share of accepted pages among the last
#: TOPICRAWL_HARVEST_WINDOW fetched pages falls below TOPICRAWL_HARVEST_FLOOR (0: off).
#: Time limit: Scrapy's CLOSESPIDER_TIMEOUT (seconds).
TOPICRAWL_HARVEST_WINDOW = 200
TOPICRAWL_HARVEST_FLOOR = 0.0
#: Link re-prioritisation: a URL found again with a score higher by at least this margin
#: (score units, 0-1) than the best it was enqueued with is enqueued again with the new
#: priority (FetchOnceMiddleware keeps it from being downloaded twice); 0 or less: off.
#: The environment variable of the same name overrides it (benchmarks).
TOPICRAWL_REQUEUE_MARGIN = float(os.environ.get("TOPICRAWL_REQUEUE_MARGIN", "0.02"))
#: Seconds between progress log lines (0: none).
TOPICRAWL_PROGRESS_INTERVAL = 30
#: seconds between two glibc malloc_trim(0) calls (crawler/memory.py); 0: never
TOPICRAWL_MALLOC_TRIM_INTERVAL = 60
#: gc.freeze() at spider open (crawler/memory.py GcFreeze): False turns it off
TOPICRAWL_GC_FREEZE = True

# -- WARC capture (issue 15, crawler/warc.py) --------------------------------------------------
#: Directory of the WARC/1.1 capture (request + response record of every fetch, one gzip
#: member per record); empty: no capture. Each worker writes its own files in it.
TOPICRAWL_WARC_DIR = ""
#: Bytes after which a WARC file is closed and the next one started.
TOPICRAWL_WARC_MAX_SIZE = 1_000_000_000
#: First part of the WARC file names (PREFIX-TIMESTAMP-SERIAL-HOST-PID-WORKER.warc.gz).
TOPICRAWL_WARC_PREFIX = "topicrawl"
#: Worker id in the file names (default: $TOPICRAWL_WORKER_ID, else "0").
TOPICRAWL_WARC_WORKER = ""

# -- crawl console (topicrawl serve) -----------------------------------------------------------
#: Write each progress snapshot with the crawl's counters to the run_snapshots table (the
#: console's live figures; every worker of a scale-out crawl writes its own).
TOPICRAWL_PROGRESS_SNAPSHOTS = True

# -- scale-out on scrapy-redis -----------------------------------------------------------------
REDIS_URL = os.environ.get("TOPICRAWL_REDIS_URL", "")
#: Key prefix in Redis: crawls that share a Redis use different prefixes. Every key the crawl
#: writes is under it (frontier, dupefilter, fetched set, trap sets, page counter, dedup index,
#: word-affinity cache).
TOPICRAWL_REDIS_PREFIX = os.environ.get("TOPICRAWL_REDIS_PREFIX", "topicrawl")
if REDIS_URL:
    #: scrapy-redis' scheduler that waits out a Redis outage for
    #: TOPICRAWL_REDIS_RETRY_SECONDS, then ends the crawl with reason redis_unreachable
    SCHEDULER = "crawler.scheduler.RedisScheduler"
    #: scrapy-redis's defaults but 5 s socket timeouts (30 s blocked the event loop per call)
    REDIS_PARAMS = {"socket_timeout": 5, "socket_connect_timeout": 5,
                    "retry_on_timeout": True, "encoding": "utf-8"}  # fmt: skip
    #: scrapy-redis' RFPDupeFilter; its fingerprints in a Bloom filter with TOPICRAWL_SEEN_BLOOM
    DUPEFILTER_CLASS = "crawler.seen.RedisSeenDupeFilter"
    # -- safe serialization (issue 11): the shared frontier holds JSON, never pickle; an
    # entry that is not a request of ours is counted and skipped (crawler/queues.py)
    SCHEDULER_QUEUE_CLASS = "crawler.queues.RedisPriorityQueue"
    SCHEDULER_SERIALIZER = "crawler.serialization"
    SCHEDULER_PERSIST = True
    SCHEDULER_QUEUE_KEY = f"{TOPICRAWL_REDIS_PREFIX}:%(spider)s:requests"
    SCHEDULER_DUPEFILTER_KEY = f"{TOPICRAWL_REDIS_PREFIX}:%(spider)s:dupefilter"
    #: FetchOnceMiddleware's Redis set of the URLs sent to download by any worker: a URL
    #: re-queued in the shared frontier is downloaded once in all.
    TOPICRAWL_FETCHED_KEY = f"{TOPICRAWL_REDIS_PREFIX}:%(spider)s:fetched"
    #: TrapGuardMiddleware's Redis sets of the query strings admitted per path (one set per
    #: host + path under this prefix; the paths of each path shape under <prefix>:shape): the
    #: query- and path-variant limits hold for the whole crawl.
    TOPICRAWL_TRAP_KEY = f"{TOPICRAWL_REDIS_PREFIX}:%(spider)s:trap"
    #: Seen-URL sets (dupefilter and fetched set) as Bloom filters on Redis bitmaps
    #: (crawler.seen): ~2 bytes a URL instead of ~80, a share ERROR_RATE of new URLs
    #: skipped as seen (at capacity); size CAPACITY for the crawl (docs/scale.md). Off: Redis sets.
    TOPICRAWL_SEEN_BLOOM = False
    TOPICRAWL_SEEN_BLOOM_CAPACITY = 10_000_000
    TOPICRAWL_SEEN_BLOOM_ERROR_RATE = 0.0005
    TOPICRAWL_SEEN_BLOOM_SHARDS = 1
    #: The page counter of ``max_pages`` (INCR by every worker): the budget is the crawl's.
    TOPICRAWL_PAGES_KEY = f"{TOPICRAWL_REDIS_PREFIX}:%(spider)s:pages"
    #: crawler.idle.SharedIdleClose's key, alive while any worker was busy in the last
    #: TOPICRAWL_IDLE_CLOSE_SECONDS: idle workers wait for work and end together.
    TOPICRAWL_ACTIVE_KEY = f"{TOPICRAWL_REDIS_PREFIX}:%(spider)s:active"
    #: crawler.lease: each worker's requests in flight (``<this>:inflight:<worker>``), its
    #: heartbeat (``<this>:alive:<worker>``), the workers' registry (``<this>:workers``) and
    #: the page counts reclaims handed on to the requests they queued (``<this>:precounted``).
    TOPICRAWL_LEASE_PREFIX = f"{TOPICRAWL_REDIS_PREFIX}:%(spider)s"
    #: crawler.sharedlearn: Algorithm 3's URL sample as one Redis reservoir
    #: (<prefix>:<spider>:urlsample:*) and the learned models' training examples in one capped
    #: stream (<prefix>:<spider>:learn); False: each worker learns alone (as before).
    TOPICRAWL_SHARED_LEARNING = True
    #: seconds between a worker's refreshes of its copy of the shared sample and stream
    TOPICRAWL_SHARED_REFRESH_SECONDS = 2.0
    TOPICRAWL_DEDUP_BACKEND = {
        "type": "redis",
        "url": REDIS_URL,
        "namespace": f"{TOPICRAWL_REDIS_PREFIX}:{{spider}}:dedup",
    }

# -- a command line that tells the truth (issue 18) ---------------------------------------------
#: Dropped pages are one DEBUG line (URL and reason), counted in the stats, never dumped.
LOG_FORMATTER = "crawler.logformatter.QuietLogFormatter"
#: Print the end-of-crawl summary (what was collected, where, the next command); failures
#: are printed as one line whatever this says.
TOPICRAWL_SUMMARY = True
#: Seconds a database that does not answer is retried (at start, and per write) before the
#: crawl gives up: exit status 4 at start, spilled pages (exit 6) later. The environment
#: variable of the same name overrides it (and sets it for the topicrawl commands).
TOPICRAWL_DB_RETRY_SECONDS = float(os.environ.get("TOPICRAWL_DB_RETRY_SECONDS", "30"))
#: Seconds the scale-out's Redis is retried at start (and during an outage) before the
#: crawl ends with reason redis_unreachable (exit status 5).
TOPICRAWL_REDIS_RETRY_SECONDS = float(os.environ.get("TOPICRAWL_REDIS_RETRY_SECONDS", "30"))
#: Scale-out: a worker with nothing to do waits for work and closes only once every worker
#: has been idle (and the shared frontier empty) for this many seconds (0: close when idle).
TOPICRAWL_IDLE_CLOSE_SECONDS = float(os.environ.get("TOPICRAWL_IDLE_CLOSE_SECONDS", "10"))
#: Scale-out: how often (seconds, at most 1) a worker looks whether the shared frontier holds
#: requests and wakes its engine (Scrapy's own heartbeat asks every 5 s).
TOPICRAWL_FRONTIER_POLL_SECONDS = 0.5
#: Scale-out: a worker whose heartbeat is this many seconds old is taken for dead, and the
#: requests it held (popped, not finished) go back to the frontier (crawler/lease.py; 0: no
#: leases). Keep it at most TOPICRAWL_IDLE_CLOSE_SECONDS and well above an event-loop stall.
TOPICRAWL_LEASE_SECONDS = float(os.environ.get("TOPICRAWL_LEASE_SECONDS", "10"))
#: Seconds between two looks for dead workers (also done whenever a worker is idle).
TOPICRAWL_LEASE_CHECK_SECONDS = 5.0
#: Scale-out: the time to live of a store-claim (crawler/lease.py: a worker claims its counted
#: pages right before their database write, and a reclaimed copy's count is not given back
#: while the claim lives). A write must commit within it; 0: 6 x TOPICRAWL_LEASE_SECONDS, at
#: least 60 s.
TOPICRAWL_LEASE_CLAIM_SECONDS = 0.0

REQUEST_FINGERPRINTER_IMPLEMENTATION = "2.7"
TWISTED_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"
FEED_EXPORT_ENCODING = "utf-8"
LOG_LEVEL = "INFO"

# -- learned relevance (issue 10: calibrated mode, relevance.learning) ----------------------
# a queued link is scored again with the current models when it leaves the queue; when its
# score fell by more than the margin it goes back with the new priority, at most N times
TOPICRAWL_RESCORE_MARGIN = 0.1
TOPICRAWL_RESCORE_MAX = 2
# the best queued link waits while at least N requests are in flight when its score is under
# the floor: their pages may bring better links (crawler.queues.DurablePriorityQueue._waits;
# docs/benchmarks/topics.md, "Weak links held back"). Off: more harvest and recall for a
# page budget, but a network-bound crawl runs several times slower (0.6 for a budget-bound crawl)
TOPICRAWL_DISPATCH_FLOOR = 0.0
TOPICRAWL_DISPATCH_IN_FLIGHT = 2
