"""What containment's small-document posting sets (``containment:sp``, issue 17 session 35)
cost a checked document: the default cascade (exact, SpotSigs, containment) over the
throughput benchmark's documents (``bench/dedup.py``'s :class:`SentenceDocs`), with and
without the small stored documents' candidate stage, alternating in one process.

    python bench/small_postings.py --docs 4000 --rounds 2
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from dedup.base import Doc  # noqa: E402
from dedup.cascade import Cascade  # noqa: E402
from dedup.containment import ContainmentDetector  # noqa: E402
from dedup.storage import MemoryStorage  # noqa: E402


def _sentence_docs():
    spec = importlib.util.spec_from_file_location("bench_dedup", ROOT / "bench" / "dedup.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.SentenceDocs()


def run(texts: list[str], on: bool) -> tuple[float, int]:
    """CPU ms a document, and the small documents indexed in ``containment:sp``."""
    stage = ContainmentDetector._small_stored_candidates
    if not on:
        ContainmentDetector._small_stored_candidates = lambda self, feats: set()
    try:
        c = Cascade(MemoryStorage(), ["exact", "spotsigs", "containment"])
        t = time.process_time()
        for i, text in enumerate(texts):
            c.check_and_add(str(i), Doc(text))
        ms = (time.process_time() - t) / len(texts) * 1000
    finally:
        ContainmentDetector._small_stored_candidates = stage
    det = c.detectors[-1]
    return ms, det.storage.hlen(det.key("sp"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=4000)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args(argv)
    gen = _sentence_docs()
    texts = [gen.text(i) for i in range(args.docs)]
    for r in range(args.rounds):
        off, _ = run(texts, False)
        on, small = run(texts, True)
        print(f"round {r + 1}: without the stage {off:.3f} ms a document, with it {on:.3f} "
              f"({on / off:.3f}×); small documents in containment:sp {small} of {args.docs}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
