"""Template family b of the local test web: other hosts, URL schemes, layouts and metadata.

``build_web(out_dir, family="b")`` calls :func:`build_web_b`. The web has the same hazards as
family a (reprints, hard negatives, GBK and wrongly declared pages, robots.txt, redirects,
dead links, attachments, a trap, real saved pages) and the same ground-truth format, so
``sitegen.build.topic_targets`` and the benchmarks work unchanged; everything a crawler
could have learnt from family a is different:

=========  =============================  ==========================================
template   article URLs                   lists
=========  =============================  ==========================================
cards      ``/article.php?id=123456``     card grid, "加载更多" → ``?page=2``
stream     ``/a/3f9a0c1b2d`` (a hash)     feed, ``/c/sz/more-2.html``
paper      ``/content/2019/0512/c123456.html``  ``/node_3.htm``, monthly archives (GBK)
blog       ``/posts/laozhou-123456/``     categories, authors, tags, months
govb       ``/art/2019/5/12/art_1201_123456.html``  ``/col/col1201/index.html?uid=4&pageNum=2``
=========  =============================  ==========================================

The government site (``govb``, the 时政 single-topic site) also has a 通知公告 column: short
administrative notices (放假安排, 招聘公告, 采购公告 …) with attachments served by
``/module/download/downfile.jsp?fileid=N``. They are not corpus articles: ``kind`` is
``notice`` and ``category`` is null (not a target of any topic).

Deterministic for a seed, like family a: every random choice comes from ``_rng(seed, ...)``.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from dataclasses import asdict
from datetime import date
from html import escape
from pathlib import Path
from urllib.parse import urlsplit

from sitegen import templates_b as tb
from sitegen.articles import CATEGORIES, Article, load_articles
from sitegen.build import (
    ANOMALIES,
    BINARY_TYPES,
    SCALES,
    Placed,
    _binary_bytes,
    _rng,
    _select,
    _Writer,
    commentary_as_copies,
    url_file,
)
from sitegen.reprint import add_commentary, cut_half, make_reprint
from sitegen.sites import _PINYIN
from sitegen.templates import PageContext, Site
from topicrawl.data import data_path
from topicrawl.errors import ConfigError

#: Family b's scale settings: family a's (``sitegen.build.SCALES``) with other list sizes and
#: the notices of the government site.
SCALES_B = {
    "small": {**SCALES["small"], "portals": 4, "page_size": 2, "real_pages": 4, "notices": 6},
    "large": {**SCALES["large"], "portals": 4, "page_size": 12, "notices": 30},
}
ROBOTS_B = "User-agent: *\nDisallow: /amp/\nDisallow: /user/\nDisallow: /api/\n"
DISALLOWED_PREFIXES_B = ("/amp/", "/user/", "/api/")
BINARY_TYPES_B = {
    **BINARY_TYPES,
    "doc": "application/msword",
    "xls": "application/vnd.ms-excel",
}
#: the GBK newspaper declares its charset in the HTTP header only (family a: meta only)
ENC_GBK_HEADER = {"body": "gbk", "meta": None, "http": "gbk"}
ENC_UTF8 = {"body": "utf-8", "meta": "utf-8", "http": "utf-8"}

# section labels of each portal template (never the bare category name on cards/paper/blog)
_LABELS = {
    "cards": dict(zip(CATEGORIES, ("体坛", "文娱", "家居", "楼市", "教育", "风尚", "国内", "电竞", "科技", "商业"), strict=True)),
    "stream": dict(zip(CATEGORIES, ("运动", "娱乐圈", "居家", "房产", "升学", "潮流", "时事", "游戏", "数码", "财经"), strict=True)),
    "paper": dict(zip(CATEGORIES, ("体育新闻", "文化娱乐", "生活家居", "地产", "教育周刊", "时尚生活", "要闻", "数字娱乐", "科技", "经济"), strict=True)),
    "blog": dict(zip(CATEGORIES, ("看球", "影视评论", "装修日记", "楼市观察", "教育杂谈", "穿搭", "时评", "游戏人生", "科技评论", "财经观察"), strict=True)),
}  # fmt: skip
_ABBR = dict(
    zip(CATEGORIES, ("ty", "yl", "jj", "fc", "jy", "ss", "sz", "yx", "kj", "cj"), strict=True)
)
BLOG_AUTHORS = (("laozhou", "老周"), ("xiaolin", "林小雨"), ("chenmo", "陈默"),
                ("wangjian", "王剑锋"), ("sunyi", "孙一"))  # fmt: skip
_DOMAIN_B = {
    "财经": ("www.caifu-zhiku.com", "财富智库", ["licai:理财", "hangqing:行情", "gongsi:公司"]),
    "体育": ("www.saishi-quanjing.com", "赛事全景", ["zhibo:赛况", "zhuanfang:专访", "shuju:数据"]),
    "科技": ("www.shuzi-xianfeng.net", "数字先锋", ["chanpin:产品", "qushi:趋势", "kepu:科普"]),
    "娱乐": ("www.xingguang-yule.cn", "星光娱乐", ["yingshi:影视", "yinyue:音乐", "zongyi:综艺"]),
    "教育": ("www.xuetang-zixun.cn", "学堂资讯", ["gaokao:高考", "kaoyan:考研", "jiazhang:家长"]),
    "房产": ("www.anju-loupan.cn", "安居楼盘", ["xinpan:新盘", "ershou:二手", "zhengce:政策"]),
    "家居": ("www.yijia-meiju.cn", "宜家美居", ["sheji:设计", "caigou:采购", "anli:案例"]),
    "时尚": ("www.chaoliu-fengshang.com", "潮流风尚", ["dapei:搭配", "hufu:护肤", "dapai:大牌"]),
    "游戏": ("www.wanjia-youxi.net", "玩家游戏", ["xinyou:新游", "pingce:评测", "saishi:赛事"]),
}


def portal_sites_b(categories: list[str]) -> list[Site]:
    """The four multi-category sites of family b (a blog among them)."""
    cats = [c for c in CATEGORIES if c in categories]
    return [
        Site(host="www.xinhuan-media.com", name="新寰传媒", kind="portal", template="cards",
             sections={str(101 + CATEGORIES.index(c)): (_LABELS["cards"][c], c) for c in cats},
             url_style="query", sep="|", icp="浙ICP备17040001号-2", slogan="看见更大的世界"),
        Site(host="m.qingyun-news.net", name="青云资讯", kind="portal", template="stream",
             sections={_ABBR[c]: (_LABELS["stream"][c], c) for c in cats},
             url_style="hash", sep="", icp="蜀ICP备18020002号",
             slogan="青云资讯，为你推荐有价值的新闻"),
        Site(host="www.beiyu-ribao.com", name="北域日报", kind="portal", template="paper",
             sections={str(3 + CATEGORIES.index(c)): (_LABELS["paper"][c], c) for c in cats},
             url_style="content", sep="-", icp="黑ICP备06000003号", slogan="北域日报电子版",
             charset="gbk"),
        Site(host="blog.mozhe-zhuanlan.cn", name="墨者专栏", kind="portal", template="blog",
             sections={_PINYIN[c]: (_LABELS["blog"][c], c) for c in cats},
             url_style="slug", sep="–", icp="京ICP备19000004号", slogan="独立作者的观点与故事"),
    ]  # fmt: skip


def domain_site_b(category: str) -> Site:
    """The single-topic site of ``category``: the government portal for 时政, else a
    stream-template special site."""
    if category == "时政":
        return Site(
            host="www.yunhe-xinqu.gov.cn",
            name="云河新区管理委员会",
            kind="domain",
            template="govb",
            sections={"col1201": ("政务动态", "时政"), "col1202": ("政策解读", "时政")},
            url_style="jcms",
            sep="",
            icp="滇ICP备05000005号",
            slogan="云河新区政府门户网站",
            extra={"idcode": "5300000047", "notices": ["col1203", "通知公告"]},
        )
    host, name, secs = _DOMAIN_B[category]
    return Site(
        host=host,
        name=name,
        kind="domain",
        template="stream",
        sections={s.split(":")[0]: (s.split(":")[1], category) for s in secs},
        url_style="hash",
        sep="",
        icp="苏ICP备16000006号",
        slogan=f"{name}：专注{category}资讯",
    )


def article_path_b(site: Site, section: str, day: date, num: int, author: str = "") -> str:
    """The path of an article of a family-b site."""
    style = site.url_style
    if style == "query":
        return f"/article.php?id={num}"
    if style == "hash":
        return "/a/" + hashlib.sha1(f"{site.host}:{num}".encode()).hexdigest()[:10]
    if style == "content":
        return f"/content/{day.year}/{day.month:02d}{day.day:02d}/c{num}.html"
    if style == "slug":
        return f"/posts/{author or 'guest'}-{num}/"
    return f"/art/{day.year}/{day.month}/{day.day}/art_{section[3:]}_{num}.html"


def list_path_b(site: Site, section: str, page: int) -> str:
    """The path of page ``page`` of a section list."""
    t = site.template
    if t == "cards":
        return f"/channel/{section}/" + (f"?page={page}" if page > 1 else "")
    if t == "stream":
        return f"/c/{section}/" + (f"more-{page}.html" if page > 1 else "")
    if t == "paper":
        return f"/node_{section}.htm" if page == 1 else f"/node_{section}_{page}.htm"
    if t == "blog":
        return f"/category/{section}/" + (f"page/{page}/" if page > 1 else "")
    return f"/col/{section}/index.html" + (f"?uid=4&pageNum={page}" if page > 1 else "")


def file_b(url: str) -> str:
    """The body file of a URL under ``sites/``; a URL with a query gets a file of its own
    (``host/_q/<path>/<hash of the query>``)."""
    parts = urlsplit(url)
    if not parts.query:
        return url_file(url)
    digest = hashlib.sha1(parts.query.encode()).hexdigest()[:12]
    return f"{parts.hostname}/_q{parts.path.rstrip('/')}/{digest}"


class _WriterB(_Writer):
    def body(self, url: str, data: bytes, content_type: str) -> None:
        rel = file_b(url)
        path = self.out / "sites" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self.responses[url] = {"status": 200, "content_type": content_type, "file": "sites/" + rel}


def _site_enc(site: Site) -> dict:
    return dict(ENC_GBK_HEADER) if site.charset == "gbk" else dict(ENC_UTF8)


def _ole_bytes(label: str) -> bytes:
    """A tiny file with the OLE2 signature of .doc/.xls files."""
    return b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 24 + label.encode("utf-8")[:64]


def _bytes_of(ext: str, label: str) -> bytes:
    return _ole_bytes(label) if ext in ("doc", "xls") else _binary_bytes(ext, label)


_NOTICE_SUBJECTS = (
    "做好2019年劳动节期间安全生产工作", "调整新区部分公交线路", "开展城乡环境卫生集中整治",
    "组织申报2019年度科技计划项目", "做好汛期防汛抗旱工作", "开展消防安全大检查",
    "2019年端午节放假安排", "开展2019年度企业年报公示", "规范新区道路占道施工管理",
    "做好2019年高温天气劳动保护工作", "开展农村饮用水安全排查", "启用新区政务服务中心新址",
)  # fmt: skip
_NOTICE_KINDS = (
    ("关于{s}的通知", "新区各部门、各街道办事处："),
    ("云河新区{org}2019年公开招聘工作人员公告", "根据工作需要，经研究决定，面向社会公开招聘工作人员。"),
    ("{org}{s}采购项目中标公告", "现将本项目中标结果公告如下："),
    ("关于{s}的公示", "现将有关情况予以公示，公示期为5个工作日。"),
)  # fmt: skip
_ORGS = ("社会事业局", "城市管理局", "经济发展局", "自然资源局", "应急管理局", "财政局")


def _notices(count: int, rng) -> list[tuple[str, list[str], date, str]]:
    """Administrative notices: (title, paragraphs, date, issuing office)."""
    out = []
    for k in range(count):
        fmt, opening = _NOTICE_KINDS[k % len(_NOTICE_KINDS)]
        subject = rng.choice(_NOTICE_SUBJECTS)
        org = rng.choice(_ORGS)
        title = fmt.format(s=subject.replace("2019年", ""), org=org)
        day = date(2019, rng.randint(1, 12), rng.randint(1, 28))
        body = [
            opening,
            f"为{subject}，根据上级有关文件要求，结合新区实际，现将有关事项{'通知' if '通知' in fmt else '公告'}如下：",
            f"一、时间安排：{day.month}月{day.day}日起，为期{rng.randint(5, 30)}天。",
            f"二、工作要求：各单位要高度重视，明确责任人，于{day.month}月{min(28, day.day + 5)}日前将有关材料报送{org}。",
            f"三、联系方式：{org}办公室，联系电话：0871-{rng.randint(60000000, 69999999)}。",
            "特此通知。" if "通知" in fmt else "特此公告。",
        ]
        out.append((title, body, day, f"云河新区{org}"))
    return out


def build_web_b(
    out_dir: Path,
    *,
    scale: str = "small",
    seed: int = 0,
    categories: list[str] | None = None,
    section_in_head: bool = True,
) -> dict:
    """Build a family-b web into ``out_dir``; returns the ground truth (the format of
    ``sitegen.build.build_web``; ``"family": "b"``)."""
    if scale not in SCALES_B:
        raise ConfigError(f"unknown scale {scale!r}: use one of {sorted(SCALES_B)}")
    conf = SCALES_B[scale]
    if categories and set(categories) - set(CATEGORIES):
        raise ConfigError(
            f"unknown categories {sorted(set(categories) - set(CATEGORIES))}: use {list(CATEGORIES)}"
        )
    cats = [c for c in CATEGORIES if categories is None or c in categories]
    out_dir = Path(out_dir)
    if (out_dir / "sites").exists():
        shutil.rmtree(out_dir / "sites")
    out_dir.mkdir(parents=True, exist_ok=True)

    # -- sites
    portals = portal_sites_b(cats)[: conf["portals"]]
    preferred = ["时政", "财经", "体育", "科技", *CATEGORIES]
    domain_cats = [c for c in dict.fromkeys(preferred) if c in cats][: conf["domains"]]
    domains = {c: domain_site_b(c) for c in domain_cats}
    sites = portals + list(domains.values())
    friends_all = [(s.home, s.name) for s in sites]
    blog = next((s for s in sites if s.template == "blog"), None)

    # -- place originals
    articles = load_articles(categories=cats)
    plan = _select(articles, conf, domain_cats, seed + 7919)  # another draw than family a
    num_rng = _rng(seed, "b", "nums")
    used: set[int] = set()

    def new_num() -> int:
        while True:
            n = num_rng.randrange(100000, 999999)
            if n not in used:
                used.add(n)
                return n

    author_rng = _rng(seed, "b", "authors")
    authors: dict[str, str] = {}  # url -> author slug (blog posts)

    def place(art: Article, site: Site, section: str, num: int) -> str:
        slug = author_rng.choice(BLOG_AUTHORS)[0] if site.template == "blog" else ""
        url = site.url(article_path_b(site, section, art.published, num, slug))
        if slug:
            authors[url] = slug
        return url

    placed: list[Placed] = []
    turn: dict[str, int] = {}
    for art, where in plan:
        if where == "domain":
            site = domains[art.category]
            k = turn.get(site.host, 0)
            turn[site.host] = k + 1
            section = list(site.sections)[k % len(site.sections)]
        else:
            k = turn.get(art.category, 0)
            turn[art.category] = k + 1
            site = portals[(k + seed) % len(portals)]
            section = next(s for s, (_, c) in site.sections.items() if c == art.category)
        num = new_num()
        placed.append(Placed(art, site, section, place(art, site, section, num), num, art.id))

    # -- reprints under the other templates
    dup_groups: dict[str, list[str]] = {}
    originals = list(placed)
    rep_rng = _rng(seed, "b", "reprints")
    for p in originals:
        if rep_rng.random() >= conf["reprint_share"]:
            continue
        copies = rep_rng.randint(1, conf["max_copies"])
        targets = [s for s in sites if s is not p.site and p.article.category in s.categories]
        targets.sort(key=lambda s: (s.kind != "domain", rep_rng.random()))
        group = f"g{len(dup_groups) + 1:04d}"
        p.dup_group = group
        dup_groups[group] = [p.url]
        for site in targets[:copies]:
            rep = make_reprint(p.article, rep_rng)
            secs = sorted(s for s, (_, c) in site.sections.items() if c == p.article.category)
            section = rep_rng.choice(secs)
            num = new_num()
            url = place(rep, site, section, num)
            placed.append(Placed(rep, site, section, url, num, p.article.id, group, p.url))
            dup_groups[group].append(url)

    # -- hard negatives
    near_misses: dict[str, str] = {}
    nm_rng = _rng(seed, "b", "near-miss")
    count = conf["near_misses"]
    if isinstance(count, float):
        count = max(2, int(len(originals) * count))
    for k, p in enumerate(nm_rng.sample(originals, min(2 * count, len(originals)))):
        how = "half" if k % 2 == 0 else "commentary"
        targets = sorted(
            (s for s in sites if s is not p.site and p.article.category in s.categories),
            key=lambda s: s.host,
        )
        if not targets:
            continue
        site = nm_rng.choice(targets)
        rep = make_reprint(p.article, nm_rng)
        if how == "half":
            art = cut_half(rep)
        else:
            others = [q.article.text for q in nm_rng.sample(originals, min(6, len(originals)))]
            art = add_commentary(rep, nm_rng, [t for t in others if t != p.article.text])
        section = nm_rng.choice(
            sorted(s for s, (_, c) in site.sections.items() if c == p.article.category)
        )
        num = new_num()
        url = place(art, site, section, num)
        placed.append(Placed(art, site, section, url, num, art.id, near_miss=how,
                             near_miss_of=p.url))  # fmt: skip
        near_misses[url] = p.url

    w = _WriterB(out_dir)
    gt_rng = _rng(seed, "b", "extras")

    # -- encoding anomalies on the UTF-8 sites
    utf8_pages = [p for p in placed if p.site.charset == "utf-8"]
    gt_rng.shuffle(utf8_pages)
    per_kind = 2 if conf["anomaly_share"] == 0 else max(2, int(len(placed) * conf["anomaly_share"]))
    i = 0
    for kind in ANOMALIES:
        for p in utf8_pages[i : i + per_kind]:
            p.anomaly = kind
        i += per_kind

    # -- redirects (short links 301, old CMS links 302), attachments
    redirects: list[tuple[str, Placed, int]] = []
    binaries: dict[str, tuple[str, str]] = {}  # url -> (extension, label)
    for p in placed:
        d = p.article.published
        r = gt_rng.random()
        if r < 0.08:
            redirects.append((p.site.url(f"/s/{p.num:x}"), p, 301))
        elif r < 0.12:
            redirects.append(
                (p.site.url(f"/index.php?m=content&c=index&a=show&id={p.num}"), p, 302)
            )
        r = gt_rng.random()
        if r < 0.06:
            aurl = p.site.url(f"/uploads/{d.year}/{d.month:02d}/{p.num}.pdf")
            p.attachments.append((aurl, f"{p.article.title[:10]}（PDF版）"))
        elif r < 0.10:
            p.attachments.append(
                (p.site.url(f"/uploads/{d.year}/{d.month:02d}/{p.num}.jpg"), "原图")
            )
        elif r < 0.12:
            p.attachments.append((p.site.url(f"/uploads/data/{p.num}.xls"), "数据表（Excel）"))
        for aurl, label in p.attachments:
            binaries[aurl] = (aurl.rsplit(".", 1)[1], f"{p.num} {label}")

    by_site: dict[str, list[Placed]] = {}
    for p in placed:
        by_site.setdefault(p.site.host, []).append(p)
    for ps in by_site.values():
        ps.sort(key=lambda p: (p.article.published, p.num), reverse=True)

    dead: list[tuple[str, Site]] = []
    for old, target, _ in redirects:
        host_pages = by_site[target.site.host]
        for q in gt_rng.sample(host_pages, min(2, len(host_pages))):
            q.extra.append((old, target.article.title))
    for site in sites:
        host_pages = by_site.get(site.host, [])
        for k in range(max(2, len(host_pages) // 25)):
            sec = gt_rng.choice(sorted(site.sections))
            day = date(2019, gt_rng.randint(1, 12), gt_rng.randint(1, 28))
            url = site.url(article_path_b(site, sec, day, new_num(), "guest"))
            dead.append((url, site))
            for q in gt_rng.sample(host_pages, min(2, len(host_pages))):
                q.extra.append((url, f"{site.sections[sec][0]}专题（{k + 1}）"))

    # -- government notices with attachments
    notices: list[tuple[str, str, list[str], date, str, list[tuple[str, str]]]] = []
    gov = next((s for s in sites if s.template == "govb"), None)
    fileid = 3000
    if gov is not None:
        col = gov.extra["notices"][0]
        for title, body, day, issuer in _notices(conf["notices"], _rng(seed, "b", "notices")):
            url = gov.url(f"/art/{day.year}/{day.month}/{day.day}/art_{col[3:]}_{new_num()}.html")
            files = []
            for ext, label in (("doc", "报名表"), ("pdf", "正文"), ("xls", "明细表"))[
                : 1 + len(notices) % 3
            ]:
                fileid += 1
                furl = gov.url(f"/module/download/downfile.jsp?classid=0&fileid={fileid}")
                files.append((furl, f"附件{len(files) + 1}：{title[:8]}{label}.{ext}"))
                binaries[furl] = (ext, f"{fileid} {label}")
            notices.append((url, title, body, day, issuer, files))
        notices.sort(key=lambda n: (n[3], n[0]), reverse=True)

    # -- site-wide navigation (chrome) and the extra list pages of each site
    size = conf["page_size"]
    lists: list[tuple[Site, str, str, list[tuple[str, str, date]], dict]] = []
    chromes: dict[str, tb.Chrome] = {}
    post_tags: dict[str, list[tuple[str, str]]] = {}
    for site in sites:
        ps = by_site.get(site.host, [])
        sections = []
        for sec, (label, _cat) in site.sections.items():
            heads = [(q.url, q.article.title) for q in ps if q.section == sec][:3]
            sections.append((site.url(list_path_b(site, sec, 1)), label, heads))
        if site.template == "govb":
            col, label = site.extra["notices"]
            sections.append((site.url(f"/col/{col}/index.html"), label, []))
        months = sorted({(q.article.published.year, q.article.published.month) for q in ps})
        month_links: list[tuple[str, str]] = []
        if site.template in ("paper", "blog"):
            for y, m in months:
                path = (
                    f"/content/{y}-{m:02d}/index.htm"
                    if site.template == "paper"
                    else f"/{y}/{m:02d}/"
                )
                month_links.append((site.url(path), f"{y}年{m}月"))
        chrome = tb.Chrome(
            sections=sections,
            footer=[(u, x) for u, x, _ in sections] + [(site.url("/about/"), "关于我们")]
            if site.template == "paper"
            else [(site.url("/about/"), "关于我们"), (site.url("/about/"), "联系我们")],
            months=month_links,
            login=site.url("/user/login"),
            feed=site.url("/feed/?page=1"),
        )
        if site is blog:
            chrome.authors = [(site.url(f"/author/{a}/"), n) for a, n in BLOG_AUTHORS]
            tag_posts: dict[str, list[Placed]] = {}
            for q in ps:
                for tag in _tags(q.article):
                    tag_posts.setdefault(tag, []).append(q)
            tag_ids = {t: k + 1 for k, t in enumerate(sorted(tag_posts))}
            for q in ps:
                post_tags[q.url] = [(site.url(f"/tag/{tag_ids[t]}/"), t) for t in _tags(q.article)]
            cloud = sorted(tag_posts, key=lambda t: (-len(tag_posts[t]), t))[:20]
            chrome.tags = [(site.url(f"/tag/{tag_ids[t]}/"), t) for t in cloud]
            for tag, qs in sorted(tag_posts.items()):
                lists.append(
                    (site, f"/tag/{tag_ids[tag]}/", f"标签：{tag}", _items(qs), {"list_of": "tag"})
                )
            for slug, name in BLOG_AUTHORS:
                qs = [q for q in ps if authors.get(q.url) == slug]
                lists.append(
                    (site, f"/author/{slug}/", f"{name}的文章", _items(qs), {"list_of": "author"})
                )
        for (y, m), (murl, label) in zip(months, month_links, strict=False):
            qs = [q for q in ps if (q.article.published.year, q.article.published.month) == (y, m)]
            lists.append(
                (site, urlsplit(murl).path, f"{label}归档", _items(qs), {"list_of": "month"})
            )
        chromes[site.host] = chrome

    # -- article pages and their light copies
    feed_index: dict[str, list[list[str]]] = {}
    for site in sites:
        ps = by_site.get(site.host, [])
        chrome = chromes[site.host]
        other_sites = [q for q in placed if q.site is not site]
        for p in ps:
            prng = _rng(seed, "b", "page", p.url)
            same = [q for q in ps if q is not p and q.article.category == p.article.category]
            diff = [q for q in ps if q.article.category != p.article.category]
            related = prng.sample(same, min(4, len(same))) + prng.sample(diff, min(2, len(diff)))
            hot = prng.sample([q for q in ps if q is not p], min(8, len(ps) - 1))
            hot += prng.sample(other_sites, min(2, len(other_sites)))
            enc = ANOMALIES[p.anomaly] if p.anomaly else _site_enc(site)
            amp = site.url(f"/amp/{p.num}.html")
            ctx = PageContext(
                charset=enc.get("meta"),
                related=[(q.url, q.article.title) for q in related],
                hot=[(q.url, q.article.title) for q in hot],
                friends=[f for f in friends_all if f[0] != site.home],
                attachments=p.attachments,
                extra=p.extra,
                original=(p.reprint_of, "原文") if p.reprint_of and prng.random() < 0.4 else None,
                ad_id=prng.randrange(1000),
                section_in_head=section_in_head,
            )
            slug = authors.get(p.url, "")
            author = dict(BLOG_AUTHORS).get(slug) or prng.choice(
                ("记者 赵宁", "本报记者 周舟", "实习生 吴桐", "")
            )
            html = tb.render_article(
                p.article, site, chrome, ctx, url=p.url,
                section_url=site.url(list_path_b(site, p.section, 1)),
                label=site.sections[p.section][0], author=author,
                author_url=site.url(f"/author/{slug}/") if slug else "",
                tags=post_tags.get(p.url, ()), amp_url=amp,
            )  # fmt: skip
            d = p.article.published
            w.html(p.url, site, "article", html, enc=enc, category=p.article.category,
                   dup_group=p.dup_group, article_id=p.original_id, title=p.article.title,
                   section=p.section, published=d.isoformat(), reprint_of=p.reprint_of,
                   near_miss=p.near_miss, near_miss_of=p.near_miss_of,
                   body=list(p.article.paragraphs))  # fmt: skip
            w.html(amp, site, "robots_disallowed", tb.render_amp(p.article, site, _site_enc(site)["meta"]),
                   enc=_site_enc(site), category=p.article.category, article_id=p.original_id,
                   title=p.article.title, print_of=p.url)  # fmt: skip
            feed_index.setdefault(site.host, []).append([p.url, p.article.title])
            for aurl, _ in p.attachments:
                ext, label = binaries[aurl]
                w.body(aurl, _bytes_of(ext, label), BINARY_TYPES_B[ext])
                w.page(aurl, site, "binary", content_type=BINARY_TYPES_B[ext], linked_from=p.url)

    # -- notices
    if gov is not None:
        enc = _site_enc(gov)
        col, label = gov.extra["notices"]
        col_url = gov.url(f"/col/{col}/index.html")
        for url, title, body, day, issuer, files in notices:
            ctx = PageContext(charset=enc["meta"], attachments=files,
                              friends=[f for f in friends_all if f[0] != gov.home])  # fmt: skip
            html = tb.render_notice(gov, chromes[gov.host], ctx, title=title, body=body, day=day,
                                    issuer=issuer, section_url=col_url, label=label)  # fmt: skip
            w.html(url, gov, "notice", html, enc=enc, title=title, published=day.isoformat(),
                   section=col)  # fmt: skip
            for furl, _ in files:
                ext, flabel = binaries[furl]
                w.body(furl, _bytes_of(ext, flabel), BINARY_TYPES_B[ext])
                w.page(furl, gov, "binary", content_type=BINARY_TYPES_B[ext], linked_from=url)
        lists.append((gov, f"/col/{col}/index.html", label,
                      [(u, t, d) for u, t, _, d, _, _ in notices], {"list_of": "notices"}))  # fmt: skip

    for old, target, status in redirects:
        w.responses[old] = {"status": status, "location": target.url}
        w.page(old, target.site, "redirect", status=status, location=target.url)
    for url, site in dead:
        w.page(url, site, "missing", status=404)

    # -- section lists (paginated), the extra lists, home pages, robots.txt, login pages
    for site in sites:
        ps = by_site.get(site.host, [])
        for sec, (label, cat) in site.sections.items():
            items = _items([q for q in ps if q.section == sec])
            _write_list(w, site, chromes[site.host], friends_all, seed, label, items, size,
                        lambda n, s=sec, site=site: site.url(list_path_b(site, s, n)),
                        section_category=cat, section=sec)  # fmt: skip
    for site, path, heading, items, fields in lists:
        if site.template == "govb":
            base = site.url(path)
            page_url = lambda n, b=base: b + (f"?uid=4&pageNum={n}" if n > 1 else "")  # noqa: E731
        elif site.template == "paper":
            base = site.url(path)
            page_url = lambda n, b=base: b if n == 1 else b.replace("index.htm", f"index_{n}.htm")  # noqa: E731
        else:
            base = site.url(path)
            page_url = lambda n, b=base: b if n == 1 else f"{b}page/{n}/"  # noqa: E731
        _write_list(w, site, chromes[site.host], friends_all, seed, heading, items, size,
                    page_url, section_category=None, **fields)  # fmt: skip

    for site in sites:
        ps = by_site.get(site.host, [])
        enc = _site_enc(site)
        chrome = chromes[site.host]
        srng = _rng(seed, "b", "home", site.host)
        blocks = [(u, x, [(q.url, q.article.title) for q in ps if q.section == sec][:5])
                  for (u, x, _), sec in zip(chrome.sections, site.sections, strict=False)]  # fmt: skip
        if site is gov:
            blocks.append((chrome.sections[-1][0], chrome.sections[-1][1],
                           [(n[0], n[1]) for n in notices[:6]]))  # fmt: skip
        top = []
        for cat in site.categories:
            top += [(q.url, q.article.title) for q in ps if q.article.category == cat][:1]
        pool = [(q.url, q.article.title) for q in ps]
        extra = [(site.url("/feed/?page=1"), "最新动态")]
        if site.template == "paper":
            extra.append((site.url("/oldsite/"), "旧版网页存档"))
        ctx = PageContext(charset=enc["meta"], hot=srng.sample(pool, min(10, len(pool))),
                          friends=[f for f in friends_all if f[0] != site.home], extra=extra,
                          ad_id=srng.randrange(1000))  # fmt: skip
        w.html(
            site.home,
            site,
            "home",
            tb.render_home(site, chrome, ctx, top=top, blocks=blocks),
            enc=enc,
        )
        rurl = site.url("/robots.txt")
        w.body(rurl, ROBOTS_B.encode("ascii"), "text/plain")
        w.page(rurl, site, "robots", encoding="ascii")
        ctx = PageContext(
            charset=enc["meta"], friends=[f for f in friends_all if f[0] != site.home]
        )
        form = ('<form method="post" action="/api/login"><input name="mobile" placeholder="手机号">'
                '<input name="code" placeholder="验证码"><button>登录</button></form>')  # fmt: skip
        w.html(site.url("/user/login"), site, "robots_disallowed",
               tb.render_simple(site, chrome, ctx, "用户登录", form), enc=enc)  # fmt: skip
        about = f'<div class="about"><p>{escape(site.name)}：{escape(site.slogan)}</p></div>'
        w.html(site.url("/about/"), site, "list", tb.render_simple(site, chrome, ctx, "关于我们", about),
               enc=enc, section_category=None, list_of="about")  # fmt: skip

    paper = next((s for s in sites if s.template == "paper"), None)
    if paper is not None:
        _add_real_pages_b(w, paper, chromes[paper.host], conf["real_pages"], friends_all)

    commentary_as_copies(w.pages, dup_groups, near_misses)
    traps = [s.url("/feed/") for s in sites]
    disallowed = sorted(u for u in w.pages if urlsplit(u).path.startswith(DISALLOWED_PREFIXES_B))
    truth = {
        "family": "b",
        "scale": scale,
        "seed": seed,
        "section_in_head": section_in_head,
        "sites": [
            {
                "host": s.host,
                "name": s.name,
                "kind": s.kind,
                "template": s.template,
                "categories": s.categories,
                "sections": {k: v[1] for k, v in s.sections.items()},
                "home": s.home,
                "charset": s.charset,
            }
            for s in sites
        ],  # fmt: skip
        "seeds": {
            "portal": [s.home for s in portals],
            "domain": [s.home for s in domains.values()],
        },
        "pages": dict(sorted(w.pages.items())),
        "dup_groups": dup_groups,
        "near_misses": near_misses,
        "traps": traps,
        "disallowed": disallowed,
    }
    meta = {
        "family": "b",
        "sites": [s.to_json() for s in sites],
        "chrome": {h: asdict(c) for h, c in chromes.items()},
        "feed": feed_index,
        "friends": friends_all,
        "calendar": {},
    }
    (out_dir / "ground_truth.json").write_text(
        json.dumps(truth, ensure_ascii=False, indent=1), "utf-8"
    )
    (out_dir / "responses.json").write_text(
        json.dumps(dict(sorted(w.responses.items())), ensure_ascii=False, indent=1), "utf-8"
    )
    (out_dir / "webmeta.json").write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
    return truth


def _items(qs: list[Placed]) -> list[tuple[str, str, date]]:
    return [(q.url, q.article.title, q.article.published) for q in qs]


def _tags(article: Article) -> list[str]:
    """A blog post's tags: the title's key words (jieba TF-IDF), at most 3."""
    import jieba
    import jieba.analyse

    jieba.setLogLevel(60)
    title = article.title.removeprefix("转载：").removeprefix("[转载]")
    return [t for t in jieba.analyse.extract_tags(title, topK=3) if len(t) > 1]


def _write_list(w: _WriterB, site: Site, chrome: tb.Chrome, friends_all, seed: int, heading: str,
                items: list, size: int, page_url, **fields) -> None:  # fmt: skip
    """Write every page of a paginated list of ``items`` (url, title, date)."""
    enc = _site_enc(site)
    pages = max(1, -(-len(items) // size))
    srng = _rng(seed, "b", "list", page_url(1))
    pool = [(u, t) for u, t, _ in items]
    for n in range(1, pages + 1):
        url = page_url(n)
        ctx = PageContext(charset=enc["meta"], hot=srng.sample(pool, min(6, len(pool))),
                          friends=[f for f in friends_all if f[0] != site.home],
                          ad_id=srng.randrange(1000))  # fmt: skip
        html = tb.render_list(
            site, chrome, ctx, title=heading if n == 1 else f"{heading} 第{n}页", heading=heading,
            items=items[(n - 1) * size : n * size], url=url,
            next_url=page_url(n + 1) if n < pages else None,
            prev_url=page_url(n - 1) if n > 1 else None,
            pages=[(page_url(k), str(k)) for k in range(1, pages + 1)] if pages > 1 else [],
        )  # fmt: skip
        w.html(url, site, "list", html, enc=enc, **fields)


def _add_real_pages_b(
    w: _WriterB, site: Site, chrome: tb.Chrome, limit: int | None, friends
) -> None:
    """Real saved news pages, served verbatim under ``/oldsite/<source>/<file>``."""
    root = data_path("html", "news_zh")
    files = sorted(root.rglob("*.html"))
    if limit is not None:
        files = sorted(files, key=lambda p: (p.stat().st_size, p.as_posix()))[:limit]
    links = []
    for f in files:
        rel_path = f.relative_to(root).as_posix()
        url = site.url(f"/oldsite/{rel_path}")
        data = f.read_bytes()
        try:
            data.decode("utf-8")
            true_enc = "utf-8"
        except UnicodeDecodeError:
            true_enc = "gb18030"
        head = data[:4096].decode("ascii", errors="ignore")
        m = re.search(r"charset=[\"']?([A-Za-z0-9_-]+)", head)
        w.body(url, data, f"text/html; charset={true_enc}")
        tm = re.search(r"<title[^>]*>(.*?)</title>", data.decode(true_enc, "replace"), re.S | re.I)
        title = tm.group(1).strip() if tm else None
        w.page(url, site, "real", encoding=true_enc, declared=true_enc, declared_http=true_enc,
               declared_meta=m.group(1).lower() if m else None, title=title)  # fmt: skip
        links.append((url, title or rel_path))
    enc = _site_enc(site)
    ctx = PageContext(charset=enc["meta"], friends=[f for f in friends if f[0] != site.home])
    body = (
        '<ul class="old">'
        + "".join(f'<li><a href="{escape(u)}">{escape(t)}</a></li>' for u, t in links)
        + "</ul>"
    )
    w.html(site.url("/oldsite/"), site, "list", tb.render_simple(site, chrome, ctx, "旧版网页存档", body),
           enc=enc, section_category=None, list_of="real")  # fmt: skip


def respond_dynamic(web, site: Site, path: str, query: str) -> tuple[int, dict[str, str], bytes]:
    """The server's answer for a family-b URL with no stored response: the endless feed
    (``/feed/?page=N``, the trap) or the site's 404 page. ``web`` is a ``server.TestWeb``."""
    from urllib.parse import parse_qs

    d = web.chrome.get(site.host, {})
    chrome = tb.Chrome(**{k: v for k, v in d.items() if k in tb.Chrome.__dataclass_fields__})
    enc = _site_enc(site)
    ctx = PageContext(charset=enc["meta"], friends=[f for f in web.friends if f[0] != site.home])
    headers = {"Content-Type": f"text/html; charset={enc['http']}"}
    if path == "/feed/":
        try:
            page = int(parse_qs(query).get("page", ["1"])[0])
        except ValueError:
            page = 0
        if page >= 1:
            items = [tuple(x) for x in web.feed.get(site.host, [])[(page - 1) * 10 : page * 10]]
            html = tb.render_feed(site, chrome, ctx, page=page, items=items,
                                  next_url=site.url(f"/feed/?page={page + 1}"))  # fmt: skip
            return 200, headers, html.encode(enc["body"], "xmlcharrefreplace")
    html = tb.render_simple(site, chrome, ctx, "404 页面未找到",
                            f'<div class="e404"><h2>抱歉，您访问的页面不存在</h2><p>'
                            f'<a href="{site.home}">返回首页</a></p></div>')  # fmt: skip
    return 404, headers, html.encode(enc["body"], "xmlcharrefreplace")
