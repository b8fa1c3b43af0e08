"""Build the local test web: sites, pages, response metadata and the ground truth.

``build_web(out_dir)`` writes

* ``out_dir/sites/<host>/<path>`` — every static response body (bytes as served);
* ``out_dir/responses.json`` — per URL: status, Content-Type, redirect location, body file;
* ``out_dir/webmeta.json`` — what the server needs for dynamic pages (site definitions,
  the calendar trap's day index, friend links);
* ``out_dir/ground_truth.json`` — every URL with its site, kind, category, duplicate group,
  encoding (true and declared) and status; the duplicate groups, traps and disallowed URLs.

The build is deterministic for a seed: every random choice comes from a ``random.Random``
seeded by ``(seed, purpose)``.
"""

from __future__ import annotations

import io
import json
import random
import re
import shutil
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from html import escape, unescape
from pathlib import Path
from urllib.parse import urlsplit

from sitegen.articles import CATEGORIES, Article, load_articles
from sitegen.extras import (
    DOCX_TYPE,
    FEED_ITEMS,
    PDF_TYPE,
    atom_feed,
    docx_bytes,
    feed_links,
    gzipped,
    pdf_bytes,
    rss_feed,
    sitemap_index,
    sitemap_urlset,
)
from sitegen.reprint import add_commentary, cut_half, make_reprint
from sitegen.sites import domain_site, portal_sites
from sitegen.templates import (
    PageContext,
    Site,
    calendar_url,
    render_article,
    render_home,
    render_list,
    render_print,
    render_simple,
)
from topicrawl.data import data_path
from topicrawl.errors import ConfigError

SCALES = {
    # per_category: articles per category on the portals (None: all of them);
    # domain_own: articles per domain category owned by the domain site (a count for small,
    #   a share of the category for large); page_size: titles per section list page;
    # reprint_share: share of originals reprinted elsewhere, 1..max_copies copies each;
    # real_pages: real saved pages served (None: all); anomaly_share: pages per charset
    #   anomaly (0: two of each); near_misses: hard negatives of each kind (count or share).
    "small": dict(
        per_category=6,
        domain_own=6,
        portals=3,
        domains=1,
        page_size=3,
        reprint_share=0.35,
        max_copies=1,
        real_pages=6,
        anomaly_share=0.0,
        near_misses=2,
    ),
    "large": dict(
        per_category=None,
        domain_own=0.25,
        portals=4,
        domains=2,
        page_size=10,
        reprint_share=0.5,
        max_copies=3,
        real_pages=None,
        anomaly_share=0.02,
        near_misses=0.04,
    ),
}
FAMILIES = ("a", "b")  # template families: a (sitegen.templates), b (sitegen.templates_b)
ROBOTS = "User-agent: *\nDisallow: /admin/\nDisallow: /print/\nDisallow: /search/\n"
DISALLOWED_PREFIXES = ("/admin/", "/print/", "/search/")
AUTHORS = ("本报记者 李明", "记者 王芳", "实习生 张晨", "特约记者 陈刚", "通讯员 刘洁", "")


@dataclass
class Placed:
    """An article placed on a site: the page that will be written."""

    article: Article
    site: Site
    section: str
    url: str
    num: int
    original_id: str
    dup_group: str | None = None
    reprint_of: str | None = None
    anomaly: str | None = None
    # "half" (a hard negative of near_miss_of) | "commentary" (a duplicate of it since issue
    # 17: relabelled in the ground truth by ``commentary_as_copies``)
    near_miss: str | None = None
    near_miss_of: str | None = None
    attachments: list[tuple[str, str]] = field(default_factory=list)
    extra: list[tuple[str, str]] = field(default_factory=list)


def _rng(seed: int, *purpose: object) -> random.Random:
    return random.Random(f"{seed}:" + ":".join(str(p) for p in purpose))


def article_path(site: Site, section: str, day: date, num: int) -> str:
    if site.url_style == "dirs":
        return f"/{section}/{day.year}/{day.month:02d}/{day.day:02d}/{num}.html"
    if site.url_style == "dash":
        return f"/{section}/{day.isoformat()}/{num}.shtml"
    return f"/{section}/{day.year}{day.month:02d}/t{day.year}{day.month:02d}{day.day:02d}_{num}.htm"


def list_path(section: str, page: int) -> str:
    return f"/{section}/" if page == 1 else f"/{section}/index_{page}.html"


