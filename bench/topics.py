"""Cross-topic benchmark (issue 10): words-only topics of all ten cnews categories.

    python bench/topics.py fit   [--family a] [--seeds 0,1]            # choose the defaults
    python bench/topics.py pages [--family b] [--seeds 0,1,2]          # offline page figures
    python bench/topics.py crawl [--family b] [--seeds 0,1,2] [--categories 体育,...]
                                 [--runs topicrawl,keyword,breadth-first] [--write FILE]

Topic files come from :mod:`bench.topicfiles` (χ² words of the THUCNews headlines, or a
hand-written list for 家居 and 时尚; all weights 1), written into ``bench/out/topics/``.

``fit`` chooses the calibrated literal-evidence coefficients of :mod:`relevance.evidence`
(logistic regression of "an article of the category" on the topic-word counts of every
article and list page, leave-one-category-out) on the webs of the family and seeds given —
family "a" only: the report is on family "b", which the choice never saw.

``pages`` scores every article and list page of each web offline with each topic (page
relevance of the calibrated scorer with its self-trained model trained on the pages of the
web, as at the end of a crawl) and prints precision and recall at the acceptance threshold.

``crawl`` runs real ``scrapy crawl topic`` crawls of the portal web (seeds = the portal home
pages) through ``bench/harvest.py``'s harness, budget 2 × the on-topic pages, for topicrawl
with the defaults and the keyword and breadth-first baselines, and reports per category the
harvest over the first N, corpus precision and recall, with a PNG of the harvest curves.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.topicfiles import CATEGORIES, write_topics  # noqa: E402

OUT = ROOT / "bench" / "out"


# -- webs ------------------------------------------------------------------------------------
def web_dir(family: str, seed: int) -> Path:
    return OUT / f"topics-web-{family}{seed}"


def ensure_web(family: str, seed: int) -> tuple[Path, dict]:
    """Build (once) the large web of a template family and seed; returns (dir, truth)."""
    from sitegen.build import build_web

    out = web_dir(family, seed)
    truth_file = out / "ground_truth.json"
    if truth_file.exists():
        truth = json.loads(truth_file.read_text(encoding="utf-8"))
        if truth.get("seed") == seed and truth.get("family", "a") == family:
            return out, truth
    kwargs = {} if family == "a" else {"family": family}
    return out, build_web(out, scale="large", seed=seed, **kwargs)


def web_pages(family: str, seed: int) -> list[dict]:
    """Every article and list page of a web, extracted as the crawl extracts it (cached in
    the web's directory): url, kind, category, title, description, keywords, text."""
    from crawler.extract import decode_html, extract_page

    out, truth = ensure_web(family, seed)
    cache = out / "pages_extracted.json"
    if cache.exists():
        return json.loads(cache.read_text(encoding="utf-8"))
    responses = json.loads((out / "responses.json").read_text(encoding="utf-8"))
    rows = []
    for url, page in sorted(truth["pages"].items()):
        r = responses.get(url, {})
        if page["kind"] not in ("article", "list", "home") or "file" not in r:
            continue
        ctype = r.get("content_type", "")
        header = ctype.split("charset=", 1)[1].strip() if "charset=" in ctype else None
        html, _ = decode_html((out / r["file"]).read_bytes(), header)
        ex = extract_page(html, url)
        rows.append({"url": url, "kind": page["kind"], "category": page.get("category"),
                     "title": ex.title, "description": ex.description,
                     "keywords": ex.keywords, "text": ex.text})  # fmt: skip
    cache.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    return rows


def topic_paths() -> dict[str, Path]:
    out = OUT / "topics"
    paths = {c: out / f"{stem}.toml" for c, (stem, _) in CATEGORIES.items()}
    if not all(p.exists() for p in paths.values()):
        paths = write_topics(out)
    return paths


def parse_seeds(value: str) -> list[int]:
    return [int(s) for s in value.split(",") if s.strip()]


# -- fit: the literal-evidence coefficients ---------------------------------------------------
def evidence_rows(family: str, seeds: list[int]) -> list[tuple[str, tuple, bool, tuple]]:
    """(category, page features, on-topic, anchor features) for every page x category."""
    from relevance.evidence import LiteralEvidence
    from relevance.topic import load_topic
    from relevance.weights import CandidateExtractor

    rows = []
    paths = topic_paths()
    pages = [p for s in seeds for p in web_pages(family, s)]
    for cat, path in paths.items():
        topic = load_topic(path)
        ext = CandidateExtractor(pos=topic.candidates.pos, topic_words=topic.weights)
        ev = LiteralEvidence(topic.weights, ext)
        for p in pages:
            head = ext(" ".join(x for x in (p["title"], p["description"], p["keywords"]) if x))
            e = ev.page(head, ext(p["text"]))
            on = p["kind"] == "article" and p["category"] == cat
            rows.append((cat, e.features(), on, (min(ev.count(ext(p["title"])), 2.0),)))
    return rows


def cmd_fit(args: argparse.Namespace) -> int:
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    if args.family != "a":
        print("note: defaults are chosen on family a only; fitting on", args.family)
    rows = evidence_rows(args.family, parse_seeds(args.seeds))
    cats = list(CATEGORIES)
    for name, idx in (("page", 1), ("anchor(title)", 3)):
        x = np.asarray([r[idx] for r in rows], dtype=float)
        y = np.asarray([r[2] for r in rows])
        c = np.asarray([r[0] for r in rows])
        print(f"\n{name}: leave-one-category-out, threshold 0.5")
        print(f"{'held out':<6}{'precision':>10}{'recall':>8}   coefficients fitted without it")
        for cat in cats:
            m = LogisticRegression(C=1.0, max_iter=2000).fit(x[c != cat], y[c != cat])
            pred = m.predict_proba(x[c == cat])[:, 1] >= 0.5
            yy = y[c == cat]
            tp = int((pred & yy).sum())
            prec = tp / max(1, pred.sum())
            rec = tp / max(1, yy.sum())
            coef = [round(float(m.intercept_[0]), 2), *(round(float(v), 2) for v in m.coef_[0])]
            print(f"{cat:<6}{prec:>10.3f}{rec:>8.3f}   {coef}")
        m = LogisticRegression(C=1.0, max_iter=2000).fit(x, y)
        coef = [round(float(m.intercept_[0]), 2), *(round(float(v), 2) for v in m.coef_[0])]
        print(f"all categories: {coef}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fit", help="choose the literal-evidence coefficients (family a)")
    f.add_argument("--family", default="a")
    f.add_argument("--seeds", default="0,1")
    f.set_defaults(func=cmd_fit)
    args = ap.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
