"""The console a person reads: one-line failures, quiet library loggers, a live status line.

- :func:`fail` prints an expected failure as one line (``topicrawl: cause: fix``).
- :func:`quiet_libraries` puts chatty library loggers (alembic, trafilatura, htmldate …) at
  WARNING; :class:`RepeatFilter` lets each of their messages through once.
- :class:`ExpectedErrorFilter` keeps the message of a network failure (DNS, refused,
  timeout) but drops its traceback: tracebacks are for bugs, or for ``--debug``.
- :class:`StatusLine` is the live progress line on a terminal; log records printed while it
  is shown first clear it.
"""

from __future__ import annotations

import logging
import sys
from typing import IO, Any

#: library loggers that log at INFO (or repeat a WARNING) on every page or command
LIBRARY_LOGGERS = (
    "alembic",
    "trafilatura",
    "htmldate",
    "courlan",
    "charset_normalizer",
    "jieba",
    "gensim",
    "urllib3",
    "filelock",
)


def fail(exc: BaseException | str, stream: IO[str] | None = None) -> None:
    """Print an expected failure as one line on standard error."""
    stream = stream or sys.stderr
    clear_status()
    text = " ".join(str(exc).split()) if not isinstance(exc, str) else exc
    print(f"topicrawl: {text}", file=stream, flush=True)


class RepeatFilter(logging.Filter):
    """Lets a message of the library loggers through once (the same logger and format);
    repeats are counted in ``suppressed``."""

    def __init__(self, prefixes: tuple[str, ...] = LIBRARY_LOGGERS):
        super().__init__()
        self.prefixes = prefixes
        self.seen: set[tuple[str, str]] = set()
        self.suppressed = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.name.startswith(self.prefixes):
            return True
        key = (record.name, str(record.msg))
        if key in self.seen:
            self.suppressed += 1
            return False
        self.seen.add(key)
        return True


def _expected_network_errors() -> tuple[type[BaseException], ...]:
    from twisted.internet import error as tw

    kinds: list[type[BaseException]] = [
        tw.DNSLookupError, tw.ConnectError, tw.TimeoutError, tw.ConnectionLost,
        tw.ConnectionDone, TimeoutError, ConnectionError,
    ]  # fmt: skip
    from scrapy import exceptions as sx

    for name in ("CannotResolveHostError", "DownloadConnectionRefusedError",
                 "DownloadTimeoutError", "DownloadCancelledError", "DownloadFailedError",
                 "ResponseDataLossError"):  # fmt: skip
        if hasattr(sx, name):  # Scrapy >= 2.14 wraps Twisted's errors in these
            kinds.append(getattr(sx, name))
    try:
        from twisted.web._newclient import ResponseFailed, ResponseNeverReceived

        kinds += [ResponseNeverReceived, ResponseFailed]
    except ImportError:
        pass
    return tuple(kinds)


class ExpectedErrorFilter(logging.Filter):
    """Drops the traceback of a record whose exception is an expected network failure
    (the message, which names it, stays), and Scrapy's "Gave up retrying" line per dead
    link (counted in the stats as ``retry/max_reached``) and the "Disabled component" line
    of a component switched off by a setting."""

    def __init__(self) -> None:
        super().__init__()
        self.kinds = _expected_network_errors()

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if exc is not None and isinstance(exc, self.kinds):
            record.exc_info = None
            record.exc_text = None
        # one line per dead link is noise: failed requests are counted (stats, progress,
        # summary) and an unreachable seed is named in the crawl's last line
        if record.name == "scrapy.downloadermiddlewares.retry" and str(record.msg).startswith(
            "Gave up retrying"
        ):
            return False
        # a component switched off by a setting is not a warning for the person at the console
        if record.name == "scrapy.middleware" and str(record.msg).startswith("Disabled "):
            return False
        return True


class _ClearStatusFilter(logging.Filter):
    """Clears the live status line before a log record is printed over it."""

    def filter(self, record: logging.LogRecord) -> bool:
        clear_status()
        return True


#: library loggers whose WARNINGs are about one page, not about the run (trafilatura's
#: "discarding data: URL" for a page without main text): ERROR only, unless debugging
PAGE_LEVEL_LOGGERS = ("trafilatura", "htmldate", "courlan")


def quiet_libraries(debug: bool = False) -> None:
    """Library loggers at WARNING (per-page ones at ERROR; DEBUG with ``debug``); Scrapy's
    "Disabled component" lines dropped at their logger, so whichever root handler Scrapy
    installs later never sees them."""
    for name in LIBRARY_LOGGERS:
        level = logging.ERROR if name in PAGE_LEVEL_LOGGERS else logging.WARNING
        logging.getLogger(name).setLevel(logging.DEBUG if debug else level)
    middleware = logging.getLogger("scrapy.middleware")
    has = any(isinstance(f, DisabledComponentFilter) for f in middleware.filters)
    if not debug and not has:
        middleware.addFilter(DisabledComponentFilter())
    logging.captureWarnings(True)


class DisabledComponentFilter(logging.Filter):
    """Drops Scrapy's "Disabled <component>: <why>" WARNING: a component switched off by a
    setting (WARC capture, the scale-out's idle close) is not news for the person at the
    console. A filter on the ``scrapy.middleware`` logger, since Scrapy replaces the root
    handler (and its filters) while it builds the crawler."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Disabled ")


def install_filters(debug: bool = False, logger: logging.Logger | None = None) -> None:
    """Console filters on every handler of ``logger`` (the root logger): repeated library
    messages once, expected network failures without traceback (unless ``debug``), and the
    live status line cleared before a record is printed."""
    quiet_libraries(debug)
    logger = logger or logging.getLogger()
    for handler in logger.handlers:
        kinds = {type(f) for f in handler.filters}
        if not debug and ExpectedErrorFilter not in kinds:
            handler.addFilter(ExpectedErrorFilter())
        if RepeatFilter not in kinds:
            handler.addFilter(RepeatFilter())
        if _ClearStatusFilter not in kinds:
            handler.addFilter(_ClearStatusFilter())


class StatusLine:
    """One line on a terminal, rewritten in place (``\\r`` and erase-to-end-of-line)."""

    active: StatusLine | None = None

    def __init__(self, stream: IO[str] | None = None):
        self.stream = stream or sys.stderr
        self.shown = False

    def update(self, text: str) -> None:
        import shutil

        width = shutil.get_terminal_size((100, 20)).columns
        if len(text) >= width:
            text = text[: max(10, width - 2)] + "…"
        self.stream.write("\r\x1b[K" + text)
        self.stream.flush()
        self.shown = True
        StatusLine.active = self

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False


def clear_status() -> None:
    """Erase the live status line, if one is shown (before printing anything else)."""
    if StatusLine.active is not None:
        StatusLine.active.clear()


def is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
