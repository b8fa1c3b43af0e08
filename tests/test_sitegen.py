"""The local test web: articles, reprints, the small build's ground truth and the proxy server."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import Counter
from html import unescape
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest

from sitegen.articles import CATEGORIES, Article, load_articles, split_paragraphs, split_title
from sitegen.build import build_web, topic_targets
from sitegen.reprint import add_commentary, cut_half, make_reprint
from sitegen.server import serve_in_thread
from sitegen.sites import standalone_page
from topicrawl.errors import ConfigError


@pytest.fixture(scope="module")
def articles() -> list[Article]:
    return load_articles()


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("sitegen")
    truth = build_web(out, scale="small", seed=3)
    return out, truth


@pytest.fixture(scope="module")
def server(web):
    """``python -m sitegen serve`` in a subprocess (scrapy's mockserver pattern), 30 ms latency."""
    out, _ = web
    proc = subprocess.Popen(
        [sys.executable, "-m", "sitegen", "serve", str(out), "--port", "0", "--latency-ms", "30"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+", url), url
    yield url
    proc.terminate()
    proc.wait(timeout=10)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def fetch(proxy: str, url: str, *, follow: bool = True):
    """GET ``url`` through the proxy: (status, headers, body bytes, final url)."""
    handlers = [urllib.request.ProxyHandler({"http": proxy})]
    if not follow:
        handlers.append(_NoRedirect())
    opener = urllib.request.build_opener(*handlers)
    try:
        with opener.open(url, timeout=10) as resp:
            return resp.status, resp.headers, resp.read(), resp.url
    except urllib.error.HTTPError as err:
        return err.code, err.headers, err.read(), url


# --------------------------------------------------------------------------- articles


def test_corpus_loads_with_titles_and_paragraphs(articles):
    assert len(articles) == 598
    assert Counter(a.category for a in articles).keys() == set(CATEGORIES)
    for a in articles:
        assert 4 <= len(a.title) <= 40, a.title
        assert a.paragraphs and all(a.paragraphs)
        assert "\ufffd" not in a.text
    first = articles[0]  # 中宣部部长刘云山到内蒙满洲里市调研中广网呼和浩特8月3日消息（记者…
    assert first.title == "中宣部部长刘云山到内蒙满洲里市调研"
    assert first.source == "中广网"
    assert first.paragraphs[0].startswith("中广网呼和浩特8月3日消息")
    assert first.published.month == 8 and first.published.day == 3


def test_split_title_markers():
    title, body, source = split_title(
        "胡锦涛就加蓬总统邦戈逝世致唁电新华网北京6月10日电 国家主席胡锦涛今天"
    )
    assert (title, source) == ("胡锦涛就加蓬总统邦戈逝世致唁电", "新华网")
    assert body.startswith("新华网北京6月10日电")
    title, body, _ = split_title(
        "《密室2》今日全国公映 苏有朋再演大侦探(图)新浪娱乐讯 电影《密室之不可靠岸》"
    )
    assert title == "《密室2》今日全国公映 苏有朋再演大侦探(图)"
    title, _, _ = split_title("组图：秋冬优雅又妖娆 女星都爱裸色系导语：裸色，是优雅的代名词")
    assert title == "组图：秋冬优雅又妖娆 女星都爱裸色系"


def test_split_paragraphs_keeps_every_character():
    body = "第一句话很长很长很长很长。第二句！第三句？" * 20
    paras = split_paragraphs(body, target=60)
    assert len(paras) > 3
    assert "".join(paras) == body
    assert all(p.endswith(("。", "！", "？")) for p in paras)


# --------------------------------------------------------------------------- reprints


def test_make_reprint_is_a_near_duplicate(articles):
    a = next(x for x in articles if len(x.paragraphs) >= 3)
    r = make_reprint(a, random.Random(1))
    assert r.id.startswith(a.id + "-r") and r.category == a.category
    assert r.title != a.title
    assert any(p.startswith("来源：") for p in r.paragraphs)
    assert any(p.startswith("责任编辑：") for p in r.paragraphs)
    body = [
        p
        for p in r.paragraphs
        if not re.match(r"来源：|责任编辑：|编者按|【编者按】|（本文转自", p)
    ]
    assert body != a.paragraphs  # breaks moved and/or characters edited
    # still nearly the same text: character-bigram Jaccard stays high
    grams = lambda t: {t[i : i + 2] for i in range(len(t) - 1)}  # noqa: E731
    ga, gr = grams("".join(a.paragraphs)), grams("".join(body))
    assert len(ga & gr) / len(ga | gr) > 0.9
    assert make_reprint(a, random.Random(1)) == r  # deterministic for an rng seed
    assert make_reprint(a, random.Random(2)) != r


def test_cut_half_and_add_commentary(articles):
    """Half an article (a hard negative) and an article plus a commentary at least as long
    (a copy since issue 17, item 3: it contains the article)."""
    a = max(articles[:50], key=lambda x: len(x.text))
    half = cut_half(a)
    n_a, n_h = len("".join(a.paragraphs)), len("".join(half.paragraphs))
    assert 0.3 * n_a <= n_h <= 0.65 * n_a
    assert "".join(a.paragraphs).startswith("".join(half.paragraphs))
    others = [x.text for x in articles[100:110]]
    long = add_commentary(a, random.Random(0), others)
    assert long.paragraphs[: len(a.paragraphs)] == a.paragraphs
    added = sum(len(p) for p in long.paragraphs[len(a.paragraphs) :])
    assert added >= n_a
    with pytest.raises(ValueError):
        add_commentary(a, random.Random(0), [])


def test_standalone_pages_use_different_templates(articles):
    a = articles[0]
    pages = [standalone_page(a, i, related=articles[1:9]) for i in range(5)]
    assert len(set(pages)) == 5
    for page in pages:
        assert a.title in page and a.paragraphs[-1][-20:] in page
        assert re.search(r"ICP", page) and "相关阅读" in page
    seps = {re.search(r"<title>.*?(_| - | \| |—)", p).group(1) for p in pages}
    assert len(seps) >= 3


# --------------------------------------------------------------------------- the small build


def test_build_is_deterministic_and_fast(tmp_path, web):
    _, truth = web
    start = time.perf_counter()
    again = build_web(tmp_path / "again", scale="small", seed=3)
    assert time.perf_counter() - start < 10
    assert again["pages"] == truth["pages"]
    out, _ = web
    files = sorted(p.relative_to(out / "sites") for p in (out / "sites").rglob("*") if p.is_file())
    assert files == sorted(
        p.relative_to(tmp_path / "again" / "sites")
        for p in (tmp_path / "again" / "sites").rglob("*")
        if p.is_file()
    )
    assert all((out / "sites" / f).read_bytes() == (tmp_path / "again" / "sites" / f).read_bytes()
               for f in files)  # fmt: skip
    other = build_web(tmp_path / "other", scale="small", seed=4)
    assert set(other["pages"]) != set(truth["pages"])


def test_ground_truth_shape(web):
    out, truth = web
    assert truth["scale"] == "small" and truth["seed"] == 3
    kinds = Counter(p["kind"] for p in truth["pages"].values())
    for kind in ("article", "list", "home", "real", "robots_disallowed", "redirect", "binary",
                 "missing"):  # fmt: skip
        assert kinds[kind] >= 1, kind
    assert 150 <= len(truth["pages"]) <= 400
    portals = [s for s in truth["sites"] if s["kind"] == "portal"]
    domains = [s for s in truth["sites"] if s["kind"] == "domain"]
    assert len(portals) >= 3 and len(domains) >= 1
    assert len({s["host"] for s in truth["sites"]}) == len(truth["sites"])
    assert truth["seeds"]["portal"] == [s["home"] for s in portals]
    assert truth["seeds"]["domain"] == [s["home"] for s in domains]
    assert all(len(s["categories"]) == 1 for s in domains)
    for url, page in truth["pages"].items():
        assert urlsplit(url).hostname == page["host"]
        if page["kind"] == "article":
            assert page["category"] in CATEGORIES and page["title"] and page["status"] == 200
        if page["kind"] in ("list", "home", "redirect", "missing", "binary"):
            assert page["category"] is None
    # every article category is on the web, the domain site only has its topic
    cats = Counter(p["category"] for p in truth["pages"].values() if p["kind"] == "article")
    assert set(cats) == set(CATEGORIES)
    assert len(topic_targets(truth, "时政")) == cats["时政"]
    dom = domains[0]["host"]
    assert {p["category"] for p in truth["pages"].values() if p["host"] == dom
            and p["kind"] == "article"} == set(domains[0]["categories"])  # fmt: skip
    assert (out / "responses.json").exists()


def test_section_urls_and_pagination(web):
    _, truth = web
    politics = [u for u, p in truth["pages"].items()
                if p["kind"] == "article" and p["host"] == "news.huaxia-daily.com.cn"
                and p["category"] == "时政"]  # fmt: skip
    assert politics and all(
        re.fullmatch(r"http://news\.huaxia-daily\.com\.cn/politics/2019/\d\d/\d\d/\d{6}\.html", u)
        for u in politics
    )
    assert any(re.search(r"/index_2\.html$", u) for u in truth["pages"])


def test_reprints_are_recorded(web):
    _, truth = web
    groups = truth["dup_groups"]
    assert len(groups) >= 10
    commentary = 0
    for gid, urls in groups.items():
        assert len(urls) >= 2
        pages = [truth["pages"][u] for u in urls]
        assert {p["dup_group"] for p in pages} == {gid}
        assert len({p["category"] for p in pages}) == 1
        assert all(p["reprint_of"] == urls[0] for p in pages[1:])
        assert all(p["host"] != pages[0]["host"] for p in pages[1:]), "copies on other sites"
        # a reprint followed by a long commentary is a copy too (issue 17, item 3)
        plain = [p for p in pages if not p.get("reprint_extras")]
        commentary += len(pages) - len(plain)
        assert len({p["article_id"] for p in plain}) == 1
        assert len({p["host"] for p in plain}) == len(plain), "reprints live on other sites"
    assert commentary == 2
    for url, orig in truth["near_misses"].items():
        page = truth["pages"][url]
        assert page["dup_group"] is None and page["near_miss_of"] == orig
        assert page["near_miss"] == "half"


def _links(out: Path, truth: dict, url: str) -> list[tuple[str, str]]:
    page = truth["pages"][url]
    resp = json.loads((out / "responses.json").read_text(encoding="utf-8"))[url]
    html = (out / resp["file"]).read_bytes().decode(page["encoding"])
    return [
        (urljoin(url, unescape(h)).split("#")[0], unescape(re.sub(r"<[^>]+>", "", t)))
        for h, t in re.findall(r'<a [^>]*href="([^"]+)"[^>]*>(.*?)</a>', html, re.S)
        if not h.startswith(("javascript:", "#"))
    ]


def _internal_links_known(out, truth) -> set[str]:
    """Every on-web link of every served page, each asserted known to the ground truth (a
    page or a trap)."""
    hosts = {s["host"] for s in truth["sites"]}
    linked: set[str] = set()
    for url, page in truth["pages"].items():
        if page["status"] != 200 or page["kind"] in ("binary", "robots", "real"):
            continue
        for link, _ in _links(out, truth, url):
            if urlsplit(link).hostname not in hosts:
                continue  # off-site: ads, the ICP registry
            linked.add(link)
            assert link in truth["pages"] or any(link.startswith(t) for t in truth["traps"]), (
                f"{url} links to {link}, which the ground truth does not know"
            )
    return linked


def test_every_internal_link_is_known(web):
    out, truth = web
    linked = _internal_links_known(out, truth)
    for kind in ("redirect", "missing", "binary", "real", "robots_disallowed"):
        assert any(truth["pages"].get(u, {}).get("kind") == kind for u in linked), kind
    assert any(any(u.startswith(t) for t in truth["traps"]) for u in linked)
    assert set(truth["disallowed"]) & linked


def test_anchor_text_carries_titles_across_sections(web):
    out, truth = web
    article = next(u for u, p in truth["pages"].items()
                   if p["kind"] == "article" and p["category"] == "体育")  # fmt: skip
    links = _links(out, truth, article)
    cats = {truth["pages"][u]["category"] for u, _ in links
            if truth["pages"].get(u, {}).get("kind") == "article"}  # fmt: skip
    assert "体育" in cats and len(cats) >= 3, "related/hot lists mix categories"
    for u, text in links:
        if truth["pages"].get(u, {}).get("kind") == "article":
            assert text == truth["pages"][u]["title"]


def test_encodings(web):
    out, truth = web
    responses = json.loads((out / "responses.json").read_text(encoding="utf-8"))
    pages = truth["pages"]
    gbk = [u for u, p in pages.items() if p["kind"] == "article" and p["encoding"] == "gbk"]
    assert gbk
    for url in gbk[:5]:
        data = (out / responses[url]["file"]).read_bytes()
        with pytest.raises(UnicodeDecodeError):
            data.decode("utf-8")
        assert pages[url]["title"] in data.decode("gbk")
    wrong = [u for u, p in pages.items() if p["kind"] == "article" and p["declared"]
             and p["declared"].replace("gb2312", "gbk") != p["encoding"]]  # fmt: skip
    assert {pages[u]["encoding"] for u in wrong} == {"gbk", "utf-8"}
    assert any(pages[u]["declared_http"] == "utf-8" for u in wrong)  # GBK body
    assert any(pages[u]["declared_http"] == "gbk" for u in wrong)  # UTF-8 body
    undeclared = [u for u, p in pages.items() if p["kind"] == "article" and not p["declared"]]
    assert {pages[u]["encoding"] for u in undeclared} == {"gbk", "utf-8"}
    for url in wrong + undeclared:
        ctype = responses[url]["content_type"]
        declared_http = pages[url]["declared_http"]
        assert ctype == "text/html" + (f"; charset={declared_http}" if declared_http else "")


def test_bad_arguments(tmp_path):
    with pytest.raises(ConfigError):
        build_web(tmp_path, scale="huge")
    with pytest.raises(ConfigError):
        build_web(tmp_path, categories=["天气"])


def test_categories_subset(tmp_path):
    truth = build_web(tmp_path, scale="small", categories=["时政", "体育"])
    cats = {p["category"] for p in truth["pages"].values() if p["kind"] == "article"}
    assert cats == {"时政", "体育"}


def test_heads_without_section_names(tmp_path):
    """--no-section-in-head: no article's <title> or keywords name its section or category;
    the body (breadcrumb) still does, and everything else is the same web."""
    from sitegen.build import article_bodies
    from topicrawl.extract import decode_html, extract_page

    truth = build_web(tmp_path, scale="small", seed=3, section_in_head=False)
    assert truth["section_in_head"] is False
    names = {s["host"]: s["name"] for s in truth["sites"]}
    checked = 0
    for url, page, body, header in article_bodies(tmp_path, truth):
        html, _ = decode_html(body, header)
        ex = extract_page(html, url)
        # <title> = article title, separator, site name: nothing else
        rest = (ex.title or "").replace(page["title"], "").replace(names[page["host"]], "")
        assert not re.search(r"[^\W_]", rest), (url, ex.title)
        tags = (ex.keywords or "").split(",")  # the title's own words only
        assert page["category"] not in tags or page["category"] in page["title"], url
        checked += 1
    assert checked > 50
    with_names = build_web(tmp_path / "named", scale="small", seed=3)
    assert set(with_names["pages"]) == set(truth["pages"])


# --------------------------------------------------------------------------- the proxy server


def test_server_serves_the_web_as_a_proxy(web, server):
    out, truth = web
    pages = truth["pages"]
    art = next(u for u, p in pages.items() if p["kind"] == "article" and p["encoding"] == "utf-8"
               and p["declared_http"] == "utf-8")  # fmt: skip
    status, headers, body, _ = fetch(server, art)
    assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
    text = body.decode("utf-8")
    assert "<title>" in text and pages[art]["title"] in text
    gbk = next(u for u, p in pages.items() if p["kind"] == "article" and p["encoding"] == "gbk")
    status, headers, body, _ = fetch(server, gbk)
    assert pages[gbk]["title"] in body.decode("gbk")

    host = pages[art]["host"]
    status, headers, body, _ = fetch(server, f"http://{host}/robots.txt")
    assert status == 200 and b"Disallow: /print/" in body
    status, _, body, _ = fetch(server, f"http://{host}/no/such/page.html")
    assert status == 404
    missing = next(u for u, p in pages.items() if p["kind"] == "missing")
    assert fetch(server, missing)[0] == 404

    redirect = next(u for u, p in pages.items() if p["kind"] == "redirect")
    status, headers, _, _ = fetch(server, redirect, follow=False)
    assert status == pages[redirect]["status"] in (301, 302)
    assert headers["Location"] == pages[redirect]["location"]
    status, _, _, final = fetch(server, redirect)
    assert status == 200 and final == pages[redirect]["location"]

    for ext, ctype in (
        ("pdf", "application/pdf"),
        ("jpg", "image/jpeg"),
        ("zip", "application/zip"),
    ):
        url = next((u for u, p in pages.items() if p["kind"] == "binary" and u.endswith(ext)), None)
        if url:
            status, headers, body, _ = fetch(server, url)
            assert status == 200 and headers["Content-Type"] == ctype and body

    status, _, _, _ = fetch(server, "http://www.example.com/")
    assert status == 502


def test_calendar_trap_is_unbounded(web, server):
    _, truth = web
    url = truth["traps"][0] + "?d=2019-05-12"
    seen = []
    for _ in range(4):
        status, headers, body, _ = fetch(server, url)
        assert status == 200
        charset = re.search(r"charset=([\w-]+)", headers["Content-Type"] or "")
        html = body.decode(charset.group(1) if charset else "gbk")
        nxt = re.search(r'<a href="([^"]+)">后一天', html).group(1)
        seen.append(url)
        url = nxt
    assert seen[-1].endswith("d=2019-05-15")
    assert fetch(server, truth["traps"][0] + "?d=not-a-date")[0] == 404


def test_path_calendar_option(web, tmp_path):
    """``path_calendar`` moves the calendar trap into the path; the web is otherwise the one
    built without it (and without it, byte for byte the default web)."""
    out, truth = web
    plain = tmp_path / "plain"
    assert build_web(plain, scale="small", seed=3) == truth
    assert (plain / "responses.json").read_bytes() == (out / "responses.json").read_bytes()
    built = build_web(tmp_path / "pc", scale="small", seed=3, path_calendar=True)
    assert built["options"]["path_calendar"] and built["pages"].keys() == truth["pages"].keys()
    home = truth["seeds"]["portal"][0]
    with serve_in_thread(tmp_path / "pc") as proxy:
        status, headers, body, _ = fetch(proxy, home)
        html = body.decode(re.search(r"charset=([\w-]+)", headers["Content-Type"]).group(1)
                           if "charset" in headers["Content-Type"] else "gbk")  # fmt: skip
        assert "/calendar/2019/05/12/" in html and "/calendar/?d=" not in html
        url = urljoin(home, "/calendar/2019/05/12/")
        for _ in range(3):
            status, headers, body, _ = fetch(proxy, url)
            assert status == 200
            charset = re.search(r"charset=([\w-]+)", headers["Content-Type"] or "")
            page = body.decode(charset.group(1) if charset else "gbk")
            url = re.search(r'<a href="([^"]+)">后一天', page).group(1)
        assert url.endswith("/calendar/2019/05/15/")
        assert fetch(proxy, urljoin(home, "/calendar/?d=2019-05-12"))[0] == 404
    with pytest.raises(ConfigError):
        build_web(tmp_path / "b", family="b", path_calendar=True)


def test_latency_and_origin_form(web, server):
    _, truth = web
    home = truth["seeds"]["portal"][0]
    start = time.perf_counter()
    for _ in range(3):
        assert fetch(server, home)[0] == 200
    assert (time.perf_counter() - start) / 3 >= 0.03
    # origin-form with a Host header (no proxy)
    host = urlsplit(home).hostname
    req = urllib.request.Request(server + "/", headers={"Host": host})
    with urllib.request.urlopen(req, timeout=10) as resp:
        assert truth["sites"][0]["name"] in resp.read().decode("utf-8")


def test_serve_in_thread(web):
    out, truth = web
    with serve_in_thread(out) as proxy:
        status, _, body, _ = fetch(proxy, truth["seeds"]["domain"][0])
        assert status == 200 and body


# --------------------------------------------------------------------------- template family b


@pytest.fixture(scope="module")
def web_b(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("sitegen_b")
    truth = build_web(out, scale="small", seed=3, family="b")
    return out, truth


def _html(out: Path, truth: dict, url: str) -> str:
    resp = json.loads((out / "responses.json").read_text(encoding="utf-8"))[url]
    return (out / resp["file"]).read_bytes().decode(truth["pages"][url]["encoding"])


def test_family_b_is_deterministic(tmp_path, web_b):
    out, truth = web_b
    again = build_web(tmp_path / "again", scale="small", seed=3, family="b")
    assert again["pages"] == truth["pages"] and again["dup_groups"] == truth["dup_groups"]
    files = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(tmp_path / "again")
                           for p in (tmp_path / "again").rglob("*") if p.is_file())  # fmt: skip
    assert all((out / f).read_bytes() == (tmp_path / "again" / f).read_bytes() for f in files)
    other = build_web(tmp_path / "other", scale="small", seed=4, family="b")
    assert set(other["pages"]) != set(truth["pages"])
    with pytest.raises(ConfigError):
        build_web(tmp_path / "bad", family="c")


def test_family_b_ground_truth_shape(web_b):
    out, truth = web_b
    assert truth["family"] == "b" and truth["scale"] == "small" and truth["seed"] == 3
    kinds = Counter(p["kind"] for p in truth["pages"].values())
    for kind in ("article", "list", "home", "real", "robots_disallowed", "redirect", "binary",
                 "missing", "robots", "notice"):  # fmt: skip
        assert kinds[kind] >= 1, kind
    portals = [s for s in truth["sites"] if s["kind"] == "portal"]
    domains = [s for s in truth["sites"] if s["kind"] == "domain"]
    assert truth["seeds"]["portal"] == [s["home"] for s in portals] and len(portals) == 4
    assert truth["seeds"]["domain"] == [s["home"] for s in domains]
    assert [(s["template"], s["categories"]) for s in domains] == [("govb", ["时政"])]
    cats = Counter(p["category"] for p in truth["pages"].values() if p["kind"] == "article")
    assert set(cats) == set(CATEGORIES)
    assert len(topic_targets(truth, "时政")) == cats["时政"] > 6
    for url, page in truth["pages"].items():
        assert urlsplit(url).hostname == page["host"]
        if page["kind"] == "article":
            assert page["category"] in CATEGORIES and page["title"] and page["status"] == 200
        if page["kind"] in ("list", "home", "redirect", "missing", "binary", "notice"):
            assert page["category"] is None, url
    gov = domains[0]["host"]
    assert {p["category"] for p in truth["pages"].values()
            if p["host"] == gov and p["kind"] == "article"} == {"时政"}  # fmt: skip
    # reprints under the other templates, hard negatives
    assert len(truth["dup_groups"]) >= 10
    templates = {s["host"]: s["template"] for s in truth["sites"]}
    for gid, urls in truth["dup_groups"].items():
        pages = [truth["pages"][u] for u in urls]
        plain = [p for p in pages if not p.get("reprint_extras")]  # commentary copies apart
        assert {p["dup_group"] for p in pages} == {gid}
        assert len({p["article_id"] for p in plain}) == 1
        assert len({templates[p["host"]] for p in plain}) == len(plain)
    assert truth["near_misses"]
    for url, orig in truth["near_misses"].items():
        assert truth["pages"][url]["dup_group"] is None
        assert truth["pages"][url]["near_miss_of"] == orig
        assert truth["pages"][url]["near_miss"] == "half"
    assert sum(p.get("reprint_extras") == "commentary" for p in truth["pages"].values()) == 2


def test_family_b_differs_from_family_a(web, web_b):
    _, truth_a = web
    out, truth = web_b
    assert not {s["host"] for s in truth["sites"]} & {s["host"] for s in truth_a["sites"]}
    assert {s["template"] for s in truth["sites"]} == {"cards", "stream", "paper", "blog", "govb"}
    articles = [u for u, p in truth["pages"].items() if p["kind"] == "article"]
    patterns = {
        "query id": r"http://www\.xinhuan-media\.com/article\.php\?id=\d{6}",
        "hash": r"http://m\.qingyun-news\.net/a/[0-9a-f]{10}",
        "content date": r"http://www\.beiyu-ribao\.com/content/2019/\d{4}/c\d{6}\.html",
        "date-less slug": r"http://blog\.mozhe-zhuanlan\.cn/posts/[a-z]+-\d{6}/",
        "gov cms": r"http://www\.yunhe-xinqu\.gov\.cn/art/2019/\d+/\d+/art_120[12]_\d{6}\.html",
    }
    for name, pattern in patterns.items():
        assert any(re.fullmatch(pattern, u) for u in articles), name
    assert all(any(re.fullmatch(p, u) for p in patterns.values()) for u in articles)
    names = {s["host"]: s["name"] for s in truth["sites"]}
    for url in articles:
        html = _html(out, truth, url)
        title = unescape(re.search(r"<title>(.*?)</title>", html).group(1))
        page = truth["pages"][url]
        assert '<meta name="keywords"' not in html, url
        tpl = {s["host"]: s["template"] for s in truth["sites"]}[page["host"]]
        if tpl == "cards":  # OpenGraph only, site name first
            assert title == f"{names[page['host']]} | {page['title']}"
            assert 'property="og:title"' in html and '<meta name="description"' not in html
        elif tpl in ("stream", "govb"):  # the headline alone
            assert title == page["title"]
    # list layouts: card grid with a relative "load more", blog author/tag/month pages,
    # the government's notice list with attachments served by a query URL
    lists = {u: p for u, p in truth["pages"].items() if p["kind"] == "list"}
    assert any('class="card-grid"' in _html(out, truth, u) and 'href="?page=2"' in _html(out, truth, u)
               for u in lists if "/channel/" in u)  # fmt: skip
    assert any("?page=2" in u for u in lists) and any("pageNum=2" in u for u in lists)
    for list_of in ("tag", "author", "month", "notices"):
        assert any(p.get("list_of") == list_of for p in lists.values()), list_of
    notice = next(u for u, p in truth["pages"].items() if p["kind"] == "notice")
    assert re.search(r"(通知|公告|公示)$", truth["pages"][notice]["title"])
    assert any(p["kind"] == "binary" and p["linked_from"] == notice and "fileid=" in u
               for u, p in truth["pages"].items())  # fmt: skip
    # the stream template cuts list titles (full title only in the title attribute)
    home = next(s["home"] for s in truth["sites"] if s["template"] == "stream")
    assert re.search(
        r'href="/a/[0-9a-f]{10}" title="[^"]{17,}">[^<]{16}…</a>', _html(out, truth, home)
    )


def test_family_b_every_hazard_is_linked(web_b):
    out, truth = web_b
    linked = _internal_links_known(out, truth)
    for kind in ("article", "list", "notice", "redirect", "missing", "binary", "real",
                 "robots_disallowed"):  # fmt: skip
        assert any(truth["pages"].get(u, {}).get("kind") == kind for u in linked), kind
    unlinked = {u for u, p in truth["pages"].items() if p["kind"] != "robots"} - linked
    assert not unlinked - set(truth["seeds"]["portal"]) - set(truth["seeds"]["domain"])
    assert any(any(u.startswith(t) for t in truth["traps"]) for u in linked)
    assert set(truth["disallowed"]) & linked
    robots = (out / "sites" / truth["sites"][0]["host"] / "robots.txt").read_text()
    assert all(urlsplit(u).path.split("/")[1] in robots for u in truth["disallowed"])


def test_family_b_encodings(web_b):
    out, truth = web_b
    responses = json.loads((out / "responses.json").read_text(encoding="utf-8"))
    pages = truth["pages"]
    paper = next(s["host"] for s in truth["sites"] if s["template"] == "paper")
    on_paper = [u for u, p in pages.items() if p["host"] == paper and p["kind"] == "article"]
    assert on_paper
    for url in on_paper:  # GBK declared in the HTTP header only
        assert pages[url]["encoding"] == "gbk" and pages[url]["declared_meta"] is None
        assert responses[url]["content_type"] == "text/html; charset=gbk"
        assert "charset" not in _html(out, truth, url)[:300]
    anomalies = {(p["encoding"], p["declared_http"], p["declared_meta"])
                 for u, p in pages.items() if p["kind"] == "article" and p["host"] != paper}  # fmt: skip
    assert ("gbk", "utf-8", "gbk") in anomalies  # a lying header
    assert ("utf-8", None, "gb2312") in anomalies  # a lying meta
    assert ("gbk", None, None) in anomalies and ("utf-8", None, None) in anomalies


def test_family_b_ground_truth_matches_served_pages(web_b):
    """Every URL of the ground truth is served as recorded (status, redirect target, body)."""
    from sitegen.server import TestWeb

    out, truth = web_b
    tw = TestWeb(out)
    for url, page in truth["pages"].items():
        status, headers, body = tw.respond(url)
        assert status == page["status"], url
        if page["kind"] == "redirect":
            assert headers["Location"] == page["location"]
        elif page["kind"] == "binary":
            assert headers["Content-Type"] == page["content_type"] and body
        elif page["kind"] in ("article", "notice", "robots_disallowed") and page["title"]:
            assert page["title"] in body.decode(page["encoding"]).replace("&amp;", "&"), url
    host = truth["sites"][0]["host"]
    assert tw.respond(f"http://{host}/article.php?id=1")[0] == 404
    assert tw.respond(f"http://{host}/no/such/page")[0] == 404


def test_family_b_server_and_feed_trap(web_b):
    out, truth = web_b
    pages = truth["pages"]
    with serve_in_thread(out) as proxy:
        paper = next(s["host"] for s in truth["sites"] if s["template"] == "paper")
        art = next(u for u, p in pages.items() if p["host"] == paper and p["kind"] == "article")
        status, headers, body, _ = fetch(proxy, art)
        assert status == 200 and headers["Content-Type"] == "text/html; charset=gbk"
        assert pages[art]["title"] in body.decode("gbk")
        query = next(u for u, p in pages.items() if p["kind"] == "article" and "?id=" in u)
        assert pages[query]["title"] in fetch(proxy, query)[2].decode(pages[query]["encoding"])
        redirect = next(u for u, p in pages.items() if p["kind"] == "redirect" and "?" in u)
        status, headers, _, _ = fetch(proxy, redirect, follow=False)
        assert status == 302 and headers["Location"] == pages[redirect]["location"]
        status, _, body, _ = fetch(proxy, f"http://{paper}/robots.txt")
        assert b"Disallow: /amp/" in body
        # the endless feed: every page links the next one, long after the articles run out
        url = truth["traps"][0] + "?page=1"
        for k in range(1, 4):
            status, headers, body, _ = fetch(proxy, url)
            assert status == 200
            nxt = re.search(r'<a href="([^"]+)">加载更多</a>', body.decode("utf-8")).group(1)
            url = urljoin(url, unescape(nxt))
            assert url.endswith(f"?page={k + 1}")
        status, _, body, _ = fetch(proxy, truth["traps"][0] + "?page=5000")
        assert status == 200 and "暂无更多内容" in body.decode("utf-8")
        assert fetch(proxy, truth["traps"][0] + "?page=x")[0] == 404


def test_family_b_command_line(tmp_path):
    out = tmp_path / "webb"
    proc = subprocess.run(
        [sys.executable, "-m", "sitegen", "build", str(out), "--family", "b",
         "--categories", "时政", "体育"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "built" in proc.stdout
    truth = json.loads((out / "ground_truth.json").read_text(encoding="utf-8"))
    assert truth["family"] == "b"
    assert {p["category"] for p in truth["pages"].values() if p["kind"] == "article"} == {
        "时政",
        "体育",
    }
