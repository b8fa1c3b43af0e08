"""Cross-topic benchmark (issue 10): words-only topics of all ten cnews categories.

    python bench/topics.py fit   [--family a] [--seeds 0,1]            # choose the defaults
    python bench/topics.py pages [--family a] [--seeds 0] [--positive 0.7 ...]  # page model
    python bench/topics.py confusion [--family a] [--seeds 0] [--idf]   # precision lost where
    python bench/topics.py combine [--family a] [--seeds 0,1]            # P_lit + P_model rule
    python bench/topics.py replay [--family a] [--seeds 0,1] [--variants ",contrast=."] [--dump]
                                  # a crawl's fetched pages again, through [learning] variants
    python bench/topics.py final [--family b] [--seeds 1,2] [--out DIR]  # judged again at the end
    python bench/topics.py split [--family b] [--seeds 1,2] [--verbose]  # recall lost where
    python bench/topics.py mixture [--crawls "b:1,2;a:0"]   # accept_mixture offline, chosen by
                                                            # leave-one-category/family-out
    python bench/topics.py mixture-effect --family b --seeds 58 --run topicrawl:accept_mixture=3
                                          [--cut 0.9]   # a stricter cut, same crawls
    python bench/topics.py labels [--family b] [--seeds 1,2] [--variants ",em_steps=0"] [--ceiling]
        # the page model's pseudo-labels and ROC AUC (and the learner's on true labels)
    python bench/topics.py calibrate [--crawls "b:1,2;a:0"]   # the acceptance's calibration map
    python bench/topics.py crawl [--family b] [--seeds 0,1,2] [--categories 体育,...]
                                 [--runs topicrawl,topicrawl:weight=0.7,keyword,...]
                                 [--write FILE]
                                 [--set SETTING=VALUE ...] [--results STEM]
    python bench/topics.py report [--family b] [--write FILE] [--results STEM,...]
                                  # from bench/out/topics-b.json (the PNG next to FILE)

Topic files come from :mod:`bench.topicfiles` (χ² words of the THUCNews headlines, or a
hand-written list for 家居 and 时尚; all weights 1), written into ``bench/out/topics/``.

``fit`` chooses the calibrated literal-evidence coefficients of :mod:`relevance.evidence`
(logistic regression of "an article of the category" on the topic-word counts of every
article and list page, leave-one-category-out) on the webs of the family and seeds given —
family "a" only: the report is on family "b", which the choice never saw.

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
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
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


def _extracted(out: Path, truth: dict) -> Iterator[tuple[str, dict, Any]]:
    """``(url, truth page, extraction)`` of every article, list and home page of the web in
    ``out``, in URL order, decoded and extracted as the crawl does."""
    from topicrawl.extract import decode_html, extract_page

    responses = json.loads((out / "responses.json").read_text(encoding="utf-8"))
    for url, page in sorted(truth["pages"].items()):
        r = responses.get(url, {})
        if page["kind"] not in ("article", "list", "home") or "file" not in r:
            continue
        ctype = r.get("content_type", "")
        header = ctype.split("charset=", 1)[1].strip() if "charset=" in ctype else None
        html, _ = decode_html((out / r["file"]).read_bytes(), header)
        yield url, page, extract_page(html, url)


def web_pages(family: str, seed: int) -> list[dict]:
    """Every article and list page of a web, extracted as the crawl extracts it (cached in
    the web's directory): url, kind, category, title, description, keywords, text."""
    out, truth = ensure_web(family, seed)
    cache = out / "pages_extracted.json"
    if cache.exists():
        return json.loads(cache.read_text(encoding="utf-8"))
    rows = []
    for url, page, ex in _extracted(out, truth):
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


# -- confusion: where literal evidence loses precision --------------------------------------
def cmd_confusion(args: argparse.Namespace) -> int:
    """Per topic, the pages that P_lit (the shipped coefficients) accepts at 0.5 although they
    are not on-topic articles, by kind and category; with ``--idf``, leave-one-category-out
    precision/recall of P_lit refitted with topic words weighted by their idf over the web's
    own pages (a proxy for a crawl's), against all weights 1."""
    import collections
    import math

    import numpy as np
    from sklearn.linear_model import LogisticRegression

    from relevance.evidence import LiteralEvidence
    from relevance.topic import load_topic
    from relevance.weights import CandidateExtractor

    pages = [p for s in parse_seeds(args.seeds) for p in web_pages(args.family, s)]
    rows: dict[str, list] = {"flat": [], "idf": []}
    for cat, path in topic_paths().items():
        topic = load_topic(path)
        ext = CandidateExtractor(pos=topic.candidates.pos, topic_words=topic.weights)
        docs = [(ext(" ".join(x for x in (p["title"], p["description"], p["keywords"]) if x)),
                 ext(p["text"]), p["kind"] == "article" and p["category"] == cat, p)
                for p in pages]  # fmt: skip
        ev = LiteralEvidence(topic.weights, ext)
        tp = fn = 0
        wrong: collections.Counter = collections.Counter()
        for head, text, y, p in docs:
            a = ev.page_probability(ev.page(head, text)) >= 0.5
            tp += a and y
            fn += (not a) and y
            if a and not y:
                wrong[(p["kind"], p.get("category") or "-")] += 1
        n_acc = tp + sum(wrong.values())
        print(f"{args.family}{args.seeds} {cat} P {tp / max(1, n_acc):.2f} R "
              f"{tp / max(1, tp + fn):.2f} wrongly accepted: {wrong.most_common(4)}", flush=True)  # fmt: skip
        if not args.idf:
            continue
        df = collections.Counter(w for h, t, _, _ in docs for w in set(h + t) if w in topic.weights)
        idf = {w: math.log((len(docs) + 1) / (df.get(w, 0) + 1)) for w in topic.weights}
        top = max(idf.values())
        for name, wts in (("flat", dict(topic.weights)),
                          ("idf", {w: max(1e-3, v / top) for w, v in idf.items()})):  # fmt: skip
            e2 = LiteralEvidence(wts, ext)
            rows[name] += [(cat, e2.page(h, t).features(), y) for h, t, y, _ in docs]
    for name, rr in rows.items() if args.idf else ():
        x = np.asarray([r[1] for r in rr])
        y = np.asarray([r[2] for r in rr])
        c = np.asarray([r[0] for r in rr])
        ps, rs = [], []
        for cat in CATEGORIES:
            m = LogisticRegression(C=1.0, max_iter=2000).fit(x[c != cat], y[c != cat])
            pred = m.predict_proba(x[c == cat])[:, 1] >= 0.5
            tp = int((pred & y[c == cat]).sum())
            ps.append(tp / max(1, int(pred.sum())))
            rs.append(tp / max(1, int(y[c == cat].sum())))
        print(f"{name}: leave-one-category-out P mean {statistics.mean(ps):.3f} min {min(ps):.3f}"
              f"  R mean {statistics.mean(rs):.3f} min {min(rs):.3f}")  # fmt: skip
    return 0


# -- pages: the page-model settings, offline -------------------------------------------------
def literal_pages(pages: list[dict], path: Path) -> tuple[Any, list[tuple]]:
    """The topic at ``path`` and, for each page, (words, the topic's
    :class:`~relevance.evidence.LiteralEvidence`, the page's evidence, the page): the head
    and text through the topic's candidate extractor."""
    from relevance.evidence import LiteralEvidence
    from relevance.topic import load_topic
    from relevance.weights import CandidateExtractor

    topic = load_topic(path)
    ext = CandidateExtractor(pos=topic.candidates.pos, topic_words=topic.weights)
    ev = LiteralEvidence(topic.weights, ext)
    out = []
    for p in pages:
        head = ext(" ".join(x for x in (p["title"], p["description"], p["keywords"]) if x))
        text = ext(p["text"])
        out.append((head + text, ev, ev.page(head, text), p))
    return topic, out


def cmd_pages(args: argparse.Namespace) -> int:
    """Self-training over each category's articles and as many random other article/list
    pages of the web (a crawl-like sample), then precision/recall at 0.5 of P_lit, P_model and
    their combinations: how the page-model defaults were chosen (family a, seed 0)."""
    import random

    from relevance.learning.base import logit, sigmoid
    from relevance.learning.selftrain import SelfTrainingPageModel

    combos = {
        "lit": lambda e, m: e,
        "model": lambda e, m: m,
        "mean": lambda e, m: (e + m) / 2,
        "logsum": lambda e, m: sigmoid(logit(e) + logit(m)),
        "max": max,
    }
    res: dict[str, list[tuple[float, float]]] = {k: [] for k in combos}
    for seed in parse_seeds(args.seeds):
        pages = web_pages(args.family, seed)
        for cat, path in topic_paths().items():
            _, lit = literal_pages(pages, path)
            rows = [(words, ev.page_probability(e), p["kind"] == "article" and p["category"] == cat)
                    for words, ev, e, p in lit]  # fmt: skip
            rnd = random.Random(0)
            pos = [r for r in rows if r[2]]
            neg = [r for r in rows if not r[2]]
            sample = pos + rnd.sample(neg, min(len(neg), len(pos)))
            rnd.shuffle(sample)
            m = SelfTrainingPageModel(positive=args.positive, negative=args.negative,
                                      retrain_every=10**9, c=args.c, em_lambda=args.em_lambda,
                                      em_steps=args.em_steps)  # fmt: skip
            for words, e, _ in sample:
                m.observe(words, e)
            m.retrain()
            line = []
            for name, f in combos.items():
                tp = fp = fn = 0
                for words, e, y in sample:
                    pm = m.probability_words([words])[0]
                    a = f(e, e if pm is None else pm) >= 0.5
                    tp += a and y
                    fp += a and not y
                    fn += (not a) and y
                pr, rc = tp / max(1, tp + fp), tp / max(1, tp + fn)
                res[name].append((pr, rc))
                line.append(f"{name} {pr:.2f}/{rc:.2f}")
            print(f"{args.family}{seed} {cat} {m.trained_on}  " + "  ".join(line), flush=True)
    for name, v in res.items():
        ps, rs = [x[0] for x in v], [x[1] for x in v]
        print(f"{name:<7} precision mean {statistics.mean(ps):.3f} min {min(ps):.3f}  "
              f"recall mean {statistics.mean(rs):.3f} min {min(rs):.3f}")  # fmt: skip
    return 0


# -- combine: the rule that mixes P_lit and P_model, offline ---------------------------------
def combine_rows(family: str, seeds: list[int], *, folds: int = 2) -> list[dict]:
    """Per (seed, category), the ``pages`` sample (the category's articles and as many random
    other article/list pages), split into ``folds``: the page model self-trains on the other
    folds (pseudo-labels from P_lit, as in a crawl) and scores this one, so every P_model is
    out of sample, as it is for a page the crawl scores before it trains on it."""
    import random

    from relevance.learning.selftrain import SelfTrainingPageModel

    rows = []
    for seed in seeds:
        pages = web_pages(family, seed)
        for cat, path in topic_paths().items():
            topic, lit = literal_pages(pages, path)
            lc = topic.learning
            scored = [(words, ev.page_probability(e), p["kind"] == "article" and p["category"] == cat,
                       e.features(), p) for words, ev, e, p in lit]  # fmt: skip
            rnd = random.Random(seed)
            pos = [r for r in scored if r[2]]
            neg = [r for r in scored if not r[2]]
            sample = pos + rnd.sample(neg, min(len(neg), len(pos)))
            rnd.shuffle(sample)
            for k in range(folds):
                m = SelfTrainingPageModel(positive=lc.positive, negative=lc.negative,
                                          retrain_every=10**9, c=lc.c, em_lambda=lc.em_lambda,
                                          em_steps=lc.em_steps)  # fmt: skip
                for i, (words, e, *_) in enumerate(sample):
                    if i % folds != k:
                        m.observe(words, e)
                m.retrain()
                test = [(r, True) for i, r in enumerate(sample) if i % folds == k]
                if k == 0:  # the rest of the web, scored by the first fold's model
                    ids = {id(r) for r in sample}
                    test += [(r, False) for r in scored if id(r) not in ids]
                probs = m.probability_words([r[0] for r, _ in test])
                for ((_, e, y, feats, p), in_sample), pm in zip(test, probs, strict=True):
                    rows.append({"seed": seed, "category": cat, "lit": e, "model": pm, "y": y,
                                 "sample": in_sample,
                                 "features": feats, "positives": m.trained_on.get("positives", 0),
                                 "kind": p["kind"], "page_category": p.get("category")})  # fmt: skip
            print(f"{family}{seed} {cat}: {sum(r[2] for r in sample)} on-topic, "
                  f"{len(sample)} in the sample", flush=True)  # fmt: skip
    return rows


def cmd_combine(args: argparse.Namespace) -> int:
    """Leave-one-category-out precision/recall at 0.5 of the rules of
    :mod:`relevance.combine` (and of a stacked model with the count features, for
    comparison) on out-of-sample P_model (:func:`combine_rows`); the stacked coefficients and
    the mean's weight are fitted on the other nine categories, both seeds pooled."""
    every = combine_rows(args.family, parse_seeds(args.seeds), folds=args.folds)
    for label, keep in (("the sample (on-topic : other = 1 : 1)", True),
                        ("every page of the web", False)):  # fmt: skip
        print(f"\n== {label}")
        combine_report([r for r in every if r["sample"] or not keep], args)
    return 0


def combine_report(rows: list[dict], args: argparse.Namespace) -> None:
    """:func:`cmd_combine`'s table for one set of rows."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    from relevance.combine import clipped_logit, combine

    for r in rows:  # no model (no word known or not trained): P_lit alone, as in a crawl
        r["m"] = r["lit"] if r["model"] is None else r["model"]
    cats = list(CATEGORIES)
    y = np.asarray([r["y"] for r in rows])
    c = np.asarray([r["category"] for r in rows])
    ll = np.asarray([[clipped_logit(r["lit"]), clipped_logit(r["m"])] for r in rows])
    extra = np.asarray([[*r["features"], np.log1p(r["positives"])] for r in rows])

    def fixed(rule: str, **kw):
        return lambda train, test: np.asarray([combine(rows[i]["lit"], rows[i]["m"], rule, **kw)
                                               for i in test])  # fmt: skip

    def weighted(rule: str):  # the weight of P_model with the best F1 on the nine others
        def f1(w, idx):
            pred = np.asarray([combine(rows[i]["lit"], rows[i]["m"], rule, weight=w)
                               for i in idx]) >= 0.5  # fmt: skip
            tp = (pred & y[idx]).sum()
            return 2 * tp / max(1, pred.sum() + y[idx].sum())

        def run(train, test):
            best = max(np.linspace(0, 1, 21), key=lambda w: f1(w, train))
            chosen.setdefault(f"{rule}-w", []).append(round(float(best), 2))
            return fixed(rule, weight=float(best))(train, test)

        return run

    def stacked(x, name):
        def run(train, test):
            m = LogisticRegression(C=1.0, max_iter=2000).fit(x[train], y[train])
            coef = [round(float(m.intercept_[0]), 2), *(round(float(v), 2) for v in m.coef_[0])]
            chosen.setdefault(name, []).append(coef)
            return m.predict_proba(x[test])[:, 1]

        return run

    chosen: dict[str, list] = {}
    rules = {"lit": lambda tr, te: np.asarray([rows[i]["lit"] for i in te]),
             "model": lambda tr, te: np.asarray([rows[i]["m"] for i in te]),
             "mean": fixed("mean"), "mean-w": weighted("mean"),
             "mean w=0.7": fixed("mean", weight=0.7), "logpool-w": weighted("logpool"),
             "logpool w=0.75": fixed("logpool", weight=0.75), "noisy-or": fixed("noisy-or"),
             "max": fixed("max"), "stacked": stacked(ll, "stacked"),
             "stacked+counts": stacked(np.hstack([ll, extra]), "stacked+counts")}  # fmt: skip
    print(f"\nleave-one-category-out, family {args.family} seeds {args.seeds}, threshold 0.5; "
          "precision / recall per held-out category (both seeds pooled)")  # fmt: skip
    head = "".join(f"{k:>12}" for k in cats)
    print(f"{'rule':<16}{head}   P mean  P min  R mean  R min  F1")
    summary = {}
    for name, rule in rules.items():
        ps, rs, cells = [], [], []
        for cat in cats:
            train, test = np.flatnonzero(c != cat), np.flatnonzero(c == cat)
            pred = rule(train, test) >= 0.5
            tp = int((pred & y[test]).sum())
            ps.append(tp / max(1, int(pred.sum())))
            rs.append(tp / max(1, int(y[test].sum())))
            cells.append(f"{ps[-1]:.2f}/{rs[-1]:.2f}")
        pm, rm = statistics.mean(ps), statistics.mean(rs)
        f1 = 2 * pm * rm / max(1e-9, pm + rm)
        summary[name] = f1
        print(f"{name:<16}" + "".join(f"{x:>12}" for x in cells)
              + f"   {pm:.3f}  {min(ps):.3f}  {rm:.3f}  {min(rs):.3f}  {f1:.3f}")  # fmt: skip
    for name, v in chosen.items():
        print(f"{name} fitted without each category: {v}")
    m = LogisticRegression(C=1.0, max_iter=2000).fit(ll, y)
    coef = [round(float(m.intercept_[0]), 2), *(round(float(v), 2) for v in m.coef_[0])]
    print(f"stacked, all categories: {coef}")


# -- replay: a crawl's pages again, in its fetch order, through the calibrated scorer ----------
def use_out(out: str) -> None:
    """Read recorded crawls and webs from the bench/out directory ``out`` ("": this
    checkout's)."""
    global OUT
    if out:
        OUT = Path(out)


def portal_targets(truth: dict, category: str) -> set[str]:
    """The on-topic articles of ``category`` on the web's portal hosts (the seeds' hosts):
    what a benchmark crawl of the portal web is measured against."""
    from sitegen.build import topic_targets

    hosts = {urlsplit(s).hostname for s in truth["seeds"]["portal"]}
    return {u for u in topic_targets(truth, category) if urlsplit(u).hostname in hosts}


def print_paired(diffs: list[tuple[float, float]], label: str) -> None:
    """The paired (precision, recall) differences of several crawls: mean ± standard error,
    and in how many crawls each rose and fell (nothing for fewer than two crawls)."""
    n = len(diffs)
    if n < 2:
        return
    for i, name in enumerate(("precision", "recall")):
        d = [x[i] for x in diffs]
        print(f"{name}: {label}, mean of {n} crawls {statistics.mean(d):+.4f} ± "
              f"{statistics.stdev(d) / n**0.5:.4f}; better in {sum(x > 0 for x in d)}, "
              f"worse in {sum(x < 0 for x in d)}")  # fmt: skip


def corpus_scorer(truth: dict, category: str) -> Callable[[set[str]], tuple[float, float, int]]:
    """A corpus's (precision, recall by duplicate group, size) against ``category``'s portal
    targets (recall as :func:`bench.harvest.measure` counts it: a group is found when any of
    its pages is in the corpus)."""
    targets = portal_targets(truth, category)
    groups: dict[str, set[str]] = {}
    for url in targets:
        groups.setdefault(truth["pages"][url].get("dup_group") or url, set()).add(url)

    def pr(corpus: set[str]) -> tuple[float, float, int]:
        on = corpus & targets
        hit = sum(1 for members in groups.values() if members & on)
        return len(on) / max(1, len(corpus)), hit / max(1, len(groups)), len(corpus)

    return pr


def crawl_dbs(family: str, seeds: list[int], cats: list[str], run: str = "topicrawl") -> dict:
    """The latest crawl database of ``run`` per (seed, category) under bench/out/topics-runs."""
    slug = "".join(ch if ch.isalnum() or ch in ".-" else "_" for ch in run)
    found: dict[tuple[int, str], Path] = {}
    for d in sorted((OUT / "topics-runs").glob("*")):
        for seed in seeds:
            for cat in cats:
                db = d / f"{family}{seed}-{CATEGORIES[cat][0]}-{slug}-{slug}.db"
                if db.exists():
                    found[(seed, cat)] = db
    return found


def stored_pages(db: Path, row: Callable[[Any], dict]) -> list[dict]:
    """``row`` of each fetched page of a crawl database's last run, in fetch order."""
    from models.store import Store

    store = Store.from_url(f"sqlite:///{db}")
    try:
        run = store.list_runs()[-1]
        pages = sorted(store.iter_pages(run.id),
                       key=lambda p: (p.fetched_at or dt.datetime.min, p.id))  # fmt: skip
        return [row(p) for p in pages]
    finally:
        store.close()


def replay_pages(db: Path) -> list[dict]:
    """The fetched pages of a crawl database in fetch order (url, head fields, text)."""
    return stored_pages(db, lambda p: {
        "url": p.final_url or p.url, "title": p.title or "", "description": p.description or "",
        "keywords": p.keywords or "", "text": p.text or "", "seed": p.depth == 0})


def web_sections(family: str, seed: int) -> dict[str, str | None]:
    """The section URL each page's breadcrumb names (``ExtractedPage.section``), by URL, for
    every article, list and home page of a web (cached in the web's directory): the crawl's
    databases do not keep it, and a replay needs it for the learned contrast."""
    out, truth = ensure_web(family, seed)
    cache = out / "sections.json"
    if cache.exists():
        return json.loads(cache.read_text(encoding="utf-8"))
    found = {url: ex.section for url, _, ex in _extracted(out, truth)}
    cache.write_text(json.dumps(found, ensure_ascii=False), encoding="utf-8")
    return found


def replay(pages: list[dict], topic: Any, truth: dict, category: str,
           sections: dict[str, str | None] | None = None, scorer: Any = None) -> list[dict]:  # fmt: skip
    """Score and observe ``pages`` in order with a fresh calibrated scorer of ``topic`` (or
    ``scorer``), as the spider does (score, judge at the page threshold, then train); per page
    its P, P_lit, P_model, on-topic flag, category and ``PageInfo``."""
    from relevance.calibrated import CalibratedLinkScorer
    from relevance.linkscore import PageInfo

    scorer = scorer or CalibratedLinkScorer.from_topic(topic)
    out, seen = [], set()
    for p in pages:
        if p["url"] in seen:
            continue
        seen.add(p["url"])
        info = PageInfo(url=p["url"], title=p["title"], description=p["description"],
                        keywords=p["keywords"], text=p["text"], is_seed=p["seed"],
                        section=(sections or {}).get(p["url"]))  # fmt: skip
        rel, lit, model = scorer.page_scores(info)
        vetoed = scorer.domain_rejected(info.url, model)  # [learning] domain_accept
        scorer.observe_page(info, rel, None)
        pm = scorer.page_model  # the page's label as the page model keeps it (before section
        # negatives, applied at training); None: unlabelled, or the page not in its pool
        pseudo = pm.pages[-1][1] if pm is not None and pm.seen == len(pm.pages) else None
        t = truth["pages"].get(p["url"]) or {}
        out.append({"url": p["url"], "info": info, "p": rel, "lit": lit, "model": model,
                    "on": t.get("kind") == "article" and t.get("category") == category,
                    "kind": t.get("kind", "?"), "category": t.get("category") or "-",
                    "accepted": scorer.acceptance(rel) >= topic.page_threshold and not vetoed,
                    "pseudo": pseudo})  # fmt: skip
    return out


def learning_variant(topic: Any, spec: str) -> Any:
    """``topic`` with ``[learning]`` overrides ``KEY=VALUE+KEY=VALUE`` (empty: as it is)."""
    import dataclasses

    if not spec:
        return topic
    lc = topic.learning
    kw: dict[str, Any] = {}
    for k, v in (kv.split("=", 1) for kv in spec.split("+")):
        kind = type(getattr(lc, k))
        kw[k] = v.lower() in ("1", "true", "yes") if kind is bool else kind(v)
    return dataclasses.replace(topic, learning=dataclasses.replace(lc, **kw))


def replayed_variants(args: argparse.Namespace, run: str = "topicrawl"
                      ) -> Iterator[tuple[int, str, str, Any, list[dict]]]:  # fmt: skip
    """For each recorded crawl of ``args`` (family, seeds, categories; ``run``: the crawls of
    that variant) and each of ``args.variants``: (seed, category, variant, the category's
    topic, the rows of :func:`replay`)."""
    from relevance.topic import load_topic

    cats = args.categories.split(",") if args.categories else list(CATEGORIES)
    dbs = crawl_dbs(args.family, parse_seeds(args.seeds), cats, run)
    for (seed, cat), db in sorted(dbs.items()):
        _, truth = ensure_web(args.family, seed)
        pages = replay_pages(db)
        sections = web_sections(args.family, seed)
        topic0 = load_topic(topic_paths()[cat])
        for v in args.variants.split(","):
            rows = replay(pages, learning_variant(topic0, v), truth, cat, sections)
            yield seed, cat, v, topic0, rows


def cmd_replay(args: argparse.Namespace) -> int:
    """Precision / recall of the pages each variant accepts when the crawls' fetched pages
    are replayed in their fetch order (same pages for every variant: the crawl order is the
    one of the recorded crawl, not the variant's)."""
    import collections

    variants = args.variants.split(",")
    res: dict[str, dict[str, list]] = {v: collections.defaultdict(list) for v in variants}
    for seed, cat, v, _topic, rows in replayed_variants(args):
        acc = [r for r in rows if r["accepted"]]
        tp = sum(r["on"] for r in acc)
        n_on = sum(r["on"] for r in rows)
        prec, rec = tp / max(1, len(acc)), tp / max(1, n_on)
        res[v][cat].append((prec, rec))
        wrong = collections.Counter((r["kind"], r["category"]) for r in acc if not r["on"])
        print(f"{args.family}{seed} {cat} [{v or 'default'}] P {prec:.3f} R {rec:.3f} "
              f"accepted {len(acc)} wrong {wrong.most_common(3)}", flush=True)  # fmt: skip
        if args.dump:
            for r in rows:
                print("   ", "A" if r["accepted"] else "-", "on " if r["on"] else "off",
                      f"{r['p']:.2f} lit {r['lit']:.2f} model "
                      f"{'-' if r['model'] is None else format(r['model'], '.2f')}",
                      r["kind"], r["category"], r["url"])  # fmt: skip
    for v in variants:
        ps = [x[0] for c in res[v] for x in res[v][c]]
        rs = [x[1] for c in res[v] for x in res[v][c]]
        if ps:
            f1 = 2 * statistics.mean(ps) * statistics.mean(rs) / max(1e-9, statistics.mean(ps) + statistics.mean(rs))
            print(f"[{v or 'default'}] P mean {statistics.mean(ps):.3f} min {min(ps):.3f}  "
                  f"R mean {statistics.mean(rs):.3f} min {min(rs):.3f}  F1 {f1:.3f}  (n={len(ps)})")
    return 0


# -- labels: the page model's pseudo-labels and ranking against the truth ----------------------
def roc_auc(pos: list[float], neg: list[float]) -> float:
    """ROC AUC of scores (Mann-Whitney U / (|pos|·|neg|), ties counted half); NaN without
    both classes."""
    if not pos or not neg:
        return float("nan")
    ranked = sorted([(x, 1) for x in pos] + [(x, 0) for x in neg])
    total, i = 0.0, 0
    while i < len(ranked):
        j = i
        while j < len(ranked) and ranked[j][0] == ranked[i][0]:
            j += 1
        total += (i + j + 1) / 2 * sum(y for _, y in ranked[i:j])  # the tied group's mean rank
        i = j
    return (total - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg))


def supervised_ceiling(rows: list[dict], extract: Callable[[str], list[str]]) -> float:
    """ROC AUC of the page model's learner (TF-IDF of the same candidate words, C = 10,
    balanced, liblinear) trained on the *true* labels of the crawl's fetched pages, 5-fold
    cross-validated: what the features allow when the labels are right."""
    import numpy as np
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_predict

    y = np.asarray([r["on"] for r in rows], dtype=int)
    if y.sum() < 5 or (1 - y).sum() < 5:
        return float("nan")
    docs = [extract(page_text(r["info"])) for r in rows]
    x = TfidfVectorizer(analyzer=lambda d: d, sublinear_tf=True).fit_transform(docs)
    lr = LogisticRegression(C=10.0, class_weight="balanced", solver="liblinear")
    p = cross_val_predict(lr, x, y, cv=5, method="predict_proba")[:, 1]
    return roc_auc(list(p[y == 1]), list(p[y == 0]))


def page_text(info: Any) -> str:
    """The text the calibrated scorer reads of a page (``PageInfo``): its head, then its
    main text."""
    head = " ".join(x for x in (info.title, info.description, info.keywords) if x)
    return f"{head}\n{info.text or ''}"


def cmd_labels(args: argparse.Namespace) -> int:
    """Per recorded crawl, replayed as in ``replay`` for each variant: the pseudo-labels'
    quality (share on-topic of the pages with P_lit >= 0.7, share on-topic of those with
    P_lit <= 0.1), the ROC AUC over the fetched pages of P_lit, P_model (at fetch; pages
    judged before the first training left out) and P(page), the precision / recall of the
    accepted pages, and with ``--ceiling`` the AUC of the same learner on the true labels."""
    import collections

    from relevance.weights import CandidateExtractor

    variants = args.variants.split(",")
    res: dict[str, dict[str, list[float]]] = {v: collections.defaultdict(list) for v in variants}
    for seed, cat, v, topic0, rows in replayed_variants(args, args.run):
        on = [r for r in rows if r["on"]]
        off = [r for r in rows if not r["on"]]
        acc = [r for r in rows if r["accepted"]]
        pos = [r["on"] for r in rows if r["lit"] >= 0.7]
        neg = [r["on"] for r in rows if r["lit"] <= 0.1]
        lab_pos = [r["on"] for r in rows if r["pseudo"] == 1]
        fig = {
            "P": sum(r["on"] for r in acc) / max(1, len(acc)),
            "R": sum(r["on"] for r in acc) / max(1, len(on)),
            "pos_prec": sum(pos) / max(1, len(pos)),
            "neg_on": sum(neg) / max(1, len(neg)),
            # the positives the page model keeps (after [learning] domain_veto): share
            # on-topic, and the share of the on-topic fetched pages among them
            "lab_pos_prec": sum(lab_pos) / max(1, len(lab_pos)),
            "lab_pos_rec": sum(lab_pos) / max(1, len(on)),
            "auc_lit": roc_auc([r["lit"] for r in on], [r["lit"] for r in off]),
            "auc_model": roc_auc([r["model"] for r in on if r["model"] is not None],
                                 [r["model"] for r in off if r["model"] is not None]),
            "auc_P": roc_auc([r["p"] for r in on], [r["p"] for r in off]),
        }
        if args.ceiling and v == variants[0]:
            ext = CandidateExtractor(pos=topic0.candidates.pos, topic_words=topic0.weights)
            fig["auc_ceiling"] = supervised_ceiling(rows, ext)
        for k, x in fig.items():
            res[v][k].append(x)
        print(f"{args.family}{seed} {cat} [{v or 'default'}] "
              + " ".join(f"{k} {x:.3f}" for k, x in fig.items()), flush=True)  # fmt: skip
    for v in variants:
        print(f"[{v or 'default'}] " + " ".join(
            f"{k} {statistics.mean(x for x in xs if x == x):.3f}" for k, xs in res[v].items()))
    return 0


# -- final: the fetched pages judged again with the crawl's last models ------------------------
#: the decisions :func:`final_decisions` compares: at fetch (the crawl's), the accepted kept only
#: if the last models keep them (revoke), every fetched page by the last models (final), and
#: accepted by either (union: what ``[learning] rejudge`` aims at); final-mM: final, but a page
#: accepted at fetch is revoked only when its last acceptance is under the threshold by M
FINAL_RULES = ("fetch", "revoke", "final", "union", "final-m0.05", "final-m0.1", "final-m0.2")


def final_decisions(pages: list[dict], topic: Any, truth: dict, category: str,
                    sections: dict[str, str | None] | None = None) -> dict[str, list[int]]:  # fmt: skip
    """Replay ``pages`` as the spider judges them (:func:`replay`'s order and scorer), then
    score every one again with the models as they are at the end; per rule of
    :data:`FINAL_RULES` the counts [true positives, false positives, false negatives] over
    the fetched pages (on-topic = an article of ``category``)."""
    from relevance.calibrated import CalibratedLinkScorer

    scorer = CalibratedLinkScorer.from_topic(topic)
    th = topic.page_threshold
    counts = {rule: [0, 0, 0] for rule in FINAL_RULES}
    for row in replay(pages, topic, truth, category, sections, scorer):
        at_fetch, on = row["accepted"], row["on"]
        now = scorer.acceptance(scorer.page_scores(row["info"])[0])
        last = now >= th
        decided = {"fetch": at_fetch, "revoke": at_fetch and last, "final": last,
                   "union": at_fetch or last}  # fmt: skip
        for m in (0.05, 0.1, 0.2):  # revoked only when the last P is under th by the margin
            decided[f"final-m{m}"] = (now >= th - m) if at_fetch else last
        for rule, accepted in decided.items():
            if accepted or on:
                counts[rule][0 if accepted and on else 1 if accepted else 2] += 1
    return counts


def corpus_before_and_after_final(db: Path, truth: dict, category: str) -> dict[str, tuple]:
    """Corpus (precision, recall) of a crawl with the final re-judgement as it ended, and as
    it was before the re-judgement (the same crawl: its documents, less the pages that joined
    at the end, plus the pages that left; the pages judged again carry
    ``relevance_parts.final_from``). Recall by duplicate group, as :func:`bench.harvest.measure`."""
    from models.store import Store

    store = Store.from_url(f"sqlite:///{db}")
    try:
        run = store.list_runs()[-1]
        docs = {d.url for d in store.iter_documents(run.id)}
        # (url, now accepted, judged lower than at fetch)
        moved = [(p.url, p.accepted, (p.relevance or 0.0) < p.relevance_parts["final_from"])
                 for p in store.iter_pages(run.id)
                 if p.relevance_parts and "final_from" in p.relevance_parts]  # fmt: skip
    finally:
        store.close()
    joined = {u for u, accepted, _ in moved if accepted and u in docs}
    # judged lower and out: it left the corpus (only pages in it are revoked); judged higher
    # and out: a late acceptance dedup or cleaning dropped
    left = {u for u, accepted, lower in moved if lower and not accepted}
    pr = corpus_scorer(truth, category)

    return {"fetch": pr((docs - joined) | left), "final": pr(docs),
            "moved": (len(left), len(joined))}


def cmd_final_effect(args: argparse.Namespace) -> int:
    """The built final re-judgement measured within each crawl: corpus precision and recall
    before and after it (paired in the same crawl, so the crawl's order is not noise)."""
    use_out(args.out)
    cats = args.categories.split(",") if args.categories else list(CATEGORIES)
    diffs = []
    for (seed, cat), db in sorted(crawl_dbs(args.family, parse_seeds(args.seeds), cats,
                                            args.run).items()):  # fmt: skip
        _, truth = ensure_web(args.family, seed)
        r = corpus_before_and_after_final(db, truth, cat)
        (p0, r0, n0), (p1, r1, n1) = r["fetch"], r["final"]
        diffs.append((p1 - p0, r1 - r0))
        print(f"{args.family}{seed} {cat} before P {p0:.3f} R {r0:.3f} ({n0} docs)  after "
              f"P {p1:.3f} R {r1:.3f} ({n1} docs)  left {r['moved'][0]} joined {r['moved'][1]}",
              flush=True)  # fmt: skip
    print_paired(diffs, "after - before")
    return 0


def mixture_rows(db: Path, truth: dict, category: str) -> list[tuple[float, bool, bool]]:
    """(recorded P(page), on-topic, seed) of each fetched page of a crawl, in fetch order."""
    def row(p: Any) -> tuple[float, bool, bool]:
        t = truth["pages"].get(p.final_url or p.url) or {}
        return (p.relevance or 0.0, t.get("kind") == "article" and t.get("category") == category,
                bool((p.link_score or {}).get("seed")))  # fmt: skip

    return stored_pages(db, row)


def mixture_decisions(rows: list[tuple[float, bool, bool]], components: int, cuts: list[float],
                      threshold: float = 0.5) -> dict[float, list[bool]]:  # fmt: skip
    """The page decisions of :class:`relevance.learning.mixture.ScoreMixture` over recorded
    scores in fetch order, as the crawl makes them (decided, then observed): accepted at
    P(page) >= ``threshold``, or where the top component (centre >= ``threshold``) has a
    posterior >= each cut (the built rule: cut = threshold)."""
    from relevance.learning.mixture import ScoreMixture

    m = ScoreMixture(components)
    out: dict[float, list[bool]] = {c: [] for c in cuts}
    for p, _on, seed in rows:
        centre = m.top_centre()
        post = m.posterior(p) if p < threshold and centre is not None and centre >= threshold else None
        for c in cuts:
            out[c].append(p >= threshold or (post is not None and post >= c))
        if not seed:
            m.observe(p)
    return out


def cmd_mixture(args: argparse.Namespace) -> int:
    """``[learning] accept_mixture`` offline on recorded crawls: page precision / recall of the
    fetched pages for each (components, posterior cut) against the plain P(page) >= 0.5, per
    family, and the choice by leave-one-category-out and leave-one-family-out (largest mean
    recall gain with precision down by at most ``--max-loss``; and by F1)."""
    import collections

    use_out(args.out)
    cats = args.categories.split(",") if args.categories else list(CATEGORIES)
    ks = [int(k) for k in args.components.split(",")]
    cuts = [float(c) for c in args.cuts.split(",")]
    recs = []
    for spec in args.crawls.split(";"):
        fam, seeds = spec.split(":")
        for (seed, cat), db in sorted(crawl_dbs(fam, parse_seeds(seeds), cats, args.run).items()):
            _, truth = ensure_web(fam, seed)
            rows = mixture_rows(db, truth, cat)
            n_on = sum(on for _, on, _ in rows)

            def pr(dec: list[bool], rows=rows, n_on=n_on) -> tuple[float, float]:
                tp = sum(on for (_, on, _), a in zip(rows, dec, strict=True) if a)
                return tp / max(1, sum(dec)), tp / max(1, n_on)

            r: dict[Any, Any] = {"fam": fam, "cat": cat,
                                 "base": pr([p >= 0.5 for p, _, _ in rows])}  # fmt: skip
            for k in ks:
                for c, dec in mixture_decisions(rows, k, cuts).items():
                    r[(k, c)] = pr(dec)
            recs.append(r)
            print(f"{fam}{seed} {cat} base P {r['base'][0]:.3f} R {r['base'][1]:.3f}  " + "  ".join(
                f"K{k}/{c}: {r[(k, c)][0]:.3f} {r[(k, c)][1]:.3f}" for k in ks for c in cuts),
                flush=True)  # fmt: skip
    keys = [(k, c) for k in ks for c in cuts]

    def diff(rs: list[dict], key: Any, i: int) -> list[float]:
        return [r[key][i] - r["base"][i] for r in rs]

    def mse(d: list[float]) -> str:
        se = statistics.stdev(d) / len(d) ** 0.5 if len(d) > 1 else float("nan")
        return f"{statistics.mean(d):+.3f} ± {se:.3f}"

    fams = collections.OrderedDict((r["fam"], None) for r in recs)
    for fam in [*fams, "all"]:
        rs = [r for r in recs if fam in ("all", r["fam"])]
        print(f"family {fam}, {len(rs)} crawls: base P {statistics.mean(r['base'][0] for r in rs):.3f} "
              f"R {statistics.mean(r['base'][1] for r in rs):.3f}")  # fmt: skip
        for key in keys:
            print(f"   K {key[0]} cut {key[1]}: P {mse(diff(rs, key, 0))}  R {mse(diff(rs, key, 1))}")

    def by_rule(rs: list[dict], key: Any) -> float:
        d = diff(rs, key, 0)
        dp, dr = statistics.mean(d), statistics.mean(diff(rs, key, 1))
        if args.se_margin and len(d) > 1:  # the loss bounded at the mean less z s.e.
            dp -= args.se_margin * statistics.stdev(d) / len(d) ** 0.5
        return dr if dp >= -args.max_loss else -1.0

    def by_f1(rs: list[dict], key: Any) -> float:
        p = statistics.mean(r[key][0] for r in rs)
        rc = statistics.mean(r[key][1] for r in rs)
        return 2 * p * rc / max(1e-9, p + rc)

    for name, score in (("recall, precision loss <= max-loss", by_rule), ("F1", by_f1)):
        for fold, groups in (("category", sorted({r["cat"] for r in recs})), ("family", list(fams))):
            if len(groups) < 2:
                continue
            chosen, dp, dr = [], [], []
            for g in groups:
                train = [r for r in recs if r["cat" if fold == "category" else "fam"] != g]
                test = [r for r in recs if r["cat" if fold == "category" else "fam"] == g]
                key = max(keys, key=lambda k: score(train, k))
                chosen.append(key)
                dp += diff(test, key, 0)
                dr += diff(test, key, 1)
            print(f"leave-one-{fold}-out by {name}: chosen {collections.Counter(chosen).most_common()}; "
                  f"held-out folds P {mse(dp)} R {mse(dr)}")  # fmt: skip
    return 0


def mixture_effect(db: Path, truth: dict, category: str, threshold: float,
                   cut: float = 0.0) -> dict[str, tuple]:  # fmt: skip
    """Corpus (precision, recall, size) of an ``accept_mixture`` crawl as it ended and without
    the documents only the mixture accepted (``relevance_parts.accept`` >= ``threshold`` >
    relevance): the same crawl with the plain decision (the option leaves the crawl order
    alone). With ``cut`` above the crawl's own posterior cut, "mixture" is the corpus less
    the mixture's documents accepted on a posterior under ``cut`` (a stricter cut read from
    the same crawl). Recall by duplicate group, as :func:`bench.harvest.measure`."""
    from models.store import Store

    store = Store.from_url(f"sqlite:///{db}")
    try:
        run = store.list_runs()[-1]
        docs = {d.url for d in store.iter_documents(run.id)}
        accepts = {p.url: (p.relevance_parts or {}).get("accept", 0.0)
                   for p in store.iter_pages(run.id) if (p.relevance or 0.0) < threshold}  # fmt: skip
        only = {u for u, a in accepts.items() if a >= threshold}
        weak = {u for u, a in accepts.items() if threshold <= a < cut}
    finally:
        store.close()
    targets = portal_targets(truth, category)
    pr = corpus_scorer(truth, category)

    docs_cut = docs - weak
    added = docs_cut & only
    return {"plain": pr(docs - only), "mixture": pr(docs_cut),
            "added": (len(added), len(added & targets))}


def cmd_mixture_effect(args: argparse.Namespace) -> int:
    """The built ``accept_mixture`` measured within each crawl: the corpus against the same
    corpus less the documents only the mixture accepted (paired in the same crawl)."""
    from relevance.topic import load_topic

    use_out(args.out)
    cats = args.categories.split(",") if args.categories else list(CATEGORIES)
    diffs = []
    for (seed, cat), db in sorted(crawl_dbs(args.family, parse_seeds(args.seeds), cats,
                                            args.run).items()):  # fmt: skip
        _, truth = ensure_web(args.family, seed)
        r = mixture_effect(db, truth, cat, load_topic(topic_paths()[cat]).page_threshold,
                           args.cut)  # fmt: skip
        (p0, r0, n0), (p1, r1, n1) = r["plain"], r["mixture"]
        diffs.append((p1 - p0, r1 - r0))
        print(f"{args.family}{seed} {cat} plain P {p0:.3f} R {r0:.3f} ({n0} docs)  mixture "
              f"P {p1:.3f} R {r1:.3f} ({n1} docs)  added {r['added'][0]}, on-topic "
              f"{r['added'][1]}", flush=True)  # fmt: skip
    print_paired(diffs, "mixture - plain")
    return 0


def cmd_final(args: argparse.Namespace) -> int:
    """Page precision / recall of each rule of :data:`FINAL_RULES` on recorded crawls, per
    crawl and pooled, and the paired difference of each rule against the crawl's own
    decisions (mean ± standard error over the crawls)."""
    from relevance.topic import load_topic

    use_out(args.out)
    cats = args.categories.split(",") if args.categories else list(CATEGORIES)
    pooled = {rule: [0, 0, 0] for rule in FINAL_RULES}
    diffs: dict[str, list[tuple[float, float]]] = {rule: [] for rule in FINAL_RULES}

    def pr(c: list[int]) -> tuple[float, float]:
        return c[0] / max(1, c[0] + c[1]), c[0] / max(1, c[0] + c[2])

    for (seed, cat), db in sorted(crawl_dbs(args.family, parse_seeds(args.seeds), cats,
                                            args.run).items()):  # fmt: skip
        _, truth = ensure_web(args.family, seed)
        counts = final_decisions(replay_pages(db), load_topic(topic_paths()[cat]), truth, cat,
                                 web_sections(args.family, seed))  # fmt: skip
        base = pr(counts["fetch"])
        for rule, c in counts.items():
            pooled[rule] = [a + b for a, b in zip(pooled[rule], c, strict=True)]
            p, r = pr(c)
            diffs[rule].append((p - base[0], r - base[1]))
        print(f"{args.family}{seed} {cat} " + "  ".join(
            f"{rule} P {pr(c)[0]:.3f} R {pr(c)[1]:.3f}" for rule, c in counts.items()), flush=True)
    for rule in FINAL_RULES:
        p, r = pr(pooled[rule])
        d = diffs[rule]
        n = len(d)
        if not n:
            continue
        se = [statistics.stdev(x[i] for x in d) / n**0.5 if n > 1 else float("nan") for i in (0, 1)]
        print(f"{rule:7s} pooled P {p:.3f} R {r:.3f} (tp {pooled[rule][0]}, fp {pooled[rule][1]}, "
              f"fn {pooled[rule][2]}); against fetch, mean of {n} crawls: P "
              f"{statistics.mean(x[0] for x in d):+.3f} ± {se[0]:.3f}, R "
              f"{statistics.mean(x[1] for x in d):+.3f} ± {se[1]:.3f}")  # fmt: skip
    return 0


# -- split: where a crawl's recall and precision are lost -------------------------------------
def split_crawl(db: Path, truth: dict, category: str, threshold: float) -> dict:
    """Where one crawl lost corpus recall and precision: the on-topic groups (a target and
    its duplicates, as ``bench/harvest.py``'s corpus recall counts them) (a) never fetched,
    (b) fetched but rejected (P below ``threshold``; or passed but left out of the corpus by
    dedup / cleaning), (c) in the corpus; and the off-topic documents by (kind, category)
    and by the evidence that accepted them (P_lit, P_model at the page threshold)."""
    import collections
    import datetime as _dt

    from models.store import Store

    targets = portal_targets(truth, category)
    group_of = {u: truth["pages"][u].get("dup_group") or u for u in targets}
    groups = set(group_of.values())
    store = Store.from_url(f"sqlite:///{db}")
    try:
        run = store.list_runs()[-1]
        pages = sorted(store.iter_pages(run.id),
                       key=lambda p: (p.fetched_at or _dt.datetime.min, p.id))  # fmt: skip
        docs = {d.url for d in store.iter_documents(run.id)}
    finally:
        store.close()
    fetched: set[str] = set()
    passed: set[str] = set()
    in_corpus: set[str] = set()
    rejected_parts: list[dict] = []
    off: collections.Counter = collections.Counter()
    off_by: collections.Counter = collections.Counter()
    for p in pages:
        url = p.final_url or p.url
        parts = p.relevance_parts or {}
        g = group_of.get(url)
        ok = (p.relevance or 0.0) >= threshold
        if g is not None:
            fetched.add(g)
            if ok:
                passed.add(g)
            else:
                rejected_parts.append({"p": p.relevance or 0.0, **parts})
            if p.url in docs:
                in_corpus.add(g)
        elif p.url in docs:
            t = truth["pages"].get(url) or {}
            off[(t.get("kind", "?"), t.get("category") or "-")] += 1
            lit, model = parts.get("literal"), parts.get("model")
            why = ("rejudged" if "rejudged_from" in parts else
                   "no model" if model is None else
                   "both" if lit >= threshold and model >= threshold else
                   "P_lit" if lit >= threshold else
                   "P_model" if model >= threshold else "mix")  # fmt: skip
            off_by[why] += 1
    n = len(groups)
    return {"groups": n, "unfetched": n - len(fetched), "rejected": len(fetched - passed),
            "passed_not_kept": len((passed - in_corpus) & fetched), "kept": len(in_corpus),
            "docs": len(docs), "off": off, "off_by": off_by, "rejected_parts": rejected_parts}


def cmd_split(args: argparse.Namespace) -> int:
    """Per category (pooled over the crawls found): the share of on-topic groups never
    fetched, fetched but rejected, passed but not kept; the off-topic documents."""
    import collections

    from relevance.topic import load_topic

    cats = args.categories.split(",") if args.categories else list(CATEGORIES)
    dbs = crawl_dbs(args.family, parse_seeds(args.seeds), cats, args.run)
    rows: dict[str, list[dict]] = collections.defaultdict(list)
    for (seed, cat), db in sorted(dbs.items()):
        _, truth = ensure_web(args.family, seed)
        thr = load_topic(topic_paths()[cat]).page_threshold
        rows[cat].append(split_crawl(db, truth, cat, thr))
    print(f"family {args.family}, seeds {args.seeds}, run {args.run}: on-topic groups lost "
          "(share of all), off-topic documents")
    print(f"{'category':<6}{'crawls':>7}{'groups':>7}{'unfetched':>10}{'rejected':>9}"
          f"{'not kept':>9}{'recall':>8}{'docs':>6}{'off':>5}{'prec':>7}  off by evidence; "
          "off by (kind, category)")  # fmt: skip
    tot = collections.Counter()
    for cat in cats:
        rs = rows.get(cat)
        if not rs:
            continue
        s = {k: sum(r[k] for r in rs) for k in ("groups", "unfetched", "rejected",
                                                 "passed_not_kept", "kept", "docs")}  # fmt: skip
        off = sum((r["off"] for r in rs), collections.Counter())
        by = sum((r["off_by"] for r in rs), collections.Counter())
        n_off = sum(off.values())
        tot.update(s)
        tot["off"] += n_off
        g = max(1, s["groups"])
        print(f"{cat:<6}{len(rs):>7}{s['groups']:>7}{s['unfetched'] / g:>10.3f}"
              f"{s['rejected'] / g:>9.3f}{s['passed_not_kept'] / g:>9.3f}{s['kept'] / g:>8.3f}"
              f"{s['docs']:>6}{n_off:>5}{1 - n_off / max(1, s['docs']):>7.3f}  "
              f"{dict(by.most_common())}; {[(f'{k}/{c}', v) for (k, c), v in off.most_common(4)]}")  # fmt: skip
        if args.verbose:
            rp = [x for r in rs for x in r["rejected_parts"]]
            for x in sorted(rp, key=lambda x: -x["p"]):
                print(f"      rejected on-topic: P {x['p']:.2f} lit {x.get('literal', 0):.2f} "
                      f"model {x.get('model', float('nan')):.2f} head {x.get('head', 0):.1f} "
                      f"text {x.get('text', 0):.1f}")  # fmt: skip
    g = max(1, tot["groups"])
    print(f"{'all':<6}{'':>7}{tot['groups']:>7}{tot['unfetched'] / g:>10.3f}"
          f"{tot['rejected'] / g:>9.3f}{tot['passed_not_kept'] / g:>9.3f}{tot['kept'] / g:>8.3f}"
          f"{tot['docs']:>6}{tot['off']:>5}{1 - tot['off'] / max(1, tot['docs']):>7.3f}")  # fmt: skip
    return 0


# -- calibrate: the acceptance's calibration map -----------------------------------------------
def fetched_points(family: str, seeds: list[int], cats: list[str],
                   run: str = "topicrawl") -> list[dict]:  # fmt: skip
    """Every fetched page of the recorded crawls (``crawl_dbs``): category, crawl, P(page),
    on-topic, and the page's dup group (corpus recall counts groups)."""
    import datetime as _dt

    from models.store import Store

    rows = []
    for (seed, cat), db in sorted(crawl_dbs(family, seeds, cats, run).items()):
        _, truth = ensure_web(family, seed)
        store = Store.from_url(f"sqlite:///{db}")
        try:
            runs = store.list_runs()
            if not runs or not (runs[-1].stats or {}).get("finish_reason"):
                continue  # a crawl still running
            pages = sorted(store.iter_pages(runs[-1].id),
                           key=lambda p: (p.fetched_at or _dt.datetime.min, p.id))  # fmt: skip
        finally:
            store.close()
        seen: set[str] = set()
        for p in pages:
            url = p.final_url or p.url
            if url in seen:
                continue
            seen.add(url)
            t = truth["pages"].get(url) or {}
            rows.append({"crawl": f"{family}{seed}-{cat}", "category": cat,
                         "p": float(p.relevance or 0.0),
                         "on": t.get("kind") == "article" and t.get("category") == cat,
                         "group": t.get("dup_group") or url})  # fmt: skip
    return rows


def isotonic_knots(rows: list[dict], knots: tuple[float, ...]) -> list[float]:
    """The isotonic regression of on-topic on P(page) (Zadrozny & Elkan 2002) at ``knots``."""
    from sklearn.isotonic import IsotonicRegression

    iso = IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True, out_of_bounds="clip")
    iso.fit([r["p"] for r in rows], [float(r["on"]) for r in rows])
    return [round(float(v), 3) for v in iso.predict(list(knots))]


