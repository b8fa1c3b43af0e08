"""Decoding and extraction of one HTML page: charset, title, meta, main text, date, language,
and the section the page says it belongs to: the one its breadcrumb names
(:func:`breadcrumb_section`), the current item of its menu (:func:`nav_section`) and the
section its metadata states (:func:`meta_section`).

Chinese pages often lie about their charset. The decoder trusts evidence over declarations:
a byte-order mark, then strict UTF-8 (GBK text is almost never valid UTF-8), then UTF-8 with
a few invalid bytes (a stray byte must not turn a UTF-8 page into GB18030 mojibake), then the
declared charsets (GB2312 and GBK are decoded as their superset GB18030), strictly and then
with a few invalid bytes, then ``charset_normalizer`` detection.
"""

from __future__ import annotations

import codecs
import functools
import json
import logging
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

import charset_normalizer
import trafilatura
from htmldate import find_date
from lxml import etree
from lxml import html as lxml_html
from trafilatura.external import SANITIZED_XPATH
from trafilatura.external import compare_extraction as _trafilatura_compare

from topicrawl.heap import malloc_trim


class JustextStoplists:
    """jusText's stop words of every language, for trafilatura's jusText fallback, held once
    and compactly.

    trafilatura builds a tuple of them (``trafilatura.external.JT_STOPLIST``, 154,484 words,
    ≈ 14 MB) and gives it to jusText, whose ``define_stoplist`` lower-cases them into a
    frozenset that it caches keyed by the tuple (≈ 19 MB): two copies of every word, both
    kept. Set as trafilatura's ``JT_STOPLIST`` (:func:`share_justext_stoplists`), this object
    stands for the words instead, and jusText's ``define_stoplist`` gives for it
    :meth:`words`: the same lower-cased words in a MARISA trie (``marisa_trie.Trie``, ≈ 0.6 MB
    of a static succinct trie, against the frozenset's ≈ 19 MB), which answers jusText's only
    question, ``word.lower() in stoplist``, exactly as the frozenset does (≈ 1 µs a word
    against 0.07: jusText runs on a fifth of the pages, on their whitespace-separated
    tokens), so jusText classifies every paragraph as before (docs/scale.md,
    ``tests/test_extractpool.py``). Hashed by identity: no hash of 154,484 words at each
    jusText call either."""

    #: whether jusText has read the words (a page's extraction needed its fallback)
    built = False
    #: the trie of the words, built at the first use (one a process)
    _words: Any = None

    def __iter__(self) -> Iterator[str]:
        from justext import get_stoplist, get_stoplists

        type(self).built = True
        for language in sorted(get_stoplists()):
            yield from get_stoplist(language)

    def words(self) -> Any:
        """The words lower-cased as jusText's ``define_stoplist`` does, as a
        ``marisa_trie.Trie`` (a set-like object for ``in``), built once a process."""
        cls = type(self)
        if cls._words is None:
            import marisa_trie

            cls._words = marisa_trie.Trie(word.lower() for word in self)  # streamed: no set
            _trim_heap()  # the build's ≈ 13 MB of freed C++ heap back to the system
        return cls._words


def _trim_heap() -> None:
    """glibc's ``malloc_trim(0)`` (:func:`topicrawl.heap.malloc_trim`): freed heap back to
    the system (nothing elsewhere)."""
    trim = malloc_trim()
    if trim is not None:
        trim(0)


def _define_stoplist(stoplist: Any, original: Callable[[Any], Any]) -> Any:
    """jusText's ``define_stoplist`` (its lower-cased frozenset of a stoplist) but
    :meth:`JustextStoplists.words` for the shared stoplists."""
    if isinstance(stoplist, JustextStoplists):
        return stoplist.words()
    return original(stoplist)


