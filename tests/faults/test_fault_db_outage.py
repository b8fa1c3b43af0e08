"""A lasting PostgreSQL outage through a proxy the test cuts (issue 11, item 3).

The crawl (a subprocess, an endless local web with nothing hostile) writes to PostgreSQL
through :class:`tcpproxy.TcpProxy`; a few seconds in, the proxy is cut for good. The crawl
must go on fetching (pages wait in memory, then in the spool, then the engine pauses), end
at its time limit, exit 6 (``pages_spilled``) naming ``import-spill``; after the import,
every page the crawl fetched is stored once and the run is marked finished. The figures (pages/s before and during the
outage) are printed, never asserted: they are the benchmark's (docs/benchmarks).
"""

from __future__ import annotations

import datetime as dt
import re
import subprocess
import sys
import time
from pathlib import Path

import psycopg
from tcpproxy import TcpProxy

from models.store import Store
from sitegen.hostile import HOST, HostileServerProcess

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 60  # CLOSESPIDER_TIMEOUT of the crawl, seconds
BOUND = 150  # pages waiting (memory + spool) before the engine pauses
NORMAL = 12  # seconds of normal crawling measured before the cut


def stamp(line_start: str) -> float:
    """Epoch seconds of a Scrapy log line's ``YYYY-MM-DD HH:MM:SS`` (local time)."""
    return dt.datetime.strptime(line_start, "%Y-%m-%d %H:%M:%S").timestamp()


def progress(log: str) -> list[tuple[float, int, int]]:
    """``(epoch seconds, fetched, waiting)`` of every progress line."""
    return [(stamp(m.group(1)), int(m.group(2)), int(m.group(3))) for m in re.finditer(
        r"(\S+ \S+) \[crawler.extensions\] INFO: progress .*?fetched=(\d+).*?"
        r"storage_waiting=(\d+)", log)]  # fmt: skip


def rate(rows: list[tuple[float, int, int]]) -> float:
    """Pages per second between the first and the last row."""
    return (rows[-1][1] - rows[0][1]) / max(rows[-1][0] - rows[0][0], 1) if len(rows) > 1 else 0.0


def test_lasting_database_outage_keeps_crawling_and_spills(tmp_path, pg_url, politics_topic):
    port = int(re.search(r":(\d+)/", pg_url).group(1))
    proxy = TcpProxy(port)
    url = proxy.url(pg_url)
    Store.from_url(pg_url).close()  # the schema, made before the outage
    # --distinct: two articles in three are new text, so the trap guard never bounds the
    # articles' path shape; without it the endless web repeats the corpus's 598 texts, and a
    # fast crawl (a quiet machine) exhausted them before the cut, its frontier then ran dry
    with HostileServerProcess("--endless", "--plain", "--distinct") as web:
        cmd = [sys.executable, "-m", "scrapy", "crawl", "topic", "-a", f"seeds=http://{HOST}/",
               "-a", f"topic={politics_topic}"]  # fmt: skip
        settings = {
            "TOPICRAWL_DB_URL": url, "CLOSESPIDER_TIMEOUT": LIMIT, "AUTOTHROTTLE_ENABLED": False,
            "DOWNLOAD_DELAY": 0, "CONCURRENT_REQUESTS_PER_DOMAIN": 8,
            "TOPICRAWL_PROGRESS_INTERVAL": 1, "TOPICRAWL_PROGRESS_SNAPSHOTS": False,
            "LOG_LEVEL": "INFO", "TOPICRAWL_DB_BATCH": 10, "TOPICRAWL_DB_RETRY_SECONDS": 2,
            "TOPICRAWL_STORE_MEMORY_PAGES": BOUND // 3, "TOPICRAWL_STORE_SPOOL_PAGES": BOUND - BOUND // 3,
            "TOPICRAWL_SPILL_DIR": str(tmp_path / "spill"),
        }  # fmt: skip
        for k, v in settings.items():
            cmd += ["-s", f"{k}={v}"]
        env = {"PATH": "/usr/bin:/bin", "http_proxy": web.url, "no_proxy": "",
               "HOME": str(tmp_path)}  # fmt: skip
        log_path = tmp_path / "crawl.log"
        with log_path.open("w") as log_fh:
            start = time.monotonic()
            proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log_fh, stderr=subprocess.STDOUT)
            # cut once the crawl has stored pages
            with psycopg.connect(pg_url.replace("+psycopg", ""), autocommit=True) as conn:
                while time.monotonic() - start < 60:
                    if conn.execute("SELECT count(*) FROM pages").fetchone()[0] >= 10:
                        break
                    time.sleep(0.2)
            time.sleep(NORMAL)  # crawling at its normal speed
            cut_wall = time.time()
            proxy.cut()
            code = proc.wait(timeout=LIMIT + 120)
            ended_wall = time.time()
    proxy.close()
    log = log_path.read_text(encoding="utf-8", errors="replace")
    assert code == 6, log[-3000:]
    assert "import-spill" in log and "DATABASE DOWN" not in log  # the log mode: key=value
    assert re.search(r"database_down_s=[1-9]", log), "progress lines name the outage"
    opened = stamp(re.search(r"(\S+ \S+) \[scrapy.core.engine\] INFO: Spider opened", log)[1])
    over = ended_wall - opened - LIMIT  # seconds past the time limit, shutdown included
    assert over < 30, f"ended {over:.0f} s after its time limit"  # not minutes later
    spills = list((tmp_path / "spill").glob("run*.jsonl"))
    assert spills, log[-2000:]
    fetched = int(re.findall(r"'topicrawl/pages/fetched': (\d+)", log)[-1])
    run_id = int(re.findall(r"'topicrawl/run_id': (\d+)", log)[-1])
    imported = subprocess.run([str(Path(sys.executable).parent / "topicrawl"), "import-spill", *map(str, spills),
                               "--db", pg_url], cwd=ROOT, capture_output=True, text=True)  # fmt: skip
    assert imported.returncode == 0, imported.stderr
    store = Store.from_url(pg_url)
    pages = [p.url for p in store.iter_pages(run_id)]
    assert len(pages) == len(set(pages)) == fetched, "zero lost, zero doubled"
    run = store.get_run(run_id)  # the end record came with the spilled pages
    assert run.finished_at is not None and run.stats["finish_reason"] == "pages_spilled"
    assert run.stats["topicrawl/pages/fetched"] == fetched
    rows = progress(log)
    normal = [r for r in rows if cut_wall - NORMAL <= r[0] <= cut_wall]
    outage = [r for r in rows if r[0] >= cut_wall]
    until_bound = [r for r in outage if r[2] < BOUND] + [r for r in outage if r[2] >= BOUND][:1]
    closed = stamp(re.search(r"(\S+ \S+) \[scrapy.core.engine\] INFO: Spider closed", log)[1])
    print(f"\nspider closed {closed - opened - LIMIT:+.0f} s from the limit, process exit "
          f"{ended_wall - closed:.1f} s later")
    print(f"pages/s: normal {rate(normal):.1f}, database down (until the bound of {BOUND} "
          f"pages) {rate(until_bound):.1f}; ended {over:+.1f} s from the time limit "
          f"({LIMIT} s); {fetched} pages fetched, all stored once after import-spill")
