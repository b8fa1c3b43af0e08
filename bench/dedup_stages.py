"""Where a dedup cascade's time goes, stage by stage, without cProfile's overhead.

Builds an index of ``--docs`` documents of the throughput benchmark's ``SentenceDocs``
(bench/dedup.py) with the default cascade (or ``--methods``), then checks and adds
``--probes`` fresh raw-text documents with the stage functions wrapped by ``perf_counter``
accumulators (the outermost call of each only; stages nest, so the shares do not add up to
100 %). Run it in two checkouts at the same time to
compare them (``cd <checkout> && python /path/to/bench/dedup_stages.py``: the working
directory's code is used).

    python bench/dedup_stages.py --docs 5000 --probes 1000 [--methods exact,containment]
    python bench/dedup_stages.py --docs 5000 --probes 1000 --letters   # LETTER_OPTIONS
    python bench/dedup_stages.py --docs 10000 --probes 1000 --letters --cpu  # in CPU time
"""

from __future__ import annotations

import argparse
import functools
import gc
import importlib.util
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, os.getcwd())

import dedup.containment  # noqa: E402
import dedup.exact  # noqa: E402
import dedup.spotsigs  # noqa: E402
import dedup.text  # noqa: E402
import topicrawl.segment as seg  # noqa: E402
from dedup.base import Doc  # noqa: E402
from dedup.cascade import DEFAULT_METHODS, EAGER_OPTIONS, LETTER_OPTIONS, Cascade  # noqa: E402

TIMES: dict[str, float] = defaultdict(float)
#: the clock the stages are timed with (``--cpu``: the thread's CPU time)
CLOCK = time.perf_counter
_ACTIVE: set[str] = set()


def wrap(owner: object, name: str, label: str) -> None:
    """Time ``owner.name`` under ``label`` (re-entrant calls count once)."""
    f = getattr(owner, name)

    @functools.wraps(f)
    def timed(*a, **k):
        if label in _ACTIVE:
            return f(*a, **k)
        _ACTIVE.add(label)
        t = CLOCK()
        try:
            return f(*a, **k)
        finally:
            TIMES[label] += CLOCK() - t
            _ACTIVE.discard(label)

    setattr(owner, name, timed)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=5000)
    ap.add_argument("--probes", type=int, default=1000)
    ap.add_argument(
        "--methods",
        default=",".join(DEFAULT_METHODS),
        help="the cascade's methods (default: the default cascade; exact-letters: "
        "bench/dedup.py's exact stage on letters)",
    )
    ap.add_argument("--letters", action="store_true",
                    help="the cascade with dedup.cascade.LETTER_OPTIONS (exact on letters, "
                         "SpotSigs verifying letter candidates)")  # fmt: skip
    ap.add_argument("--cpu", action="store_true",
                    help="time in CPU time (time.thread_time): steadier on a loaded machine")
    args = ap.parse_args(argv)
    global CLOCK
    CLOCK = time.thread_time if args.cpu else time.perf_counter
    spec = importlib.util.spec_from_file_location("bench_dedup", Path("bench") / "dedup.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    gen = bench.SentenceDocs()
    if "exact-letters" in args.methods.split(","):
        bench.register_letters_exact()  # the bench-only exact stage on letters
    seg.segment_zh("预热分词词典")
    names = args.methods.split(",")
    chosen = LETTER_OPTIONS if args.letters else EAGER_OPTIONS
    opts = {k: dict(v) for k, v in chosen.items() if k in names}
    c = Cascade.from_config({"methods": names, **opts})
    for i in range(args.docs):
        c.check_and_add(f"d{i}", Doc(gen.text(i)))
    texts = [gen.text(10**7 + k) for k in range(args.probes)]
    wrap(seg, "_segment", "segmentation (rjieba + token fix-ups)")
    wrap(dedup.text, "tokenize", "tokenize (segmentation included)")
    wrap(dedup.spotsigs.SpotSigsDetector, "signatures", "spotsigs signatures")
    wrap(dedup.containment, "cleaned", "containment cleaning")
    wrap(dedup.containment.ContainmentDetector, "features",
         "containment features (cleaning included)")  # fmt: skip
    wrap(dedup.containment.ContainmentDetector, "candidates", "containment candidates")
    wrap(dedup.spotsigs.SpotSigsDetector, "_sync", "spotsigs log replay (_sync)")
    wrap(dedup.text, "letters", "letters (exact and SpotSigs' candidates)")
    wrap(dedup.exact, "letters", "letters (exact and SpotSigs' candidates)")
    lazy = dedup.spotsigs.LetterCandidatesSpotSigs
    wrap(lazy, "sketch", "spotsigs letter sketch (minhash, band keys)")
    wrap(lazy, "candidates", "spotsigs letter candidates (sketch included)")
    wrap(lazy, "_stored_signatures", "spotsigs stored documents' signatures")
    for det in c.detectors:
        for method, what in (("query", "query (features included)"), ("add", "add"),
                             ("reprints_of", "reprints_of"), ("recheck_reprints", "recheck")):  # fmt: skip
            wrap(type(det), method, f"{det.name} {what}")
    gc.collect()
    seg.memo_clear()
    t0 = CLOCK()
    for k, t in enumerate(texts):
        c.check_and_add(f"p{k}", Doc(t))
    total = CLOCK() - t0
    n = args.probes
    print(f"{args.docs} documents indexed, {n} probes: {total / n * 1000:.3f} ms/doc, "
          f"decisions {dict(c.counts)}")  # fmt: skip
    for label in sorted(TIMES):
        print(f"  {label:45s} {TIMES[label] / n * 1000:7.3f} ms/doc {TIMES[label] / total:6.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
