"""Corpus exports with provenance: JSON lines, plain text, Parquet (pyarrow) and Hugging Face
datasets (``datasets``, ``save_to_disk`` plus a dataset card).

One streamed query (``yield_per``: a server-side cursor on PostgreSQL, a lazy cursor on
SQLite) reads the documents of a run with their page; the duplicate cluster of each batch
of documents is read with one query per batch (and per link of a chain of replacements), so
memory stays bounded by the batch size whatever the corpus size. Every record has the
fields of :data:`SCHEMA`.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from sqlalchemy import func, or_, select
from tqdm import tqdm

from models.orm import CrawlRun, Document, Duplicate, Page
from topicrawl.errors import ConfigError, TopicrawlError

FORMATS = ("jsonl", "txt", "parquet", "hf")
SPLIT_KEYS = ("hash", "host")
SUFFIX = {"jsonl": ".jsonl", "txt": ".txt", "parquet": ".parquet", "hf": ""}


def _schema() -> Any:
    import pyarrow as pa

    part = pa.struct([("name", pa.string()), ("score", pa.float64())])
    dup = pa.struct(
        [("url", pa.string()), ("of", pa.string()), ("method", pa.string()),
         ("score", pa.float64())]
    )  # fmt: skip
    return pa.schema(
        [
            ("id", pa.int64()),  # the document id
            ("run_id", pa.int64()),
            ("url", pa.string()),  # the requested URL
            ("final_url", pa.string()),  # after redirects
            ("title", pa.string()),
            ("date", pa.string()),  # published date (ISO), when found
            ("host", pa.string()),
            ("language", pa.string()),
            ("text", pa.string()),  # the cleaned corpus text
            ("relevance", pa.float64()),  # the page relevance (formula 3 / calibrated)
            ("relevance_parts", pa.list_(part)),  # the relevance per part of the page
            ("link_score", pa.float64()),  # the score of the link that led to the page
            ("link_score_detail", pa.string()),  # its breakdown (JSON)
            ("topic_name", pa.string()),
            ("topic_version", pa.string()),  # sha256[:16] of the topic file the run used
            ("duplicates", pa.list_(dup)),  # every page that duplicated this document
            ("warc_file", pa.string()),
            ("warc_offset", pa.int64()),
            ("warc_length", pa.int64()),
            ("fetched_at", pa.string()),
        ]
    )


def topic_version(topic_text: str) -> str:
    """The version of a topic file: the first 16 hex digits of its SHA-256 (as the console)."""
    return hashlib.sha256((topic_text or "").encode("utf-8")).hexdigest()[:16]


@dataclass
class ExportFilter:
    """Which documents of a run are exported."""

    min_relevance: float | None = None
    #: published on or after this ISO date (undated documents are left out)
    since: str | None = None
    #: hosts (exact, or ``*.suffix``); empty: every host
    hosts: list[str] = field(default_factory=list)

    def where(self) -> list[Any]:
        conds: list[Any] = []
        if self.min_relevance is not None:
            conds.append(Page.relevance >= self.min_relevance)
        if self.since:
            conds.append(Page.published.is_not(None))
            conds.append(Page.published >= self.since)
        if self.hosts:
            ors = []
            for h in self.hosts:
                h = h.lower()
                if h.startswith("*."):
                    ors += [Page.host == h[2:], Page.host.like(f"%.{h[2:]}")]
                else:
                    ors.append(Page.host == h)
            conds.append(or_(*ors))
        return conds


def split_of(record: dict[str, Any], ratio: float, by: str = "hash") -> str:
    """ "validation" for a stable share ``ratio`` of the records, else "train".

    ``by="hash"`` hashes the URL; ``by="host"`` hashes the host, so every page of a host
    falls in the same split (no site leaks from train into validation)."""
    key = record["host"] if by == "host" else record["url"]
    h = int.from_bytes(hashlib.blake2b((key or "").encode("utf-8"), digest_size=8).digest())
    return "validation" if h / 2**64 < ratio else "train"


class CorpusReader:
    """Streams the export records of one run (see the module docstring)."""

    def __init__(self, store: Any, run_id: int, flt: ExportFilter | None = None, *,
                 batch_size: int = 1000):  # fmt: skip
        self.store = store
        self.run_id = run_id
        self.filter = flt or ExportFilter()
        self.batch_size = max(1, batch_size)
        run = store.get_run(run_id)
        if run is None:
            raise TopicrawlError(
                f"no crawl run {run_id} in this database (list them: topicrawl runs)"
            )
        self.run: CrawlRun = run
        self.topic_version = topic_version(run.topic_text)

    def _base(self, *columns: Any) -> Any:
        return (
            select(*columns)
            .join(Page, Page.id == Document.page_id)
            .where(Document.run_id == self.run_id, *self.filter.where())
        )

    def count(self) -> int:
        with self.store.engine.connect() as conn:
            return int(conn.scalar(self._base(func.count(Document.id))) or 0)

    def _clusters(self, conn: Any, page_ids: list[int]) -> dict[int, list[dict[str, Any]]]:
        """Canonical page id -> every page that duplicated it (following replacements)."""
        out: dict[int, list[dict[str, Any]]] = {pid: [] for pid in page_ids}
        root = {pid: pid for pid in page_ids}
        frontier = list(page_ids)
        seen = set(page_ids)
        while frontier:
            query = (
                select(Duplicate.page_id, Duplicate.original_page_id, Duplicate.method,
                       Duplicate.score, Duplicate.original_url, Page.url)
                .join(Page, Page.id == Duplicate.page_id)
                .where(Duplicate.run_id == self.run_id,
                       Duplicate.original_page_id.in_(frontier))
                .order_by(Duplicate.id)
            )  # fmt: skip
            frontier = []
            for pid, orig, method, score, of, url in conn.execute(query):
                if pid in seen:
                    continue
                seen.add(pid)
                root[pid] = root[orig]
                out[root[pid]].append(
                    {"url": url, "of": of, "method": method, "score": float(score)}
                )
                frontier.append(pid)
        return out

    def __iter__(self) -> Iterator[dict[str, Any]]:
        query = self._base(
            Document.id, Document.page_id, Document.text, Page.url, Page.final_url, Page.title,
            Page.published, Page.host, Page.language, Page.relevance, Page.relevance_parts,
            Page.link_score, Page.warc_file, Page.warc_offset, Page.warc_length,
            Page.fetched_at,
        ).order_by(Document.id)  # fmt: skip
        with self.store.engine.connect() as conn, self.store.engine.connect() as side:
            result = conn.execution_options(yield_per=self.batch_size).execute(query)
            for rows in result.partitions():
                clusters = self._clusters(side, [r.page_id for r in rows])
                for r in rows:
                    yield self._record(r, clusters.get(r.page_id, []))

    def _record(self, r: Any, dups: list[dict[str, Any]]) -> dict[str, Any]:
        link = r.link_score if isinstance(r.link_score, dict) else None
        score = link.get("score") if link else None
        return {
            "id": r.id,
            "run_id": self.run_id,
            "url": r.url,
            "final_url": r.final_url or r.url,
            "title": r.title,
            "date": r.published,
            "host": r.host,
            "language": r.language,
            "text": r.text,
            "relevance": r.relevance,
            "relevance_parts": dict(r.relevance_parts or {}),
            "link_score": float(score) if isinstance(score, int | float) else None,
            "link_score_detail": link,
            "topic_name": self.run.topic_name,
            "topic_version": self.topic_version,
            "duplicates": dups,
            "warc_file": r.warc_file,
            "warc_offset": r.warc_offset,
            "warc_length": r.warc_length,
            "fetched_at": r.fetched_at.isoformat() if r.fetched_at else None,
        }


# -- writers ---------------------------------------------------------------------------------
class JsonlWriter:
    def __init__(self, fh: IO[str]):
        self.fh = fh

    def write(self, record: dict[str, Any]) -> None:
        self.fh.write(json.dumps(record, ensure_ascii=False) + "\n")

    def close(self) -> None:
        self.fh.flush()


class TxtWriter(JsonlWriter):
    def write(self, record: dict[str, Any]) -> None:
        self.fh.write((record["text"] or "").rstrip("\n") + "\n\n")


def arrow_row(record: dict[str, Any]) -> dict[str, Any]:
    """A record in the Arrow schema's shape (parts as a list, the link breakdown as JSON)."""
    row = dict(record)
    row["relevance_parts"] = [
        {"name": k, "score": float(v)} for k, v in (record["relevance_parts"] or {}).items()
        if isinstance(v, int | float)
    ]  # fmt: skip
    detail = record["link_score_detail"]
    row["link_score_detail"] = None if detail is None else json.dumps(detail, ensure_ascii=False)
    return row