def accept_figures(rows: list[dict], accept) -> tuple[float, float]:
    """Mean over crawls of the precision of the accepted fetched pages and of the recall of
    the fetched on-topic groups (acceptance alone: what was not fetched does not count)."""
    by: dict[str, list[dict]] = {}
    for r in rows:
        by.setdefault(r["crawl"], []).append(r)
    ps, rs = [], []
    for rr in by.values():
        acc = [r for r in rr if accept(r)]
        on = {r["group"] for r in rr if r["on"]}
        ps.append(sum(r["on"] for r in acc) / max(1, len(acc)))
        rs.append(len({r["group"] for r in acc if r["on"]}) / max(1, len(on)))
    return statistics.mean(ps), statistics.mean(rs)


def cmd_calibrate(args: argparse.Namespace) -> int:
    """Fit the acceptance's calibration map (:mod:`relevance.acceptance`) on the fetched pages
    of recorded crawls (any arm: P(page) does not depend on it); leave-one-category-out: the
    map fitted without each category, its cut at the page threshold, and the category's
    precision / recall of acceptance at that cut against the plain threshold."""
    from relevance.acceptance import KNOTS_P, AcceptanceMap

    cats = args.categories.split(",") if args.categories else list(CATEGORIES)
    rows = []
    for spec in args.crawls.split(";"):
        fam, seeds = spec.split(":")
        rows += fetched_points(fam, parse_seeds(seeds), cats, args.fit_run)
    crawls = sorted({r["crawl"] for r in rows})
    print(f"{len(rows)} fetched pages of {len(crawls)} crawls ({args.crawls})")
    bins: dict[int, list[int]] = {}
    for r in rows:
        b = bins.setdefault(min(9, int(r["p"] * 10)), [0, 0])
        b[0] += r["on"]
        b[1] += 1
    for k in sorted(bins):
        print(f"  P(page) in [{k / 10:.1f}, {k / 10 + 0.1:.1f}): on-topic "
              f"{bins[k][0]}/{bins[k][1]} = {bins[k][0] / bins[k][1]:.2f}")  # fmt: skip
    t = args.threshold
    maps = {c: AcceptanceMap(KNOTS_P, isotonic_knots([r for r in rows if r["category"] != c],
                                                     KNOTS_P)) for c in cats}  # fmt: skip
    print(f"\nleave-one-category-out, threshold {t}: cut | plain P / R -> calibrated P / R")
    pl, cl = [], []
    for c in cats:
        rc = [r for r in rows if r["category"] == c]
        if not rc:
            continue
        a = accept_figures(rc, lambda r: r["p"] >= t)
        b = accept_figures(rc, lambda r, m=maps[c]: m(r["p"]) >= t)
        pl.append(a)
        cl.append(b)
        print(f"{c:<4} {maps[c].cut(t):.3f} | {a[0]:.3f} / {a[1]:.3f} -> {b[0]:.3f} / {b[1]:.3f}")
    print(f"mean      | {statistics.mean(x[0] for x in pl):.3f} / {statistics.mean(x[1] for x in pl):.3f}"
          f" -> {statistics.mean(x[0] for x in cl):.3f} / {statistics.mean(x[1] for x in cl):.3f}")
    full = isotonic_knots(rows, KNOTS_P)
    print(f"\nall categories: KNOTS_ON = {tuple(full)}; cut {AcceptanceMap(KNOTS_P, full).cut(t):.3f}")
    if args.test:  # other crawls (e.g. held out): the fitted map and the shipped one
        fam, seeds = args.test.split(":")
        test = fetched_points(fam, parse_seeds(seeds), cats, args.run)
        print(f"\n{args.test} ({len({r['crawl'] for r in test})} crawls of run {args.run}), "
              "acceptance precision / recall of the fetched on-topic groups:")
        fitted, shipped = AcceptanceMap(KNOTS_P, full), AcceptanceMap()
        for name, m in (("plain", None), ("map fitted here", fitted), ("shipped map", shipped)):
            a = accept_figures(test, lambda r, m=m: (r["p"] if m is None else m(r["p"])) >= t)
            print(f"  {name:<16} {a[0]:.3f} / {a[1]:.3f}")
    return 0