def url_file(url: str) -> str:
    """The body file of a URL under ``sites/``: ``host/path``, ``index.html`` for directories."""
    m = re.match(r"http://([^/]+)(/[^?#]*)", url)
    if not m:
        raise ValueError(f"not an http URL: {url}")
    host, path = m.groups()
    if path.endswith("/"):
        path += "index.html"
    return f"{host}{path}"


class _Writer:
    """Collects bodies, responses and ground truth entries."""

    def __init__(self, out_dir: Path):
        self.out = out_dir
        self.responses: dict[str, dict] = {}
        self.pages: dict[str, dict] = {}

    def body(self, url: str, data: bytes, content_type: str) -> None:
        rel = url_file(url)
        path = self.out / "sites" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self.responses[url] = {"status": 200, "content_type": content_type, "file": "sites/" + rel}

    def page(self, url: str, site: Site, kind: str, **fields) -> None:
        entry = {
            "host": site.host,
            "kind": kind,
            "category": None,
            "dup_group": None,
            "article_id": None,
            "encoding": None,
            "declared": None,
            "status": 200,
            "title": None,
        }
        entry.update(fields)
        self.pages[url] = entry

    def html(self, url: str, site: Site, kind: str, text: str, *, enc: dict, **fields) -> None:
        """Write an HTML page with the encoding spec ``enc`` (body/meta/http charsets)."""
        data = text.encode(enc["body"], errors="xmlcharrefreplace")
        if "title" not in fields:
            m = re.search(r"<title>(.*?)</title>", text)
            fields["title"] = unescape(m.group(1)) if m else None
        ctype = "text/html" + (f"; charset={enc['http']}" if enc.get("http") else "")
        self.body(url, data, ctype)
        declared = enc.get("http") or enc.get("meta")
        self.page(
            url,
            site,
            kind,
            encoding=enc["body"],
            declared=declared,
            declared_http=enc.get("http"),
            declared_meta=enc.get("meta"),
            **fields,
        )


# Encoding specs. body: true encoding; meta: <meta> charset; http: Content-Type charset.
ENC_UTF8 = {"body": "utf-8", "meta": "utf-8", "http": "utf-8"}
ENC_GBK_SITE = {"body": "gbk", "meta": "gb2312", "http": None}
ANOMALIES = {
    "gbk": {"body": "gbk", "meta": "gbk", "http": "gbk"},  # correct GBK on a UTF-8 site
    "wrong_http": {"body": "gbk", "meta": "gbk", "http": "utf-8"},  # header lies
    "wrong_http_gbk": {"body": "utf-8", "meta": "utf-8", "http": "gbk"},  # server default lies
    "wrong_meta": {"body": "utf-8", "meta": "gb2312", "http": None},  # meta lies
    "undeclared_gbk": {"body": "gbk", "meta": None, "http": None},
    "undeclared_utf8": {"body": "utf-8", "meta": None, "http": None},
}


def _site_enc(site: Site) -> dict:
    return dict(ENC_GBK_SITE) if site.charset == "gbk" else dict(ENC_UTF8)


def _binary_bytes(kind: str, label: str) -> bytes:
    if kind == "pdf":
        body = f"BT /F1 12 Tf 72 720 Td ({label}) Tj ET".encode("latin-1", "replace")
        return (
            b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
            b"2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n"
            b"3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]/Contents 4 0 R>>endobj\n"
            + f"4 0 obj<</Length {len(body)}>>stream\n".encode()
            + body
            + b"\nendstream endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n"
        )
    if kind == "jpg":
        return (
            b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
            + label.encode("utf-8")[:64]
            + b"\xff\xd9"
        )
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        info = zipfile.ZipInfo("readme.txt", date_time=(2019, 5, 12, 8, 0, 0))
        zf.writestr(info, f"{label}\n")
    return buf.getvalue()


BINARY_TYPES = {"pdf": "application/pdf", "jpg": "image/jpeg", "zip": "application/zip"}


def _select(articles: list[Article], scale: dict, domain_cats: list[str], seed: int):
    """Assign each chosen article to a home site kind: ('portal', i) or ('domain', cat)."""
    by_cat: dict[str, list[Article]] = {}
    for a in articles:
        by_cat.setdefault(a.category, []).append(a)
    plan: list[tuple[Article, str]] = []  # (article, "portal" | "domain")
    for cat, arts in by_cat.items():
        arts = list(arts)
        _rng(seed, "select", cat).shuffle(arts)
        per = scale["per_category"]
        if per is None:
            own = round(len(arts) * scale["domain_own"]) if cat in domain_cats else 0
            plan += [(a, "domain") for a in arts[:own]] + [(a, "portal") for a in arts[own:]]
        else:
            own = scale["domain_own"] if cat in domain_cats else 0
            plan += [(a, "portal") for a in arts[:per]]
            plan += [(a, "domain") for a in arts[per : per + own]]
    return plan


