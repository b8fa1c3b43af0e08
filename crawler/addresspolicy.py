"""The address policy: which URLs a crawl may request (one downloader middleware).

Every request passes :class:`AddressPolicyMiddleware.process_request` before it is sent:
start requests, links, re-queued links (``dont_filter``), redirects (Scrapy's redirect
middleware schedules the target as a new request, which comes through here again), retries
and robots.txt. A request is refused (``IgnoreRequest``, counted as
``topicrawl/address_policy/refused/<reason>``) when

- ``scheme``: its scheme is not http or https (``file:``, ``ftp:``, ``data:``, ``s3:`` …);
- ``host``: its host is neither a seed's host nor matches the topic's ``allowed_hosts``;
- ``port``: its port is not allowed for that host: a seed's port as typed, a port given in
  an ``allowed_hosts`` entry (``host:port``), else only 80 and 443;
- ``address``: the host is an IP address, or a name that resolves to one, in a loopback,
  private, link-local (169.254.0.0/16, the cloud metadata service), multicast, reserved or
  otherwise non-global range, IPv4 or IPv6, unless ``TOPICRAWL_ALLOW_PRIVATE_ADDRESSES`` is
  on or the address is in ``TOPICRAWL_ALLOWED_NETWORKS`` (CIDR list);
- ``dns``: the name does not resolve.

A seed's own host and port (as the user typed them, e.g. ``http://127.0.0.1:8000/``) skip
the address check: the user allowed them. Names are resolved (``getaddrinfo``, every
address must pass) before the connection, with a per-host cache. When a request goes
through an HTTP proxy (``http_proxy``/``https_proxy`` in the environment, or
``meta["proxy"]``), the proxy resolves names, not this process: only IP-address hosts are
checked then, and the proxy must be trusted to refuse internal addresses itself. The local
test web is such a proxy (made-up host names).
"""

from __future__ import annotations

import ipaddress
import logging
import socket
import urllib.request
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

from scrapy import Request, Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.statscollectors import StatsCollector

log = logging.getLogger(__name__)

SCHEMES = ("http", "https")
DEFAULT_PORTS = {"http": 80, "https": 443}
Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def resolve(host: str) -> list[str]:
    """Every address ``host`` resolves to (``getaddrinfo``; raises ``OSError``)."""
    infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def _port(parts: Any) -> int | None:
    try:
        return parts.port or DEFAULT_PORTS.get(parts.scheme)
    except ValueError:  # a port out of range or not a number
        return None


def parse_host_pattern(pattern: str) -> tuple[str, int | None]:
    """``"host"``, ``"*.suffix"`` or either with ``:port`` -> (lower-case host, port)."""
    host, sep, port = pattern.strip().lower().rpartition(":")
    if sep and port.isdigit():
        return host, int(port)
    return pattern.strip().lower(), None


def _host_matches(host: str, pattern: str) -> bool:
    if pattern.startswith("*."):
        return host == pattern[2:] or host.endswith(pattern[1:])
    return host == pattern


