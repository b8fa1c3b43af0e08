"""Soak: a long focused crawl of an endless local web with hostile pages mixed in (issue 11).

    nice python bench/soak.py [--minutes 30] [--topic topics/shizheng.toml]
                              [--write docs/benchmarks/soak.md]

The web is :mod:`sitegen.hostile` in endless mode (news articles of the shared corpus, and
one hostile entry point per five articles: path calendars, endless path variants, a 1 GB
gzip bomb, a redirect loop, answers slower than the timeout, binary as HTML, 20,000 nested
``<div>``, a 200,000-link farm, stray bytes in UTF-8). The crawl is ``scrapy crawl topic``
with a JOBDIR (frontier on disk), SQLite storage and ``CLOSESPIDER_TIMEOUT`` = the soak's
length. Every minute the crawl's resident memory (``/proc/PID/status`` VmRSS), the pages
stored and the frontier (the last progress line) are sampled. At the end: exit status, how
far past the time limit the crawl ended, pages stored / accepted, and pages doubled (a URL
fetched twice: ``downloader/request_count`` against distinct stored URLs is printed, the
database's unique key makes a doubled row impossible). Nothing is asserted.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sitegen.hostile import HOST, HostileServerProcess  # noqa: E402

SMALL_TOPIC = """name = "时政测试"
language = "zh"

[words]
"政治" = 1.0
"中央" = 0.8
"会议" = 0.6
"政府" = 0.8

[page]
threshold = 0.0
"""


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def stored(db: Path) -> tuple[int, int]:
    """(pages, accepted pages) of the SQLite database, 0s when it is not there yet."""
    if not db.exists():
        return 0, 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            n, acc = conn.execute("SELECT count(*), coalesce(sum(accepted), 0) FROM pages").fetchone()
            return int(n), int(acc)
    except sqlite3.Error:
        return 0, 0


def last_frontier(log: Path) -> int | None:
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    found = re.findall(r"progress .*?frontier=(\d+)", text)
    return int(found[-1]) if found else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=30.0)
    ap.add_argument("--topic", help="topic file (default: a small 时政 topic that keeps "
                    "every page, so that the crawl never runs dry)")
    ap.add_argument("--sample-seconds", type=float, default=60.0)
    ap.add_argument("--write", type=Path, help="write the figures (markdown) to this file")
    args = ap.parse_args()
    limit = int(args.minutes * 60)
    work = Path(tempfile.mkdtemp(prefix="topicrawl-soak-"))
    db, log = work / "soak.db", work / "crawl.log"
    if args.topic is None:
        args.topic = str(work / "topic.toml")
        Path(args.topic).write_text(SMALL_TOPIC, encoding="utf-8")
    with HostileServerProcess("--endless", "--slow", "40") as web:
        cmd = [sys.executable, "-m", "scrapy", "crawl", "topic", "-a", f"seeds=http://{HOST}/",
               "-a", f"topic={args.topic}"]  # fmt: skip
        settings = {
            "TOPICRAWL_DB_URL": f"sqlite:///{db}", "JOBDIR": str(work / "job"),
            "CLOSESPIDER_TIMEOUT": limit, "AUTOTHROTTLE_ENABLED": False, "DOWNLOAD_DELAY": 0,
            "CONCURRENT_REQUESTS_PER_DOMAIN": 8, "DOWNLOAD_TIMEOUT": 10,
            "TOPICRAWL_PROGRESS_INTERVAL": 60, "LOG_FILE": str(log), "LOG_LEVEL": "INFO",
            "TOPICRAWL_SUMMARY": False,
        }  # fmt: skip
        for k, v in settings.items():
            cmd += ["-s", f"{k}={v}"]
        env = {**os.environ, "http_proxy": web.url, "HTTP_PROXY": web.url, "no_proxy": "",
               "SCRAPY_SETTINGS_MODULE": "crawler.settings", "PYTHONPATH": str(ROOT)}  # fmt: skip
        env.pop("TOPICRAWL_REDIS_URL", None)
        start = time.monotonic()
        proc = subprocess.Popen(cmd, cwd=work, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)  # fmt: skip
        samples = []
        next_at = start + args.sample_seconds
        while proc.poll() is None:
            time.sleep(1.0)
            if time.monotonic() >= next_at:
                next_at += args.sample_seconds
                pages, acc = stored(db)
                sample = {"minute": round((time.monotonic() - start) / 60, 1),
                          "rss_mb": round(rss_mb(proc.pid)), "pages": pages, "accepted": acc,
                          "frontier": last_frontier(log)}  # fmt: skip
                samples.append(sample)
                print(json.dumps(sample), flush=True)
        elapsed = time.monotonic() - start
    pages, acc = stored(db)
    text = log.read_text(encoding="utf-8", errors="replace")
    stats = {k: int(v) for k, v in re.findall(r"'([a-z_/]+(?:count|/[a-z_]+)?)': (\d+)", text)}
    tracebacks = text.count("Traceback")
    head = [f"Soak of {args.minutes:g} min ({dt.date.today()}, commit "
            f"{_commit()}): `nice python bench/soak.py --minutes {args.minutes:g}`", ""]  # fmt: skip
    rows = ["| minute | RSS MB | pages stored | accepted | frontier |", "|---|---|---|---|---|"]
    rows += [f"| {s['minute']} | {s['rss_mb']} | {s['pages']} | {s['accepted']} | "
             f"{s['frontier'] if s['frontier'] is not None else '-'} |" for s in samples]  # fmt: skip
    tail = [
        "",
        f"- exit status {proc.returncode}; ended {elapsed - limit:+.0f} s from the time limit "
        f"({limit} s, start-up included)",
        f"- pages stored {pages} (accepted {acc}); requests sent "
        f"{stats.get('downloader/request_count', 0)}, responses "
        f"{stats.get('downloader/response_count', 0)}; tracebacks in the log: {tracebacks}",
        "- hostile-page counters: " + ", ".join(
            f"{k} {v}" for k, v in sorted(stats.items())
            if k.startswith(("topicrawl/links/trap", "topicrawl/pages/", "topicrawl/links/capped",
                             "topicrawl/dedup/dropped", "downloader/exception_type_count",
                             "httpcompression", "retry/"))),  # fmt: skip
        f"- work directory (database, log): {work}",
    ]
    report = "\n".join(head + rows + tail) + "\n"
    print(report)
    if args.write:
        args.write.write_text(report, encoding="utf-8")


def _commit() -> str:
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                         text=True, check=False)  # fmt: skip
    return out.stdout.strip() or "?"


if __name__ == "__main__":
    main()
