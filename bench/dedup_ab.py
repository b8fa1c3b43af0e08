"""Inline throughput of the default cascade (``LETTER_OPTIONS``) in two checkouts, side by side.

Two processes, one per checkout (this one and ``--base``), each build an index of ``--docs``
``SentenceDocs`` documents (bench/dedup.py) with the default chain and one with rensa; then
they check and add the same fresh documents in batches of 50, **taking turns** (a token
file): only one process times at a time, so both see the same load on a shared machine
(bench/dedup.py run in two trees at once lets one tree's timed phase overlap the other's
index build). Each batch times the cascade and rensa one after the other (the order
alternating); medians of the batches. ``--cpu`` times the batches in the process's own CPU
time (``time.thread_time``) instead of wall time: on a machine with more runnable processes
than cores the wall time of a batch holds the others' turns too, the CPU time does not (it
still holds their cache contention).

    python bench/dedup_ab.py --base /work/base-checkout --docs 100000 --probes 1000 [--cpu]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path


def worker(args: argparse.Namespace) -> int:
    import gc
    import importlib.util
    import statistics
    import time

    sys.path.insert(0, os.getcwd())
    spec = importlib.util.spec_from_file_location("bench_dedup", Path("bench") / "dedup.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    import topicrawl.segment as seg
    from dedup.base import Doc
    from dedup.cascade import DEFAULT_METHODS, LETTER_OPTIONS, Cascade

    gen = bench.SentenceDocs()
    seg.segment_zh("预热分词词典")
    c = Cascade.from_config({"methods": list(DEFAULT_METHODS),
                             **{k: dict(v) for k, v in LETTER_OPTIONS.items()}})  # fmt: skip
    for i in range(args.docs):
        c.check_and_add(f"d{i}", Doc(gen.text(i)))
    r = bench.RensaBaseline()
    for i in range(args.docs):
        r.check_and_add(f"d{i}", gen.text(i))
    gc.collect()
    clock = time.thread_time if args.cpu else time.perf_counter
    token = Path(args.token)
    tc, tr = [], []
    for b in range(0, args.probes, 50):
        texts = [gen.text(10**7 + k) for k in range(b, b + 50)]
        while token.read_text() != args.me:  # the other checkout's turn
            time.sleep(0.002)
        seg.memo_clear()
        for which in (0, 1) if (b // 50) % 2 == 0 else (1, 0):
            t = clock()
            if which == 0:
                for k, x in enumerate(texts):
                    c.check_and_add(f"p{b + k}", Doc(x))
                tc.append((clock() - t) / 50)
            else:
                for k, x in enumerate(texts):
                    r.check_and_add(f"p{b + k}", x)
                tr.append((clock() - t) / 50)
        tmp = token.with_suffix(".tmp")
        tmp.write_text(args.other)
        tmp.replace(token)
    mc, mr = statistics.median(tc) * 1000, statistics.median(tr) * 1000
    what = "CPU" if args.cpu else "wall"
    print(f"{args.me} ({os.getcwd()}): {args.docs:,} docs, {what} time, cascade {mc:.3f} ms/doc "
          f"({1000 / mc:,.0f} docs/s), rensa {mr:.3f} ms/doc, cascade ÷ rensa throughput "
          f"{mr / mc:.3f}, decisions {dict(c.counts)}", flush=True)  # fmt: skip
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="the other checkout (its .venv is used)")
    ap.add_argument("--docs", type=int, default=10000)
    ap.add_argument("--probes", type=int, default=1000)
    ap.add_argument("--cpu", action="store_true",
                    help="time in CPU time (time.thread_time), not wall time")
    ap.add_argument("--me", help=argparse.SUPPRESS)
    ap.add_argument("--other", help=argparse.SUPPRESS)
    ap.add_argument("--token", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.token:
        return worker(args)
    here = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory() as tmp:
        token = Path(tmp) / "turn"
        token.write_text("this")
        procs = []
        for me, other, tree in (("this", "base", here), ("base", "this", Path(args.base))):
            cmd = [str(tree / ".venv" / "bin" / "python"), str(Path(__file__).resolve()),
                   "--base", args.base, "--docs", str(args.docs), "--probes", str(args.probes),
                   "--me", me, "--other", other, "--token", str(token),
                   *(["--cpu"] if args.cpu else [])]  # fmt: skip
            procs.append(subprocess.Popen(cmd, cwd=tree))
        return max(p.wait() for p in procs)


if __name__ == "__main__":
    sys.exit(main())
