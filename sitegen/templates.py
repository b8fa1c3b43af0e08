"""Site templates of the local test web: four page layouts with real boilerplate.

Each template renders the same page kinds (article, section list, home, calendar day, print
version, simple pages) with a different HTML structure, class names, title separator, nav
bar, breadcrumbs, ad blocks, share/print/comment widgets, "相关阅读"/"热点推荐" lists and a
footer with the copyright and ICP lines — the boilerplate that a crawler's relevance engine
and the boilerplate cleaner meet on real Chinese portals.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import date
from html import escape

from sitegen.articles import Article

Link = tuple[str, str]  # (url, anchor text)

TEMPLATES = ("classic", "modern", "table", "gov")


@dataclass
class Site:
    """One host of the web: its name, template, sections and URL style."""

    host: str
    name: str
    kind: str  # "portal" | "domain"
    template: str  # one of TEMPLATES
    sections: dict[str, tuple[str, str]]  # slug -> (label, category)
    url_style: str  # "dirs" | "gov" | "dash"
    sep: str  # title separator: "_", "-", "|", "—"
    icp: str
    slogan: str = ""
    charset: str = "utf-8"  # the encoding of most pages of this site
    meta_style: str = "html5"  # "html5" (<meta charset>) or "http-equiv"
    extra: dict = field(default_factory=dict)

    @property
    def home(self) -> str:
        return f"http://{self.host}/"

    @property
    def categories(self) -> list[str]:
        seen: list[str] = []
        for _, cat in self.sections.values():
            if cat not in seen:
                seen.append(cat)
        return seen

    def url(self, path: str) -> str:
        return f"http://{self.host}{path}"

    def to_json(self) -> dict:
        d = asdict(self)
        d["sections"] = {k: list(v) for k, v in self.sections.items()}
        return d

    @classmethod
    def from_json(cls, d: dict) -> Site:
        d = dict(d)
        d["sections"] = {k: tuple(v) for k, v in d["sections"].items()}
        return cls(**d)


@dataclass
class PageContext:
    """Links that surround a page's own content (all URLs absolute)."""

    charset: str | None = "utf-8"  # declared in the page (None: no declaration)
    related: Sequence[Link] = ()  # 相关阅读
    hot: Sequence[Link] = ()  # 热点推荐 (mixed categories)
    friends: Sequence[Link] = ()  # 友情链接 (other sites)
    attachments: Sequence[Link] = ()  # PDF/ZIP/JPG links
    extra: Sequence[Link] = ()  # stray links (old URLs that redirect, dead links)
    original: Link | None = None  # for a reprint: (url, site name) of the original
    print_url: str | None = None
    calendar_url: str | None = None
    ad_id: int = 0
    #: False: an article's <title> and keywords name neither its section nor its category
    #: (only the body's breadcrumb does), so relevance cannot read the label off the head
    section_in_head: bool = True


def _e(text: str) -> str:
    return escape(text, quote=True)


def _meta_charset(site: Site, charset: str | None) -> str:
    if not charset:
        return ""
    if site.meta_style == "http-equiv":
        return f'<meta http-equiv="Content-Type" content="text/html; charset={charset}">'
    return f'<meta charset="{charset}">'


def _links(items: Sequence[Link], *, li_class: str = "", limit: int | None = None) -> str:
    cls = f' class="{li_class}"' if li_class else ""
    return "".join(
        f'<li{cls}><a href="{_e(u)}" target="_blank">{_e(t)}</a></li>' for u, t in items[:limit]
    )


def _nav(site: Site, current: str | None = None) -> str:
    out = [f'<a href="{site.home}">首页</a>']
    for slug, (label, _) in site.sections.items():
        cur = ' class="cur"' if slug == current else ""
        out.append(f'<a href="{site.url(f"/{slug}/")}"{cur}>{_e(label)}</a>')
    return "".join(out)


def _ad(site: Site, n: int, size: str = "960x90") -> str:
    return (
        f'<div class="ad ad-{size}"><a href="http://adclick.union-ads.cn/c?s={site.host}&amp;p={n}"'
        f' rel="nofollow" target="_blank"><img src="http://img.union-ads.cn/b/{n % 17}.gif"'
        f' width="{size.split("x")[0]}" height="{size.split("x")[1]}" alt="广告"></a>'
        f'<span class="ad-tag">广告</span></div>'
    )


