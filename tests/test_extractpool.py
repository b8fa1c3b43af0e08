"""The extraction pool (crawler/extractpool.py): the same output as inline extraction, broken
pages, dead and hung workers, no process left behind; and real crawls with it on and off."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import pytest
from conftest import ROOT, run_crawl
from scrapy.http import HtmlResponse
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.test import get_crawler

from crawler.discovery import feed_urls
from crawler.extractpool import (
    BrokenDocument,
    ExtractionCrashed,
    ExtractionPool,
    ExtractionTimeout,
    PageWork,
    extract_with_links,
)
from crawler.pagelinks import link_extractor, page_links
from models.store import Store
from topicrawl.extract import decode_html, extract_page

NEWS_ZH = Path(os.environ.get("TOPICRAWL_DATA", "/work/shared/data")) / "html" / "news_zh"
FIELDS = ("title", "description", "keywords", "text", "published", "language")


# -- what the workers run in the tests (module level: a spawned worker imports them) ---------
def fail_on_bad(body: bytes, url: str):
    if "bad" in url:
        raise ValueError("no tree for this one")
    return extract_page(body.decode(), url)


def die_on_bad(body: bytes, url: str):
    if "bad" in url:
        os._exit(3)  # as a segfault in a C extension would
    return extract_page(body.decode(), url)


def hang_on_bad(body: bytes, url: str):
    if "bad" in url:
        time.sleep(600)
    return extract_page(body.decode(), url)


def wait_ready(pool: ExtractionPool, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not pool.ready:
        assert time.monotonic() < deadline, "the pool did not start"
        time.sleep(0.05)


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def stats() -> MemoryStatsCollector:
    return MemoryStatsCollector(get_crawler())


def run(coro):
    return asyncio.run(coro)


async def extract_all(pool: ExtractionPool, pages: list[tuple[bytes, str]]) -> list:
    return await asyncio.gather(*(pool.extract(b, u) for b, u in pages), return_exceptions=True)


PAGE = ("<html><head><title>国务院常务会议</title></head><body><article>"
        + "<p>国务院常务会议研究部署深化改革的有关工作，会议强调要抓好落实。</p>" * 6
        + "</article></body></html>").encode()  # fmt: skip


# -- the same output as inline ---------------------------------------------------------------
def decoded_pages(small_web: Path) -> list[HtmlResponse]:
    """The real saved pages of the shared data and every HTML page of the small test web,
    decoded as the spider decodes them (``TopicSpider.decoded``)."""
    raw: list[tuple[str, bytes, str | None]] = []
    for f in sorted(NEWS_ZH.rglob("*.html")):
        raw.append((f"http://real.example.cn/{f.relative_to(NEWS_ZH).as_posix()}",
                    f.read_bytes(), None))  # fmt: skip
    responses = json.loads((small_web / "responses.json").read_text(encoding="utf-8"))
    for url, r in sorted(responses.items())[::4]:  # every 4th page: a quick test
        if r.get("content_type", "").startswith("text/html") and "file" in r:
            charset = r["content_type"].partition("charset=")[2].strip() or None
            raw.append((url, (small_web / r["file"]).read_bytes(), charset))
    pages = []
    for url, body, charset in raw:
        text, _ = decode_html(body, charset)
        pages.append(HtmlResponse(url, body=text.encode("utf-8"), encoding="utf-8"))
    return pages


def through_pool(pages: list[HtmlResponse], **kwargs) -> tuple[list, ExtractionPool]:
    """Every page through a one-worker pool that holds them all at once, once it is warm
    (``kwargs``: more of the pool's options); the results and the closed pool."""
    pool = ExtractionPool(1, pending=len(pages), stats=stats(), **kwargs)
    pool.start()
    try:
        wait_ready(pool)
        return run(extract_all(pool, [(p.body, p.url) for p in pages])), pool
    finally:
        pool.close()


@pytest.mark.skipif(not NEWS_ZH.is_dir(), reason="the shared data's html/news_zh is not here")
def test_pool_extracts_what_inline_extraction_does(small_web):
    """Title, description, keywords, text, date and language of 43 real pages and 66
    generated ones: the same from a worker as from the spider's shared selector tree, and
    the same as extract_page's own parse (what the shared tree replaced)."""
    pages = decoded_pages(small_web)
    assert len(pages) > 100
    pooled, pool = through_pool(pages)  # every page in the pool
    texts = 0
    for page, got in zip(pages, pooled, strict=True):
        inline = extract_page(page.text, page.url, tree=page.selector.root)
        assert not isinstance(got, BaseException), (page.url, got)
        for field in FIELDS:
            assert getattr(got, field) == getattr(inline, field), (page.url, field)
        own = extract_page(page.text, page.url)
        assert [getattr(own, f) for f in FIELDS] == [getattr(inline, f) for f in FIELDS], page.url
        texts += bool(got.text)
    assert texts > 80 and pool.stats.get_value("topicrawl/extract/pages") == len(pages)


#: links with no text (title, image alt), a feed, a relative base: the fallbacks and feeds
LINKS_PAGE = ("<html><head><title>链接</title><base href='http://b.example.cn/d/'>"
              "<link rel='alternate' type='application/rss+xml' href='/rss.xml'>"
              "<link rel='stylesheet' href='s.css'></head><body><article>"
              + "<p>国务院常务会议研究部署深化改革的有关工作。</p>" * 4
              + "<a href='1.html'>  第一 \n 篇 </a><a href='2.html' title='第二篇'></a>"
              "<a href='3.html'><img src='x.png' alt='第三篇'></a><a href='1.html'>再一次</a>"
              "<a href='doc.pdf'>文件</a><a href='mailto:a@b.cn'>信</a>"
              "<a href='http://other.cn/x?a=1&amp;b=空 格'>外站</a></article></body></html>")


@pytest.mark.skipif(not NEWS_ZH.is_dir(), reason="the shared data's html/news_zh is not here")
@pytest.mark.parametrize("max_links", [0, 20])
def test_pool_finds_the_links_and_feeds_the_spider_finds_inline(small_web, max_links):
    """The worker's links (URL, anchor, order), their count and the page's feeds: those the
    spider finds inline on its own selector tree after extraction (TopicSpider.parse_page),
    on the real pages, the generated ones and one with every fallback; the bound keeps the
    first ``max_links`` and counts them all."""
    pages = decoded_pages(small_web)
    pages.append(HtmlResponse("http://a.example.cn/links.html", body=LINKS_PAGE.encode(),
                              encoding="utf-8"))  # fmt: skip
    function = partial(extract_with_links, max_links=max_links, feeds=True)
    pooled, _ = through_pool(pages, function=function)
    extractor, capped, linked, fed = link_extractor(), 0, 0, 0
    for page, got in zip(pages, pooled, strict=True):
        assert isinstance(got, PageWork), (page.url, got)
        inline = extract_page(page.text, page.url, tree=page.selector.root)
        links = page_links(page, extractor)  # after extraction, on its tree: as the spider
        assert got.found == len(links), page.url
        assert got.links == (links[:max_links] if max_links else links), page.url
        assert got.feeds == list(feed_urls(page)), page.url
        assert [getattr(got.extracted, f) for f in FIELDS] == [getattr(inline, f) for f in FIELDS]
        capped += len(links) > len(got.links)
        linked += bool(links)
        fed += bool(got.feeds)
    assert linked > 100 and fed >= 1 and (capped > 10) == bool(max_links)
    assert pooled[-1].links == [
        ("http://b.example.cn/d/1.html", "第一 篇"), ("http://b.example.cn/d/2.html", "第二篇"),
        ("http://b.example.cn/d/3.html", "第三篇"), ("http://b.example.cn/d/doc.pdf", "文件"),
        ("http://other.cn/x?a=1&b=%E7%A9%BA%20%E6%A0%BC", "外站"),
    ][: max_links or None]
    assert pooled[-1].feeds == ["http://b.example.cn/rss.xml"]


# -- failures --------------------------------------------------------------------------------
@pytest.mark.skipif(not NEWS_ZH.is_dir(), reason="the shared data's html/news_zh is not here")
def test_the_cleaners_extraction_in_a_worker_cleans_as_inline(small_web):
    """The store's cleaner extracting a page again (its text cleaned away) in the pool's
    worker (``Cleaner.remote_extract``: the HTML string there, its lxml tree inline) gives
    the same cleaned text, drop reason and removed lines on the real and generated pages,
    with the same host-line model state; the crawl's process never builds jusText's
    stoplists for it. ``call`` gives None (run it here) while the pool is not ready."""
    from crawler.extractpool import extract_clean_text
    from postprocess.clean import Cleaner

    pages = decoded_pages(small_web)
    pool = ExtractionPool(1, stats=stats())
    assert pool.call(extract_clean_text, "<html></html>", None, {}) is None
    pool.start()
    try:
        wait_ready(pool)
        inline, remote = Cleaner(), Cleaner()
        remote.remote_extract = partial(pool.call, extract_clean_text)
        for page in pages:
            a = inline.clean(html=page.text, text=None, url=page.url)
            b = remote.clean(html=page.text, text=None, url=page.url)
            assert (a.text, a.dropped, a.removed, a.fallback) == (
                b.text, b.dropped, b.removed, b.fallback), page.url  # fmt: skip
        assert pool.stats.get_value("topicrawl/extract/calls") == len(pages)
    finally:
        pool.close()


def test_an_extraction_error_is_the_pages_and_the_pool_goes_on():
    pool = ExtractionPool(1, function=fail_on_bad, stats=stats())
    pool.start()
    try:
        wait_ready(pool)
        pid = pool.pids()
        out = run(extract_all(pool, [(PAGE, "http://a.cn/bad.html"), (PAGE, "http://a.cn/1.html")]))
        assert isinstance(out[0], ValueError) and "no tree" in str(out[0])
        assert "常务会议研究部署" in out[1].text
        assert pool.pids() == pid and not pool.stats.get_value("topicrawl/extract/pool_restarts")
    finally:
        pool.close()


def test_a_page_that_kills_its_worker_is_broken_and_the_others_are_extracted(caplog):
    """The worker dies with the page in it (twice: in the replacement pool too): the page is
    broken; the pages it held with it are extracted by the replacement."""
    caplog.set_level(logging.WARNING, logger="crawler.extractpool")
    pool = ExtractionPool(1, function=die_on_bad, stats=stats(), max_restarts=3)
    pool.start()
    try:
        wait_ready(pool)
        first = pool.pids()
        pages = [(PAGE, "http://a.cn/bad.html")] + [(PAGE, f"http://a.cn/{i}.html") for i in range(3)]
        out = run(extract_all(pool, pages))
        assert isinstance(out[0], ExtractionCrashed)
        assert all("常务会议研究部署" in o.text for o in out[1:])
        assert pool.stats.get_value("topicrawl/extract/pool_restarts") == 2
        assert "a new worker is started" in caplog.text
        wait_ready(pool)
        assert pool.pids() != first
        assert "常务会议" in run(pool.extract(PAGE, "http://a.cn/9.html")).text
    finally:
        pool.close()


def test_a_killed_worker_is_replaced_then_the_pool_is_switched_off(caplog):
    caplog.set_level(logging.WARNING, logger="crawler.extractpool")
    pool = ExtractionPool(1, stats=stats(), max_restarts=1)
    pool.start()
    try:
        wait_ready(pool)
        os.kill(pool.pids()[0], signal.SIGKILL)
        time.sleep(0.5)
        # the page sent to the dead pool goes to its replacement
        assert "常务会议" in run(pool.extract(PAGE, "http://a.cn/1.html")).text
        assert pool.stats.get_value("topicrawl/extract/pool_restarts") == 1
        wait_ready(pool)
        os.kill(pool.pids()[0], signal.SIGKILL)
        time.sleep(0.5)
        # no restart left: the pool is off, the page in it counts as broken, later pages
        # are the caller's (inline)
        with pytest.raises(ExtractionCrashed):
            run(pool.extract(PAGE, "http://a.cn/2.html"))
        assert pool.stats.get_value("topicrawl/extract/pool_off") == 1
        assert "switched off" in caplog.text
        assert not pool.ready and run(pool.extract(PAGE, "http://a.cn/3.html")) is None
    finally:
        pool.close()
    assert all(gone(pid) for pid in pool.started_pids)


def test_a_page_over_the_timeout_is_broken_and_its_worker_killed():
    pool = ExtractionPool(1, function=hang_on_bad, timeout=5.0, stats=stats())
    pool.start()
    try:
        wait_ready(pool)
        hung = pool.pids()[0]
        out = run(extract_all(pool, [(PAGE, "http://a.cn/bad.html"), (PAGE, "http://a.cn/1.html")]))
        assert isinstance(out[0], ExtractionTimeout)
        assert "常务会议" in out[1].text  # queued behind it: extracted by the replacement
        assert gone(hung)
        assert pool.stats.get_value("topicrawl/extract/timeouts") == 1
    finally:
        pool.close()


def test_a_page_of_the_warm_up_waits_for_it_and_a_document_is_extracted_there():
    """:meth:`ExtractionPool.wait_warm` returns once the first workers are warm (True: the
    page goes to the pool), at once for a pool not started, after ``warm_wait`` for one that
    does not warm in time; a document's text from the worker is the one inline."""
    from datetime import date

    from crawler.extractpool import extract_document_body
    from sitegen.articles import Article
    from sitegen.extras import pdf_bytes
    from topicrawl.documents import extract_document

    idle = ExtractionPool(1, stats=stats())
    assert not idle.warming and run(idle.wait_warm()) is False
    pool = ExtractionPool(1, stats=stats())
    pool.start()
    try:
        assert pool.warming and not pool.ready
        assert run(pool.wait_warm()) is True and pool.ready and not pool.warming
        assert pool.stats.get_value("topicrawl/extract/waited_warm") == 1
        article = Article("a1", "时政", "国务院常务会议", ["国务院常务会议研究部署深化改革。" * 30],
                          None, date(2024, 1, 2))  # fmt: skip
        body = pdf_bytes(article)
        work = partial(extract_document_body, fmt="pdf", max_pages=5, max_chars=1000)
        got = run(pool.extract(body, "http://a.cn/1.pdf", work))
        inline = extract_document(body, "pdf", max_pages=5, max_chars=1000)
        assert (got.title, got.text) == (inline.title, inline.text) and "常务会议" in got.text
        # a broken PDF: pypdf's error comes back as BrokenDocument, so that unpickling it
        # does not import pypdf here (the worker's imports are not this process's)
        with pytest.raises(BrokenDocument, match="^Pdf[A-Za-z]*Error: "):
            run(pool.extract(body[: len(body) // 3], "http://a.cn/2.pdf", work))
    finally:
        pool.close()
    slow = ExtractionPool(1, stats=stats(), warm_wait=0.01)
    slow.start()
    try:
        assert run(slow.wait_warm()) is False
        assert slow.stats.get_value("topicrawl/extract/warm_wait_expired") == 1
    finally:
        slow.close()


def test_pages_over_the_pools_capacity_wait_up_to_the_overflow_bound():
    """With ``overflow_wait``, that many pages (per worker) wait for a turn when the pool is
    full and are extracted by it; only the pages beyond are left to the caller."""
    pool = ExtractionPool(1, pending=2, overflow_wait=3, stats=stats())
    pool.start()
    try:
        wait_ready(pool)
        out = run(extract_all(pool, [(PAGE, f"http://a.cn/{i}.html") for i in range(8)]))
        assert all("常务会议" in o.text for o in out[:5]) and out[5:] == [None] * 3
        assert pool.stats.get_value("topicrawl/extract/waited_busy") == 3
        assert pool.stats.get_value("topicrawl/extract/inline_busy") == 3
        assert pool.stats.get_value("topicrawl/extract/pages") == 5
        assert pool._waiting == 0
    finally:
        pool.close()


def test_the_pools_bounds_are_settings():
    from crawler import settings as defaults

    crawler = get_crawler(settings_dict={"TOPICRAWL_EXTRACT_WORKERS": 2,
                                         "TOPICRAWL_EXTRACT_PENDING": 8,
                                         "TOPICRAWL_EXTRACT_OVERFLOW_WAIT": 3,
                                         "TOPICRAWL_EXTRACT_TIMEOUT": 60.0})  # fmt: skip
    pool = ExtractionPool.from_crawler(crawler)
    assert (pool.capacity, pool.overflow_wait) == (16, 6)
    assert defaults.TOPICRAWL_EXTRACT_OVERFLOW_WAIT == 0  # off: it cost held-out recall


def test_pages_over_the_pools_capacity_are_the_callers():
    """At most workers × pending pages are in the pool; the others are left to the caller
    (extracted inline), not queued."""
    pool = ExtractionPool(1, pending=2, stats=stats())
    pool.start()
    try:
        wait_ready(pool)
        out = run(extract_all(pool, [(PAGE, f"http://a.cn/{i}.html") for i in range(8)]))
        assert all("常务会议" in o.text for o in out[:2]) and out[2:] == [None] * 6
        assert pool.stats.get_value("topicrawl/extract/inline_busy") == 6
    finally:
        pool.close()


def test_close_leaves_no_process_and_a_script_is_not_run_again(tmp_path):
    """A script that starts the pool without a ``__main__`` guard (as Scrapy's run-from-a-
    script examples do) runs once: the workers do not import ``__main__``; and after close
    no worker is left."""
    script = tmp_path / "script.py"
    script.write_text(
        "import asyncio, os, time\n"
        "from crawler.extractpool import ExtractionPool\n"
        "print('script runs', os.getpid(), flush=True)\n"
        "pool = ExtractionPool(2)\n"
        "pool.start()\n"
        "while not pool.ready: time.sleep(0.05)\n"
        f"page = asyncio.run(pool.extract({PAGE!r}, 'http://a.cn/1.html'))\n"
        "print('text', len(page.text), flush=True)\n"
        "print('pids', *pool.pids(), flush=True)\n"
        "pool.close()\n",
        encoding="utf-8",
    )  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120, env=env, cwd=tmp_path, check=False)  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.count("script runs") == 1
    pids = [int(p) for p in out.stdout.split("pids", 1)[1].split()]
    assert len(pids) == 2 and all(gone(pid) for pid in pids)


def test_workers_exit_when_the_crawl_process_is_killed(tmp_path):
    """kill -9 of the process that runs the pool (no close): its workers exit by themselves
    within about a second, none is left running as an orphan."""
    script = tmp_path / "killed.py"
    script.write_text(
        "import time\n"
        "from crawler.extractpool import ExtractionPool\n"
        "pool = ExtractionPool(2)\n"
        "pool.start()\n"
        "while not pool.ready: time.sleep(0.05)\n"
        "print('pids', *pool.pids(), flush=True)\n"
        "time.sleep(600)\n",
        encoding="utf-8",
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                            env=env, cwd=tmp_path)  # fmt: skip
    try:
        line = proc.stdout.readline()
        pids = [int(p) for p in line.split()[1:]]
        assert len(pids) == 2 and not any(gone(pid) for pid in pids), line
    finally:
        proc.kill()
        proc.wait()
    deadline = time.monotonic() + 10
    while not all(gone(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert all(gone(pid) for pid in pids)


# -- real crawls -----------------------------------------------------------------------------
KEYWORD = {"TOPICRAWL_LINK_SCORER": "relevance.linkscore.KeywordLinkScorer"}


def crawl(proxy, small_web, topic, db, workers, args=None, seeds=None, **settings):
    truth = json.loads((small_web / "ground_truth.json").read_text(encoding="utf-8"))
    result = run_crawl(proxy, seeds or truth["seeds"]["portal"], topic, db,
                       args=args or {"max_pages": 60},
                       settings={**KEYWORD, "TOPICRAWL_EXTRACT_WORKERS": workers,
                                 **settings})  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    store = Store.from_url(db)
    run_ = store.list_runs()[-1]
    return {p.url: p for p in store.iter_pages(run_.id)}, run_.stats, result.stderr


def test_crawl_with_the_pool_stores_what_the_inline_crawl_stores(
    proxy, small_web, politics_topic, tmp_path
):
    """The portals and the pages they link to (the same pages whatever the order of the
    crawl): the same title, description, text, date and language from both crawls."""
    depth = {"max_depth": 1}
    pooled, st, log = crawl(proxy, small_web, politics_topic, f"sqlite:///{tmp_path}/p.db", 1,
                            depth)  # fmt: skip
    inline, st0, _ = crawl(proxy, small_web, politics_topic, f"sqlite:///{tmp_path}/i.db", 0,
                           depth)  # fmt: skip
    assert st.get("topicrawl/extract/pages", 0) >= 20 and "topicrawl/extract/pages" not in st0
    common = set(pooled) & set(inline)
    assert len(common) >= 0.9 * max(len(pooled), len(inline)) and len(common) >= 40
    same_parent = 0
    for url in common:
        a, b = pooled[url], inline[url]
        assert (a.title, a.description, a.text, a.published, a.language) == (
            b.title, b.description, b.text, b.published, b.language), url  # fmt: skip
        if a.parent_url == b.parent_url:  # the link to it (found by the worker, or inline)
            same_parent += 1
            assert (a.anchor, a.depth) == (b.anchor, b.depth), url
    assert same_parent >= 0.8 * len(common)
    assert st["topicrawl/pages/fetched"] - st.get("topicrawl/pages/broken", 0) == len(pooled)
    # the pool's workers ended with the crawl
    pids = [int(p) for p in log.split("extraction pool ready:", 1)[1].split("pids", 1)[1]
            .splitlines()[0].split()]  # fmt: skip
    assert pids and all(gone(pid) for pid in pids)
    assert st.get("topicrawl/extract/workers_peak_rss_mb", 0) > 20


def test_crawl_survives_a_pool_that_keeps_failing(proxy, small_web, politics_topic, tmp_path):
    """Every page over a tiny timeout: broken and counted, its worker replaced (WARNING),
    until the pool is switched off; meanwhile and after, pages are extracted inline and the
    crawl ends normally with its budget stored."""
    # the pool, warm before the first response, breaks the pages until it is switched off
    # (a broken page's links are lost): the list and article pages as seeds too, so that the
    # budget does not hang on how many pages the pool broke (a loaded machine's CI broke so
    # many list pages that the frontier ran dry at 'finished')
    truth = json.loads((small_web / "ground_truth.json").read_text(encoding="utf-8"))
    seeds = truth["seeds"]["portal"] + sorted(u for u, p in truth["pages"].items()
                                              if p["kind"] in ("list", "article"))  # fmt: skip
    # timeout 0: a page is broken at the pool's first look, which comes before its result
    # can (0.001 s let a page through whose result was in when a busy reactor looked late: a
    # loaded machine saw no timeout at all in 2 runs of 10)
    pages, st, log = crawl(proxy, small_web, politics_topic, f"sqlite:///{tmp_path}/t.db", 1,
                           seeds=seeds, TOPICRAWL_EXTRACT_TIMEOUT=0)  # fmt: skip
    shown = ("topicrawl/pages", "topicrawl/extract", "topicrawl/storage", "finish")
    counts = {k: v for k, v in st.items() if k.startswith(shown)}
    assert st["finish_reason"] == "max_pages"
    assert st.get("topicrawl/extract/timeouts", 0) >= 1, counts
    assert st.get("topicrawl/extract/pool_restarts", 0) >= 1 and "a new worker is started" in log
    if st["topicrawl/extract/timeouts"] > ExtractionPool.MAX_RESTARTS:
        assert st.get("topicrawl/extract/pool_off") == 1 and "switched off" in log
    assert st["topicrawl/pages/broken"] >= st["topicrawl/extract/timeouts"]
    assert "cannot parse" in log and "ExtractionTimeout" in log
    assert len(pages) == 60, counts
    assert st["topicrawl/pages/fetched"] - st["topicrawl/pages/broken"] == 60, counts


# -- jusText's stoplists held once (topicrawl.extract.JustextStoplists) ----------------------
def test_justext_stoplists_are_the_words_trafilatura_would_build():
    """What jusText's ``define_stoplist`` gives for trafilatura's shared ``JT_STOPLIST`` (a
    trie) holds exactly the words of trafilatura's own tuple, lower-cased as jusText does,
    and answers ``in`` as that frozenset does, for its words and for others: the same
    paragraphs classified alike."""
    import justext.core
    from justext import get_stoplist, get_stoplists

    from topicrawl.extract import JustextStoplists

    own = tuple({word for language in get_stoplists() for word in get_stoplist(language)})
    words = frozenset(w.lower() for w in own)
    trie = justext.core.define_stoplist(JustextStoplists())
    assert frozenset(trie.keys()) == words and len(trie) == len(words)
    others = ["", "The", "THE", "der", "Der", "和", "的", "xyzzy", "a b", "ab\x00", "é", "e\u0301"]
    others += [w[:-1] for w in sorted(words)[::97]] + [w + "s" for w in sorted(words)[::89]]
    others += [w.upper() for w in sorted(words)[::53]] + sorted(words)[::61]
    assert [w in trie for w in others] == [w in words for w in others]
    # any other stoplist (a language's own, as trafilatura gives one) is jusText's frozenset
    english = justext.core.define_stoplist(get_stoplist("English"))
    assert isinstance(english, frozenset) and "the" in english


def test_justext_fallback_holds_its_stoplist_once():
    """In a fresh interpreter, a short page's extraction (trafilatura's jusText fallback)
    builds the words' trie for the shared object, and no frozenset of them (jusText's cache
    stays empty) nor trafilatura's tuple (≈ 33 MB less: docs/scale.md); the crawl's flag
    says it was built."""
    code = (
        "import sys, json\n"
        "from topicrawl.extract import extract_page, justext_stoplists_built, JustextStoplists\n"
        "import trafilatura.external as ext\n"
        "from justext.core import define_stoplist\n"
        "before = justext_stoplists_built()\n"
        "extract_page('<html><body><div><p>短</p><a href=\"/x\">链接</a></div></body></html>',"
        " 'http://a.cn/1.html')\n"
        "print(json.dumps({'before': before, 'after': justext_stoplists_built(),"
        " 'shared': isinstance(ext.JT_STOPLIST, JustextStoplists),"
        " 'cached': define_stoplist.keywords['original'].cache_info().currsize,"
        " 'trie': type(define_stoplist(ext.JT_STOPLIST)).__name__}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True, timeout=120)  # fmt: skip
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got == {"before": False, "after": True, "shared": True, "cached": 0, "trie": "Trie"}
