"""Where the shared, read-only data lives (never copied into the project)."""

from __future__ import annotations

import os
from pathlib import Path

from topicrawl.errors import ResourceMissingError

_DEFAULT = Path(__file__).resolve().parent.parent.parent / "shared" / "data"


def data_dir() -> Path:
    """Return the shared data directory: ``$TOPICRAWL_DATA`` or ``../shared/data``."""
    env = os.environ.get("TOPICRAWL_DATA")
    return Path(env) if env else _DEFAULT


def data_path(*parts: str) -> Path:
    """Return a file under the data directory, raising ResourceMissingError when absent."""
    path = data_dir().joinpath(*parts)
    if not path.exists():
        raise ResourceMissingError(
            f"{path} not found: set TOPICRAWL_DATA to the directory that holds the shared data "
            "(hownet/, cilin/, corpus/, html/, topics/, wordsim/)"
        )
    return path