def _paras(article: Article) -> str:
    return "\n".join(f"<p>{_e(p)}</p>" for p in article.paragraphs)


def _attach(ctx: PageContext) -> str:
    if not ctx.attachments:
        return ""
    items = "".join(f'<li><a href="{_e(u)}">{_e(t)}</a></li>' for u, t in ctx.attachments)
    return f'<div class="attachments"><h4>附件下载</h4><ul>{items}</ul></div>'


def _extra(ctx: PageContext) -> str:
    if not ctx.extra:
        return ""
    return '<div class="more-links"><ul>' + _links(ctx.extra) + "</ul></div>"


def _original(ctx: PageContext) -> str:
    if not ctx.original:
        return ""
    url, name = ctx.original
    return f'<p class="orig-link">原文链接：<a href="{_e(url)}">{_e(name)}</a></p>'


def _copyright(site: Site, year: int = 2019) -> str:
    return (
        f"Copyright &copy; 2003-{year} {_e(site.name)} 版权所有 未经书面授权禁止转载"
        f' <a href="http://www.miibeian.gov.cn/" rel="nofollow">{_e(site.icp)}</a>'
    )


def _keywords(article: Article, section: str) -> str:
    """Editor-style tags: the section, the category and the title's key words (jieba TF-IDF);
    only the title's words when ``section`` is empty."""
    import jieba
    import jieba.analyse

    jieba.setLogLevel(60)
    title = article.title.removeprefix("转载：").removeprefix("[转载]")
    tags = jieba.analyse.extract_tags(title, topK=4)
    head = [section, article.category] if section else []
    return ",".join(dict.fromkeys([*head, *tags]))


def page_title(article_title: str, section: str, site: Site) -> str:
    """``{title}{sep}{section}{sep}{site name}`` as the <title> of an article page
    (``{title}{sep}{site name}`` when ``section`` is empty)."""
    sep = {"_": "_", "-": " - ", "|": " | ", "—": "—"}.get(site.sep, site.sep)
    return sep.join(x for x in (article_title, section, site.name) if x)


# --------------------------------------------------------------------------- article pages


def render_article(
    article: Article, site: Site, ctx: PageContext, *, section: str, author: str = ""
) -> str:
    """Render an article page of ``site`` (``section`` is the section slug)."""
    label = site.sections[section][0]
    renderer = _ARTICLE[site.template]
    return renderer(article, site, ctx, section, label, author)


def _article_head(a: Article, site: Site, ctx: PageContext, label: str, extra: str = "") -> str:
    """An article page's <head>: title with section and site name, the lead as description,
    keywords; the section is left out when ``ctx.section_in_head`` is off."""
    shown = label if ctx.section_in_head else ""
    return _head(site, ctx, page_title(a.title, shown, site), a.lead, _keywords(a, shown), extra)


def _head(
    site: Site, ctx: PageContext, title: str, desc: str, keywords: str, extra: str = ""
) -> str:
    return (
        f"<head>{_meta_charset(site, ctx.charset)}<title>{_e(title)}</title>"
        f'<meta name="keywords" content="{_e(keywords)}">'
        f'<meta name="description" content="{_e(desc)}">{extra}'
        f'<link rel="stylesheet" href="/css/{site.template}.css"></head>'
    )


