"""The section a page's menu marks current and the one its metadata states
(topicrawl.extract.nav_section, meta_section), for the learned contrast's ``section_meta``."""

from __future__ import annotations

import json
import time

import pytest
from lxml import html as lxml_html

from topicrawl.extract import MAX_SECTION_LABEL, extract_page, meta_section, nav_section

ARTICLE = "<div class='content'><p>{}</p></div>".format(
    "国务院办公厅印发通知，要求各地做好春节期间的安全生产工作。" * 4
)


def tree(body: str, head: str = ""):
    return lxml_html.fromstring(f"<html><head>{head}</head><body>{body}{ARTICLE}</body></html>")


def nav(body: str, url: str) -> str | None:
    return nav_section(tree(body), url)


def label(head: str, body: str = "") -> str | None:
    return meta_section(tree(body, head))


# -- the current item of a menu -------------------------------------------------------------
# real-world-like menus (class names as such sites write them, not sitegen's)
@pytest.mark.parametrize(
    ("body", "url", "expected"),
    [
        (  # Bootstrap's navbar: li.nav-item.active
            '<nav class="navbar"><ul class="navbar-nav"><li class="nav-item">'
            '<a class="nav-link" href="/">首页</a></li><li class="nav-item active">'
            '<a class="nav-link" href="/ent/">娱乐</a></li><li class="nav-item">'
            '<a class="nav-link" href="/tech/">科技</a></li></ul></nav>',
            "http://m.example.cn/a/3f9c2e",
            "http://m.example.cn/ent/",
        ),
        (  # WordPress: the category of a single post is current-post-ancestor
            '<nav id="site-navigation" class="main-navigation"><ul id="primary-menu">'
            '<li class="menu-item"><a href="https://blog.x.cn/">首页</a></li>'
            '<li class="menu-item current-post-ancestor current-menu-parent">'
            '<a href="https://blog.x.cn/category/tech/">科技</a></li></ul></nav>',
            "https://blog.x.cn/posts/zhang-3/",
            "https://blog.x.cn/category/tech/",
        ),
        (  # a Chinese portal: a.cur in div.nav
            '<div class="nav"><a href="/">首页</a><a href="/finance/" class="cur">财经</a>'
            '<a href="/house/">房产</a></div>',
            "http://www.xx.com.cn/show.php?id=9",
            "http://www.xx.com.cn/finance/",
        ),
        (  # li.on in div#menu, pinyin-free id
            '<div id="menu"><ul><li><a href="index.html">首页</a></li>'
            '<li class="on"><a href="list.asp?classid=3">体育</a></li></ul></div>',
            "http://www.old.cn/show.asp?id=9",
            "http://www.old.cn/list.asp?classid=3",
        ),
        (  # aria-current in a <nav>
            '<nav><a href="/">Home</a> <a href="/world/" aria-current="location">国际</a></nav>',
            "http://news.x.cn/2019/0101/1.html",
            "http://news.x.cn/world/",
        ),
        (  # a mega-menu item holding a panel of headlines: its own (first) link
            '<nav class="mega-menu"><ul><li><a href="/">推荐</a></li>'
            '<li class="mega on"><a href="/channel/3/">娱乐</a><div class="mega-panel"><ul>'
            '<li><a href="/article.php?id=1">某电影定档</a></li></ul></div></li></ul></nav>',
            "http://www.media.cn/article.php?id=7",
            "http://www.media.cn/channel/3/",
        ),
        (  # a side bar menu (aside.sidenav), li.active
            '<aside class="sidenav"><ul><li class=""><a href="/c/ty/">体育</a></li>'
            '<li class="active"><a href="/c/yl/">娱乐</a></li></ul></aside>',
            "http://m.x.cn/a/04b0722098",
            "http://m.x.cn/c/yl/",
        ),
    ],
)
def test_nav_section_of_real_world_menus(body, url, expected):
    assert nav(body, url) == expected


