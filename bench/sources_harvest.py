"""Do the new similarity sources help the crawl? (issue 12) The cross-topic harvest of
issue 10's words-only topics in the paper's mode, HowNet alone against HowNet + Cilin +
fastText vectors (Algorithm 1 over the hybrid), side by side in one run.

    python bench/sources_harvest.py --vectors .cache/vectors/zh_news_ft.kv \
        [--family b] [--seeds 0] [--categories 体育,...] [--write FILE]

Each category's topic file is the words-only file of :mod:`bench.topicfiles` (never tuned on
a web) with ``[priority] mode = "paper"`` and the sources of the variant; the calibrated
default, which uses no word similarity, runs beside them for reference. Crawls are those of
``bench/topics.py crawl`` (the portal web, budget 2 × the on-topic pages).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import statistics
import sys
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.topicfiles import CATEGORIES  # noqa: E402
from bench.topics import OUT, ensure_web, parse_seeds, topic_paths  # noqa: E402

VARIANTS = ("calibrated", "paper-hownet", "paper-hybrid+vectors")


def variant_topic(base: Path, variant: str, vectors: Path, out: Path) -> Path:
    """The words-only topic file ``base`` with the variant's mode and sources."""
    text = base.read_text(encoding="utf-8")
    if variant == "paper-hownet":
        text += '\n[priority]\nmode = "paper"\n\n[similarity]\nsources = ["hownet"]\n'
    elif variant == "paper-hybrid+vectors":
        text += (
            '\n[priority]\nmode = "paper"\n\n[similarity]\n'
            'sources = ["hownet", "cilin", "word2vec"]\n'
            f'vectors = "{vectors.resolve()}"\n'
        )
    path = out / f"{base.stem}-{variant}.toml"
    path.write_text(text, encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    from dataclasses import asdict

    from bench.harvest import CrawlSpec, measure, run_crawl
    from relevance.topic import load_topic
    from sitegen.build import topic_targets
    from sitegen.server import ServerProcess

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vectors", type=Path, required=True)
    ap.add_argument("--family", default="b")
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--categories", default="")
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--write", type=Path)
    args = ap.parse_args(argv)
    if not args.vectors.exists():
        ap.error(f"{args.vectors} not found (make it with `topicrawl vectors train`)")
    cats = args.categories.split(",") if args.categories else list(CATEGORIES)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
    run_dir = OUT / "sources-runs" / f"{stamp}-{os.getpid()}"
    run_dir.mkdir(parents=True, exist_ok=True)
    bases = topic_paths()
    rows: list[dict] = []
    for seed in parse_seeds(args.seeds):
        out, truth = ensure_web(args.family, seed)
        seeds = truth["seeds"]["portal"]
        hosts = {urlsplit(s).hostname for s in seeds}
        with ServerProcess(out) as proxy:
            for cat in cats:
                targets = {u for u in topic_targets(truth, cat) if urlsplit(u).hostname in hosts}
                budget = 2 * len(targets)
                for variant in VARIANTS:
                    topic = variant_topic(bases[cat], variant, args.vectors, run_dir)
                    label = f"{args.family}{seed}-{CATEGORIES[cat][0]}-{variant}"
                    db, wall = run_crawl(CrawlSpec(label, str(topic)), label, seeds, budget,
                                         proxy.url, args.concurrency, cat, run_dir,
                                         out / "ground_truth.json")  # fmt: skip
                    figs = measure(db, wall, web="portal", label=variant, truth=truth,
                                   category=cat, targets=targets, budget=budget,
                                   page_threshold=load_topic(topic).page_threshold,
                                   single_topic_hosts=set())  # fmt: skip
                    r = {"seed": seed, "category": cat, "variant": variant, **asdict(figs)}
                    rows.append(r)
                    print(f"{args.family}{seed} {cat} {variant:<21} hvN {r['harvest_first_n']:.3f}"
                          f" P {r['corpus_precision']:.3f} R {r['corpus_recall']:.3f}",
                          flush=True)  # fmt: skip
    lines = [f"Family {args.family}, seeds {args.seeds}, portal web, budget 2 × on-topic pages; "
             "cells: harvest over the first N / corpus precision / corpus recall", "",
             "| category | " + " | ".join(VARIANTS) + " |", "|---|" + "---|" * len(VARIANTS)]  # fmt: skip
    keys = ("harvest_first_n", "corpus_precision", "corpus_recall")
    for cat in cats:
        cells = []
        for v in VARIANTS:
            xs = [r for r in rows if r["category"] == cat and r["variant"] == v]
            cells.append(" / ".join(f"{statistics.mean(x[k] for x in xs):.3f}" for k in keys))
        lines.append(f"| {cat} | " + " | ".join(cells) + " |")
    means = []
    for v in VARIANTS:
        xs = [r for r in rows if r["variant"] == v]
        means.append(" / ".join(f"{statistics.mean(x[k] for x in xs):.3f}" for k in keys))
    lines.append("| **mean** | " + " | ".join(means) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        args.write.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
