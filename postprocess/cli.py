"""``topicrawl clean --run ID``: (re)build the corpus documents of a stored crawl run.

Two streaming passes over the run's accepted pages: the first teaches the host-line model
every page of every host, the second cleans each page with the complete model and upserts
its document. Pages that cleaning drops lose any document they had, so the command is
idempotent: running it twice leaves the same documents.
"""

from __future__ import annotations

import argparse
import tomllib
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tqdm import tqdm

from postprocess.clean import LINE_RULES, Cleaner
from topicrawl.errors import ConfigError, TopicFileError, TopicrawlError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "clean",
        help="clean the accepted pages of a run into corpus documents",
        description="Rebuild the corpus documents of a stored crawl run: learn the lines that "
        "recur per host over the run's accepted pages, then clean every page (idempotent).",
    )
    p.add_argument("--run", type=int, required=True, help="crawl run id (see `topicrawl runs`)")
    p.add_argument("--db", help="database URL (default: $TOPICRAWL_DB_URL or ./topicrawl.db)")
    p.add_argument(
        "--topic",
        type=Path,
        help="topic file whose [clean] table configures the cleaner "
        "(default: the [clean] table of the topic stored with the run)",
    )
    p.add_argument("--save-model", type=Path, help="write the learnt host-line model (JSON)")
    p.add_argument("--batch", type=int, default=200, help="documents per database write")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_clean)


def clean_config_from_toml(text: str, path: str | None = None) -> dict[str, Any]:
    """The ``[clean]`` table of a topic file's text ({} when it has none)."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TopicFileError(f"invalid TOML: {exc}", path=path) from None
    table = doc.get("clean", {})
    if not isinstance(table, dict):
        raise TopicFileError("'clean' must be a table [clean]", path=path)
    return table


def clean_run(
    store: Any,
    run_id: int,
    cleaner: Cleaner,
    *,
    batch_size: int = 200,
    progress: bool = True,
) -> Counter[str]:
    """Learn the host-line model over the run's accepted pages, then clean and store them.

    Returns this run's totals from ``cleaner.stats`` (``pages``, ``kept``,
    ``dropped/<reason>``, ``removed/<rule>``). Dropped pages lose any stored document.
    """
    total = store.count_pages(run_id, accepted_only=True)
    if cleaner.config["host_lines"]:
        bar = tqdm(total=total, desc="learn", unit="page", disable=not progress)
        for page in store.iter_pages(run_id, accepted_only=True):
            cleaner.observe(html=page.html, text=page.text or None, host=page.host, url=page.url)
            bar.update()
        bar.close()

    before = cleaner.stats
    docs: list[dict[str, Any]] = []
    dropped: list[int] = []
    bar = tqdm(total=total, desc="clean", unit="page", disable=not progress)
    for page in store.iter_pages(run_id, accepted_only=True):
        result = cleaner.clean(
            html=page.html, text=page.text or None, host=page.host, url=page.url, observe=False
        )
        if result.text is None:
            dropped.append(page.id)
        else:
            meta = {"title": page.title, "published": page.published}
            meta["removed"] = dict(result.removed)
            if result.reextracted:
                meta["reextracted"] = True
            docs.append({"page_id": page.id, "text": result.text, "meta": meta})
        if len(docs) >= batch_size:
            store.save_documents(run_id, docs)
            docs = []
        if len(dropped) >= batch_size:
            store.delete_documents(run_id, dropped)
            dropped = []
        bar.update()
    bar.close()
    store.save_documents(run_id, docs)
    store.delete_documents(run_id, dropped)
    out = cleaner.stats
    out.subtract(before)
    return Counter({k: v for k, v in out.items() if v})


def format_counts(counts: Mapping[str, int]) -> str:
    """A small table of the totals: pages, kept, dropped per reason, lines removed per rule."""
    rows = [("pages", counts.get("pages", 0)), ("documents kept", counts.get("kept", 0))]
    rows.append(("  of which re-extracted from HTML", counts.get("reextracted", 0)))
    rows += sorted((f"dropped: {k[8:]}", v) for k, v in counts.items() if k.startswith("dropped/"))
    rows += [(f"lines removed: {r}", counts.get(f"removed/{r}", 0)) for r in LINE_RULES]
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name:<{width}}  {value:>8}" for name, value in rows)


def cmd_clean(args: argparse.Namespace) -> int:
    from models.store import Store

    store = Store.from_url(args.db)
    try:
        run = store.get_run(args.run)
        if run is None:
            raise TopicrawlError(
                f"no crawl run {args.run} in this database (list them: topicrawl runs)"
            )
        if args.topic:
            try:
                text = args.topic.read_text(encoding="utf-8")
            except OSError as exc:
                raise TopicFileError(f"cannot read: {exc.strerror}", path=str(args.topic)) from None
            config = clean_config_from_toml(text, str(args.topic))
        else:
            config = clean_config_from_toml(run.topic_text or "", f"run {args.run} topic")
        try:
            cleaner = Cleaner.from_config(config)
        except ConfigError as exc:
            raise ConfigError(f"{args.topic or f'run {args.run} topic'}: {exc}") from None
        counts = clean_run(
            store, args.run, cleaner, batch_size=max(1, args.batch), progress=not args.no_progress
        )
        if args.save_model:
            cleaner.host_model.save(args.save_model)
        print(format_counts(counts))
    finally:
        store.close()
    return 0