def _art_classic(a: Article, site: Site, ctx: PageContext, sec: str, label: str, author: str):
    d = a.published
    head = _article_head(
        a,
        site,
        ctx,
        label,
        f'<meta name="publishdate" content="{d.isoformat()}">'
        f'<meta property="article:published_time" content="{d.isoformat()}T08:00:00+08:00">',
    )
    src = _e(a.source or site.name)
    return f"""<!DOCTYPE html>
<html lang="zh-CN">{head}
<body>
<div id="top-bar"><span>{_e(site.name)}</span> <a href="{site.home}">设为首页</a> <a href="{site.url("/admin/login.html")}">登录</a></div>
<div id="header"><div class="logo"><a href="{site.home}">{_e(site.name)}</a></div><div class="slogan">{_e(site.slogan)}</div>{_ad(site, ctx.ad_id, "728x90")}</div>
<div id="nav" class="nav">{_nav(site, sec)}</div>
<div class="crumbs">您当前的位置：<a href="{site.home}">首页</a> &gt; <a href="{site.url(f"/{sec}/")}">{_e(label)}</a> &gt; 正文</div>
<div id="main" class="clearfix">
<div class="main-left">
<h1 id="artical_topic">{_e(a.title)}</h1>
<div class="artInfo"><span class="time">{d.year}年{d.month:02d}月{d.day:02d}日 08:{(d.day * 7) % 60:02d}</span> <span class="source">来源：{src}</span> {f'<span class="author">作者：{_e(author)}</span>' if author else ""}
<a href="{_e(ctx.calendar_url or "#")}">当日新闻</a></div>
<div class="share"><span>分享到：</span><a href="javascript:void(0)" class="weibo">新浪微博</a><a href="javascript:void(0)" class="wechat">微信</a><a href="javascript:void(0)" class="qzone">QQ空间</a></div>
<div id="artibody" class="article-content">
{_paras(a)}
</div>
{_original(ctx)}{_attach(ctx)}
<div class="tools"><a href="{_e(ctx.print_url or "#")}" target="_blank">【打印本页】</a> <a href="#comments">【我要评论】</a> <a href="javascript:window.close()">【关闭窗口】</a></div>
<div class="related"><h3>相关阅读</h3><ul>{_links(ctx.related)}</ul></div>
{_ad(site, ctx.ad_id + 1, "640x60")}
<div id="comments" class="comment-box"><h3>网友评论</h3><p>已有0条评论，<a href="#comments">我要发言</a></p><textarea></textarea><button>发表评论</button></div>
</div>
<div class="main-right">
<div class="hot"><h3>热点推荐</h3><ol>{_links(ctx.hot)}</ol></div>
{_ad(site, ctx.ad_id + 2, "300x250")}
{_extra(ctx)}
</div>
</div>
<div id="footer"><div class="friend-links">友情链接：{"".join(f'<a href="{_e(u)}">{_e(t)}</a> ' for u, t in ctx.friends)}</div>
<p><a href="{site.home}">关于我们</a> | <a href="{site.home}">联系方式</a> | <a href="{site.home}">广告服务</a> | <a href="{site.url("/admin/login.html")}">管理登录</a></p>
<p>{_copyright(site, d.year)}</p></div>
</body></html>
"""


def _art_modern(a: Article, site: Site, ctx: PageContext, sec: str, label: str, author: str):
    d = a.published
    head = _article_head(
        a,
        site,
        ctx,
        label,
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta property="og:title" content="{_e(a.title)}"><meta property="og:type" content="article">'
        f'<meta name="pubdate" content="{d.isoformat()} 10:{(d.day * 3) % 60:02d}:00">',
    )
    body_paras = "\n".join(f'<p class="para">{_e(p)}</p>' for p in a.paragraphs)
    return f"""<!doctype html>
<html>{head}
<body class="page-article">
<header class="site-header"><div class="container"><a class="brand" href="{site.home}">{_e(site.name)}</a>
<form class="search" action="{site.url("/search/")}"><input name="q" placeholder="搜索新闻"></form></div>
<nav class="main-nav"><div class="container">{_nav(site, sec)}</div></nav></header>
<main class="container layout">
<ol class="breadcrumb"><li><a href="{site.home}">{_e(site.name)}</a></li><li><a href="{site.url(f"/{sec}/")}">{_e(label)}</a></li><li class="active">正文</li></ol>
<article class="article">
<h1 class="article-title">{_e(a.title)}</h1>
<div class="article-meta"><time datetime="{d.isoformat()}">{d.isoformat()} 10:{(d.day * 3) % 60:02d}</time><span class="article-source">{_e(a.source or site.name)}</span>{f'<span class="article-author">{_e(author)}</span>' if author else ""}</div>
<section class="article-body">
{body_paras}
</section>
{_original(ctx)}{_attach(ctx)}
<div class="article-actions"><button class="like">点赞</button><a class="share-wechat" href="javascript:;">分享到微信</a><a class="share-weibo" href="javascript:;">分享到微博</a><a class="print" href="{_e(ctx.print_url or "#")}">打印</a><a href="{_e(ctx.calendar_url or "#")}">往日回顾</a></div>
<p class="statement">声明：本文由{_e(site.name)}编辑整理，转载请注明出处。</p>
</article>
<aside class="sidebar">
{_ad(site, ctx.ad_id, "300x250")}
<section class="widget hot-news"><h2 class="widget-title">热点推荐</h2><ul>{_links(ctx.hot, li_class="hot-item")}</ul></section>
<section class="widget related-news"><h2 class="widget-title">相关阅读</h2><ul>{_links(ctx.related)}</ul></section>
{_extra(ctx)}
</aside>
</main>
<footer class="site-footer"><div class="container">
<nav class="footer-links"><a href="{site.home}">关于我们</a><a href="{site.home}">招聘信息</a><a href="{site.home}">联系我们</a><a href="{site.url("/admin/")}">后台</a></nav>
<div class="partners">合作伙伴：{"".join(f'<a href="{_e(u)}">{_e(t)}</a>' for u, t in ctx.friends)}</div>
<p class="copyright">{_copyright(site, d.year)}</p><p>违法和不良信息举报电话：010-12345678</p></div></footer>
</body></html>
"""


