"""Soak: a long focused crawl of an endless local web with hostile pages mixed in (issue 11).

    nice python bench/soak.py [--minutes 30] [--every 60] [--topic FILE] [--db-url URL]
                              [--write docs/benchmarks/soak.md] [--trace] [--trace-memory]
    python bench/soak.py --report WORKDIR/samples.jsonl      # the table and fit again

The web is :mod:`sitegen.hostile` ``--endless --distinct``: endless news articles (the
shared corpus's 598 texts, then two articles in three new People's Daily text, one in three
a near-duplicate), one hostile entry point per five articles (path calendars, endless path
variants, a 1 GB gzip bomb, a redirect loop, answers slower than the timeout, binary as
HTML, 20,000 nested ``<div>``, a 200,000-link farm, stray bytes in UTF-8). The crawl is
``scrapy crawl topic`` in a subprocess with a words-only topic
(``bench/words_only/shizheng_soak.toml``: the 时政 words, page threshold 0.1), a JOBDIR (frontier on disk), SQLite (or
``--db-url``) and ``CLOSESPIDER_TIMEOUT`` = the soak's length.

Every ``--every`` seconds the JOBDIR page journal's size on disk (``journal_mb``) and the
crawl process's resident memory (psutil, else
``/proc/PID/status``) is sampled with the crawl's own counts from its newest progress
snapshot (``run_snapshots``, written every few seconds): pages fetched and accepted, the
frontier (requests waiting) and the dedup index (documents added: pages checked less those
dropped as duplicates). The memory is then fitted by least squares as
``a + b·frontier + c·index``; "flat beyond the frontier and index growth" means the residual
has no trend, reported as its slope in MB per hour. The frontier and index grow with time
too, so a fit with time as a third term (``… + d·hours``, with its standard error) is
printed beside it: a large standard error means the two growths cannot be told apart.

``--trace`` adds a Scrapy extension (``bench/soak_trace.py``) that starts :mod:`tracemalloc`
when the spider opens and at every sample writes to ``WORKDIR/trace.txt`` the traced Python
memory beside the RSS, and the allocation sites that grew most since the first sample:
what RSS gains beyond the traced growth is outside Python's allocator (SQLite's page caches,
lxml, freed memory the C allocator keeps). Tracing slows the crawl and adds memory of its
own. Nothing is asserted.

``--trace-memory`` adds ``bench.soak_trace.MemoryAttribution`` instead (no tracemalloc: the
crawl runs at full speed between samples, a sample stops it 2–10 s): every sample, the
containers of 1,000 items or more reachable from the crawler, the spider and module globals
(length, deep size), the ``lru_cache`` sizes, SQLite, glibc's heap, Python's arenas and the
object counts by type, in ``WORKDIR/memory.jsonl``; the report adds the attribution table
(:func:`attribution`): each structure's growth and kind (:data:`KINDS`), and RSS split into
structures, SQLite, Python's free blocks, the residual in use and the freed heap kept.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from crawler.journal import journal_bytes  # noqa: E402
from sitegen.hostile import HOST, HostileServerProcess  # noqa: E402
from topicrawl.data import data_dir  # noqa: E402

#: the shared texts the soak's web is made of
CORPUS_FILES = ("cnews_train.txt", "peoples_daily_199801.txt")

DEFAULT_TOPIC = ROOT / "bench" / "words_only" / "shizheng_soak.toml"


def rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` in MB (psutil when installed, else ``/proc``); 0 when gone."""
    try:
        import psutil

        return psutil.Process(pid).memory_info().rss / 2**20
    except ImportError:
        pass
    except Exception:  # noqa: BLE001 (psutil.NoSuchProcess and friends)
        return 0.0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _query(db_url: str, sql: str) -> tuple[Any, ...] | None:
    """The first row of ``sql`` on the crawl's database, None while it cannot answer."""
    from sqlalchemy import create_engine, text

    if db_url.startswith("sqlite:///") and not Path(db_url.removeprefix("sqlite:///")).exists():
        return None
    engine = create_engine(db_url)
    try:
        with engine.connect() as conn:
            row = conn.execute(text(sql)).fetchone()
        return tuple(row) if row is not None else None
    except Exception:  # noqa: BLE001 (table not made yet, database busy: skip this sample)
        return None
    finally:
        engine.dispose()


