"""Redis commands per page of a small scale-out crawl (issue 11: the shared budget's round trips).

Starts a private ``redis-server`` (never the shared one: its ``INFO commandstats`` would count
other clients), a generated test web and ``--workers`` ``scrapy crawl topic`` workers that
share a ``--pages`` budget and a fresh PostgreSQL database, then prints the requests the server read
(``total_reads_processed``: round trips, a pipeline counting once), and per command the
commands the workers sent (``MONITOR``, less the commands Lua scripts ran; each pipelined one
counts) and the commands Redis
ran (``INFO commandstats``, scripts' included), each also per page fetched. ``--root`` runs the crawler of another checkout (e.g. an export of
``main``) against the same web, to compare before and after a change::

    python bench/redis_commands.py
    git archive main | tar -x -C /tmp/before && python bench/redis_commands.py --root /tmp/before

Time-driven commands (heartbeats, the frontier poll's ``ZCARD``) grow with the crawl's
duration, not its pages: compare the per-page commands (``INCRBY``/``EVALSHA``, ``SADD``,
``PING``) across runs.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sitegen.build import build_web  # noqa: E402
from sitegen.server import ServerProcess, crawl_command  # noqa: E402

PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def commandstats(port: int) -> dict[str, int]:
    """``cmdstat_<name>: calls`` of the private server's ``INFO commandstats``."""
    out = subprocess.run(["redis-cli", "-p", str(port), "info", "commandstats"],
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    return {m[1]: int(m[2]) for m in re.finditer(r"cmdstat_([\w|]+):calls=(\d+)", out)}


def read_events(port: int) -> int:
    """The server's ``total_reads_processed`` (``INFO stats``): the requests it read off its
    clients' sockets, about one a round trip (a pipeline or a transaction sent at once is one,
    where ``MONITOR`` shows each of its commands)."""
    out = subprocess.run(["redis-cli", "-p", str(port), "info", "stats"],
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    return int(re.search(r"total_reads_processed:(\d+)", out)[1])


def sent_commands(monitor_log: Path) -> dict[str, int]:
    """Commands the clients sent (``MONITOR`` lines, less those a Lua script ran), by
    command; pipelined ones each count."""
    counts: dict[str, int] = {}
    for line in monitor_log.read_text(errors="replace").splitlines():
        m = re.match(r'[\d.]+ \[\d+ ([^\]]+)\] "([^"]+)"', line)
        if m and m[1] != "lua":
            name = m[2].lower()
            counts[name] = counts.get(name, 0) + 1
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", type=Path, default=ROOT, help="the crawler's checkout")
    ap.add_argument("--pages", type=int, default=150, help="the crawl's page budget")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--latency-ms", type=float, default=200, help="the test web's latency")
    a = ap.parse_args(argv)
    import psycopg

    tmp = Path(tempfile.mkdtemp(prefix="redis-commands-"))
    build_web(tmp / "web", scale="small", seed=7)
    topic = tmp / "politics.toml"
    topic.write_text('name = "时政测试"\nlanguage = "zh"\n\n[words]\n"政治" = 1.0\n"中央" = 0.8\n'
                     '"会议" = 0.6\n"政府" = 0.8\n\n[page]\nthreshold = 0.0\n',
                     encoding="utf-8")  # fmt: skip
    port = free_port()
    server = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                               "--save", "", "--appendonly", "no"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    name = f"topicrawl_bench_{uuid.uuid4().hex[:6]}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    db = f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
    web = ServerProcess(tmp / "web", latency_ms=a.latency_ms)
    try:
        deadline = time.monotonic() + 10
        while subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True,
                             text=True).stdout.strip() != "PONG":  # fmt: skip
            assert time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.1)
        subprocess.run(["redis-cli", "-p", str(port), "config", "resetstat"], check=True,
                       capture_output=True)  # fmt: skip
        monitor_log = tmp / "monitor.log"
        with monitor_log.open("w") as fh:
            monitor = subprocess.Popen(["redis-cli", "-p", str(port), "monitor"], stdout=fh)
        seeds = json.loads((tmp / "web" / "ground_truth.json").read_text())["seeds"]["portal"]
        settings = {"TOPICRAWL_DB_URL": db, "AUTOTHROTTLE_ENABLED": False, "DOWNLOAD_DELAY": 0,
                    "CONCURRENT_REQUESTS_PER_DOMAIN": 2, "LOG_LEVEL": "INFO",
                    "TOPICRAWL_LINK_SCORER": "relevance.linkscore.KeywordLinkScorer",
                    "TOPICRAWL_PROGRESS_INTERVAL": 0}  # fmt: skip
        logs, procs = [], []
        started = time.monotonic()
        for w in range(a.workers):
            cmd, env = crawl_command(web.url, seeds, topic,
                                     args={"run_id": 1, "max_pages": a.pages},
                                     settings=settings)  # fmt: skip
            env.update(TOPICRAWL_REDIS_URL=f"redis://127.0.0.1:{port}/0",
                       TOPICRAWL_REDIS_PREFIX="bench", PYTHONPATH=str(a.root))  # fmt: skip
            log = tmp / f"worker{w}.log"
            logs.append(log)
            with log.open("w") as fh:
                procs.append(subprocess.Popen(cmd, cwd=a.root, env=env, stdout=subprocess.DEVNULL,
                                              stderr=fh))  # fmt: skip
            time.sleep(3)  # the first makes the run
        codes = [p.wait() for p in procs]
        took = time.monotonic() - started
        stats = commandstats(port)
        reads = read_events(port)
        monitor.terminate()
        monitor.wait()
    finally:
        web.stop()
        server.terminate()
        server.wait()
        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    fetched = 0
    for log in logs:
        found = re.findall(r"'topicrawl/pages/fetched': (\d+)", log.read_text(errors="replace"))
        fetched += int(found[-1]) if found else 0
    trips = sent_commands(monitor_log)
    shutil.rmtree(tmp, ignore_errors=True)
    total, sent = sum(stats.values()), sum(trips.values())
    per = max(fetched, 1)
    print(
        f"root {a.root}: {a.workers} workers, exit {codes}, {fetched} pages fetched in "
        f"{took:.0f} s; {reads} requests read by the server (round trips, {reads / per:.1f} "
        f"a page), {sent} commands sent ({sent / per:.1f} a page), {total} commands run, "
        f"scripts' included ({total / per:.1f} a page)"
    )
    print(f"  {'command':<16} {'sent':>7} {'a page':>8} {'run':>7} {'a page':>8}")
    for cmd in sorted(set(stats) | set(trips), key=lambda c: -trips.get(c, 0)):
        n, m = trips.get(cmd, 0), stats.get(cmd, 0)
        print(f"  {cmd:<16} {n:>7} {n / max(fetched, 1):8.2f} {m:>7} {m / max(fetched, 1):8.2f}")
    return 0 if codes == [0] * a.workers else 1


if __name__ == "__main__":
    sys.exit(main())