def _art_table(a: Article, site: Site, ctx: PageContext, sec: str, label: str, author: str):
    d = a.published
    head = _article_head(a, site, ctx, label)
    paras = "".join(f"<p>&nbsp;&nbsp;&nbsp;&nbsp;{_e(p)}</p>\n" for p in a.paragraphs)
    nav = " | ".join(
        f'<a href="{site.url(f"/{s}/")}" class="navlink">{_e(lbl)}</a>'
        for s, (lbl, _) in site.sections.items()
    )
    return f"""<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01 Transitional//EN">
<html>{head}
<body bgcolor="#FFFFFF" topmargin="0">
<table width="950" border="0" align="center" cellpadding="0" cellspacing="0" class="top">
<tr><td width="200"><a href="{site.home}"><b>{_e(site.name)}</b></a></td><td align="right">{_ad(site, ctx.ad_id, "728x90")}</td></tr>
<tr><td colspan="2" class="menu" bgcolor="#003399"><a href="{site.home}" class="navlink">首页</a> | {nav}</td></tr></table>
<table width="950" border="0" align="center"><tr><td class="position">当前位置：<a href="{site.home}">{_e(site.name)}</a> &gt;&gt; <a href="{site.url(f"/{sec}/")}">{_e(label)}</a> &gt;&gt; 正文</td></tr></table>
<table width="950" border="0" align="center" cellpadding="0" cellspacing="0">
<tr><td width="650" valign="top">
<table width="100%"><tr><td align="center" class="bt"><font size="5"><b>{_e(a.title)}</b></font></td></tr>
<tr><td align="center" class="info">{d.year}-{d.month:02d}-{d.day:02d} &nbsp; 来源：{_e(a.source or site.name)} &nbsp; {f"作者：{_e(author)}" if author else ""} &nbsp; <a href="{_e(ctx.calendar_url or "#")}">当日新闻</a></td></tr>
<tr><td class="zw" id="zoom">
{paras}</td></tr></table>
{_original(ctx)}{_attach(ctx)}
<table width="100%"><tr><td align="right">[<a href="{_e(ctx.print_url or "#")}">打印</a>] [<a href="javascript:window.close()">关闭</a>] [<a href="#top">返回顶部</a>]</td></tr></table>
<table width="100%" class="xgyd"><tr><td class="tt">相关阅读：</td></tr><tr><td><ul>{_links(ctx.related)}</ul></td></tr></table>
</td>
<td width="20"></td>
<td width="280" valign="top">
<table width="100%" class="phb"><tr><td class="tt">热点推荐</td></tr><tr><td><ul>{_links(ctx.hot)}</ul></td></tr></table>
{_ad(site, ctx.ad_id + 1, "250x250")}
{_extra(ctx)}
</td></tr></table>
<table width="950" align="center" class="bottom"><tr><td align="center">
友情链接：{" ".join(f'<a href="{_e(u)}">{_e(t)}</a>' for u, t in ctx.friends)}<br>
<a href="{site.home}">关于本站</a> - <a href="{site.home}">网站声明</a> - <a href="{site.url("/admin/login.html")}">管理</a><br>
{_copyright(site, d.year)}</td></tr></table>
</body></html>
"""