def share_justext_stoplists() -> None:
    """Make trafilatura's jusText fallback use :class:`JustextStoplists` (unless it has built
    its own tuple already), and jusText's ``define_stoplist`` (looked up in
    ``justext.core`` at each ``classify_paragraphs`` call) give its trie for it."""
    external = sys.modules.get("trafilatura.external")
    if external is not None and getattr(external, "JT_STOPLIST", None) is None:
        external.JT_STOPLIST = JustextStoplists()
    core = sys.modules.get("justext.core")
    if core is not None and not isinstance(core.define_stoplist, functools.partial):
        core.define_stoplist = functools.partial(_define_stoplist,
                                                 original=core.define_stoplist)  # fmt: skip


def justext_stoplists_built() -> bool:
    """Whether this process holds jusText's stoplist of every language (its trie, ≈ 1 MB;
    it was ≈ 19 MB): a page's extraction here needed trafilatura's jusText fallback."""
    external = sys.modules.get("trafilatura.external")
    stoplist = getattr(external, "JT_STOPLIST", None)
    if isinstance(stoplist, JustextStoplists):
        return JustextStoplists.built
    return stoplist is not None


share_justext_stoplists()


# -- trafilatura's comparison with readability and jusText, run only where it can change --
#: elements whose text readability drops before it scores (``Document.summary``), and the
#: text its sanitising writes into a video ``<iframe>`` ("VIDEO"), counted at most once an
#: iframe: at most this many characters, a word and a space
_READABILITY_DROPS = ("script", "style")
_READABILITY_IFRAME_TEXT = len("VIDEO") + 1
#: counted by :func:`gated_compare_extraction`: [comparisons skipped, comparisons run]
COMPARISONS = [0, 0]
#: the trafilatura release whose ``compare_extraction`` and readability fork the gate was
#: checked against (requirements.lock); ``tests/test_extract_gate.py`` fails on another one
#: until the gate is checked again
GATE_CHECKED_TRAFILATURA = "2.3.1"


def readability_length_bound(raw_tree: Any) -> int:
    """An upper bound on the length of readability's text of ``raw_tree`` as trafilatura's
    ``compare_extraction`` measures it (``len(trim(text))``: blanks collapsed, ends
    stripped).

    readability (trafilatura's fork, ``Document.summary``) keeps text nodes of the page
    whole, in document order, without its scripts and styles, and adds "VIDEO" to a video
    iframe. The blank-collapsed length of a subsequence of text nodes is at most that of the
    whole (non-blank characters plus the blank runs between them, neither of which a
    subsequence can increase), and taking out a script's text lowers the whole's by at
    least its non-blank characters less one blank run. So: the collapsed length of the page's
    text (``tostring(method="text")``, C speed) less each script's and style's non-blank
    characters, plus one a script or style, plus ``VIDEO`` and a blank an iframe."""
    text = etree.tostring(raw_tree, method="text", encoding=str)
    bound = len(" ".join(text.split()))
    for el in raw_tree.iter(_READABILITY_DROPS):
        if el.text:
            bound -= sum(map(len, el.text.split())) - 1
    for _ in raw_tree.iter("iframe"):
        bound += _READABILITY_IFRAME_TEXT
    return bound


