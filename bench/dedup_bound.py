"""What the default chain's throughput would be if its features cost nothing: a bound for a
compiled feature pass (issue 13 item 5).

One process builds an index of ``--docs`` ``SentenceDocs`` documents (bench/dedup.py) with
the default chain (``LETTER_OPTIONS``) and one with rensa, then checks and adds ``--probes``
fresh documents in batches of 50 timed in CPU time (``time.thread_time``): every other
batch has its pages' features computed before the clock starts (the exact stage's
fingerprint with the letters, SpotSigs' letter sketch, containment's features with the
cleaning), so that batch times only the index work and the logic around it. Rensa is timed
on every batch. Medians of the batches. The working directory's code is used.

    python bench/dedup_bound.py --docs 10000 --probes 2000
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import dedup.containment  # noqa: E402
import dedup.exact  # noqa: E402
import dedup.spotsigs  # noqa: E402
import topicrawl.segment as seg  # noqa: E402
from bench.checkouts import load_module  # noqa: E402
from dedup.base import Doc  # noqa: E402
from dedup.cascade import DEFAULT_METHODS, LETTER_OPTIONS, Cascade  # noqa: E402

#: the feature functions whose results are computed before a "features free" batch
FEATURES = (
    (dedup.exact.ExactDetector, "features"),
    (dedup.spotsigs.LetterCandidatesSpotSigs, "sketch"),
    (dedup.containment.ContainmentDetector, "features"),
)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=10000)
    ap.add_argument("--probes", type=int, default=2000)
    args = ap.parse_args(argv)
    bench = load_module("bench_dedup", ROOT / "bench" / "dedup.py")
    gen = bench.SentenceDocs()
    seg.segment_zh("预热分词词典")
    c = Cascade.from_config({"methods": list(DEFAULT_METHODS),
                             **{k: dict(v) for k, v in LETTER_OPTIONS.items()}})  # fmt: skip
    r = bench.RensaBaseline()
    for i in range(args.docs):
        c.check_and_add(f"d{i}", Doc(gen.text(i)))
        r.check_and_add(f"d{i}", gen.text(i))
    # results computed before the clock, by (function, the text object): else computed
    ready: dict[tuple[str, int], Any] = {}

    def cached(name: str, f: Callable[..., Any]) -> Callable[..., Any]:
        def g(self: Any, doc: Doc) -> Any:
            key = (name, id(doc.text))
            return ready[key] if key in ready else f(self, doc)

        return g

    orig = {}
    for cls, name in FEATURES:
        f = getattr(cls, name)
        orig[cls] = f
        setattr(cls, name, cached(f"{cls.__name__}.{name}", f))
    owners = {type(d): d for d in c.detectors}
    gc.collect()
    full, free, rensa = [], [], []
    for b in range(0, args.probes, 50):
        texts = [gen.text(10**7 + k) for k in range(b, b + 50)]
        docs = [Doc(x) for x in texts]
        ready.clear()
        if (b // 50) % 2:
            for d in docs:
                for cls, name in FEATURES:
                    owner = owners[cls]
                    if hasattr(owner, "_last"):  # containment's one-document memo
                        owner._last = None
                    if name == "sketch":
                        owner._sketch_memo = None
                    ready[(f"{cls.__name__}.{name}", id(d.text))] = orig[cls](owner, d)
        t = time.thread_time()
        for k, d in enumerate(docs):
            c.check_and_add(f"p{b + k}", d)
        (free if (b // 50) % 2 else full).append((time.thread_time() - t) / 50 * 1000)
        t = time.thread_time()
        for k, x in enumerate(texts):
            r.check_and_add(f"p{b + k}", x)
        rensa.append((time.thread_time() - t) / 50 * 1000)
    ma, mb, mr = statistics.median(full), statistics.median(free), statistics.median(rensa)
    print(f"{args.docs:,} docs: chain {ma:.3f} ms/page, its features free {mb:.3f}, rensa "
          f"{mr:.3f}; chain ÷ rensa throughput {mr / ma:.2f}× → {mr / mb:.2f}× (batches "
          f"{len(full)} + {len(free)}), decisions {dict(c.counts)}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
