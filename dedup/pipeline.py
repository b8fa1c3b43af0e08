"""``DedupPipeline``: drop near-duplicate pages inline, before storage.

Enable with ``ITEM_PIPELINES = {"dedup.pipeline.DedupPipeline": 300, ...}`` ahead of the
store pipeline. Settings (defaults in ``crawler/settings.py`` or below):

``TOPICRAWL_DEDUP_ENABLED`` (True)
    False raises ``NotConfigured``.
``TOPICRAWL_DEDUP_METHODS`` (``["exact", "spotsigs", "containment"]``)
    Cascade order; names from :data:`dedup.base.MODULES`.
``TOPICRAWL_DEDUP_OPTIONS`` (``{}``)
    Per-method options, e.g. ``{"spotsigs": {"tau": 0.5}}``.
``TOPICRAWL_DEDUP_BACKEND`` (None)
    Index storage config for :func:`dedup.storage.make_storage`. ``namespace`` may contain
    ``{spider}``. Unset: SQLite ``<JOBDIR>/dedup.sqlite`` when ``JOBDIR`` is set (so a
    resumed crawl keeps its index), else an in-memory index (logged).
``TOPICRAWL_DEDUP_TEXT`` ("main")
    "main": the extracted main text (``item["text"]``); "visible": every visible text of
    ``item["html"]``.
``TOPICRAWL_DEDUP_KEEP`` ("first")
    Which copy survives: "first" (crawl order), "longer" or "earlier" (published date).

On a duplicate the item gets ``item["duplicate"] = {"of": url, "method": name, "score":
float}`` and is returned: the store pipeline records it and drops it. Drops are counted in
the stats as ``topicrawl/dedup/dropped/<method>``. With ``keep`` "longer"/"earlier" (or, with
"first", the source of a stored reprint with extras: ``Match.replaces``), a new page that
displaces a stored one is kept, ``topicrawl/dedup/replaced/<method>`` is counted
and the :data:`document_replaced` signal is sent with ``old_url``, ``new_url``, ``method``
and ``score`` (the store pipeline should then mark the old page as a duplicate of the new).
A stored reprint with extras of the new page that the step retires (``Decision.retired``:
the new page is its original, found after another stored copy matched it) is counted and
signalled the same way, ``new_url`` being the copy kept (the new page, or the stored
document it duplicates). A page dropped earlier whose better original the new page turns out
to be (``Decision.reattributed``: a commentary page met before its source, recorded as the
duplicate of an article it spliced) is counted as ``topicrawl/dedup/reattributed/<method>``
and the :data:`duplicate_reattributed` signal is sent with ``old_url`` (the dropped page),
``new_url`` (the new page), ``previous`` (the original it was recorded under), ``method`` and
``score`` (the store pipeline should then re-attribute its duplicate record). A page dropped
earlier as the duplicate of a stored page that the new page showed to be its original
(``Decision.revived``: a source met after its commentary page, before the articles that page
spliced in) is counted as ``topicrawl/dedup/revived/<method>`` and :data:`document_revived`
is sent (``old_url`` the stored page, ``new_url`` the dropped page, ``method``, ``score``):
the store pipeline should take the dropped page back into the corpus and then take the stored
page out as its duplicate.
Items without text, and items already marked not accepted, pass through unchecked. When the
index backend fails (``StorageError``, e.g. Redis down), pages are checked against a local
in-memory copy of the cascade (:class:`dedup.cascade.LocalFallback`), counted as
``topicrawl/dedup/local_fallback``; the shared index is tried again every
``TOPICRAWL_DEDUP_FALLBACK_RETRY`` seconds (5), and once it answers the documents added
during the outage are written to it (``topicrawl/dedup/written_back``) before the page is
checked there. With ``TOPICRAWL_DEDUP_LOCAL_FALLBACK`` False (True), the page is kept
unchecked instead, the error logged and ``topicrawl/dedup/errors`` counted.

The cascade sees a page's main text, before cleaning. The corpus text a document keeps (the
store pipeline's cleaned text) is checked once more, exactly (:class:`dedup.exact.CorpusTextIndex`,
in the same storage): the store pipeline calls :meth:`DedupPipeline.check_document`, found
as ``spider.dedup``, and a page whose cleaned text another document holds (up to whitespace,
NFKC and case) is a duplicate of it (method ``exact``, counted under
``topicrawl/dedup/dropped/exact`` and ``topicrawl/dedup/exact_after_cleaning``).

``TOPICRAWL_DEDUP_INDEX`` ("")
    The name of a corpus index (:mod:`dedup.corpusindex`, built with ``topicrawl dedup
    index``) that every page is checked against first, read only: a page that matches a
    corpus document is a duplicate of it (method ``corpus:<method>``, counted as
    ``topicrawl/dedup/dropped/corpus:<method>``). ``TOPICRAWL_DEDUP_INDEX_BACKEND`` is the
    storage that holds it (default: the SQLite file ``topicrawl-dedup-indexes.sqlite``).

A ``[dedup]`` table in the spider's topic (``spider.topic.dedup``: ``methods``, ``keep`` and
per-method option tables such as ``[dedup.spotsigs] tau = 0.75``) overrides the settings.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Mapping
from typing import Any

from itemadapter import ItemAdapter
from scrapy import signals as scrapy_signals
from scrapy.exceptions import NotConfigured

from dedup.base import Doc, Match
from dedup.cascade import DEFAULT_METHODS, KEEP_POLICIES, Cascade, Decision, LocalFallback
from dedup.corpusindex import CORPUS_METHOD, CorpusIndex
from dedup.exact import CorpusTextIndex
from dedup.storage import make_storage
from topicrawl.errors import ConfigError, StorageError

log = logging.getLogger(__name__)

#: Scrapy signal sent when a new page replaces a stored one (keep "longer"/"earlier", or the
#: source met after its stored reprint with extras: containment's reverse direction).
document_replaced = object()
#: Scrapy signal sent when a new page is the better original of a page dropped earlier as a
#: duplicate of another document (containment's reverse direction for a page out of the
#: index): its duplicate record should name the new page.
duplicate_reattributed = object()
#: Scrapy signal sent when a page dropped earlier as the duplicate of a stored page turns out
#: to be that page's original (``Decision.revived``: a source met after its commentary page,
#: before the articles the page spliced in): ``new_url`` (the dropped page) should be taken
#: back into the corpus, and then ``old_url`` (the page it was dropped for) taken out as its
#: duplicate (no :data:`document_replaced` is sent for it: the store keeps it when the
#: dropped page cannot be taken back).
document_revived = object()

TEXT_MODES = ("main", "visible")
_WS = re.compile(r"\s+")


def visible_text(html: str) -> str:
    """All human-visible text of a page (no script/style/noscript/template), space-joined."""
    if not html or not html.strip():
        return ""
    import lxml.html
    from lxml import etree

    try:
        root = lxml.html.fromstring(html)
    except (ValueError, etree.ParserError):
        return ""
    etree.strip_elements(
        root, "script", "style", "noscript", "template", etree.Comment, with_tail=False
    )
    return _WS.sub(" ", " ".join(root.itertext())).strip()


class DedupPipeline:
    """Check every page against the dedup cascade (see the module docstring)."""

    def __init__(
        self,
        methods: list[Any] | tuple[Any, ...] = DEFAULT_METHODS,
        *,
        backend: dict[str, Any] | None = None,
        options: dict[str, dict[str, Any]] | None = None,
        text: str = "main",
        keep: str = "first",
        jobdir: str | None = None,
        stats: Any = None,
        signals: Any = None,
        corpus_index: str | None = None,
        corpus_backend: dict[str, Any] | None = None,
        local_fallback: bool = True,
        fallback_retry: float = 5.0,
        lock_poll: float = 0.0,
    ):
        if text not in TEXT_MODES:
            raise ConfigError(f"TOPICRAWL_DEDUP_TEXT must be 'main' or 'visible', not {text!r}")
        if keep not in KEEP_POLICIES:
            raise ConfigError(
                f"TOPICRAWL_DEDUP_KEEP must be one of {', '.join(KEEP_POLICIES)}, not {keep!r}"
            )
        self.methods = list(methods)
        self.backend = dict(backend) if backend else None
        self.options = dict(options or {})
        self.text_mode = text
        self.keep = keep
        self.jobdir = jobdir
        self.stats = stats
        self.signals = signals
        self.cascade: Cascade | None = None
        self.corpus_texts: CorpusTextIndex | None = None
        self.corpus_name = corpus_index or None
        self.corpus_backend = dict(corpus_backend) if corpus_backend else None
        self.corpus: CorpusIndex | None = None
        self.local_fallback = local_fallback
        #: seconds between attempts to reach the failed index (its outage)
        self.fallback_retry = max(0.0, fallback_retry)
        self.fallback: LocalFallback | None = None
        self._retry_at = 0.0  # time.monotonic() of the next attempt during an outage
        #: seconds between looks at a busy cascade lock from the reactor (0: the check
        #: waits for it where it is called, blocking; tests and direct callers)
        self.lock_poll = max(0.0, lock_poll)
        self.clock: Any = None  # what schedules those looks (None: Twisted's reactor)

    @classmethod
    def from_crawler(cls, crawler: Any) -> DedupPipeline:
        s = crawler.settings
        if not s.getbool("TOPICRAWL_DEDUP_ENABLED", True):
            raise NotConfigured("dedup is disabled (TOPICRAWL_DEDUP_ENABLED = False)")
        methods = s.getlist("TOPICRAWL_DEDUP_METHODS") or list(DEFAULT_METHODS)
        # getdict also reads a JSON object given on the command line (-s KEY='{...}')
        backend = s.getdict("TOPICRAWL_DEDUP_BACKEND") or None
        options = s.getdict("TOPICRAWL_DEDUP_OPTIONS") or None
        pipeline = cls(
            methods,
            backend=dict(backend) if backend else None,
            options=dict(options) if options else None,
            text=s.get("TOPICRAWL_DEDUP_TEXT", "main"),
            keep=s.get("TOPICRAWL_DEDUP_KEEP", "first"),
            jobdir=s.get("JOBDIR") or None,
            stats=crawler.stats,
            signals=crawler.signals,
            corpus_index=s.get("TOPICRAWL_DEDUP_INDEX") or None,
            corpus_backend=s.getdict("TOPICRAWL_DEDUP_INDEX_BACKEND") or None,
            local_fallback=s.getbool("TOPICRAWL_DEDUP_LOCAL_FALLBACK", True),
            fallback_retry=s.getfloat("TOPICRAWL_DEDUP_FALLBACK_RETRY", 5.0),
            lock_poll=s.getfloat("TOPICRAWL_DEDUP_LOCK_POLL", 0.05),
        )
        crawler.signals.connect(pipeline.spider_opened, signal=scrapy_signals.spider_opened)
        return pipeline

    def spider_opened(self, spider: Any) -> None:
        """The spider gets a reference (``spider.dedup``): the store pipeline's way to
        :meth:`check_document` (Scrapy calls ``open_spider`` without the spider)."""
        if hasattr(spider, "dedup"):
            spider.dedup = self

    # -- lifecycle ---------------------------------------------------------------------
    def _backend_config(self, spider_name: str) -> dict[str, Any]:
        if self.backend:
            config = dict(self.backend)
        elif self.jobdir:
            config = {"type": "sqlite", "path": os.path.join(self.jobdir, "dedup.sqlite")}
        else:
            log.info(
                "dedup index in memory (no JOBDIR): set JOBDIR or TOPICRAWL_DEDUP_BACKEND "
                "to keep it across restarts"
            )
            config = {"type": "memory"}
        ns = config.get("namespace", "topicrawl")
        config["namespace"] = str(ns).replace("{spider}", spider_name)
        return config

    def _topic_section(self, spider: Any) -> None:
        """Apply a ``[dedup]`` table of the spider's topic (methods, keep, method options)."""
        section = getattr(getattr(spider, "topic", None), "dedup", None)
        if not isinstance(section, Mapping) or not section:
            return
        section = dict(section)
        if "methods" in section:
            self.methods = list(section.pop("methods"))
        if "keep" in section:
            self.keep = str(section.pop("keep"))
            if self.keep not in KEEP_POLICIES:
                raise ConfigError(f"[dedup] keep must be one of {', '.join(KEEP_POLICIES)}")
        for name, opts in section.items():
            if isinstance(opts, Mapping):
                self.options[name] = {**self.options.get(name, {}), **opts}

    def open_spider(self, spider: Any = None) -> None:
        if self.cascade is None:
            self._topic_section(spider)
            name = getattr(spider, "name", None) or "topicrawl"
            storage = make_storage(self._backend_config(name))
            names = {m if isinstance(m, str) else m.get("name") for m in self.methods}
            options = {k: v for k, v in self.options.items() if k in names}
            self.cascade = Cascade(storage, self.methods, options=options, keep=self.keep)
            if self.local_fallback:
                self.fallback = LocalFallback(self.cascade)
            self.corpus_texts = CorpusTextIndex(storage)
            log.info("dedup cascade %s on %r", self.cascade.names, storage)
            self._preload(spider)
        if self.corpus_name and self.corpus is None:
            self.corpus = CorpusIndex.open(self.corpus_name, self.corpus_backend)
            if self.corpus.meta.get("text", "main") != self.text_mode:
                log.warning(
                    "dedup index %r was built from %s texts, this crawl checks %s texts",
                    self.corpus_name,
                    self.corpus.meta.get("text"),
                    self.text_mode,
                )
            log.info("pages checked against the corpus first: %r", self.corpus)

    def _preload(self, spider: Any) -> None:
        """Index the documents a recrawled run already holds (the spider's
        ``dedup_preload()``: ``(url, page)`` pairs), so that a new page copying one of them
        is dropped as a duplicate."""
        preload = getattr(spider, "dedup_preload", None)
        if preload is None or self.cascade is None:
            return
        count = 0
        for url, page in preload():
            text = visible_text(page.html or "") if self.text_mode == "visible" else page.text
            if not (text or "").strip():
                continue
            self.cascade.add(url, Doc(
                text=text, title=page.title or "", description=page.description or "",
                url=url, published=page.published or None, lang=page.language or "zh",
            ))  # fmt: skip
            count += 1
        if count:
            log.info("dedup index holds the %d documents of the recrawled run", count)
            if self.stats is not None:
                self.stats.set_value("topicrawl/dedup/preloaded", count)
        documents = getattr(spider, "dedup_preload_documents", None)
        if documents is not None and self.corpus_texts is not None:
            for url, text in documents():
                self.corpus_texts.check_and_add(url, text)

    def close_spider(self, spider: Any = None) -> None:
        if self.fallback is not None and self.fallback.active:
            self._write_back(final=True)
        self.fallback = None
        if self.cascade is not None:
            self.cascade.storage.close()
            self.cascade = None
            self.corpus_texts = None
        if self.corpus is not None:
            self.corpus.close()
            self.corpus = None

    # -- items -------------------------------------------------------------------------
    def _text(self, item: ItemAdapter) -> str:
        if self.text_mode == "visible":
            return visible_text(item.get("html") or "")
        return item.get("text") or ""

    def _inc(self, key: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(key)

    def _in_corpus(self, adapter: ItemAdapter, doc: Doc, url: str | None) -> bool:
        """Mark the item a duplicate of the corpus document it matches (True), if any."""
        assert self.corpus is not None
        try:
            match = self.corpus.query(doc)
        except StorageError as exc:
            self._inc("topicrawl/dedup/errors")
            log.error("corpus index unavailable, %s not checked against it: %s", url, exc)
            return False
        if match is None:
            return False
        method = f"{CORPUS_METHOD}{match.method}"
        adapter["duplicate"] = {"of": match.doc_id, "method": method, "score": float(match.score)}
        self._inc("topicrawl/dedup/checked")
        self._inc(f"topicrawl/dedup/dropped/{method}")
        return True

    def _check(self, url: str, doc: Doc, recrawled: bool) -> Decision | None:
        """Check-and-add ``doc``: in the shared index, or in the local fallback while that
        fails (None: the page stays unchecked)."""
        assert self.cascade is not None
        fallback = self.fallback
        if fallback is not None and fallback.active:
            if time.monotonic() >= self._retry_at:
                self._write_back()
            if fallback.active:  # still down
                return self._check_locally(url, doc, recrawled)
        try:
            if recrawled:  # a stored page that changed: not a copy of itself
                self.cascade.remove(url)
                if self.corpus_texts is not None:
                    self.corpus_texts.remove(url)
            return self.cascade.check_and_add(url, doc)
        except StorageError as exc:
            if fallback is None:
                # keep the page (a stored duplicate can be removed later, a lost page
                # cannot) and count it
                self._inc("topicrawl/dedup/errors")
                log.error("dedup index unavailable, %s kept unchecked: %s", url, exc)
                return None
            log.warning("dedup index unavailable (%s): pages are checked against a local "
                        "index until it answers again", exc)  # fmt: skip
            self._retry_at = time.monotonic() + self.fallback_retry
            return self._check_locally(url, doc, recrawled)

    def _check_locally(self, url: str, doc: Doc, recrawled: bool) -> Decision:
        assert self.fallback is not None
        if recrawled:
            self.fallback.remove(url)
        self._inc("topicrawl/dedup/local_fallback")
        return self.fallback.check_and_add(url, doc)

    def _write_back(self, final: bool = False) -> None:
        """Write the documents of the outage to the shared index, if it answers."""
        assert self.fallback is not None
        try:
            written = self.fallback.write_back()
        except StorageError as exc:
            self._retry_at = time.monotonic() + self.fallback_retry
            if final:
                left = sum(op == "add" for op, _, _ in self.fallback.pending)
                if self.stats is not None:
                    self.stats.inc_value("topicrawl/dedup/local_fallback_unwritten", left)
                log.error("dedup index still unavailable at the end (%s): %d documents "
                          "checked locally were not added to it", exc, left)  # fmt: skip
            return
        if self.stats is not None:
            self.stats.inc_value("topicrawl/dedup/written_back", written)
        log.warning("dedup index back: the %d documents added during its outage written "
                    "to it", written)  # fmt: skip

    def process_item(self, item: Any, spider: Any = None) -> Any:
        adapter = ItemAdapter(item)
        if adapter.get("accepted") is False:
            return item
        text = self._text(adapter)
        if not text.strip():
            return item
        if self.cascade is None:
            self.open_spider(spider)
        assert self.cascade is not None
        url = adapter.get("url") or adapter.get("final_url")
        doc = Doc(
            text=text,
            title=adapter.get("title") or "",
            description=adapter.get("description") or "",
            url=url or "",
            published=adapter.get("published") or None,
            lang=adapter.get("language") or "zh",
        )
        if self.corpus is not None and self._in_corpus(adapter, doc, url):
            return item
        if self.lock_poll and self._cascade_busy():
            return self._check_later(item, adapter, url, doc, spider)
        return self._check_and_decide(item, adapter, url, doc, spider)

    def _cascade_busy(self) -> bool:
        """Another worker holds the shared cascade's lock (Redis; not during an outage)."""
        assert self.cascade is not None
        if self.fallback is not None and self.fallback.active:
            return False
        try:
            return self.cascade.storage.lock_busy("cascade") > 0
        except StorageError:
            return False  # the check itself meets the outage

    def _check_later(self, item: Any, adapter: ItemAdapter, url: str | None, doc: Doc,
                     spider: Any) -> Any:  # fmt: skip
        """A Deferred of the item, checked once the cascade's lock is free: the reactor
        goes on (downloads, heartbeats) while another worker holds it, or until its lease
        ends when that worker died (``lock_timeout``, 5 s). After the storage's
        ``lock_wait`` the check waits for the lock in the ordinary, blocking way."""
        from twisted.internet import defer

        clock = self.clock
        if clock is None:
            from twisted.internet import reactor as clock
        assert self.cascade is not None
        deadline = time.monotonic() + float(getattr(self.cascade.storage, "lock_wait", 120.0))
        done: defer.Deferred = defer.Deferred()
        self._inc("topicrawl/dedup/lock_waits")

        def look() -> None:
            if self.cascade is None:  # closed meanwhile: the page passes unchecked
                done.callback(item)
                return
            if time.monotonic() < deadline and self._cascade_busy():
                clock.callLater(self.lock_poll, look)
                return
            try:
                result = self._check_and_decide(item, adapter, url, doc, spider)
            except Exception:  # noqa: BLE001 - handed to Scrapy as the item's failure
                done.errback()
                return
            done.callback(result)

        clock.callLater(self.lock_poll, look)
        return done

    def _check_and_decide(self, item: Any, adapter: ItemAdapter, url: str | None, doc: Doc,
                          spider: Any) -> Any:  # fmt: skip
        """Check ``doc`` against the cascade and mark, count and signal the outcome."""
        decision = self._check(url or "", doc, bool(adapter.get("recrawled")))
        if decision is None:
            return item
        self._inc("topicrawl/dedup/checked")
        if decision.duplicate is not None:
            m = decision.duplicate
            adapter["duplicate"] = {"of": m.doc_id, "method": m.method, "score": float(m.score)}
            self._inc(f"topicrawl/dedup/dropped/{m.method}")
        gone = [(m, url) for m in (decision.replaced,) if m is not None]
        gone += [(m, decision.kept or url) for m in decision.retired]
        gone += list(decision.deferred)
        for m, of in gone:
            self._announce("replaced", document_replaced, m, spider, new_url=of)
        for m, page in decision.revived:  # the dropped source back in, the stored page out
            self._announce("revived", document_revived, m, spider, new_url=page)
        for m, previous in decision.reattributed:
            self._announce("reattributed", duplicate_reattributed, m, spider, new_url=url,
                           previous=previous)  # fmt: skip
        return item

    def _announce(self, what: str, signal: object, m: Match, spider: Any, **fields: Any) -> None:
        """Count ``topicrawl/dedup/<what>/<method>`` and send ``signal`` about the stored
        page ``m`` names (``old_url``, ``method``, ``score`` and ``fields``)."""
        self._inc(f"topicrawl/dedup/{what}/{m.method}")
        if self.signals is not None:
            self.signals.send_catch_log(signal=signal, old_url=m.doc_id, method=m.method,
                                        score=float(m.score), spider=spider, **fields)  # fmt: skip

    def check_document(self, url: str, text: str) -> Match | None:
        """The document whose corpus text is ``text`` (the cleaned text of the page at
        ``url``, up to whitespace, NFKC and case), when another page holds it (counted as an
        exact duplicate); else None, and ``text`` is recorded as ``url``'s. When the index
        fails, the page is kept unchecked (``topicrawl/dedup/errors``)."""
        if self.corpus_texts is None:
            return None
        try:
            match = self.corpus_texts.check_and_add(url, text)
        except StorageError as exc:
            self._inc("topicrawl/dedup/errors")
            log.error("dedup index unavailable, corpus text of %s kept unchecked: %s", url, exc)
            return None
        if match is not None:
            self._inc(f"topicrawl/dedup/dropped/{match.method}")
            self._inc("topicrawl/dedup/exact_after_cleaning")
        return match