def build_web(
    out_dir: Path,
    *,
    scale: str = "small",
    seed: int = 0,
    categories: list[str] | None = None,
    section_in_head: bool = True,
    family: str = "a",
    discovery: bool = False,
    orphans: float = 0.0,
    documents: bool = False,
    path_calendar: bool = False,
) -> dict:
    """Build the test web into ``out_dir`` and return the ground truth (also written to JSON).

    ``scale`` is "small" (a few hundred pages, for tests) or "large" (all 598 articles,
    several thousand pages, for benchmarks); ``categories`` restricts the articles.
    ``section_in_head=False`` leaves the section and category names out of every article's
    <title> and keywords (a web where relevance cannot read the label off the page head).
    ``family`` "b" builds the other template family (``sitegen.family_b``: other hosts, URL
    schemes, layouts and head metadata), held out from choosing defaults.
    ``discovery``, ``orphans`` and ``documents`` add sitemaps and feeds, article pages that
    no page links to, and PDF/DOCX documents (``sitegen.extras``; family a only; off: the
    web is byte for byte the one without these options). ``path_calendar`` puts the
    calendar trap in the path (``/calendar/2019/05/12/``, :func:`calendar_url`) instead of the
    query string.
    """
    if family == "b":
        if discovery or orphans or documents or path_calendar:
            raise ConfigError(
                "sitemaps, feeds, orphans, documents and the path calendar exist in family a only"
            )
        from sitegen.family_b import build_web_b

        return build_web_b(
            out_dir, scale=scale, seed=seed, categories=categories, section_in_head=section_in_head
        )
    if family != "a":
        raise ConfigError(f"unknown template family {family!r}: use one of {list(FAMILIES)}")
    if scale not in SCALES:
        raise ConfigError(f"unknown scale {scale!r}: use one of {sorted(SCALES)}")
    conf = SCALES[scale]
    cats = [c for c in CATEGORIES if categories is None or c in categories]
    if categories and set(categories) - set(CATEGORIES):
        raise ConfigError(
            f"unknown categories {sorted(set(categories) - set(CATEGORIES))}: use {list(CATEGORIES)}"
        )
    out_dir = Path(out_dir)
    if (out_dir / "sites").exists():
        shutil.rmtree(out_dir / "sites")
    out_dir.mkdir(parents=True, exist_ok=True)

    # -- sites
    portals = portal_sites(cats, count=conf["portals"])
    preferred = ["时政", "体育", "财经", "科技"] + [c for c in CATEGORIES]
    domain_cats = [c for c in dict.fromkeys(preferred) if c in cats][: conf["domains"]]
    domains = {c: domain_site(c, i) for i, c in enumerate(domain_cats)}
    sites = portals + list(domains.values())
    friends_all = [(s.home, s.name) for s in sites]

    # -- place originals
    articles = load_articles(categories=cats)
    plan = _select(articles, conf, domain_cats, seed)
    num_rng = _rng(seed, "nums")
    used_nums: set[int] = set()

    def new_num() -> int:
        while True:
            n = num_rng.randrange(100000, 999999)
            if n not in used_nums:
                used_nums.add(n)
                return n

    placed: list[Placed] = []
    portal_turn: dict[str, int] = {}
    for art, where in plan:
        if where == "domain":
            site = domains[art.category]
            turn = portal_turn.get(site.host, 0)
            portal_turn[site.host] = turn + 1
            section = list(site.sections)[turn % len(site.sections)]
        else:
            turn = portal_turn.get(art.category, 0)
            portal_turn[art.category] = turn + 1
            site = portals[(turn + seed) % len(portals)]
            section = next(s for s, (_, c) in site.sections.items() if c == art.category)
        num = new_num()
        url = site.url(article_path(site, section, art.published, num))
        placed.append(Placed(art, site, section, url, num, art.id))

    # -- reprints
    dup_groups: dict[str, list[str]] = {}
    originals = list(placed)
    rep_rng = _rng(seed, "reprints")
    for p in originals:
        if rep_rng.random() >= conf["reprint_share"]:
            continue
        copies = rep_rng.randint(1, conf["max_copies"])
        targets = [s for s in sites if s is not p.site and p.article.category in s.categories]
        # single-topic sites pick up reprints of their topic first
        targets.sort(key=lambda s: (s.kind != "domain", rep_rng.random()))
        group = f"g{len(dup_groups) + 1:04d}"
        p.dup_group = group
        dup_groups[group] = [p.url]
        for site in targets[:copies]:
            rep = make_reprint(p.article, rep_rng)
            secs = [s for s, (_, c) in site.sections.items() if c == p.article.category]
            section = rep_rng.choice(sorted(secs))
            num = new_num()
            url = site.url(article_path(site, section, rep.published, num))
            q = Placed(rep, site, section, url, num, p.article.id, group, p.url)
            placed.append(q)
            dup_groups[group].append(url)

    # -- hard negatives: a reprint cut to its first half, a reprint with long commentary
    near_misses: dict[str, str] = {}
    nm_rng = _rng(seed, "near-miss")
    count = conf["near_misses"]
    if isinstance(count, float):
        count = max(2, int(len(originals) * count))
    chosen = nm_rng.sample(originals, min(2 * count, len(originals)))
    for k, p in enumerate(chosen):
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
        secs = sorted(s for s, (_, c) in site.sections.items() if c == p.article.category)
        num = new_num()
        url = site.url(article_path(site, nm_rng.choice(secs), art.published, num))
        q = Placed(art, site, secs[0], url, num, art.id, near_miss=how, near_miss_of=p.url)
        q.section = url.split("/")[3]
        placed.append(q)
        near_misses[url] = p.url

    # -- orphans: pages only sitemaps and feeds lead to; document-only articles
    orphan_urls: set[str] = set()
    if orphans > 0:
        pool = sorted(placed, key=lambda p: p.url)
        pick = _rng(seed, "orphans").sample(pool, round(len(pool) * min(orphans, 1.0)))
        orphan_urls = {p.url for p in pick}
    doc_only: list[tuple[Article, Site, str, int]] = []  # (article, site, format, num)
    if documents:
        used = {a.id for a, _ in plan}
        drng = _rng(seed, "documents")
        spare = [a for a in articles if a.id not in used]
        for site in sites:
            fits = [a for a in spare if a.category in site.categories]
            for k, art in enumerate(drng.sample(fits, min(3, len(fits)))):
                spare.remove(art)
                doc_only.append((art, site, "docx" if k == 2 else "pdf", new_num()))

    def linked(q: Placed) -> bool:
        return q.url not in orphan_urls

    w = _Writer(out_dir)
    gt_rng = _rng(seed, "extras")

    # -- encoding anomalies on UTF-8 sites (small: two of each; large: a share)
    utf8_pages = [p for p in placed if p.site.charset == "utf-8"]
    gt_rng.shuffle(utf8_pages)
    per_kind = 2 if conf["anomaly_share"] == 0 else max(2, int(len(placed) * conf["anomaly_share"]))
    i = 0
    for kind in ANOMALIES:
        for p in utf8_pages[i : i + per_kind]:
            p.anomaly = kind
        i += per_kind

    # -- redirects, dead links and binary attachments
    redirects: list[tuple[str, Placed, int]] = []
    for p in placed:
        r = gt_rng.random()
        d = p.article.published
        if r < 0.08:
            old = p.site.url(f"/html/{d.year}{d.month:02d}{d.day:02d}/{p.num}.html")
            redirects.append((old, p, 301))
        elif r < 0.12:
            old = p.site.url(f"/news.php?id={p.num}")
            redirects.append((old, p, 302))
        r = gt_rng.random()
        if r < 0.06:
            p.attachments.append(
                (p.site.url(f"/files/{d.year}/{p.num}.pdf"), f"{p.article.title[:12]}（全文PDF）")
            )
        elif r < 0.10:
            p.attachments.append(
                (p.site.url(f"/photo/{d.year}/{d.month:02d}/{p.num}.jpg"), "查看大图")
            )
        elif r < 0.12:
            p.attachments.append((p.site.url(f"/download/{p.num}.zip"), "相关数据下载（ZIP）"))

    by_site: dict[str, list[Placed]] = {}
    for p in placed:
        by_site.setdefault(p.site.host, []).append(p)
    for ps in by_site.values():
        ps.sort(key=lambda p: (p.article.published, p.num), reverse=True)

    # redirect and dead links appear in the "more" box of other pages of the same site
    dead: list[tuple[str, Site]] = []
    for old, target, _status in redirects:
        host_pages = by_site[target.site.host]
        for q in gt_rng.sample(host_pages, min(2, len(host_pages))):
            if linked(target):
                q.extra.append((old, target.article.title))
    for site in sites:
        host_pages = by_site.get(site.host, [])
        for k in range(max(2, len(host_pages) // 25)):
            sec = gt_rng.choice(sorted(site.sections))
            day = date(2019, gt_rng.randint(1, 12), gt_rng.randint(1, 28))
            url = site.url(article_path(site, sec, day, new_num()))
            dead.append((url, site))
            for q in gt_rng.sample(host_pages, min(2, len(host_pages))):
                q.extra.append((url, f"{site.sections[sec][0]}：专题报道（{k + 1}）"))

    # -- article pages
    cal_index: dict[str, dict[str, list[list[str]]]] = {}
    for site in sites:
        ps = by_site.get(site.host, [])
        other_sites = [q for q in placed if q.site is not site and linked(q)]
        for p in ps:
            prng = _rng(seed, "page", p.url)
            same = [q for q in ps if q is not p and q.article.category == p.article.category]
            same = [q for q in same if linked(q)]
            diff = [q for q in ps if q.article.category != p.article.category and linked(q)]
            related = prng.sample(same, min(4, len(same))) + prng.sample(diff, min(2, len(diff)))
            others = [q for q in ps if q is not p and linked(q)]
            hot = prng.sample(others, min(8, len(others)))
            hot += prng.sample(other_sites, min(2, len(other_sites)))
            d = p.article.published
            enc = ANOMALIES[p.anomaly] if p.anomaly else _site_enc(site)
            ctx = PageContext(
                charset=enc.get("meta"),
                related=[(q.url, q.article.title) for q in related],
                hot=[(q.url, q.article.title) for q in hot],
                friends=[f for f in friends_all if f[0] != site.home],
                attachments=p.attachments,
                extra=p.extra,
                original=(p.reprint_of, "查看原文")
                if p.reprint_of and prng.random() < 0.4 and p.reprint_of not in orphan_urls
                else None,
                print_url=site.url(f"/print/{p.num}.html"),
                calendar_url=site.url(calendar_url(d, path_calendar)),
                ad_id=prng.randrange(1000),
                section_in_head=section_in_head,
            )
            html = render_article(
                p.article, site, ctx, section=p.section, author=prng.choice(AUTHORS)
            )
            w.html(
                p.url,
                site,
                "article",
                html,
                enc=enc,
                category=p.article.category,
                dup_group=p.dup_group,
                article_id=p.original_id,
                title=p.article.title,
                section=p.section,
                published=d.isoformat(),
                reprint_of=p.reprint_of,
                near_miss=p.near_miss,
                near_miss_of=p.near_miss_of,
                body=list(p.article.paragraphs),
                **({"orphan": True} if p.url in orphan_urls else {}),
            )
            purl = site.url(f"/print/{p.num}.html")
            w.html(
                purl,
                site,
                "robots_disallowed",
                render_print(p.article, site, _site_enc(site)["meta"]),
                enc=_site_enc(site),
                category=p.article.category,
                article_id=p.original_id,
                title=p.article.title,
                print_of=p.url,
            )
            if linked(p):
                cal_index.setdefault(site.host, {}).setdefault(d.isoformat(), []).append(
                    [p.url, p.article.title]
                )
            for aurl, label in p.attachments:
                ext = aurl.rsplit(".", 1)[1]
                if documents and ext == "pdf":
                    _write_pdf_copy(w, p, aurl, dup_groups)
                    continue
                w.body(aurl, _binary_bytes(ext, f"{p.num} {label}"), BINARY_TYPES[ext])
                w.page(aurl, site, "binary", content_type=BINARY_TYPES[ext], linked_from=p.url)

    # -- redirects and dead links in the ground truth
    for old, target, status in redirects:
        w.responses[old] = {"status": status, "location": target.url}
        w.page(old, target.site, "redirect", status=status, location=target.url)
    for url, site in dead:
        w.page(url, site, "missing", status=404)

    # -- section lists, home pages, robots.txt, admin pages
    size = conf["page_size"]
    for site in sites:
        ps = by_site.get(site.host, [])
        enc = _site_enc(site)
        friends = [f for f in friends_all if f[0] != site.home]
        srng = _rng(seed, "site", site.host)
        hot_pool = [(q.url, q.article.title) for q in ps if linked(q)]
        for sec, (_label, cat) in site.sections.items():
            items = [(q.url, q.article.title, q.article.published) for q in ps
                     if q.section == sec and linked(q)]  # fmt: skip
            pages = max(1, -(-len(items) // size))
            for n in range(1, pages + 1):
                url = site.url(list_path(sec, n))
                ctx = PageContext(
                    charset=enc["meta"],
                    hot=srng.sample(hot_pool, min(8, len(hot_pool))),
                    friends=friends,
                    ad_id=srng.randrange(1000),
                )
                html = render_list(
                    site,
                    sec,
                    items[(n - 1) * size : n * size],
                    ctx,
                    page=n,
                    pages=pages,
                    page_url=lambda k, sec=sec, site=site: site.url(list_path(sec, k)),
                )
                w.html(
                    url,
                    site,
                    "list",
                    html,
                    enc=enc,
                    section_category=cat,
                    section=sec,
                )
        blocks = []
        for sec, (label, _) in site.sections.items():
            links = [(q.url, q.article.title) for q in ps if q.section == sec and linked(q)][:6]
            blocks.append((sec, label, links))
        top = []
        for cat in site.categories:
            top += [(q.url, q.article.title) for q in ps
                    if q.article.category == cat and linked(q)][:1]  # fmt: skip
        extra = [(site.url(calendar_url(date(2019, 5, 12), path_calendar)), "新闻回顾")]
        if site is portals[0]:
            extra.append((site.url("/archive/"), "资料库"))
        if any(s is site for _, s, _, _ in doc_only):
            extra.append((site.url("/files/"), "文件公告"))
        ctx = PageContext(
            charset=enc["meta"],
            hot=srng.sample(hot_pool, min(10, len(hot_pool))),
            friends=friends,
            extra=extra,
            ad_id=srng.randrange(1000),
        )
        home_html = render_home(site, blocks, top, ctx)
        if discovery:
            home_html = feed_links(home_html, [_feed_of(site)])
        w.html(site.home, site, "home", home_html, enc=enc)
        rurl = site.url("/robots.txt")
        robots = ROBOTS
        if discovery and site.kind == "portal":  # single-topic sites: /sitemap.xml unnamed
            robots += f"Sitemap: {site.url('/sitemap.xml')}\n"
        w.body(rurl, robots.encode("ascii"), "text/plain; charset=utf-8")
        w.page(rurl, site, "robots", encoding="ascii")
        for path, title in (("/admin/login.html", "管理登录"), ("/admin/", "管理后台")):
            ctx = PageContext(charset=enc["meta"], friends=friends)
            body = '<form method="post" action="/admin/login.do"><input name="user"><input type="password" name="pw"><button>登录</button></form>'
            w.html(
                site.url(path),
                site,
                "robots_disallowed",
                render_simple(site, title, body, ctx),
                enc=enc,
            )

    # -- real pages (served verbatim) on the first portal under /archive/
    _add_real_pages(w, portals[0], conf["real_pages"], friends_all)
    if doc_only:
        _add_documents(w, doc_only, friends_all)
    if discovery:
        _add_discovery(w, sites, by_site, gzip_host=portals[0].host)

    # -- ground truth
    commentary_as_copies(w.pages, dup_groups, near_misses)
    traps = [s.url("/calendar/") for s in sites]
    disallowed = sorted(u for u in w.pages if urlsplit(u).path.startswith(DISALLOWED_PREFIXES))
    truth = {
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
        ],
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
    if discovery or orphans or documents or path_calendar:  # else the truth stays as it was
        truth["options"] = {"discovery": discovery, "orphans": orphans, "documents": documents}
        if path_calendar:
            truth["options"]["path_calendar"] = True
        truth["orphans"] = sorted(orphan_urls)
    if discovery:
        truth["sitemaps"] = {s.host: s.url("/sitemap.xml") for s in sites}
        truth["feeds"] = {s.host: _feed_of(s)[0] for s in sites}
    meta = {
        "sites": [s.to_json() for s in sites],
        "calendar": cal_index,
        "friends": friends_all,
    }
    if path_calendar:
        meta["path_calendar"] = True
    (out_dir / "ground_truth.json").write_text(
        json.dumps(truth, ensure_ascii=False, indent=1), encoding="utf-8"
    )
    (out_dir / "responses.json").write_text(
        json.dumps(dict(sorted(w.responses.items())), ensure_ascii=False, indent=1),
        encoding="utf-8",
    )
    (out_dir / "webmeta.json").write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
    return truth


def commentary_as_copies(
    pages: dict[str, dict], dup_groups: dict[str, list[str]], near_misses: dict[str, str]
) -> None:
    """Relabel, in the ground truth only, each ``commentary`` page (a reprint followed by a
    long added commentary, :func:`sitegen.reprint.add_commentary`) as a duplicate of its
    source: issue 17, item 3 (a page that contains most of an accepted document is a
    duplicate). The page joins the source's duplicate group (a new ``c…`` group when the
    source had none) with ``reprint_of`` = the source and ``reprint_extras`` = "commentary",
    and leaves ``near_misses`` (which keeps the ``half`` hard negatives). Pages are unchanged.
    """
    for url, source in list(near_misses.items()):
        page = pages[url]
        if page.get("near_miss") != "commentary":
            continue
        group = pages[source].get("dup_group")
        if group is None:
            group = f"c{sum(g.startswith('c') for g in dup_groups) + 1:04d}"
            pages[source]["dup_group"] = group
            dup_groups[group] = [source]
        dup_groups[group].append(url)
        page.update(dup_group=group, reprint_of=source, near_miss=None, near_miss_of=None,
                    reprint_extras="commentary")  # fmt: skip
        del near_misses[url]


def topic_targets(truth: dict, category: str) -> set[str]:
    """The on-topic target URLs of ``category``: article pages (originals, reprints and near
    misses) and documents (PDF, DOCX; webs built with ``documents``) whose content is an
    article of that category."""
    return {
        url
        for url, page in truth["pages"].items()
        if page["kind"] in ("article", "document") and page["category"] == category
    }


def article_bodies(out_dir: Path, truth: dict) -> Iterator[tuple[str, dict, bytes, str | None]]:
    """The article pages of a built web in URL order, as a crawler would receive them:
    ``(url, ground-truth entry, body bytes, charset of the Content-Type header or None)``."""
    responses = json.loads((out_dir / "responses.json").read_text(encoding="utf-8"))
    for url, page in sorted(truth["pages"].items()):
        r = responses.get(url, {})
        if page["kind"] != "article" or "file" not in r:
            continue
        ctype = r.get("content_type", "")
        header = ctype.split("charset=", 1)[1].strip() if "charset=" in ctype else None
        yield url, page, (out_dir / r["file"]).read_bytes(), header


def _add_real_pages(w: _Writer, site: Site, limit: int | None, friends) -> None:
    """Serve real saved news pages verbatim under ``/archive/<source>/<file>``."""
    root = data_path("html", "news_zh")
    files = sorted(p for p in root.rglob("*.html"))
    if limit is not None:
        files = sorted(files, key=lambda p: p.stat().st_size)[:limit]
    links = []
    for f in files:
        rel = f.relative_to(root).as_posix()
        url = site.url(f"/archive/{rel}")
        data = f.read_bytes()
        try:
            data.decode("utf-8")
            true_enc = "utf-8"
        except UnicodeDecodeError:
            true_enc = "gb18030"
        head = data[:4096].decode("ascii", errors="ignore")
        m = re.search(r"charset=[\"']?([A-Za-z0-9_-]+)", head)
        meta = m.group(1).lower() if m else None
        w.body(url, data, f"text/html; charset={true_enc}")
        tm = re.search(r"<title[^>]*>(.*?)</title>", data.decode(true_enc, "replace"), re.S | re.I)
        title = tm.group(1).strip() if tm else None
        w.page(
            url,
            site,
            "real",
            encoding=true_enc,
            declared=true_enc,
            declared_http=true_enc,
            declared_meta=meta,
            title=title,
        )
        links.append((url, title or rel))
    body = (
        '<ul class="news-list">'
        + "".join(f'<li><a href="{escape(u)}">{escape(t)}</a></li>' for u, t in links)
        + "</ul>"
    )
    enc = _site_enc(site)
    ctx = PageContext(charset=enc["meta"], friends=[f for f in friends if f[0] != site.home])
    w.html(
        site.url("/archive/"),
        site,
        "list",
        render_simple(site, "资料库", body, ctx),
        enc=enc,
    )


def _feed_of(site: Site) -> tuple[str, str, str]:
    """The feed of a site: portals RSS 2.0, single-topic sites Atom."""
    if site.kind == "portal":
        return site.url("/rss.xml"), "application/rss+xml", f"{site.name} RSS"
    return site.url("/atom.xml"), "application/atom+xml", f"{site.name} Atom"


def _write_pdf_copy(w: _Writer, p: Placed, url: str, dup_groups: dict[str, list[str]]) -> None:
    """The PDF attachment of ``p`` as a real PDF of the article: a duplicate of the page."""
    if p.dup_group is None:
        p.dup_group = f"d{len(dup_groups) + 1:04d}"
        dup_groups[p.dup_group] = [p.url]
        w.pages[p.url]["dup_group"] = p.dup_group
    dup_groups[p.dup_group].append(url)
    w.body(url, pdf_bytes(p.article), PDF_TYPE)
    w.page(url, p.site, "document", format="pdf", content_type=PDF_TYPE,
           category=p.article.category, dup_group=p.dup_group, article_id=p.original_id,
           title=p.article.title, published=p.article.published.isoformat(),
           linked_from=p.url, **({"orphan": True} if w.pages[p.url].get("orphan") else {}))  # fmt: skip


def _add_documents(w: _Writer, doc_only: list, friends) -> None:
    """Articles published only as PDF or DOCX, listed on each site's ``/files/`` page."""
    by_site: dict[str, list] = {}
    for art, site, fmt, num in doc_only:
        url = site.url(f"/files/{art.published.year}/{num}.{fmt}")
        data, ctype = (pdf_bytes(art), PDF_TYPE) if fmt == "pdf" else (docx_bytes(art), DOCX_TYPE)
        w.body(url, data, ctype)
        w.page(url, site, "document", format=fmt, content_type=ctype, category=art.category,
               article_id=art.id, title=art.title, published=art.published.isoformat(),
               linked_from=site.url("/files/"))  # fmt: skip
        by_site.setdefault(site.host, []).append((site, url, f"{art.title}（{fmt.upper()}）"))
    for entries in by_site.values():
        site = entries[0][0]
        body = '<ul class="news-list">' + "".join(
            f'<li><a href="{escape(u)}">{escape(t)}</a></li>' for _, u, t in entries
        ) + "</ul>"
        enc = _site_enc(site)
        ctx = PageContext(charset=enc["meta"], friends=[f for f in friends if f[0] != site.home])
        w.html(site.url("/files/"), site, "list", render_simple(site, "文件公告", body, ctx), enc=enc)


def _add_discovery(w: _Writer, sites: list[Site], by_site: dict, *, gzip_host: str) -> None:
    """Per site: a sitemap index, one sitemap per section (gzipped on ``gzip_host``) and a
    feed of the newest articles (see :mod:`sitegen.extras`)."""
    for site in sites:
        ps = by_site.get(site.host, [])
        maps = []
        for sec in site.sections:
            entries = [(q.url, q.article.published) for q in ps if q.section == sec]
            if not entries:
                continue
            data = sitemap_urlset(entries)
            if site.host == gzip_host:
                url = site.url(f"/sitemaps/{sec}.xml.gz")
                w.body(url, gzipped(data), "application/gzip")
            else:
                url = site.url(f"/sitemaps/{sec}.xml")
                w.body(url, data, "application/xml")
            w.page(url, site, "sitemap", section=sec)
            maps.append(url)
        docs = [(u, p["published"]) for u, p in w.pages.items()
                if p["kind"] == "document" and p["host"] == site.host]  # fmt: skip
        if docs:
            url = site.url("/sitemaps/files.xml")
            w.body(url, sitemap_urlset((u, date.fromisoformat(d)) for u, d in sorted(docs)),
                   "application/xml")  # fmt: skip
            w.page(url, site, "sitemap", section="files")
            maps.append(url)
        index = site.url("/sitemap.xml")
        w.body(index, sitemap_index(maps), "application/xml")
        w.page(index, site, "sitemap_index")
        feed_url, ctype, title = _feed_of(site)
        newest = [(q.url, q.article.title, q.article.published, q.article.paragraphs[0][:80])
                  for q in ps[:FEED_ITEMS]]  # fmt: skip
        make = rss_feed if site.kind == "portal" else atom_feed
        w.body(feed_url, make(title, site.home, newest), ctype + "; charset=utf-8")
        w.page(feed_url, site, "feed", content_type=ctype)
