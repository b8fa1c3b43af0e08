"""``topicrawl export`` and ``topicrawl runs``: read stored crawls."""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import date
from pathlib import Path

from models.export import FORMATS, SPLIT_KEYS, ExportFilter, export_run
from models.store import (
    RUN_END_KEY,
    Store,
    absolute_db_url,
    display_url,
    resolve_db_url,
    spill_row,
)
from topicrawl.errors import ConfigError, DiskFullError, TopicrawlError
from topicrawl.outcome import EXIT_BUG as EXIT_BUG_OR_NAMED
from topicrawl.outcome import is_disk_full

DB_HELP = "database URL (default: $TOPICRAWL_DB_URL, else ./topicrawl.db)"


def register(sub: argparse._SubParsersAction) -> None:
    export = sub.add_parser(
        "export",
        help="write the corpus of a crawl run with its provenance (streaming)",
        description="Write the corpus documents of a run as JSON lines, plain text, Parquet "
        "or a Hugging Face dataset, each document with its URL, final URL, title, date, "
        "host, language, text, relevance (page and per part), the score of the link that "
        "led to it, the topic version, its duplicate cluster and its WARC record. Streams "
        "in bounded memory. Reads only: a missing database or run creates nothing, and "
        "--out is written only when the export succeeds.",
    )
    export.add_argument("--run", type=int, required=True, help="crawl run id (see `runs`)")
    export.add_argument(
        "--format", choices=FORMATS, default="jsonl",
        help="jsonl: one object a line; txt: texts separated by blank lines; parquet: one "
        "Parquet file (pyarrow); hf: a Hugging Face dataset directory (datasets' "
        "save_to_disk) with a dataset card README.md (default: jsonl)",
    )  # fmt: skip
    export.add_argument(
        "--out", type=Path,
        help="output file, or directory for hf and --split (default: standard output)",
    )  # fmt: skip
    export.add_argument("--min-relevance", type=float, metavar="R",
                        help="only documents whose page relevance is at least R")  # fmt: skip
    export.add_argument("--since", metavar="YYYY-MM-DD",
                        help="only documents published on or after this date (undated "
                        "documents are left out)")  # fmt: skip
    export.add_argument("--host", action="append", default=[], metavar="HOST",
                        help="only documents of this host (repeatable; *.example.com for "
                        "a domain and its subdomains)")  # fmt: skip
    export.add_argument("--split", type=float, metavar="SHARE",
                        help="write train and validation splits, SHARE (e.g. 0.1) of the "
                        "documents in validation")  # fmt: skip
    export.add_argument("--split-by", choices=SPLIT_KEYS, default="hash",
                        help="hash: by a hash of the URL; host: every page of a host in the "
                        "same split (default: hash)")  # fmt: skip
    export.add_argument("--db", help=DB_HELP)
    export.add_argument("--no-progress", action="store_true", help="no progress bar")
    export.set_defaults(func=cmd_export)

    runs = sub.add_parser(
        "runs",
        help="list crawl runs with their figures",
        description="List the crawl runs of a database: id, topic, start, pages, accepted "
        "pages, documents, whether it finished and its finish reason. Reads only: a "
        "missing database is reported, never created.",
    )
    runs.add_argument("--db", help=DB_HELP)
    runs.set_defaults(func=cmd_runs)
    register_spill(sub)


def open_for_reading(db: str | None) -> Store | None:
    """The database at ``db`` opened for reading, or None (and a line saying so) when
    there is none: nothing is created."""
    url = resolve_db_url(db)
    store = Store.open_existing(url)
    if store is None:
        print(
            f"no runs yet: no topicrawl database at {display_url(absolute_db_url(url))} "
            f"(crawl first: scrapy crawl topic ...; or pass --db URL)",
            file=sys.stderr,
        )
    return store


