"""One exception hierarchy for the whole project; messages say what to do next."""


class TopicrawlError(Exception):
    """Base class of every error that topicrawl raises on purpose."""


class TopicFileError(TopicrawlError):
    """A topic file is missing or malformed; the message names the file, the line and the fix."""

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


class ConfigError(TopicrawlError):
    """A setting or configuration value is invalid."""