def _art_gov(a: Article, site: Site, ctx: PageContext, sec: str, label: str, author: str):
    d = a.published
    head = _article_head(
        a,
        site,
        ctx,
        label,
        f'<meta name="ArticleTitle" content="{_e(a.title)}">'
        f'<meta name="PubDate" content="{d.isoformat()} 09:30">'
        f'<meta name="ContentSource" content="{_e(a.source or site.name)}">'
        f'<meta name="ColumnName" content="{_e(label)}">',
    )
    return f"""<!DOCTYPE html>
<html>{head}
<body>
<div class="wrap">
<div class="top-bar"><span class="date">{d.year}年{d.month}月{d.day}日</span><a href="{site.home}">网站首页</a><a href="{site.url("/admin/login.html")}">用户登录</a></div>
<div class="banner"><h2>{_e(site.name)}</h2><p>{_e(site.slogan)}</p></div>
<div class="channel-nav"><ul>{"".join(f"<li>{x}</li>" for x in _nav(site, sec).replace("</a>", "</a>|").split("|") if x)}</ul></div>
<div class="location">位置：<a href="{site.home}">首页</a> » <a href="{site.url(f"/{sec}/")}">{_e(label)}</a></div>
<div class="con-main">
<div class="post">
<div class="post-title"><h1>{_e(a.title)}</h1></div>
<div class="post-info">发布时间：{d.isoformat()} 09:30 &nbsp; 信息来源：{_e(a.source or site.name)} &nbsp; 字号：[<a href="javascript:;">大</a> <a href="javascript:;">中</a> <a href="javascript:;">小</a>]</div>
<div class="post-content TRS_Editor">
{_paras(a)}
</div>
{_original(ctx)}{_attach(ctx)}
<div class="post-tools"><a href="{_e(ctx.print_url or "#")}">打印本页</a> <a href="{_e(ctx.calendar_url or "#")}">历史上的今天</a> <a href="javascript:;">收藏</a></div>
<div class="relnews"><div class="hd">相关阅读</div><ul>{_links(ctx.related)}</ul></div>
</div>
<div class="side">
<div class="box"><div class="hd">热点推荐</div><ul>{_links(ctx.hot)}</ul></div>
{_ad(site, ctx.ad_id, "270x200")}
{_extra(ctx)}
</div>
</div>
<div class="footer"><div class="links">相关网站：{" ".join(f'<a href="{_e(u)}">{_e(t)}</a>' for u, t in ctx.friends)}</div>
<p>主办：{_e(site.name)}编辑部 &nbsp; 地址：北京市东城区某某路8号 &nbsp; 邮编：100010</p>
<p>{_copyright(site, d.year)}</p></div>
</div>
</body></html>
"""


_ARTICLE = {
    "classic": _art_classic,
    "modern": _art_modern,
    "table": _art_table,
    "gov": _art_gov,
}


# --------------------------------------------------------------------------- list-like pages


