"""The trap guard's path budget (issue 11): path calendars and endless path variants are
bounded like query-string traps, legitimate dated or numbered article URLs are not. The
budget is checked as a request leaves the frontier (``fetch_allowed``), not when its link is
found."""

from __future__ import annotations

import uuid

import pytest
from conftest import CountingStats

from crawler.items import PageItem
from crawler.middlewares import MIN_CONTENT_CHARS, TrapGuardMiddleware, path_shape, text_digest


def _article(url: str, text: str) -> PageItem:
    """A fetched page whose main text is ``text`` repeated to a content page's length."""
    return PageItem(url=url, text=text * (MIN_CONTENT_CHARS // 2), accepted=True)


def _sent(guard: TrapGuardMiddleware, urls: list[str]) -> int:
    """How many of ``urls`` the guard lets be downloaded (as they leave the frontier)."""
    return sum(guard.fetch_allowed(u) for u in urls)


@pytest.mark.parametrize(
    ("url", "shape"),
    [
        # path calendars, at every granularity, and numbered days: one shape per calendar
        ("http://a.cn/calendar/2024/11/25/", "a.cn/calendar/{n}/"),
        ("http://a.cn/calendar/2024/11/", "a.cn/calendar/{n}/"),
        ("http://a.cn/calendar/17/", "a.cn/calendar/{n}/"),
        ("http://a.cn/events/2024-11-25/", "a.cn/events/{n}-{n}-{n}/"),
        # ever deeper numeric paths and repeated blocks collapse into one shape
        ("http://a.cn/echo/3/1/2/3/4/5/", "a.cn/echo/{n}/"),
        ("http://a.cn/a/b/a/b/a/b/", "a.cn/a/b/"),
        ("http://a.cn/x/1/y/2/x/3/y/4/", "a.cn/x/{n}/y/{n}/"),
        # legitimate article schemes: one shape per scheme (its budget grows with new texts)
        ("http://a.cn/news/2024/11/25/article-123.html", "a.cn/news/{n}/article-{n}.html"),
        ("http://a.cn/politics/2019-05-12/100123.shtml", "a.cn/politics/{n}-{n}-{n}/{n}.shtml"),
        ("http://a.cn/tech/201905/t20190512_123.htm", "a.cn/tech/{n}/{x}_{n}.htm"),
        ("http://a.cn/content/2019/0512/c123456.html", "a.cn/content/{n}/{x}.html"),
        ("http://a.cn/art/2019/5/12/art_1201_123456.html", "a.cn/art/{n}/art_{n}_{n}.html"),
        ("http://a.cn/a/3f9a0c1b2d", "a.cn/a/{x}"),
        ("http://A.cn/%E6%96%B0%E9%97%BB/12/", "a.cn/新闻/{n}/"),
        # nothing to group: the path is its own shape (the query string has its own budget)
        ("http://a.cn/article.php?id=5", None),
        ("http://a.cn/about/", None),
        ("http://a.cn/", None),
        ("http://a.cn", None),
    ],
)
def test_path_shape(url, shape):
    assert path_shape(url) == shape


def test_dated_articles_and_a_calendar_of_one_site_are_different_shapes():
    article = path_shape("http://a.cn/news/2024/11/25/article-123.html")
    day = path_shape("http://a.cn/news/2024/11/25/")
    assert article != day
    assert path_shape("http://a.cn/news/2024/11/26/article-9.html") == article


def test_text_digest_ignores_whitespace_and_numbers():
    assert text_digest("2024年11月25日 活动日历\n暂无活动") == text_digest("2024年11月26日活动日历 暂无活动")
    assert text_digest("第一篇文章") != text_digest("第二篇文章")


def test_a_path_calendar_stays_at_the_base_budget():
    guard = TrapGuardMiddleware(CountingStats(), max_path_variants=5, path_variants_per_page=3)
    days = [f"http://a.cn/calendar/2024/{m:02d}/{d:02d}/" for m in (1, 2) for d in range(1, 29)]
    assert all(guard.allowed(u) is None for u in days)  # links are found freely
    assert _sent(guard, days[:2]) == 2
    # every day: the same long text under its own date (numbers do not make a text new)
    list(guard._filter([_article(u, f"{u[-11:]} 活动日历，本日暂无活动安排。") for u in days[:2]]))
    assert guard.path_budget("a.cn/calendar/{n}/") == 5  # 1 page with content, 1 without
    assert _sent(guard, days[2:]) == 3


def test_a_trap_whose_first_page_has_a_text_stays_at_the_base_budget():
    """The first text of a shape earns nothing: while a calendar's second day is still being
    fetched, its first day's text (all the guard has seen) lifts neither the bound nor the
    budget (CI once sent 34 pages of a 30-page shape in that window)."""
    guard = TrapGuardMiddleware(CountingStats(), max_path_variants=5, path_variants_per_page=3)
    days = [f"http://a.cn/calendar/{d}/" for d in range(1, 40)]
    assert _sent(guard, days[:1]) == 1
    list(guard._filter([_article(days[0], "活动日历，本日暂无活动安排。")]))
    assert guard.path_budget("a.cn/calendar/{n}/") == 5
    assert _sent(guard, days[1:]) == 4


def test_a_link_farm_page_of_numbered_links_is_not_a_text_of_its_own():
    """A page of links numbered 0, 1, 2 … extracts to a long main text of digits; what makes a
    text a page's own is measured without numbers, as the digest is."""
    guard = TrapGuardMiddleware(CountingStats(), max_path_variants=5, path_variants_per_page=3)
    farm = [f"http://a.cn/farm/1/{i}.html" for i in range(40)]
    numbers = "链接农场\n" + "".join(map(str, range(500)))
    assert len(numbers) > 10 * MIN_CONTENT_CHARS
    assert _sent(guard, farm[:3]) == 3
    list(guard._filter([PageItem(url=u, text=numbers) for u in farm[:3]]))
    shape = path_shape(farm[0])
    assert guard.paths.content[shape] == set() and guard.paths.wasted[shape] == 3
    assert _sent(guard, farm[3:]) == 2


def test_ever_deeper_numeric_paths_are_one_shape():
    guard = TrapGuardMiddleware(CountingStats(), max_path_variants=5, max_segment_repeats=100)
    urls = [f"http://a.cn/echo/1/{'/'.join(map(str, range(2, k)))}/" for k in range(3, 40)]
    assert _sent(guard, urls) == 5


def test_a_scheme_of_articles_is_not_bounded():
    guard = TrapGuardMiddleware(CountingStats(), max_path_variants=3, path_variants_per_page=2)
    urls = [f"http://a.cn/content/2019/05{d % 28 + 1:02d}/c{100 + d}.html" for d in range(60)]
    assert _sent(guard, urls[:5]) == 3  # nothing fetched yet: the base budget
    # two fetched, each with a text of its own: mostly content, no limit
    list(guard._filter([_article(urls[0], "第一篇新闻"), _article(urls[1], "第二篇新闻")]))
    assert _sent(guard, urls[5:]) == 55
    list(guard._filter([PageItem(url=u, text="") for u in urls[2:5]]))  # now 2 against 3
    assert guard.path_budget(path_shape(urls[0])) == 3
    assert not guard.fetch_allowed("http://a.cn/content/2019/0601/c999.html")
    assert guard.fetch_allowed("http://a.cn/calendar/2024/11/25/")  # each shape its own
    assert guard.fetch_allowed("http://a.cn/about/")  # no shape: never bounded


def test_path_depth_repeats_and_the_counts_of_refusals():
    from scrapy import Request

    from crawler.middlewares import PathTrapMiddleware, TrapRefused

    stats = CountingStats()
    guard = TrapGuardMiddleware(stats, max_path_variants=2, max_path_depth=9)
    deep = "http://a.cn/" + "/".join(f"s{i}x" for i in range(10)) + "/"
    loop = "http://a.cn/a/b/a/b/a/b/a/b/"
    days = [f"http://a.cn/calendar/{d}/" for d in range(1, 6)]
    out = list(guard._filter([Request(deep), Request(loop), *map(Request, days)]))
    assert [r.url for r in out] == days

    class _Crawler:
        spider = type("Spider", (), {"trap_guard": guard})()
        stats = None

    crawler = _Crawler()
    crawler.stats = stats
    mw = PathTrapMiddleware(crawler)
    sent = 0
    for url in days:
        try:
            mw.process_request(Request(url))
            sent += 1
        except TrapRefused:
            pass
    assert sent == 2
    mw.process_request(Request(days[4], meta={"retry_times": 1}))  # a retry passes
    mw.process_request(Request(days[4], meta={"recrawl": days[4]}))  # a stored page too
    assert stats.values == {"topicrawl/links/trap/path_depth": 1,
                            "topicrawl/links/trap/segment_repeats": 1,
                            "topicrawl/links/trap/path_variants": 3}  # fmt: skip


def test_path_budget_survives_a_resumed_crawl(tmp_path):
    spider = object()
    args = {"max_path_variants": 2, "path_variants_per_page": 3, "jobdir": str(tmp_path)}
    first = TrapGuardMiddleware(CountingStats(), **args)
    first.spider_opened(spider)
    assert _sent(first, ["http://a.cn/n/1.html", "http://a.cn/n/2.html", "http://a.cn/n/3.html"]) == 2
    list(first._filter([_article("http://a.cn/n/1.html", "正文"), PageItem(url="http://a.cn/n/2.html", text="")]))
    first.spider_closed(spider)
    again = TrapGuardMiddleware(CountingStats(), **args)
    again.spider_opened(spider)
    assert again.path_budget("a.cn/n/{n}.html") == 2  # 1 against 1
    assert not again.fetch_allowed("http://a.cn/n/4.html")  # its 2 requests were sent
    again.spider_closed(spider)


@pytest.mark.redis
def test_path_budget_is_shared_by_all_workers(redis_url):
    import redis

    client = redis.Redis.from_url(redis_url)
    key = f"topicrawl_test_{uuid.uuid4().hex[:8]}:trap"
    a, b = (TrapGuardMiddleware(CountingStats(), max_path_variants=2, path_variants_per_page=2,
                                redis=client, key=key) for _ in "ab")  # fmt: skip
    days = [f"http://a.cn/calendar/{d}/" for d in range(10)]
    try:
        assert _sent(a, days[:1]) == 1
        assert _sent(b, days[1:]) == 1  # worker b sees worker a's request
        list(a._filter([PageItem(url=days[0], text="")]))  # a's page without a text
        list(b._filter([_article(days[1], "当日活动"), _article(days[2], "次日活动"),
                        _article(days[3], "后日活动")]))  # fmt: skip
        assert _sent(a, days[3:]) == 7  # mostly texts of their own (3 against 1): no limit
    finally:
        client.delete(*client.scan_iter(f"{key}*"))
