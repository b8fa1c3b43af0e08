"""The address policy: file: links, other ports and redirects to internal addresses are
refused and counted, redirects and re-queued (dont_filter) requests included."""

from __future__ import annotations

import asyncio
import http.server
import re
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ROOT, crawl_command
from scrapy import Request
from scrapy.exceptions import IgnoreRequest
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.test import get_crawler

from crawler.addresspolicy import AddressPolicy, AddressPolicyMiddleware, is_public
from models.store import Store


def fake_dns(table: dict[str, list[str]]):
    def resolve(host: str) -> list[str]:
        if host not in table:
            raise OSError("no such host")
        return table[host]

    return resolve


def test_scheme_host_port_and_literal_addresses():
    policy = AddressPolicy(["http://127.0.0.1:8000/", "https://news.example/"], ["*.gov.cn"])
    assert policy.check_url("http://127.0.0.1:8000/a") == (None, None)  # the seed as typed
    assert policy.check_url("file://127.0.0.1/etc/passwd")[0] == "scheme"
    assert policy.check_url("ftp://news.example/x")[0] == "scheme"
    assert policy.check_url("data:text/html,hi")[0] == "scheme"
    assert policy.check_url("http://127.0.0.1:6379/flushall")[0] == "port"
    assert policy.check_url("http://169.254.169.254/latest/meta-data/")[0] == "host"
    assert policy.check_url("https://news.example/a") == (None, None)  # the seed as typed
    assert policy.check_url("http://news.example/a") == (None, "news.example")  # resolved
    assert policy.check_url("http://news.example:8080/a")[0] == "port"
    assert policy.check_url("http://www.gov.cn/a") == (None, "www.gov.cn")
    assert policy.check_url("http://gov.cn.evil.example/")[0] == "host"
    assert policy.check_url("http://127.0.0.1:99999/")[0] == "host"  # a port out of range


def test_ip_ranges_v4_and_v6():
    for bad in ["127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254",
                "224.0.0.1", "240.0.0.1", "0.0.0.0", "100.64.0.1", "::1", "fe80::1",
                "fc00::1", "ff02::1", "::ffff:127.0.0.1", "::ffff:169.254.169.254"]:  # fmt: skip
        import ipaddress

        assert not is_public(ipaddress.ip_address(bad)), bad
    import ipaddress

    assert is_public(ipaddress.ip_address("93.184.216.34"))
    assert is_public(ipaddress.ip_address("2606:2800:220:1:248:1893:25c8:1946"))


def test_names_are_resolved_and_every_address_must_pass():
    dns = fake_dns({"ok.example": ["93.184.216.34"], "meta.example": ["169.254.169.254"],
                    "mixed.example": ["93.184.216.34", "10.0.0.5"]})  # fmt: skip
    policy = AddressPolicy(["http://ok.example/"], ["*.example"], resolver=dns)
    assert policy.resolve_reason("ok.example") is None
    assert policy.resolve_reason("meta.example") == "address"
    assert policy.resolve_reason("mixed.example") == "address"
    assert policy.resolve_reason("missing.example") == "dns"
    allowed = AddressPolicy([], ["*.example"], resolver=dns, allowed_networks=["10.0.0.0/8"])
    assert allowed.resolve_reason("mixed.example") is None
    assert allowed.resolve_reason("meta.example") == "address"
    anything = AddressPolicy([], ["*.example"], resolver=dns, allow_private=True)
    assert anything.resolve_reason("meta.example") is None


def _middleware(seeds, hosts=(), dns=None, proxies=None):
    stats = MemoryStatsCollector(get_crawler())
    mw = AddressPolicyMiddleware(stats, resolver=dns or fake_dns({}), proxies=proxies)

    class Spider:
        pass

    spider = Spider()
    spider.seeds = seeds
    spider.topic = type("T", (), {"allowed_hosts": list(hosts)})()
    mw.spider_opened(spider)
    return mw, stats


def _refused(mw, request) -> bool:
    async def go():
        await mw.process_request(request)

    try:
        asyncio.run(go())
    except IgnoreRequest:
        return True
    return False


def test_dont_filter_and_redirects_do_not_bypass_the_policy():
    dns = fake_dns({"site.example": ["93.184.216.34"], "internal.example": ["169.254.169.254"]})
    mw, stats = _middleware(["http://site.example/"], ["internal.example"], dns)
    # a re-queued link (dont_filter) whose redirect leads to the metadata service
    hop = Request("http://169.254.169.254/latest/meta-data/", dont_filter=True,
                  meta={"redirect_urls": ["http://site.example/r"], "redirect_times": 1})  # fmt: skip
    assert _refused(mw, hop)
    named = Request("http://internal.example/latest/", dont_filter=True,
                    meta={"redirect_urls": ["http://site.example/r"]})  # fmt: skip
    assert _refused(mw, named)
    assert not _refused(mw, Request("http://site.example/page", dont_filter=True))
    assert stats.get_value("topicrawl/address_policy/refused/host") == 1
    assert stats.get_value("topicrawl/address_policy/refused/address") == 1
    assert stats.get_value("topicrawl/address_policy/refused") == 2


