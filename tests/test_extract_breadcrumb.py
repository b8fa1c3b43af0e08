"""The section a page's breadcrumb names (topicrawl.extract.breadcrumb_section)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from lxml import html as lxml_html

from topicrawl.extract import breadcrumb, breadcrumb_section, extract_page

ARTICLE = "<div class='content'><p>{}</p></div>".format(
    "国务院办公厅印发通知，要求各地做好春节期间的安全生产工作。" * 4
)


def section(body: str, url: str) -> str | None:
    return breadcrumb_section(lxml_html.fromstring(f"<html><body>{body}</body></html>"), url)


# real-world-like breadcrumbs of Chinese government and news sites (class names and markers
# as such sites write them, not sitegen's)
@pytest.mark.parametrize(
    ("body", "url", "expected"),
    [
        (  # a provincial government site (jcms): marker, pinyin class, list pages as sections
            '<div class="dqwz">您当前的位置：<a href="/">首页</a> &gt; '
            '<a href="/col/col1229/index.html">政务公开</a> &gt; '
            '<a href="/col/col1234/index.html">通知公告</a></div>',
            "http://www.hz.gov.cn/art/2019/1/2/art_1234_5.html",
            "http://www.hz.gov.cn/col/col1234/index.html",
        ),
        (  # a news portal: the marker in a span, relative links, &nbsp; and 正文 at the end
            '<div class="location"><span>当前位置：</span><a href="http://www.xx.com.cn/">'
            "网站首页</a>&nbsp;&gt;&nbsp;<a href='../../../sports/'>体育频道</a>&nbsp;&gt;&nbsp;"
            "正文</div>",
            "http://www.xx.com.cn/sports/2019/0101/123.shtml",
            "http://www.xx.com.cn/sports/",
        ),
        (  # Bootstrap: an ordered list without separators; the last item links to the page
            '<nav aria-label="breadcrumb"><ol class="breadcrumb">'
            '<li class="breadcrumb-item"><a href="/">Home</a></li>'
            '<li class="breadcrumb-item"><a href="/tech/">科技</a></li>'
            '<li class="breadcrumb-item active"><a href="/tech/42.html">文章标题</a></li></ol></nav>',
            "http://m.example.cn/tech/42.html",
            "http://m.example.cn/tech/",
        ),
        (  # an old ASP site: no class at all, a table cell, >> separators, a query section
            "<table><tr><td>您现在的位置：<a href='index.asp'>首页</a> &gt;&gt; "
            "<a href='list.asp?classid=3'>财经</a> &gt;&gt; 正文</td></tr></table>",
            "http://www.old.cn/show.asp?id=9",
            "http://www.old.cn/list.asp?classid=3",
        ),
        (  # the site's name as home, a sub-section: the deepest section counts
            '<div class="crumbs"><a href="https://news.x.cn">新华报业网</a> › '
            '<a href="https://news.x.cn/china/">国内</a> › '
            '<a href="https://news.x.cn/china/shizheng/">时政</a></div>',
            "https://news.x.cn/a/3f9c2e",
            "https://news.x.cn/china/shizheng/",
        ),
    ],
)
def test_breadcrumb_section_of_real_world_patterns(body, url, expected):
    assert section(body + ARTICLE, url) == expected


def test_home_only_and_self_only_breadcrumbs_name_no_section():
    url = "http://a.cn/sports/"
    assert section('<div class="crumb"><a href="/">首页</a> &gt; <a href="/sports/">体育</a>'
                   "</div>", url) is None  # a section's own list page  # fmt: skip
    assert section('<div class="crumb"><a href="/">首页</a> / <a href="/index.html">主页</a>'
                   "</div>", url) is None  # fmt: skip


@pytest.mark.parametrize(
    "body",
    [
        # a menu: links without separators, but its class names no breadcrumb
        '<div class="nav"><a href="/">首页</a><a href="/sports/">体育</a><a href="/ent/">娱乐</a></div>',
        # a "location" block that is an address: text between the links, no home link
        '<div class="location">地址：北京市海淀区中关村大街1号 <a href="/map">地图</a> '
        '<a href="/contact">联系我们</a></div>',
        # "的位置" in the article's text, with links in the paragraph
        "<p>这座城市的位置十分重要，它连接着南北交通的要道，历史上多次成为兵家必争之地。"
        '<a href="/">首页</a> <a href="/history/">历史</a></p>',
        # one link only
        '<div class="breadcrumb"><a href="/">首页</a> &gt; 正文</div>',
        # words between the links: a sentence, not a chain
        '<div class="position"><a href="/">首页</a> 今天发布了新的 <a href="/news/">新闻</a></div>',
    ],
)
def test_what_is_not_a_breadcrumb(body):
    assert section(body + ARTICLE, "http://a.cn/x/1.html") is None


def test_breadcrumb_links_in_order_and_bad_links_skipped():
    tree = lxml_html.fromstring(
        '<html><body><div class="breadcrumbs"><a href="/">首页</a> &gt; <a href="/news/">新闻</a>'
        ' &gt; <a href="http://[oops">坏链接</a> &gt; <a href="javascript:void(0)">脚本</a>'
        "</div></body></html>"
    )
    assert breadcrumb(tree) == ["/", "/news/", "http://[oops", "javascript:void(0)"]
    assert breadcrumb_section(tree, "http://a.cn/news/1.html") == "http://a.cn/news/"


def test_hostile_pages_are_bounded():
    # a "breadcrumb" of 10,000 links, a deeply nested one, a huge class attribute: no section,
    # and quickly
    many = "".join(f'<a href="/s{i}/">{i}</a> &gt; ' for i in range(10_000))
    deep = "<span>" * 3000 + '<a href="/">首页</a> &gt; <a href="/s/">s</a>' + "</span>" * 3000
    huge = f'<div class="{"position " * 50_000}"><a href="/">首页</a></div>'
    markers = "<p>当前位置：</p>" * 5000
    for body in (f'<div class="crumb">{many}</div>', f'<div class="crumb">{deep}</div>', huge,
                 markers):  # fmt: skip
        t0 = time.perf_counter()
        assert section(body, "http://a.cn/1.html") is None
        assert time.perf_counter() - t0 < 2.0


def test_extract_page_carries_the_section():
    html = ("<html><head><title>关于春节期间安全生产的通知</title></head><body>"
            '<div class="where">当前位置：<a href="/">首页</a> / <a href="/node_12.htm">要闻</a>'
            f"</div>{ARTICLE}</body></html>")  # fmt: skip
    ex = extract_page(html, "http://paper.example.cn/content/2019/0101/c1.html")
    assert ex.section == "http://paper.example.cn/node_12.htm"
    assert ex.text  # the extraction itself is unchanged
    assert extract_page(f"<html><body>{ARTICLE}</body></html>", "http://a.cn/1").section is None


def _walking_every_element(monkeypatch, tree):
    """:func:`topicrawl.extract._crumb_candidates` as it was: the Python test of the label on
    every element of the page (the reference for the XPath pre-selection)."""
    from topicrawl import extract

    with monkeypatch.context() as m:
        m.setattr(extract, "_LABELLED_XPATH", lambda t: t.iter())
        return extract._crumb_candidates(tree)


@pytest.mark.parametrize("body", [
    '<div class="CRUMBS"><a href="/">首页</a> &gt; <a href="/s/">s</a></div>',
    '<div id="Bread_Nav"><a href="/">Home</a> / <a href="/s/">s</a></div>',
    '<ol itemtype="https://schema.org/BreadcrumbList"><li><a href="/">a</a></li></ol>',
    '<nav aria-label="面包屑"><a href="/">首页</a> › <a href="/s/">s</a></nav>',
    '<div aria-label="当前位置"><a href="/">首页</a> › <a href="/s/">s</a></div>',
    # characters whose lower case is an ASCII letter: İ (i + a combining dot) and the Kelvin sign
    '<div class="weizhİ"><a href="/">首页</a> › <a href="/s/">s</a></div>',
    '<div class="WEİZHI weizhİ-x"><a href="/">首页</a></div><div class="dqwz lOc"></div>',
    '<div class="\u212aloc position"><a href="/">首页</a></div><p class="pos">x</p>',
    "".join(f'<div class="loc-{i}" id="where{i}"><a href="/">首页</a></div>' for i in range(20)),
    '<div class="x"><!-- a comment --><span class="">当前位置：<a href="/">首页</a></span></div>',
])  # fmt: skip
def test_labelled_elements_are_those_every_element_walked_finds(monkeypatch, body):
    from topicrawl.extract import _crumb_candidates

    tree = lxml_html.fromstring(f"<html><body>{body}</body></html>")
    assert _crumb_candidates(tree) == _walking_every_element(monkeypatch, tree)


DATA_HTML = Path(os.environ.get("TOPICRAWL_DATA", "/work/shared/data")) / "html"


@pytest.mark.skipif(not DATA_HTML.is_dir(), reason="the shared data's html is not here")
def test_labelled_elements_on_real_pages(monkeypatch):
    """The XPath pre-selection finds the same breadcrumb candidates as the walk over every
    element on the shared data's real pages."""
    from topicrawl.extract import _crumb_candidates

    pages = sorted(DATA_HTML.rglob("*.htm*"))
    assert pages
    for path in pages:
        tree = lxml_html.fromstring(path.read_bytes())
        assert _crumb_candidates(tree) == _walking_every_element(monkeypatch, tree), path
