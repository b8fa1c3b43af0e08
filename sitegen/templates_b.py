"""Template family b of the local test web: five page layouts unlike family a's.

Family a (``sitegen.templates``) is four classic Chinese portal layouts with keywords,
descriptions and ``{title}_{section}_{site}`` titles. Family b is held out from choosing
defaults, so it differs wherever a crawler could have learnt family a by heart:

* ``cards``  — a media portal: card grids, a mega-menu of every channel with headlines,
  "加载更多" links (``?page=N``, relative), protocol-relative links, card images that link
  the article with no anchor text; OpenGraph only (no keywords, no description),
  ``{site} | {title}``.
* ``stream`` — an app-style feed: sidebar navigation, root-relative links, titles cut to
  16 characters in lists (full title only in the ``title`` attribute), ``<title>`` is the
  headline alone, the description is the site's tagline, JSON-LD metadata.
* ``paper``  — an old newspaper site in GBK (declared in the HTTP header only): monthly
  archives, a footer site map with dozens of links, ``{site}-{section}-{title}``.
* ``blog``   — a column/blog site: author pages, tag pages, monthly archives, a tag cloud,
  ``{title} – {site}``, OpenGraph + description of the body's start.
* ``govb``   — a government portal: 通知公告 (notice lists, attachments via
  ``downfile.jsp?fileid=N``), 政务动态/政策解读 columns, the CMS meta tags (SiteName,
  ColumnName …), ``{title}`` alone, footers with 网站标识码 and 公安备案 lines.

Every renderer returns a complete HTML page as ``str`` (the builder encodes it).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from html import escape

from sitegen.articles import Article
from sitegen.templates import PageContext, Site

Link = tuple[str, str]  # (url, anchor text)

TEMPLATES_B = ("cards", "stream", "paper", "blog", "govb")


@dataclass
class Chrome:
    """Site-wide navigation of a family-b site, the same on every page of the site."""

    #: (section list URL, label, headlines) — the mega-menu / sidebar / channel bar
    sections: Sequence[tuple[str, str, Sequence[Link]]] = ()
    #: footer site map, blog sidebars: (url, label)
    footer: Sequence[Link] = ()
    months: Sequence[Link] = ()  # monthly archives
    authors: Sequence[Link] = ()  # blog authors
    tags: Sequence[Link] = ()  # tag cloud
    login: str = ""  # the (robots-disallowed) login URL
    feed: str = ""  # the endless "more" feed (the trap)
    extra: dict = field(default_factory=dict)


def _e(text: str) -> str:
    return escape(text, quote=True)


def short(title: str, n: int = 16) -> str:
    """A list title cut to ``n`` characters with an ellipsis (the stream template)."""
    return title if len(title) <= n else title[:n] + "…"


def rel(url: str, style: str) -> str:
    """How a template writes an internal link: absolute, root-relative or protocol-relative."""
    if style == "root" and url.startswith("http://"):
        return "/" + url.split("/", 3)[3] if url.count("/") >= 3 else "/"
    if style == "proto" and url.startswith("http://"):
        return url[len("http:") :]
    return url


_STYLE = {"cards": "proto", "stream": "root", "paper": "abs", "blog": "abs", "govb": "abs"}


def href(site: Site, url: str) -> str:
    """``url`` as ``site``'s template writes it: links to its own host in the template's style
    (absolute, root-relative or protocol-relative), links to other hosts absolute."""
    if not url.startswith(f"http://{site.host}/"):
        return url
    return rel(url, _STYLE[site.template])


def _a(site: Site, url: str, text: str, attrs: str = "") -> str:
    return f'<a href="{_e(href(site, url))}"{attrs}>{_e(text)}</a>'


def _ul(site: Site, links: Sequence[Link], cls: str = "", *, cut: bool = False) -> str:
    c = f' class="{cls}"' if cls else ""
    if cut:
        items = "".join(
            f'<li><a href="{_e(href(site, u))}" title="{_e(t)}">{_e(short(t))}</a></li>'
            for u, t in links
        )
    else:
        items = "".join(f"<li>{_a(site, u, t)}</li>" for u, t in links)
    return f"<ul{c}>{items}</ul>"


def _charset_meta(site: Site, charset: str | None) -> str:
    if not charset:
        return ""
    if site.meta_style == "http-equiv":
        return f'<meta http-equiv="Content-Type" content="text/html; charset={charset}">'
    return f'<meta charset="{charset}">'


def _og(props: dict[str, str]) -> str:
    return "".join(f'<meta property="{k}" content="{_e(v)}">' for k, v in props.items() if v)


def _ad(site: Site, n: int) -> str:
    return (
        f'<div class="adv" data-slot="{n}"><a href="http://click.ssp-mediax.cn/r?u={site.host}&amp;n={n}"'
        f' rel="sponsored nofollow"><img src="http://cdn.ssp-mediax.cn/c/{n % 23}.png" alt=""></a></div>'
    )


def _attach(site: Site, ctx: PageContext, title: str = "附件") -> str:
    if not ctx.attachments:
        return ""
    return f'<div class="fujian"><span>{title}：</span>{_ul(site, ctx.attachments)}</div>'


def _more(site: Site, ctx: PageContext) -> str:
    return f'<div class="also">{_ul(site, ctx.extra)}</div>' if ctx.extra else ""


def _orig(site: Site, ctx: PageContext) -> str:
    if not ctx.original:
        return ""
    return f'<p class="source-link">本文转自：{_a(site, ctx.original[0], ctx.original[1])}</p>'


def _copy(site: Site, year: int) -> str:
    return f"&copy;{year} {_e(site.name)} {_e(site.icp)}"


# --------------------------------------------------------------------------- heads


def article_head(
    a: Article,
    site: Site,
    ctx: PageContext,
    label: str,
    *,
    url: str,
    author: str = "",
    tags: Sequence[str] = (),
) -> str:
    """The <head> of an article page: every template its own title form and metadata."""
    shown = label if ctx.section_in_head else ""
    t = site.template
    d = a.published
    cs = _charset_meta(site, ctx.charset)
    if t == "cards":
        og = _og(
            {
                "og:type": "article",
                "og:title": a.title,
                "og:description": a.lead,
                "og:site_name": site.name,
                "og:url": url,
                "article:section": shown,
                "article:published_time": f"{d.isoformat()}T07:30:00+08:00",
            }
        )
        return f"<head>{cs}<title>{_e(site.name)} | {_e(a.title)}</title>{og}</head>"
    if t == "stream":
        ld = {
            "@context": "https://schema.org",
            "@type": "NewsArticle",
            "headline": a.title,
            "datePublished": f"{d.isoformat()}T12:00:00+08:00",
            "publisher": {"@type": "Organization", "name": site.name},
        }
        if shown:
            ld["articleSection"] = shown
        return (
            f'<head>{cs}<meta name="viewport" content="width=device-width,initial-scale=1">'
            f"<title>{_e(a.title)}</title>"
            f'<meta name="description" content="{_e(site.slogan)}">'
            f'<script type="application/ld+json">{json.dumps(ld, ensure_ascii=False)}</script></head>'
        )
    if t == "paper":
        title = "-".join(x for x in (site.name, shown, a.title) if x)
        return f'<head>{cs}<title>{_e(title)}</title><meta name="description" content="{_e(a.lead)}"></head>'
    if t == "blog":
        start = "".join(a.paragraphs)[:100]
        og = _og({"og:type": "article", "og:title": a.title, "og:site_name": site.name})
        og += "".join(f'<meta property="article:tag" content="{_e(x)}">' for x in tags)
        if shown:
            og += f'<meta property="article:section" content="{_e(shown)}">'
        return (
            f"<head>{cs}<title>{_e(a.title)} – {_e(site.name)}</title>"
            f'<meta name="description" content="{_e(start)}">'
            f'<meta name="author" content="{_e(author)}">{og}</head>'
        )
    # govb
    return (
        f"<head>{cs}<title>{_e(a.title)}</title>"
        f'<meta name="SiteName" content="{_e(site.name)}"><meta name="SiteDomain" content="{site.host}">'
        f'<meta name="SiteIDCode" content="{site.extra.get("idcode", "")}">'
        + (f'<meta name="ColumnName" content="{_e(shown)}">' if shown else "")
        + f'<meta name="ArticleTitle" content="{_e(a.title)}">'
        f'<meta name="PubDate" content="{d.isoformat()} 16:05">'
        f'<meta name="ContentSource" content="{_e(a.source or site.name)}"></head>'
    )


def plain_head(site: Site, ctx: PageContext, title: str) -> str:
    """The <head> of a list-like page."""
    cs = _charset_meta(site, ctx.charset)
    t = site.template
    if t == "cards":
        return f"<head>{cs}<title>{_e(site.name)} | {_e(title)}</title>{_og({'og:site_name': site.name, 'og:title': title})}</head>"
    if t == "paper":
        return f"<head>{cs}<title>{_e(site.name)}-{_e(title)}</title></head>"
    if t == "blog":
        return f"<head>{cs}<title>{_e(title)} – {_e(site.name)}</title></head>"
    if t == "stream":
        return f'<head>{cs}<title>{_e(title)}</title><meta name="description" content="{_e(site.slogan)}"></head>'
    return f'<head>{cs}<title>{_e(title)}</title><meta name="SiteName" content="{_e(site.name)}"></head>'


# --------------------------------------------------------------------------- frames


def frame(site: Site, chrome: Chrome, ctx: PageContext, head: str, content: str, *,
          current: str = "", crumbs: Sequence[Link] = (), year: int = 2019) -> str:  # fmt: skip
    """A complete page of ``site``: its navigation, ``content``, side columns and footer."""
    t = site.template
    hot = _ul(site, ctx.hot, "rank", cut=t == "stream") if ctx.hot else ""
    crumb = " / ".join(_a(site, u, x) for u, x in crumbs)
    friends = "".join(f"<li>{_a(site, u, x)}</li>" for u, x in ctx.friends)
    if t == "cards":
        mega = "".join(
            f'<li class="mega{" on" if url == current else ""}">{_a(site, url, label)}'
            f'<div class="mega-panel">{_ul(site, heads)}</div></li>'
            for url, label, heads in chrome.sections
        )
        return f"""<!DOCTYPE html>
