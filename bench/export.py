"""Benchmark of the corpus export (models/export.py): peak memory and throughput of exporting
a large run to Parquet (target: 100,000 documents in < 300 MB peak RSS), JSON lines and a
Hugging Face dataset, with the duplicate clusters and every provenance field.

The run is synthetic: ``--docs`` documents made from the 598 cnews texts of the shared data
(each text's sentences rotated and numbered, so no two documents are equal; ~1,000 characters
each), on 200 hosts, every tenth document with two duplicate pages (20,000 cluster entries at
100,000 documents), relevance parts, link-score breakdowns and WARC references. Each export
runs as its own ``topicrawl export`` process; its peak RSS is read from ``wait4``. A
``topicrawl runs`` process (the same imports, no export) gives the baseline RSS.

    nice python bench/export.py [--docs 100000] [--db URL] [--formats parquet,jsonl,hf]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import insert

from models.orm import Document, Duplicate, Page
from models.store import Store, compress
from topicrawl.data import data_path

ROOT = Path(__file__).resolve().parent.parent


def cnews_texts() -> list[str]:
    path = data_path("corpus", "cnews_train.txt")
    return [line.split("\t", 1)[1].strip() for line in path.read_text("utf-8").splitlines()
            if "\t" in line]  # fmt: skip


def synthetic_text(texts: list[str], i: int) -> str:
    base = texts[i % len(texts)]
    sentences = [s for s in base.split("。") if s]
    k = (i // len(texts)) % max(1, len(sentences))
    return f"（第{i}号）" + "。".join(sentences[k:] + sentences[:k]) + "。"


PAGE_DEFAULTS = {
    "parent_url": None, "anchor": None, "title": None, "description": None, "keywords": None,
    "language": None, "charset": None, "published": None, "html_z": None, "link_score": None,
    "relevance_parts": None, "warc_file": None, "warc_offset": None, "warc_length": None,
}  # fmt: skip


def build(url: str, n_docs: int, *, seed: int = 0, chunk: int = 5000) -> int:
    """A run of ``n_docs`` synthetic documents in the database at ``url``; its id."""
    rng = random.Random(seed)
    texts = cnews_texts()
    store = Store.from_url(url)
    run_id = store.start_run("benchmark", 'name = "benchmark"\n[words]\n"政治" = 1.0\n')
    hosts = [f"www.site{h:03d}.example.cn" for h in range(200)]
    now = datetime.now(UTC)
    page_id = doc_id = 0
    pages, docs, dups = [], [], []

    def flush() -> None:
        with store.engine.begin() as conn:
            if pages:
                conn.execute(insert(Page), pages)
            if docs:
                conn.execute(insert(Document), docs)
            if dups:
                conn.execute(insert(Duplicate), dups)
        pages.clear()
        docs.clear()
        dups.clear()

    for i in range(n_docs):
        host = hosts[rng.randrange(len(hosts))]
        url = f"http://{host}/news/{2015 + i % 10}/{i:07d}.html"
        text = synthetic_text(texts, i)
        page_id += 1
        doc_id += 1
        rel = rng.random()
        pages.append({
            **PAGE_DEFAULTS, "id": page_id, "run_id": run_id, "url": url, "final_url": url, "host": host,
            "status": 200, "fetched_at": now, "depth": 1 + i % 5, "title": text[:24],
            "language": "zh", "charset": "utf-8",
            "published": f"{2015 + i % 10}-{1 + i % 12:02d}-{1 + i % 28:02d}",
            "html_z": compress(f"<html><body><p>{text}</p></body></html>"), "text": text,
            "link_score": {"score": round(rng.random(), 4), "follow": True, "method": "calibrated",
                           "anchor": round(rng.random(), 4)},
            "relevance": rel, "accepted": True,
            "relevance_parts": {"head": rng.random() * 3, "text": rng.random() * 5,
                                "density": rng.random(), "literal": rel},
            "warc_file": f"topicrawl-20261123-{i // 20000:05d}-host-1-0.warc.gz",
            "warc_offset": (i % 20000) * 4096, "warc_length": 4000,
        })  # fmt: skip
        docs.append({"id": doc_id, "run_id": run_id, "page_id": page_id, "text": text,
                     "meta": {"title": text[:24]}, "created_at": now})  # fmt: skip
        original = page_id
        if i % 10 == 0:
            for copy in range(2):
                page_id += 1
                dup_url = f"http://{hosts[(i + copy + 1) % len(hosts)]}/reprint/{i:07d}-{copy}.html"
                pages.append({**PAGE_DEFAULTS, "id": page_id, "run_id": run_id, "url": dup_url,
                              "final_url": dup_url, "host": dup_url.split("/")[2], "status": 200,
                              "fetched_at": now, "depth": 2, "text": text, "accepted": False,
                              "relevance": rel})  # fmt: skip
                dups.append({"run_id": run_id, "page_id": page_id, "original_url": url,
                             "original_page_id": original,
                             "method": "exact" if copy == 0 else "spotsigs",
                             "score": 1.0 if copy == 0 else 0.8 + 0.1 * rng.random()})  # fmt: skip
        if len(docs) >= chunk:
            flush()
    flush()
    store.close()
    return run_id


def _anon_mb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            found = re.search(r"RssAnon:\s+(\d+)", fh.read())
    except OSError:
        return 0
    return int(found.group(1)) // 1024 if found else 0


def measure(args: list[str]) -> tuple[float, float, float, str]:
    """Run ``topicrawl ARGS`` as a child process: (seconds, peak RSS in MB, peak anonymous
    RSS in MB (sampled every 20 ms: the heap, without memory-mapped files), stderr tail)."""
    cmd = [sys.executable, "-m", "topicrawl.cli", *args]
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err)
        anon = 0
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            anon = max(anon, _anon_mb(proc.pid))
            time.sleep(0.02)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        tail = err.read().decode("utf-8", "replace")[-600:]
    if proc.returncode != 0:
        raise SystemExit(f"topicrawl {' '.join(args)} failed:\n{tail}")
    return seconds, usage.ru_maxrss / 1024, anon, tail


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--db", help="database URL (default: a new SQLite file in a temp dir)")
    ap.add_argument("--formats", default="parquet,jsonl,hf")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-export-"))
    db = args.db or f"sqlite:///{work / 'bench.db'}"
    try:
        t0 = time.perf_counter()
        run_id = build(db, args.docs)
        print(f"built {args.docs} documents into {db.split('://')[0]} in "
              f"{time.perf_counter() - t0:.0f} s", file=sys.stderr)  # fmt: skip
        base_s, base_rss, base_anon, _ = measure(["runs", "--db", db])
        rows = [("`topicrawl runs` (imports only: the baseline)", "-", f"{base_s:.1f}", "-",
                 "-", f"{base_rss:.0f}", f"{base_anon:.0f}", "-")]  # fmt: skip
        for fmt in args.formats.split(","):
            out = work / ("hf" if fmt == "hf" else f"corpus.{fmt}")
            seconds, rss, anon, tail = measure(["export", "--run", str(run_id), "--format", fmt,
                                          "--out", str(out), "--db", db])  # fmt: skip
            found = re.search(r"in ([0-9.]+) s \(", tail)
            inner = float(found.group(1)) if found else float("nan")
            size = (sum(p.stat().st_size for p in out.rglob("*")) if out.is_dir()
                    else out.stat().st_size)  # fmt: skip
            rows.append((f"export --format {fmt}", f"{args.docs:,}", f"{seconds:.1f}",
                         f"{inner:.1f}", f"{args.docs / inner:,.0f}", f"{rss:.0f}",
                         f"{anon:.0f}", f"{size / 1e6:.0f}"))  # fmt: skip
            if fmt == "parquet":
                import pyarrow.parquet as pq

                meta = pq.ParquetFile(out).metadata
                assert meta.num_rows == args.docs, (meta.num_rows, args.docs)
                first = pq.ParquetFile(out).read_row_group(0).to_pylist()
                clusters = sum(len(r["duplicates"]) for r in first)
                print(f"parquet: {meta.num_rows} rows in {meta.num_row_groups} row groups; "
                      f"first row group: {clusters} duplicate entries", file=sys.stderr)  # fmt: skip
            if out.is_dir():
                shutil.rmtree(out)
            else:
                out.unlink()
        print(f"\n{args.docs:,} synthetic documents (cnews texts), {db.split(':')[0]}, "
              f"{datetime.now(UTC):%Y-%m-%d}\n")  # fmt: skip
        print("| process | documents | process seconds | export seconds | documents/s "
              "(export) | peak RSS (MB) | peak anonymous RSS (MB) | output (MB) |")  # fmt: skip
        print("|---|---|---|---|---|---|---|---|")
        for row in rows:
            print("| " + " | ".join(row) + " |")
        print(json.dumps({"docs": args.docs, "rows": rows}, ensure_ascii=False), file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
