"""Choose `topicrawl vectors train` defaults by measurement (issue 12, item 3).

    python bench/vectors.py [--grid default|small] [--corpora pd,cnews,titles] [--out FILE]

Segments the corpora once (as `topicrawl vectors train` does), trains each configuration of
the grid with one worker (reproducible), and prints Spearman over covered pairs, coverage
and Spearman over all pairs (uncovered = 0) of wordsim-297 on its *tune* half (the choice is
made there), its *held-out* half and the whole set (`relevance.evaluate.split_pairs`, seed 0).
Training time is wall-clock on a shared machine: compare it only within one run.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from relevance.evaluate import evaluate_similarity, read_pairs, split_pairs  # noqa: E402
from relevance.vectors import (  # noqa: E402
    TRAIN_DEFAULTS,
    VectorSimilarity,
    _iter_files,
    train_segmented,
    write_segmented,
)
from topicrawl.data import data_path  # noqa: E402

CORPORA = {
    "pd": ("corpus", "peoples_daily_199801.txt"),
    "cnews": ("corpus", "cnews_train.txt"),
    "titles": ("corpus", "thucnews_titles_dev.txt"),
}

# (label, overrides of TRAIN_DEFAULTS); kept small: each is a full training on 2 shared cores
GRIDS = {
    "default": [
        ("w2v sg d100 w5 e5 mc3 (old default)", dict(model="word2vec", epochs=5)),
        ("w2v sg d100 w5 e10", dict(model="word2vec", epochs=10)),
        ("fasttext sg d100 w5 e10 n1-3 (default)", dict(model="fasttext", epochs=10)),
        ("w2v sg d100 w5 e20", dict(model="word2vec", epochs=20)),
        ("fasttext sg d100 w5 e20 n1-3", dict(model="fasttext", epochs=20)),
        ("w2v cbow d100 w5 e20", dict(model="word2vec", sg=0, epochs=20)),
        ("w2v sg d100 w5 e20 mc1", dict(model="word2vec", min_count=1, epochs=20)),
        ("fasttext sg d100 w5 e20 n2-4", dict(model="fasttext", epochs=20, min_n=2, max_n=4)),
        ("w2v sg d200 w5 e20", dict(model="word2vec", vector_size=200, epochs=20)),
        ("w2v sg d100 w10 e20", dict(model="word2vec", window=10, epochs=20)),
    ],
    "small": [("w2v sg d100 w5 e5", dict(model="word2vec", epochs=5))],
}


def row(label: str, vec, sets) -> str:
    cells = []
    for pairs in sets:
        r = evaluate_similarity(label, pairs, vec.similarity, vec.__contains__)
        cells.append(f"{r.spearman_covered:.3f} ({r.covered}/{r.pairs}) {r.spearman_all:.3f}")
    return f"| {label} | " + " | ".join(cells) + " |"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--grid", default="default", choices=sorted(GRIDS))
    ap.add_argument("--corpora", default="pd,cnews,titles")
    ap.add_argument("--only", nargs="*", help="labels (prefixes) of the grid to run")
    ap.add_argument("--out", type=Path, help="also append the table rows to this file")
    ap.add_argument("--save-dir", type=Path, help="save each model there (gensim .kv)")
    args = ap.parse_args()
    pairs = read_pairs(data_path("wordsim", "wordsim-297.txt"))
    tune, held = split_pairs(pairs)
    paths = [data_path(*CORPORA[c]) for c in args.corpora.split(",")]
    print(f"corpora: {args.corpora}; defaults {TRAIN_DEFAULTS}", flush=True)
    print(
        "| configuration | tune half: Spearman covered (coverage) all | held-out half | "
        "whole wordsim-297 | train s |\n|---|---|---|---|---|",
        flush=True,
    )
    with tempfile.TemporaryDirectory() as tmp:
        seg = Path(tmp) / "seg.txt"
        write_segmented(_iter_files(paths), seg)
        for label, over in GRIDS[args.grid]:
            if args.only and not any(label.startswith(o) for o in args.only):
                continue
            t = time.perf_counter()
            kv = train_segmented(seg, **{**TRAIN_DEFAULTS, **over})
            secs = time.perf_counter() - t
            if args.save_dir:
                from relevance.vectors import save_vectors

                slug = "".join(ch if ch.isalnum() else "_" for ch in label)
                save_vectors(kv, args.save_dir / f"{slug}.kv")
            line = row(label, VectorSimilarity(kv), (tune, held, pairs)) + f" {secs:.0f} |"
            line = line.replace("| |", "|")
            print(line, flush=True)
            if args.out:
                with args.out.open("a", encoding="utf-8") as fh:
                    fh.write(f"{args.corpora}\t{line}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