def is_public(address: Address) -> bool:
    """False for loopback, private, link-local, multicast, reserved, unspecified and other
    non-global addresses (IPv4-mapped IPv6 addresses are judged as their IPv4 address)."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_global and not address.is_multicast and not address.is_reserved


class AddressPolicy:
    """The rules above, without Scrapy: built from the seeds and the allowed host patterns."""

    def __init__(
        self,
        seeds: Iterable[str],
        allowed_hosts: Iterable[str] = (),
        *,
        allow_private: bool = False,
        allowed_networks: Iterable[str] = (),
        resolver: Callable[[str], list[str]] = resolve,
        proxies: dict[str, str] | None = None,
        cache_size: int = 10_000,
    ):
        self.seed_endpoints: set[tuple[str, int]] = set()
        self.patterns: list[tuple[str, int | None]] = []
        for seed in seeds:
            parts = urlsplit(seed)
            port = _port(parts)
            if parts.hostname and port:
                self.seed_endpoints.add((parts.hostname.lower(), port))
                # a seed typed without a port allows 80 and 443 (http -> https redirects)
                self.patterns.append((parts.hostname.lower(), parts.port))
        self.patterns += [parse_host_pattern(p) for p in allowed_hosts if p]
        self.allow_private = allow_private
        self.networks: list[Network] = [ipaddress.ip_network(n, strict=False)
                                        for n in allowed_networks]  # fmt: skip
        self.resolver = resolver
        self.proxies = proxies if proxies is not None else {}
        self.cache: dict[str, str | None] = {}
        self.cache_size = cache_size

    def check_url(self, url: str) -> tuple[str | None, str | None]:
        """``(reason refused, None)`` or ``(None, host to resolve or None)`` for the parts
        that need no DNS: scheme, host, port, IP-address hosts."""
        parts = urlsplit(url)
        if parts.scheme.lower() not in SCHEMES:
            return "scheme", None
        host = (parts.hostname or "").lower()
        port = _port(parts)
        if not host or port is None:
            return "host", None
        ports = [p for pattern, p in self.patterns if _host_matches(host, pattern)]
        if not ports:
            return "host", None
        if port not in ports and not (None in ports and port in DEFAULT_PORTS.values()):
            return "port", None
        if (host, port) in self.seed_endpoints:
            return None, None
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return None, host
        return (None if self.address_allowed(address) else "address"), None

    def address_allowed(self, address: Address) -> bool:
        if self.allow_private or is_public(address):
            return True
        return any(address in net for net in self.networks)

    def uses_proxy(self, request: Request) -> bool:
        """Whether an HTTP proxy (which resolves names itself) carries ``request``."""
        if request.meta.get("proxy"):
            return True
        parts = urlsplit(request.url)
        if parts.scheme not in self.proxies:
            return False
        return not urllib.request.proxy_bypass(parts.hostname or "")

    def resolve_reason(self, host: str) -> str | None:
        """None when every address ``host`` resolves to is allowed, else the reason (cached
        per host: the verdict of the first resolution)."""
        if host in self.cache:
            return self.cache[host]
        try:
            addresses = [ipaddress.ip_address(a.split("%")[0]) for a in self.resolver(host)]
        except (OSError, ValueError):
            return "dns"  # not cached: a lookup that failed may succeed later
        reason = None if addresses and all(map(self.address_allowed, addresses)) else "address"
        if len(self.cache) >= self.cache_size:
            self.cache.clear()
        self.cache[host] = reason
        return reason


class AddressPolicyMiddleware:
    """Downloader middleware enforcing :class:`AddressPolicy` on every request (see the
    module docstring). Settings: ``TOPICRAWL_ADDRESS_POLICY`` (on), ``TOPICRAWL_ALLOW_PRIVATE_ADDRESSES``,
    ``TOPICRAWL_ALLOWED_NETWORKS``. The seeds and allowed hosts are the spider's
    (``seeds`` and ``topic.allowed_hosts``; other spiders: ``start_urls`` and
    ``allowed_domains``)."""

    def __init__(
        self,
        stats: StatsCollector,
        *,
        allow_private: bool = False,
        allowed_networks: Iterable[str] = (),
        proxies: dict[str, str] | None = None,
        resolver: Callable[[str], list[str]] = resolve,
    ):
        self.stats = stats
        self.allow_private = allow_private
        self.allowed_networks = list(allowed_networks)
        self.proxies = proxies or {}
        self.resolver = resolver
        self.policy: AddressPolicy | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> AddressPolicyMiddleware:
        s = crawler.settings
        if not s.getbool("TOPICRAWL_ADDRESS_POLICY", True):
            raise NotConfigured("TOPICRAWL_ADDRESS_POLICY is off")
        proxies = {}
        if s.getbool("HTTPPROXY_ENABLED", True):
            proxies = {k: v for k, v in urllib.request.getproxies().items() if k in SCHEMES}
        mw = cls(
            crawler.stats,
            allow_private=s.getbool("TOPICRAWL_ALLOW_PRIVATE_ADDRESSES"),
            allowed_networks=s.getlist("TOPICRAWL_ALLOWED_NETWORKS"),
            proxies=proxies,
        )
        crawler.signals.connect(mw.spider_opened, signal=signals.spider_opened)
        return mw

    def spider_opened(self, spider: Spider) -> None:
        seeds = getattr(spider, "seeds", None) or getattr(spider, "start_urls", [])
        topic = getattr(spider, "topic", None)
        hosts = list(getattr(topic, "allowed_hosts", None) or [])
        if topic is None:
            hosts += list(getattr(spider, "allowed_domains", None) or [])
        self.policy = AddressPolicy(
            seeds,
            hosts,
            allow_private=self.allow_private,
            allowed_networks=self.allowed_networks,
            resolver=self.resolver,
            proxies=self.proxies,
        )

    def refuse(self, request: Request, reason: str) -> None:
        self.stats.inc_value("topicrawl/address_policy/refused")
        self.stats.inc_value(f"topicrawl/address_policy/refused/{reason}")
        log.debug("address policy refused %s (%s)", request.url, reason)
        raise IgnoreRequest(f"address policy refused {request.url} ({reason})")

    async def process_request(self, request: Request) -> None:
        if self.policy is None:
            raise IgnoreRequest("address policy not initialised (spider not opened)")
        reason, host = self.policy.check_url(request.url)
        if reason:
            self.refuse(request, reason)
        if host is not None and not self.policy.uses_proxy(request):
            if host in self.policy.cache:
                reason = self.policy.cache[host]
            else:  # resolved in a thread: the event loop goes on (the asyncio reactor)
                import asyncio

                loop = asyncio.get_running_loop()
                reason = await loop.run_in_executor(None, self.policy.resolve_reason, host)
            if reason:
                self.refuse(request, reason)
        return None