def gated_compare_extraction(cleaned_tree: Any, raw_tree: Any, body: Any, text: str,
                             options: Any) -> tuple[Any, str]:  # fmt: skip
    """trafilatura's ``compare_extraction`` (``trafilatura.external``: readability, then
    jusText, may replace trafilatura's own first-pass ``body`` and ``text``), skipped where
    it provably returns ``(body, text)`` unchanged — same arguments, same result.

    In precision and balanced mode (not recall, which has other rules) the comparison takes
    readability's text (``_prefer_readability``) only if it is empty-own (``text`` empty),
    more than twice as long as ``text``, or longer than ``2 × min_extracted_size`` while
    ``body`` has no paragraph text or more tables than paragraphs; then jusText only if the
    body it kept is "unclean" (``SANITIZED_XPATH``: nav, footer, aside, iframe …) or shorter
    than ``min_extracted_size``. So when ``text`` is at least ``min_extracted_size`` long,
    ``body`` is clean and has paragraph text and no more tables than paragraphs, and
    readability's text cannot be more than twice ``text``'s length
    (:func:`readability_length_bound`), neither can replace anything, and readability (its
    scoring of the whole raw page: about a third of the comparison's time) is not run.
    Otherwise the comparison runs as trafilatura wrote it."""
    n = len(text)
    if (
        options.focus != "recall"
        and n >= options.min_extracted_size
        and not body.xpath(SANITIZED_XPATH)
        and body.xpath(".//p//text()")
        and len(body.findall(".//table")) <= len(body.findall(".//p"))
        and readability_length_bound(raw_tree) <= 2 * n
    ):
        COMPARISONS[0] += 1
        return body, text
    COMPARISONS[1] += 1
    return _trafilatura_compare(cleaned_tree, raw_tree, body, text, options)


def gate_compare_extraction() -> bool:
    """Make trafilatura's extraction call :func:`gated_compare_extraction` for its
    comparison with readability and jusText (``trafilatura.core`` looks the name up at each
    call). The same result on every page, at less CPU (docs/scale.md, 2026-11-28); written
    against trafilatura's ``compare_extraction`` of :data:`GATE_CHECKED_TRAFILATURA`, and
    held to it by ``tests/test_extract_gate.py``. On another trafilatura release the gate is
    not installed (its proof restates that release's rules) and the comparison runs as
    trafilatura wrote it; returns whether the gate is installed."""
    if trafilatura.__version__ != GATE_CHECKED_TRAFILATURA:
        logging.getLogger(__name__).info(
            "trafilatura %s: its readability/jusText comparison runs on every page (the gate "
            "was checked against %s)", trafilatura.__version__, GATE_CHECKED_TRAFILATURA,
        )  # fmt: skip
        return False
    core = sys.modules.get("trafilatura.core")
    if core is None:
        return False
    core.compare_extraction = gated_compare_extraction
    return True


gate_compare_extraction()


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
    #: the URL of the section the page's breadcrumb names (:func:`breadcrumb_section`)
    section: str | None = None
    #: the URL of the current item of the page's menu (:func:`nav_section`)
    section_nav: str | None = None
    #: the section the page's metadata states, a label, not a URL (:func:`meta_section`)
    section_label: str | None = None


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
    section = breadcrumb_section(tree, url)
    nav = nav_section(tree, url)
    label = meta_section(tree)
    doc = trafilatura.bare_extraction(
        tree, url=url, with_metadata=False, include_comments=False, favor_precision=True
    )
    text = (doc.text if doc is not None else "") or ""
    language = detect_language(text or title, declared_lang)
    return Extracted(title, description, keywords, text, published, language, section, nav, label)


# -- breadcrumbs ----------------------------------------------------------------------------
#: class / id words of a breadcrumb container (a class or id token, or a part of one split at
#: ``-`` and ``_``): the common English names, and pinyin of 位置 / 当前位置 of Chinese sites
CRUMB_CLASSES = frozenset({"crumb", "crumbs", "breadcrumb", "breadcrumbs", "bread", "location",
                           "position", "where", "loc", "pos", "curpos", "nowpos", "weizhi",
                           "dqwz", "dangqianweizhi"})  # fmt: skip