# -- crawl: the benchmark ------------------------------------------------------------------
RUN_SETTINGS = {"topicrawl": {}}


def variant_topic(path: Path, run: str) -> Path:
    """The topic file of a run: ``topicrawl:KEY=VALUE+KEY=VALUE`` is topicrawl with those
    ``[learning]`` settings (e.g. ``topicrawl:weight=0.7``, ``topicrawl:combine=noisy-or``),
    written next to the topics under ``variants/``; any other run uses ``path`` as it is."""
    if not run.startswith("topicrawl:"):
        return path
    pairs = [kv.split("=", 1) for kv in run.split(":", 1)[1].split("+")]
    lines = [f"{k} = {v}" if _is_number(v) or v in ("true", "false") else f'{k} = "{v}"'
             for k, v in pairs]  # fmt: skip
    slug = "".join(ch if ch.isalnum() or ch in ".=" else "_" for ch in run.split(":", 1)[1])
    out = path.parent / "variants" / f"{path.stem}-{slug}.toml"
    out.parent.mkdir(parents=True, exist_ok=True)
    # written whole, then renamed: crawl commands started together write the same variant,
    # and a crawl must never read another's half-written file
    tmp = out.with_name(f"{out.name}.{os.getpid()}.tmp")
    tmp.write_text(path.read_text("utf-8") + "\n[learning]\n" + "\n".join(lines) + "\n", "utf-8")
    os.replace(tmp, out)
    return out