<html lang="zh-Hans">{head}
<body class="theme-cards">
<header class="masthead"><a class="logo" href="{_e(href(site, site.home))}">{_e(site.name)}</a><a class="user" href="{_e(href(site, chrome.login))}">登录/注册</a></header>
<nav class="mega-menu"><ul><li>{_a(site, site.home, "推荐")}</li>{mega}</ul></nav>
<div class="page-wrap">{f'<div class="crumb">{crumb}</div>' if crumb else ""}
<div class="primary">{content}</div>
<div class="secondary"><section class="hot24"><h4>24小时热榜</h4>{hot}</section>{_ad(site, ctx.ad_id)}{_more(site, ctx)}</div>
</div>
<footer class="foot"><ul class="partners">{friends}</ul><ul class="foot-links">{"".join(f"<li>{_a(site, u, x)}</li>" for u, x in chrome.footer)}</ul>
<p>{_copy(site, year)} 新闻热线：400-000-1234</p></footer>
</body></html>
"""
    if t == "stream":
        side = "".join(
            f'<li class="{"active" if url == current else ""}">{_a(site, url, label)}</li>'
            for url, label, _ in chrome.sections
        )
        return f"""<!doctype html>
<html>{head}
<body>
<div class="app">
<aside class="sidenav"><div class="brand">{_a(site, site.home, site.name)}</div><ul>{side}</ul>
<div class="more-entry">{_a(site, chrome.feed, "刷新看更多")}</div><div class="me">{_a(site, chrome.login, "我的")}</div></aside>
<main class="timeline">{content}</main>
<aside class="rightbar"><div class="panel"><div class="panel-hd">热门排行</div>{hot}</div>{_more(site, ctx)}{_ad(site, ctx.ad_id)}</aside>
</div>
<footer class="ft"><div class="friend">友情链接：<ul>{friends}</ul></div><div>{" ".join(_a(site, u, x) for u, x in chrome.footer)} {_copy(site, year)}</div></footer>
</body></html>
"""
    if t == "paper":
        bar = " ┊ ".join(_a(site, url, label) for url, label, _ in chrome.sections)
        sitemap = "".join(f"<li>{_a(site, u, x)}</li>" for u, x in (*chrome.footer, *chrome.months))
        return f"""<html>{head}
