"""Algorithm 2, the published form against topicrawl's default, one deviation at a time.

    python bench/urls.py WEB_DIR [--category 时政]

On the article URLs of a local test web (``python -m sitegen build WEB_DIR``), Algorithm 3's
struct(url) = 1 ("similar to more than half of a sample of n = 20 on-topic URLs") as a
predictor of "same category": precision, recall and F1, mean of 5 samples (as
bench/relevance.py). Two scenarios: the portal with the most on-topic articles alone, and
all sites together. Algorithm 2 variants: ``paper`` (as published: host containment decides,
n = min parts, sums, 'www' rule when both parts are 'www', character Jaccard), ``path`` (the
default), and ``path`` with each of its deviations reverted to the paper's, alone. Each
variant at the thresholds of a small grid; the best F1 per variant is chosen on this same
data (in-sample: it says what each rule can do, not what a default will do elsewhere).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from relevance.evaluate import precision_recall_f1  # noqa: E402
from relevance.urls import _host_contains, _split, char_jaccard, jaccard  # noqa: E402

PAPER = dict(contain="decide", align="min", agg="sum", www="both", grams=1)
DEFAULT = dict(contain="host1", align="max", agg="mean", www="either", grams=2)


def score(u1: str, u2: str, v: dict, a=0.6, b=0.2, d=2.0, alpha=0.5, beta=0.5) -> float:
    """Algorithm 2 with each rule chosen by ``v`` (PAPER and DEFAULT are the two modes)."""
    h1, p1 = _split(u1)
    h2, p2 = _split(u2)
    jac = char_jaccard if v["grams"] == 1 else jaccard
    contained = _host_contains(h1, h2)
    if contained and v["contain"] == "decide":
        return float("inf")

    def parts(x, y, w0, step):
        n = min(len(x), len(y)) if v["align"] == "min" else max(len(x), len(y))
        num = den = 0.0
        w = w0
        for i in range(n):
            px = x[i] if i < len(x) else ""
            py = y[i] if i < len(y) else ""
            wi = max(w, 0.0 if v["agg"] == "sum" else 1e-6)
            www = (px == "www" and py == "www") if v["www"] == "both" else "www" in (px, py)
            if www and step is not None:
                wi /= d
            num += wi * (jac(px, py) if px and py else 0.0)
            den += wi
            w = w - step if step is not None else w / 2
        if v["agg"] == "sum":
            return num
        return num / den if den else 1.0

    hs = 1.0 if contained else parts(h1[::-1], h2[::-1], a, b)
    return alpha * hs + beta * parts(p1, p2, 1.0, None)


def struct_prf(arts, pos, v, th, category):
    ps, rs, fs = [], [], []
    rng = random.Random(1)
    for rep in range(5):
        src = pos[:]
        rng.shuffle(src)
        used = set(src[: len(src) // 2])
        sample = random.Random(rep).sample(sorted(used), min(20, len(used)))
        need = len(sample) // 2 + 1
        kept = [(u, c) for u, c in arts if u not in used]
        p, r, f = precision_recall_f1(
            [sum(score(u, s, v) > th for s in sample) >= need for u, _ in kept],
            [c == category for _, c in kept],
        )
        ps.append(p)
        rs.append(r)
        fs.append(f)
    return statistics.mean(ps), statistics.mean(rs), statistics.mean(fs)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("web", type=Path)
    ap.add_argument("--category", default="时政")
    args = ap.parse_args()
    truth = json.loads((args.web / "ground_truth.json").read_text(encoding="utf-8"))
    arts = [
        (u, e["category"])
        for u, e in truth["pages"].items()
        if e["kind"] == "article" and e["category"]
    ]
    cats: dict = {}
    for u, c in arts:
        cats.setdefault(urlsplit(u).hostname, set()).add(c)
    host = Counter(
        urlsplit(u).hostname
        for u, c in arts
        if c == args.category and len(cats[urlsplit(u).hostname]) > 1
    ).most_common(1)[0][0]
    variants = [("paper (as published)", PAPER), ("path (default)", DEFAULT)]
    for key in DEFAULT:
        variants.append((f"path, but {key} = paper's {PAPER[key]!r}", {**DEFAULT, key: PAPER[key]}))
    grid = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.75, 0.85, 1.0, 1.2)
    print("| URLs | Algorithm 2 | F1 at the mode's default threshold (0.1 paper, 0.75 path) | "
          "best F1 over thresholds (precision / recall, threshold) |")  # fmt: skip
    print("|---|---|---|---|")
    for name, sub in (
        (f"one site ({host})", [(u, c) for u, c in arts if urlsplit(u).hostname == host]),
        ("all sites", arts),
    ):
        pos = [u for u, c in sub if c == args.category]
        for label, v in variants:
            default_th = 0.1 if v["agg"] == "sum" else 0.75
            f_def = struct_prf(sub, pos, v, default_th, args.category)[2]
            best = max(
                ((*struct_prf(sub, pos, v, th, args.category), th) for th in grid),
                key=lambda t: t[2],
            )
            print(
                f"| {name}: {len(sub)} ({len(pos)}) | {label} | {f_def:.3f} | "
                f"{best[2]:.3f} ({best[0]:.2f} / {best[1]:.2f}, {best[3]}) |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