def _is_number(v: str) -> bool:
    try:
        float(v)
    except ValueError:
        return False
    return True


def crawl_one(family: str, seed: int, category: str, run: str, proxy: str, run_dir: Path,
              concurrency: int, extra: dict | None = None) -> dict:  # fmt: skip
    """One crawl of the portal web of (family, seed) for ``category``; its figures.
    ``extra``: Scrapy settings added to every run (``crawl --set``)."""
    from dataclasses import asdict

    from bench.baselines import BREADTH_FIRST_SETTINGS, KEYWORD_SETTINGS, ORACLE_SETTINGS
    from bench.harvest import CrawlSpec, measure, run_crawl
    from relevance.topic import load_topic

    out, truth = ensure_web(family, seed)
    topic = str(variant_topic(topic_paths()[category], run))
    settings = {"keyword": KEYWORD_SETTINGS, "breadth-first": BREADTH_FIRST_SETTINGS,
                "oracle": ORACLE_SETTINGS}.get(run, {})  # fmt: skip
    settings = {**settings, **(extra or {})}
    seeds = truth["seeds"]["portal"]
    targets = portal_targets(truth, category)
    budget = 2 * len(targets)
    slug = "".join(ch if ch.isalnum() or ch in ".-" else "_" for ch in run)  # a file name
    label = f"{family}{seed}-{CATEGORIES[category][0]}-{slug}"
    db, wall = run_crawl(CrawlSpec(slug, topic, dict(settings)), label, seeds, budget, proxy,
                         concurrency, category, run_dir, out / "ground_truth.json")  # fmt: skip
    figs = measure(db, wall, web="portal", label=run, truth=truth, category=category,
                   targets=targets, budget=budget, page_threshold=load_topic(topic).page_threshold,
                   single_topic_hosts=set())  # fmt: skip
    return {"family": family, "seed": seed, "category": category, **asdict(figs)}