@pytest.mark.parametrize(
    "body",
    [
        # a carousel's active slide: not a menu
        '<div class="carousel"><div class="item active"><a href="/a/1">头条新闻</a></div></div>',
        # a tab strip of a ranking box: not a menu
        '<div class="rank"><ul class="tabs"><li class="on"><a href="/rank/day">日榜</a></li></ul></div>',
        # the current page of a pager in a <nav>: the page itself
        '<nav aria-label="Page navigation"><ul class="pagination"><li class="page-item active">'
        '<a href="/list/?page=2">2</a></li></ul></nav>',
        # home marked current
        '<nav><ul><li class="active"><a href="/">首页</a></li><li><a href="/ent/">娱乐</a></li></ul></nav>',
        # a marked item without a link, a javascript link, "inactive" is no mark
        '<nav><ul><li class="active">正文</li><li class="current"><a href="javascript:;">x</a></li>'
        '<li class="inactive"><a href="/ent/">娱乐</a></li></ul></nav>',
        # a whole list marked: its first link is no item of its own
        '<nav><ul class="active"><li><a href="/ent/">娱乐</a></li></ul></nav>',
        # no mark at all
        '<nav class="menu"><ul><li><a href="/ent/">娱乐</a></li><li><a href="/tech/">科技</a></li></ul></nav>',
    ],
)
def test_what_names_no_nav_section(body):
    assert nav(body, "http://a.cn/list/?page=2") is None


def test_many_marked_items_name_none_and_two_the_first():
    items = "".join(f'<li class="active"><a href="/s{i}/">栏目{i}</a></li>' for i in range(3))
    assert nav(f"<nav><ul>{items}</ul></nav>", "http://a.cn/a/1") is None  # every item marked
    two = ('<nav class="main-nav"><a class="cur" href="/sports/">体育</a></nav>'
           '<div class="subnav"><a class="cur" href="/sports/nba/">NBA</a></div>')  # fmt: skip
    assert nav(two, "http://a.cn/a/1") == "http://a.cn/sports/"  # the menu, not the sub-menu
    # the item and its link both marked: one section
    both = '<nav><li class="active"><a class="active" href="/ent/">娱乐</a></li></nav>'
    assert nav(both, "http://a.cn/a/1") == "http://a.cn/ent/"


def test_hostile_menus_are_bounded():
    many = "".join(f'<li class="active"><a href="/s{i}/">{i}</a></li>' for i in range(20_000))
    deep = "<div>" * 3000 + '<li class="on"><a href="/s/">s</a></li>' + "</div>" * 3000
    huge = f'<div class="{"x" * 200_000} on"><a href="/s/">s</a></div>'
    for body in (f'<nav class="nav"><ul>{many}</ul></nav>', f"<nav>{deep}</nav>", huge):
        t0 = time.perf_counter()
        assert nav(body, "http://a.cn/a/1") is None
        assert time.perf_counter() - t0 < 2.0


# -- the section the metadata states --------------------------------------------------------
def ld(obj) -> str:
    return f'<script type="application/ld+json">{json.dumps(obj, ensure_ascii=False)}</script>'


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (
            '<meta property="og:type" content="article"><meta property="article:section" '
            'content=" 娱乐  八卦 ">',
            "娱乐 八卦",
        ),
        ('<meta name="ColumnName" content="政务动态">', "政务动态"),  # Chinese government sites
        (
            ld(
                {"@context": "https://schema.org", "@type": "NewsArticle", "articleSection": "财经"}
            ),
            "财经",
        ),
        (ld({"@type": "NewsArticle", "articleSection": ["", "科技", "互联网"]}), "科技"),
        (
            ld(
                {
                    "@context": "https://schema.org",
                    "@graph": [
                        {"@type": "WebPage"},
                        {"@type": "Article", "articleSection": "体育"},
                    ],
                }
            ),
            "体育",
        ),
        (
            ld([{"@type": "BreadcrumbList"}, {"@type": "NewsArticle", "articleSection": "时尚"}]),
            "时尚",
        ),
        # JSON-LD as sites often write it: a trailing comma, an upper-case type
        (
            '<script type="application/LD+JSON">{"@type": "NewsArticle", "articleSection": "房产",}'
            "</script>",
            "房产",
        ),
        (f'<meta property="article:section" content="{"长" * 100}">', "长" * MAX_SECTION_LABEL),
    ],
)
def test_meta_section_of_real_world_heads(head, expected):
    assert label(head) == expected


