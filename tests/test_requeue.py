"""Link re-prioritisation: a URL found again with a higher score is enqueued once more, and
``FetchOnceMiddleware`` keeps any URL from being downloaded twice."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from conftest import run_crawl
from scrapy import Request
from scrapy.exceptions import IgnoreRequest
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from crawler.middlewares import FetchOnceMiddleware
from crawler.spiders.topic import TopicSpider
from models.store import Store
from relevance.linkscore import Link, LinkScore, PageInfo

KEYWORD = {"TOPICRAWL_LINK_SCORER": "relevance.linkscore.KeywordLinkScorer"}
HOME = "http://news.example.cn/"


class TableScorer:
    """Scores each link by a table: URL -> score (the page it is found on does not matter)."""

    def __init__(self) -> None:
        self.scores: dict[str, float] = {}

    def score_links(self, page: PageInfo, links: list[Link]) -> list[LinkScore]:
        return [LinkScore(self.scores[link.url], True) for link in links]

    def page_relevance(self, page: PageInfo) -> float:
        return 0.0

    def observe_accepted(self, url: str) -> None:
        return None


@pytest.fixture
def topic_file(tmp_path: Path) -> Path:
    path = tmp_path / "t.toml"
    path.write_text('name = "t"\n[words]\n"政治" = 1.0\n', encoding="utf-8")
    return path


def make_spider(topic_file: Path, margin: float) -> TopicSpider:
    crawler = get_crawler(TopicSpider, {**KEYWORD, "TOPICRAWL_REQUEUE_MARGIN": margin})
    crawler.spider = crawler._create_spider(seeds=HOME, topic=str(topic_file))  # noqa: SLF001
    crawler.spider.scorer = TableScorer()
    return crawler.spider


def page_linking(url: str, target: str) -> HtmlResponse:
    body = f'<html><body><a href="{target}">x</a></body></html>'
    return HtmlResponse(url, body=body.encode(), encoding="utf-8")


def found(spider: TopicSpider, on: str, target: str, score: float) -> Request | None:
    """The request for ``target`` found on ``on`` (None: none is built, the URL is known)."""
    spider.scorer.scores[target] = score
    requests = list(spider.follow_links(page_linking(on, target), PageInfo(url=on), 0))
    assert len(requests) <= 1
    return requests[0] if requests else None


def test_url_found_again_with_higher_score_is_requeued_once(topic_file):
    spider = make_spider(topic_file, 0.1)
    stats = spider.crawler.stats
    target = HOME + "politics/a.html"
    first = found(spider, HOME + "list1.html", target, 0.2)
    assert (first.priority, first.dont_filter) == (200, False)
    # lower, equal, or higher by less than the margin: no request (the dupefilter would
    # drop it), counted as known
    for score in (0.1, 0.2, 0.29):
        assert found(spider, HOME + "list2.html", target, score) is None
    assert stats.get_value("topicrawl/links/requeued") is None
    assert stats.get_value("topicrawl/links/known") == 3
    assert stats.get_value("topicrawl/links/followed") == 1
    again = found(spider, HOME + "politics/", target + "#top", 0.6)
    assert (again.priority, again.dont_filter) == (600, True)
    assert stats.get_value("topicrawl/links/requeued") == 1
    # the same better score from another page: not re-queued a second time
    assert found(spider, HOME + "politics/2.html", target, 0.6) is None
    assert found(spider, HOME + "politics/3.html", target, 0.65) is None
    assert stats.get_value("topicrawl/links/requeued") == 1
    # another URL is a first request
    other = found(spider, HOME + "politics/3.html", HOME + "politics/z.html", 0.1)
    assert other is not None and not other.dont_filter


def test_fetched_url_is_never_requeued(topic_file):
    spider = make_spider(topic_file, 0.1)
    target = HOME + "politics/b.html"
    assert not found(spider, HOME, target, 0.2).dont_filter
    body = b"<html><title>t</title><body>text</body></html>"
    list(spider.parse_page(HtmlResponse(target, body=body, encoding="utf-8", request=Request(target))))
    assert found(spider, HOME + "x.html", target, 1.0) is None
    assert spider.crawler.stats.get_value("topicrawl/links/requeued") is None


def test_margin_zero_switches_requeue_off(topic_file):
    spider = make_spider(topic_file, 0)
    target = HOME + "politics/c.html"
    assert not found(spider, HOME, target, 0.1).dont_filter
    assert not found(spider, HOME + "p.html", target, 1.0).dont_filter
    assert spider.best_priority == {}


def fetch_once(jobdir: Path | None = None) -> tuple[FetchOnceMiddleware, object]:
    crawler = get_crawler(TopicSpider)
    mw = FetchOnceMiddleware(
        crawler.stats, crawler.request_fingerprinter.fingerprint, jobdir=jobdir and str(jobdir)
    )
    return mw, crawler.stats


def test_url_is_never_downloaded_twice(tmp_path):
    mw, stats = fetch_once(tmp_path / "job")
    spider = None
    assert mw.process_request(Request("http://a.cn/x?b=2&a=1", priority=10)) is None
    for again in (
        Request("http://a.cn/x?b=2&a=1", priority=900, dont_filter=True),
        Request("http://a.cn/x?a=1&b=2#frag", dont_filter=True),  # the same canonical URL
    ):
        with pytest.raises(IgnoreRequest):
            mw.process_request(again)
    assert stats.get_value("topicrawl/links/requeue_superseded") == 2
    # a retry of a failed download and robots.txt pass
    assert (
        mw.process_request(Request("http://a.cn/x?a=1&b=2", meta={"retry_times": 1}))
        is None
    )
    assert mw.process_request(Request("http://a.cn/robots.txt")) is None
    assert mw.process_request(Request("http://a.cn/robots.txt")) is None
    assert mw.process_request(Request("http://a.cn/y")) is None
    mw.spider_closed(spider)
    # a resumed crawl (same JOBDIR) remembers what was sent
    resumed, stats2 = fetch_once(tmp_path / "job")
    for url in ("http://a.cn/x?a=1&b=2", "http://a.cn/y"):
        with pytest.raises(IgnoreRequest):
            resumed.process_request(Request(url, dont_filter=True))
    assert resumed.process_request(Request("http://a.cn/z")) is None
    resumed.spider_closed(spider)


def test_crawl_with_requeue_downloads_every_page_once(proxy, small_web, politics_topic, tmp_path):
    truth = json.loads((small_web / "ground_truth.json").read_text(encoding="utf-8"))
    db = f"sqlite:///{tmp_path / 'requeue.db'}"
    # the relevance engine: a link's URL-structure score grows with the accepted history
    result = run_crawl(
        proxy,
        truth["seeds"]["portal"],
        politics_topic,
        db,
        settings={"TOPICRAWL_REQUEUE_MARGIN": 0.01, "CONCURRENT_REQUESTS": 4},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    store = Store.from_url(db)
    run = store.list_runs()[-1]
    stats = run.stats
    assert stats["finish_reason"] == "finished"
    assert stats.get("topicrawl/links/requeued", 0) > 0
    assert stats.get("topicrawl/links/requeue_superseded", 0) > 0
    pages = list(store.iter_pages(run.id))
    urls = Counter(p.url for p in pages)
    assert urls and max(urls.values()) == 1
    finals = Counter(p.final_url for p in pages)
    assert max(finals.values()) == 1
    # every parse is one stored page (or a broken one: the web's stub PDFs), and every
    # download is robots.txt, a redirect, a skipped non-HTML response, a broken or a stored
    # page: nothing was downloaded twice
    assert stats["topicrawl/pages/fetched"] - stats.get("topicrawl/pages/broken", 0) == len(pages)
    robots = sum(v for k, v in stats.items() if k.startswith("robotstxt/response_status_count/"))
    redirects = sum(
        v for k, v in stats.items() if k.startswith("downloader/response_status_count/3")
    )
    errors = sum(
        v
        for k, v in stats.items()
        if k.startswith(
            ("downloader/response_status_count/4", "downloader/response_status_count/5")
        )
    )
    skipped = stats.get("topicrawl/non_html", 0) + stats.get("topicrawl/pages/over_budget", 0)
    skipped += stats.get("topicrawl/pages/broken", 0)
    assert stats["downloader/response_count"] == robots + redirects + errors + skipped + len(pages)


@pytest.mark.redis
def test_workers_share_the_fetched_set_in_redis(redis_url):
    """Scale-out: a URL one worker sent is dropped by another (the shared Redis set)."""
    import uuid

    import redis

    client = redis.Redis.from_url(redis_url)
    key = f"topicrawl_test_{uuid.uuid4().hex[:8]}:topic:fetched"
    crawler = get_crawler(TopicSpider)
    fp = crawler.request_fingerprinter.fingerprint
    try:
        one, two = (FetchOnceMiddleware(crawler.stats, fp, redis=client, key=key) for _ in "12")
        assert one.process_request(Request("http://a.cn/x")) is None
        with pytest.raises(IgnoreRequest):  # the other worker's re-queued copy
            two.process_request(Request("http://a.cn/x", dont_filter=True))
        assert two.process_request(Request("http://a.cn/y")) is None
        assert client.scard(key) == 2
    finally:
        client.delete(key)
    # Redis down: the request passes (downloaded at worst twice, never lost) and is counted
    down = redis.Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.2)
    mw = FetchOnceMiddleware(crawler.stats, fp, redis=down, key=key)
    assert mw.process_request(Request("http://a.cn/z")) is None
    assert crawler.stats.get_value("topicrawl/links/fetch_once_unavailable") == 1
