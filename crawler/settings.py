"""Scrapy settings of the topicrawl project. Every TOPICRAWL_* setting has its default here.

Scale-out: with ``TOPICRAWL_REDIS_URL`` set in the environment, the frontier (a sorted-set
priority queue) and the request dupefilter live in Redis (scrapy-redis), shared by every
worker; the dedup index should then use the Redis backend too.
"""

import os

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
DOWNLOAD_MAXSIZE = 16 * 1024 * 1024
RETRY_TIMES = 2
COOKIES_ENABLED = False
TELNETCONSOLE_ENABLED = False

# -- frontier: a global best-first order -----------------------------------------------------
SCHEDULER_PRIORITY_QUEUE = "crawler.queues.DurablePriorityQueue"
#: JOBDIR frontier: SQLite queues committed at every push and pop, so that a crawl resumes
#: even after kill -9 (crawler/queues.py).
SCHEDULER_DISK_QUEUE = "crawler.queues.DurableLifoQueue"
SCHEDULER_START_DISK_QUEUE = "crawler.queues.DurableFifoQueue"
DEPTH_PRIORITY = 0
DEPTH_STATS_VERBOSE = True

SPIDER_MIDDLEWARES = {
    "crawler.middlewares.TrapGuardMiddleware": 650,
}
DOWNLOADER_MIDDLEWARES = {
    # Scrapy's, with concurrent waiters on one robots.txt fixed (see the class docstring)
    "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
    # drops a request whose URL was already sent to download (re-queued links, redirects)
    "crawler.middlewares.FetchOnceMiddleware": 50,
    "crawler.middlewares.RobotsTxtMiddleware": 100,
    "crawler.middlewares.NonHtmlGuardMiddleware": 950,
}
EXTENSIONS = {
    "crawler.extensions.CrawlProgress": 500,
}
ITEM_PIPELINES = {
    "dedup.pipeline.DedupPipeline": 300,
    "crawler.pipelines.StorePipeline": 800,
}

# -- topicrawl -------------------------------------------------------------------------------
#: Database URL; empty means $TOPICRAWL_DB_URL or sqlite:///topicrawl.db.
TOPICRAWL_DB_URL = os.environ.get("TOPICRAWL_DB_URL", "")
#: Pages written to the database per batch.
TOPICRAWL_DB_BATCH = 50
#: Where pages go when the database stays down past the retries (imported with
#: `topicrawl import-spill`): nothing accepted is lost.
TOPICRAWL_SPILL_DIR = "topicrawl-spill"
#: The link scorer: "relevance" (the topic's semantic engine) or a dotted class path with a
#: ``from_topic(topic)`` classmethod, e.g. "crawler.linkscore.KeywordLinkScorer".
TOPICRAWL_LINK_SCORER = "relevance"
#: Redis URL of the cross-process word-affinity cache of the relevance engine (workers of
#: one topic share their word scores); empty: an in-process cache only.
TOPICRAWL_AFFINITY_REDIS = os.environ.get("TOPICRAWL_REDIS_URL", "")
#: Trap guard: at most this many URLs that differ only in their query string per path.
TOPICRAWL_MAX_QUERY_VARIANTS = 30
#: Trap guard: longest URL followed, and most repeats of one path segment.
TOPICRAWL_MAX_URL_LENGTH = 512
TOPICRAWL_MAX_SEGMENT_REPEATS = 3
#: Content types that are parsed; anything else is counted and skipped.
TOPICRAWL_HTML_TYPES = ["text/html", "application/xhtml+xml"]
#: Dedup (see dedup/pipeline.py and docs/dedup.md); a topic's [dedup] table overrides these.
TOPICRAWL_DEDUP_ENABLED = True
#: Cascade order; the first method that finds a match decides.
TOPICRAWL_DEDUP_METHODS = ["exact", "spotsigs"]
#: Per-method options, e.g. {"spotsigs": {"tau": 0.5}}.
TOPICRAWL_DEDUP_OPTIONS: dict = {}
#: Index storage ({"type": "memory"|"sqlite"|"redis", ...}); None: SQLite in JOBDIR when set,
#: else memory. With the scrapy-redis scale-out it is the shared Redis (below).
TOPICRAWL_DEDUP_BACKEND = None
#: "main" text (trafilatura) or every "visible" text of the page.
TOPICRAWL_DEDUP_TEXT = "main"
#: Which copy survives: "first", "longer" or "earlier" (published).
TOPICRAWL_DEDUP_KEEP = "first"
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

# -- scale-out on scrapy-redis -----------------------------------------------------------------
REDIS_URL = os.environ.get("TOPICRAWL_REDIS_URL", "")
if REDIS_URL:
    SCHEDULER = "scrapy_redis.scheduler.Scheduler"
    DUPEFILTER_CLASS = "scrapy_redis.dupefilter.RFPDupeFilter"
    SCHEDULER_QUEUE_CLASS = "scrapy_redis.queue.PriorityQueue"
    SCHEDULER_PERSIST = True
    #: Key prefix in Redis: crawls that share a Redis use different prefixes.
    TOPICRAWL_REDIS_PREFIX = os.environ.get("TOPICRAWL_REDIS_PREFIX", "topicrawl")
    SCHEDULER_QUEUE_KEY = f"{TOPICRAWL_REDIS_PREFIX}:%(spider)s:requests"
    SCHEDULER_DUPEFILTER_KEY = f"{TOPICRAWL_REDIS_PREFIX}:%(spider)s:dupefilter"
    #: FetchOnceMiddleware's Redis set of the URLs sent to download by any worker: a URL
    #: re-queued in the shared frontier is downloaded once in all.
    TOPICRAWL_FETCHED_KEY = f"{TOPICRAWL_REDIS_PREFIX}:%(spider)s:fetched"
    #: TrapGuardMiddleware's Redis sets of the query strings admitted per path (one set per
    #: host + path under this prefix): the query-variant limit holds for the whole crawl.
    TOPICRAWL_TRAP_KEY = f"{TOPICRAWL_REDIS_PREFIX}:%(spider)s:trap"
    #: The page counter of ``max_pages`` (INCR by every worker): the budget is the crawl's.
    TOPICRAWL_PAGES_KEY = f"{TOPICRAWL_REDIS_PREFIX}:%(spider)s:pages"
    TOPICRAWL_DEDUP_BACKEND = {
        "type": "redis",
        "url": REDIS_URL,
        "namespace": f"{TOPICRAWL_REDIS_PREFIX}:{{spider}}:dedup",
    }

REQUEST_FINGERPRINTER_IMPLEMENTATION = "2.7"
TWISTED_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"
FEED_EXPORT_ENCODING = "utf-8"
LOG_LEVEL = "INFO"