def latest_snapshot(db_url: str) -> dict[str, Any] | None:
    """The newest ``run_snapshots`` row's figures (with its counters), or None."""
    row = _query(db_url, "SELECT stats FROM run_snapshots ORDER BY id DESC LIMIT 1")
    if not row:
        return None
    return row[0] if isinstance(row[0], dict) else json.loads(row[0])


def stored(db_url: str) -> tuple[int, int]:
    """Pages stored and accepted pages in the database."""
    row = _query(db_url, "SELECT count(*), sum(CASE WHEN accepted THEN 1 ELSE 0 END) FROM pages")
    return (int(row[0]), int(row[1] or 0)) if row else (0, 0)


def counts(snap: dict[str, Any] | None) -> dict[str, int | None]:
    """Pages fetched / accepted, frontier and dedup index size of a progress snapshot."""
    if snap is None:
        return {"fetched": None, "accepted": None, "frontier": None, "index": None}
    stats = snap.get("stats", {})
    dropped = sum(v for k, v in stats.items() if k.startswith("topicrawl/dedup/dropped/"))
    return {
        "fetched": int(snap.get("fetched", 0)),
        "accepted": int(snap.get("accepted", 0)),
        "frontier": int(snap.get("frontier", 0)),
        "index": int(stats.get("topicrawl/dedup/checked", 0)) - int(dropped),
    }


def fit(samples: list[dict[str, Any]], skip_seconds: float = 0.0) -> dict[str, float] | None:
    """Least squares of RSS on (frontier, index) over the samples after ``skip_seconds``
    (the start-up): per-item costs and the residual's slope (MB/h); the same with hours as a
    third term, its coefficient and standard error; and how far time is explained by the
    frontier and index (R², near 1: the fit cannot tell their growth from a leak)."""
    rows = [s for s in samples
            if s["frontier"] is not None and s["rss_mb"] > 0 and s["seconds"] > skip_seconds]  # fmt: skip
    if len(rows) < 5:
        return None
    y = np.array([s["rss_mb"] for s in rows], dtype=float)
    hours = np.array([s["seconds"] / 3600 for s in rows])
    items = np.array([[s["frontier"], s["index"]] for s in rows], dtype=float)
    base = np.column_stack([np.ones(len(rows)), items])
    coef, *_ = np.linalg.lstsq(base, y, rcond=None)
    resid = y - base @ coef
    slope = float(np.polyfit(hours, resid, 1)[0])
    # time on (frontier, index): R² near 1 means the residual is flat by construction
    t_coef, *_ = np.linalg.lstsq(base, hours, rcond=None)
    t_res = hours - base @ t_coef
    r2_time = 1 - float(t_res @ t_res) / float(((hours - hours.mean()) ** 2).sum())
    # with time as a third term, on standardized columns (the scales differ by 1e5)
    full = np.column_stack([items, hours])
    mean, sd = full.mean(axis=0), full.std(axis=0)
    sd[sd == 0] = 1.0
    z = np.column_stack([np.ones(len(rows)), (full - mean) / sd])
    zc, *_ = np.linalg.lstsq(z, y, rcond=None)
    res4 = y - z @ zc
    dof = max(len(rows) - 4, 1)
    cov = (res4 @ res4 / dof) * np.linalg.inv(z.T @ z)
    return {
        "intercept_mb": float(coef[0]),
        "kb_per_frontier_request": float(coef[1]) * 1024,
        "kb_per_indexed_document": float(coef[2]) * 1024,
        "residual_slope_mb_per_h": slope,
        "residual_sd_mb": float(resid.std()),
        "time_r2": r2_time,
        "time_term_mb_per_h": float(zc[3] / sd[2]),
        "time_term_se": float(np.sqrt(max(cov[3, 3], 0.0)) / sd[2]),
        "raw_slope_mb_per_h": float(np.polyfit(hours, y, 1)[0]),
        "samples": len(rows),
    }