def cmd_crawl(args: argparse.Namespace) -> int:
    from sitegen.server import ServerProcess

    cats = args.categories.split(",") if args.categories else list(CATEGORIES)
    runs = args.runs.split(",")
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
    run_dir = OUT / "topics-runs" / f"{stamp}-{os.getpid()}"
    run_dir.mkdir(parents=True, exist_ok=True)
    results_file = OUT / f"{args.results or f'topics-{args.family}'}.json"
    extra = dict(kv.split("=", 1) for kv in args.set)
    results = json.loads(results_file.read_text("utf-8")) if results_file.exists() else []
    for seed in parse_seeds(args.seeds):
        out, _ = ensure_web(args.family, seed)
        with ServerProcess(out) as proxy:
            for cat in cats:
                for run in runs:
                    t0 = time.perf_counter()
                    r = crawl_one(args.family, seed, cat, run, proxy.url, run_dir,
                                  args.concurrency, extra)  # fmt: skip
                    results = [x for x in results if (x["seed"], x["category"], x["label"])
                               != (seed, cat, run)] + [r]  # fmt: skip
                    results_file.write_text(json.dumps(results, ensure_ascii=False), "utf-8")
                    print(f"{args.family}{seed} {cat} {run:<14} hvN {r['harvest_first_n']:.3f} "
                          f"P {r['corpus_precision']:.3f} R {r['corpus_recall']:.3f} "
                          f"({time.perf_counter() - t0:.0f} s)", flush=True)  # fmt: skip
    report(args.family, results, args.write)
    return 0


