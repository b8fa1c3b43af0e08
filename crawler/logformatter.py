"""Log lines of the crawl that count rather than dump.

Scrapy logs every dropped item at WARNING with the whole item (the page's HTML and text):
thousands of lines per crawl. Here a drop is one DEBUG line with the URL and the reason;
drops are counted in the stats by the pipelines (``topicrawl/dropped/*``,
``topicrawl/dedup/dropped/*``).
"""

from __future__ import annotations

import logging
from typing import Any

from scrapy import Spider
from scrapy.http import Response
from scrapy.logformatter import LogFormatter, LogFormatterResult
from twisted.python.failure import Failure


class QuietLogFormatter(LogFormatter):
    """Scrapy's log formatter with dropped items as one DEBUG line: URL and reason."""

    def dropped(
        self,
        item: Any,
        exception: BaseException,
        response: Response | Failure | None,
        spider: Spider,
    ) -> LogFormatterResult:
        url = item.get("url") if hasattr(item, "get") else None
        if url is None and isinstance(response, Response):
            url = response.url
        return {
            "level": logging.DEBUG,
            "msg": "Dropped %(url)s: %(reason)s",
            "args": {"url": url or "?", "reason": " ".join(str(exception).split())[:300]},
        }
