"""``topicrawl serve``: the crawl console (web UI + JSON API) over a crawl database."""

from __future__ import annotations

import argparse
import ipaddress
import os
import socket
from pathlib import Path

from models.store import resolve_db_url
from topicrawl.errors import ConfigError

ROOT = Path(__file__).resolve().parent.parent


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "serve",
        help="the crawl console: web UI and JSON API to start, watch and audit crawls",
        description="Serves the crawl console. Binding anything but the loopback needs "
        "TOPICRAWL_CONSOLE_TOKEN in the environment (every request must then carry it).",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1)")
    p.add_argument("--port", type=int, default=8080, help="port (8080; 0: any free port)")
    p.add_argument("--db", help="database URL (default: $TOPICRAWL_DB_URL or ./topicrawl.db)")
    p.add_argument("--topics", type=Path, default=Path("topics"),
                   help="the only directory whose topic files are read and written (./topics)")  # fmt: skip
    p.add_argument("--work-dir", type=Path, default=Path("console-crawls"),
                   help="where started crawls run and log (./console-crawls)")  # fmt: skip
    p.add_argument("--crawl-setting", action="append", default=[], metavar="KEY=VALUE",
                   help="a Scrapy setting (-s) for every crawl started here (repeatable)")  # fmt: skip
    p.add_argument("--progress-interval", type=float, default=5.0,
                   help="seconds between the live snapshots of started crawls (5)")  # fmt: skip
    p.set_defaults(func=cmd_serve)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from console.app import ConsoleConfig, create_app

    token = os.environ.get("TOPICRAWL_CONSOLE_TOKEN") or None
    loopback = is_loopback(args.host)
    if not loopback and not token:
        raise ConfigError(
            f"binding {args.host} exposes the console: set TOPICRAWL_CONSOLE_TOKEN (a long "
            "random secret) or bind 127.0.0.1"
        )
    if not args.topics.is_dir():
        raise ConfigError(f"topics directory {args.topics} not found (--topics DIR)")
    settings = {}
    for item in args.crawl_setting:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--crawl-setting {item!r}: expected KEY=VALUE")
        settings[key.strip()] = value
    config = ConsoleConfig(
        db_url=resolve_db_url(args.db),
        topics_dir=args.topics.resolve(),
        work_dir=args.work_dir.resolve(),
        token=token,
        loopback=loopback,
        crawl_settings=settings,
        progress_interval=args.progress_interval,
    )
    app = create_app(config)
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((args.host, args.port))
    port = sock.getsockname()[1]
    shown = f"[{args.host}]" if family == socket.AF_INET6 else args.host
    print(f"http://{shown}:{port}", flush=True)  # the first line: the console's URL
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=5))
    server.run(sockets=[sock])
    return 0