<body leftmargin="0" topmargin="0">
<center>
<div class="paper-head"><img src="/images/masthead.gif" alt="{_e(site.name)}"><div class="today">{_a(site, site.home, "电子版首页")}</div></div>
<div class="bar">{bar}</div>
{f'<div class="where">{crumb}</div>' if crumb else ""}
<div class="body-left">{content}</div>
<div class="body-right"><div class="title-bar">本报热文</div>{hot}{_more(site, ctx)}</div>
<div class="sitemap"><div class="title-bar">网站地图</div><ul>{sitemap}</ul></div>
<div class="foot">友情链接：<ul>{friends}</ul>{_a(site, chrome.login, "采编系统")} {_copy(site, year)} 本报地址：某某市某某大道1号</div>
</center>
</body></html>
"""
    if t == "blog":
        cols = "".join(f"<li>{_a(site, url, label)}</li>" for url, label, _ in chrome.sections)
        cloud = " ".join(_a(site, u, x, ' class="tag"') for u, x in chrome.tags)
        return f"""<!DOCTYPE html>
<html lang="zh-CN">{head}
<body class="blog">
<header class="blog-header"><h1 class="blog-title">{_a(site, site.home, site.name)}</h1><p class="tagline">{_e(site.slogan)}</p>
<nav class="menu"><ul>{cols}<li>{_a(site, chrome.login, "写文章")}</li></ul></nav></header>
<div class="content-area">{content}</div>
<div class="widget-area">
<section class="widget"><h3>最新文章</h3>{hot}</section>
<section class="widget"><h3>作者</h3>{_ul(site, chrome.authors)}</section>
<section class="widget"><h3>标签云</h3><div class="tagcloud">{cloud}</div></section>
<section class="widget"><h3>文章归档</h3>{_ul(site, chrome.months)}</section>{_more(site, ctx)}
</div>
<footer class="site-info"><ul>{friends}</ul>{" ".join(_a(site, u, x) for u, x in chrome.footer)} {_copy(site, year)} · Powered by WordPress</footer>
</body></html>
"""
    # govb
    bar = "".join(f"<li>{_a(site, url, label)}</li>" for url, label, _ in chrome.sections)
    return f"""<!DOCTYPE html>