def _frame(
    site: Site,
    ctx: PageContext,
    *,
    title: str,
    desc: str,
    keywords: str,
    current: str | None,
    crumbs: str,
    content: str,
    year: int = 2019,
) -> str:
    """The page frame of a template around list-like ``content`` (home, list, calendar)."""
    friends = " ".join(f'<a href="{_e(u)}">{_e(t)}</a>' for u, t in ctx.friends)
    hot = f"<h3>热点推荐</h3><ul>{_links(ctx.hot)}</ul>"
    head = _head(site, ctx, title, desc, keywords)
    t = site.template
    if t == "classic":
        return f"""<!DOCTYPE html>
<html lang="zh-CN">{head}<body>
<div id="header"><div class="logo"><a href="{site.home}">{_e(site.name)}</a></div>{_ad(site, ctx.ad_id, "728x90")}</div>
<div id="nav" class="nav">{_nav(site, current)}</div>
<div class="crumbs">{crumbs}</div>
<div id="main" class="clearfix"><div class="main-left">{content}</div>
<div class="main-right"><div class="hot">{hot}</div>{_extra(ctx)}</div></div>
<div id="footer"><div class="friend-links">友情链接：{friends}</div><p><a href="{site.url("/admin/login.html")}">管理登录</a></p><p>{_copyright(site, year)}</p></div>
</body></html>
"""
    if t == "modern":
        return f"""<!doctype html>
<html>{head}<body>
<header class="site-header"><div class="container"><a class="brand" href="{site.home}">{_e(site.name)}</a></div>
<nav class="main-nav"><div class="container">{_nav(site, current)}</div></nav></header>
<main class="container layout"><ol class="breadcrumb">{crumbs}</ol>
<section class="feed">{content}</section>
<aside class="sidebar"><section class="widget hot-news">{hot}</section>{_ad(site, ctx.ad_id, "300x250")}{_extra(ctx)}</aside></main>
<footer class="site-footer"><div class="container"><div class="partners">合作伙伴：{friends}</div><a href="{site.url("/admin/")}">后台</a><p class="copyright">{_copyright(site, year)}</p></div></footer>
</body></html>
"""
    if t == "table":
        nav = " | ".join(
            f'<a href="{site.url(f"/{s}/")}" class="navlink">{_e(lbl)}</a>'
            for s, (lbl, _) in site.sections.items()
        )
        return f"""<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01 Transitional//EN">
<html>{head}<body>
<table width="950" align="center"><tr><td><a href="{site.home}"><b>{_e(site.name)}</b></a></td><td>{_ad(site, ctx.ad_id, "728x90")}</td></tr>
<tr><td colspan="2" class="menu"><a href="{site.home}" class="navlink">首页</a> | {nav}</td></tr></table>
<table width="950" align="center"><tr><td class="position">{crumbs}</td></tr></table>
<table width="950" align="center"><tr><td width="650" valign="top">{content}</td><td width="280" valign="top" class="phb">{hot}{_extra(ctx)}</td></tr></table>
<table width="950" align="center" class="bottom"><tr><td align="center">友情链接：{friends}<br><a href="{site.url("/admin/login.html")}">管理</a><br>{_copyright(site, year)}</td></tr></table>
</body></html>
"""
    return f"""<!DOCTYPE html>
<html>{head}<body><div class="wrap">
<div class="banner"><h2>{_e(site.name)}</h2><p>{_e(site.slogan)}</p></div>
<div class="channel-nav"><ul><li>{"</li><li>".join(x for x in _nav(site, current).replace("</a>", "</a>|").split("|") if x)}</li></ul></div>
<div class="location">{crumbs}</div>
<div class="con-main"><div class="list-main">{content}</div><div class="side"><div class="box">{hot}</div>{_extra(ctx)}</div></div>
<div class="footer"><div class="links">相关网站：{friends}</div><p><a href="{site.url("/admin/login.html")}">用户登录</a></p><p>{_copyright(site, year)}</p></div>
</div></body></html>
"""


def _sep(site: Site) -> str:
    return {"_": "_", "-": " - ", "|": " | ", "—": "—"}.get(site.sep, site.sep)


def render_list(
    site: Site,
    section: str,
    items: Sequence[tuple[str, str, date]],
    ctx: PageContext,
    *,
    page: int,
    pages: int,
    page_url,
) -> str:
    """A section list page: article titles as anchors with dates, and pagination (下一页).

    ``items`` are (url, title, date); ``page_url(n)`` gives the URL of page ``n`` (1-based).
    """
    label = site.sections[section][0]
    rows = "".join(
        f'<li><a href="{_e(u)}" target="_blank">{_e(t)}</a><span class="date">{d.isoformat()}</span></li>'
        for u, t, d in items
    )
    nav = []
    if page > 1:
        nav.append(f'<a href="{page_url(1)}">首页</a><a href="{page_url(page - 1)}">上一页</a>')
    for n in range(1, pages + 1):
        nav.append(
            f'<span class="current">{n}</span>' if n == page else f'<a href="{page_url(n)}">{n}</a>'
        )
    if page < pages:
        nav.append(
            f'<a href="{page_url(page + 1)}" class="next">下一页</a><a href="{page_url(pages)}">尾页</a>'
        )
    content = (
        f'<div class="list-title"><h2>{_e(label)}</h2></div><ul class="news-list">{rows}</ul>'
        f'<div class="pagination">{"".join(nav)}</div>'
    )
    suffix = f"第{page}页{_sep(site)}" if page > 1 else ""
    crumbs = f'<a href="{site.home}">首页</a> &gt; {_e(label)}'
    desc = f"{site.name}{label}频道，提供最新{label}新闻、{label}资讯。"
    return _frame(
        site,
        ctx,
        title=f"{label}{_sep(site)}{suffix}{site.name}",
        desc=desc,
        keywords=f"{label},{label}新闻,{site.name}",
        current=section,
        crumbs=crumbs,
        content=content,
    )