def arrow_pool() -> Any:
    """jemalloc's Arrow memory pool (else the system allocator): it gives freed row groups
    back, where mimalloc, pyarrow's default on some builds, keeps ~50 MB more resident."""
    import pyarrow as pa

    try:
        return pa.jemalloc_memory_pool()
    except NotImplementedError:
        return pa.system_memory_pool()


class ParquetWriter:
    """Writes records to a Parquet file (zstd) in row groups of ``row_group`` records: at
    most one row group is in memory."""

    def __init__(self, path: Path, *, row_group: int = 1000):

        self.schema = _schema()
        self.pool = arrow_pool()
        self.row_group = max(1, row_group)
        self.rows: list[dict[str, Any]] = []
        self.writer = self._open(path)

    def _open(self, path: Path) -> Any:
        import pyarrow.parquet as pq

        return pq.ParquetWriter(str(path), self.schema, compression="zstd", memory_pool=self.pool)

    def write(self, record: dict[str, Any]) -> None:
        self.rows.append(arrow_row(record))
        if len(self.rows) >= self.row_group:
            self._flush()

    def _flush(self) -> None:
        import pyarrow as pa

        if self.rows:
            columns = [
                pa.array([r[f.name] for r in self.rows], type=f.type, memory_pool=self.pool)
                for f in self.schema
            ]
            self.rows = []
            self.writer.write_batch(pa.RecordBatch.from_arrays(columns, schema=self.schema))

    def close(self) -> None:
        self._flush()
        self.writer.close()


