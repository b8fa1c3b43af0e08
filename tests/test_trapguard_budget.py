"""The trap guard's adaptive query-string budget (issue 10): a path whose pages keep bringing
new main text earns room; a trap does not."""

from __future__ import annotations

import uuid

import pytest
from conftest import CountingStats
from scrapy import Request

from crawler.items import PageItem
from crawler.middlewares import MIN_CONTENT_CHARS, TrapGuardMiddleware, query_variant_budget


def _item(url: str, text: str) -> PageItem:
    """A fetched page whose main text is ``text`` repeated to a content page's length."""
    return PageItem(url=url, text=text * (MIN_CONTENT_CHARS // 2), accepted=False)


def _admitted(guard: TrapGuardMiddleware, urls: list[str]) -> int:
    return sum(guard.allowed(u) is None for u in urls)


def test_budget_formula():
    assert query_variant_budget(30, 0, 0, per_page=5) == 30
    assert query_variant_budget(30, 4, 1, per_page=5) == 40  # the first text earns nothing
    assert query_variant_budget(30, 1, 0, per_page=5) == 30
    assert query_variant_budget(30, 1, 4, per_page=5) == 30  # never below the base
    assert query_variant_budget(30, 4, 0, per_page=0) == 30


def test_pages_with_new_text_raise_the_budget_of_their_path():
    guard = TrapGuardMiddleware(CountingStats(), max_query_variants=3, query_variants_per_page=2)
    articles = [f"http://a.cn/article.php?id={i}" for i in range(20)]
    assert _admitted(guard, articles[:5]) == 3
    # three pages with texts of their own: 2 x 2 more queries for that path (the first text
    # earns nothing)
    out = list(guard._filter([_item(articles[0], "第一篇 文章"), _item(articles[1], "第二篇文章"),
                              _item(articles[2], "第三篇文章"), Request(articles[5])]))  # fmt: skip
    assert out[-1].url == articles[5]
    assert guard.budget("a.cn/article.php") == 7
    assert _admitted(guard, articles[6:20]) == 3  # 4 + the one above = 7
    assert _admitted(guard, ["http://a.cn/other.php?id=1"]) == 1  # each path its own


def test_a_trap_stays_at_the_base_budget():
    days = [f"http://a.cn/calendar/?d=2019-05-{d:02d}" for d in range(1, 30)]
    guard = TrapGuardMiddleware(CountingStats(), max_query_variants=3, query_variants_per_page=5)
    # one day with a text, then the same text again (session ids) and breadcrumbs only
    pages = [_item(days[0], "当日 新闻"), _item(days[1], "当日新闻")]
    pages += [PageItem(url=d, text=f"首页 > {d[-2:]}") for d in days[2:4]]
    list(guard._filter([*pages, _item("http://a.cn/x", "别的")]))
    assert guard.budget("a.cn/calendar/") == 3  # 1 page with content, 3 without
    assert _admitted(guard, days) == 3
    off = TrapGuardMiddleware(CountingStats(), max_query_variants=3)  # growth off (per page 0)
    list(off._filter([_item(days[0], "当日 新闻"), _item(days[1], "另一天")]))
    assert _admitted(off, days) == 3


def test_growth_survives_a_resumed_crawl(tmp_path):
    spider = object()
    args = {"max_query_variants": 2, "query_variants_per_page": 3, "jobdir": str(tmp_path)}
    first = TrapGuardMiddleware(CountingStats(), **args)
    first.spider_opened(spider)
    list(first._filter([_item("http://a.cn/a.php?id=1", "正文一"), _item("http://a.cn/a.php?id=2", "正文二"),
                        _item("http://a.cn/a.php?id=4", "正文三"),
                        PageItem(url="http://a.cn/a.php?id=3", text="")]))  # fmt: skip
    first.spider_closed(spider)
    again = TrapGuardMiddleware(CountingStats(), **args)
    again.spider_opened(spider)
    assert again.budget("a.cn/a.php") == 2 + 3 * (3 - 1 - 1)
    again.spider_closed(spider)


@pytest.mark.redis
def test_growth_is_shared_by_all_workers(redis_url):
    import redis

    client = redis.Redis.from_url(redis_url)
    key = f"topicrawl_test_{uuid.uuid4().hex[:8]}:trap"
    a, b = (TrapGuardMiddleware(CountingStats(), max_query_variants=2, query_variants_per_page=2,
                                redis=client, key=key) for _ in "ab")  # fmt: skip
    urls = [f"http://a.cn/article.php?id={i}" for i in range(10)]
    try:
        assert _admitted(a, urls[:3]) == 2
        list(a._filter([_item(urls[0], "正文一"), _item(urls[1], "正文二")]))  # a's two texts ...
        assert _admitted(b, urls[3:]) == 2  # ... raises the budget worker b sees
        list(b._filter([PageItem(url=urls[2], text="")]))  # b's empty page lowers it
        assert _admitted(a, urls[5:]) == 0
    finally:
        client.delete(*client.scan_iter(f"{key}*"))


def test_a_page_the_spider_fed_counts_once():
    """The spider yields a page's links before its item (crawler.spiders.topic: a kill
    between the two loses no link), so it feeds the guard the page first
    (``page_fetched``): the page's text counts in the budget its own links are checked
    against, and the item passing the middleware afterwards is not counted again (the same
    text twice would count as a page without a text of its own)."""
    guard = TrapGuardMiddleware(CountingStats(), max_query_variants=3, query_variants_per_page=2)
    articles = [f"http://a.cn/article.php?id={i}" for i in range(9)]
    for i, text in enumerate(("第一篇 文章", "第二篇文章")):
        guard.page_fetched(_item(articles[i], text))
    assert guard.budget("a.cn/article.php") == 5
    out = list(guard._filter([Request(u) for u in articles[2:8]]
                             + [_item(articles[0], "第一篇 文章"), _item(articles[1], "第二篇文章")]))  # fmt: skip
    assert len(out) == 5 + 2  # 5 of the 6 links (the budget), and the items
    assert guard.budget("a.cn/article.php") == 5  # not lowered by the items passing
    assert guard.queries.wasted["a.cn/article.php"] == 0
    # a page accepted on re-judgement comes again: let through, not counted a second time
    guard.page_fetched(_item(articles[0], "第一篇 文章"), observe=False)
    list(guard._filter([_item(articles[0], "第一篇 文章")]))
    assert guard.queries.wasted["a.cn/article.php"] == 0
