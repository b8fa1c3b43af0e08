"""topicrawl: a focused crawler that builds clean, deduplicated topic corpora."""

__version__ = "0.1.0"
