"""``topicrawl dedup eval``, ``learn-antecedents``, ``compact`` and ``index`` (named corpus
indexes that later crawls dedup against, :mod:`dedup.corpusindex`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from topicrawl.errors import ConfigError, ResourceMissingError


def register(subparsers: Any) -> None:
    dedup = subparsers.add_parser("dedup", help="near-duplicate detection tools")
    sub = dedup.add_subparsers(dest="dedup_command", metavar="SUBCOMMAND")
    dedup.set_defaults(func=lambda args: (dedup.print_help(), 2)[1])

    ev = sub.add_parser(
        "eval",
        help="precision/recall/F1 of each method and the cascade on labelled pairs",
        description='Read JSON lines {"a": PATH, "b": PATH, "label": 0|1} (paths relative '
        "to the file; .html pages go through the crawl's extraction, .txt files are text) and "
        "print precision, recall, F1 and confusion counts.",
    )
    ev.add_argument("--pairs", required=True, help="the pairs file (JSON lines)")
    ev.add_argument(
        "--method",
        action="append",
        metavar="NAME",
        help="evaluate only this method (repeatable; 'cascade' = the cascade only)",
    )
    ev.add_argument(
        "--cascade",
        default=None,
        metavar="M1,M2,...",
        help="the cascade chain (default: exact,spotsigs)",
    )
    ev.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="METHOD.KEY=VALUE",
        help="a method option, e.g. spotsigs.tau=0.6 (VALUE parsed as JSON when it can be)",
    )
    ev.add_argument("--json", action="store_true", help="print JSON instead of a table")
    ev.set_defaults(func=cmd_eval)

    la = sub.add_parser(
        "learn-antecedents",
        help="select SpotSigs antecedents from crawled or saved pages (Li et al. 2017)",
    )
    src = la.add_mutually_exclusive_group(required=True)
    src.add_argument("--pages", metavar="DIR", help="a directory of .html pages (recursive)")
    src.add_argument("--run", type=int, metavar="ID", help="the pages of a stored crawl run")
    la.add_argument(
        "--db", default=None, help="database URL for --run (default: $TOPICRAWL_DB_URL)"
    )
    la.add_argument("--lang", default="zh", help="language of the pages (zh or en)")
    la.add_argument("--basic-ratio", type=float, default=0.6, help="t1/t2 above this: basic")
    la.add_argument(
        "--optimized-ratio", type=float, default=0.9, help="t1/t2 above this: optimized"
    )
    la.add_argument(
        "--basic-rate",
        type=float,
        default=0.004,
        help="a basic antecedent is at least this share of main-text tokens",
    )
    la.add_argument(
        "--min-count", type=int, default=20, help="an optimized antecedent occurs this often"
    )
    la.add_argument(
        "--out",
        default=None,
        metavar="FILE",
        help="TOML file to write (created or updated); default: print the TOML",
    )
    la.add_argument(
        "--section",
        default=None,
        metavar="TABLE",
        help="write 'antecedents = [...]' into this table of --out (e.g. dedup.spotsigs) "
        "instead of an antecedents file with [LANG] basic/optimized",
    )
    la.add_argument(
        "--set",
        choices=("basic", "optimized"),
        default="optimized",
        help="with --section: which set to write (optimized = basic + optimized)",
    )
    la.set_defaults(func=cmd_learn_antecedents)

    co = sub.add_parser(
        "compact",
        help="rewrite a SpotSigs index log without its removals (retention, recrawls)",
    )
    co.add_argument(
        "--backend",
        required=True,
        metavar="JSON",
        help='the index storage, e.g. \'{"type": "sqlite", "path": "job/dedup.sqlite"}\'',
    )
    co.set_defaults(func=cmd_compact)

    ix = sub.add_parser(
        "index",
        help="add an existing corpus to a named index that later crawls dedup against",
        description="Add the accepted pages of a stored run (--from-run) or the documents "
        'of a JSON-lines file ({"url", "text", "title"?, "date"?} a line, e.g. a '
        "`topicrawl export`) to the named dedup index NAME (created on first use, with the "
        "crawl's cascade). A crawl with -s TOPICRAWL_DEDUP_INDEX=NAME then drops the pages "
        "that the corpus already holds. Adding a document twice changes nothing.",
    )
    ix.add_argument("--name", required=True, help="the index name (letters, digits, -_.)")
    src = ix.add_mutually_exclusive_group(required=True)
    src.add_argument("--from-run", type=int, metavar="ID", help="the accepted pages of run ID")
    src.add_argument("--from-jsonl", type=Path, metavar="FILE", help="a JSON-lines corpus")
    ix.add_argument("--db", default=None, help="database URL for --from-run")
    ix.add_argument(
        "--backend", metavar="JSON", default=None,
        help="the storage of the indexes (default: {\"type\": \"sqlite\", \"path\": "
        "\"topicrawl-dedup-indexes.sqlite\"}); the crawl's TOPICRAWL_DEDUP_INDEX_BACKEND",
    )  # fmt: skip
    ix.add_argument("--methods", metavar="M1,M2", default=None,
                    help="cascade of a new index (default: exact,spotsigs)")  # fmt: skip
    ix.add_argument("--option", action="append", default=[], metavar="METHOD.KEY=VALUE",
                    help="a method option of a new index, e.g. spotsigs.tau=0.6")  # fmt: skip
    ix.add_argument("--lang", default="zh", help="language of --from-jsonl documents without "
                    "a language field (default: zh)")  # fmt: skip
    ix.add_argument("--no-progress", action="store_true", help="no progress bar")
    ix.set_defaults(func=cmd_index)


def _parse_options(specs: list[str]) -> dict[str, dict[str, Any]]:
    options: dict[str, dict[str, Any]] = {}
    for spec in specs:
        key, sep, raw = spec.partition("=")
        method, dot, name = key.partition(".")
        if not sep or not dot or not method or not name:
            raise ConfigError(f"--option {spec!r}: expected METHOD.KEY=VALUE")
        try:
            value = json.loads(raw)
        except ValueError:
            value = raw
        options.setdefault(method, {})[name] = value
    return options


def cmd_eval(args: argparse.Namespace) -> int:
    from dedup.cascade import DEFAULT_METHODS
    from dedup.evaluate import evaluate, format_table, load_pairs

    pairs = load_pairs(args.pairs)
    if not pairs:
        raise ConfigError(f"{args.pairs} holds no pairs")
    options = _parse_options(args.option)
    chain: list[str] | tuple[str, ...] = (
        [m.strip() for m in args.cascade.split(",") if m.strip()]
        if args.cascade
        else DEFAULT_METHODS
    )
    methods = None
    cascade: Any = chain
    if args.method:
        methods = [m for m in args.method if m != "cascade"]
        if "cascade" not in args.method:
            cascade = None
    scores, skipped = evaluate(pairs, methods, cascade=cascade, options=options)
    if args.json:
        print(
            json.dumps(
                {"pairs": len(pairs), "scores": [s.as_dict() for s in scores], "skipped": skipped},
                ensure_ascii=False,
                indent=2,
            )
        )
    else:
        pos = sum(p.label for p in pairs)
        print(f"{len(pairs)} pairs ({pos} near-duplicate, {len(pairs) - pos} different)")
        print(format_table(scores))
        for name, why in skipped.items():
            print(f"note: {name}: {why}", file=sys.stderr)
    return 0


def _iter_html_dir(root: Path):
    from topicrawl.extract import decode_html

    if not root.is_dir():
        raise ResourceMissingError(f"--pages {root}: not a directory")
    for path in sorted(root.rglob("*")):
        if path.suffix.lower() in (".html", ".htm") and path.is_file():
            yield decode_html(path.read_bytes())[0]


def _iter_run(run_id: int, db: str | None):
    from models.store import Store

    store = Store.from_url(db)
    for page in store.iter_pages(run_id):
        if page.html:
            yield page.html


def cmd_learn_antecedents(args: argparse.Namespace) -> int:
    import tomlkit

    from dedup.evaluate import learn_antecedents

    pages = _iter_html_dir(Path(args.pages)) if args.pages else _iter_run(args.run, args.db)
    basic, optimized, stats = learn_antecedents(
        pages,
        lang=args.lang,
        basic_ratio=args.basic_ratio,
        optimized_ratio=args.optimized_ratio,
        basic_rate=args.basic_rate,
        min_count=args.min_count,
    )
    for w in basic + optimized:
        print(
            f"{w}\tt1={stats.t1[w]}\tt2={stats.t2[w]}\tt1/t2={stats.ratio(w):.3f}"
            f"\t{'basic' if w in basic else 'optimized'}",
            file=sys.stderr,
        )
    print(
        f"{stats.pages} pages, {stats.main_tokens} main-text tokens, {stats.page_tokens} page "
        f"tokens: {len(basic)} basic and {len(optimized)} optimized antecedents",
        file=sys.stderr,
    )
    out = Path(args.out) if args.out else None
    doc = tomlkit.parse(out.read_text("utf-8")) if out and out.exists() else tomlkit.document()
    if args.section:
        table: Any = doc
        for part in args.section.split("."):
            if part not in table:
                table[part] = tomlkit.table()
            table = table[part]
        chosen = basic if args.set == "basic" else basic + optimized
        table["antecedents"] = chosen
    else:
        lang = "en" if args.lang.startswith("en") else "zh"
        section = tomlkit.table()
        section.add(tomlkit.comment(f"learned from {stats.pages} pages (t1/t2 selection)"))
        section["basic"] = basic
        section["optimized"] = optimized
        doc[lang] = section
    text = tomlkit.dumps(doc)
    if out:
        out.write_text(text, "utf-8")
        print(f"wrote {out}", file=sys.stderr)
    else:
        print(text)
    return 0


def cmd_compact(args: argparse.Namespace) -> int:
    from dedup.spotsigs import SpotSigsDetector
    from dedup.storage import make_storage

    try:
        config = json.loads(args.backend)
    except ValueError as exc:
        raise ConfigError(f"--backend is not JSON: {exc}") from exc
    if not isinstance(config, dict):
        raise ConfigError('--backend must be a JSON object such as {"type": "sqlite", ...}')
    storage = make_storage(config)
    try:
        raw = storage.get("spotsigs:config")
        if raw is None:
            raise ConfigError(f"no SpotSigs index in {storage!r}")
        stored = json.loads(raw)
        if stored.get("candidates") == "letters":  # kept in the storage, no log to rewrite
            print("SpotSigs index with letter candidates: it keeps no log, nothing to compact")
            return 0
        det = SpotSigsDetector(storage, **stored)
        before, after = det.compact()
        print(f"SpotSigs log compacted: {before} entries -> {after} ({len(det.index)} documents)")
    finally:
        storage.close()
    return 0


def _backend_arg(raw: str | None) -> dict[str, Any] | None:
    if not raw:
        return None
    try:
        config = json.loads(raw)
    except ValueError as exc:
        raise ConfigError(f"--backend is not JSON: {exc}") from exc
    if not isinstance(config, dict):
        raise ConfigError('--backend must be a JSON object such as {"type": "sqlite", ...}')
    return config


def _run_docs(run_id: int, db: str | None):
    """``(url, Doc)`` of the accepted pages of a stored run (their main text, as the crawl
    checked it)."""
    from dedup.base import Doc
    from models.store import Store

    store = Store.open_existing(db)
    if store is None or store.get_run(run_id) is None:
        raise ConfigError(f"no crawl run {run_id} in the database (list them: topicrawl runs)")
    try:
        for page in store.iter_pages(run_id, accepted_only=True):
            yield page.url, Doc(text=page.text or "", title=page.title or "",
                                description=page.description or "", url=page.url,
                                published=page.published, lang=page.language or "zh")  # fmt: skip
    finally:
        store.close()


def _jsonl_docs(path: Path, lang: str):
    from dedup.base import Doc

    try:
        fh = path.open(encoding="utf-8")
    except OSError as exc:
        raise ResourceMissingError(f"--from-jsonl {path}: {exc.strerror}") from None
    with fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError:
                raise ConfigError(f"{path} line {number} is not JSON") from None
            if not isinstance(row, dict) or not isinstance(row.get("text"), str):
                raise ConfigError(f'{path} line {number}: expected an object with a "text"')
            url = row.get("url") or f"{path.name}#{number}"
            yield url, Doc(text=row["text"], title=row.get("title") or "", url=url,
                           published=row.get("date") or row.get("published") or None,
                           lang=row.get("language") or lang)  # fmt: skip


def cmd_index(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from dedup.corpusindex import CorpusIndex

    methods = [m.strip() for m in args.methods.split(",") if m.strip()] if args.methods else None
    index = CorpusIndex.open(
        args.name, _backend_arg(args.backend), create=True, methods=methods,
        options=_parse_options(args.option),
    )  # fmt: skip
    try:
        if args.from_run is not None:
            docs, source = _run_docs(args.from_run, args.db), f"run {args.from_run}"
        else:
            docs, source = _jsonl_docs(args.from_jsonl, args.lang), str(args.from_jsonl)
        bar = tqdm(docs, unit="doc", desc="index", disable=args.no_progress, file=sys.stderr)
        counts = index.add_many(bar, source=source)
        bar.close()
        print(
            f"dedup index {args.name!r}: {counts['added']} documents added from {source} "
            f"({counts['present']} already in it, {counts['empty']} without text); "
            f"{len(index)} in all. Use it: scrapy crawl topic ... -s TOPICRAWL_DEDUP_INDEX={args.name}"
        )
    finally:
        index.close()
    return 0
