"""The console on a large run: how fast the dashboard and the page browser of a 100,000-page run
open (target: the dashboard under 1 s).

Synthetic rows are inserted into a fresh SQLite database (one run of ``--pages`` pages over 200
hosts, ~30 % accepted, ~8 % duplicates over three methods, a progress snapshot every 5 s),
then each page is requested through the ASGI app in-process (``fastapi.testclient``: the full
request, query and template cost, no network). Each figure is the median of ``--repeat``
requests after one warm-up; the first (cold) request is printed too. The same requests run
again after dropping the indexes of migration ``i14_console`` (side by side, same process),
to show what they buy.

    .venv/bin/python bench/dashboard.py [--pages 100000] [--repeat 5] [--db PATH]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
import zlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[0:1] = [str(ROOT)]  # the project's packages, not the scripts beside this one

from fastapi.testclient import TestClient  # noqa: E402
from sqlalchemy import insert, text  # noqa: E402

from console.app import ConsoleConfig, create_app  # noqa: E402
from models.orm import Document, Duplicate, Page, RunSnapshot  # noqa: E402
from models.store import Store  # noqa: E402

TOPIC = 'name = "bench"\n[words]\n"政治" = 1.0\n[page]\nthreshold = 0.3\n'
SENTENCE = "中央政治局召开会议研究部署经济工作，会议强调要坚持稳中求进工作总基调。"
INDEXES = {
    "ix_pages_run_accepted": "pages",
    "ix_pages_run_host": "pages",
    "ix_pages_run_relevance": "pages",
    "ix_duplicates_run_method": "duplicates",
    "ix_pages_run_broken": "pages",
}


def fill(store: Store, pages: int, seed: int = 0) -> int:
    """One run of ``pages`` synthetic pages with documents, duplicates and snapshots."""
    rng = random.Random(seed)
    run = store.start_run("bench", TOPIC, {"seeds": ["http://h0.example/"]})
    t0 = datetime.now(UTC) - timedelta(hours=3)
    html = zlib.compress(("<html><body>" + SENTENCE * 8 + "</body></html>").encode(), 6)
    batch, docs, dups = [], [], []
    next_id = 1
    with store.engine.begin() as conn:
        for i in range(pages):
            accepted = rng.random() < 0.3
            rel = rng.uniform(0.3, 1.0) if accepted else rng.uniform(0.0, 0.45)
            host = f"h{rng.randrange(200)}.example"
            batch.append({
                "id": next_id, "run_id": run, "url": f"http://{host}/news/{i}.html",
                "final_url": None, "host": host, "status": 200,
                "fetched_at": t0 + timedelta(seconds=i * 0.1), "depth": rng.randrange(6),
                "parent_url": f"http://{host}/", "anchor": "新闻", "title": f"标题 {i}",
                "text": SENTENCE * rng.randint(2, 10), "html_z": html,
                "link_score": {"f_info": 0.3, "anchor": 0.2, "struct": 1.0, "p": 0.4},
                "relevance": rel, "accepted": accepted,
            })  # fmt: skip
            if accepted:
                docs.append({"run_id": run, "page_id": next_id, "text": SENTENCE * 3,
                             "meta": {}, "created_at": t0})  # fmt: skip
            elif rng.random() < 0.11 and next_id > 1:
                dups.append({"run_id": run, "page_id": next_id, "original_page_id": next_id - 1,
                             "original_url": f"http://{host}/news/{i - 1}.html",
                             "method": rng.choice(["exact", "spotsigs", "title"]),
                             "score": rng.uniform(0.7, 1.0)})  # fmt: skip
            next_id += 1
            if len(batch) >= 5000:
                conn.execute(insert(Page), batch)
                batch = []
        if batch:
            conn.execute(insert(Page), batch)
        for rows, table in ((docs, Document), (dups, Duplicate)):
            for lo in range(0, len(rows), 5000):
                conn.execute(insert(table), rows[lo : lo + 5000])
        snaps = [{"run_id": run, "worker": "bench:1", "at": t0 + timedelta(seconds=5 * k),
                  "stats": {"fetched": k * 50, "accepted": k * 15, "pages_per_min": 600,
                            "frontier": 1000 + k, "harvest": 0.3, "harvest_window": 0.3,
                            "stats": {"topicrawl/links/followed": k * 200,
                                      "topicrawl/links/dropped": k * 50}}}
                 for k in range(pages // 50)]  # fmt: skip
        conn.execute(insert(RunSnapshot), snaps)
    return run


def timed(client: TestClient, url: str, repeat: int) -> tuple[float, float]:
    """(first request, median of ``repeat`` more) in seconds; every response must be 200."""
    times = []
    for _ in range(repeat + 1):
        start = time.perf_counter()
        r = client.get(url)
        times.append(time.perf_counter() - start)
        assert r.status_code == 200, (url, r.status_code, r.text[:300])
    return times[0], statistics.median(times[1:])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--pages", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--db", type=Path, help="SQLite file to create (default: a temp file)")
    args = ap.parse_args()
    path = args.db or Path(tempfile.mkdtemp(prefix="console-bench-")) / "bench.db"
    path.unlink(missing_ok=True)
    store = Store.from_url(f"sqlite:///{path}")
    t = time.perf_counter()
    run = fill(store, args.pages)
    print(f"{args.pages} pages inserted in {time.perf_counter() - t:.1f} s ({path})")
    with store.engine.begin() as conn:
        conn.execute(text("ANALYZE"))
    topics = path.parent / "topics"
    topics.mkdir(exist_ok=True)
    client = TestClient(create_app(ConsoleConfig(f"sqlite:///{path}", topics, path.parent),
                                   store=store))  # fmt: skip
    deep = args.pages - 500
    urls = {
        "runs list (/)": "/",
        "dashboard (/runs/ID)": f"/runs/{run}",
        "live figures (API)": f"/api/runs/{run}/figures",
        "page browser, first page": f"/runs/{run}/pages",
        "page browser, accepted after id N-500": f"/runs/{run}/pages?kind=accepted&after={deep}",
        "page browser, one host": f"/runs/{run}/pages?host=h17.example",
        "page browser, duplicates": f"/runs/{run}/pages?kind=duplicate",
        "page detail": f"/runs/{run}/pages/{args.pages // 2}",
    }
    results = {}
    for phase in ("with indexes", "without the i14 indexes"):
        if phase.startswith("without"):
            with store.engine.begin() as conn:
                for name in INDEXES:
                    conn.execute(text(f"DROP INDEX {name}"))
                conn.execute(text("ANALYZE"))
        for label, url in urls.items():
            results[(phase, label)] = timed(client, url, args.repeat)
    print(f"\n{'request':40s} {'first':>8s} {'median':>8s} {'no-index median':>16s} {'ratio':>6s}")
    for label in urls:
        first, med = results[("with indexes", label)]
        _, slow = results[("without the i14 indexes", label)]
        print(f"{label:40s} {first:7.3f}s {med:7.3f}s {slow:15.3f}s {slow / med:6.1f}")
    ok = results[("with indexes", "dashboard (/runs/ID)")][1] < 1.0
    print(f"\ndashboard of a {args.pages}-page run under 1 s: {'yes' if ok else 'NO'}")


if __name__ == "__main__":
    main()
