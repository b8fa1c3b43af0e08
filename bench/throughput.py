"""Pages per second, CPU and peak memory of ``scrapy crawl topic`` against a plain Scrapy
spider that only follows links breadth-first (bench/bfs_spider.py), on the same local web,
same concurrency, AutoThrottle off, crawls interleaved (plain, topic, plain, topic …) so that
the shared machine's drift hits both alike.

    python bench/throughput.py [--pages 600] [--pairs 2] [--concurrency 16] [--topic FILE]
                               [--latency-ms 0] [--pool off,on] [--baseline DIR]

``--pool off,on`` runs the topic spider twice in every round, with the extraction pool off
(``TOPICRAWL_EXTRACT_WORKERS=0``, pages extracted in Scrapy's thread) and on (1 worker
process; crawler/extractpool.py), so the three spiders are measured side by side; the order
of the spiders turns from one round to the next. Without it the topic spider runs with
the project's default. ``--baseline DIR`` runs the topic spider(s) of another checkout
(say main's, with its own ``.venv``) in the same rounds: before and after side by side.

pages/s = responses received / Scrapy's ``elapsed_time_seconds`` (spider open to close);
CPU = user + system seconds of the crawl process and its children (the extraction
workers); peak memory = the crawl process's maximum RSS (``topicrawl/memory/peak_rss_mb``;
the plain spider: its ``ru_maxrss``), the workers' (``topicrawl/extract/workers_peak_rss_mb``)
and their sum. Every process is ``nice``d. Targets (issue 16): topic ≥ 0.8× the plain
spider's pages/s, peak memory ≤ 2×.

Both spiders record their crawl thread (Scrapy's reactor thread) from spider open to close
(crawler/threadcpu.py): its CPU, the time it waited runnable for a core (the machine's other
load; Linux's schedstat) and what is left of the elapsed time, idle (waiting for the network
or the extraction pool's worker). A third table prints them a response.

The workers are spawned, not forked: they share no heap with the crawl's process, only
the pages of the files both map (the Python binary, shared libraries, read-only data),
which the RSS of each counts in full, so the sum of peak RSS counts those twice. A second
table gives the memory at spider close of the topic crawls that record it: RSS, PSS (a
shared page divided among the processes that map it: the PSS of the processes add up) and
USS (private pages only), each as crawl process + workers (``topicrawl/memory/*_mb``,
``topicrawl/extract/workers_*_mb``, read from ``/proc/PID/smaps_rollup`` just before the
workers exit). The kernel keeps no peak of PSS, so the benchmark also samples every
process's ``smaps_rollup`` every 0.2 s while it runs (the plain spider's too) and prints the
peak of the PSS summed over the process tree, and of the RSS summed at the same instant: PSS
against PSS is the fair ratio when processes share pages (a worker forked from the crawl's
process would; docs/scale.md, 2026-11-28 i16m). "Peak RSS" stays the figure of the targets.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.harvest import OUT, ensure_web  # noqa: E402
from sitegen.server import ServerProcess, crawl_command  # noqa: E402

#: runs a command and prints its children's peak RSS (KiB) and CPU seconds as JSON, and the
#: peak over time of the PSS and of the RSS summed over the command's process and its
#: descendants (the extraction workers), sampled every SAMPLE_S seconds from
#: /proc/PID/smaps_rollup (the kernel keeps no peak of PSS; a peak between two samples is
#: missed, so these are lower bounds of the true peaks)
SAMPLE_S = 0.2
MEASURE = (
    "import json, resource, subprocess, sys, threading, time, os\n"
    "def tree(pid):\n"
    "    out, todo = [], [pid]\n"
    "    while todo:\n"
    "        p = todo.pop(); out.append(p)\n"
    "        try:\n"
    "            for t in os.listdir(f'/proc/{p}/task'):\n"
    "                todo += [int(c) for c in open(f'/proc/{p}/task/{t}/children').read().split()]\n"
    "        except OSError: pass\n"
    "    return out\n"
    "def mem(pid):\n"
    "    d = {}\n"
    "    try:\n"
    "        for line in open(f'/proc/{pid}/smaps_rollup'):\n"
    "            k, _, v = line.partition(':')\n"
    "            if k in ('Rss', 'Pss'): d[k] = int(v.split()[0]) / 1024\n"
    "    except (OSError, ValueError, IndexError): pass\n"
    "    return d\n"
    "peak = {'pss': 0.0, 'rss': 0.0, 'procs': 0}\n"
    "def sample(proc, every):\n"
    "    while proc.poll() is None:\n"
    "        ms = [mem(p) for p in tree(proc.pid)]\n"
    "        ms = [m for m in ms if m]\n"
    "        peak['pss'] = max(peak['pss'], sum(m.get('Pss', 0) for m in ms))\n"
    "        peak['rss'] = max(peak['rss'], sum(m.get('Rss', 0) for m in ms))\n"
    "        peak['procs'] = max(peak['procs'], len(ms))\n"
    "        time.sleep(every)\n"
    "every = float(sys.argv[1])\n"
    "p = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,"
    " text=True)\n"
    "t = threading.Thread(target=sample, args=(p, every), daemon=True); t.start()\n"
    "err = p.communicate()[1]\n"
    "t.join()\n"
    "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "sys.stderr.write(err)\n"
    "print(json.dumps({'rc': p.returncode, 'maxrss_kb': u.ru_maxrss,"
    " 'cpu_s': u.ru_utime + u.ru_stime, 'sampled_pss_mb': peak['pss'],"
    " 'sampled_rss_mb': peak['rss'], 'procs': peak['procs']}))\n"
)


def _stat(log: str, key: str) -> float | None:
    m = re.search(rf"'{re.escape(key)}': ([0-9.]+)", log)
    return float(m.group(1)) if m else None


def run(cmd: list[str], env: dict, cwd: Path) -> dict:
    proc = subprocess.run(["nice", sys.executable, "-c", MEASURE, str(SAMPLE_S), *cmd], cwd=cwd,
                          env=env, capture_output=True, text=True, check=False)  # fmt: skip
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    if out["rc"] != 0:
        raise RuntimeError(f"crawl failed ({out['rc']}): {proc.stderr[-3000:]}")
    log = proc.stderr
    responses = _stat(log, "response_received_count") or 0
    elapsed = _stat(log, "elapsed_time_seconds") or float("nan")
    main_mb = _stat(log, "topicrawl/memory/peak_rss_mb") or out["maxrss_kb"] / 1024
    workers_mb = _stat(log, "topicrawl/extract/workers_peak_rss_mb") or 0.0
    workers_cpu = _stat(log, "topicrawl/extract/workers_cpu_s") or 0.0
    return {
        "responses": int(responses),
        "elapsed_s": elapsed,
        "pages_per_s": responses / elapsed,
        "cpu_s": out["cpu_s"],
        "cpu_ms_per_page": 1000 * out["cpu_s"] / max(1, responses),
        "main_cpu_ms_per_page": 1000 * (out["cpu_s"] - workers_cpu) / max(1, responses),
        "workers_cpu_ms_per_page": 1000 * workers_cpu / max(1, responses),
        "main_mb": main_mb,
        "workers_mb": workers_mb,
        "peak_mb": main_mb + workers_mb,
        "sampled_pss_mb": out.get("sampled_pss_mb", 0.0),
        "sampled_rss_mb": out.get("sampled_rss_mb", 0.0),
        "pooled": int(_stat(log, "topicrawl/extract/pages") or 0),
        **{f"{who}_{key}_mb": _stat(log, f"topicrawl/{where}{key}_mb")
           for who, where in (("main", "memory/"), ("workers", "extract/workers_"))
           for key in ("rss", "pss", "uss")},  # at close; None when not recorded
        "stoplists": _stat(log, "topicrawl/memory/justext_stoplists"),
        "inline_busy": int(_stat(log, "topicrawl/extract/inline_busy") or 0),
        "waited_busy": int(_stat(log, "topicrawl/extract/waited_busy") or 0),
        # the store's cleaner: its extractions in the worker (Scrapy's thread waits for each),
        # the pages it extracted again and kept, and per drop reason of the given text
        "reextracted": int(_stat(log, "topicrawl/clean/reextracted") or 0),
        "calls": int(_stat(log, "topicrawl/extract/calls") or 0),
        "reasons": {m[1]: (int(m[2]), int(_stat(log, f"topicrawl/clean/reextracted/{m[1]}") or 0))
                    for m in re.finditer(r"'topicrawl/clean/reextract/(\w+)': (\d+)", log)},
        "skipped": {m[1]: int(m[2])
                    for m in re.finditer(r"'topicrawl/clean/reextract_skipped/(\w+)': (\d+)", log)},
        "documents": int(_stat(log, "topicrawl/clean/kept") or 0),
        "finish": (re.search(r"'finish_reason': '([a-z_]+)'", log) or [None, None])[1],
        # spider open to close (crawler/threadcpu.py; None for a checkout without it)
        "thread_s": _stat(log, "topicrawl/cpu/crawl_thread_s"),
        "waited_s": _stat(log, "topicrawl/cpu/crawl_thread_waited_s"),
        "window_cpu_s": _stat(log, "topicrawl/cpu/process_s"),
    }


def plain(proxy: str, seeds: list[str], pages: int, concurrency: int, tmp: Path) -> dict:
    settings = {
        "CLOSESPIDER_PAGECOUNT": pages, "CONCURRENT_REQUESTS": concurrency,
        "CONCURRENT_REQUESTS_PER_DOMAIN": concurrency, "AUTOTHROTTLE_ENABLED": False,
        "DOWNLOAD_DELAY": 0, "ROBOTSTXT_OBEY": True, "COOKIES_ENABLED": False,
        "TELNETCONSOLE_ENABLED": False, "LOG_LEVEL": "INFO",
    }  # fmt: skip
    cmd = [sys.executable, "-m", "scrapy", "runspider", str(ROOT / "bench" / "bfs_spider.py"),
           "-a", f"seeds={','.join(seeds)}"]  # fmt: skip
    for k, v in settings.items():
        cmd += ["-s", f"{k}={v}"]
    env = {**os.environ, "http_proxy": proxy, "HTTP_PROXY": proxy, "no_proxy": ""}
    env.pop("SCRAPY_SETTINGS_MODULE", None)
    return run(cmd, env, tmp)  # outside the project: Scrapy's default settings


def topic(proxy: str, seeds: list[str], pages: int, concurrency: int, topic_file: str,
          tmp: Path, n: int, workers: int | None = None,
          checkout: Path | None = None, pending: int | None = None,
          extra: dict[str, object] | None = None) -> dict:  # fmt: skip
    """``scrapy crawl topic`` of this checkout, or of ``checkout`` (its ``.venv``'s Python,
    run in it: ``--baseline``)."""
    settings: dict[str, object] = {
        "TOPICRAWL_DB_URL": f"sqlite:///{tmp}/topic-{n}.db", "AUTOTHROTTLE_ENABLED": False,
        "DOWNLOAD_DELAY": 0, "CONCURRENT_REQUESTS": concurrency,
        "CONCURRENT_REQUESTS_PER_DOMAIN": concurrency, "TOPICRAWL_PROGRESS_INTERVAL": 0,
        "LOG_LEVEL": "INFO",
    }  # fmt: skip
    if workers is not None:
        settings["TOPICRAWL_EXTRACT_WORKERS"] = workers
    if pending is not None:
        settings["TOPICRAWL_EXTRACT_PENDING"] = pending
    settings.update(extra or {})
    cmd, env = crawl_command(proxy, seeds, topic_file, args={"max_pages": pages},
                             settings=settings)  # fmt: skip
    if checkout is not None:
        cmd[0] = str(checkout / ".venv" / "bin" / "python")
    return run(cmd, env, checkout or ROOT)


POOL = {"off": 0, "on": 1}


def _reasons(r: dict) -> str:
    """'too_short 3/1, mostly_links 9/0': extracted again / kept, by the given text's drop
    reason (``-`` for a checkout whose cleaner does not count them)."""
    return ", ".join(f"{k} {a}/{b}" for k, (a, b) in sorted(r["reasons"].items())) or "-"


def _thread(r: dict) -> str:
    """'CPU 7.1 s, waited 3.2 s, idle 1.0 s': the crawl thread from spider open to close."""
    if r["thread_s"] is None:
        return "-"
    waited = r["waited_s"] or 0.0
    return (f"CPU {r['thread_s']:.1f} s, waited {waited:.1f} s, idle "
            f"{r['elapsed_s'] - r['thread_s'] - waited:.1f} s")  # fmt: skip


def _skipped(r: dict) -> str:
    return ", ".join(f"{k} {n}" for k, n in sorted(r["skipped"].items())) or "-"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=600)
    ap.add_argument("--pairs", type=int, default=2, help="rounds (each runs every spider once)")
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--topic", default="topics/shizheng.toml")
    ap.add_argument("--latency-ms", type=float, default=0.0)
    ap.add_argument("--web", type=Path, default=None, help="default bench/out/web_large[_b]")
    ap.add_argument("--family", choices=("a", "b"), default="a",
                    help="sitegen template family of the web (b: held out from tuning)")
    ap.add_argument("--pool", default="", help="off,on: the topic spider with the extraction "
                    "pool off and on, side by side (default: the project's setting)")  # fmt: skip
    ap.add_argument("--baseline", type=Path, default=None,
                    help="another checkout (with its own .venv) whose topic spider runs too, "
                    "with the same --pool values, interleaved: before vs after in one run")
    ap.add_argument("--pending", default="",
                    help="16,64: this checkout's topic spider with the pool on and each "
                    "TOPICRAWL_EXTRACT_PENDING, side by side (instead of --pool)")
    ap.add_argument("--overflow-wait", default="",
                    help="0,16: this checkout's topic spider with each "
                    "TOPICRAWL_EXTRACT_OVERFLOW_WAIT, side by side (with --baseline too)")
    ap.add_argument("--keep", type=Path, default=None,
                    help="keep the topic crawls' databases (topic-N.db, N in run order) here")
    args = ap.parse_args(argv)
    if args.web is None:
        args.web = OUT / ("web_large" if args.family == "a" else f"web_large_{args.family}")
    truth = ensure_web(args.web, 0, rebuild=False, family=args.family)
    seeds = truth["seeds"]["portal"]
    plain_name = "plain BFS spider"
    pools = {f"scrapy crawl topic, pool {v}": POOL[v] for v in args.pool.split(",") if v}
    pools = pools or {"scrapy crawl topic": None}
    topics: dict[str, tuple] = {}
    waits = [v for v in args.overflow_wait.split(",") if v] or [None]
    for checkout in ([args.baseline] if args.baseline else []) + [None]:
        where = ""
        if args.baseline:
            where = f" ({checkout.name})" if checkout else " (this checkout)"
        for name, workers in pools.items():
            for wait in waits if checkout is None else [None]:
                label = name + where + (f", overflow wait {wait}" if wait is not None else "")
                extra = {} if wait is None else {"TOPICRAWL_EXTRACT_OVERFLOW_WAIT": int(wait)}
                topics[label] = (workers, checkout, None, extra)
    if args.pending:
        topics = {f"scrapy crawl topic, pool on, {v} pending": (1, None, int(v))
                  for v in args.pending.split(",") if v}  # fmt: skip
    rows: dict[str, list[dict]] = {plain_name: [], **{name: [] for name in topics}}
    names = list(rows)
    load = [os.getloadavg()[0]]
    if args.keep:
        args.keep = args.keep.resolve()
        args.keep.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=args.keep) as tmp, ServerProcess(args.web,
                                                             latency_ms=args.latency_ms) as srv:
        for i in range(args.pairs):
            order = names[i % len(names):] + names[: i % len(names)]
            for name in order:
                if name == plain_name:
                    r = plain(srv.url, seeds, args.pages, args.concurrency, Path(tmp))
                else:
                    r = topic(srv.url, seeds, args.pages, args.concurrency, args.topic,
                              args.keep or Path(tmp), len(load), *topics[name])  # fmt: skip
                load.append(os.getloadavg()[0])
                rows[name].append(r)
                print(f"round {i + 1} {name}: {r['responses']} responses in {r['elapsed_s']:.1f}"
                      f" s = {r['pages_per_s']:.1f} pages/s, CPU {r['cpu_ms_per_page']:.1f} "
                      f"ms/page (workers {r['workers_cpu_ms_per_page']:.1f}), peak "
                      f"{r['main_mb']:.0f} + {r['workers_mb']:.0f} MB, {r['pooled']} pages "
                      f"extracted in the pool ({r['finish']}; {r['inline_busy']} overflowed "
                      f"inline, {r['waited_busy']} waited; the cleaner's extractions in "
                      f"the worker {r['calls']}, pages extracted again {_reasons(r)}, "
                      f"{r['reextracted']} kept, not tried {_skipped(r)}; "
                      f"{r['documents']} documents); crawl thread {_thread(r)}; "
                      f"load {load[-1]:.1f}",
                      flush=True)  # fmt: skip
    keys = ("pages_per_s", "cpu_ms_per_page", "main_cpu_ms_per_page", "workers_cpu_ms_per_page",
            "main_mb", "workers_mb", "peak_mb")  # fmt: skip
    med = {n: {k: statistics.median(r[k] for r in rs) for k in keys} for n, rs in rows.items()}
    print(f"\n{args.pages}-page budget, concurrency {args.concurrency}, latency "
          f"{args.latency_ms:g} ms, {args.pairs} interleaved rounds (median); load average "
          f"{min(load):.1f}–{max(load):.1f} (1 min) on {os.cpu_count()} cores\n")
    print("| spider | pages/s | × plain | CPU ms/page (main + workers) | peak RSS MB (main + "
          "workers = sum) | × plain |\n|---|---|---|---|---|---|")
    p = med[plain_name]
    for n, m in med.items():
        print(f"| {n} | {m['pages_per_s']:.1f} | {m['pages_per_s'] / p['pages_per_s']:.2f}× | "
              f"{m['cpu_ms_per_page']:.1f} ({m['main_cpu_ms_per_page']:.1f} + "
              f"{m['workers_cpu_ms_per_page']:.1f}) | {m['main_mb']:.0f} + {m['workers_mb']:.0f}"
              f" = {m['peak_mb']:.0f} | {m['peak_mb'] / p['peak_mb']:.2f}× |")  # fmt: skip
    print(f"\nPeak memory of the whole process tree (crawl process + workers), sampled every "
          f"{SAMPLE_S:g} s (PSS: shared pages divided among the processes that map them, so "
          "pages shared by the crawl process and a worker count once; RSS: the sum of the "
          "processes' RSS at the same instant)\n\n| spider | peak PSS MB | × plain | peak RSS "
          "sum MB | × plain |\n|---|---|---|---|---|")  # fmt: skip
    pp = statistics.median(r["sampled_pss_mb"] for r in rows[plain_name]) or float("nan")
    pr = statistics.median(r["sampled_rss_mb"] for r in rows[plain_name]) or float("nan")
    for n, rs in rows.items():
        a = statistics.median(r["sampled_pss_mb"] for r in rs)
        b = statistics.median(r["sampled_rss_mb"] for r in rs)
        each = ", ".join(f"{r['sampled_pss_mb']:.0f}" for r in rs)
        print(f"| {n} | {a:.0f} ({each}) | "
              f"{a / pp:.2f}× | {b:.0f} | {b / pr:.2f}× |")  # fmt: skip
    print("\nMemory at spider close, crawl process + workers (MB; workers spawned: they share "
          "only mapped files' pages)\n\n| spider | RSS | PSS | USS | jusText stoplists in "
          "the crawl process (rounds) |\n|---|---|---|---|---|")  # fmt: skip
    for n in topics:
        cells = []
        for key in ("rss", "pss", "uss"):
            mains = [r[f"main_{key}_mb"] for r in rows[n] if r[f"main_{key}_mb"] is not None]
            if not mains:
                cells.append("–")
                continue
            workers = statistics.median(r[f"workers_{key}_mb"] or 0.0 for r in rows[n])
            main_mb = statistics.median(mains)
            cells.append(f"{main_mb:.0f} + {workers:.0f} = {main_mb + workers:.0f}")
        loaded = [r["stoplists"] for r in rows[n] if r["stoplists"] is not None]
        cells.append(f"{int(sum(loaded))} of {len(loaded)}" if loaded else "–")
        print(f"| {n} | " + " | ".join(cells) + " |")
    print("\nThe crawl thread from spider open to close, ms a response (medians): its CPU, the "
          "time it waited runnable for a core (a loaded machine), the time it had nothing to "
          "do (the network, the pool's worker), and the crawl process's CPU\n\n| spider | "
          "crawl thread CPU | waited for a core | idle | process CPU |\n|---|---|---|---|---|")
    for n, rs in rows.items():
        got = [r for r in rs if r["thread_s"] is not None]
        if not got:
            print(f"| {n} | – | – | – | – |")
            continue

        def per(key: str, rs: list[dict] = got) -> float:
            return statistics.median(1000 * (r[key] or 0.0) / max(1, r["responses"]) for r in rs)

        idle = statistics.median(
            1000 * (r["elapsed_s"] - r["thread_s"] - (r["waited_s"] or 0.0)) / max(1, r["responses"])
            for r in got)  # fmt: skip
        print(f"| {n} | {per('thread_s'):.1f} | {per('waited_s'):.1f} | {idle:.1f} | "
              f"{per('window_cpu_s'):.1f} |")
    print()
    for n in topics:
        ratios = [a["pages_per_s"] / b["pages_per_s"]
                  for a, b in zip(rows[n], rows[plain_name], strict=True)]  # fmt: skip
        print(f"{n} / plain: pages/s {med[n]['pages_per_s'] / p['pages_per_s']:.2f}× (rounds: "
              f"{', '.join(f'{r:.2f}' for r in ratios)}; target ≥ 0.8×), peak memory "
              f"{med[n]['peak_mb'] / p['peak_mb']:.2f}× (target ≤ 2×)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