def report(samples: list[dict[str, Any]], meta: dict[str, Any], skip_seconds: float = 0.0) -> str:
    """The markdown: command, table, throughput, end state and the memory fit."""

    def cell(v: Any) -> str:
        return "–" if v is None else f"{v:,}" if isinstance(v, int) else str(v)

    rows = ["| minute | RSS MB | pages fetched | accepted | frontier | dedup index |",
            "|---|---|---|---|---|---|"]  # fmt: skip
    rows += [f"| {s['seconds'] / 60:.1f} | {s['rss_mb']:.0f} | {cell(s['fetched'])} | "
             f"{cell(s['accepted'])} | {cell(s['frontier'])} | {cell(s['index'])} |"
             for s in samples]  # fmt: skip
    out = [f"Soak of {meta['minutes']:g} min ({meta['date']}, commit {meta['commit']}, load "
           f"average {meta['load']} at the start): `{meta['command']}`", "", *rows, ""]  # fmt: skip
    if "returncode" in meta:
        pages, acc, secs = meta["pages"], meta["accepted"], meta["elapsed"]
        out += [
            f"- exit status {meta['returncode']}; ended {secs - meta['limit']:+.0f} s from the "
            f"time limit ({meta['limit']} s, start-up included)",
            f"- pages stored {pages:,} ({pages / secs:.1f} pages/s over the run), accepted "
            f"{acc:,}; requests sent {meta['requests']:,}; tracebacks in the log: "
            f"{meta['tracebacks']}",
            f"- peak RSS {max((s['rss_mb'] for s in samples), default=0):.0f} MB; JOBDIR page "
            f"journal at most {max((s.get('journal_mb', 0) for s in samples), default=0):.2f} MB "
            f"(sampled), {samples[-1].get('journal_mb', 0) if samples else 0} MB at the last sample",
        ]
    f = fit(samples, skip_seconds)
    if f is None:
        out.append("- memory fit: fewer than 5 samples with a progress snapshot")
    else:
        out += [
            f"- memory, raw trend {f['raw_slope_mb_per_h']:+.0f} MB/h; fitted as "
            f"{f['intercept_mb']:.0f} MB + {f['kb_per_frontier_request']:.2f} kB per "
            f"frontier request + {f['kb_per_indexed_document']:.2f} kB per indexed document "
            f"({f['samples']} samples after minute {skip_seconds / 60:g})",
            f"- residual after frontier and index: slope {f['residual_slope_mb_per_h']:+.1f} "
            f"MB/h, sd {f['residual_sd_mb']:.1f} MB; with time as a third term "
            f"{f['time_term_mb_per_h']:+.1f} ± {f['time_term_se']:.1f} MB/h; time explained "
            f"by frontier and index: R² {f['time_r2']:.4f}",
        ]
    return "\n".join(out) + "\n"


#: what each big structure is, by a part of its path: per URL by design (grows with the
#: frontier or the index), or bounded (and by what); the attribution table prints it
KINDS: tuple[tuple[str, str], ...] = (
    ("scheduler.df.", "per URL seen (Scrapy's dupefilter)"),
    ("spider.best_priority", "per URL seen"),
    (".sent", "per URL fetched (fetch-once)"),
    ("trap_guard", "per page (text digests, query variants)"),
    ("page_model.pages", "bounded: ≤ 5,000 pages (`max_pages`)"),
    ("page_model.terms", "bounded: the reservoir's words"),
    ("page_model.fixed", "fixed: the topic's examples"),
    ("scorer._words", "bounded: ≤ 100,000 texts (`memo_size`, then emptied)"),
    ("._aff", "bounded: ≤ 2,000,000 words (`cache_size`, then emptied)"),
    ("extract._keep", "bounded: ≤ 500,000 words"),
    ("extract._excluded", "fixed: dictionary words"),
    ("link_model.", "bounded: ≤ 200,000 features (`max_features`)"),
    ("._memo", "bounded: ≤ 100,000 URLs (then emptied)"),
    ("dedup", "per indexed document"),
    ("()", "bounded: `lru_cache` maxsize"),
)


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def _kind(path: str) -> str:
    return next((kind for part, kind in KINDS if part in path), "?")


