"""Scale-out throughput: 1, 2, 4 and 8 worker processes on one Redis frontier (scrapy-redis)
and one PostgreSQL database, crawling the large local web served with a per-request latency
(so that, as on the real web, a worker waits on the network rather than on its CPU).

    python bench/scale.py [--workers 1,2,4,8] [--pages 800] [--latency-ms 200]
                          [--concurrency 2] [--topic topics/shizheng.toml] [--bloom]
                          [--sharing off,on]

Each worker count crawls the same seeds with the same shared page budget (``max_pages``,
one Redis counter), into a fresh PostgreSQL database and a fresh Redis key prefix. Reported:

- pages/s: pages fetched (PostgreSQL ``fetched_at``) inside the window where every worker
  was crawling (from the last worker's "Spider opened" to the first worker's "Closing
  spider"), divided by the window; start-up is outside it (the workers start one after the
  other on a 2-core machine, see bench/startup.py for start-up itself);
- the corpus: precision and recall of the accepted documents against the web's ground truth
  (the topic's category), so that more workers are seen to collect the same corpus;
- CPU seconds of the workers, of the PostgreSQL backends of the crawl's database, and of the
  Redis server (the whole server: it is shared with whatever else runs on the machine).

``--sharing off,on`` runs every worker count twice, side by side: without and with the
shared URL sample and learned models (``TOPICRAWL_SHARED_LEARNING``, crawler.sharedlearn).

Every process is ``nice``d. Target (issue 16): 4 workers ≥ 3.5× one worker.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.harvest import OUT, ensure_web  # noqa: E402
from sitegen.build import topic_targets  # noqa: E402
from sitegen.server import ServerProcess, crawl_command  # noqa: E402

PG_ADMIN = os.environ.get("TOPICRAWL_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")
REDIS = os.environ.get("TOPICRAWL_TEST_REDIS", "redis://127.0.0.1:6379/0")
_TS = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)")


def proc_cpu(pid: int) -> float:
    """utime + stime seconds of a process (0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class PgCpu(threading.Thread):
    """Samples the CPU time of the PostgreSQL backends serving database ``name``."""

    def __init__(self, name: str):
        super().__init__(daemon=True)
        self.name, self.seen, self.stop = name, {}, threading.Event()

    def run(self) -> None:
        import psycopg

        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            while not self.stop.is_set():
                rows = conn.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s",
                                    (self.name,)).fetchall()  # fmt: skip
                for (pid,) in rows:
                    self.seen[pid] = max(self.seen.get(pid, 0.0), proc_cpu(pid))
                time.sleep(0.5)

    def total(self) -> float:
        return sum(self.seen.values())


def redis_pid(client) -> int:
    return int(client.info("server")["process_id"])


def log_time(log: str, marker: str, last: bool = False) -> dt.datetime | None:
    found = None
    for line in log.splitlines():
        if marker in line and (m := _TS.match(line)):
            found = dt.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S")
            if not last:
                break
    return found


