"""Decoding and extraction of one HTML page: charset, title, meta, main text, date, language.

Chinese pages often lie about their charset. The decoder trusts evidence over declarations:
a byte-order mark, then strict UTF-8 (GBK text is almost never valid UTF-8), then UTF-8 with
a few invalid bytes (a stray byte must not turn a UTF-8 page into GB18030 mojibake), then the
declared charsets (GB2312 and GBK are decoded as their superset GB18030), strictly and then
with a few invalid bytes, then ``charset_normalizer`` detection.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from typing import Any

import charset_normalizer
import trafilatura
from htmldate import find_date
from lxml import etree
from lxml import html as lxml_html

#: Declared names mapped to the codec that decodes them correctly.
SUPERSETS = {"gb2312": "gb18030", "gbk": "gb18030", "gb_2312-80": "gb18030", "x-gbk": "gb18030",
             "cp936": "gb18030", "big5": "big5hkscs", "iso-8859-1": "cp1252",
             "latin-1": "cp1252", "us-ascii": "utf-8", "ascii": "utf-8"}  # fmt: skip
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_\-]+)""", re.IGNORECASE)
_CJK = re.compile(r"[\u4e00-\u9fff]")
_SPACE = re.compile(r"\s+")


def normalize_charset(name: str | None) -> str | None:
    """Canonical codec name for a declared charset, or None when Python does not know it."""
    if not name:
        return None
    name = name.strip().strip("\"'").lower()
    name = SUPERSETS.get(name, name)
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def declared_meta_charset(body: bytes) -> str | None:
    match = _META_CHARSET.search(body[:4096])
    return match.group(1).decode("ascii", "ignore") if match else None


def decode_html(body: bytes, header_charset: str | None = None) -> tuple[str, str]:
    """Decode an HTML body; returns ``(text, codec name used)``."""
    for bom, codec in ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
                       (codecs.BOM_UTF16_BE, "utf-16")):  # fmt: skip
        if body.startswith(bom):
            return body.decode(codec, "replace"), codecs.lookup(codec).name
    try:
        return body.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    # valid UTF-8 but for a few stray bytes: UTF-8 (GBK text decoded as UTF-8 fails on
    # nearly every Chinese character, far above the tolerance)
    text = _tolerant(body, "utf-8")
    if text is not None:
        return text, "utf-8"
    declared_codecs = []
    for declared in (header_charset, declared_meta_charset(body)):
        codec = normalize_charset(declared)
        if codec and codec != "utf-8":
            declared_codecs.append(codec)
            try:
                return body.decode(codec), codec
            except UnicodeDecodeError:
                continue
    for codec in declared_codecs:  # a declared charset with a few invalid bytes
        text = _tolerant(body, codec)
        if text is not None:
            return text, codec
    best = charset_normalizer.from_bytes(body).best()
    codec = normalize_charset(best.encoding if best else None) or "gb18030"
    return body.decode(codec, "replace"), codec


#: Invalid byte sequences tolerated in a page of an otherwise valid charset: at most this
#: many, or this share of the decoded characters, whichever is larger
MAX_INVALID_SEQUENCES = 8
MAX_INVALID_SHARE = 0.001


def _tolerant(body: bytes, codec: str) -> str | None:
    """``body`` decoded as ``codec`` with invalid sequences replaced (U+FFFD) when they are
    rare (:data:`MAX_INVALID_SEQUENCES`, :data:`MAX_INVALID_SHARE`), else None."""
    try:
        text = body.decode(codec, "replace")
    except LookupError:
        return None
    invalid = text.count("\ufffd") - body.count("\ufffd".encode(codec, "ignore") or b"\0")
    if invalid <= max(MAX_INVALID_SEQUENCES, MAX_INVALID_SHARE * len(text)):
        return text
    return None


@dataclass
class Extracted:
    title: str
    description: str
    keywords: str
    text: str
    published: str | None
    language: str


def _clean(value: str | None) -> str:
    return _SPACE.sub(" ", value or "").strip()


def detect_language(text: str, declared: str | None = None) -> str:
    """'zh' when CJK characters dominate the text, else the declared language or 'en'."""
    sample = text[:2000]
    if sample and len(_CJK.findall(sample)) / max(1, len(sample.replace(" ", ""))) > 0.2:
        return "zh"
    if declared:
        return declared.split("-")[0].lower()
    return "en" if sample else "und"


def extract_page(html: str, url: str | None = None, *, tree: Any = None) -> Extracted:
    """Title, meta description and keywords, main text (trafilatura), date and language.

    ``tree``: the page already parsed by ``lxml.html`` (an ``HtmlElement``, e.g. the root of
    a Scrapy response's selector, ``response.selector.root``), so that extraction and link
    extraction share one parse; it is not modified (trafilatura and htmldate work on copies).
    """
    if tree is not None and not isinstance(tree, lxml_html.HtmlElement):
        tree = None  # not an lxml.html tree (an XML selector): parse the text
    if tree is None and html.strip():
        try:
            tree = lxml_html.fromstring(html)
        except (etree.ParserError, ValueError):  # nothing lxml can build a tree of ('</\x00')
            tree = None
    if tree is None:
        return Extracted("", "", "", "", None, "und")
    title = _clean(" ".join(tree.xpath("//title//text()")))
    description = _clean(
        " ".join(
            tree.xpath(
                "//meta[translate(@name,'DESCRIPTION','description')='description']/@content"
            )
        )
    )
    keywords = _clean(
        " ".join(tree.xpath("//meta[translate(@name,'KEYWORDS','keywords')='keywords']/@content"))
    )
    if not description:
        description = _clean(" ".join(tree.xpath("//meta[@property='og:description']/@content")))
    if not title:
        title = _clean(" ".join(tree.xpath("//meta[@property='og:title']/@content"))) or _clean(
            tree.xpath("string(//h1)")
        )
    declared_lang = (tree.xpath("string(//html/@lang)") or "").strip() or None
    # the date by htmldate (what trafilatura's metadata step calls) before the extraction
    # prunes the tree; trafilatura's other metadata (title, author, sitename …) is not used,
    # and skipping it saves about a third of the extraction's time
    published = find_date(tree, url=url, original_date=True, extensive_search=True)
    doc = trafilatura.bare_extraction(
        tree, url=url, with_metadata=False, include_comments=False, favor_precision=True
    )
    text = (doc.text if doc is not None else "") or ""
    language = detect_language(text or title, declared_lang)
    return Extracted(title, description, keywords, text, published, language)
