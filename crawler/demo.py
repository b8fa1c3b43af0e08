"""``topicrawl demo``: build the local test web, serve it, crawl it for 时政 into SQLite."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from models.store import Store, absolute_db_url, display_url, resolve_db_url
from topicrawl.errors import ConfigError
from topicrawl.outcome import command

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TOPIC = ROOT / "topics" / "shizheng.toml"


def register(sub: argparse._SubParsersAction) -> None:
    demo = sub.add_parser(
        "demo",
        help="crawl a generated local web for the 时政 topic (no internet needed)",
        description="Builds the local test web, serves it through a local proxy and runs "
        "`scrapy crawl topic` on it; the corpus lands in the database.",
    )
    demo.add_argument(
        "--scale", choices=("small", "large"), default="small",
        help="size of the generated web: small (~300 URLs) or large (default: small)",
    )  # fmt: skip
    demo.add_argument(
        "--topic", type=Path, default=DEFAULT_TOPIC,
        help=f"topic file to crawl for (default: {DEFAULT_TOPIC.relative_to(ROOT)})",
    )  # fmt: skip
    demo.add_argument("--db", help="database URL (default: $TOPICRAWL_DB_URL or ./topicrawl.db)")
    demo.add_argument(
        "--max-pages", type=int, default=300, help="page budget of the crawl (default: 300)"
    )
    demo.add_argument(
        "--web", type=Path,
        help="where to build the web, kept afterwards (default: a temporary directory, "
        "removed at the end unless --keep)",
    )  # fmt: skip
    demo.add_argument(
        "--keep", action="store_true",
        help="keep the temporary web after the demo (its path is printed)",
    )  # fmt: skip
    demo.set_defaults(func=cmd_demo)


def cmd_demo(args: argparse.Namespace) -> int:
    if args.max_pages < 1:
        raise ConfigError(f"--max-pages {args.max_pages} must be at least 1")
    if args.web is not None:
        return _demo(args, args.web)
    web = Path(tempfile.mkdtemp(prefix="topicrawl-web-"))
    try:
        return _demo(args, web)
    finally:
        if args.keep:
            print(f"the generated web is kept in {web}")
        else:
            shutil.rmtree(web, ignore_errors=True)


def _demo(args: argparse.Namespace, web: Path) -> int:
    from sitegen.build import build_web
    from sitegen.server import ServerProcess

    truth = build_web(web, scale=args.scale, seed=1)
    seeds = truth["seeds"]["portal"]
    print(f"local web: {len(truth['pages'])} URLs in {web}")
    db_url = absolute_db_url(resolve_db_url(args.db))  # the crawl runs in the project dir
    with ServerProcess(web) as server:
        env = {**os.environ, "http_proxy": server.url, "HTTP_PROXY": server.url}
        cmd = [sys.executable, "-m", "scrapy", "crawl", "topic",
               "-a", f"seeds={','.join(seeds)}", "-a", f"topic={args.topic}",
               "-a", f"max_pages={args.max_pages}",
               "-s", f"TOPICRAWL_DB_URL={db_url}", "-s", "AUTOTHROTTLE_ENABLED=False",
               "-s", "DOWNLOAD_DELAY=0", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=8",
               "-s", "TOPICRAWL_PROGRESS_INTERVAL=5", "-s", "TOPICRAWL_SUMMARY=False"]  # fmt: skip
        print(f"running: scrapy crawl topic -a seeds={seeds[0]},... -a topic={args.topic} "
              f"-a max_pages={args.max_pages}", flush=True)  # fmt: skip
        status = subprocess.run(cmd, cwd=ROOT, env=env, check=False).returncode
    if status != 0:
        return status
    store = Store.from_url(db_url)
    try:
        run = store.list_runs()[-1]
        fetched = store.count_pages(run.id)
        accepted = store.count_pages(run.id, accepted_only=True)
        final = {p.url: p.final_url or p.url for p in store.iter_pages(run.id)}
        docs = [final.get(d.url, d.url) for d in store.iter_documents(run.id)]
    finally:
        store.close()
    print(
        f"run {run.id}: {fetched} pages fetched, {accepted} accepted, {len(docs)} documents "
        f"in {display_url(db_url)}"
    )
    print(summary(truth, args.topic, seeds, docs))
    db = "" if db_url == absolute_db_url(resolve_db_url(None)) else f" --db '{db_url}'"
    print(f"next: {command()} export --run {run.id} --format jsonl --out corpus.jsonl{db}")
    return 0


def summary(truth: dict, topic_file: Path, seeds: list[str], document_urls: list[str]) -> str:
    """Precision and recall of the corpus against the web's ground truth, in three lines
    (definitions: ``sitegen.evaluate``): the topic's name is the category."""
    from fnmatch import fnmatch

    from relevance.topic import load_topic
    from sitegen.articles import CATEGORIES
    from sitegen.evaluate import corpus_score

    topic = load_topic(topic_file)
    if topic.name not in CATEGORIES:
        return f"no ground truth for the topic {topic.name!r} (the web's categories: {' '.join(CATEGORIES)})"
    patterns = [urlsplit(s).hostname or "" for s in seeds] + list(topic.allowed_hosts)
    hosts = [s["host"] for s in truth["sites"]
             if any(fnmatch(s["host"], p) or s["host"] == p for p in patterns)]  # fmt: skip
    score = corpus_score(truth, topic.name, document_urls, hosts)
    cat = topic.name
    return (
        f"corpus against the ground truth ({cat} articles of the {len(hosts)} crawled sites; "
        f"a reprint counts with its original):\n"
        f"  precision {score.precision:.2f}  ({score.on_topic} of {score.documents} documents "
        f"are {cat} articles)\n"
        f"  recall    {score.recall:.2f}  ({score.found} of the {score.articles} {cat} articles)"
    )