class ArrowStreamWriter(ParquetWriter):
    """Writes records as an Arrow IPC stream (the file format of ``datasets``' cache, which
    ``datasets.Dataset.from_file`` memory-maps), one record batch per ``row_group``."""

    def _open(self, path: Path) -> Any:
        import pyarrow as pa

        self.sink = pa.OSFile(str(path), "wb")
        return pa.ipc.new_stream(self.sink, self.schema)

    def close(self) -> None:
        super().close()
        self.sink.close()


# -- the export ------------------------------------------------------------------------------
@contextmanager
def _staged(out: Path) -> Iterator[Path]:
    """A temporary path next to ``out`` that becomes ``out`` when the block succeeds: a
    failed export leaves no partial ``out``. An existing regular file is replaced; an
    existing directory must be empty (nothing of the user's is deleted); a device or a pipe
    (``/dev/stdout``) is written in place."""
    if out.exists() and not out.is_file() and not out.is_dir():
        yield out
        return
    if out.is_dir() and any(out.iterdir()):
        raise ConfigError(f"--out {out} is a directory that is not empty: choose a new one")
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir():
        raise ConfigError(f"--out {out}: directory {parent} does not exist")
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".part", dir=parent))
    staged = tmp / out.name
    try:
        yield staged
        if out.is_dir():
            out.rmdir()  # empty (checked above)
        staged.replace(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _open_writer(fmt: str, path: Path) -> tuple[Any, Any]:
    if fmt in ("jsonl", "txt"):
        fh = path.open("w", encoding="utf-8")
        return (JsonlWriter if fmt == "jsonl" else TxtWriter)(fh), fh
    return ParquetWriter(path), None


def export_run(
    store: Any,
    run_id: int,
    out: Path | None,
    fmt: str = "jsonl",
    *,
    flt: ExportFilter | None = None,
    split: float | None = None,
    split_by: str = "hash",
    progress: bool = True,
    batch_size: int = 1000,
    stdout: IO[str] | None = None,
) -> dict[str, int]:
    """Export run ``run_id``; returns the number of documents per split ("all" without one).

    ``out``: a file (jsonl, txt, parquet), a directory (hf, and any format with ``split``:
    ``train.<ext>`` and ``validation.<ext>``), or None for standard output (jsonl, txt)."""
    if fmt not in FORMATS:
        raise ConfigError(f"--format {fmt!r}: use one of {', '.join(FORMATS)}")
    if split is not None and not 0.0 < split < 1.0:
        raise ConfigError(f"--split {split}: the validation share must be between 0 and 1")
    if split_by not in SPLIT_KEYS:
        raise ConfigError(f"--split-by {split_by!r}: use hash or host")
    if out is not None and (fmt == "hf" or split is not None) and out.exists():
        if not out.is_dir():
            raise ConfigError(f"--out {out} is a file: --format hf and --split write a directory")
    reader = CorpusReader(store, run_id, flt, batch_size=batch_size)
    if out is None:
        if fmt not in ("jsonl", "txt") or split is not None:
            raise ConfigError(f"--format {fmt}{' with --split' if split else ''} needs --out")
        writer = (JsonlWriter if fmt == "jsonl" else TxtWriter)(stdout or sys.stdout)
        counts = _pump(reader, {"all": writer}, _chooser(None, split_by), progress)
        writer.close()
        return counts
    if fmt == "hf":
        return _export_hf(reader, out, split, split_by, progress)
    names = ["train", "validation"] if split is not None else ["all"]
    with _staged(out) as staged:
        if split is not None:
            staged.mkdir()
            paths = {n: staged / f"{n}{SUFFIX[fmt]}" for n in names}
        else:
            paths = {"all": staged}
        opened = {n: _open_writer(fmt, p) for n, p in paths.items()}
        try:
            writers = {n: w for n, (w, _fh) in opened.items()}
            counts = _pump(reader, writers, _chooser(split, split_by), progress)
        finally:
            for writer, fh in opened.values():
                writer.close()
                if fh is not None:
                    fh.close()
    return counts


def _chooser(split: float | None, split_by: str) -> Callable[[dict[str, Any]], str]:
    if split is None:
        return lambda _r: "all"
    return lambda r: split_of(r, split, split_by)


def _pump(
    reader: CorpusReader,
    writers: dict[str, Any],
    choose: Callable[[dict[str, Any]], str],
    progress: bool,
) -> dict[str, int]:
    """Write every record of ``reader`` to ``writers[choose(record)]``; counts per name."""
    counts = dict.fromkeys(writers, 0)
    total = reader.count() if progress else None
    with tqdm(total=total, unit="doc", desc="export", disable=not progress, file=sys.stderr) as bar:
        for record in reader:
            name = choose(record)
            writers[name].write(record)
            counts[name] += 1
            bar.update()
    return counts


def _export_hf(
    reader: CorpusReader, out: Path, split: float | None, split_by: str, progress: bool
) -> dict[str, int]:
    """An Arrow stream per split in a scratch directory (written in record batches, as
    ``datasets`` writes its cache), memory-mapped by ``datasets.Dataset.from_file`` and saved
    with ``save_to_disk``, with a dataset card README.md."""
    import datasets

    names = ["train", "validation"] if split is not None else ["train"]
    with tempfile.TemporaryDirectory(prefix="topicrawl-hf-", dir=out.parent or None) as scratch:
        root = Path(scratch)
        writers = {n: ArrowStreamWriter(root / f"{n}.arrow") for n in names}
        choose = _chooser(split, split_by) if split is not None else (lambda _r: "train")
        try:
            counts = _pump(reader, writers, choose, progress)
        finally:
            for w in writers.values():
                w.close()
        features = datasets.Features.from_arrow_schema(_schema())
        if not progress:
            datasets.disable_progress_bars()
        # datasets cannot read back an empty split it saved: one is left out, and said so
        empty = [n for n in names if not counts[n]]
        if len(empty) == len(names):
            raise TopicrawlError("no document matches the filters: no dataset written")
        for n in empty:
            print(f"the {n} split is empty (too few hosts for --split-by host?): left out",
                  file=sys.stderr)  # fmt: skip
        parts = {
            n: datasets.Dataset.from_file(
                str(root / f"{n}.arrow"), info=datasets.DatasetInfo(features=features),
                split=datasets.NamedSplit(n),
            )
            for n in names if counts[n]
        }  # fmt: skip
        with _staged(out) as staged:
            if split is None:
                parts["train"].save_to_disk(str(staged))
            else:
                datasets.DatasetDict(parts).save_to_disk(str(staged))
            (staged / "README.md").write_text(
                dataset_card(reader, counts, split, split_by), encoding="utf-8"
            )
            del parts
    return counts


def dataset_card(
    reader: CorpusReader, counts: dict[str, int], split: float | None, split_by: str
) -> str:
    """A Hugging Face dataset card (YAML metadata + description) for an exported run."""
    run, flt = reader.run, reader.filter
    total = sum(counts.values())
    size = ("n<1K" if total < 1_000 else "1K<n<10K" if total < 10_000
            else "10K<n<100K" if total < 100_000 else "100K<n<1M" if total < 1_000_000
            else "n>1M")  # fmt: skip
    languages = sorted({(run.settings or {}).get("language") or "zh"})
    splits = "\n".join(f"  - name: {n}\n    num_examples: {c}" for n, c in counts.items() if c)
    filters = [f"min relevance {flt.min_relevance}" if flt.min_relevance is not None else "",
               f"published since {flt.since}" if flt.since else "",
               f"hosts {', '.join(flt.hosts)}" if flt.hosts else ""]  # fmt: skip
    filters = [f for f in filters if f] or ["none"]
    how = (f"validation = a stable {split:.0%} of the documents by a hash of the "
           f"{'host (every page of a host in one split)' if split_by == 'host' else 'URL'}"
           if split is not None else "one split (train)")  # fmt: skip
    return f"""---
language:
{chr(10).join(f"- {lang}" for lang in languages)}
pretty_name: "topicrawl corpus: {run.topic_name} (run {run.id})"
size_categories:
- {size}
task_categories:
- text-generation
- text-classification
dataset_info:
  splits:
{splits}
---

# {run.topic_name}: a topic corpus crawled by topicrawl (run {run.id})

Crawled from {run.started_at:%Y-%m-%d} by a focused crawl on the topic `{run.topic_name}`
(topic file version `{reader.topic_version}`), deduplicated inline and cleaned of
boilerplate. {total} documents; filters: {"; ".join(filters)}; splits: {how}.

## Fields

| field | meaning |
|---|---|
| `url`, `final_url` | the requested URL and the URL after redirects |
| `title`, `date`, `host`, `language` | page title, published date (ISO, when found), host, language |
| `text` | the cleaned main text |
| `relevance`, `relevance_parts` | the page's topic relevance in [0, 1], and per part of the page |
| `link_score`, `link_score_detail` | the score of the link the crawler followed to the page (JSON breakdown) |
| `topic_name`, `topic_version` | the topic and the version (sha256[:16]) of its file in this run |
| `duplicates` | every page dropped as a duplicate of this one: URL, the URL it duplicated, method, score |
| `warc_file`, `warc_offset`, `warc_length` | the raw capture: WARC file, offset and length of the response record |

The pages are third-party content: check their terms before redistributing this dataset.
"""
