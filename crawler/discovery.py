"""Seeds from sitemaps and feeds (``-a discover=sitemaps,feeds``).

* **sitemaps**: the ``Sitemap:`` lines of each seed host's robots.txt (else the conventional
  ``/sitemap.xml``), sitemap indexes followed to their sitemaps, gzipped sitemaps unpacked;
  parsed with Scrapy's own sitemap utilities (``scrapy.utils.sitemap``, what
  ``SitemapSpider`` uses).
* **feeds**: RSS and Atom feeds announced by ``<link rel="alternate">`` in the pages the
  crawl fetches, parsed with feedparser; an entry's title is its link's anchor text.

The URLs found are links like any other: scored by the topic's link scorer (a sitemap gives
no anchor text, a feed its entry titles) and queued by that priority; as with the links of a
seed page, each is queued whatever its score (a site's own list of its pages stands in for
its home page's links). Sitemaps and feeds are not pages: they do not count against
``max_pages`` and are not stored; ``topicrawl/discovery/*`` counts them.

**The order of sitemap entries** (:func:`sitemap_ranks`, ``TOPICRAWL_SITEMAP_INTERLEAVE``).
A sitemap entry carries no evidence of relevance (no anchor, no holding page), so formula 5
scores a sitemap's entries alike, and at one priority they were fetched in the sitemaps' own
order. Sites split their sitemaps by section (``/sitemaps/news.xml``,
``/sitemaps/opinion.xml``), so that order is section by section: the first pages the host
accepted were one section's, Algorithm 3's sample of accepted URLs (:mod:`relevance.urls`,
which takes the URLs as they are accepted) found a majority structure the host does not
have, and the page decision (``[page] struct_weight`` μ) multiplied the relevance of the
articles of the host's other sections by 1 − μ (up to 4 of 38 on-topic articles lost in
the discovery benchmark, docs/benchmarks/discovery.md). So the entries of a host's
sitemaps are held until every sitemap of the host is read (``TopicSpider.release_sitemaps``:
queued as each sitemap was read, the first one's entries filled the downloader, which takes
up to ``CONCURRENT_REQUESTS`` requests ahead of the per-host slot), then each is queued its
rank below its score's priority, ranked within its sitemap in a pseudo-random order (CRC-32
of the URL: the same in every run): entry k of every sitemap shares a priority, and the
sitemaps are fetched in turn, one entry each, in an order unrelated to their sections.
The score still counts (an entry scored 0.01 higher, by Algorithm 3 or a URL model, goes
10 ranks earlier), but among entries it is mostly the rank that orders: they carry little
other evidence. Pages found by links are not concerned; a sitemap URL found again by a link is
queued again by the link's score (``TOPICRAWL_REQUEUE_MARGIN``).
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from scrapy.utils.gz import gunzip
from scrapy.utils.sitemap import Sitemap, sitemap_urls_from_robots

from topicrawl.errors import ConfigError

SITEMAPS = "sitemaps"
FEEDS = "feeds"
SOURCES = (SITEMAPS, FEEDS)
#: request meta key: what a discovery request fetches ("robots", "sitemap" or "feed")
DISCOVERY = "topicrawl_discovery"
#: request meta key of a sitemap request: the host whose sitemaps it counts in
SITEMAP_HOST = "topicrawl_sitemap_host"
FEED_TYPES = ("application/rss+xml", "application/atom+xml", "application/feed+json")
#: request meta key: the URL under which :class:`DiscoveryJournal` has the request
JOURNAL_KEY = "topicrawl_discovery_key"
#: the JOBDIR file of :class:`DiscoveryJournal`
JOURNAL_FILE = "topicrawl-discovery.tsv"
_KINDS = ("robots", "sitemap", "feed")

log = logging.getLogger(__name__)


class DiscoveryJournal:
    """The discovery requests of a JOBDIR crawl that are not done yet, kill -9 safe.

    A sitemap is done when its entries are queued, which the hold of
    ``TOPICRAWL_SITEMAP_INTERLEAVE`` puts off until its host's other sitemaps are read: a
    crawl killed in between had fetched the sitemap (Scrapy's dupefilter and the fetch-once
    file remember it) and queued none of its entries, and the resume never found them. Each
    request is appended here when made (``+ kind url``) and again when done (``- url``),
    flushed to the operating system at once; :meth:`open` gives a resume those not done,
    to request again. The file also names every discovery URL the crawl requested: they are
    in the fetch-once file like pages, and are not pages to fetch again after a kill."""

    def __init__(self, directory: str | Path):
        self.path = Path(directory) / JOURNAL_FILE
        #: every discovery URL the journal names (done or not)
        self.urls: set[str] = set()
        self._fh: IO[str] | None = None

    def open(self) -> list[tuple[str, str]]:
        """Read the journal a killed or stopped crawl left: its requests not done, as
        ``(kind, url)`` in the order made; then open it for appending. A line that does not
        parse (cut by a kill mid-write) is skipped."""
        pending: dict[str, tuple[str, str]] = {}
        if self.path.exists():
            with self.path.open(encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    parts = line.rstrip("\n").split("\t")
                    if parts[0] == "+" and len(parts) == 3 and parts[1] in _KINDS:
                        pending[parts[2]] = (parts[1], parts[2])
                        self.urls.add(parts[2])
                    elif parts[0] == "-" and len(parts) == 2:
                        pending.pop(parts[1], None)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = self.path.open("a", encoding="utf-8")
        return list(pending.values())

    def _write(self, line: str) -> None:
        if self._fh is None:
            return
        try:
            self._fh.write(line)
            self._fh.flush()
        except OSError as exc:  # a full disk: the crawl goes on, a resume may miss entries
            log.warning("discovery journal %s not written: %s", self.path, exc)

    def requested(self, kind: str, url: str) -> None:
        self.urls.add(url)
        self._write(f"+\t{kind}\t{_field(url)}\n")

    def done(self, url: str) -> None:
        self._write(f"-\t{_field(url)}\n")

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def _field(value: str) -> str:
    """A value for one tab-separated field (a URL from the web may hold any character)."""
    return value.replace("\t", "%09").replace("\n", "%0A").replace("\r", "%0D")


def sitemap_ranks(urls: Iterable[str]) -> dict[str, int]:
    """Each URL of one sitemap with its rank 0 … n − 1 in a pseudo-random order (CRC-32 of
    the URL, then the URL): how many priority units its request is queued below its score's
    (see the module docstring). Reproducible: the same URLs give the same ranks."""
    order = sorted(set(urls), key=lambda u: (zlib.crc32(u.encode("utf-8", "replace")), u))
    return {u: k for k, u in enumerate(order)}


def parse_discover(value: str | None) -> frozenset[str]:
    """``-a discover=sitemaps,feeds`` -> the set of sources (empty when not given)."""
    if not value:
        return frozenset()
    names = {v.strip().lower() for v in str(value).split(",") if v.strip()}
    unknown = sorted(names - set(SOURCES))
    if unknown:
        raise ConfigError(
            f"-a discover={value!r}: unknown source {unknown[0]!r}; use sitemaps, feeds or "
            "sitemaps,feeds"
        )
    return frozenset(names)


def robots_sitemaps(robots_txt: bytes | str, base_url: str) -> list[str]:
    """The sitemap URLs a robots.txt names (``Sitemap:`` lines), absolute."""
    if isinstance(robots_txt, str):
        robots_txt = robots_txt.encode("utf-8")
    return list(dict.fromkeys(sitemap_urls_from_robots(robots_txt, base_url=base_url)))


@dataclass
class SitemapEntries:
    """A parsed sitemap: ``kind`` "sitemapindex" (``urls`` are sitemaps) or "urlset"
    (``urls`` are pages), and how many entries were cut by ``max_urls``."""

    kind: str
    urls: list[str]
    cut: int = 0


def sitemap_body(body: bytes, *, max_size: int) -> bytes:
    """The XML of a sitemap response: gunzipped when gzip (by its magic number, whatever
    the URL or type says), at most ``max_size`` bytes unpacked (``ValueError`` beyond)."""
    if body[:3] == b"\x1f\x8b\x08":  # gzip's magic number and deflate
        return gunzip(body, max_size=max_size)
    if max_size and len(body) > max_size:
        raise ValueError(f"sitemap larger than {max_size} bytes")
    return body


def parse_sitemap(xml: bytes, *, max_urls: int = 50_000) -> SitemapEntries | None:
    """Parse a sitemap or sitemap index (None when ``xml`` is neither)."""
    try:
        sitemap = Sitemap(xml)
    except Exception:  # lxml found no root element: not XML
        return None
    if sitemap.type not in ("urlset", "sitemapindex"):
        return None
    urls, cut = [], 0
    for entry in sitemap:
        loc = entry.get("loc")
        if not loc:
            continue
        if len(urls) >= max_urls:
            cut += 1
            continue
        urls.append(loc)
    return SitemapEntries(sitemap.type, urls, cut)


@dataclass
class FeedEntry:
    url: str
    title: str
    summary: str


def parse_feed(body: bytes, *, max_entries: int = 50_000) -> tuple[str, list[FeedEntry]] | None:
    """The title and entries (link, title, summary) of an RSS or Atom feed (feedparser);
    None when ``body`` is no feed."""
    import feedparser

    parsed: Any = feedparser.parse(body)
    if not parsed.get("version") and not parsed.entries:
        return None
    entries = []
    for entry in parsed.entries[:max_entries]:
        link = entry.get("link")
        if not link:
            continue
        summary = " ".join(str(entry.get("summary", "")).split())
        entries.append(FeedEntry(link, " ".join(str(entry.get("title", "")).split()), summary))
    return " ".join(str(parsed.feed.get("title", "")).split()), entries


def feed_urls(page: Any) -> Iterator[str]:
    """Absolute URLs of the RSS/Atom feeds an HTML page announces (``<link rel=alternate>``)."""
    for link in page.xpath("//link[@href]"):
        rel = (link.attrib.get("rel") or "").lower().split()
        kind = (link.attrib.get("type") or "").lower().split(";")[0].strip()
        if "alternate" in rel and kind in FEED_TYPES:
            yield page.urljoin(link.attrib["href"].strip())