#: texts that open a breadcrumb on Chinese sites (当前位置：, 您当前的位置：, 您现在的位置是：…)
CRUMB_MARKERS = ("当前位置", "的位置", "所在位置", "现在位置", "位置：", "位置:")
#: a breadcrumb has 2 (home > section) to this many links
MAX_CRUMB_LINKS = 8
#: bounds on a hostile page: candidates looked at, elements walked in each, href length
MAX_CRUMB_CANDIDATES = 8
MAX_CRUMB_NODES = 120
MAX_CRUMB_HREF = 1000
#: characters other than separators allowed before the first link (the marker) and between
#: two links
MAX_CRUMB_LEAD = 24
MAX_CRUMB_GAP = 2
_CRUMB_SEP = re.compile(r"[\s>›»＞》〉→/\\|·•:：\-–—]+")
_HOME_PATH = re.compile(r"^/?(?:(?:index|default|home|main)\.[a-z]{2,5})?$", re.IGNORECASE)
#: parts of a class / id that may name a breadcrumb (the cheap test before :func:`_crumb_named`)
_CRUMB_HINTS = ("crumb", "bread", "loc", "pos", "where", "weizhi", "dqwz")
#: the texts that may open a breadcrumb (the cheap test before :data:`CRUMB_MARKERS`)
_MARKER_XPATH = "//text()[contains(., '位置')]"
#: the elements with a class, id, itemtype or aria-label, in document order: the only ones
#: whose label :func:`_crumb_candidates` tests (a walk over every element makes a Python
#: proxy of each)
_LABELLED_XPATH = etree.XPath("descendant-or-self::*[@class or @id or @itemtype or @aria-label]")


def _crumb_named(el: Any) -> bool:
    """Whether an element's class, id, itemtype (schema.org ``BreadcrumbList``) or aria-label
    names a breadcrumb (:data:`CRUMB_CLASSES`)."""
    aria = el.get("aria-label") or ""
    if "面包屑" in aria or "位置" in aria or "crumb" in aria.lower():
        return True
    label = " ".join(el.get(a) or "" for a in ("class", "id", "itemtype")).lower()
    if "crumb" in label:
        return True
    return any(token in CRUMB_CLASSES or any(p in CRUMB_CLASSES for p in re.split(r"[-_]", token))
               for token in label.split())  # fmt: skip


def _crumb_links(el: Any) -> list[str] | None:
    """The hrefs of ``el``'s links when ``el`` is shaped like a breadcrumb — a chain of 2 to
    :data:`MAX_CRUMB_LINKS` links with nothing between them but separators (``>``, ``/``,
    ``»``…, or list items), after at most a short marker (``当前位置：``), the first going
    home (:func:`_is_home`) — else None. Walks at most :data:`MAX_CRUMB_NODES` elements of
    ``el``."""
    hrefs: list[tuple[str, str]] = []
    gap = 0  # characters other than separators since the last link (before the first: lead)
    nodes = 0
    walk = etree.iterwalk(el, events=("start", "end"))
    for event, node in walk:
        if event == "end":
            if node is not el and node.tail:
                gap += len(_CRUMB_SEP.sub("", node.tail[:200]))
            continue
        nodes += 1
        if nodes > MAX_CRUMB_NODES:
            return None
        if node.tag == "a":
            if gap > (MAX_CRUMB_GAP if hrefs else MAX_CRUMB_LEAD):
                return None
            anchor = node.text or next((c.text for c in node[:3] if c.text), "") or ""
            hrefs.append(((node.get("href") or "").strip(), anchor))
            if len(hrefs) > MAX_CRUMB_LINKS:
                return None
            gap = 0
            walk.skip_subtree()  # its text is the anchor
        elif isinstance(node.tag, str) and node.tag not in ("script", "style") and node.text:
            gap += len(_CRUMB_SEP.sub("", node.text[:200]))
        elif node.tag in ("script", "style"):
            walk.skip_subtree()
    if len(hrefs) < 2 or not _is_home(*hrefs[0]):
        return None
    return [href for href, _ in hrefs]


#: anchor texts of a link to the home page
_HOME_WORDS = ("首页", "主页", "home", "首頁")


def _is_home(href: str, anchor: str) -> bool:
    """Whether a breadcrumb's first link goes home: a site's root or index page, or an anchor
    such as 首页 / 网站首页 / Home."""
    if any(w in anchor[:40].lower() for w in _HOME_WORDS):
        return True
    try:
        parts = urlsplit(href)
    except ValueError:
        return False
    return bool(_HOME_PATH.match(parts.path)) and not parts.query