<html>{head}
<body>
<div class="gov-top"><span>{_e(site.name)}</span><a href="javascript:;">无障碍浏览</a><a href="javascript:;">长者模式</a>{_a(site, chrome.login, "政务服务登录")}</div>
<div class="gov-banner"><h1>{_e(site.name)}</h1></div>
<div class="gov-nav"><ul><li>{_a(site, site.home, "首页")}</li>{bar}</ul></div>
{f'<div class="gov-loc">当前位置：{crumb}</div>' if crumb else ""}
<div class="gov-main">{content}</div>
<div class="gov-side"><div class="gov-box"><h3>热点关注</h3>{hot}</div>{_more(site, ctx)}</div>
<div class="gov-foot"><div class="gov-links">政府网站：<ul>{friends}</ul></div>
<p>{" | ".join(_a(site, u, x) for u, x in chrome.footer)}</p><p>主办单位：{_e(site.name)}办公室 &nbsp; 网站标识码：{site.extra.get("idcode", "")}</p>
<p>{_e(site.icp)} &nbsp; <a href="http://www.beian.gov.cn/" rel="nofollow">公安机关备案号 00000000000001</a></p></div>
</body></html>
"""


# --------------------------------------------------------------------------- articles


def render_article(a: Article, site: Site, chrome: Chrome, ctx: PageContext, *, url: str,
                   section_url: str, label: str, author: str = "",
                   author_url: str = "", tags: Sequence[Link] = (),
                   amp_url: str = "") -> str:  # fmt: skip
    """An article page of a family-b site."""
    t = site.template
    d = a.published
    head = article_head(a, site, ctx, label, url=url, author=author, tags=[x for _, x in tags])
    paras = "\n".join(f"<p>{_e(p)}</p>" for p in a.paragraphs)
    src = _e(a.source or site.name)
    related = _ul(site, ctx.related, cut=t == "stream")
    crumbs = [(site.home, "首页"), (section_url, label)]
    amp = _a(site, amp_url, "轻量版") if amp_url else ""
    if t == "cards":
        content = f"""<article class="story"><h1 class="story-title">{_e(a.title)}</h1>
<div class="byline"><time>{d.year}/{d.month}/{d.day} 07:30</time> {src} {_e(author)} {amp}</div>
<div class="story-body">{paras}</div>{_orig(site, ctx)}{_attach(site, ctx)}
<div class="reactions"><button>赞</button><button>收藏</button><a href="javascript:;">分享</a></div>
<section class="more-cards"><h3>猜你喜欢</h3>{related}</section></article>"""
    elif t == "stream":
        content = f"""<div class="detail"><h1>{_e(a.title)}</h1>
