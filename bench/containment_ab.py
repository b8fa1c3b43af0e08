"""The containment stage of this tree against another checkout's (``--base``, e.g. a ``git
worktree`` of main), side by side in one process: features (cleaning, letters, CRC-32
sample, span keys) and the whole ``check_and_add``, timed in interleaved batches on the
throughput benchmark's documents (``SentenceDocs`` of bench/dedup.py), after building one
index of ``--docs`` documents each; the two must find the same hashes, lengths and
duplicates (checked while building).

The base's ``dedup/containment.py``, ``dedup/storage.py`` and ``postprocess/clean.py`` are
loaded under other names; everything else (``dedup.base``, the rest of ``postprocess``) is
this tree's.

    git worktree add --detach /tmp/base main
    python bench/containment_ab.py --base /tmp/base --docs 3000
    python bench/containment_ab.py --base /tmp/base --pages bench/out/neardup_zh --rounds 6

With ``--pages`` the documents are instead the pages of a dedup set (``pairs.jsonl``'s
pages, e.g. the generated set's 1072, many of them short): each round checks and adds all of
them into a fresh index of each code, the codes alternating round by round (median ms per
page); decisions may differ there, and the number of duplicates each found is printed.
"""

from __future__ import annotations

import argparse
import inspect
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.checkouts import load_module  # noqa: E402
from dedup import containment as new_containment  # noqa: E402
from dedup.base import Doc  # noqa: E402
from dedup.storage import MemoryStorage  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="a checkout of the code to compare with")
    ap.add_argument("--docs", type=int, default=3000, help="documents indexed first")
    ap.add_argument("--batches", type=int, default=20, help="interleaved batches of 50")
    ap.add_argument("--pages", default=None, metavar="SET",
                    help="time the pages of this dedup set (a directory with pairs.jsonl)")
    ap.add_argument("--rounds", type=int, default=6, help="with --pages: alternating rounds")
    args = ap.parse_args(argv)
    base = Path(args.base)
    old = load_module("base_containment", base / "dedup" / "containment.py")
    old_storage = load_module("base_storage", base / "dedup" / "storage.py")
    load_module("base_clean", base / "postprocess" / "clean.py")
    # the base's cleaned(), with the base's cleaner
    src = inspect.getsource(old.cleaned).replace("from postprocess.clean import",
                                                 "from base_clean import")  # fmt: skip
    exec(src, old.__dict__)  # noqa: S102 - the base's own source
    if args.pages:
        return _pages(Path(args.pages), args.rounds, old, old_storage)
    bench = load_module("bench_dedup", ROOT / "bench" / "dedup.py")
    gen = bench.SentenceDocs()
    dets = {"base": old.ContainmentDetector(old_storage.MemoryStorage()),
            "this tree": new_containment.ContainmentDetector(MemoryStorage())}  # fmt: skip
    for i in range(args.docs):
        doc = Doc(gen.text(i))
        a, b = (det.features(doc) for det in dets.values())
        if a.hashes != b.hashes or a.length != b.length:
            raise SystemExit(f"document {i}: the samples differ")
        got = [det.check_and_add(f"d{i}", doc) for det in dets.values()]
        if len({g.doc_id if g else None for g in got}) > 1:
            raise SystemExit(f"document {i}: decided differently: {got}")
    feats: dict[str, list[float]] = {k: [] for k in dets}
    steps: dict[str, list[float]] = {k: [] for k in dets}
    for nb in range(args.batches):
        docs = [Doc(gen.text(10**7 + 50 * nb + i)) for i in range(50)]
        for name in list(dets) if nb % 2 == 0 else list(dets)[::-1]:
            det = dets[name]
            t = time.perf_counter()
            for doc in docs:
                det._last = None  # (the features memo)
                det.features(doc)
            feats[name].append((time.perf_counter() - t) / len(docs) * 1000)
            t = time.perf_counter()
            for i, doc in enumerate(docs):
                det._last = None
                det.check_and_add(f"p{nb}-{i}", doc)
            steps[name].append((time.perf_counter() - t) / len(docs) * 1000)
    f = {k: statistics.median(v) for k, v in feats.items()}
    s = {k: statistics.median(v) for k, v in steps.items()}
    print(f"Containment alone, {args.docs:,} documents indexed, {args.batches} interleaved "
          f"batches of 50 (load average {os.getloadavg()[0]:.1f}); the same samples and "
          "decisions while building\n")  # fmt: skip
    print("| code | features ms/doc | check_and_add ms/doc |")
    print("|---|---|---|")
    for name in dets:
        print(f"| {name} | {f[name]:.3f} | {s[name]:.3f} |")
    print(f"| this tree ÷ base | {f['this tree'] / f['base']:.2f} | "
          f"{s['this tree'] / s['base']:.2f} |")
    return 0


def _pages(path: Path, rounds: int, old, old_storage) -> int:
    """``--pages``: check_and_add of every page of the set ``path`` into a fresh index, base
    and this tree alternating round by round; median ms per page."""
    from dedup.evaluate import DocCache, load_pairs

    cache = DocCache()
    pairs = load_pairs(path / "pairs.jsonl")
    docs = [cache(p) for p in sorted({p for pair in pairs for p in (pair.a, pair.b)})]
    make = {"base": lambda: old.ContainmentDetector(old_storage.MemoryStorage()),
            "this tree": lambda: new_containment.ContainmentDetector(MemoryStorage())}  # fmt: skip
    times: dict[str, list[float]] = {k: [] for k in make}
    found: dict[str, int] = {}
    for r in range(rounds):
        for name in list(make) if r % 2 == 0 else list(make)[::-1]:
            det = make[name]()
            t = time.perf_counter()
            got = [det.check_and_add(str(i), doc) for i, doc in enumerate(docs)]
            times[name].append((time.perf_counter() - t) / len(docs) * 1000)
            found[name] = sum(g is not None for g in got)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"Containment alone, the {len(docs)} pages of {path} into a fresh index, {rounds} "
          f"alternating rounds (load average {os.getloadavg()[0]:.1f})\n")  # fmt: skip
    print("| code | check_and_add ms/page | duplicates found |")
    print("|---|---|---|")
    for name in make:
        print(f"| {name} | {med[name]:.3f} | {found[name]} |")
    print(f"| this tree ÷ base | {med['this tree'] / med['base']:.2f} | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