def _crumb_candidates(tree: Any) -> list[Any]:
    """Elements that may hold the breadcrumb: those whose class, id, itemtype or aria-label
    name one (in document order), then the parents of the texts that open one
    (``当前位置：``; their parent again when that holds no link)."""
    found = []
    for el in _LABELLED_XPATH(tree):
        attrib = el.attrib
        if not attrib or not isinstance(el.tag, str):
            continue
        label = " ".join(attrib.get(a) or "" for a in ("class", "id", "itemtype", "aria-label"))
        low = label.lower()
        if (any(h in low for h in _CRUMB_HINTS) or "位置" in label or "面包屑" in label) and (
            _crumb_named(el)
        ):
            found.append(el)
            if len(found) >= MAX_CRUMB_CANDIDATES:
                return found
    for text in tree.xpath(_MARKER_XPATH)[:MAX_CRUMB_CANDIDATES]:
        if not any(m in text for m in CRUMB_MARKERS):
            continue
        el = text.getparent()
        if el is not None and text.is_tail:  # the text follows ``el``: it is in el's parent
            el = el.getparent()
        if el is not None and next(el.iter("a"), None) is None:
            el = el.getparent()
        if el is not None and el not in found:
            found.append(el)
    return found[:MAX_CRUMB_CANDIDATES]


def breadcrumb(tree: Any) -> list[str]:
    """The hrefs of the page's breadcrumb (home > section > … ), as written; empty when the
    page has none. A breadcrumb is found by its container's class or id (``crumbs``,
    ``breadcrumb``, ``location``, ``position``, ``where``…, schema.org ``BreadcrumbList``,
    an aria-label) or by the text that opens it (``当前位置：``, ``您当前的位置：``), and must
    be shaped like one (:func:`_crumb_links`)."""
    for el in _crumb_candidates(tree):
        hrefs = _crumb_links(el)
        if hrefs is not None:
            return hrefs
    return []


def breadcrumb_section(tree: Any, url: str | None) -> str | None:
    """The absolute URL of the section the page's breadcrumb names: its last link that is
    neither the page itself nor a home page (``/``, ``/index.html``), nor a ``javascript:``,
    ``mailto:`` or ``#`` link; None when the page has no breadcrumb or only home (and self)
    links in it."""
    try:
        hrefs = breadcrumb(tree)
    except (ValueError, TypeError, etree.LxmlError):  # a tree lxml cannot walk: no breadcrumb
        return None
    for href in reversed(hrefs):
        target = section_link(href, url)
        if target is not None:
            return target
    return None


def section_link(href: str, url: str | None) -> str | None:
    """The absolute URL of a link to a section of the page at ``url`` (a breadcrumb's or a
    menu's), without its fragment; None for an empty, over-long (:data:`MAX_CRUMB_HREF`),
    ``#``, ``javascript:``, ``mailto:`` or ``tel:`` link, another scheme than http(s), a
    malformed URL, the page itself or a home page (``/``, ``/index.html``)."""
    href = (href or "").strip()
    if not href or len(href) > MAX_CRUMB_HREF or href.startswith("#"):
        return None
    if href.lower().startswith(("javascript:", "mailto:", "tel:")):
        return None
    try:
        target = urljoin(url or "", href).split("#", 1)[0]
        parts = urlsplit(target)
    except ValueError:  # a malformed URL (an unclosed IPv6 bracket)
        return None
    if parts.scheme not in ("http", "https", ""):
        return None
    if target.rstrip("/") == (url or "").split("#", 1)[0].rstrip("/"):
        return None
    if _HOME_PATH.match(parts.path) and not parts.query:
        return None
    return target