def report(family: str, results: list[dict], write: Path | None) -> None:
    """Per category (mean over seeds): harvest over the first N, corpus precision and recall
    of every run; the targets of issue 10; a PNG of the harvest curves."""
    cats = [c for c in CATEGORIES if any(r["category"] == c for r in results)]
    runs = list(dict.fromkeys(r["label"] for r in results))
    seeds = sorted({r["seed"] for r in results})
    lines = [f"Family {family}, seeds {', '.join(map(str, seeds))} (mean over seeds), portal web, "
             "budget 2 × on-topic pages; (n): seeds crawled for the category:", "",
             "| category | " + " | ".join(f"{r} harvest first N | {r} precision | {r} recall"
                                          for r in runs) + " |",
             "|---|" + "---|---|---|" * len(runs)]  # fmt: skip
    per: dict[tuple[str, str], dict[str, float]] = {}
    for c in cats:
        cells = []
        for r in runs:
            xs = [x for x in results if x["category"] == c and x["label"] == r]
            m = {k: statistics.mean(x[k] for x in xs) if xs else float("nan")
                 for k in ("harvest_first_n", "corpus_precision", "corpus_recall")}  # fmt: skip
            per[(c, r)] = m
            cells += [f"{m[k]:.3f}" if xs else "—"
                      for k in ("harvest_first_n", "corpus_precision", "corpus_recall")]
        n = len({x["seed"] for x in results if x["category"] == c})
        lines.append(f"| {c} ({n}) | " + " | ".join(cells) + " |")
    keys = ("harvest_first_n", "corpus_precision", "corpus_recall")
    means = [statistics.mean(per[(c, r)][k] for c in cats) for r in runs for k in keys]
    lines.append("| mean | " + " | ".join(f"{v:.3f}" for v in means) + " |")
    if "topicrawl" in runs:
        t = {c: per[(c, "topicrawl")] for c in cats}
        prec = [v["corpus_precision"] for v in t.values()]
        rec = [v["corpus_recall"] for v in t.values()]
        hv = [v["harvest_first_n"] for v in t.values()]
        kw = [per.get((c, "keyword"), {}).get("harvest_first_n") for c in cats]
        lines += ["", "Targets of issue 10 (topicrawl, words-only topics, defaults):", "",
                  f"- harvest over the first N ≥ 0.75 in every category: min {min(hv):.3f} "
                  f"(mean {statistics.mean(hv):.3f}) — "
                  f"**{'met' if min(hv) >= 0.75 else 'MISSED'}**"]  # fmt: skip
        if all(k is not None for k in kw):
            gap = min(h - k for h, k in zip(hv, kw, strict=True))
            lines.append(
                f"- at least 0.15 above the keyword baseline in every category: "
                f"min gap {gap:+.3f} — **{'met' if gap >= 0.15 else 'MISSED'}**"
            )
        lines += [f"- corpus precision ≥ 0.95 mean, ≥ 0.90 worst: mean {statistics.mean(prec):.3f}, "
                  f"worst {min(prec):.3f} — **{'met' if statistics.mean(prec) >= 0.95 and min(prec) >= 0.9 else 'MISSED'}**",
                  f"- corpus recall ≥ 0.85 mean: {statistics.mean(rec):.3f} — "
                  f"**{'met' if statistics.mean(rec) >= 0.85 else 'MISSED'}**"]  # fmt: skip
    lines += paired(results, runs)
    text = "\n".join(lines)
    print(text)
    plot_curves(family, results, write.with_suffix(".png") if write else OUT / f"topics-{family}.png")
    if write:
        from bench.harvest import write_doc

        write_doc(write, text, title=f"Benchmark: words-only topics, template family {family}")
        print(f"written: {write}")


