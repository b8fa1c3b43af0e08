"""The hosts of the local test web. Every host name is made up (none is a real site)."""

from __future__ import annotations

import hashlib

from sitegen.articles import CATEGORIES, SECTION_SLUGS, Article
from sitegen.templates import PageContext, Site, render_article

_PINYIN = {
    "体育": "tiyu",
    "娱乐": "yule",
    "家居": "jiaju",
    "房产": "fangchan",
    "教育": "jiaoyu",
    "时尚": "shishang",
    "时政": "shizheng",
    "游戏": "youxi",
    "科技": "keji",
    "财经": "caijing",
}
_LABEL_2 = {
    "体育": "体育频道",
    "娱乐": "娱乐八卦",
    "家居": "家居装修",
    "房产": "房产楼市",
    "教育": "教育考试",
    "时尚": "时尚女性",
    "时政": "时政要闻",
    "游戏": "游戏动漫",
    "科技": "科技数码",
    "财经": "财经证券",
}
_SLUG_3 = {
    "体育": "sport",
    "娱乐": "yl",
    "家居": "jiaju",
    "房产": "estate",
    "教育": "education",
    "时尚": "style",
    "时政": "china",
    "游戏": "game",
    "科技": "it",
    "财经": "money",
}


def portal_sites(categories: list[str], *, count: int) -> list[Site]:
    """``count`` (3 or 4) portals with one section per category in ``categories``."""
    cats = [c for c in CATEGORIES if c in categories]
    portals = [
        Site(
            host="news.huaxia-daily.com.cn",
            name="华夏日报网",
            kind="portal",
            template="classic",
            sections={SECTION_SLUGS[c]: (c, c) for c in cats},
            url_style="dirs",
            sep="_",
            icp="京ICP证030173号",
            slogan="权威新闻 华夏视野",
        ),
        Site(
            host="www.dongfang-news.cn",
            name="东方新闻网",
            kind="portal",
            template="modern",
            sections={_PINYIN[c]: (_LABEL_2[c], c) for c in cats},
            url_style="dash",
            sep="-",
            icp="沪ICP备09012345号-1",
            slogan="东方视角 看懂中国",
        ),
        Site(
            host="www.jinghua-online.com",
            name="京华在线",
            kind="portal",
            template="table",
            sections={_SLUG_3[c]: (c + "新闻", c) for c in cats},
            url_style="gov",
            sep="|",
            icp="京ICP备05067890号",
            slogan="京华资讯 一网打尽",
            charset="gbk",
            meta_style="http-equiv",
        ),
        Site(
            host="news.nanling-wanbao.com.cn",
            name="南岭晚报网",
            kind="portal",
            template="modern",
            sections={SECTION_SLUGS[c]: (c, c) for c in cats},
            url_style="dirs",
            sep="—",
            icp="粤ICP备11034567号",
            slogan="岭南第一都市门户",
        ),
    ]
    return portals[:count]


_DOMAIN = {
    "时政": (
        "www.shizheng-guancha.org.cn",
        "时政观察网",
        ["yaowen:要闻", "guonei:国内", "guoji:国际", "pinglun:评论"],
    ),
    "体育": ("www.tiyu-zhoubao.com", "体育周报网", ["lanqiu:篮球", "zuqiu:足球", "zonghe:综合"]),
    "财经": (
        "www.caijing-kuaixun.com.cn",
        "财经快讯网",
        ["jijin:基金", "gushi:股市", "hongguan:宏观"],
    ),
    "科技": (
        "www.keji-qianyan.net",
        "科技前沿网",
        ["shuma:数码", "hulianwang:互联网", "pingce:评测"],
    ),
    "娱乐": (
        "www.yule-fengxiang.cn",
        "娱乐风向网",
        ["mingxing:明星", "dianying:电影", "dianshi:电视"],
    ),
    "教育": (
        "www.jiaoyu-zaixian.org.cn",
        "教育在线网",
        ["kaoshi:考试", "liuxue:留学", "xiaoyuan:校园"],
    ),
    "房产": ("www.fangchan-guancha.cn", "房产观察网", ["loushi:楼市", "zhengce:政策", "tudi:土地"]),
    "家居": (
        "www.jiaju-shenghuo.cn",
        "家居生活网",
        ["zhuangxiu:装修", "jiancai:建材", "fengshui:风水"],
    ),
    "时尚": (
        "www.shishang-zhoukan.com",
        "时尚周刊网",
        ["fushi:服饰", "meirong:美容", "jiepai:街拍"],
    ),
    "游戏": (
        "www.youxi-tiandi.net",
        "游戏天地网",
        ["wangyou:网游", "shouyou:手游", "gonglue:攻略"],
    ),
}
_DOMAIN_LOOK = [("gov", "gov", "—"), ("classic", "dirs", "_")]


def domain_site(category: str, index: int = 0) -> Site:
    """The single-topic site of ``category`` (``index`` varies its template)."""
    host, name, sections = _DOMAIN[category]
    template, style, sep = _DOMAIN_LOOK[index % len(_DOMAIN_LOOK)]
    return Site(
        host=host,
        name=name,
        kind="domain",
        template=template,
        sections={s.split(":")[0]: (s.split(":")[1], category) for s in sections},
        url_style=style,
        sep=sep,
        icp=f"京ICP备1{index}0{len(host)}2345号",
        slogan=f"专注{category}  深度报道",
    )


def all_sites() -> list[Site]:
    """The four portals (all categories) and the single-topic site of every category."""
    return portal_sites(list(CATEGORIES), count=4) + [
        domain_site(c, i) for i, c in enumerate(CATEGORIES)
    ]


def standalone_page(
    article: Article, site: Site | int, *, related: list[Article] | tuple[Article, ...] = ()
) -> str:
    """Render ``article`` as a page of ``site`` (a Site or an index into :func:`all_sites`
    among those that carry its category), outside any built web: the dedup benchmark's way to
    put an original and its reprint under different site templates.

    Links point at made-up URLs of that site; ``related`` fills the 相关阅读/热点推荐 lists.
    """
    if isinstance(site, int):
        fits = [s for s in all_sites() if article.category in s.categories]
        site = fits[site % len(fits)]
    sections = [s for s, (_, c) in site.sections.items() if c == article.category]
    if not sections:
        raise ValueError(f"{site.host} has no section for {article.category}")
    section = sections[0]
    num = 100000 + int(hashlib.sha1(article.id.encode()).hexdigest(), 16) % 900000
    links = [
        (site.url(f"/{section}/{a.published.isoformat()}/{100000 + i}.html"), a.title)
        for i, a in enumerate(related)
    ]
    d = article.published
    ctx = PageContext(
        charset="utf-8",
        related=links[:6],
        hot=links[6:14],
        friends=[(s.home, s.name) for s in all_sites()[:4] if s.host != site.host],
        print_url=site.url(f"/print/{num}.html"),
        calendar_url=site.url(f"/calendar/?d={d.isoformat()}"),
        ad_id=num % 1000,
    )
    return render_article(article, site, ctx, section=section)
