"""Start-up time of a crawl: building a topic's scorer with a cold and a warm model cache.

Each measurement is a fresh Python process (``nice``d) that imports the spider module, loads
the topic and builds its link scorer (what ``TopicSpider.from_crawler`` does before the first
request). "cold": an empty cache directory (``TOPICRAWL_CACHE``): HowNet is parsed, jieba's
tag table read, the classifier trained, the example texts segmented. "warm": the same
directory again, nothing changed. "to the scorer built" is the time from the process's
launch to its scorer built, what a crawl's first request waits for; the whole process
also counts its exit. (Calibrated mode no longer imports scikit-learn: its page model is fitted
by :mod:`relevance.learning.logistic`.) With ``--crawl WEB`` also the wall time of a whole
``scrapy crawl topic -a max_pages=1`` on a local test web (warm cache).

    python bench/startup.py [--repeats 3] [--crawl bench/out/web_large]

Wall times on a shared machine follow its load; the CPU seconds of the build (process time)
are the steadier figure. Targets (issue 16): warm < 1 s, cold < 15 s, for a topic with a
classifier.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PROBE = r"""
import json, sys, time
t0 = time.perf_counter()
import crawler.spiders.topic  # noqa: F401  (Scrapy, the spider, its imports)
from relevance.priority import build_scorer
from relevance.topic import load_topic
from topicrawl import modelcache
t1, c1 = time.perf_counter(), time.process_time()
topic = load_topic(sys.argv[1])
scorer = build_scorer(topic)
t2, c2 = time.perf_counter(), time.process_time()
print(json.dumps({"imports": t1 - t0, "scorer": t2 - t1, "scorer_cpu": c2 - c1,
                  "process_cpu": c2, "cache": modelcache.STATS, "ready_at": time.time()}),
      flush=True)
"""


def calibrated_variant(src: Path, out: Path) -> Path:
    """``src`` with ``[priority] mode = "calibrated"`` (the default mode; its [classifier]
    examples then seed the self-trained page model)."""
    from relevance.topicedit import set_value

    text = set_value(src.read_text(encoding="utf-8"), "priority.mode", "calibrated", path=src)
    out.write_text(text, encoding="utf-8")
    return out


def probe(topic: Path, cache: Path) -> dict:
    env = {**os.environ, "TOPICRAWL_CACHE": str(cache)}
    env.pop("TOPICRAWL_NO_CACHE", None)
    t0, start = time.perf_counter(), time.time()
    proc = subprocess.run(["nice", sys.executable, "-c", PROBE, str(topic)], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=False)  # fmt: skip
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["process"] = wall
    # from the process's launch to its scorer built (what the first request waits for);
    # "process" also counts the exit, which waits for background imports (scikit-learn)
    out["ready"] = out["ready_at"] - start
    return out


def crawl_once(web: Path, topic: Path, cache: Path) -> float:
    from sitegen.server import ServerProcess, crawl_command

    truth = json.loads((web / "ground_truth.json").read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp, ServerProcess(web) as proxy:
        settings = {"TOPICRAWL_DB_URL": f"sqlite:///{tmp}/c.db", "LOG_LEVEL": "WARNING",
                    "TOPICRAWL_CACHE_DIR": str(cache)}  # fmt: skip
        cmd, env = crawl_command(proxy.url, truth["seeds"]["portal"][:1], topic,
                                 args={"max_pages": 1}, settings=settings)  # fmt: skip
        t0 = time.perf_counter()
        proc = subprocess.run(["nice", *cmd], cwd=ROOT, env=env, capture_output=True,
                              text=True, check=False)  # fmt: skip
        wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    return wall


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--topic", type=Path, default=ROOT / "topics" / "shizheng.toml")
    ap.add_argument("--repeats", type=int, default=3, help="warm runs (median reported)")
    ap.add_argument("--crawl", type=Path, help="a sitegen web: also time a 1-page crawl")
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        topics = {
            f"{args.topic.name} (paper mode)": args.topic,
            f"{args.topic.name} as calibrated": calibrated_variant(
                args.topic, args.topic.with_name(f".{args.topic.stem}.calibrated.toml")
            ),
        }
        try:
            for name, topic in topics.items():
                cache = Path(tmp) / name.replace(" ", "_")
                cold = probe(topic, cache)
                warm = [probe(topic, cache) for _ in range(args.repeats)]
                rows.append((name, cold, warm))
                crawl = None
                if args.crawl:
                    crawl = crawl_once(args.crawl, topic, cache)
                med = statistics.median(w["scorer"] for w in warm)
                cpu = statistics.median(w["scorer_cpu"] for w in warm)
                print(f"{name}: scorer cold {cold['scorer']:.2f} s ({cold['scorer_cpu']:.2f} s "
                      f"CPU), warm {med:.2f} s (min {min(w['scorer'] for w in warm):.2f}; "
                      f"{cpu:.2f} s CPU); whole process cold "
                      f"{cold['process']:.2f} s, warm "
                      f"{statistics.median(w['process'] for w in warm):.2f} s, of which "
                      f"{statistics.median(w['ready'] for w in warm):.2f} s to the scorer "
                      f"built (imports "
                      f"{statistics.median(w['imports'] for w in warm):.2f} s); cache "
                      f"{warm[-1]['cache']}"
                      + (f"; 1-page crawl (warm) {crawl:.2f} s wall" if crawl else ""))  # fmt: skip
        finally:
            for topic in topics.values():
                if topic.name.startswith("."):
                    topic.unlink(missing_ok=True)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