def test_through_a_proxy_names_are_left_to_the_proxy_but_addresses_are_checked():
    mw, stats = _middleware(["http://made-up.example/"], ["*.gov.cn"],
                            proxies={"http": "http://127.0.0.1:3128"})  # fmt: skip
    assert not _refused(mw, Request("http://made-up.example/a"))  # not resolvable here
    assert not _refused(mw, Request("http://www.gov.cn/a"))
    assert _refused(mw, Request("http://made-up.example:81/a"))
    assert stats.get_value("topicrawl/address_policy/refused/port") == 1


# -- a real crawl -------------------------------------------------------------------------------


class _Web(http.server.BaseHTTPRequestHandler):
    links: list[str] = []
    redirects: dict[str, str] = {}
    hits: list[str]

    def do_GET(self):  # noqa: N802 - http.server's name
        self.hits.append(self.path)
        if self.path in self.redirects:
            self.send_response(302)
            self.send_header("Location", self.redirects[self.path])
            self.end_headers()
            return
        if self.path == "/robots.txt":
            self.send_response(404)
            self.end_headers()
            return
        body = "".join(f'<p><a href="{u}">中央政府会议 {i}</a></p>' for i, u in enumerate(self.links))
        html = (f"<html><head><title>中央政府会议</title></head><body><article><h1>政治</h1>"
                f"<p>{'中央政府召开会议，研究政治工作。' * 20}</p>{body}</article></body></html>")  # fmt: skip
        data = html.encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def two_servers() -> Iterator[tuple[int, int, list[str], list[str]]]:
    site_hits: list[str] = []
    admin_hits: list[str] = []
    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), type("S", (_Web,), {"hits": site_hits}))
    admin = http.server.ThreadingHTTPServer(("127.0.0.1", 0), type("A", (_Web,), {"hits": admin_hits}))
    for server in (site, admin):
        threading.Thread(target=server.serve_forever, daemon=True).start()
    yield site.server_port, admin.server_port, site_hits, admin_hits
    for server in (site, admin):
        server.shutdown()
        server.server_close()


@pytest.mark.slow
def test_a_crawl_refuses_file_links_other_ports_and_internal_redirects(
    two_servers, tmp_path: Path
):
    port, admin_port, site_hits, admin_hits = two_servers
    site = f"http://127.0.0.1:{port}"
    _Web.links = [
        "file:///etc/passwd", f"file://127.0.0.1:{port}/proc/self/environ",
        f"http://127.0.0.1:{admin_port}/admin", f"{site}/meta", f"{site}/flush",
        f"{site}/local", f"{site}/ok",
    ]  # fmt: skip
    _Web.redirects = {
        "/meta": "http://169.254.169.254/latest/meta-data/",
        "/flush": f"http://127.0.0.1:{admin_port}/flushall",
        "/local": f"http://localhost:{port}/ok2",
    }
    topic = tmp_path / "t.toml"
    topic.write_text(
        'name = "t"\nlanguage = "zh"\n[words]\n"政治" = 1.0\n"中央" = 0.8\n[page]\n'
        f'threshold = 0.0\n[crawl]\nallowed_hosts = ["localhost:{port}"]\n',
        encoding="utf-8",
    )
    db = f"sqlite:///{tmp_path / 'c.db'}"
    cmd, env = crawl_command("http://unused", [f"{site}/"], topic, db,
                             args={"max_pages": 20, "run_id": 1},
                             settings={"TOPICRAWL_LINK_SCORER": "relevance.linkscore.KeywordLinkScorer"})  # fmt: skip
    for key in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"):
        env.pop(key, None)
    out = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    log = out.stderr

    def stat(key: str) -> int:
        match = re.search(rf"'{re.escape(key)}': (\d+)", log)
        return int(match.group(1)) if match else 0

    assert out.returncode == 0, log[-3000:]
    assert admin_hits == []
    # both file: links: the spider keeps http(s) links only; the policy would refuse them too
    # (its unit tests above), so nothing non-http reaches a downloader
    assert stat("topicrawl/links/not_http") >= 2  # on every page that lists them
    assert stat("topicrawl/address_policy/refused/scheme") == 0
    assert stat("topicrawl/address_policy/refused/port") == 2  # the link and the redirect
    # the redirect to 169.254.169.254 (no dont_filter here) is also Scrapy's offsite
    # middleware's to drop; the dont_filter case is the unit test above
    # (and the redirect to localhost, an allowed name that resolves to 127.0.0.1)
    refused = stat("topicrawl/address_policy/refused/host")
    refused += stat("topicrawl/address_policy/refused/address")
    assert refused + stat("offsite/filtered") >= 2, log[-3000:]
    store = Store.from_url(db, migrate=False)
    urls = {p.final_url or p.url for p in store.iter_pages(1)}
    store.close()
    assert urls == {f"{site}/", f"{site}/ok"}
    assert "/ok" in site_hits and "/ok2" not in site_hits
