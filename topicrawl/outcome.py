"""How a command ends: finish reasons of a crawl run and the exit status of each class.

One table for ``scrapy crawl topic`` and the ``topicrawl`` commands (README "Exit status"):

====  ======================  =====================================================
exit  finish reason           what happened
====  ======================  =====================================================
0     (Scrapy's: finished,    the command did its work
      max_pages, …)
1     —                       another named failure (a missing resource, an unknown
                              run, a bad tool option …); with a traceback: a bug
2     —                       bad usage or configuration (argument, seed, topic file,
                              crawl setting)
3     ``no_seed_reachable``   no seed could be fetched (DNS, connection, HTTP error)
4     ``database_unreachable`` the database did not answer within its retry budget
5     ``redis_unreachable``   Redis (the scale-out) did not answer within its budget
6     ``pages_spilled``       pages stayed in spill files: run ``topicrawl import-spill``
7     ``disk_full``           no space left on the device being written
130   —                       SIGINT during start-up (checks, topic, scorer build):
                              nothing crawled, no run recorded
143   —                       SIGTERM during start-up (the same)
====  ======================  =====================================================

130 and 143 are the shell's 128 + the signal's number (``topicrawl.interrupt``); after
start-up Scrapy's own graceful shutdown applies (finish reason ``shutdown``, exit 0).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

EXIT_OK = 0
EXIT_BUG = 1
EXIT_USAGE = 2
EXIT_NO_SEED = 3
EXIT_DATABASE = 4
EXIT_REDIS = 5
EXIT_SPILLED = 6
EXIT_DISK_FULL = 7
EXIT_SIGINT = 130  # 128 + SIGINT: stopped during start-up (topicrawl.interrupt)
EXIT_SIGTERM = 143  # 128 + SIGTERM

NO_SEED_REACHABLE = "no_seed_reachable"
DATABASE_UNREACHABLE = "database_unreachable"
REDIS_UNREACHABLE = "redis_unreachable"
PAGES_SPILLED = "pages_spilled"
DISK_FULL = "disk_full"

#: exit status of a crawl per finish reason; any other reason (finished, max_pages,
#: closespider_timeout, harvest_exhausted, shutdown …) exits 0
EXIT_STATUS = {
    NO_SEED_REACHABLE: EXIT_NO_SEED,
    DATABASE_UNREACHABLE: EXIT_DATABASE,
    REDIS_UNREACHABLE: EXIT_REDIS,
    PAGES_SPILLED: EXIT_SPILLED,
    DISK_FULL: EXIT_DISK_FULL,
}

#: stats keys: a component that knows why the crawl must end (or ended badly) sets the
#: reason and one line for the user (cause and fix); the crawl command and the run record
#: read them (they win over Scrapy's close reason)
REASON_KEY = "topicrawl/finish_reason"
MESSAGE_KEY = "topicrawl/finish_message"


def set_outcome(stats: Any, reason: str, message: str) -> None:
    """Record why the crawl ends badly in the Scrapy stats (the first outcome set wins)."""
    if stats is not None and not stats.get_value(REASON_KEY):
        stats.set_value(REASON_KEY, reason)
        stats.set_value(MESSAGE_KEY, message)


def finish_reason(stats: dict[str, Any], close_reason: str | None) -> str:
    """The run's finish reason: an outcome set by a component, else Scrapy's close reason."""
    return str(stats.get(REASON_KEY) or close_reason or stats.get("finish_reason") or "")


def exit_status(reason: str) -> int:
    return EXIT_STATUS.get(reason, EXIT_OK)


def command(name: str = "topicrawl") -> str:
    """How the user runs ``name`` from here: the bare name when the shell finds this very
    program, else its path in the running virtual environment (relative when shorter)."""
    script = Path(sys.executable).parent / name
    if not script.exists():
        return name
    found = shutil.which(name)
    if found and Path(found).resolve() == script.resolve():
        return name
    try:
        rel = os.path.relpath(script)
    except ValueError:  # another drive (Windows)
        return str(script)
    return rel if len(rel) < len(str(script)) else str(script)


def is_disk_full(exc: BaseException) -> bool:
    """True for "no space left on device" (errno ENOSPC, or SQLite's "disk is full")."""
    import errno

    while exc is not None:
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if "database or disk is full" in str(exc):
            return True
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return False
