"""Crawl speed of calibrated mode against paper mode, in interleaved pairs (issue 10).

    python bench/crawl_speed.py [--pairs 3] [--family a] [--seed 0] [--category 时政]
                                [--before DIR] [--concurrency 4]

On one web (``sitegen``, the portal seeds, budget 2 × the on-topic pages, ``bench/harvest.py``'s
harness), each round runs ``topics/shizheng.toml`` (paper mode) and the words-only topic of
the category (``bench/out/topics/``, calibrated mode, the default) — and, with ``--before``,
the calibrated crawl once more with the code of another checkout (a ``git worktree`` of the
commit to compare with), so code before and after a change is timed in the same rounds.
The order inside a round rotates, so a load trend does not favour one run. Prints per run
the crawl phase (the spider's ``start_time`` to ``finish_time``), pages/s, harvest over the
first N, corpus precision and recall, and the ratio of pages/s to paper mode's per round and
over the totals, with the load average, and the CPU time of each crawl process; crawls' logs stay in ``bench/out/harvest-runs/``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harvest import (  # noqa: E402
    OUT,
    CrawlSpec,
    RunFigures,
    bench_settings,
    ensure_web,
    measure,
)
from bench.topicfiles import CATEGORIES  # noqa: E402
from relevance.topic import load_topic  # noqa: E402
from sitegen.build import topic_targets  # noqa: E402
from sitegen.server import ServerProcess, crawl_command  # noqa: E402


def run_crawl(spec: CrawlSpec, code: Path, seeds: list[str], budget: int, proxy: str,
              concurrency: int, run_dir: Path, name: str) -> tuple[Path, float, float]:  # fmt: skip
    """One ``scrapy crawl topic`` with the code of ``code`` (its working directory comes
    first on ``sys.path``); returns its database, wall time and CPU time (user + system, of
    the whole process: less sensitive than wall time to the load of a shared machine)."""
    db = run_dir / f"{name}.db"
    settings = {**bench_settings(db, concurrency, run_dir / f"{name}.log"), **spec.settings}
    cmd, env = crawl_command(proxy, seeds, spec.topic, args={"max_pages": budget},
                             settings=settings)  # fmt: skip
    t0, r0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, cwd=code, env=env, capture_output=True, text=True, check=False)
    wall, r1 = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    if proc.returncode != 0 or not db.exists():
        raise RuntimeError(f"crawl {name} failed ({proc.returncode})\n{proc.stderr[-2000:]}")
    return db, wall, cpu


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--family", choices=("a", "b"), default="a")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--category", default="时政", choices=CATEGORIES)
    ap.add_argument("--paper-topic", default=str(ROOT / "topics" / "shizheng.toml"))
    ap.add_argument("--before", type=Path, help="a checkout whose calibrated crawl is also timed")
    ap.add_argument("--concurrency", type=int, default=4)
    args = ap.parse_args(argv)

    from bench.topics import topic_paths

    words_only = str(topic_paths()[args.category])
    web_dir = OUT / "web_large"
    if args.family != "a":
        web_dir = web_dir.with_name(f"{web_dir.name}_{args.family}")
    truth = ensure_web(web_dir, args.seed, False, family=args.family)
    seeds = truth["seeds"]["portal"]
    hosts = {urlsplit(s).hostname for s in seeds}
    targets = {u for u in topic_targets(truth, args.category) if urlsplit(u).hostname in hosts}
    budget = 2 * len(targets)
    runs: list[tuple[str, CrawlSpec, Path]] = [
        ("paper", CrawlSpec("paper", args.paper_topic), ROOT),
        ("calibrated", CrawlSpec("calibrated", words_only), ROOT),
    ]
    if args.before is not None:
        runs.append(("calibrated-before", CrawlSpec("calibrated", words_only),
                     args.before.resolve()))  # fmt: skip
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
    run_dir = OUT / "harvest-runs" / f"speed-{stamp}-{os.getpid()}"
    run_dir.mkdir(parents=True, exist_ok=True)
    print(f"web family {args.family} seed {args.seed}, portal, budget {budget}, "
          f"load {os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip
    results: dict[str, list[RunFigures]] = {label: [] for label, _, _ in runs}
    cpus: dict[str, list[float]] = {label: [] for label, _, _ in runs}
    with ServerProcess(web_dir) as proxy:
        for r in range(args.pairs):
            order = runs[r % len(runs) :] + runs[: r % len(runs)]
            for label, spec, code in order:
                db, wall, cpu = run_crawl(spec, code, seeds, budget, proxy.url, args.concurrency,
                                     run_dir, f"{label}-{r}")  # fmt: skip
                fig = measure(db, wall, web="portal", label=label, truth=truth,
                              category=args.category, targets=targets, budget=budget,
                              page_threshold=load_topic(spec.topic).page_threshold,
                              single_topic_hosts=set())  # fmt: skip
                results[label].append(fig)
                cpus[label].append(cpu)
                print(f"round {r + 1} {label:18s} crawl {fig.crawl_s:6.1f} s  "
                      f"{fig.fetched / fig.crawl_s:5.2f} pages/s  wall {wall:6.1f} s  cpu {cpu:5.1f} s  "
                      f"harvest@N {fig.harvest_first_n:.3f}  precision "
                      f"{fig.corpus_precision:.3f}  recall {fig.corpus_recall:.3f}  "
                      f"load {os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip
    paper = results["paper"]
    for label, figs in results.items():
        rate = sum(f.fetched for f in figs) / sum(f.crawl_s for f in figs)
        ratios = [
            (f.fetched / f.crawl_s) / (p.fetched / p.crawl_s)
            for f, p in zip(figs, paper, strict=True)
        ]
        print(f"{label:18s} {rate:5.2f} pages/s over {len(figs)} crawls; × paper: "
              f"{rate / (sum(p.fetched for p in paper) / sum(p.crawl_s for p in paper)):.2f} "
              f"(rounds {', '.join(f'{x:.2f}' for x in ratios)}); process CPU "
              f"{sum(cpus[label]) / len(figs):.1f} s a crawl, "
              f"{1000 * sum(cpus[label]) / sum(f.fetched for f in figs):.0f} ms a page")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
