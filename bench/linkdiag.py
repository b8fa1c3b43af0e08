"""Where a crawl's budget goes (issue 10, the link-ordering side).

    python bench/linkdiag.py --family b --seeds 1 [--categories 体育,...] [--runs topicrawl,keyword]
                             [--results STEM]

For the latest crawl databases of ``bench/topics.py crawl`` (bench/out/topics-runs), per
category and run:

* the budget split: the share of fetches on on-topic articles, off-topic articles, list
  pages of the category's own section ("own lists"), other list and home pages, and
  anything else (notices, redirects, errors);
* the on-topic articles of the web never fetched within the budget: not discovered (no
  fetched page links to them) or discovered and left in the frontier, with the best anchor
  evidence P_lit(anchor) of the links found to them and the relevance of the best page
  holding one;
* the link scores of the fetched links by outcome (the stored ``link_score`` breakdown);
* the harvest curve against the keyword run's (first and second half of the budget).

The web's link graph is parsed once from its files (cached as ``links.json`` in the web's
directory), with the spider's own link extraction (:mod:`crawler.pagelinks`).
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics
import sys
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.topicfiles import CATEGORIES  # noqa: E402
from bench.topics import crawl_dbs, ensure_web, parse_seeds, stored_pages, topic_paths  # noqa: E402


def web_links(family: str, seed: int) -> dict[str, list[tuple[str, str]]]:
    """url -> [(target, anchor)] of every HTML page of a web (cached)."""
    from scrapy.http import HtmlResponse

    from crawler.pagelinks import link_extractor, page_links

    out, truth = ensure_web(family, seed)
    cache = out / "links.json"
    if cache.exists():
        return {k: [tuple(x) for x in v] for k, v in json.loads(cache.read_text("utf-8")).items()}
    responses = json.loads((out / "responses.json").read_text(encoding="utf-8"))
    ex = link_extractor()
    graph = {}
    for url, r in responses.items():
        if "file" not in r or "html" not in r.get("content_type", "text/html"):
            continue
        body = (out / r["file"]).read_bytes()
        ctype = r.get("content_type", "text/html")
        enc = ctype.split("charset=", 1)[1].strip() if "charset=" in ctype else None
        try:
            resp = HtmlResponse(url=url, body=body, encoding=enc or "utf-8")
            graph[url] = page_links(resp, ex)
        except Exception:  # noqa: BLE001 - a page the spider could not parse either
            continue
    cache.write_text(json.dumps(graph, ensure_ascii=False), "utf-8")
    return graph


def kind_of(truth: dict, url: str, category: str) -> str:
    p = truth["pages"].get(url)
    if p is None:
        return "other"
    if p["kind"] == "article":
        return "on-article" if p["category"] == category else "off-article"
    if p["kind"] in ("list", "home"):
        return "own-list" if p.get("section_category") == category else "other-list"
    return "other"


def fetched_pages(db: Path) -> list[dict]:
    """Each fetched page's URL, final URL, relevance and link score, in fetch order."""
    return stored_pages(db, lambda p: {
        "url": p.url, "final": p.final_url or p.url, "rel": p.relevance or 0.0,
        "ls": p.link_score or {}})


KINDS = ("on-article", "off-article", "own-list", "other-list", "other")


