"""``scrapy crawl``, checked before the first request and ending with a named outcome.

Before Scrapy starts (and prints anything), the topic file, the seeds, the spider arguments,
the database and, for the scale-out, Redis are checked: a problem ends the command with one
line naming the cause and the fix. After the crawl, the finish reason of the run (Scrapy's
close reason, or the outcome a component recorded: ``topicrawl.outcome``) decides the exit
status, and a summary says what was collected, where, and the next command. SIGTERM or
SIGINT during the checks or the spider's construction (topic load, scorer build) ends the
command at once with one line and exit status 143/130 (``topicrawl.interrupt``).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import sys
import time
from typing import Any

from scrapy import signals
from scrapy.commands.crawl import Command as ScrapyCrawl
from scrapy.crawler import Crawler
from scrapy.settings import SETTINGS_PRIORITIES

from relevance.sklearnimport import hide_pandas
from topicrawl import console, interrupt
from topicrawl.errors import (
    ConfigError,
    RedisUnavailableError,
    TopicFileError,
    TopicrawlError,
)
from topicrawl.outcome import (
    EXIT_BUG,
    EXIT_OK,
    EXIT_USAGE,
    MESSAGE_KEY,
    command,
    exit_status,
    finish_reason,
)

log = logging.getLogger(__name__)


class Command(ScrapyCrawl):
    def short_desc(self) -> str:
        return "Run a spider (topic: the focused crawl; see README 'Crawling')"

    def long_desc(self) -> str:
        return (
            "Run a spider. The focused crawl: scrapy crawl topic -a seeds=URL[,URL...]|@FILE "
            "-a topic=FILE [-a max_pages=N] [-a max_depth=N] [-a run_id=N]. Exit status: 0 "
            "done, 1 an unexpected error (a bug), 2 bad usage or configuration, 3 no seed reachable, 4 database "
            "unreachable, 5 Redis unreachable, 6 pages spilled (run topicrawl import-spill), "
            "7 disk full, 130/143 SIGINT/SIGTERM during start-up (README 'Exit status')."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument(
            "-v",
            "--verbose",
            "--debug",
            dest="debug",
            action="store_true",
            help="log at DEBUG level and print tracebacks of expected failures too",
        )

    def process_options(self, args: list[str], opts: argparse.Namespace) -> None:
        super().process_options(args, opts)
        assert self.settings is not None
        self.debug = bool(opts.debug)
        explicit = (
            self.settings.getpriority("LOG_LEVEL") >= SETTINGS_PRIORITIES["cmdline"]
            or not self.settings.getbool("LOG_ENABLED")
            or bool(self.settings.get("LOG_FILE"))
        )
        if self.debug:
            self.settings.set("LOG_LEVEL", "DEBUG", priority="cmdline")
        elif not explicit:
            # a console a person reads: warnings and our own progress and summary only
            self.settings.set("LOG_LEVEL", "WARNING", priority="cmdline")
        self.settings.set("LOG_VERSIONS", [], priority="cmdline")
        console.quiet_libraries(debug=self.debug)
        if args and args[0] == "topic":
            try:
                with interrupt.interruptible("checking the topic file, database and Redis"):
                    self.preflight(opts.spargs)
            except interrupt.Interrupted as exc:
                console.fail(exc)
                sys.exit(exc.exit_status)
            except TopicrawlError as exc:
                if self.debug:
                    log.exception("preflight failed")
                console.fail(exc)
                sys.exit(EXIT_USAGE if isinstance(exc, ConfigError) else exc.exit_status)

    # -- checks before Scrapy starts -------------------------------------------------------
    def preflight(self, spargs: dict[str, str]) -> None:
        """Everything a crawl needs, checked in the order a user fixes it."""
        self.check_topic_args(spargs)
        self.check_database()
        self.check_redis()

    @staticmethod
    def check_topic_args(spargs: dict[str, str]) -> None:
        from crawler.spiders.topic import SPIDER_ARGS, parse_seeds, parse_spider_args
        from relevance.topic import load_topic

        unknown = sorted(set(spargs) - set(SPIDER_ARGS))
        if unknown:
            raise ConfigError(
                f"unknown spider argument {unknown[0]!r}: the topic spider takes "
                + ", ".join(f"-a {name}=..." for name in SPIDER_ARGS)
            )
        parse_spider_args(spargs)
        if not spargs.get("topic"):
            raise TopicFileError("no topic file: pass -a topic=FILE (see topics/ for examples)")
        parse_seeds(spargs.get("seeds"))
        load_topic(spargs["topic"])

    def check_database(self) -> None:
        """Open (create, migrate) the crawl's database within its retry budget."""
        from models.store import Store, retry_budget

        assert self.settings is not None
        budget = retry_budget(self.settings.get("TOPICRAWL_DB_RETRY_SECONDS"))
        store = Store.from_url(self.settings.get("TOPICRAWL_DB_URL") or None,
                               retry_seconds=budget)  # fmt: skip
        store.close()

    def check_redis(self) -> None:
        """The scale-out's Redis answers a PING within ``TOPICRAWL_REDIS_RETRY_SECONDS``."""
        assert self.settings is not None
        url = self.settings.get("REDIS_URL")
        if not url or not str(self.settings.get("SCHEDULER", "")).startswith(
            ("scrapy_redis", "crawler.scheduler")
        ):
            return
        import redis

        budget = self.settings.getfloat("TOPICRAWL_REDIS_RETRY_SECONDS", 30.0)
        deadline = time.monotonic() + budget
        delay = 0.25
        client = redis.Redis.from_url(url, socket_connect_timeout=min(5, max(budget, 0.5)))
        shown = redis.connection.parse_url(url).get("host", url) if "://" in url else url
        while True:
            try:
                client.ping()
                client.close()
                return
            except redis.RedisError as exc:
                if time.monotonic() + delay > deadline:
                    raise RedisUnavailableError(
                        f"Redis at {shown} unreachable ({exc}; retried for {budget:g}s): "
                        "check that it is running and TOPICRAWL_REDIS_URL names it"
                    ) from exc
                time.sleep(delay)
                delay = min(delay * 2, 5.0)

    # -- the crawl -------------------------------------------------------------------------
    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if not args or args[0] != "topic":
            super().run(args, opts)
            return
        if len(args) > 1:
            super().run(args, opts)  # Scrapy's usage error
            return
        assert self.crawler_process is not None
        console.install_filters(debug=self.debug)
        hide_pandas()  # scikit-learn without pandas in a crawl: ~60 MB less (relevance.sklearnimport)
        crawler = self._create_crawler(args[0])
        closed: dict[str, Any] = {}

        def engine_started() -> None:  # the crawler has installed its own log handler
            console.install_filters(debug=self.debug)

        crawler.signals.connect(engine_started, signal=signals.engine_started, weak=False)

        def spider_closed(spider: Any, reason: str) -> None:
            closed["reason"] = reason
            closed["stats"] = dict(crawler.stats.get_stats()) if crawler.stats else {}

        crawler.signals.connect(spider_closed, signal=signals.spider_closed, weak=False)
        started = self.crawler_process.crawl(crawler, **opts.spargs)
        self.crawler_process.start()
        console.clear_status()
        if interrupt.received is not None:  # while loading the topic or building the scorer
            _crawl_error(started)  # said in one line, not as an unretrieved error
            console.fail(interrupt.received)
            self.exitcode = interrupt.received.exit_status
            return
        if self.crawler_process.bootstrap_failed and "reason" not in closed:
            self.exitcode = 1
            return
        stats = closed.get("stats") or (dict(crawler.stats.get_stats()) if crawler.stats else {})
        reason = finish_reason(stats, closed.get("reason"))
        error = _crawl_error(started)
        if error is not None and exit_status(reason) == EXIT_OK:
            # an unexpected error opening the crawl (a component's open_spider): Scrapy
            # closes it as "shutdown" and would exit 0 with the traceback in the log
            log.error("the crawl failed", exc_info=(type(error), error, error.__traceback__))
            run_id = stats.get("topicrawl/run_id")
            left = f"; run {run_id} is left unfinished" if run_id is not None else ""
            console.fail(f"the crawl stopped on an unexpected error: {type(error).__name__}: "
                         f"{error}{left} (a bug: the traceback is above)")  # fmt: skip
            self.exitcode = EXIT_BUG
            return
        self.exitcode = exit_status(reason)
        self.report(crawler, stats, reason)
        # the crawl is over: leave the interpreter's last garbage collection out (with the
        # relevance engine's dictionaries loaded it took ~8 s after the summary)
        gc.freeze()

    def report(self, crawler: Crawler, stats: dict[str, Any], reason: str) -> None:
        """The summary: what was collected, where, the next command; or the one line that
        names the cause and the fix (last line, on standard error)."""
        from crawler.extensions import failed_requests
        from models.store import absolute_db_url, display_url, resolve_db_url

        run_id = stats.get("topicrawl/run_id")
        fetched = stats.get("topicrawl/pages/fetched", 0)
        accepted = stats.get("topicrawl/pages/accepted", 0)
        dups = sum(v for k, v in stats.items() if k.startswith("topicrawl/dedup/dropped/"))
        errors = failed_requests(stats)
        docs = stats.get("topicrawl/storage/documents", 0)
        harvest = f"{accepted / fetched:.2f}" if fetched else "-"
        db = display_url(absolute_db_url(resolve_db_url(crawler.settings.get("TOPICRAWL_DB_URL"))))
        run = f"run {run_id}" if run_id is not None else "crawl"
        lines = [
            f"{run} ended ({reason}): {fetched} pages fetched, {accepted} accepted "
            f"(harvest {harvest}), {dups} duplicates dropped, {errors} failed requests, "
            f"{docs} documents",
        ]
        if run_id is not None:
            lines.append(f"stored in {db}")
        message = stats.get(MESSAGE_KEY)
        if "topicrawl/recrawl/targets" in stats:
            n = {k: stats.get(f"topicrawl/recrawl/{k}", 0)
                 for k in ("targets", "not_modified", "unchanged", "changed", "new_pages")}  # fmt: skip
            lines.append(
                f"recrawl: {n['targets']} stored pages requested again: {n['not_modified']} not "
                f"modified (304), {n['unchanged']} unchanged, {n['changed']} changed; "
                f"{n['new_pages']} new pages"
            )
        if stats.get("topicrawl/frontier/hint"):  # the frontier ran dry: what would help
            lines.append(str(stats["topicrawl/frontier/hint"]))
        if self.exitcode != EXIT_OK:
            lines.append(f"topicrawl: {message or reason}")
        elif not crawler.settings.getbool("TOPICRAWL_SUMMARY", True):
            return
        elif run_id is not None and docs:
            lines.append(
                f"next: {command()} export --run {run_id} --format jsonl --out corpus.jsonl"
                + ("" if not crawler.settings.get("TOPICRAWL_DB_URL") else f" --db '{db}'")
            )
        elif run_id is not None:
            lines.append(f"next: {command()} runs  (no documents: see README 'Crawling')")
        for line in lines:
            print(line, file=sys.stderr)


def _crawl_error(started: Any) -> BaseException | None:
    """The exception the crawl task (asyncio) or Deferred ended with, marked as handled;
    None when it ended normally or with :class:`CloseSpider` (a component's outcome)."""
    from scrapy.exceptions import CloseSpider

    error: BaseException | None = None
    if isinstance(started, asyncio.Future):
        if started.done() and not started.cancelled():
            error = started.exception()
    elif hasattr(started, "addErrback"):

        def keep(failure: Any) -> None:
            nonlocal error
            error = failure.value

        started.addErrback(keep)
    return None if isinstance(error, CloseSpider) else error
