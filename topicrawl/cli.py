"""The ``topicrawl`` command: every subcommand that is not a crawl.

Each package contributes its subcommands through a ``register(subparsers)`` function in its
own ``cli`` module; a subcommand sets ``func`` (``args -> exit status``) with
``set_defaults``.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

from topicrawl import console
from topicrawl.errors import TopicrawlError
from topicrawl.outcome import EXIT_DISK_FULL, is_disk_full

#: Modules whose ``register(subparsers)`` adds subcommands, in help order.
COMMAND_MODULES = (
    "crawler.demo",
    "models.cli",
    "crawler.recrawl",
    "relevance.cli",
    "dedup.cli",
    "postprocess.cli",
    "sitegen.cli",
    "console.cli",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="topicrawl",
        description="Tools for topic corpora: everything that is not a crawl "
        "(crawls run with `scrapy crawl topic`).",
    )
    parser.add_argument(
        "-v", "--verbose", "--debug", dest="verbose", action="store_true",
        help="log debug messages and print the traceback of a failure",
    )  # fmt: skip
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        module.register(sub)
    _describe(parser)
    return parser


def _describe(parser: argparse.ArgumentParser) -> None:
    """Every subcommand's ``-h`` starts with its one-line help when it has no description."""
    for action in parser._actions:  # noqa: SLF001 - argparse keeps subparsers here
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            helps = {a.dest: a.help for a in action._choices_actions}  # noqa: SLF001
            for name, sub in action.choices.items():
                if not sub.description and helps.get(name):
                    sub.description = helps[name]
                _describe(sub)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    console.install_filters(debug=args.verbose)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except TopicrawlError as exc:  # expected: one line, the documented exit status
        if args.verbose:
            logging.getLogger("topicrawl").exception("%s failed", args.command)
        console.fail(exc)
        return exc.exit_status
    except OSError as exc:
        if not is_disk_full(exc):
            raise
        if args.verbose:
            logging.getLogger("topicrawl").exception("%s failed", args.command)
        console.fail(f"no space left on the device ({exc.filename or exc}): free some space")
        return EXIT_DISK_FULL


if __name__ == "__main__":
    sys.exit(main())
