"""Word-similarity sources and their combinations: quality on wordsim-297, speed in a crawl.

    python bench/similarity.py [--vectors FILE] [--write FILE]

1. quality — for each source (HowNet, Cilin, word vectors) and each combination (the HowNet
   + Cilin hybrid, Algorithm 1 over each dictionary source and the vectors): Spearman over
   the covered pairs (coverage), Spearman over all pairs (uncovered = 0) and Pearson, on the
   tune half of wordsim-297 (where every parameter was chosen), the held-out half and the
   whole set (``relevance.evaluate.split_pairs``, seed 0);
2. speed — the topic affinity (formula 3's inner sum) of never-seen words against a
   40-word topic, in batches of 200 as a page's new words arrive: words/s per source, best
   of 3 rounds of fresh words (target ≥ 2,000/s).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from relevance.cilin import CilinSimilarity  # noqa: E402
from relevance.combined import CombinedSimilarity, HybridSimilarity  # noqa: E402
from relevance.evaluate import evaluate_similarity, read_pairs, split_pairs  # noqa: E402
from relevance.hownet import HowNetSimilarity  # noqa: E402
from relevance.page import TopicRelevance  # noqa: E402
from relevance.topic import SimilarityConfig  # noqa: E402
from topicrawl.data import data_path  # noqa: E402


def sources(vectors: str | None) -> dict:
    d = SimilarityConfig()
    hn = HowNetSimilarity.from_dir(None)
    ci = CilinSimilarity.from_path(None, method=d.cilin_method)
    out: dict = {
        "hownet": hn,
        "cilin (path, 陈宏朝 2016)": CilinSimilarity.from_path(None, method="path"),
        "cilin (ic, 彭琦 2018)": ci,
    }
    hyb = HybridSimilarity(hn, ci, weight=d.hybrid_weight)
    out["hybrid (hownet + cilin ic)"] = hyb
    if vectors:
        from relevance.vectors import VectorSimilarity

        v = VectorSimilarity.from_path(vectors)
        out["vectors"] = v
        th = dict(th1=d.th1, th2=d.th2, alpha=d.alpha, beta=d.beta)
        for name, dic in (("hownet", hn), ("cilin", ci), ("hybrid", hyb)):
            for step1 in ("paper", "cut"):
                out[f"algorithm1 {step1} ({name} + vectors)"] = CombinedSimilarity(
                    dic, v, step1=step1, **th
                )
    return out


def quality(srcs: dict) -> list[str]:
    pairs = read_pairs(data_path("wordsim", "wordsim-297.txt"))
    tune, held = split_pairs(pairs)
    lines = [
        "| source | tune half (148): Spearman covered (coverage) / all / Pearson | "
        "held-out half (149) | whole (297) |",
        "|---|---|---|---|",
    ]
    for name, s in srcs.items():
        cells = []
        for ps in (tune, held, pairs):
            r = evaluate_similarity(name, ps, s.similarity, s.__contains__)
            cells.append(
                f"{r.spearman_covered:.3f} ({r.covered}) / {r.spearman_all:.3f} / "
                f"{r.pearson_covered:.3f}"
            )
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
        print(lines[-1], flush=True)
    return lines


class _Plain:
    """Candidate extractor stand-in: the benchmark hands over words directly."""

    def __call__(self, text: str) -> list[str]:
        return text.split()


def speed(srcs: dict) -> list[str]:
    terms = [
        w.strip()
        for w in data_path("topics", "dangjian_terms.txt").read_text(encoding="utf-8").split()
    ]
    topic = dict.fromkeys(terms[:40], 1.0)
    vocab: set[str] = set()
    with data_path("corpus", "peoples_daily_199801.txt").open(encoding="utf-8") as fh:
        for line in fh:
            vocab.update(t.split("/")[0] for t in line.split() if "/" in t)
    pool = sorted(w for w in vocab if len(w) >= 2 and w not in topic)
    random.Random(0).shuffle(pool)
    lines = ["| source | never-seen words/s, 40-word topic, batches of 200 |", "|---|---|"]
    for name, s in srcs.items():
        rel = TopicRelevance(topic, s, _Plain())
        rate = 0.0
        for r in range(3):
            words = pool[r * 2000 : (r + 1) * 2000]
            t = time.perf_counter()
            for lo in range(0, 2000, 200):
                rel.affinities(words[lo : lo + 200])
            rate = max(rate, 2000 / (time.perf_counter() - t))
        lines.append(f"| {name} | {rate:,.0f} |")
        print(lines[-1], flush=True)
    return lines


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vectors", help="vectors file (topicrawl vectors train)")
    ap.add_argument("--skip", nargs="*", default=[], choices=["quality", "speed"])
    ap.add_argument("--write", type=Path, help="write the tables (markdown) here")
    args = ap.parse_args()
    srcs = sources(args.vectors)
    out = []
    if "quality" not in args.skip:
        out += ["### wordsim-297", "", *quality(srcs), ""]
    if "speed" not in args.skip:
        out += ["### Speed", "", *speed(srcs), ""]
    if args.write:
        args.write.write_text("\n".join(out) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
