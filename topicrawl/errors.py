"""One exception hierarchy for the whole project; messages say what to do next.

Each class carries the exit status of its class of failure (``topicrawl.outcome``).
"""


class TopicrawlError(Exception):
    """Base class of every error that topicrawl raises on purpose."""

    exit_status = 1


class TopicFileError(TopicrawlError):
    """A topic file is missing or malformed; the message names the file, the line and the fix."""

    exit_status = 2

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None):
        self.path = path
        self.line = line
        where = path or "<topic>"
        if line is not None:
            where = f"{where}:{line}"
        super().__init__(f"{where}: {message}")


class ResourceMissingError(TopicrawlError):
    """A dictionary, model or data file that a feature needs is not installed or not found."""


class StorageError(TopicrawlError):
    """The database or index backend failed in a way that retrying did not fix."""

    exit_status = 4


class ConfigError(TopicrawlError):
    """A setting or configuration value is invalid (``scrapy crawl`` exits with 2 for it;
    the topicrawl tools keep 1)."""


class RedisUnavailableError(TopicrawlError):
    """Redis (the scale-out's frontier) did not answer within its retry budget."""

    exit_status = 5


class DiskFullError(StorageError):
    """No space left on the device a file or database is written to."""

    exit_status = 7