def run_workers(n: int, args, web: Path, truth: dict, proxy: str, sharing: bool = True) -> dict:
    import psycopg
    import redis

    from models.store import Store

    db_name = f"topicrawl_scale_{os.getpid()}_{n}_{uuid.uuid4().hex[:4]}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{db_name}"')
    db = f"postgresql+psycopg://{PG_ADMIN.rsplit('/', 1)[0].removeprefix('postgresql://')}/{db_name}"
    Store.from_url(db).close()  # migrated once, before the workers race to do it
    prefix = f"topicrawl_bench_{uuid.uuid4().hex[:8]}"
    client = redis.Redis.from_url(REDIS)
    rpid = redis_pid(client)
    settings = {
        "AUTOTHROTTLE_ENABLED": False, "DOWNLOAD_DELAY": 0,
        "CONCURRENT_REQUESTS": args.concurrency,
        "CONCURRENT_REQUESTS_PER_DOMAIN": args.concurrency,
        "TOPICRAWL_PROGRESS_INTERVAL": 0, "LOG_LEVEL": "INFO",
        "TOPICRAWL_DEDUP_BACKEND": json.dumps({"type": "redis", "url": REDIS,
                                               "namespace": f"{prefix}:dedup"}),
    }  # fmt: skip
    settings["TOPICRAWL_SHARED_LEARNING"] = sharing
    if args.bloom:
        settings.update(TOPICRAWL_SEEN_BLOOM=True, TOPICRAWL_SEEN_BLOOM_CAPACITY=1_000_000)
    pg = PgCpu(db_name)
    pg.start()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    redis_before = proc_cpu(rpid)
    logs, procs = [], []
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for w in range(n):
            cmd, env = crawl_command(proxy, truth["seeds"]["portal"], args.topic,
                                     args={"run_id": 1, "max_pages": args.pages},
                                     settings=settings)  # fmt: skip
            env.update(TOPICRAWL_REDIS_URL=REDIS, TOPICRAWL_REDIS_PREFIX=prefix,
                       TOPICRAWL_DB_URL=db)  # fmt: skip
            log = Path(tmp) / f"w{w}.log"
            logs.append(log)
            procs.append(subprocess.Popen(["nice", *cmd], cwd=ROOT, env=env,
                                          stdout=subprocess.DEVNULL, stderr=log.open("w")))  # fmt: skip
        codes = [p.wait() for p in procs]
        wall = time.perf_counter() - t0
        texts = [log.read_text() for log in logs]
    keep = OUT / "logs" / f"scale-{n}{'' if sharing else '-unshared'}"
    keep.mkdir(parents=True, exist_ok=True)
    for w, text in enumerate(texts):  # for a look at each worker afterwards
        (keep / f"worker{w}.log").write_text(text, encoding="utf-8")
    per_worker = [(int(m.group(1)) if (m := re.search(r"'topicrawl/pages/fetched': (\d+)", t))
                   else 0, (re.search(r"'finish_reason': '(\w+)'", t) or [None, "?"])[1])
                  for t in texts]  # fmt: skip
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    redis_cpu = proc_cpu(rpid) - redis_before
    pg.stop.set()
    pg.join()
    memory = {}
    try:
        for kind in ("requests", "dupefilter", "fetched"):
            key = f"{prefix}:topic:{kind}"
            memory[kind] = int(client.memory_usage(key) or 0)
            memory[f"{kind}_n"] = int(client.zcard(key) if kind == "requests"
                                      else client.scard(key) if client.type(key) == b"set"
                                      else 0)  # fmt: skip
    finally:
        keys = list(client.scan_iter(f"{prefix}*"))
        if keys:
            client.delete(*keys)
    if any(codes):
        raise RuntimeError(f"worker exit codes {codes}: {texts[codes.index(max(codes))][-3000:]}")
    store = Store.from_url(db, migrate=False)
    try:
        pages = list(store.iter_pages(1))
        docs = {d.url for d in store.iter_documents(1)}
    finally:
        store.close()
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        size = conn.execute("SELECT pg_database_size(%s)", (db_name,)).fetchone()[0]
        conn.execute(f'DROP DATABASE IF EXISTS "{db_name}" WITH (FORCE)')
    opened = [log_time(t, "Spider opened") for t in texts]
    closing = [log_time(t, "Closing spider") for t in texts]
    start, end = max(opened), min(closing)
    times = sorted(p.fetched_at.replace(tzinfo=None) for p in pages if p.fetched_at)
    # fetched_at is UTC; the log's clock is local time
    offset = dt.datetime.now() - dt.datetime.now(dt.UTC).replace(tzinfo=None)
    inside = [t for t in times if start <= t + offset <= end]
    window = (end - start).total_seconds()
    targets = topic_targets(truth, args.category)
    on = docs & targets
    return {
        "workers": n,
        "sharing": sharing,
        "per_worker": per_worker,
        "pages": len(pages),
        "window_s": window,
        "window_pages": len(inside),
        "pages_per_s": len(inside) / window if window > 0 else float("nan"),
        "wall_s": wall,
        "all_pages_per_s": len(times) / max(1e-9, (times[-1] - times[0]).total_seconds()),
        "documents": len(docs),
        "precision": len(on) / len(docs) if docs else 0.0,
        # the corpus documents that are not on-topic, with their page relevance (a look at
        # what a worker count accepted that another did not)
        "off_topic": sorted((p.url, round(p.relevance or 0.0, 3)) for p in pages
                            if p.url in docs - targets),  # fmt: skip
        "recall": len(on) / len(targets),
        "worker_cpu_s": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime),
        "pg_cpu_s": pg.total(),
        "redis_cpu_s": redis_cpu,
        "pg_bytes": size,
        "redis_memory": memory,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", default="1,2,4,8")
    ap.add_argument("--pages", type=int, default=800, help="the crawl's page budget")
    ap.add_argument("--latency-ms", type=float, default=200.0)
    ap.add_argument("--concurrency", type=int, default=2, help="concurrent requests a worker")
    ap.add_argument("--topic", default="topics/shizheng.toml")
    ap.add_argument("--category", default="时政")
    ap.add_argument("--bloom", action="store_true", help="seen sets as Bloom filters")
    ap.add_argument("--web", type=Path, default=OUT / "web_large")
    ap.add_argument("--sharing", default="on",
                    help="off,on: each worker count without and with the shared learning")
    args = ap.parse_args(argv)
    truth = ensure_web(args.web, 0, rebuild=False)
    rows = []
    with ServerProcess(args.web, latency_ms=args.latency_ms) as server:
        for n in [int(x) for x in args.workers.split(",")]:
            for share in args.sharing.split(","):
                r = run_workers(n, args, args.web, truth, server.url, share.strip() == "on")
                rows.append(r)
                print(json.dumps(r), flush=True)
    one = {r["sharing"]: r["pages_per_s"] for r in rows if r["workers"] == rows[0]["workers"]}
    print(f"\n{args.pages}-page budget, {args.latency_ms:g} ms a request, {args.concurrency} "
          f"concurrent requests a worker; load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores\n")
    print("| workers | shared learning | pages/s (all workers crawling) | × one worker | window "
          "| corpus precision | corpus recall | worker CPU s | PostgreSQL CPU s | Redis CPU s "
          "(whole server) |\n|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        base = one.get(r["sharing"]) or r["pages_per_s"]
        print(f"| {r['workers']} | {'on' if r['sharing'] else 'off'} | {r['pages_per_s']:.1f} | "
              f"{r['pages_per_s'] / base:.2f}× | "
              f"{r['window_pages']} pages in {r['window_s']:.0f} s | {r['precision']:.3f} | "
              f"{r['recall']:.3f} | {r['worker_cpu_s']:.0f} | {r['pg_cpu_s']:.1f} | "
              f"{r['redis_cpu_s']:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
