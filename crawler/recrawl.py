"""``topicrawl recrawl --run ID``: fetch a run's pages again, keep what changed, follow new links.

Runs ``scrapy crawl topic -a recrawl=1 -a run_id=ID`` with the run's own topic file (the
snapshot stored with the run) and seeds. The spider (``TopicSpider.load_recrawl``) fetches
the run's accepted pages and list pages (the pages that led to an accepted page) with HTTP
conditional requests (``If-None-Match`` / ``If-Modified-Since`` from the stored ``ETag`` /
``Last-Modified``): a ``304 Not Modified`` stores nothing, a page whose text is unchanged
stores nothing, a changed page replaces its stored copy (and document), and links to URLs the
run does not hold yet are followed as in any crawl (scored, deduplicated against the run's
documents). The run's record keeps its stats, with one entry per recrawl under ``recrawls``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from models.cli import DB_HELP, open_for_reading
from models.store import absolute_db_url, resolve_db_url
from topicrawl.errors import TopicrawlError
from topicrawl.outcome import EXIT_BUG


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "recrawl",
        help="fetch a run's pages again with conditional requests; store what changed",
        description="Fetch the accepted pages and list pages of a crawl run again with HTTP "
        "conditional requests (ETag / Last-Modified): unchanged pages (304, or the same "
        "text) store nothing, changed pages replace their stored copy, and new links are "
        "followed into the same run. Runs `scrapy crawl topic -a recrawl=1` with the run's "
        "topic snapshot and seeds.",
    )
    parser.add_argument("--run", type=int, required=True, help="crawl run id (see `runs`)")
    parser.add_argument("--db", help=DB_HELP)
    parser.add_argument("--topic", type=Path, help="topic file (default: the run's snapshot)")
    parser.add_argument("--max-pages", type=int, help="most pages stored by this recrawl")
    parser.add_argument(
        "-s", dest="settings", action="append", default=[], metavar="NAME=VALUE",
        help="a Scrapy setting for the crawl (repeatable), e.g. -s DOWNLOAD_DELAY=1",
    )  # fmt: skip
    parser.set_defaults(func=cmd_recrawl)


def recrawl_command(
    run_id: int,
    db_url: str,
    topic: Path,
    seeds_file: Path,
    *,
    max_pages: int | None = None,
    settings: list[str] | tuple[str, ...] = (),
) -> list[str]:
    """The ``scrapy crawl topic`` command line of a recrawl."""
    cmd = [sys.executable, "-m", "scrapy", "crawl", "topic", "-a", "recrawl=1",
           "-a", f"run_id={run_id}", "-a", f"topic={topic}", "-a", f"seeds=@{seeds_file}",
           "-s", f"TOPICRAWL_DB_URL={db_url}"]  # fmt: skip
    if max_pages is not None:
        cmd += ["-a", f"max_pages={max_pages}"]
    for setting in settings:
        cmd += ["-s", setting]
    return cmd


def cmd_recrawl(args: argparse.Namespace) -> int:
    store = open_for_reading(args.db)
    if store is None:
        return EXIT_BUG
    try:
        run = store.get_run(args.run)
        if run is None:
            raise TopicrawlError(
                f"no crawl run {args.run} in this database (list them: topicrawl runs)"
            )
        seeds = list((run.settings or {}).get("seeds") or [])
        if not seeds:  # a run recorded without its seeds: its first pages stand in
            seeds = [p.url for p in store.iter_pages(args.run, batch_size=10) if p.depth == 0][:50]
        if not seeds:
            raise TopicrawlError(f"run {args.run} has no pages to recrawl")
        topic_text = run.topic_text
        topic_file = (run.settings or {}).get("topic_file")
    finally:
        store.close()
    db_url = absolute_db_url(resolve_db_url(args.db))
    with tempfile.TemporaryDirectory(prefix="topicrawl-recrawl-") as tmp:
        topic = args.topic
        if topic is None and topic_file and Path(topic_file).is_file():
            topic = Path(topic_file)  # the run's own file (paths inside it stay valid)
        if topic is None:
            if not topic_text:
                raise TopicrawlError(
                    f"run {args.run} has no topic snapshot: pass --topic FILE"
                )
            topic = Path(tmp) / "topic.toml"
            topic.write_text(topic_text, encoding="utf-8")
        seeds_file = Path(tmp) / "seeds.txt"
        seeds_file.write_text("\n".join(seeds) + "\n", encoding="utf-8")
        cmd = recrawl_command(args.run, db_url, topic, seeds_file, max_pages=args.max_pages,
                              settings=args.settings)  # fmt: skip
        env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "crawler.settings"}
        return subprocess.run(cmd, env=env, check=False).returncode
