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

import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

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