# -- the current item of a menu -------------------------------------------------------------
#: class tokens that mark a menu's current item (``li.active``, ``a.cur``, ``li.on``,
#: ``li.selected``); a class token that contains ``current`` counts too (``current``,
#: WordPress's ``current-menu-item`` / ``current-post-ancestor``), and so does
#: ``aria-current`` = page / location / true (WAI-ARIA)
NAV_MARKS = frozenset({"active", "is-active", "on", "cur", "selected"})
_ARIA_CURRENT = frozenset({"page", "location", "true"})
#: the elements that may be marked (a class or aria-current); the marks are tested in Python,
#: 4× faster than testing each class token in XPath (``concat``/``normalize-space``)
_MARKABLE_XPATH = etree.XPath("//*[@class or @aria-current]")
#: a menu: a ``<nav>``, ``role="navigation"``, or a class / id with one of these in it
#: (``nav``, ``navbar``, ``sidenav``, ``mega-menu``, pinyin 导航 / 栏目)
_NAV_NAME = re.compile(r"nav|menu|daohang|lanmu", re.IGNORECASE)
#: how far above a marked item its menu may be
MAX_NAV_DEPTH = 6
#: elements that may be a menu's item (a ``<ul>``'s first link is no item of its own)
_NAV_ITEM_TAGS = frozenset({"a", "li", "span", "dd", "dt", "em", "strong", "b", "i", "p", "div",
                            "td", "h1", "h2", "h3", "h4", "h5", "h6"})  # fmt: skip
#: marked elements looked at; more distinct section links marked current than
#: :data:`MAX_NAV_TARGETS` mean nothing (a template that marks every item): no section
MAX_NAV_MARKS = 24
MAX_NAV_TARGETS = 2


def _marked_current(el: Any) -> bool:
    """Whether ``el`` is marked as the current item (:data:`NAV_MARKS`, a class token with
    ``current`` in it, or ``aria-current``)."""
    if el.get("aria-current") in _ARIA_CURRENT:
        return True
    cls = el.get("class") or ""
    return "current" in cls or any(token in NAV_MARKS for token in cls.split())


def _in_menu(el: Any) -> bool:
    """Whether ``el`` or one of its :data:`MAX_NAV_DEPTH` ancestors is a menu (``<nav>``,
    ``role="navigation"``, a class or id naming one: :data:`_NAV_NAME`)."""
    node = el
    for _ in range(MAX_NAV_DEPTH + 1):
        if node is None or not isinstance(node.tag, str):
            return False
        if node.tag == "nav" or node.get("role") == "navigation":
            return True
        name = f"{node.get('class') or ''} {node.get('id') or ''}"
        if _NAV_NAME.search(name[:500]):
            return True
        node = node.getparent()
    return False


def nav_section(tree: Any, url: str | None) -> str | None:
    """The absolute URL of the current item of the page's menu: a menu item marked current
    (a class token ``active`` / ``on`` / ``cur`` / ``selected`` / ``…current…``, or
    ``aria-current``; :data:`NAV_MARKS`) inside a menu (:func:`_in_menu`), its own link or
    its first link (``<li class="active"><a href="/ent/">娱乐</a>…``), taken as a breadcrumb
    link is (:func:`section_link`: not the page itself, not home). Many sites mark the
    current section this way where neither the URL nor a breadcrumb names it.

    Several items marked: a menu and its sub-menu, or a top bar and a side bar, may both mark
    theirs, and the first in document order (the main menu, the broader section) is taken;
    more than :data:`MAX_NAV_TARGETS` distinct section links marked current (a template that
    marks every item, tab strips) single out none: None. At most :data:`MAX_NAV_MARKS`
    marked elements are looked at."""
    try:
        markable = _MARKABLE_XPATH(tree)
    except (ValueError, TypeError, etree.LxmlError):  # a tree lxml cannot search
        return None
    targets: list[str] = []
    marks = 0
    for el in markable:
        if not isinstance(el.tag, str) or not _marked_current(el):
            continue
        marks += 1
        if marks > MAX_NAV_MARKS:
            break
        if el.tag not in _NAV_ITEM_TAGS:
            continue
        link = el if el.tag == "a" else next(el.iter("a"), None)
        if link is None or not _in_menu(el):
            continue
        target = section_link(link.get("href") or "", url)
        if target is not None and target not in targets:
            targets.append(target)
            if len(targets) > MAX_NAV_TARGETS:
                return None
    return targets[0] if targets else None