def paired(results: list[dict], runs: list[str]) -> list[str]:
    """Each ``topicrawl:...`` run against ``topicrawl`` over the crawls of the same results
    file, seed and category (one run of the benchmark, the same machine load): the mean
    difference and in how many pairs it rose / fell."""
    base = {(x.get("stem"), x["seed"], x["category"]): x for x in results
            if x["label"] == "topicrawl"}  # fmt: skip
    out = []
    for r in (r for r in runs if r.startswith("topicrawl:")):
        pairs = [(base[k], x) for x in results if x["label"] == r
                 and (k := (x.get("stem"), x["seed"], x["category"])) in base]  # fmt: skip
        if not pairs:
            continue
        out += ["", f"Paired, `{r}` − `topicrawl` ({len(pairs)} pairs of crawls in the same run):",
                ""]  # fmt: skip
        for k in ("harvest_first_n", "corpus_precision", "corpus_recall"):
            d = [b[k] - a[k] for a, b in pairs]
            up, down = sum(v > 0 for v in d), sum(v < 0 for v in d)
            se = statistics.stdev(d) / len(d) ** 0.5 if len(d) > 1 else float("nan")
            out.append(f"- {k}: mean {statistics.mean(d):+.3f} ± {se:.3f} (s.e.), "
                       f"rose in {up}, fell in {down}")  # fmt: skip
    return out


