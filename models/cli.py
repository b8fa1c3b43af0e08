"""``topicrawl export`` and ``topicrawl runs``: read stored crawls."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import IO

from tqdm import tqdm

from models.store import Store, absolute_db_url, display_url, resolve_db_url, spill_row
from topicrawl.errors import ConfigError, DiskFullError, TopicrawlError
from topicrawl.outcome import EXIT_BUG as EXIT_BUG_OR_NAMED
from topicrawl.outcome import is_disk_full

DB_HELP = "database URL (default: $TOPICRAWL_DB_URL, else ./topicrawl.db)"


def register(sub: argparse._SubParsersAction) -> None:
    export = sub.add_parser(
        "export",
        help="write the corpus of a crawl run (streaming)",
        description="Write the corpus documents of a run as JSON lines or plain text. "
        "Reads only: a missing database or run creates nothing, and --out FILE is written "
        "only when the export succeeds.",
    )
    export.add_argument("--run", type=int, required=True, help="crawl run id (see `runs`)")
    export.add_argument(
        "--format", choices=("jsonl", "txt"), default="jsonl",
        help="jsonl: one {url, title, text, meta} object a line; txt: texts separated by "
        "blank lines (default: jsonl)",
    )  # fmt: skip
    export.add_argument("--out", type=Path, help="output file (default: standard output)")
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


def export_corpus(store: Store, run_id: int, out: IO[str], fmt: str, progress: bool) -> int:
    """Stream run ``run_id``'s documents to ``out``; returns how many were written."""
    if store.get_run(run_id) is None:
        raise TopicrawlError(f"no crawl run {run_id} in this database (list them: topicrawl runs)")
    total = store.count_documents(run_id)
    written = 0
    for doc in tqdm(store.iter_documents(run_id), total=total, disable=not progress, unit="doc"):
        if fmt == "jsonl":
            record = {"url": doc.url, "title": doc.title, "text": doc.text, "meta": doc.meta}
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
        else:
            out.write(doc.text.rstrip("\n") + "\n\n")
        written += 1
    return written


def cmd_export(args: argparse.Namespace) -> int:
    store = open_for_reading(args.db)
    if store is None:
        return EXIT_BUG_OR_NAMED
    if store.get_run(args.run) is None:
        raise TopicrawlError(f"no crawl run {args.run} in this database (list them: topicrawl runs)")
    progress = not args.no_progress and args.out is not None
    if args.out is None:
        try:
            n = export_corpus(store, args.run, sys.stdout, args.format, progress=False)
            sys.stdout.flush()
        except OSError as exc:
            if is_disk_full(exc):
                raise DiskFullError("disk full writing the export: free some space") from exc
            raise
    else:
        n = export_to_file(store, args.run, args.out, args.format, progress)
    print(f"exported {n} documents of run {args.run}", file=sys.stderr)
    return 0


def export_to_file(store: Store, run_id: int, out: Path, fmt: str, progress: bool) -> int:
    """Export into a temporary file next to ``out``, renamed to ``out`` when complete: a
    failed export leaves no partial or empty ``out``."""
    if out.is_dir():
        raise ConfigError(f"--out {out} is a directory: name a file, e.g. {out / 'corpus.jsonl'}")
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir():
        raise ConfigError(f"--out {out}: directory {parent} does not exist")
    if out.exists() and not out.is_file():  # a device or a pipe (/dev/stdout): no rename
        try:
            with out.open("w", encoding="utf-8") as fh:
                return export_corpus(store, run_id, fh, fmt, progress=progress)
        except OSError as exc:
            raise _write_error(out, exc) from exc
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".part", dir=parent)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # as open() would create it
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            n = export_corpus(store, run_id, fh, fmt, progress=progress)
        os.replace(tmp, out)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise _write_error(out, exc) from exc
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return n


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
        "the database stayed unreachable; the crawl names them) into the database. "
        "Idempotent: a page already stored is updated, not doubled.",
    )
    spill.add_argument("files", nargs="+", type=Path, help="spill files (JSON lines)")
    spill.add_argument("--db", help=DB_HELP)
    spill.set_defaults(func=cmd_import_spill)


def cmd_import_spill(args: argparse.Namespace) -> int:

    store = Store.from_url(args.db)
    total = 0
    for path in args.files:
        by_run: dict[int, list[dict]] = {}
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                if '"_end": true' in line or '"_replaced":' in line[:40]:
                    continue  # a writer spool's batch marks (crawler/storewriter.py)
                run_id, row = spill_row(line)
                by_run.setdefault(run_id, []).append(row)
        for run_id, rows in by_run.items():
            store.save_crawl_batch(run_id, rows)
            total += len(rows)
        print(f"{path}: {sum(len(r) for r in by_run.values())} pages stored")
    print(f"imported {total} pages", file=sys.stderr)
    return 0