def diagnose(family: str, seed: int, cat: str, run: str, db: Path, evidence) -> dict:
    from sitegen.build import topic_targets

    _, truth = ensure_web(family, seed)
    graph = web_links(family, seed)
    hosts = {urlsplit(s).hostname for s in truth["seeds"]["portal"]}
    targets = {u for u in topic_targets(truth, cat) if urlsplit(u).hostname in hosts}
    budget = 2 * len(targets)
    pages = fetched_pages(db)
    seen, order = set(), []
    for p in pages:
        if p["final"] in seen:
            continue
        seen.add(p["final"])
        order.append(p)
    split = collections.Counter(kind_of(truth, p["final"], cat) for p in order)
    fetched_urls = {p["url"] for p in order} | {p["final"] for p in order}
    rel = {p["final"]: p["rel"] for p in order}
    found: dict[str, list[tuple[str, str]]] = collections.defaultdict(list)
    for p in order:
        for t, anchor in graph.get(p["final"], []):
            found[t].append((p["final"], anchor))
    missed = targets - fetched_urls
    undiscovered = {u for u in missed if u not in found}
    discovered = missed - undiscovered
    lits, parents = [], []
    for u in discovered:
        best = max(evidence.anchor_probability(evidence_words(evidence, a)) for _, a in found[u])
        lits.append(best)
        parents.append(max(rel.get(h, 0.0) for h, _ in found[u]))
    # link scores of the fetched pages by outcome
    by = collections.defaultdict(list)
    for p in order:
        ls = p["ls"]
        if "p" in ls:
            by[kind_of(truth, p["final"], cat)].append((ls.get("p", 0), ls.get("anchor_literal", 0),
                                                        ls.get("prior", 0)))  # fmt: skip
    n = len(targets)
    flags = [kind_of(truth, p["final"], cat) == "on-article" for p in order]
    half = budget // 2
    return {
        "seed": seed, "cat": cat, "run": run, "targets": n, "fetched": len(order),
        "split": {k: split.get(k, 0) / max(1, len(order)) for k in KINDS},
        "hv_first_n": sum(flags[:n]) / max(1, min(n, len(flags))),
        "hv_h1": sum(flags[:half]) / max(1, min(half, len(flags))),
        "hv_h2": sum(flags[half:budget]) / max(1, len(flags[half:budget])),
        "missed": len(missed) / max(1, n), "undiscovered": len(undiscovered) / max(1, n),
        "discovered_missed": len(discovered) / max(1, n),
        "missed_lit": statistics.mean(lits) if lits else float("nan"),
        "missed_lit_hi": sum(x >= 0.5 for x in lits) / max(1, n),
        "missed_parent": statistics.mean(parents) if parents else float("nan"),
        "linkp": {k: tuple(round(statistics.mean(v[i] for v in xs), 3) for i in range(3))
                  for k, xs in by.items() if xs},  # fmt: skip
    }


def evidence_words(evidence, text: str) -> list[str]:
    return evidence._ext(text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--family", default="b")
    ap.add_argument("--seeds", default="1")
    ap.add_argument("--categories", default="")
    ap.add_argument("--runs", default="topicrawl,keyword")
    ap.add_argument("--json", type=Path, help="write the rows as JSON")
    args = ap.parse_args(argv)
    from relevance.evidence import LiteralEvidence
    from relevance.topic import load_topic
    from relevance.weights import CandidateExtractor

    cats = args.categories.split(",") if args.categories else list(CATEGORIES)
    rows = []
    for cat in cats:
        topic = load_topic(topic_paths()[cat])
        ext = CandidateExtractor(pos=topic.candidates.pos, topic_words=topic.weights)
        ev = LiteralEvidence(topic.weights, ext)
        ev._ext = ext
        for run in args.runs.split(","):
            dbs = crawl_dbs(args.family, parse_seeds(args.seeds), [cat], run)
            for (seed, _), db in sorted(dbs.items()):
                r = diagnose(args.family, seed, cat, run, db, ev)
                rows.append(r)
                s = r["split"]
                print(f"{args.family}{seed} {cat} {run:<10} N={r['targets']:<3} "
                      f"on {s['on-article']:.2f} off {s['off-article']:.2f} "
                      f"ownlist {s['own-list']:.2f} otherlist {s['other-list']:.2f} "
                      f"other {s['other']:.2f} | hvN {r['hv_first_n']:.2f} h1 {r['hv_h1']:.2f} "
                      f"h2 {r['hv_h2']:.2f} | missed {r['missed']:.2f} (undisc "
                      f"{r['undiscovered']:.2f}, disc {r['discovered_missed']:.2f}: "
                      f"lit {r['missed_lit']:.2f}, lit>=.5 {r['missed_lit_hi']:.2f}, parent "
                      f"{r['missed_parent']:.2f}) | linkp {r['linkp']}", flush=True)  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(rows, ensure_ascii=False), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
