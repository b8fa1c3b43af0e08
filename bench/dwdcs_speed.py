"""DWDCS key-concept extraction: fast (bit-parallel BFS) vs the straightforward networkx version.

For every cnews article in the paper's size classes (Table 1: 500-2,000 and 2,000-5,000
characters) the text is segmented and mapped to concepts once; then both versions extract the
key concepts from the same concept sequence (network construction included in both), each
timed as the minimum of ``--repeat`` runs, and their results are compared (they must be equal:
same concepts, same CB values, same order).  Also reported: the median time of the whole
per-document feature extraction (segmentation + concepts + key concepts + position lists).

    python bench/dwdcs_speed.py [--repeat 3] [--limit N]

With ``--quality PAIRS`` it instead scores this area's three methods (title + summary, feature
code + length with ``codes="first"`` and ``"multi"``, DWDCS) on a labelled pairs file such as
the one ``bench/neardup_zh.py`` writes, with the confusion counts per pair kind:

    python bench/dwdcs_speed.py --quality bench/out/neardup_zh/pairs.jsonl

Figures go to docs/benchmarks/dedup-algos.md; nothing here is asserted by the tests.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

# the project root first: bench/dedup.py would otherwise shadow the dedup package
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dedup import dwdcs  # noqa: E402
from topicrawl.data import data_path  # noqa: E402

CLASSES = (("500-2,000", 500, 2000), ("2,000-5,000", 2000, 5000))


def best_of(fn, repeat: int) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


#: (label, method, options) scored by --quality
VARIANTS = (
    ("title (length guard 1.5)", "title", {}),
    ("title (pure, no guard)", "title", {"max_length_ratio": None}),
    ("featurecode first a=1.10", "featurecode", {"codes": "first"}),
    ("featurecode multi a=1.10", "featurecode", {"codes": "multi"}),
    ("featurecode first a=1.30", "featurecode", {"codes": "first", "a": 1.3}),
    ("featurecode multi a=1.30", "featurecode", {"codes": "multi", "a": 1.3}),
    ("dwdcs", "dwdcs", {}),
    ("dwdcs sim_thr=0.95", "dwdcs", {"sim_thr": 0.95}),
)


def quality(pairs_file: str) -> int:
    """Precision, recall, F1 and per-kind counts of each variant: index ``a``, query ``b``."""
    import json
    from collections import Counter

    from dedup.base import make_detector
    from dedup.evaluate import DocCache, load_pairs
    from dedup.storage import MemoryStorage

    path = Path(pairs_file)
    pairs = load_pairs(path)
    kinds = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            kinds.append(json.loads(line).get("kind", "?"))
    docs = DocCache()
    print(f"# {len(pairs)} pairs from {path}, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC")
    print("variant                      P      R      F1    tp  fp  fn  tn   ms/pair  per kind")
    for label, method, options in VARIANTS:
        counts, per_kind, seconds = Counter(), Counter(), 0.0
        for pair, kind in zip(pairs, kinds, strict=True):
            a, b = docs(pair.a), docs(pair.b)
            t0 = time.perf_counter()
            det = make_detector(method, MemoryStorage(), **options)
            det.add("a", a)
            predicted = any(m.doc_id == "a" for m in det.query(b))
            seconds += time.perf_counter() - t0
            counts[
                ("t" if predicted == bool(pair.label) else "f") + ("p" if predicted else "n")
            ] += 1
            per_kind[(kind, int(predicted))] += 1
        tp, fp, fn, tn = (counts[k] for k in ("tp", "fp", "fn", "tn"))
        prec = tp / (tp + fp) if tp + fp else 0.0
        rec = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        kinds_txt = " ".join(
            f"{k}:{per_kind[(k, 1)]}/{per_kind[(k, 0)] + per_kind[(k, 1)]}"
            for k in dict.fromkeys(kinds)
        )
        print(
            f"{label:<26} {prec:.3f}  {rec:.3f}  {f1:.3f}  {tp:>3} {fp:>3} {fn:>3} {tn:>3}"
            f"  {seconds / len(pairs) * 1e3:>7.2f}  {kinds_txt}"
        )
    print("# per kind: pairs judged duplicate / pairs of that kind")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs per version; the minimum counts")
    ap.add_argument("--limit", type=int, default=0, help="at most N documents per class")
    ap.add_argument("--quality", metavar="PAIRS", help="score the methods on a pairs file instead")
    args = ap.parse_args(argv)
    if args.quality:
        return quality(args.quality)

    lines = data_path("corpus", "cnews_train.txt").read_text(encoding="utf-8").splitlines()
    texts = [line.split("\t", 1)[1] for line in lines if "\t" in line]
    lexicon = dwdcs.default_lexicon()
    dwdcs.tokenize("预热分词器")  # load jieba's dictionary outside the timings

    print(f"# DWDCS key-concept speed, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC")
    print(f"# python {platform.python_version()}, {platform.machine()}, repeat={args.repeat}")
    print(
        "class        docs  nodes(med)  fast ms(med)  networkx ms(med)  ratio(med of per-doc)"
        "  ratio(total)  equal  full extraction ms(med)"
    )
    all_equal = True
    for label, lo, hi in CLASSES:
        docs = [t for t in texts if lo <= len(t) < hi]
        if args.limit:
            docs = docs[: args.limit]
        fast_t, nx_t, ratios, nodes, full_t = [], [], [], [], []
        equal = 0
        for text in docs:
            seq = lexicon.concepts(dwdcs.tokenize(text))
            tf, fast = best_of(lambda s=seq: dwdcs.key_concepts(s), args.repeat)
            tn, ref = best_of(lambda s=seq: dwdcs.key_concepts_networkx(s), args.repeat)
            tx, _ = best_of(lambda t=text: dwdcs.extract_features(t, lexicon=lexicon), args.repeat)
            equal += fast == ref
            fast_t.append(tf)
            nx_t.append(tn)
            full_t.append(tx)
            ratios.append(tn / tf)
            nodes.append(len(dwdcs.concept_network(seq).nodes))
        all_equal &= equal == len(docs)
        print(
            f"{label:<12} {len(docs):>4}  {statistics.median(nodes):>10.0f}"
            f"  {statistics.median(fast_t) * 1e3:>12.2f}  {statistics.median(nx_t) * 1e3:>16.1f}"
            f"  {statistics.median(ratios):>21.1f}  {sum(nx_t) / sum(fast_t):>12.1f}"
            f"  {equal:>3}/{len(docs):<3}  {statistics.median(full_t) * 1e3:>10.1f}"
        )
    if not all_equal:
        print("ERROR: the fast and networkx key concepts differ", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