def attribution(rows: list[dict[str, Any]], skip_seconds: float = 0.0) -> str:
    """The markdown table of ``--trace-memory``, from the first sample after ``skip_seconds``
    to the last: the big structures (by path) and their growth; then RSS split into the
    structures, SQLite, Python's free blocks, the residual in use that no structure explains
    and the freed heap kept resident, each with its growth and trend (MB per hour); then the
    object types whose counts grew most."""
    rows = [r for r in rows if r["seconds"] >= skip_seconds] or rows[-1:]
    if len(rows) < 2:
        return "- memory attribution: fewer than 2 samples\n"
    a, b = rows[0], rows[-1]
    hours = max((b["seconds"] - a["seconds"]) / 3600, 1e-9)
    lines = [f"Memory attribution from {a['seconds'] / 60:.1f} to {b['seconds'] / 60:.1f} min "
             f"after the spider opened (pages fetched {a['fetched']:,} → {b['fetched']:,}; "
             f"a sample took {max(r['sample_seconds'] for r in rows):.1f} s at most):", "",
             "| structure | kind | length | MB | growth MB | MB/h |", "|---|---|---|---|---|---|"]  # fmt: skip
    paths = set(a["structures"]) | set(b["structures"])
    growth: list[tuple[float, str]] = []
    for p in paths:
        n0, mb0 = a["structures"].get(p, (0, 0.0))
        n1, mb1 = b["structures"].get(p, (0, 0.0))
        growth.append((mb1 - mb0, p))
    for dmb, p in sorted(growth, reverse=True):
        n0, mb0 = a["structures"].get(p, (0, 0.0))
        n1, mb1 = b["structures"].get(p, (0, 0.0))
        if abs(dmb) >= 0.5 or (mb1 >= 1 and n1 != n0):
            lines.append(f"| `{p}` | {_kind(p)} | {n0:,} → {n1:,} | {mb1:.1f} | {dmb:+.1f} | "
                         f"{dmb / hours:+.0f} |")  # fmt: skip
    # every sample split: RSS = in use (Python's arenas + glibc's heap in use) + the rest
    # (freed heap still resident, code); in use = structures + SQLite + Python's free blocks
    # + the residual in use that no structure explains (pages in flight, parse trees…)
    parts: dict[str, list[float]] = {k: [] for k in ("structures", "sqlite", "pyfree", "resid",
                                                     "kept", "rss")}  # fmt: skip
    for r in rows:
        in_use = (r.get("pymalloc") or {}).get("arenas", 0.0) + (r.get("malloc") or {}).get(
            "in_use", 0.0)
        st = sum(v[1] for v in r["structures"].values())
        pyfree = (r.get("pymalloc") or {}).get("free", 0.0)
        parts["structures"].append(st)
        parts["sqlite"].append(r["sqlite_mb"])
        parts["pyfree"].append(pyfree)
        parts["resid"].append(in_use - st - r["sqlite_mb"] - pyfree)
        parts["kept"].append(r["rss_mb"] - in_use)
        parts["rss"].append(r["rss_mb"])
    h = np.array([r["seconds"] / 3600 for r in rows])

    def row(name: str, kind: str, key: str) -> str:
        v = parts[key]
        slope = float(np.polyfit(h, v, 1)[0]) if len(v) > 2 else (v[-1] - v[0]) / hours
        return (f"| {name} | {kind} | | {v[-1]:.1f} | {v[-1] - v[0]:+.1f} | {slope:+.0f} "
                f"(min {min(v):.0f}, max {max(v):.0f}) |")  # fmt: skip

    ma, mb = a.get("malloc") or {}, b.get("malloc") or {}
    pa, pb = a.get("pymalloc") or {}, b.get("pymalloc") or {}
    lines += [
        row("all structures (above and below 0.5 MB)", "", "structures"),
        row("SQLite (`sqlite3_memory_used`)", "page caches", "sqlite"),
        row("Python's arenas: free blocks and pools (`sys._debugmallocstats`)", "fragmentation",
            "pyfree"),  # fmt: skip
        row("**residual in use**: Python's arenas + glibc heap in use (`mallinfo2`) less the "
            "rows above", "pages in flight, parse trees, anything unlisted", "resid"),  # fmt: skip
        row("RSS less the memory in use", "freed heap kept resident, code", "kept"),
        row("RSS", "", "rss"),
        "",
        "In the last six rows MB/h is the least-squares slope over every sample (with the "
        "range seen), in the structures' rows the growth divided by the hours between the "
        "first sample and the last.",
        f"glibc heap in use {ma.get('in_use', 0.0):.0f} → {mb.get('in_use', 0.0):.0f} MB, "
        f"freed but kept (fordblks, resident or trimmed) {ma.get('free_kept', 0.0):.0f} → "
        f"{mb.get('free_kept', 0.0):.0f} MB; Python's arenas {pa.get('arenas', 0.0):.0f} → "
        f"{pb.get('arenas', 0.0):.0f} MB, its allocated blocks {a['py_blocks']:,} → "
        f"{b['py_blocks']:,}.",
        "Objects tracked by the garbage collector whose count grew most: "
        + ", ".join(
            f"{t} {b['types'].get(t, 0) - a['types'].get(t, 0):+,}"
            for t in sorted(b["types"], key=lambda t: a["types"].get(t, 0) - b["types"][t])[:12]
        ),
    ]
    return "\n".join(lines) + "\n"


