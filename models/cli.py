"""``topicrawl export`` and ``topicrawl runs``: read stored crawls."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import IO

from tqdm import tqdm

from models.store import Store, spill_row
from topicrawl.errors import TopicrawlError


def register(sub: argparse._SubParsersAction) -> None:
    export = sub.add_parser(
        "export",
        help="write the corpus of a crawl run (streaming)",
        description="Write the corpus documents of a run as JSON lines or plain text.",
    )
    export.add_argument("--run", type=int, required=True, help="crawl run id (see `runs`)")
    export.add_argument("--format", choices=("jsonl", "txt"), default="jsonl")
    export.add_argument("--out", type=Path, help="output file (default: standard output)")
    export.add_argument("--db", help="database URL (default: $TOPICRAWL_DB_URL or ./topicrawl.db)")
    export.add_argument("--no-progress", action="store_true", help="no progress bar")
    export.set_defaults(func=cmd_export)

    runs = sub.add_parser("runs", help="list crawl runs with their figures")
    runs.add_argument("--db", help="database URL")
    runs.set_defaults(func=cmd_runs)
    register_spill(sub)


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
    store = Store.from_url(args.db)
    progress = not args.no_progress and args.out is not None
    if args.out is None:
        n = export_corpus(store, args.run, sys.stdout, args.format, progress=False)
    else:
        with args.out.open("w", encoding="utf-8") as fh:
            n = export_corpus(store, args.run, fh, args.format, progress=progress)
    print(f"exported {n} documents of run {args.run}", file=sys.stderr)
    return 0


def cmd_runs(args: argparse.Namespace) -> int:
    store = Store.from_url(args.db)
    for run in store.list_runs():
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
    )
    spill.add_argument("files", nargs="+", type=Path, help="spill files (JSON lines)")
    spill.add_argument("--db", help="database URL")
    spill.set_defaults(func=cmd_import_spill)


def cmd_import_spill(args: argparse.Namespace) -> int:

    store = Store.from_url(args.db)
    total = 0
    for path in args.files:
        by_run: dict[int, list[dict]] = {}
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                run_id, row = spill_row(line)
                by_run.setdefault(run_id, []).append(row)
        for run_id, rows in by_run.items():
            store.save_crawl_batch(run_id, rows)
            total += len(rows)
        print(f"{path}: {sum(len(r) for r in by_run.values())} pages stored")
    print(f"imported {total} pages", file=sys.stderr)
    return 0
