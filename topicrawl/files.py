"""Files written whole or not at all."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def write_atomic(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file of this process beside it
    and an atomic rename: a reader sees the old file or the new one, never a part, and a
    failure (a full disk, a signal) leaves no temporary file behind."""
    p = Path(path)
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(p)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise
    return p