# -- the section the page's metadata states -------------------------------------------------
#: metadata that states an article's section: OpenGraph ``article:section`` and the Chinese
#: government-site standard's ``ColumnName`` (栏目名称); schema.org JSON-LD ``articleSection``
_META_SECTION_XPATH = etree.XPath(
    "//meta[@property='article:section' or @name='article:section'"
    " or translate(@name, 'COLUMNAME', 'columname')='columnname']/@content"
)
_JSONLD_XPATH = etree.XPath(
    "//script[contains(translate(@type, 'LDJSON', 'ldjson'), 'ld+json')]/text()"
)
#: bounds on a hostile page: JSON-LD scripts looked at, characters parsed in each, JSON
#: values walked in each, the longest label kept
MAX_JSONLD_SCRIPTS = 4
MAX_JSONLD_CHARS = 32_000
MAX_JSONLD_NODES = 200
MAX_SECTION_LABEL = 40
#: ``"articleSection": "…"`` in JSON-LD that does not parse (trailing commas are common)
_ARTICLE_SECTION = re.compile(r'"articleSection"\s*:\s*\[?\s*"([^"\\]{1,200})"')


def _label(value: Any) -> str | None:
    """A section label: a string's first :data:`MAX_SECTION_LABEL` characters with blanks
    collapsed, or a list's first such string; None for anything else or an empty one."""
    if isinstance(value, list):
        value = next((v for v in value[:8] if isinstance(v, str) and v.strip()), None)
    if not isinstance(value, str):
        return None
    return _clean(value[: MAX_SECTION_LABEL * 4])[:MAX_SECTION_LABEL] or None


def _jsonld_section(text: str) -> str | None:
    """The ``articleSection`` of one JSON-LD script (a string or a list of them, in the top
    object, a list of objects or an ``@graph``; :data:`MAX_JSONLD_NODES` values walked at
    most), or by :data:`_ARTICLE_SECTION` when the script is not JSON; None: none. A script
    over :data:`MAX_JSONLD_CHARS` characters is not read."""
    if "articleSection" not in text or len(text) > MAX_JSONLD_CHARS:
        return None
    try:
        data = json.loads(text, strict=False)
    except (ValueError, RecursionError):  # invalid or hostile (nested 30,000 deep) JSON
        match = _ARTICLE_SECTION.search(text)
        return _label(match.group(1)) if match else None
    stack, walked = [data], 0
    while stack and walked < MAX_JSONLD_NODES:
        node = stack.pop()
        walked += 1
        if isinstance(node, dict):
            if "articleSection" in node:
                found = _label(node["articleSection"])
                if found:
                    return found
            stack.extend(reversed([v for v in node.values() if isinstance(v, dict | list)]))
        elif isinstance(node, list):
            stack.extend(
                reversed([v for v in node[:MAX_JSONLD_NODES] if isinstance(v, dict | list)])
            )
    return None


def meta_section(tree: Any) -> str | None:
    """The section the page's metadata states, a label: OpenGraph ``article:section``,
    ``ColumnName`` (Chinese government sites), else schema.org JSON-LD ``articleSection``
    (:func:`_jsonld_section`); at most :data:`MAX_SECTION_LABEL` characters; None: none."""
    try:
        for content in _META_SECTION_XPATH(tree)[:4]:
            found = _label(content)
            if found:
                return found
        for script in _JSONLD_XPATH(tree)[:MAX_JSONLD_SCRIPTS]:
            found = _jsonld_section(str(script))
            if found:
                return found
    except (ValueError, TypeError, etree.LxmlError):  # a tree lxml cannot search
        return None
    return None