@pytest.mark.parametrize(
    "head",
    [
        "",
        '<meta property="article:section" content="  ">',
        ld({"@type": "NewsArticle", "headline": "无栏目"}),
        ld({"@type": "NewsArticle", "articleSection": 7}),
        ld({"@type": "NewsArticle", "articleSection": {"name": "体育"}}),
        '<script type="text/javascript">var x = {"articleSection": "体育"};</script>',
    ],
)
def test_what_states_no_section(head):
    assert label(head) is None


def test_hostile_json_ld_is_bounded():
    nested = '{"articleSection": ' + "[" * 10_000 + "]" * 10_000 + "}"  # RecursionError
    huge = '{"articleSection": "体育", "x": "' + "y" * 100_000 + '"}'  # over the size cap
    wide = json.dumps([{"k": i} for i in range(3000)] + [{"articleSection": "体育"}])
    bigint = '{"n": ' + "9" * 10_000 + ', "articleSection": 1}'  # int too long to convert
    garbage = '{"articleSection" ' + "\x00\ud800" * 5000
    scripts = "".join(f'<script type="application/ld+json">{x}</script>'
                      for x in (nested, huge, wide, bigint, garbage))  # fmt: skip
    t0 = time.perf_counter()
    assert label(scripts) is None  # the wide list is walked only in part: no section
    assert time.perf_counter() - t0 < 2.0
    # a valid script after hostile ones (within the first four) still counts
    assert label(f'<script type="application/ld+json">{nested}</script>'
                 + ld({"articleSection": "体育"})) == "体育"  # fmt: skip


def test_extract_page_carries_the_menu_and_metadata_sections():
    html = ('<html><head><title>某电影定档</title><meta property="article:section" '
            'content="娱乐"></head><body><nav class="nav"><a href="/">首页</a>'
            f'<a class="cur" href="/ent/">娱乐</a></nav>{ARTICLE}</body></html>')  # fmt: skip
    ex = extract_page(html, "http://m.example.cn/a/3f9c2e")
    assert (ex.section, ex.section_nav, ex.section_label) == (
        None, "http://m.example.cn/ent/", "娱乐")  # fmt: skip
    assert ex.text  # the extraction itself is unchanged
    plain = extract_page(f"<html><body>{ARTICLE}</body></html>", "http://a.cn/1")
    assert plain.section_nav is None and plain.section_label is None


@pytest.mark.parametrize("in_head", [True, False])
def test_family_b_templates_without_breadcrumbs_now_name_their_section(tmp_path, in_head):
    """sitegen's family b: the stream template's articles name their section by the side
    menu's current item (and JSON-LD), the blog's by ``article:section`` only — gone when the
    web is built with ``section_in_head=False``: then the blog names none."""
    from sitegen.build import build_web
    from topicrawl.extract import decode_html

    truth = build_web(tmp_path, scale="small", seed=3, family="b", section_in_head=in_head)
    responses = json.loads((tmp_path / "responses.json").read_text(encoding="utf-8"))
    found: dict[str, list] = {}
    for url, page in sorted(truth["pages"].items()):
        host = url.split("/")[2]
        r = responses.get(url, {})
        if page["kind"] != "article" or "file" not in r or len(found.get(host, [])) >= 4:
            continue
        text, _ = decode_html((tmp_path / r["file"]).read_bytes())
        ex = extract_page(text, url)
        found.setdefault(host, []).append((ex.section, ex.section_nav, ex.section_label))
    stream = next(v for h, v in found.items() if h.startswith("m."))
    blog = next(v for h, v in found.items() if h.startswith("blog."))
    assert all(c is None and n and n.startswith("http") for c, n, _ in stream)
    assert all(c is None and n is None for c, n, _ in blog)
    assert all(bool(lab) is in_head for _, _, lab in stream + blog)
