"""What containment's stand-ins (dropped pages standing in for their originals, issue 17
session 36) cost a checked document: the default cascade (exact, SpotSigs, containment) with
this tree's containment stage and with another checkout's (``--base``, e.g. a detached
worktree of main), alternating round by round in one process, on the throughput benchmark's
documents (``bench/dedup.py``'s :class:`SentenceDocs`: few copies, so the per-query lookups
alone) and on the article pages of small test webs (``--webs``: reprints, commentary pages
and cut halves, so pages are dropped and remembered); CPU ms a document, median of the
rounds, and the duplicates each code found.

The base's ``dedup/containment.py`` is loaded under another name and put in place of this
tree's containment detector in each of its cascades; everything else is this tree's.

    git worktree add --detach /tmp/base main
    python bench/stand_ins.py --base /tmp/base --docs 3000 --webs a1,b1,a2,b2 --rounds 4
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.checkouts import load_module  # noqa: E402
from dedup.base import REGISTRY, Doc  # noqa: E402
from dedup.cascade import Cascade  # noqa: E402
from dedup.containment import ContainmentDetector  # noqa: E402
from dedup.storage import MemoryStorage  # noqa: E402


def run(docs: list[Doc], detector_class) -> tuple[float, int]:
    """CPU ms a document of the default cascade over ``docs`` (a fresh index) with
    ``detector_class`` as its containment stage, and the duplicates found."""
    c = Cascade(MemoryStorage())
    c.detectors[-1] = detector_class(c.storage)
    t = time.process_time()
    dups = sum(c.check_and_add(str(i), d).duplicate is not None for i, d in enumerate(docs))
    return (time.process_time() - t) / len(docs) * 1000, dups


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="a checkout of the code to compare with")
    ap.add_argument("--docs", type=int, default=3000, help="SentenceDocs documents (0: none)")
    ap.add_argument("--webs", default="a1,b1", help="test webs as FAMILY+SEED ('': none)")
    ap.add_argument("--rounds", type=int, default=4, help="alternating rounds")
    args = ap.parse_args(argv)
    this = ContainmentDetector
    base = load_module("base_containment", Path(args.base) / "dedup" / "containment.py")
    REGISTRY["containment"] = this  # (loading the base registered its class)
    codes = {"base": base.ContainmentDetector, "this tree": this}
    sets: dict[str, list[Doc]] = {}
    if args.docs:
        mod = load_module("bench_dedup", ROOT / "bench" / "dedup.py")
        gen = mod.SentenceDocs()
        sets[f"SentenceDocs, {args.docs:,}"] = [Doc(gen.text(i)) for i in range(args.docs)]
    if args.webs:
        from bench.containment import web_pages

        logging.getLogger("trafilatura").setLevel(logging.ERROR)
        logging.getLogger("htmldate").setLevel(logging.ERROR)
        webs = args.webs.split(",")
        pages = [d for w in webs for _, _, d in web_pages(w[0], int(w[1:]))]
        sets[f"test webs {args.webs}, {len(pages):,} article pages (one index)"] = pages
    print(f"Default cascade, containment of the base and of this tree, {args.rounds} "
          f"alternating rounds (load average {os.getloadavg()[0]:.1f})\n")  # fmt: skip
    print("| documents | base ms/doc | this tree ms/doc | ratio (rounds) | duplicates base / "
          "this tree |")  # fmt: skip
    print("|---|---|---|---|---|")
    for name, docs in sets.items():
        ms: dict[str, list[float]] = {k: [] for k in codes}
        dups: dict[str, int] = {}
        for r in range(args.rounds):
            for code in list(codes) if r % 2 == 0 else list(codes)[::-1]:
                t, dups[code] = run(docs, codes[code])
                ms[code].append(t)
        med = {k: statistics.median(v) for k, v in ms.items()}
        ratios = ", ".join(f"{b / a:.2f}" for a, b in zip(ms["base"], ms["this tree"],
                                                           strict=True))  # fmt: skip
        print(f"| {name} | {med['base']:.3f} | {med['this tree']:.3f} | "
              f"{med['this tree'] / med['base']:.2f}× ({ratios}) | {dups['base']} / "
              f"{dups['this tree']} |", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