def plot_curves(family: str, results: list[dict], path: Path) -> None:
    """Harvest curves (mean over seeds) per category, one panel each; ASCII labels."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cats = [c for c in CATEGORIES if any(r["category"] == c for r in results)]
    runs = list(dict.fromkeys(r["label"] for r in results))
    rows = max(1, (len(cats) + 4) // 5)
    fig, axes = plt.subplots(rows, 5, figsize=(16, 3.25 * rows + 0.5), squeeze=False)
    xs = [10 * (i + 1) for i in range(10)]
    colors = {"topicrawl": "tab:blue", "keyword": "tab:olive", "breadth-first": "tab:gray"}
    for ax, c in zip(axes.ravel(), cats, strict=False):
        for r in runs:
            curves = [x["curve_harvest"] for x in results if x["category"] == c and x["label"] == r]
            if curves:
                mean = [statistics.mean(v) for v in zip(*curves, strict=True)]
                variant = "tab:red" if r.startswith("topicrawl:") else None  # not main's blue
                ax.plot(xs, mean, "-o", ms=3, label=r, color=colors.get(r, variant))
        ax.set_title(CATEGORIES[c][0])
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
    for ax in axes.ravel()[len(cats):]:
        ax.set_visible(False)
    axes[0][0].legend(fontsize=8)
    fig.suptitle(f"harvest rate vs % of budget (2N), family {family}, words-only topics")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fit", help="choose the literal-evidence coefficients (family a)")
    f.add_argument("--family", default="a")
    f.add_argument("--seeds", default="0,1")
    f.set_defaults(func=cmd_fit)
    g = sub.add_parser("pages", help="page-model settings, offline (family a)")
    g.add_argument("--family", default="a")
    g.add_argument("--seeds", default="0")
    g.add_argument("--positive", type=float, default=0.7)
    g.add_argument("--negative", type=float, default=0.1)
    g.add_argument("--c", type=float, default=10.0)
    g.add_argument("--em-lambda", type=float, default=1.0)
    g.add_argument("--em-steps", type=int, default=3)
    g.set_defaults(func=cmd_pages)
    k = sub.add_parser("combine", help="the rule mixing P_lit and P_model, offline (family a)")
    k.add_argument("--family", default="a")
    k.add_argument("--seeds", default="0,1")
    k.add_argument("--folds", type=int, default=2)
    k.set_defaults(func=cmd_combine)
    q = sub.add_parser("confusion", help="where literal evidence loses precision (offline)")
    q.add_argument("--family", default="a")
    q.add_argument("--seeds", default="0")
    q.add_argument("--idf", action="store_true", help="also compare idf-weighted topic words")
    q.set_defaults(func=cmd_confusion)
    y = sub.add_parser("replay", help="a crawl's pages again through variants (offline)")
    y.add_argument("--family", default="a")
    y.add_argument("--seeds", default="0")
    y.add_argument("--categories", default="")
    y.add_argument("--variants", default="", help="[learning] overrides KEY=VALUE+..., "
                   "comma-separated; an empty one is the defaults")
    y.add_argument("--dump", action="store_true", help="print every replayed page")
    y.set_defaults(func=cmd_replay)
    cb = sub.add_parser("calibrate", help="fit the acceptance's calibration map (dev crawls)")
    cb.add_argument("--crawls", default="b:1,2", help="FAMILY:SEEDS;... of recorded crawls")
    cb.add_argument("--categories", default="")
    cb.add_argument("--threshold", type=float, default=0.5)
    cb.add_argument("--test", default="", help="FAMILY:SEEDS of other crawls to evaluate on")
    cb.add_argument("--run", default="topicrawl", help="the run label of the --test crawls")
    cb.add_argument("--fit-run", default="topicrawl", help="the run label of the --crawls")
    cb.set_defaults(func=cmd_calibrate)
    def recorded_crawls(p: argparse.ArgumentParser, out: bool = True) -> argparse.ArgumentParser:
        """The arguments naming recorded crawls (:func:`crawl_dbs`)."""
        p.add_argument("--family", default="b")
        p.add_argument("--seeds", default="1")
        p.add_argument("--categories", default="")
        p.add_argument("--run", default="topicrawl")
        if out:
            p.add_argument("--out", default="", help="the bench/out directory holding the "
                           "crawls and webs (default: this checkout's)")  # fmt: skip
        return p

    recorded_crawls(sub.add_parser("final", help="the fetched pages judged again with the "
                                   "last models")).set_defaults(func=cmd_final)  # fmt: skip
    recorded_crawls(sub.add_parser("final-effect", help="corpus before and after the built "
                                   "final re-judgement, within each recorded crawl")
                    ).set_defaults(func=cmd_final_effect)  # fmt: skip

    mx = sub.add_parser("mixture", help="[learning] accept_mixture offline on recorded "
                        "crawls, with its choice by leave-one-out")  # fmt: skip
    mx.add_argument("--crawls", default="b:1,2;a:0", help='"FAMILY:SEEDS;..."')
    mx.add_argument("--categories", default="")
    mx.add_argument("--run", default="topicrawl")
    mx.add_argument("--components", default="2,3,4")
    mx.add_argument("--cuts", default="0.5,0.7,0.9")
    mx.add_argument("--max-loss", type=float, default=0.01)
    mx.add_argument("--se-margin", type=float, default=0.0,
                    help="bound the precision loss at the mean less this many s.e.")  # fmt: skip
    mx.add_argument("--out", default="")
    mx.set_defaults(func=cmd_mixture)
    me = recorded_crawls(sub.add_parser("mixture-effect", help="corpus with and without the "
                         "pages only accept_mixture accepted, within each recorded crawl"))
    me.add_argument("--cut", type=float, default=0.0, help="a stricter posterior cut read "
                    "from the same crawls (0: the crawl's own)")
    me.set_defaults(func=cmd_mixture_effect)  # fmt: skip
    lb = recorded_crawls(sub.add_parser("labels", help="the page model's pseudo-labels and "
                                        "ranking (ROC AUC) over recorded crawls"), out=False)
    lb.add_argument("--variants", default="", help="[learning] overrides as in replay")
    lb.add_argument("--ceiling", action="store_true",
                    help="also the learner's AUC on the true labels (5-fold)")
    lb.set_defaults(func=cmd_labels)
    sp = recorded_crawls(sub.add_parser("split", help="where crawls lost recall (fetching or "
                                        "acceptance)"), out=False)  # fmt: skip
    sp.add_argument("--verbose", action="store_true", help="every rejected on-topic page")
    sp.set_defaults(func=cmd_split)
    c = sub.add_parser("crawl", help="crawl each category's portal web (the benchmark)")
    c.add_argument("--family", default="a")
    c.add_argument("--seeds", default="0")
    c.add_argument("--categories", default="")
    c.add_argument("--runs", default="topicrawl,keyword,breadth-first")
    c.add_argument("--concurrency", type=int, default=4)
    c.add_argument("--write", type=Path)
    c.add_argument("--set", action="append", default=[], metavar="SETTING=VALUE",
                   help="a Scrapy setting for every run (e.g. TOPICRAWL_QUERY_VARIANTS_PER_PAGE=0)")
    c.add_argument("--results", help="results file stem under bench/out (default topics-FAMILY)")
    c.set_defaults(func=cmd_crawl)
    r = sub.add_parser("report", help="print (and write) the figures saved by crawl")
    r.add_argument("--family", default="a")
    r.add_argument("--write", type=Path)
    r.add_argument("--results", help="results file stems under bench/out, comma-separated "
                   "(default topics-FAMILY); the crawls of several are pooled")
    r.set_defaults(func=lambda a: report(a.family, [{**x, "stem": stem} for stem in (a.results or f"topics-{a.family}").split(",")
        for x in json.loads((OUT / f"{stem}.json").read_text("utf-8"))], a.write) or 0)  # fmt: skip
    args = ap.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