def cmd_export(args: argparse.Namespace) -> int:
    store = open_for_reading(args.db)
    if store is None:
        return EXIT_BUG_OR_NAMED
    if store.get_run(args.run) is None:
        raise TopicrawlError(f"no crawl run {args.run} in this database (list them: topicrawl runs)")
    if args.since:
        try:
            date.fromisoformat(args.since)
        except ValueError:
            raise ConfigError(f"--since {args.since!r} is not a date: use YYYY-MM-DD") from None
    flt = ExportFilter(min_relevance=args.min_relevance, since=args.since, hosts=args.host)
    progress = not args.no_progress and args.out is not None
    if args.out is not None and args.out.is_dir() and args.format != "hf" and args.split is None:
        raise ConfigError(
            f"--out {args.out} is a directory: name a file, e.g. "
            f"{args.out / ('corpus.' + args.format)}"
        )
    start = time.perf_counter()
    try:
        counts = export_run(
            store, args.run, args.out, args.format, flt=flt, split=args.split,
            split_by=args.split_by, progress=progress,
        )  # fmt: skip
        if args.out is None:
            sys.stdout.flush()
    except OSError as exc:
        if args.out is None and is_disk_full(exc):
            raise DiskFullError("disk full writing the export: free some space") from exc
        raise _write_error(args.out or Path("<stdout>"), exc) from exc
    n = sum(counts.values())
    detail = "" if list(counts) == ["all"] else " (" + ", ".join(
        f"{k} {v}" for k, v in counts.items()) + ")"  # fmt: skip
    seconds = time.perf_counter() - start
    print(
        f"exported {n} documents of run {args.run}{detail} in {seconds:.1f} s "
        f"({n / max(seconds, 1e-9):,.0f} documents/s)",
        file=sys.stderr,
    )
    return 0


def _write_error(out: Path, exc: OSError) -> TopicrawlError:
    if is_disk_full(exc):
        return DiskFullError(f"disk full writing {out}: free some space or choose another --out")
    return TopicrawlError(f"cannot write {out}: {exc.strerror or exc}")


def cmd_runs(args: argparse.Namespace) -> int:
    store = open_for_reading(args.db)
    if store is None:
        return 0
    runs = store.list_runs()
    if not runs:
        print("no runs yet (crawl first: scrapy crawl topic ...)", file=sys.stderr)
    for run in runs:
        stats = run.stats or {}
        print(
            f"{run.id}\t{run.topic_name}\t{run.started_at:%Y-%m-%d %H:%M}\t"
            f"pages={store.count_pages(run.id)}\taccepted={store.count_pages(run.id, True)}\t"
            f"documents={store.count_documents(run.id)}\t"
            f"finished={'yes' if run.finished_at else 'no'}\t"
            f"reason={stats.get('finish_reason', '')}"
        )
    return 0


def register_spill(sub: argparse._SubParsersAction) -> None:
    spill = sub.add_parser(
        "import-spill",
        help="store pages that a crawl spilled to files while the database was down",
        description="Store the pages of spill files (topicrawl-spill/*.jsonl, written when "
        "the database stayed unreachable; the crawl names them) into the database, and mark "
        "the run finished with the end record (finish reason, time, stats) the crawl could "
        "not write. Idempotent: a page already stored is updated, not doubled, and the "
        "marking is written again unchanged.",
    )
    spill.add_argument("files", nargs="+", type=Path, help="spill files (JSON lines)")
    spill.add_argument("--db", help=DB_HELP)
    spill.set_defaults(func=cmd_import_spill)


def cmd_import_spill(args: argparse.Namespace) -> int:
    store = Store.from_url(args.db)
    total = 0
    for path in args.files:
        by_run: dict[int, list[dict]] = {}
        ends: dict[int, dict] = {}
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    continue
                record = json.loads(line)
                if record.get("_end") is True or "_replaced" in record:
                    continue  # a writer spool's batch marks (crawler/storewriter.py)
                if RUN_END_KEY in record:  # the run's end, which the crawl could not write
                    ends[int(record["run_id"])] = record[RUN_END_KEY]
                    continue
                run_id, row = spill_row(line)
                by_run.setdefault(run_id, []).append(row)
        for run_id, rows in by_run.items():
            store.save_crawl_batch(run_id, rows)
            total += len(rows)
        said = [f"{path}: {sum(len(r) for r in by_run.values())} pages stored"]
        for run_id, end in ends.items():
            done = store.record_run_end(run_id, end)
            reason = (end.get("stats") or {}).get("finish_reason", "")
            said.append({
                "marked": f"run {run_id} marked finished ({reason}) at {end['finished_at']}",
                "later": f"run {run_id} kept its later end (it ended again since)",
                "missing": f"run {run_id} not found: its end not recorded",
            }[done])  # fmt: skip
        print("; ".join(said))
    print(f"imported {total} pages", file=sys.stderr)
    return 0
