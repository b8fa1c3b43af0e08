"""``topicrawl sitegen build|serve``: the local test web from the command line."""

from __future__ import annotations

from sitegen.server import add_arguments


def register(subparsers) -> None:
    """Add ``topicrawl sitegen build OUT`` and ``topicrawl sitegen serve OUT``."""
    parser = subparsers.add_parser(
        "sitegen", help="build or serve the local multi-site Chinese test web"
    )
    sub = parser.add_subparsers(dest="sitegen_command", metavar="ACTION", required=True)
    add_arguments(sub)