def _commit() -> str:
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                         text=True, check=False)  # fmt: skip
    return out.stdout.strip() or "?"


def crawl_command(args: argparse.Namespace, work: Path, db_url: str) -> list[str]:
    """``scrapy crawl topic`` with the soak's settings."""
    limit = int(args.minutes * 60)
    cmd = [sys.executable, "-m", "scrapy", "crawl", "topic", "-a", f"seeds=http://{HOST}/",
           "-a", f"topic={args.topic}"]  # fmt: skip
    settings: dict[str, Any] = {
        "TOPICRAWL_DB_URL": db_url, "JOBDIR": str(work / "job"),
        "CLOSESPIDER_TIMEOUT": limit, "AUTOTHROTTLE_ENABLED": False, "DOWNLOAD_DELAY": 0,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 8, "DOWNLOAD_TIMEOUT": 10,
        "TOPICRAWL_PROGRESS_INTERVAL": min(args.every, 10.0),
        "TOPICRAWL_PROGRESS_SNAPSHOTS": True,
        "LOG_FILE": str(work / "crawl.log"), "LOG_LEVEL": "INFO", "TOPICRAWL_SUMMARY": False,
    }  # fmt: skip
    if args.trace or args.trace_memory:
        from crawler import settings as project

        ext = dict(project.EXTENSIONS)
        if args.trace:
            ext["bench.soak_trace.TraceMallocSamples"] = 900
            settings["SOAK_TRACE_FILE"] = str(work / "trace.txt")
        if args.trace_memory:
            ext["bench.soak_trace.MemoryAttribution"] = 901
            settings["SOAK_MEMORY_FILE"] = str(work / "memory.jsonl")
        settings |= {"EXTENSIONS": json.dumps(ext), "SOAK_TRACE_SECONDS": args.every}
    for k, v in settings.items():
        cmd += ["-s", f"{k}={v}"]
    return cmd


