"""A page's outgoing links as the topic spider follows them, in one place for the spider
(inline) and the extraction pool's workers (crawler/extractpool.py), so both give the same
links in the same order (issue 16: the worker's parse of the page serves link extraction
too, and the crawl's thread does not parse the page).

Scrapy's ``LinkExtractor`` (absolute, escaped URLs; one per URL, the first anchor text; no
extension denied: the spider filters non-HTML suffixes itself), with an ``<a>``'s ``title``
or its image's ``alt`` as the anchor where the text is empty.
"""

from __future__ import annotations

from typing import Any

from scrapy.linkextractors import LinkExtractor


def link_extractor() -> LinkExtractor:
    """The spider's link extractor."""
    return LinkExtractor(deny_extensions=[], unique=True, strip=True)


def page_links(page: Any, extractor: LinkExtractor) -> list[tuple[str, str]]:
    """``(url, anchor)`` of the links of ``page`` (a Scrapy ``HtmlResponse``), in document
    order, the anchor's whitespace collapsed; a link with no text takes the first non-empty
    ``title`` or ``.//img/@alt`` of an ``<a>`` to the same URL."""
    links = extractor.extract_links(page)
    fallback: dict[str, str] = {}
    if any(not link.text.strip() for link in links):  # only then look for title/alt
        for a in page.xpath("//a[@href][@title or .//img/@alt]"):
            text = " ".join((a.attrib.get("title") or a.xpath(".//img/@alt").get("")).split())
            if text:
                fallback.setdefault(page.urljoin(a.attrib["href"].strip()), text)
    return [(link.url, " ".join(link.text.split()) or fallback.get(link.url, "")) for link in links]