def render_home(
    site: Site,
    blocks: Sequence[tuple[str, str, Sequence[Link]]],
    top: Sequence[Link],
    ctx: PageContext,
) -> str:
    """The home page: top stories of all sections, then one block per section.

    ``blocks`` are (section slug, section label, links).
    """
    top_html = f'<div class="focus"><h2>头条新闻</h2><ul class="top-news">{_links(top)}</ul></div>'
    parts = [top_html]
    for slug, label, links in blocks:
        parts.append(
            f'<div class="block block-{slug}"><h3><a href="{site.url(f"/{slug}/")}">{_e(label)}</a>'
            f'<a class="more" href="{site.url(f"/{slug}/")}">更多&gt;&gt;</a></h3><ul>{_links(links)}</ul></div>'
        )
    labels = "、".join(lbl for lbl, _ in site.sections.values())
    return _frame(
        site,
        ctx,
        title=f"{site.name}{_sep(site)}{site.slogan}" if site.slogan else site.name,
        desc=f"{site.name}是综合性新闻网站，提供{labels}等资讯。",
        keywords=",".join([site.name, *[lbl for lbl, _ in site.sections.values()]]),
        current=None,
        crumbs=f'<a href="{site.home}">首页</a>',
        content="".join(parts),
    )


#: the fixed introduction of a path calendar's day pages (``build_web(path_calendar=True)``):
#: every day's page has the same text under its own date heading
CALENDAR_INTRO = (
    "新闻回顾栏目按日期汇集本站发布的时政新闻、政府工作会议和中央政策解读等报道。"
    "读者可以通过前一天、后一天的链接浏览往日新闻，也可以返回首页查看最新报道。"
)


def calendar_url(day: date, in_path: bool = False) -> str:
    """The path of the calendar trap's page of ``day``: ``/calendar/?d=2019-05-12``, or
    ``/calendar/2019/05/12/`` with ``in_path`` (a path calendar)."""
    if in_path:
        return f"/calendar/{day.year}/{day.month:02d}/{day.day:02d}/"
    return f"/calendar/?d={day.isoformat()}"


def render_calendar(
    site: Site,
    day: date,
    items: Sequence[Link],
    ctx: PageContext,
    *,
    prev_url: str,
    next_url: str,
    intro: str = "",
) -> str:
    """A calendar day page (the URL trap): that day's articles and prev/next-day links,
    after ``intro`` (a paragraph) when given."""
    rows = _links(items) or "<li>当日暂无新闻</li>"
    lead = f"<p>{_e(intro)}</p>" if intro else ""
    content = (
        f'<div class="calendar"><h2>{day.year}年{day.month}月{day.day}日 新闻回顾</h2>{lead}'
        f'<ul class="news-list">{rows}</ul><div class="day-nav"><a href="{_e(prev_url)}">&lt; 前一天</a>'
        f' <a href="{_e(next_url)}">后一天 &gt;</a></div></div>'
    )
    return _frame(
        site,
        ctx,
        title=f"{day.isoformat()}新闻回顾{_sep(site)}{site.name}",
        desc=f"{site.name}{day.year}年{day.month}月{day.day}日新闻回顾",
        keywords=f"新闻回顾,{site.name}",
        current=None,
        crumbs=f'<a href="{site.home}">首页</a> &gt; 新闻回顾',
        content=content,
        year=day.year,
    )


def render_print(article: Article, site: Site, charset: str | None) -> str:
    """The printer-friendly version of an article (under /print/, disallowed by robots.txt)."""
    ctx = PageContext(charset=charset)
    head = _head(site, ctx, f"{article.title}{_sep(site)}打印版", article.lead, article.category)
    return (
        f'<!DOCTYPE html><html>{head}<body onload="window.print()"><h1>{_e(article.title)}</h1>'
        f"<p>{article.published.isoformat()} {_e(site.name)}</p>{_paras(article)}"
        f"<p>{_copyright(site, article.published.year)}</p></body></html>\n"
    )


def render_simple(site: Site, title: str, body_html: str, ctx: PageContext) -> str:
    """A small page in the site frame (login page, archive index, error page)."""
    return _frame(
        site,
        ctx,
        title=f"{title}{_sep(site)}{site.name}",
        desc=title,
        keywords=title,
        current=None,
        crumbs=f'<a href="{site.home}">首页</a> &gt; {_e(title)}',
        content=body_html,
    )