def run(args: argparse.Namespace) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Serve the web, run the crawl, sample it; the samples and the run's figures."""
    limit = int(args.minutes * 60)
    work = Path(tempfile.mkdtemp(prefix="topicrawl-soak-"))
    db_url = args.db_url or f"sqlite:///{work / 'soak.db'}"
    argv = " ".join(sys.argv[1:])
    meta: dict[str, Any] = {
        "minutes": args.minutes, "date": dt.date.today().isoformat(), "commit": _commit(),
        "load": " ".join(f"{x:.1f}" for x in os.getloadavg()), "limit": limit,
        "command": f"nice python bench/soak.py {argv}".strip(), "work": str(work),
    }  # fmt: skip
    samples_file = work / "samples.jsonl"
    print(f"work directory: {work}", flush=True)
    with HostileServerProcess("--endless", "--distinct", "--slow", "40") as web:
        env = {**os.environ, "http_proxy": web.url, "HTTP_PROXY": web.url, "no_proxy": "",
               "SCRAPY_SETTINGS_MODULE": "crawler.settings", "PYTHONPATH": str(ROOT)}  # fmt: skip
        env.pop("TOPICRAWL_REDIS_URL", None)
        start = time.monotonic()
        with (work / "crawl.out").open("w") as out:
            proc = subprocess.Popen(crawl_command(args, work, db_url), cwd=work, env=env,
                                    stdout=out, stderr=subprocess.STDOUT)  # fmt: skip
            samples: list[dict[str, Any]] = []
            next_at = start + args.every
            while proc.poll() is None:
                time.sleep(0.5)
                if time.monotonic() < next_at:
                    continue
                next_at += args.every
                sample = {"seconds": round(time.monotonic() - start),
                          "rss_mb": round(rss_mb(proc.pid), 1),
                          "journal_mb": round(journal_bytes(work / "job") / 2**20, 2),
                          **counts(latest_snapshot(db_url))}  # fmt: skip
                if sample["rss_mb"] <= 0:
                    continue
                samples.append(sample)
                with samples_file.open("a") as fh:
                    fh.write(json.dumps(sample) + "\n")
                print(json.dumps(sample), flush=True)
        meta["elapsed"] = time.monotonic() - start
    meta["returncode"] = proc.returncode
    log = (work / "crawl.log").read_text(encoding="utf-8", errors="replace")
    meta["tracebacks"] = log.count("Traceback")
    meta["pages"], meta["accepted"] = stored(db_url)
    sent = re.findall(r"'downloader/request_count': (\d+)", log)
    meta["requests"] = int(sent[-1]) if sent else 0
    (work / "meta.json").write_text(json.dumps(meta, indent=1))
    return samples, meta


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument(
        "--minutes",
        type=float,
        default=30.0,
        help="length of the crawl (CLOSESPIDER_TIMEOUT), 30; 2 for a quick check",
    )
    ap.add_argument("--every", type=float, default=60.0, help="seconds between memory samples (60)")
    ap.add_argument(
        "--topic",
        type=Path,
        default=DEFAULT_TOPIC,
        help="topic file (default: bench/words_only/shizheng_soak.toml: the 时政 words, "
        "page threshold 0.1)",
    )
    ap.add_argument("--db-url", default="",
                    help="TOPICRAWL_DB_URL (default: a SQLite file in the work directory); "
                         "a PostgreSQL URL works too")  # fmt: skip
    ap.add_argument("--skip-minutes", type=float, default=2.0,
                    help="leave the first minutes (start-up, first hostile pages) out of the "
                         "fit (2)")  # fmt: skip
    ap.add_argument("--write", type=Path, help="write the figures (markdown) to this file")
    ap.add_argument("--trace", action="store_true",
                    help="tracemalloc in the crawl: the growing allocation sites per sample "
                         "in WORKDIR/trace.txt (slower)")  # fmt: skip
    ap.add_argument("--trace-memory", action="store_true",
                    help="the big structures reachable from the crawler and modules, glibc's "
                         "heap, SQLite and object counts every sample in WORKDIR/memory.jsonl, "
                         "and the attribution table of the growth after --skip-minutes")  # fmt: skip
    ap.add_argument(
        "--report",
        type=Path,
        metavar="SAMPLES",
        help="print the table and fit of an earlier run's samples.jsonl, no crawl",
    )
    ap.add_argument("--until-minutes", type=float, default=0.0,
                    help="with --report: only the samples up to this minute (compare a long "
                         "run's start with a short one)")  # fmt: skip
    ap.add_argument("--keep", action="store_true",
                    help="keep the work directory's database (it is deleted otherwise; the "
                         "samples, log and report stay)")  # fmt: skip
    args = ap.parse_args(argv)
    args.topic = args.topic.resolve()
    missing = [n for n in CORPUS_FILES if not (data_dir() / "corpus" / n).exists()]
    if missing and not args.report:  # the web would be 8 sentences reshuffled: all near-dups
        ap.error(f"{', '.join(missing)} not found under {data_dir() / 'corpus'}: set "
                 "TOPICRAWL_DATA to the shared data directory")  # fmt: skip
    if args.report:
        until = args.until_minutes * 60 + 30 if args.until_minutes else float("inf")
        samples = [s for s in _jsonl(args.report) if s["seconds"] <= until]
        meta_file = args.report.parent / "meta.json"
        meta = json.loads(meta_file.read_text()) if meta_file.exists() else {
            "minutes": samples[-1]["seconds"] / 60, "date": "?", "commit": "?", "load": "?",
            "command": "?"}  # fmt: skip
        text = report(samples, meta, args.skip_minutes * 60)
        mem = args.report.parent / "memory.jsonl"
        if mem.exists():
            rows = [r for r in _jsonl(mem) if r["seconds"] <= until]
            text += "\n" + attribution(rows, args.skip_minutes * 60)
    else:
        samples, meta = run(args)
        text = report(samples, meta, args.skip_minutes * 60)
        work = Path(meta["work"])
        if (work / "memory.jsonl").exists():
            text += "\n" + attribution(_jsonl(work / "memory.jsonl"), args.skip_minutes * 60)
        (work / "report.md").write_text(text, encoding="utf-8")
        if not args.keep:
            for name in ("soak.db", "soak.db-wal", "soak.db-shm"):
                (work / name).unlink(missing_ok=True)
            shutil.rmtree(work / "job", ignore_errors=True)
    print(text)
    if args.write:
        args.write.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
