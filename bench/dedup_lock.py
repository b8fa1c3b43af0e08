"""How long a worker whose dedup lock holder died waits: the stall of issue 11.

    python bench/dedup_lock.py [--url redis://127.0.0.1:6379/15] [--runs 3]
                               [--holder killed|stopped] [--reactor]

A child process takes the Redis dedup index's cascade lock (``storage.lock("cascade")``, the
scale-out's lock on the shared index) and is then killed (``kill -9``) or stopped
(``SIGSTOP``) while it holds it; this process then times one ``Cascade.check_and_add`` on
the same namespace. With the lock's 60 s time to live (before issue 11's fix) it waits about
60 s; with the fenced 5 s lease about 5 s. Uses only ``RedisStorage``, ``Cascade`` and
``Doc``, so the same script measures an older checkout (run it from there). ``--reactor``:
the page goes through ``DedupPipeline.process_item`` on a running Twisted reactor instead,
and the longest gap between ticks of a 0.1 s ``LoopingCall`` meanwhile is printed (how long
the reactor was blocked). Nothing is asserted; the figures are printed.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import signal
import statistics
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from dedup.base import Doc  # noqa: E402
from dedup.cascade import Cascade  # noqa: E402
from dedup.storage import RedisStorage  # noqa: E402

TEXT = (
    "本赛季的联赛进入了最后阶段，主队在主场的比赛中以三比一战胜了对手。球队的主教练是在赛后"
    "接受采访的，他说球员的表现是出色的。下一轮的比赛将在周六进行，球迷的热情是高涨的。"
)


def _hold(url: str, namespace: str, ready) -> None:
    storage = RedisStorage(url, namespace)
    held = storage.lock("cascade")  # kept referenced: a collected generator releases it
    held.__enter__()  # taken and never released
    ready.set()
    time.sleep(3600)
    held.__exit__(None, None, None)


def one_run(url: str, holder: str) -> float:
    namespace = f"bench-dlock-{uuid.uuid4().hex[:10]}"
    ctx = mp.get_context("fork")
    ready = ctx.Event()
    child = ctx.Process(target=_hold, args=(url, namespace, ready), daemon=True)
    child.start()
    try:
        if not ready.wait(30):
            raise RuntimeError("the holder did not take the lock")
        os.kill(child.pid, signal.SIGKILL if holder == "killed" else signal.SIGSTOP)
        worker = Cascade(RedisStorage(url, namespace), ["exact", "spotsigs", "containment"])
        start = time.monotonic()
        worker.check_and_add("http://a/1", Doc(TEXT))
        waited = time.monotonic() - start
        worker.storage.clear()
        worker.storage.close()
        return waited
    finally:
        if child.is_alive():
            os.kill(child.pid, signal.SIGKILL)
        child.join(5)


def reactor_run(url: str, holder: str) -> tuple[float, float]:
    """(seconds until the page was checked, longest reactor gap) through the pipeline."""
    from twisted.internet import defer, reactor, task

    from crawler.items import PageItem
    from dedup.pipeline import DedupPipeline

    namespace = f"bench-dlock-{uuid.uuid4().hex[:10]}"
    backend = {"type": "redis", "url": url, "namespace": namespace}
    kwargs = {"lock_poll": 0.05} if "lock_poll" in DedupPipeline.__init__.__kwdefaults__ else {}
    pipe = DedupPipeline(["exact", "spotsigs", "containment"], backend=backend, **kwargs)
    pipe.process_item(PageItem(url="http://a/0", text="预热。" + TEXT[::-1], title="t"))
    ctx = mp.get_context("fork")
    ready = ctx.Event()
    child = ctx.Process(target=_hold, args=(url, namespace, ready), daemon=True)
    child.start()
    ticks: list[float] = []
    out: list[float] = []
    try:
        if not ready.wait(30):
            raise RuntimeError("the holder did not take the lock")
        os.kill(child.pid, signal.SIGKILL if holder == "killed" else signal.SIGSTOP)
        loop = task.LoopingCall(lambda: ticks.append(time.monotonic()))
        start = time.monotonic()

        def go() -> None:
            loop.start(0.1)
            d = defer.maybeDeferred(pipe.process_item, PageItem(url="http://a/1", text=TEXT))

            def done(_: object) -> None:
                out.append(time.monotonic() - start)
                reactor.callLater(0.25, reactor.stop)  # a few ticks after

            d.addBoth(done)

        reactor.callWhenRunning(go)
        reactor.run()
        loop.stop()
        gaps = [b - a for a, b in zip(ticks, ticks[1:], strict=False)]
        return out[0], max(gaps or [0.0])
    finally:
        if child.is_alive():
            os.kill(child.pid, signal.SIGKILL)
        child.join(5)
        pipe.close_spider(None)
        RedisStorage(url, namespace).clear()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", default="redis://127.0.0.1:6379/15")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--holder", choices=("killed", "stopped"), default="killed")
    ap.add_argument("--reactor", action="store_true", help="through the pipeline on a reactor")
    args = ap.parse_args(argv)
    if args.reactor:  # one run: a reactor does not restart
        waited, gap = reactor_run(args.url, args.holder)
        print(
            f"pipeline after a {args.holder} lock holder: page checked after {waited:.2f}s, "
            f"longest reactor gap {gap:.2f}s"
        )
        return 0
    times = [one_run(args.url, args.holder) for _ in range(args.runs)]
    print(
        f"check_and_add after a {args.holder} lock holder: "
        + ", ".join(f"{t:.2f}s" for t in times)
        + f" (median {statistics.median(times):.2f}s, lock_timeout default "
        f"{RedisStorage.__init__.__kwdefaults__['lock_timeout']}s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