<div class="meta">{src} · {d.month}月{d.day}日 {amp}</div>
<div class="rich-text">{paras}</div>{_orig(site, ctx)}{_attach(site, ctx)}
<div class="recommend"><div class="panel-hd">相关推荐</div>{related}</div></div>"""
        crumbs = []
    elif t == "paper":
        content = f"""<table class="article" width="100%"><tr><td class="banci">{_e(label)}</td></tr>
<tr><td><h2>{_e(a.title)}</h2></td></tr><tr><td class="riqi">{d.year}年{d.month}月{d.day}日 第{(d.day % 16) + 1}版 {_e(author)} {amp}</td></tr>
<tr><td class="zhengwen" id="ozoom">{paras}</td></tr></table>{_orig(site, ctx)}{_attach(site, ctx)}
<div class="xgwz"><b>相关新闻：</b>{related}</div>"""
    elif t == "blog":
        tag_html = " ".join(_a(site, u, x, ' rel="tag"') for u, x in tags)
        by = _a(site, author_url, author) if author_url else _e(author)
        content = f"""<article class="post type-post"><header class="entry-header"><h1 class="entry-title">{_e(a.title)}</h1>
<div class="entry-meta">作者：{by} · 发布于 {d.isoformat()} · 来源 {src} {amp}</div></header>
<div class="entry-content">{paras}</div>{_orig(site, ctx)}{_attach(site, ctx)}
<footer class="entry-footer"><span class="tags-links">标签：{tag_html}</span></footer>
<nav class="related-posts"><h3>相关文章</h3>{related}</nav>
<div class="comments"><h3>发表评论</h3><p>登录后才能评论</p></div></article>"""
    else:  # govb
        content = f"""<div class="art-box"><div class="art-title">{_e(a.title)}</div>
<div class="art-info">发布日期：{d.isoformat()} &nbsp; 来源：{src} &nbsp; 【字体：<a href="javascript:;">大</a> <a href="javascript:;">中</a> <a href="javascript:;">小</a>】 {amp}</div>
<div class="art-con" id="zoom">{paras}</div>{_orig(site, ctx)}{_attach(site, ctx, "相关附件")}
<div class="art-xg"><h4>相关信息</h4>{related}</div>
<div class="art-tools"><a href="javascript:window.print()">打印本页</a> <a href="javascript:window.close()">关闭窗口</a></div></div>"""
    return frame(site, chrome, ctx, head, content, current=section_url, crumbs=crumbs, year=d.year)


def render_amp(a: Article, site: Site, charset: str | None) -> str:
    """The light ("AMP") copy of an article, under /amp/ — disallowed by robots.txt."""
    ctx = PageContext(charset=charset)
    paras = "".join(f"<p>{_e(p)}</p>" for p in a.paragraphs)
    return (
        f"<!doctype html><html amp>{plain_head(site, ctx, a.title)}<body><h1>{_e(a.title)}</h1>"
        f"{paras}<p>{_copy(site, a.published.year)}</p></body></html>\n"
    )


# --------------------------------------------------------------------------- list-like pages


def render_list(site: Site, chrome: Chrome, ctx: PageContext, *, title: str, heading: str,
                items: Sequence[tuple[str, str, date]], url: str,
                next_url: str | None = None, prev_url: str | None = None,
                pages: Sequence[Link] = (), lead: str = "") -> str:  # fmt: skip
    """A list page (section, tag, author, monthly archive, notices): ``items`` are
    (url, title, date). Cards and stream continue with a "加载更多" link (``next_url``),
    the others with numbered ``pages`` and 上一页/下一页."""
    t = site.template
    if t == "cards":
        cards = "".join(
            f'<div class="card"><a class="thumb" href="{_e(href(site, u))}"><img src="/img/c{i % 9}.jpg" alt=""></a>'
            f'<a class="card-title" href="{_e(href(site, u))}"><h3>{_e(x)}</h3></a>'
            f'<span class="card-date">{dd.month}-{dd.day}</span></div>'
            for i, (u, x, dd) in enumerate(items)
        )
        more = (
            f'<a class="load-more" href="?{_e(next_url.split("?", 1)[1])}">加载更多</a>'
            if next_url and "?" in next_url
            else (
                f'<a class="load-more" href="{_e(href(site, next_url))}">加载更多</a>'
                if next_url
                else '<span class="no-more">没有更多了</span>'
            )
        )
        body = f'<h2 class="channel-name">{_e(heading)}</h2>{lead}<div class="card-grid">{cards}</div>{more}'
    elif t == "stream":
        feed = "".join(
            f'<div class="feed-item"><a href="{_e(href(site, u))}" title="{_e(x)}">{_e(short(x))}</a>'
            f'<span class="ago">{dd.month}月{dd.day}日</span></div>'
            for u, x, dd in items
        )
        more = (
            f'<div class="feed-more">{_a(site, next_url, "点击加载更多")}</div>' if next_url else ""
        )
        body = f'<div class="feed-hd">{_e(heading)}</div>{lead}<div class="feed">{feed}</div>{more}'
    else:
        rows = "".join(
            f'<li>{_a(site, u, x)}<span class="dt">{dd.isoformat()}</span></li>'
            for u, x, dd in items
        )
        nav = []
        if prev_url:
            nav.append(_a(site, prev_url, "上一页"))
        nav += [_a(site, u, x) if u != url else f"<b>{_e(x)}</b>" for u, x in pages]
        if next_url:
            nav.append(_a(site, next_url, "下一页"))
        cls = {"paper": "paper-list", "blog": "archive-list", "govb": "gov-list"}[t]
        body = (
            f'<h2 class="list-hd">{_e(heading)}</h2>{lead}<ul class="{cls}">{rows}</ul>'
            f'<div class="pager">{" ".join(nav)}</div>'
        )
    return frame(site, chrome, ctx, plain_head(site, ctx, title), body, current=url,
                 crumbs=[(site.home, "首页")])  # fmt: skip


def render_home(site: Site, chrome: Chrome, ctx: PageContext, *, top: Sequence[Link],
                blocks: Sequence[tuple[str, str, Sequence[Link]]]) -> str:  # fmt: skip
    """The home page: top stories and a block per section (``blocks``: url, label, links)."""
    t = site.template
    parts = [f'<div class="headline">{_ul(site, top, cut=t == "stream")}</div>']
    for url, label, links in blocks:
        parts.append(
            f'<section class="home-block"><h2>{_a(site, url, label)}</h2>'
            f'{_ul(site, links, cut=t == "stream")}<div class="more">{_a(site, url, "查看更多")}</div></section>'
        )
    title = {"cards": "推荐", "stream": site.name, "paper": "首页", "blog": site.slogan}.get(
        t, site.name + "门户网站"
    )
    return frame(site, chrome, ctx, plain_head(site, ctx, title), "".join(parts))


def render_notice(site: Site, chrome: Chrome, ctx: PageContext, *, title: str, body: Sequence[str],
                  day: date, issuer: str, section_url: str, label: str) -> str:  # fmt: skip
    """A government notice (通知/公告): short administrative text, attachments."""
    paras = "".join(f"<p>{_e(p)}</p>" for p in body)
    content = f"""<div class="art-box notice"><div class="art-title">{_e(title)}</div>
