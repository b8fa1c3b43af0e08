"""Discovery benchmark: a crawl seeded with one home page, with and without sitemaps and feeds.

    python bench/discovery.py [--category 时政] [--topic topics/shizheng.toml]
                              [--orphans 0.3] [--seed 0] [--family a] [--scale large]
                              [--webs domain,portal] [--modes links,discover]
                              [--set KEY=VALUE ...] [--tag NAME]
                              [--write docs/benchmarks/discovery.md]

Builds the local test web (``sitegen``, family a) **with** sitemaps and feeds, PDF/DOCX
documents and a share of orphan articles (``--orphans``: article pages no page links to, only
the sitemaps and feeds list them) into ``bench/out/web_discovery``, and crawls it twice per
web, seeded only with one home page — ``domain``: the category's single-topic site;
``portal``: the first portal (all categories) — once as today and once with
``-a discover=sitemaps,feeds``. Budget as in bench/harvest.py: ``max_pages = 2 × N``, N the
on-topic pages (articles and documents of the category) on that host. Figure: **corpus
recall** (``sitegen.evaluate.corpus_score``: share of the on-topic articles of that host, an
original and its copies counted once, that have a corpus document) and precision; and
**reached**: the same share over the fetched pages (what discovery decides; the corpus adds
the page-relevance and dedup decisions).

``--set`` passes Scrapy settings to every crawl (an A/B arm, e.g. ``--set
TOPICRAWL_SITEMAP_INTERLEAVE=False`` for the sitemaps' own order); ``--tag`` names its databases
(``bench/out/discovery-<web>-<mode>[-tag].db``) and ``--family``/``--seed`` pick the web
(``bench/out/web_discovery`` for family a seed 0, ``web_discovery_<family><seed>`` else), so
arms and webs can run side by side.

Nothing here was tuned: the crawl runs with the product's defaults and the topic file as
shipped; the web (seed, orphan share) is the benchmark's choice, stated in the output.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from models.store import Store  # noqa: E402
from sitegen.build import build_web, topic_targets  # noqa: E402
from sitegen.evaluate import corpus_score  # noqa: E402
from sitegen.server import ServerProcess, crawl_command  # noqa: E402

OUT = ROOT / "bench" / "out"


def crawl(proxy: str, seed: str, topic: str, budget: int, db: Path, discover: str | None,
          extra: dict[str, object] | None = None) -> float:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    args: dict[str, object] = {"max_pages": budget}
    if discover:
        args["discover"] = discover
    settings = {"TOPICRAWL_DB_URL": f"sqlite:///{db}", "AUTOTHROTTLE_ENABLED": False,
                "DOWNLOAD_DELAY": 0, "CONCURRENT_REQUESTS_PER_DOMAIN": 4,
                "TOPICRAWL_PROGRESS_INTERVAL": 0, "LOG_FILE": str(db.with_suffix(".log")),
                **(extra or {})}  # fmt: skip
    cmd, env = crawl_command(proxy, [seed], topic, args=args, settings=settings)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"crawl failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--category", default="时政")
    ap.add_argument("--topic", default=str(ROOT / "topics" / "shizheng.toml"))
    ap.add_argument("--orphans", type=float, default=0.3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--family", choices=("a", "b"), default="a")
    ap.add_argument("--scale", default="large")
    ap.add_argument("--webs", default="domain,portal")
    ap.add_argument("--modes", default="links,discover",
                    help="links: seeded with the home page only; discover: with sitemaps,feeds")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="a Scrapy setting for every crawl (repeatable)")
    ap.add_argument("--tag", default="", help="suffix of the crawl databases' names")
    ap.add_argument("--write", type=Path)
    args = ap.parse_args(argv)
    extra = dict(kv.split("=", 1) for kv in args.set)
    modes = [None if m == "links" else "sitemaps,feeds" for m in args.modes.split(",")]
    default_web = (args.family, args.seed) == ("a", 0)
    web = OUT / ("web_discovery" if default_web else f"web_discovery_{args.family}{args.seed}")
    db_stem = "discovery" if default_web else f"discovery-{args.family}{args.seed}"
    tag = f"-{args.tag}" if args.tag else ""
    truth = build_web(web, scale=args.scale, seed=args.seed, discovery=True, family=args.family,
                      orphans=args.orphans, documents=True)  # fmt: skip
    domain = next(s["home"] for s in truth["sites"]
                  if s["kind"] == "domain" and args.category in s["categories"])  # fmt: skip
    homes = {"domain": domain, "portal": truth["seeds"]["portal"][0]}
    rows = []
    with ServerProcess(web) as server:
        for name in args.webs.split(","):
            home = homes[name]
            host = urlsplit(home).hostname
            targets = {u for u in topic_targets(truth, args.category) if urlsplit(u).hostname == host}
            orphaned = len(targets & set(truth["orphans"]))
            budget = 2 * len(targets)
            for discover in modes:
                label = discover or "links only"
                db = OUT / f"{db_stem}-{name}-{'disc' if discover else 'plain'}{tag}.db"
                print(f"crawling {name} ({home}), {label}, budget {budget} ...", flush=True)
                wall = crawl(server.url, home, args.topic, budget, db, discover, extra)
                store = Store.from_url(f"sqlite:///{db}")
                run = store.list_runs()[-1]
                final = {p.url: p.final_url or p.url for p in store.iter_pages(run.id)}
                docs = [final.get(d.url, d.url) for d in store.iter_documents(run.id)]
                reached = corpus_score(truth, args.category, set(final.values()), hosts=[host])
                fetched = store.count_pages(run.id)
                store.close()
                score = corpus_score(truth, args.category, docs, hosts=[host])
                stats = run.stats or {}
                rows.append((name, home, label, len(targets), orphaned, budget, fetched,
                             len(docs), score, stats.get("finish_reason", ""), wall,
                             reached))  # fmt: skip
    lines = [
        f"Web: sitegen family {args.family}, scale {args.scale}, seed {args.seed}, `--discovery "
        f"--documents --orphans {args.orphans}`; category {args.category}; topic "
        f"{Path(args.topic).name}" + (f"; settings {extra}" if extra else "") + ".",
        "",
        "| web (seed) | discovery | targets (orphans) | budget | fetched | documents | "
        "reached (fetched) | corpus precision | **corpus recall** | finish | wall s |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, home, label, n, orph, budget, fetched, ndocs, sc, reason, wall, reach in rows:
        lines.append(
            f"| {name} ({home}) | {label} | {n} ({orph}) | {budget} | {fetched} | {ndocs} | "
            f"{reach.recall:.3f} ({reach.found}/{reach.articles}) | {sc.precision:.3f} | "
            f"**{sc.recall:.3f}** ({sc.found}/{sc.articles}) | {reason} | {wall:.0f} |"
        )
    text = "\n".join(lines)
    print(text)
    if args.write:
        args.write.write_text(text + "\n", encoding="utf-8")
    (OUT / f"discovery-{args.family}{args.seed}{tag}.json").write_text(json.dumps([
        {"web": r[0], "discovery": r[2], "recall": r[8].recall, "precision": r[8].precision,
         "found": r[8].found, "articles": r[8].articles, "reached": r[11].found,
         "fetched": r[6], "finish": r[9]}
        for r in rows], ensure_ascii=False, indent=1), encoding="utf-8")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
