"""Sitemaps, feeds and documents (issue 15): the test web's extras, their parsers, and real
crawls of the local test web through the proxy (discovery reaches orphan pages; PDF and DOCX
responses become scored, deduplicated pages)."""

from __future__ import annotations

import gzip
import json
import re
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import feedparser
import pytest
from conftest import run_crawl
from scrapy.http import HtmlResponse
from scrapy.utils.sitemap import Sitemap

from crawler.discovery import (
    feed_urls,
    parse_discover,
    parse_feed,
    parse_sitemap,
    robots_sitemaps,
    sitemap_body,
)
from models.store import Store
from sitegen.build import build_web, topic_targets
from sitegen.evaluate import corpus_score
from sitegen.server import ServerProcess, serve_in_thread
from topicrawl.documents import document_format, extract_document, reflow
from topicrawl.errors import ConfigError

KEYWORD = {"TOPICRAWL_LINK_SCORER": "relevance.linkscore.KeywordLinkScorer"}


@pytest.fixture(scope="module")
def extras_web(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("extras-web")
    truth = build_web(out, scale="small", seed=7, discovery=True, orphans=0.3, documents=True)
    return out, truth


@pytest.fixture(scope="module")
def extras_proxy(extras_web):
    with ServerProcess(extras_web[0]) as server:
        yield server.url


def _responses(web: Path) -> dict:
    return json.loads((web / "responses.json").read_text(encoding="utf-8"))


def _body(web: Path, url: str) -> bytes:
    return (web / _responses(web)[url]["file"]).read_bytes()


# -- the test web's extras ---------------------------------------------------------------------
def test_orphans_are_linked_from_no_page_but_listed_by_the_sitemaps(extras_web):
    web, truth = extras_web
    orphans = set(truth["orphans"])
    assert len(orphans) >= 20
    hrefs: set[str] = set()
    for url, page in truth["pages"].items():
        if page["kind"] in ("article", "list", "home", "real") and page["status"] == 200:
            html = _body(web, url).decode(page.get("encoding") or "utf-8", "replace")
            hrefs.update(re.findall(r'href="([^"]+)"', html))
    assert not orphans & hrefs, "an orphan page is linked from a page"
    listed: set[str] = set()
    for index in truth["sitemaps"].values():
        root = Sitemap(_body(web, index))
        assert root.type == "sitemapindex"
        for entry in root:
            xml = sitemap_body(_body(web, entry["loc"]), max_size=10**7)
            listed.update(e["loc"] for e in Sitemap(xml))
    articles = {u for u, p in truth["pages"].items() if p["kind"] in ("article", "document")}
    assert articles <= listed
    assert orphans <= listed


def test_robots_feeds_and_home_links(extras_web):
    web, truth = extras_web
    for site in truth["sites"]:
        robots = _body(web, site["home"] + "robots.txt").decode()
        named = robots_sitemaps(robots, site["home"] + "robots.txt")
        assert named == ([truth["sitemaps"][site["host"]]] if site["kind"] == "portal" else [])
        feed = feedparser.parse(_body(web, truth["feeds"][site["host"]]))
        assert feed.version in ("rss20", "atom10") and len(feed.entries) >= 5
        for entry in feed.entries:
            assert truth["pages"][entry.link]["title"] == entry.title
        home = HtmlResponse(site["home"], body=_body(web, site["home"]))
        assert list(feed_urls(home)) == [truth["feeds"][site["host"]]]


def test_documents_hold_the_article_text(extras_web):
    web, truth = extras_web
    docs = {u: p for u, p in truth["pages"].items() if p["kind"] == "document"}
    assert {p["format"] for p in docs.values()} == {"pdf", "docx"}
    copies = [u for u, p in docs.items() if p["dup_group"]]
    assert copies, "PDF copies of HTML articles (same duplicate group)"
    for url, page in docs.items():
        extracted = extract_document(_body(web, url), page["format"])
        assert extracted.title == page["title"], url
        assert extracted.language == "zh" and len(extracted.text) > 100, url
    for url in copies[:3]:
        group = truth["dup_groups"][docs[url]["dup_group"]]
        assert url in group and any(truth["pages"][u]["kind"] == "article" for u in group)


def test_pdf_placeholder_metadata_is_no_description():
    """ReportLab writes "(unspecified)" as the subject and "(anonymous)" as the title when
    none is set: neither is metadata to score (the subject was scored as the description)."""
    import io

    from reportlab.pdfgen import canvas

    def pdf(**info: str) -> bytes:
        buf = io.BytesIO()
        doc = canvas.Canvas(buf, invariant=1)
        for key, value in info.items():
            getattr(doc, f"set{key.title()}")(value)
        doc.drawString(72, 720, "Cabinet meets on reform.")
        doc.showPage()
        doc.save()
        return buf.getvalue()

    plain = extract_document(pdf(), "pdf")
    assert (plain.title, plain.description, plain.keywords) == ("Cabinet meets on reform.", "", "")
    named = extract_document(pdf(title="Reform", subject="State Council", keywords="reform"),
                             "pdf")  # fmt: skip
    assert (named.title, named.description, named.keywords) == ("Reform", "State Council",
                                                                 "reform")  # fmt: skip


def test_server_answers_conditional_requests(extras_web):
    web, truth = extras_web
    url = truth["feeds"][truth["sites"][0]["host"]]
    with serve_in_thread(web) as proxy:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": proxy}))
        first = opener.open(url)
        etag, modified = first.headers["ETag"], first.headers["Last-Modified"]
        assert first.status == 200 and etag and modified
        for headers in ({"If-None-Match": etag}, {"If-Modified-Since": modified},
                        {"If-None-Match": f'W/{etag}, "other"'}):  # fmt: skip
            with pytest.raises(urllib.error.HTTPError) as err:
                opener.open(urllib.request.Request(url, headers=headers))
            assert err.value.code == 304 and err.value.headers["ETag"] == etag
            assert err.value.read() == b""
        again = opener.open(urllib.request.Request(url, headers={"If-None-Match": '"x"'}))
        assert again.status == 200 and again.read() == _body(web, url)


def test_extras_need_family_a(tmp_path):
    with pytest.raises(ConfigError):
        build_web(tmp_path, family="b", discovery=True)


# -- parsers -----------------------------------------------------------------------------------
def test_discover_argument():
    assert parse_discover(None) == frozenset()
    assert parse_discover("sitemaps, Feeds") == {"sitemaps", "feeds"}
    with pytest.raises(ConfigError, match="unknown source 'rss'"):
        parse_discover("sitemaps,rss")


def test_sitemap_parsing_gzip_limits_and_garbage():
    xml = (b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
           + b"".join(b"<url><loc>http://a.cn/%d.html</loc></url>" % i for i in range(5))
           + b"</urlset>")  # fmt: skip
    packed = gzip.compress(xml)
    assert sitemap_body(packed, max_size=10**6) == xml
    with pytest.raises(ValueError):
        sitemap_body(packed, max_size=50)
    parsed = parse_sitemap(xml, max_urls=3)
    assert parsed.kind == "urlset" and parsed.urls[0] == "http://a.cn/0.html"
    assert len(parsed.urls) == 3 and parsed.cut == 2
    assert parse_sitemap(b"<html><body>no</body></html>") is None
    assert parse_feed(b"not a feed at all") is None


def test_document_format_and_reflow():
    assert document_format("application/pdf; x=1") == "pdf"
    assert document_format("application/octet-stream", "http://a.cn/f/1.DOCX?x=1") == "docx"
    assert document_format("text/html", "http://a.cn/1.pdf") is None
    assert document_format("application/msword", "http://a.cn/1.doc") is None  # not read
    lines = ["国务院召开常务会议，部署", "经济工作。", "", "The meeting was", "held today."]
    assert reflow(lines) == "国务院召开常务会议，部署经济工作。\nThe meeting was held today."


# -- crawls ------------------------------------------------------------------------------------
def _crawl(proxy, seeds, topic, db, **kw):
    result = run_crawl(proxy, seeds, topic, db, settings={**KEYWORD, **kw.pop("settings", {})},
                       **kw)  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    store = Store.from_url(db)
    return store, store.list_runs()[-1], result


@pytest.fixture(scope="module")
def discovery_crawls(extras_web, extras_proxy, politics_topic, tmp_path_factory):
    """The single-topic site, seeded with its home page alone: links only, then with
    ``-a discover=sitemaps,feeds``."""
    web, truth = extras_web
    home = truth["seeds"]["domain"][0]
    tmp = tmp_path_factory.mktemp("discovery-db")
    plain = _crawl(extras_proxy, [home], politics_topic, f"sqlite:///{tmp / 'plain.db'}")
    found = _crawl(extras_proxy, [home], politics_topic, f"sqlite:///{tmp / 'disc.db'}",
                   args={"discover": "sitemaps,feeds"})  # fmt: skip
    return truth, home, plain, found


def _score(truth, home, store, run):
    final = {p.url: p.final_url or p.url for p in store.iter_pages(run.id)}
    docs = [final.get(d.url, d.url) for d in store.iter_documents(run.id)]
    return corpus_score(truth, "时政", docs, hosts=[urlsplit(home).hostname])


def test_discovery_reaches_the_orphans(discovery_crawls):
    truth, home, (store0, run0, result0), (store1, run1, result1) = discovery_crawls
    host = urlsplit(home).hostname
    orphans = {u for u in truth["orphans"] if urlsplit(u).hostname == host}
    targets = topic_targets(truth, "时政")
    assert orphans & targets
    plain, found = _score(truth, home, store0, run0), _score(truth, home, store1, run1)
    assert found.recall >= 0.95 > plain.recall
    fetched0 = {p.url for p in store0.iter_pages(run0.id)}
    fetched1 = {p.url for p in store1.iter_pages(run1.id)}
    assert not fetched0 & orphans and orphans <= fetched1
    stats = run1.stats
    assert stats["topicrawl/discovery/robots/requested"] == 1
    assert stats["topicrawl/discovery/sitemap/parsed"] >= 2  # the index and its sitemaps
    assert stats["topicrawl/discovery/sitemap/followed"] >= 1
    assert stats["topicrawl/discovery/feed/parsed"] == 1
    # the orphans came from a sitemap or a feed (whichever was read first)
    sources = {p.url: (p.link_score or {}).get("source") for p in store1.iter_pages(run1.id)}
    assert {sources[u] for u in orphans} <= {"sitemap", "feed"}
    parents = {p.url: p.parent_url for p in store1.iter_pages(run1.id)}
    assert all(parents[u].endswith((".xml", ".xml.gz")) for u in orphans)
    # sitemaps and feeds are neither pages nor counted against the budget
    assert not {u for u in fetched1 if u.endswith((".xml", ".xml.gz"))}
    assert stats["topicrawl/pages/fetched"] == store1.count_pages(run1.id)


def test_a_dry_frontier_says_what_would_help(discovery_crawls):
    _, _, (_, run0, result0), (_, run1, result1) = discovery_crawls
    assert run0.stats["finish_reason"] == "finished"
    assert "frontier empty after" in result0.stderr
    assert "try -a discover=sitemaps,feeds or more seeds" in result0.stderr
    assert run0.stats["topicrawl/frontier/empty_after"] == run0.stats["topicrawl/pages/fetched"]
    assert "try more seeds" in run1.stats["topicrawl/frontier/hint"]


def test_documents_are_scored_stored_and_counted(discovery_crawls):
    truth, _, _, (store, run, _) = discovery_crawls
    pages = {p.url: p for p in store.iter_pages(run.id)}
    docs = {u for u, p in truth["pages"].items() if p["kind"] == "document" and u in pages}
    assert {truth["pages"][u]["format"] for u in docs} == {"pdf", "docx"}
    corpus = {d.url for d in store.iter_documents(run.id)}
    for url in docs:
        page = pages[url]
        assert page.content_type == truth["pages"][url]["content_type"]
        assert page.title == truth["pages"][url]["title"] and page.relevance is not None
        assert page.html is None and len(page.text) > 100
    assert {u for u in docs if not truth["pages"][u]["dup_group"]} <= corpus
    stats = run.stats
    assert stats["topicrawl/documents/pdf"] + stats["topicrawl/documents/docx"] == len(docs)


def test_a_pdf_copy_of_a_page_is_a_duplicate(extras_web, extras_proxy, politics_topic, tmp_path):
    _, truth = extras_web
    pdf = next(u for u, p in sorted(truth["pages"].items())
               if p["kind"] == "document" and p["dup_group"] and p["format"] == "pdf")  # fmt: skip
    html = truth["pages"][pdf]["linked_from"]
    store, run, _ = _crawl(extras_proxy, [html, pdf], politics_topic,
                           f"sqlite:///{tmp_path / 'dup.db'}", args={"max_depth": 0},
                           settings={"CONCURRENT_REQUESTS": 1})  # fmt: skip
    pages = {p.url: p for p in store.iter_pages(run.id)}
    assert set(pages) == {html, pdf}
    assert sum(store.count_duplicates(run.id).values()) == 1
    assert store.count_documents(run.id) == 1


def test_documents_are_parsed_in_the_pools_worker(extras_web, extras_proxy, politics_topic,
                                                  tmp_path):  # fmt: skip
    """With the extraction pool a document's text comes from its worker (pypdf is never
    imported in the crawl's process), the same text as inline (pool off, where it is)."""
    from test_crawl_imports import probe_crawl

    _, truth = extras_web
    pdf = next(u for u, p in sorted(truth["pages"].items()) if p.get("format") == "pdf")
    seeds = [truth["pages"][pdf]["linked_from"], pdf]
    texts = {}
    for workers in (1, 0):
        db = f"sqlite:///{tmp_path / f'w{workers}.db'}"
        got = probe_crawl(extras_proxy, None, politics_topic, db, workers, seeds,
                          {"max_depth": 0})  # fmt: skip
        assert ("pypdf" in got["modules"]) == (workers == 0)
        assert "'topicrawl/documents/pdf': 1" in got["log"]
        store = Store.from_url(db)
        run = store.list_runs()[-1]
        texts[workers] = {p.url: (p.title, p.text) for p in store.iter_pages(run.id)}
        store.close()
    assert texts[1] == texts[0] and len(texts[1][pdf][1]) > 100


def test_documents_over_the_size_cap_are_skipped(extras_web, extras_proxy, politics_topic,
                                                  tmp_path):  # fmt: skip
    _, truth = extras_web
    pdf = next(u for u, p in sorted(truth["pages"].items()) if p.get("format") == "pdf")
    seeds = [truth["pages"][pdf]["linked_from"], pdf]  # a page too: a seed is reachable
    store, run, _ = _crawl(extras_proxy, seeds, politics_topic, f"sqlite:///{tmp_path / 'c.db'}",
                           args={"max_depth": 0},
                           settings={"TOPICRAWL_MAX_DOCUMENT_BYTES": 1000})  # fmt: skip
    assert {p.url for p in store.iter_pages(run.id)} == {seeds[0]}
    assert run.stats["topicrawl/documents/too_large"] == 1
    store2, run2, _ = _crawl(extras_proxy, seeds, politics_topic,
                             f"sqlite:///{tmp_path / 'off.db'}", args={"max_depth": 0},
                             settings={"TOPICRAWL_DOCUMENTS_ENABLED": False})  # fmt: skip
    assert {p.url for p in store2.iter_pages(run2.id)} == {seeds[0]}
    assert run2.stats["topicrawl/non_html"] == 1


# -- the spider's discovery steps, without a crawl ---------------------------------------------
def _spider(tmp_path, settings=None, **kw):
    from scrapy.utils.test import get_crawler

    from crawler.spiders.topic import TopicSpider

    topic = tmp_path / "t.toml"
    topic.write_text('name = "t"\n[words]\n"政治" = 1.0\n', encoding="utf-8")
    crawler = get_crawler(TopicSpider, {**KEYWORD, **(settings or {})})
    crawler.spider = crawler._create_spider(  # noqa: SLF001
        seeds="http://a.example.cn/", topic=str(topic), **kw
    )
    return crawler.spider


def test_spider_discovery_steps(tmp_path):
    from scrapy.http import Request, Response, XmlResponse
    from twisted.python.failure import Failure

    spider = _spider(tmp_path, discover="sitemaps")
    assert spider.discover == {"sitemaps"}
    robots = Response("http://a.example.cn/robots.txt",
                      body=b"User-agent: *\nSitemap: http://a.example.cn/s.xml\n"
                           b"Sitemap: http://elsewhere.cn/s.xml\n")  # fmt: skip
    (index_request,) = spider.parse_robots(robots)
    assert index_request.url == "http://a.example.cn/s.xml"
    assert index_request.callback == spider.parse_sitemap
    bare = Response("http://a.example.cn/robots.txt", body=b"User-agent: *\n")
    fresh = _spider(tmp_path, discover="sitemaps")
    (req,) = fresh.parse_robots(bare)
    assert req.url == "http://a.example.cn/sitemap.xml"
    assert list(fresh.parse_robots(bare)) == []  # each sitemap is requested once
    # no robots.txt at all: the usual place
    failed = Request("http://a.example.cn/robots.txt", meta={"topicrawl_discovery": "robots"})
    failure = Failure(ValueError("404"))
    failure.request = failed
    (req,) = _spider(tmp_path, discover="sitemaps").on_discovery_error(failure)
    assert req.url == "http://a.example.cn/sitemap.xml"
    index = XmlResponse("http://a.example.cn/s.xml", request=index_request, body=(
        b'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        b"<sitemap><loc>http://a.example.cn/s1.xml.gz</loc></sitemap>"
        b"<sitemap><loc>http://evil.example.org/s2.xml</loc></sitemap></sitemapindex>"))  # fmt: skip
    (sitemap_request,) = spider.parse_sitemap(index)
    assert sitemap_request.url == "http://a.example.cn/s1.xml.gz"
    urlset = Response("http://a.example.cn/s1.xml.gz", request=sitemap_request,
                      body=gzip.compress(
        b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        b"<url><loc>http://a.example.cn/news/1.html</loc></url>"
        b"<url><loc>http://a.example.cn/logo.png</loc></url>"
        b"<url><loc>http://a.example.cn/files/1.pdf</loc></url></urlset>"))  # fmt: skip
    requests = list(spider.parse_sitemap(urlset))
    assert [r.url for r in requests] == ["http://a.example.cn/news/1.html",
                                         "http://a.example.cn/files/1.pdf"]  # fmt: skip
    assert all(r.callback == spider.parse and r.meta["link_score"]["source"] == "sitemap"
               and r.meta["parent_url"] == urlset.url for r in requests)  # fmt: skip
    stats = spider.crawler.stats
    assert stats.get_value("topicrawl/discovery/sitemap/urls") == 3
    assert stats.get_value("topicrawl/links/non_html") == 1


def test_frontier_hint(tmp_path):
    spider = _spider(tmp_path, max_pages=100)
    stats = spider.crawler.stats
    stats.set_value("topicrawl/pages/fetched", 12)
    spider.frontier_report(spider, "max_pages")
    assert stats.get_value("topicrawl/frontier/hint") is None
    spider.frontier_report(spider, "finished")
    assert stats.get_value("topicrawl/frontier/hint") == (
        "frontier empty after 12 pages of a budget of 100; try -a discover=sitemaps,feeds "
        "or more seeds"
    )
    with pytest.raises(ConfigError, match="run_id"):
        _spider(tmp_path, recrawl="1")


def _sitemap(section: str, n: int) -> bytes:
    # the local web's article URLs: section, month, day and id
    locs = "".join(f"<url><loc>http://a.example.cn/{section}/2019{i % 12 + 1:02d}/t2019"
                   f"{i % 12 + 1:02d}{i * 7 % 28 + 1:02d}_{1000 + 37 * i}.htm</loc></url>"
                   for i in range(n))  # fmt: skip
    return f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</urlset>'.encode()


def _fetch_order(requests, lifo: bool) -> list[str]:
    """The order a priority queue hands out ``requests`` (pushed in list order): highest
    priority first; last in first out (Scrapy's queues) or first in first out within one."""
    pushed = list(enumerate(requests))
    pushed.sort(key=lambda ir: (-ir[1].priority, -ir[0] if lifo else ir[0]))
    return [r.url for _, r in pushed]


@pytest.mark.parametrize("interleave", [True, False])
def test_sitemap_entries_are_fetched_in_turn_across_sitemaps(tmp_path, interleave):
    """A site with one sitemap per section (the local web's): the entries score alike (no
    anchor), and in the sitemaps' order the first pages accepted were one section's, so
    Algorithm 3's sample found a majority structure the site does not have and the page
    decision halved the relevance of the other sections' articles (docs/benchmarks/
    discovery.md). TOPICRAWL_SITEMAP_INTERLEAVE (default) queues them in turn."""
    from scrapy.http import XmlResponse

    from crawler.discovery import sitemap_ranks
    from relevance.urls import PerHostStructureSample

    spider = _spider(tmp_path, discover="sitemaps")
    spider.sitemap_interleave = interleave
    sections = ("files", "guoji", "guonei", "pinglun", "yaowen")
    locs = "".join(f"<sitemap><loc>http://a.example.cn/sitemaps/{s}.xml</loc></sitemap>"
                   for s in sections)  # fmt: skip
    (index_request,) = spider._sitemap_requests(["http://a.example.cn/sitemap.xml"])  # noqa: SLF001
    index = XmlResponse(index_request.url, request=index_request, body=(
        '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"{locs}</sitemapindex>").encode())  # fmt: skip
    sitemap_requests = list(spider.parse_sitemap(index))
    assert len(sitemap_requests) == 5
    requests, queued = [], []  # queued: how many entries each sitemap read queued
    for s, req in zip(sections, sitemap_requests, strict=True):
        found = list(spider.parse_sitemap(XmlResponse(req.url, request=req,
                                                      body=_sitemap(s, 10))))  # fmt: skip
        requests += found
        queued.append(len(found))
    # held until the host's last sitemap is read (queued as read, the first sitemap's entries
    # filled the downloader, which takes CONCURRENT_REQUESTS requests ahead, before the next
    # sitemap was read); the sitemaps' order: queued as read
    assert queued == ([0, 0, 0, 0, 50] if interleave else [10] * 5)
    assert not spider._sitemaps_held and not spider._sitemaps_pending  # noqa: SLF001
    assert {r.meta["link_score"]["score"] for r in requests} == {0.0}  # no evidence to rank
    for lifo in (True, False):
        first = _fetch_order(requests, lifo)[:10]  # accepted: Algorithm 3's first sample
        sample = PerHostStructureSample(20)
        for url in first:
            sample.add(url)
        shares = [sum(f"/{s}/" in u for u in first) for s in sections]
        if interleave:  # in turn: two of each section
            assert shares == [2] * 5 and not sample.has_structure(first[0])
        else:  # the sitemaps' order: one section, a majority structure the site has not
            assert max(shares) == 10 and sample.has_structure(first[0])
    ranks = sitemap_ranks(r.url for r in requests[:10])
    assert sorted(ranks.values()) == list(range(10))
    assert ranks == sitemap_ranks(reversed([r.url for r in requests[:10]]))  # reproducible


def test_held_sitemap_entries_are_released_late_or_when_idle(tmp_path):
    """A sitemap that fails releases its host's held entries; entries held longer than
    TOPICRAWL_SITEMAP_HOLD_SECONDS (a slow sitemap, or one read by another worker in the
    scale-out) go with the next page, and any left when the crawl goes idle then."""
    from scrapy.exceptions import DontCloseSpider
    from scrapy.http import XmlResponse
    from twisted.python.failure import Failure

    spider = _spider(tmp_path, discover="sitemaps")
    (index_request,) = spider._sitemap_requests(["http://a.example.cn/sitemap.xml"])  # noqa: SLF001
    index = XmlResponse(index_request.url, request=index_request, body=(
        b'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        b"<sitemap><loc>http://a.example.cn/a.xml</loc></sitemap>"
        b"<sitemap><loc>http://a.example.cn/b.xml</loc></sitemap>"
        b"<sitemap><loc>http://a.example.cn/c.xml</loc></sitemap></sitemapindex>"))  # fmt: skip
    a, b, c = spider.parse_sitemap(index)
    assert list(spider.parse_sitemap(XmlResponse(a.url, request=a,
                                                 body=_sitemap("guoji", 3)))) == []  # fmt: skip
    failure = Failure(ValueError("500"))
    failure.request = b
    assert list(spider.on_discovery_error(failure)) == []  # c is still to come
    spider.sitemap_hold_seconds = 0.0  # c is slow
    assert len(list(spider.release_stale_sitemaps())) == 3
    assert spider.crawler.stats.get_value("topicrawl/discovery/sitemap/released_late") == 1
    list(spider.parse_sitemap(XmlResponse(c.url, request=c, body=_sitemap("yaowen", 2))))
    spider.sitemap_hold_seconds = 30.0
    other = _spider(tmp_path, discover="sitemaps")  # a worker whose sitemap another reads
    (d,) = other._sitemap_requests(["http://a.example.cn/d.xml"])  # noqa: SLF001
    (e,) = other._sitemap_requests(["http://a.example.cn/e.xml"])  # noqa: SLF001
    assert list(other.parse_sitemap(XmlResponse(d.url, request=d,
                                                body=_sitemap("guonei", 4)))) == []  # fmt: skip
    queued = []
    other.crawler.engine = type("Engine", (), {"crawl": lambda self, r: queued.append(r)})()
    with pytest.raises(DontCloseSpider):
        other.spider_idle()
    assert len(queued) == 4 and not other._sitemaps_held  # noqa: SLF001


def test_a_resumed_crawl_requests_again_the_sitemaps_it_had_not_done(tmp_path):
    """JOBDIR, killed while a sitemap's entries were held (its host's other sitemap not read
    yet): the resume requests both sitemaps again, past the dupefilter and the fetch-once
    guard, and queues the entries; discovery URLs the killed crawl had sent are not taken for
    pages to fetch again. Before the discovery journal the held entries were lost."""
    import asyncio

    from scrapy.http import Response, XmlResponse

    from crawler.middlewares import RECOVERED

    jobdir = {"JOBDIR": str(tmp_path / "job")}
    killed = _spider(tmp_path, jobdir, discover="sitemaps")
    robots_request = killed._discovery_request("http://a.example.cn/robots.txt", "robots")  # noqa: SLF001
    robots = Response(robots_request.url, request=robots_request,
                      body=b"User-agent: *\nSitemap: http://a.example.cn/s.xml\n")  # fmt: skip
    (index_request,) = killed.parse_robots(robots)
    index = XmlResponse(index_request.url, request=index_request, body=(
        b'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        b"<sitemap><loc>http://a.example.cn/a.xml</loc></sitemap>"
        b"<sitemap><loc>http://a.example.cn/b.xml</loc></sitemap></sitemapindex>"))  # fmt: skip
    a, b = killed.parse_sitemap(index)
    assert list(killed.parse_sitemap(XmlResponse(a.url, request=a,
                                                 body=_sitemap("guoji", 3)))) == []  # fmt: skip
    # killed here: nothing closed; a's entries held, b not read

    resumed = _spider(tmp_path, jobdir, discover="sitemaps")
    page = "http://a.example.cn/guoji/1.html"
    resumed.recovered_urls = [index.url, a.url, page]  # sent, never stored

    async def start():
        return [r async for r in resumed.start()]

    out = asyncio.run(start())
    again = [r for r in out if r.meta.get("topicrawl_discovery")]
    assert [(r.url, r.meta["topicrawl_discovery"]) for r in again][:2] == [
        (a.url, "sitemap"), (b.url, "sitemap")]  # fmt: skip
    assert all(r.dont_filter and r.meta[RECOVERED] == r.url for r in again[:2])
    assert [r.url for r in out if r.meta.get(RECOVERED) and r.callback == resumed.parse] == [
        page]  # fmt: skip
    assert resumed.crawler.stats.get_value("topicrawl/discovery/resumed") == 2
    a2, b2 = again[:2]
    assert list(resumed.parse_sitemap(XmlResponse(a2.url, request=a2,
                                                  body=_sitemap("guoji", 3)))) == []  # fmt: skip
    queued = list(resumed.parse_sitemap(XmlResponse(b2.url, request=b2,
                                                    body=_sitemap("yaowen", 2))))  # fmt: skip
    assert len(queued) == 5
    # done: a third run has nothing to request again
    third = _spider(tmp_path, jobdir, discover="sitemaps")
    assert third._discovery_resumed == []  # noqa: SLF001


def test_a_held_sitemap_keeps_its_lease_until_its_entries_are_queued(tmp_path):
    """Scale-out: the lease of a sitemap whose entries are held outlives its callback
    (LEASE_KEPT: the lease middleware leaves it), and ends when the entries are queued.
    Should the worker die in between, the lease is reclaimed and the sitemap fetched again
    by another worker, entries and all (ended with the callback, they were lost with it)."""
    from scrapy.http import XmlResponse

    from crawler.lease import LEASE, LeaseMiddleware

    class Lease:
        errors = (ConnectionError,)

        def __init__(self):
            self.released: list[str] = []

        def held_id(self, meta):
            return (meta or {}).get(LEASE)

        def release(self, lease_id):
            self.released.append(lease_id)

    spider = _spider(tmp_path, discover="sitemaps")
    lease = spider.lease = Lease()
    middleware = LeaseMiddleware(lease)
    (index_request,) = spider._sitemap_requests(["http://a.example.cn/sitemap.xml"])  # noqa: SLF001
    index = XmlResponse(index_request.url, request=index_request, body=(
        b'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        b"<sitemap><loc>http://a.example.cn/a.xml</loc></sitemap>"
        b"<sitemap><loc>http://a.example.cn/b.xml</loc></sitemap></sitemapindex>"))  # fmt: skip
    a, b = spider.parse_sitemap(index)
    a.meta[LEASE], b.meta[LEASE] = "lease-a", "lease-b"
    response_a = XmlResponse(a.url, request=a, body=_sitemap("guoji", 3))
    assert list(middleware.process_spider_output(response_a, spider.parse_sitemap(response_a))) == []
    assert lease.released == []  # a's entries are held: its lease too
    response_b = XmlResponse(b.url, request=b, body=_sitemap("yaowen", 2))
    queued = list(middleware.process_spider_output(response_b, spider.parse_sitemap(response_b)))
    assert len(queued) == 5
    assert lease.released == ["lease-a", "lease-b"]  # each once, by the spider
    # an index (nothing held) ends as any response does, with its callback
    index.meta[LEASE] = "lease-index"
    list(middleware.process_spider_output(index, iter(())))
    assert lease.released[-1] == "lease-index"
