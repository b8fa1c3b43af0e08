"""Scale-out workers for the Redis fault tests: ``scrapy crawl`` subprocesses that reach Redis
through a :class:`tcpproxy.TcpProxy`, and what their logs say (stats, progress lines)."""

from __future__ import annotations

import datetime as dt
import json
import re
import subprocess
import time
import uuid
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import Any

from conftest import ROOT, crawl_command
from tcpproxy import TcpProxy


def final_stat(log: str, key: str) -> int:
    """The last value of an integer stat in a worker's log (0 when absent)."""
    found = re.findall(rf"'{re.escape(key)}': (\d+)", log)
    return int(found[-1]) if found else 0


def progress(log: str) -> list[tuple[float, int]]:
    """``(epoch seconds, pages fetched)`` of a worker's ``progress`` lines (one a second)."""
    return [(dt.datetime.strptime(m[1], "%Y-%m-%d %H:%M:%S").timestamp(), int(m[2]))
            for m in re.finditer(r"(\S+ \S+) \[crawler.extensions\] INFO: progress "
                                 r".*?fetched=(\d+)", log)]  # fmt: skip


def fetched_rate(logs: list[str], start: float, end: float) -> float:
    """Pages per second fetched by all workers between two epoch times (from the progress
    lines: the store writes in batches, so its count jumps)."""
    total = 0
    for log in logs:
        inside = [n for t, n in progress(log) if start <= t <= end]
        total += inside[-1] - inside[0] if inside else 0
    return total / max(end - start, 1e-9)


def last_fetch(logs: list[str]) -> float:
    """Epoch time of the last progress line that shows a new page (the budget spent)."""
    return max(t for log in logs for (_, n), (t, m) in pairwise(progress(log)) if m > n)


def worker_fetched(log: Path) -> int:
    """Pages fetched so far by the worker writing ``log`` (its last progress line)."""
    found = re.findall(r"INFO: progress .*?fetched=(\d+)", log.read_text(errors="replace"))
    return int(found[-1]) if found else 0


def wait_for(what: str, ready: Callable[[], bool], limit: float = 180) -> None:
    """Poll ``ready`` twice a second; fail with ``what`` after ``limit`` seconds."""
    deadline = time.monotonic() + limit
    while not ready():
        assert time.monotonic() < deadline, f"{what} after {limit:.0f} s"
        time.sleep(0.5)


def start_workers(
    logs: list[Path],
    web_url: str,
    seeds: list[str],
    topic: Path,
    pg_url: str,
    *,
    redis_url: str,
    prefix: str,
    args: dict[str, Any],
    settings: dict[str, Any],
) -> list[subprocess.Popen[bytes]]:
    """One ``scrapy crawl topic`` worker per log file, sharing Redis at ``redis_url`` under
    ``prefix``; each starts once the one before has opened its spider (the first makes the
    run)."""
    procs: list[subprocess.Popen[bytes]] = []
    for log in logs:
        cmd, env = crawl_command(web_url, seeds, topic, pg_url, args=args, settings=settings)
        env.update(TOPICRAWL_REDIS_URL=redis_url, TOPICRAWL_REDIS_PREFIX=prefix)
        with log.open("w") as fh:
            procs.append(subprocess.Popen(cmd, cwd=ROOT, env=env,
                                          stdout=subprocess.DEVNULL, stderr=fh))  # fmt: skip
        wait_for("no spider opened", lambda log=log: "Spider opened" in log.read_text())
    return procs


def stop_all(procs: list[subprocess.Popen[bytes]]) -> None:
    """Kill the workers still running (a failed test)."""
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()


def outage_crawl(small_web: Path, redis_url: str, tmp_path: Path,
                 **settings: Any) -> tuple[list[str], TcpProxy, str, str, dict[str, Any]]:
    """What a Redis outage test's workers share: the portal seeds of ``small_web``, a proxy
    to Redis (cut by the test), the Redis URL through it, a unique key prefix and the crawl
    settings (keyword link scoring, the dedup index in Redis through the proxy, one request
    a host, a progress line a second in the log, spill files in ``tmp_path``), updated with
    ``settings``."""
    truth = json.loads((small_web / "ground_truth.json").read_text(encoding="utf-8"))
    proxy = TcpProxy(int(re.search(r":(\d+)/", redis_url).group(1)))
    via_proxy = proxy.url(redis_url)
    prefix = f"topicrawl_test_{uuid.uuid4().hex[:8]}"
    backend = json.dumps({"type": "redis", "url": via_proxy, "namespace": f"{prefix}:dedup"})
    base = {
        "TOPICRAWL_LINK_SCORER": "relevance.linkscore.KeywordLinkScorer",
        "TOPICRAWL_DEDUP_BACKEND": backend,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
        "TOPICRAWL_PROGRESS_INTERVAL": 1,  # the log's progress lines: each worker's pages
        "TOPICRAWL_PROGRESS_SNAPSHOTS": False,
        "TOPICRAWL_SPILL_DIR": str(tmp_path / "spill"),
    }
    return truth["seeds"]["portal"], proxy, via_proxy, prefix, {**base, **settings}
