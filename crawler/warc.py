"""WARC capture of a crawl: ``-s TOPICRAWL_WARC_DIR=DIR``.

:class:`WarcCaptureMiddleware` (a downloader middleware next to the downloader, so it sees
every fetched response as it came: redirects, errors, robots.txt, the body still
Content-Encoded) writes a request and a response record per fetch with
:class:`topicrawl.warc.WarcFileSet`. The gzip compression and the write run in a thread
(one lock per file set), off the reactor; the response's place (file, offset, length) goes
into ``response.meta["warc"]``, and :class:`WarcReferenceMiddleware` (a spider middleware)
copies it into the page item (``warc_file``, ``warc_offset``, ``warc_length`` of the
``pages`` row). Settings: ``TOPICRAWL_WARC_DIR`` (empty: off), ``TOPICRAWL_WARC_MAX_SIZE``
(bytes per file before the next), ``TOPICRAWL_WARC_PREFIX``. Under the scale-out each
worker writes its own file set (file names carry host, pid and worker id).
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

from scrapy import Request, Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.http import Response
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet import threads

import topicrawl
from topicrawl.warc import DEFAULT_MAX_SIZE, WarcFileSet, WarcRef

log = logging.getLogger(__name__)

META_KEY = "warc"


def _headers(headers: Any) -> list[tuple[str, str]]:
    out = []
    for name, values in headers.items():
        key = name.decode("latin-1") if isinstance(name, bytes) else str(name)
        for value in values:
            out.append((key, value.decode("latin-1") if isinstance(value, bytes) else str(value)))
    return out


def _reason(status: int) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


class WarcCaptureMiddleware:
    """Writes every fetched response (and its request) to the crawl's WARC file set."""

    def __init__(self, files: WarcFileSet, *, stats: Any = None):
        self.files = files
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> WarcCaptureMiddleware:
        s = crawler.settings
        directory = s.get("TOPICRAWL_WARC_DIR")
        if not directory:
            raise NotConfigured("no WARC capture (set TOPICRAWL_WARC_DIR)")
        worker = s.get("TOPICRAWL_WARC_WORKER") or os.environ.get("TOPICRAWL_WORKER_ID") or "0"
        files = WarcFileSet(
            directory,
            max_size=s.getint("TOPICRAWL_WARC_MAX_SIZE", DEFAULT_MAX_SIZE),
            prefix=s.get("TOPICRAWL_WARC_PREFIX") or "topicrawl",
            worker=worker,
            software=f"topicrawl/{topicrawl.__version__} (Scrapy)",
            info={"robots": "obey" if s.getbool("ROBOTSTXT_OBEY") else "ignore",
                  "http-header-user-agent": s.get("USER_AGENT") or ""},
        )  # fmt: skip
        mw = cls(files, stats=crawler.stats)
        crawler.signals.connect(mw.spider_closed, signal=signals.spider_closed)
        return mw

    def spider_closed(self, spider: Spider) -> None:
        self.files.close()
        if self.stats is not None:
            self.stats.set_value("topicrawl/warc/files", len(self.files.files))
        log.info(
            "WARC capture: %d records in %d files under %s",
            self.files.records, len(self.files.files), self.files.directory,
        )  # fmt: skip

    def _write(self, request: Request, response: Response) -> WarcRef:
        ip = getattr(response, "ip_address", None)
        request_headers = _headers(request.headers)
        host = request.url.split("://", 1)[-1].split("/", 1)[0]
        if not any(k.lower() == "host" for k, _ in request_headers):
            request_headers.insert(0, ("Host", host))
        stopped = "download_stopped" in (response.flags or [])
        return self.files.write_exchange(
            response.url,
            method=request.method,
            request_headers=request_headers,
            status=response.status,
            reason=_reason(response.status),
            protocol=getattr(response, "protocol", None) or "HTTP/1.1",
            response_headers=_headers(response.headers),
            body=response.body,
            ip=str(ip) if ip is not None else None,
            truncated="unspecified" if stopped else None,
            date=datetime.now(UTC),
        )

    async def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Response:
        try:
            ref = await maybe_deferred_to_future(
                threads.deferToThread(self._write, request, response)
            )
        except OSError as exc:  # a full disk stops the capture, not the crawl: counted
            if self.stats is not None:
                self.stats.inc_value("topicrawl/warc/errors")
            log.error("WARC record of %s not written: %s", response.url, exc)
            return response
        # a plain dict: the meta of a redirected request goes through the (JSON) frontier
        # on the request: the response is tied to it (response.meta) after the middlewares
        request.meta[META_KEY] = {"file": ref.file, "offset": ref.offset, "length": ref.length}
        if self.stats is not None:
            self.stats.inc_value("topicrawl/warc/responses")
        return response


class WarcReferenceMiddleware:
    """Puts the WARC place of a page's response into its item (``warc_*`` fields)."""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> WarcReferenceMiddleware:
        if not crawler.settings.get("TOPICRAWL_WARC_DIR"):
            raise NotConfigured("no WARC capture (set TOPICRAWL_WARC_DIR)")
        return cls()

    @staticmethod
    def _mark(item: Any, ref: dict[str, Any] | None, url: str | None = None) -> Any:
        """The response's WARC place into its own page's item (``final_url`` is the
        response's URL; a page judged again that another page's callback yields keeps its
        own place)."""
        if ref is not None and not isinstance(item, Request) and hasattr(item, "fields"):
            if url is not None and item.get("final_url") not in (None, url):
                return item
            if "warc_file" in item.fields:
                item["warc_file"] = ref["file"]
                item["warc_offset"] = ref["offset"]
                item["warc_length"] = ref["length"]
        return item

    def process_spider_output(
        self, response: Response, result: Iterable[Any], spider: Spider | None = None
    ) -> Iterator[Any]:
        ref = response.meta.get(META_KEY)
        for item in result:
            yield self._mark(item, ref, response.url)

    async def process_spider_output_async(
        self, response: Response, result: AsyncIterator[Any], spider: Spider | None = None
    ) -> AsyncIterator[Any]:
        ref = response.meta.get(META_KEY)
        async for item in result:
            yield self._mark(item, ref, response.url)
