"""The item that flows from the spider through the pipelines into storage."""

from __future__ import annotations

import scrapy


class PageItem(scrapy.Item):
    """One fetched HTML page (every fetched page becomes a ``pages`` row).

    Text fields are ``str`` (already decoded); ``html`` is the decoded page source.
    """

    url = scrapy.Field()  # the requested URL
    final_url = scrapy.Field()  # after redirects
    host = scrapy.Field()
    status = scrapy.Field()
    fetched_at = scrapy.Field()  # datetime, UTC
    depth = scrapy.Field()
    parent_url = scrapy.Field()
    anchor = scrapy.Field()  # anchor text of the link that led here
    title = scrapy.Field()
    description = scrapy.Field()  # <meta name="description">
    keywords = scrapy.Field()  # <meta name="keywords">
    language = scrapy.Field()
    charset = scrapy.Field()
    published = scrapy.Field()  # ISO date string or None
    html = scrapy.Field()  # decoded HTML
    text = scrapy.Field()  # main text (trafilatura)
    link_score = scrapy.Field()  # dict: score breakdown of the link that led here
    relevance = scrapy.Field()  # float in [0, 1]: the page's own relevance, or None
    accepted = scrapy.Field()  # bool: page passes the topic's page threshold
    relevance_parts = scrapy.Field()  # dict: formula 3 per part ({"info", "text"}) or None
    warc_file = scrapy.Field()  # WARC capture (TOPICRAWL_WARC_DIR): file name, or None
    warc_offset = scrapy.Field()  # offset of the response record's gzip member in it
    warc_length = scrapy.Field()  # length of that member in bytes
    etag = scrapy.Field()  # the response's ETag header (recrawl: If-None-Match)
    last_modified = scrapy.Field()  # its Last-Modified header (recrawl: If-Modified-Since)
    content_type = scrapy.Field()  # media type: text/html, application/pdf …
    recrawled = scrapy.Field()  # True: a stored page fetched again that changed (recrawl)
    duplicate = scrapy.Field()  # dict {"of": url, "method": str, "score": float} or None
    rejudged = scrapy.Field()  # "final": the page judged again at the crawl's end, else unset
