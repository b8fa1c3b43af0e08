"""Unit tests of the topic spider's pieces that need no crawl."""

from __future__ import annotations

import pytest
from scrapy.exceptions import CloseSpider
from scrapy.http import HtmlResponse

from crawler.spiders.topic import TopicSpider, host_allowed, parse_seeds
from topicrawl.errors import ConfigError


@pytest.fixture
def spider(tmp_path):
    topic = tmp_path / "t.toml"
    topic.write_text('name = "t"\n[words]\n"政治" = 1.0\n', encoding="utf-8")
    return TopicSpider(seeds="http://news.example.cn/", topic=str(topic))


def test_anchor_text_falls_back_to_title_then_alt(spider):
    body = """<html><body>
      <a href="/a.html">  中央 会议 </a>
      <a href="/b.html" title=" 政府  工作报告 "></a>
      <a href="/c.html"><img src="x.jpg" alt="国务院 常务会议"></a>
      <a href="/d.html" title="标题">正文</a>
      <a href="/e.html"></a></body></html>"""
    page = HtmlResponse("http://news.example.cn/", body=body.encode(), encoding="utf-8")
    anchors = {link.url.rsplit("/", 1)[-1]: link.anchor for link in spider.extract_links(page)}
    assert anchors == {
        "a.html": "中央 会议",
        "b.html": "政府 工作报告",
        "c.html": "国务院 常务会议",
        "d.html": "正文",
        "e.html": "",
    }


def test_seeds_and_hosts(tmp_path):
    seeds = tmp_path / "seeds.txt"
    seeds.write_text(
        "# portals\nhttp://a.example.cn/\n\nhttps://b.example.cn/x\n", encoding="utf-8"
    )
    assert parse_seeds(f"@{seeds}") == ["http://a.example.cn/", "https://b.example.cn/x"]
    assert parse_seeds("http://a.cn/, http://b.cn/") == ["http://a.cn/", "http://b.cn/"]
    with pytest.raises(ConfigError, match="not an http"):
        parse_seeds("ftp://a.cn/")
    with pytest.raises(ConfigError, match="cannot read"):
        parse_seeds(f"@{tmp_path / 'missing.txt'}")
    assert host_allowed("news.example.cn", ["*.example.cn"])
    assert host_allowed("example.cn", ["*.example.cn"])
    assert not host_allowed("badexample.cn", ["*.example.cn"])
    assert not host_allowed("other.cn", ["news.example.cn"])


def test_extract_page_metadata_without_trafilatura_metadata_step():
    """Date by htmldate, title/description from <title>/<meta> with og: and <h1> fallbacks."""
    from topicrawl.extract import extract_page

    body = "".join(f"<p>第{i}段：国务院常务会议研究部署深化改革的有关工作，会议强调要抓好落实。</p>"
                   for i in range(6))  # fmt: skip
    html = (
        '<html><head><meta property="og:description" content="会议部署改革">'
        '<meta name="publishdate" content="2019-06-03"></head><body>'
        f"<h1>国务院召开常务会议</h1><article>{body}</article></body></html>"
    )
    ex = extract_page(html, "http://a.cn/politics/1.html")
    assert ex.title == "国务院召开常务会议"
    assert ex.description == "会议部署改革"
    assert ex.published == "2019-06-03"
    assert "常务会议研究部署" in ex.text and ex.language == "zh"


def test_a_page_s_links_are_queued_before_the_page_goes_to_the_store(tmp_path):
    """A JOBDIR crawl killed between the two steps must lose nothing: with the page stored
    first, a kill left a stored page whose links were never queued, and the resume (which
    fetches again only the pages not stored) never found them (the SIGKILL resume test, in
    CI under load: 10 pages missing). Links first, the page is fetched again instead."""
    from scrapy import Request
    from scrapy.utils.test import get_crawler

    from crawler.items import PageItem

    topic = tmp_path / "t.toml"
    topic.write_text('name = "t"\n[words]\n"政治" = 1.0\n', encoding="utf-8")
    crawler = get_crawler(TopicSpider, {
        "TOPICRAWL_LINK_SCORER": "relevance.linkscore.KeywordLinkScorer"})  # fmt: skip
    spider = crawler._create_spider(seeds="http://news.example.cn/", topic=str(topic),  # noqa: SLF001
                                    max_pages=2)  # fmt: skip
    crawler.spider = spider
    links = "".join(f'<a href="/politics/{i}.html">政治 新闻 {i}</a>' for i in range(5))
    body = f"<html><title>政治</title><body><p>政治 新闻</p>{links}</body></html>".encode()
    url = "http://news.example.cn/politics/"
    kinds: list[str] = []  # Algorithm 3's sample takes the relevant page before its links
    spider.scorer.observe_accepted = lambda u: kinds.append(f"sample {u}")
    for x in spider.parse_page(HtmlResponse(url, body=body, encoding="utf-8",
                                            request=Request(url))):  # fmt: skip
        kinds.append("page" if isinstance(x, PageItem) else "link")
    assert kinds == [f"sample {url}"] + ["link"] * 5 + ["page"]
    # the budget's last page: stored, its links not followed, the crawl closes
    url = "http://news.example.cn/politics/0.html"
    out = []
    with pytest.raises(CloseSpider):
        for x in spider.parse_page(HtmlResponse(url, body=body, encoding="utf-8",
                                                request=Request(url))):  # fmt: skip
            out.append(x)
    assert [type(x) for x in out] == [PageItem]
    off = "http://news.example.cn/sport/1.html"  # not relevant: not in the sample
    kinds.clear()
    list(spider.parse_page(HtmlResponse(off, body=b"<html><title>x</title><body><p>sport</p>"
                                        b"</body></html>", encoding="utf-8", request=Request(off))))
    assert kinds == []


def test_the_jobdir_frontier_journals_what_it_hands_out(tmp_path):
    """The engine starts a popped request's downloader middlewares one event-loop turn
    later, so a kill in between lost requests that were out of the durable queue and not yet
    recorded as sent by the fetch-once guard (the SIGKILL resume test, under load). The
    JOBDIR queue writes each request it hands out, and the resume requests again those
    handed out or sent and never stored (redirect targets left out, as for sent ones)."""
    from scrapy import Request
    from scrapy.utils.test import get_crawler

    from crawler.middlewares import read_sent_urls
    from crawler.queues import DurableLifoQueue, DurablePriorityQueue

    jobdir = tmp_path / "job"
    crawler = get_crawler(TopicSpider, {"JOBDIR": str(jobdir)})
    q = DurablePriorityQueue(crawler, DurableLifoQueue, str(jobdir / "requests.queue"))
    hop = Request("http://a.cn/moved.html", meta={"redirect_urls": ["http://a.cn/old.html"]})
    for r in (Request("http://a.cn/1.html", priority=2), Request("http://a.cn/2.html"), hop):
        q.push(r)
    assert q.pop().url == "http://a.cn/1.html"
    assert read_sent_urls(jobdir) == ["http://a.cn/1.html"]  # out of the queue, not sent
    while q.pop() is not None:
        pass
    assert read_sent_urls(jobdir) == ["http://a.cn/1.html", "http://a.cn/2.html"]
    q.close()
    memory = DurablePriorityQueue(crawler, DurableLifoQueue, "")  # Scrapy's memory frontier
    assert memory._popped is None  # noqa: SLF001
