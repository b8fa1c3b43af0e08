"""``topicrawl clean --run ID``: (re)build the corpus documents of a stored crawl run.

``--from-warc DIR`` takes the pages' HTML from the crawl's WARC capture instead of the
database (the main text extracted again from it, as the crawl does): with ``--run`` the
run's accepted pages (found by their WARC file and offset, else by URL); without, a new run
whose pages are every HTML page of the capture (no topic scoring or dedup: the capture
alone).

Two streaming passes over the run's accepted pages: the first teaches the host-line model
every page of every host, the second cleans each page with the complete model and upserts
its document. Pages that cleaning drops lose any document they had, so the command is
idempotent: running it twice leaves the same documents.
"""

from __future__ import annotations

import argparse
import tomllib
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

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
    p.add_argument("--run", type=int, help="crawl run id (see `topicrawl runs`)")
    p.add_argument(
        "--from-warc", type=Path, metavar="DIR",
        help="read the pages from the WARC capture in DIR (TOPICRAWL_WARC_DIR of the crawl), "
        "not from the database; without --run, a new run of every HTML page of the capture",
    )  # fmt: skip
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
    pages: Callable[[], Iterator[Any]] | None = None,
) -> Counter[str]:
    """Learn the host-line model over the run's accepted pages, then clean and store them.

    ``pages``: a function that streams the pages (default: the run's accepted pages from the
    database; :func:`warc_pages` reads them from a WARC capture). A page without HTML or
    text is skipped (its document, if any, left as it is).

    Returns this run's totals from ``cleaner.stats`` (``pages``, ``kept``,
    ``dropped/<reason>``, ``removed/<rule>``). Dropped pages lose any stored document.
    """
    total = store.count_pages(run_id, accepted_only=True)
    if pages is None:
        pages = lambda: store.iter_pages(run_id, accepted_only=True)  # noqa: E731
    if cleaner.config["host_lines"]:
        bar = tqdm(total=total, desc="learn", unit="page", disable=not progress)
        for page in pages():
            cleaner.observe(html=page.html, text=page.text or None, host=page.host, url=page.url)
            bar.update()
        bar.close()

    before = cleaner.stats
    docs: list[dict[str, Any]] = []
    dropped: list[int] = []
    bar = tqdm(total=total, desc="clean", unit="page", disable=not progress)
    for page in pages():
        if page.html is None and page.text is None:  # not in the capture: left as it is
            bar.update()
            continue
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

    if args.run is None and args.from_warc is None:
        raise ConfigError("name the pages to clean: --run ID, --from-warc DIR, or both")
    store = Store.from_url(args.db)
    try:
        if args.run is None:
            args.run = import_warc(store, args.from_warc, progress=not args.no_progress)
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
        pages = None
        if args.from_warc is not None:
            warc_dir, run_id = args.from_warc, args.run
            missing: Counter[str] = Counter()
            pages = lambda: warc_pages(store, run_id, warc_dir, missing)  # noqa: E731
        counts = clean_run(
            store, args.run, cleaner, batch_size=max(1, args.batch), progress=not args.no_progress,
            pages=pages,
        )  # fmt: skip
        if pages is not None:
            counts["not_in_capture"] = missing["pages"] // (2 if cleaner.config["host_lines"] else 1)
            print(f"run {args.run}: pages read from the WARC capture in {args.from_warc}"
                  + (f" ({counts['not_in_capture']} accepted pages not in it, left as they were)"
                     if counts["not_in_capture"] else ""))  # fmt: skip
        if args.save_model:
            cleaner.host_model.save(args.save_model)
        print(format_counts(counts))
    finally:
        store.close()
    return 0


def warc_pages(store: Any, run_id: int, directory: Path, missing: Counter[str]) -> Iterator[Any]:
    """The run's accepted pages with ``html`` and ``text`` from the WARC capture (the main
    text extracted again, as the crawl does) instead of the database. A page is found by its
    WARC file and offset, else (a page stored without them) by its final URL; a page not in
    the capture comes with neither (``missing["pages"]`` counts it)."""
    from topicrawl.extract import extract_page
    from topicrawl.warc import WarcRef, captured_html, iter_responses, read_response

    by_url: dict[str, WarcRef] | None = None
    for page in store.iter_pages(run_id, accepted_only=True):
        captured = None
        if page.warc_file and page.warc_offset is not None:
            ref = WarcRef(page.warc_file, page.warc_offset, page.warc_length or 0)
            captured = read_response(directory, ref)
        else:
            if by_url is None:  # one pass over the capture: URL -> place of its last 200
                by_url = {r.url: r.ref for r in iter_responses(directory) if r.status == 200}
            ref = by_url.get(page.final_url or page.url) or by_url.get(page.url)
            captured = read_response(directory, ref) if ref is not None else None
        if captured is None:
            missing["pages"] += 1
            yield replace(page, html=None, text=None)
            continue
        html, _codec = captured_html(captured)
        text = extract_page(html, captured.url).text
        yield replace(page, html=html, text=text)


def import_warc(store: Any, directory: Path, *, progress: bool = True, batch: int = 200) -> int:
    """A new run of every HTML page (status 200) of the WARC capture in ``directory``, each
    accepted (no topic scoring or dedup: the capture alone); returns the run id."""
    from topicrawl.extract import extract_page
    from topicrawl.warc import captured_html, is_html, iter_responses, warc_files

    if not warc_files(directory):
        raise TopicrawlError(f"no WARC files (*.warc.gz) in {directory}")
    run_id = store.start_run(f"warc:{directory.name}", "", {"from_warc": str(directory)})
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    bar = tqdm(desc="read capture", unit="page", disable=not progress)
    for captured in iter_responses(directory):
        if not is_html(captured) or captured.url in seen:
            continue
        seen.add(captured.url)
        html, codec = captured_html(captured)
        page = extract_page(html, captured.url)
        rows.append({
            "url": captured.url, "final_url": captured.url, "host": urlsplit(captured.url).hostname or "",
            "status": captured.status, "title": page.title, "description": page.description,
            "keywords": page.keywords, "language": page.language, "charset": codec,
            "published": page.published, "html": html, "text": page.text, "accepted": True,
            "warc_file": captured.ref.file, "warc_offset": captured.ref.offset,
            "warc_length": captured.ref.length,
        })  # fmt: skip
        if len(rows) >= batch:
            store.save_pages(run_id, rows)
            rows = []
        bar.update()
    bar.close()
    store.save_pages(run_id, rows)
    store.finish_run(run_id, {"finish_reason": "imported", "topicrawl/pages/fetched": len(seen)})
    print(f"run {run_id}: {len(seen)} HTML pages read from the WARC capture in {directory}")
    return run_id