<div class="art-info">发布日期：{day.isoformat()} &nbsp; 发布机构：{_e(issuer)}</div>
<div class="art-con" id="zoom">{paras}<p class="sign">{_e(issuer)}</p><p class="sign">{day.year}年{day.month}月{day.day}日</p></div>
{_attach(site, ctx, "附件")}</div>"""
    head = (
        f"<head>{_charset_meta(site, ctx.charset)}<title>{_e(title)}</title>"
        f'<meta name="SiteName" content="{_e(site.name)}"><meta name="ColumnName" content="{_e(label)}">'
        f'<meta name="ArticleTitle" content="{_e(title)}"><meta name="PubDate" content="{day.isoformat()} 10:00"></head>'
    )
    return frame(site, chrome, ctx, head, content, current=section_url,
                 crumbs=[(site.home, "首页"), (section_url, label)], year=day.year)  # fmt: skip


def render_simple(site: Site, chrome: Chrome, ctx: PageContext, title: str, body_html: str) -> str:
    """A small page in the site frame (login, error page, real-page index)."""
    return frame(site, chrome, ctx, plain_head(site, ctx, title), body_html)


def render_feed(site: Site, chrome: Chrome, ctx: PageContext, *, page: int,
                items: Sequence[Link], next_url: str) -> str:  # fmt: skip
    """The endless "more" feed (the trap of family b): page N shows what is left of the
    site's articles and always links page N + 1."""
    rows = _ul(site, items, "feed-list") if items else '<p class="empty">暂无更多内容</p>'
    body = f'<h2>最新动态 · 第{page}页</h2>{rows}<div class="feed-next">{_a(site, next_url, "加载更多")}</div>'
    return frame(site, chrome, ctx, plain_head(site, ctx, f"最新动态 第{page}页"), body)
