"""Serve a built test web from 127.0.0.1 as an HTTP forward proxy.

A crawler that sets ``http_proxy`` (or Scrapy's ``request.meta["proxy"]``) to the server sends
``GET http://host/path HTTP/1.1`` (absolute form); the server answers from
``out_dir/responses.json`` and ``out_dir/sites/<host>/<path>``, so any made-up host name
resolves with no DNS or /etc/hosts change. Origin-form requests with a ``Host`` header work
too. The server never contacts the internet: an unknown host gets a quick 502.

Static responses carry ``ETag`` (a hash of the body) and ``Last-Modified`` (the body file's
modification time) and a conditional request (``If-None-Match`` / ``If-Modified-Since``)
that matches gets ``304 Not Modified``: change a file under ``sites/`` and restart the server,
and a recrawl sees what changed.

The calendar trap (``/calendar/?d=YYYY-MM-DD``, or ``/calendar/YYYY/MM/DD/`` in a web built
with ``--path-calendar``) is rendered on the fly: every day links the previous and the next
day, an unbounded chain.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import date, timedelta
from email.utils import formatdate, parsedate_to_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from sitegen.templates import (
    CALENDAR_INTRO,
    PageContext,
    Site,
    calendar_url,
    render_calendar,
    render_simple,
)
from topicrawl.errors import ResourceMissingError

#: a path calendar's day (``build_web(path_calendar=True)``)
_PATH_DAY = re.compile(r"/calendar/(\d{4})/(\d{2})/(\d{2})/")


class TestWeb:
    """The responses of a built web, loaded once and shared by the handler threads."""

    def __init__(self, out_dir: Path):
        out_dir = Path(out_dir)
        resp = out_dir / "responses.json"
        if not resp.exists() or not (out_dir / "webmeta.json").exists():
            raise ResourceMissingError(
                f"{resp} not found: build the web first (topicrawl sitegen build {out_dir})"
            )
        self.root = out_dir
        self.responses: dict[str, dict] = json.loads(resp.read_text(encoding="utf-8"))
        meta = json.loads((out_dir / "webmeta.json").read_text(encoding="utf-8"))
        self.sites = {d["host"]: Site.from_json(d) for d in meta["sites"]}
        self.calendar: dict[str, dict[str, list]] = meta["calendar"]
        #: the calendar trap in the path (/calendar/2019/05/12/) instead of the query string
        self.path_calendar = bool(meta.get("path_calendar"))
        self.friends = [tuple(f) for f in meta["friends"]]
        #: template family b renders its trap (/feed/?page=N) and 404 pages with its own frame
        self.family = meta.get("family", "a")
        self.chrome = meta.get("chrome", {})
        self.feed: dict[str, list] = meta.get("feed", {})
        self._cache: dict[str, bytes] = {}
        self._validator_cache: dict[str, dict[str, str]] = {}

    def respond(self, url: str) -> tuple[int, dict[str, str], bytes]:
        """Return (status, headers, body) for an absolute http URL."""
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        if host not in self.sites:
            return (
                502,
                {"Content-Type": "text/plain; charset=utf-8"},
                (f"sitegen proxy: unknown host {host!r} (not part of the test web)\n".encode()),
            )
        path = parts.path or "/"
        key = f"http://{host}{path}" + (f"?{parts.query}" if parts.query else "")
        entry = self.responses.get(key)
        if entry is None and parts.query and path != "/calendar/":
            entry = self.responses.get(f"http://{host}{path}")
        if entry is not None:
            status = entry["status"]
            if "location" in entry:
                return (
                    status,
                    {"Location": entry["location"], "Content-Type": "text/html"},
                    (
                        f'<html><body>Moved to <a href="{entry["location"]}">here</a></body></html>'
                    ).encode(),
                )
            headers = {"Content-Type": entry["content_type"], **self._validators(entry["file"])}
            return status, headers, self._body(entry["file"])
        site = self.sites[host]
        if self.family == "b":
            from sitegen.family_b import respond_dynamic

            return respond_dynamic(self, site, path, parts.query)
        if path == "/calendar/" and not self.path_calendar:
            return self._calendar(site, parse_qs(parts.query).get("d", [""])[0])
        day = _PATH_DAY.fullmatch(path) if self.path_calendar else None
        if day:
            return self._calendar(site, "-".join(day.groups()))
        return self._not_found(site)

    def _validators(self, rel: str) -> dict[str, str]:
        """``ETag`` (a hash of the body) and ``Last-Modified`` (the body file's time) of a
        static response: what conditional requests are answered against."""
        found = self._validator_cache.get(rel)
        if found is None:
            digest = hashlib.sha1(self._body(rel)).hexdigest()[:16]
            mtime = (self.root / rel).stat().st_mtime
            found = {"ETag": f'"{digest}"', "Last-Modified": formatdate(mtime, usegmt=True)}
            self._validator_cache[rel] = found
        return found

    def _body(self, rel: str) -> bytes:
        body = self._cache.get(rel)
        if body is None:
            body = (self.root / rel).read_bytes()
            self._cache[rel] = body  # a dict write is atomic under the GIL
        return body

    def _ctx(self, site: Site) -> PageContext:
        enc = "gb2312" if site.charset == "gbk" else "utf-8"
        return PageContext(charset=enc, friends=[f for f in self.friends if f[0] != site.home])

    def _encode(self, site: Site, html: str) -> tuple[dict[str, str], bytes]:
        if site.charset == "gbk":
            return {"Content-Type": "text/html"}, html.encode("gbk", "xmlcharrefreplace")
        return {"Content-Type": "text/html; charset=utf-8"}, html.encode("utf-8")

    def _calendar(self, site: Site, value: str) -> tuple[int, dict[str, str], bytes]:
        try:
            day = date.fromisoformat(value) if value else date(2019, 5, 12)
        except ValueError:
            return self._not_found(site)
        items = [tuple(x) for x in self.calendar.get(site.host, {}).get(day.isoformat(), [])]
        prev_url = site.url(calendar_url(day - timedelta(days=1), self.path_calendar))
        next_url = site.url(calendar_url(day + timedelta(days=1), self.path_calendar))
        intro = CALENDAR_INTRO if self.path_calendar else ""
        html = render_calendar(
            site, day, items, self._ctx(site), prev_url=prev_url, next_url=next_url, intro=intro
        )
        headers, body = self._encode(site, html)
        return 200, headers, body

    def _not_found(self, site: Site) -> tuple[int, dict[str, str], bytes]:
        html = render_simple(
            site,
            "页面不存在",
            f'<div class="error"><h2>404 您访问的页面不存在或已被删除</h2>'
            f'<p><a href="{site.home}">返回首页</a></p></div>',
            self._ctx(site),
        )
        headers, body = self._encode(site, html)
        return 404, headers, body


def not_modified(request_headers: Any, headers: dict[str, str]) -> bool:
    """RFC 9110 13.1: ``If-None-Match`` (weak comparison, ``*``) decides when present, else
    ``If-Modified-Since`` against ``Last-Modified``."""
    etag = headers.get("ETag")
    inm = request_headers.get("If-None-Match")
    if inm is not None:
        if etag is None:
            return False
        tags = [t.strip().removeprefix("W/") for t in inm.split(",")]
        return "*" in tags or etag.removeprefix("W/") in tags
    ims, last = request_headers.get("If-Modified-Since"), headers.get("Last-Modified")
    if ims is None or last is None:
        return False
    try:
        return parsedate_to_datetime(last) <= parsedate_to_datetime(ims)
    except (TypeError, ValueError):
        return False


class ProxyHandler(BaseHTTPRequestHandler):
    """Answers absolute-form (proxy) and origin-form requests from a :class:`TestWeb`."""

    protocol_version = "HTTP/1.1"
    server_version = "sitegen/1.0"
    web: TestWeb
    latency: float = 0.0

    def _target(self) -> str:
        if self.path.startswith(("http://", "https://")):
            return self.path
        host = self.headers.get("Host", "").split(":")[0]
        return f"http://{host}{self.path}"

    def _serve(self, head_only: bool = False) -> None:
        if self.latency:
            time.sleep(self.latency)
        try:
            status, headers, body = self.web.respond(self._target())
        except Exception as exc:  # a broken web must not hang the crawler: answer 500
            status, headers = 500, {"Content-Type": "text/plain; charset=utf-8"}
            body = f"sitegen proxy error: {exc!r}\n".encode()
        if status == 200 and not_modified(self.headers, headers):
            status, body = 304, b""
            headers = {k: v for k, v in headers.items() if k in ("ETag", "Last-Modified")}
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head_only:
            self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 (http.server naming)
        self._serve()

    def do_HEAD(self) -> None:  # noqa: N802
        self._serve(head_only=True)

    def do_CONNECT(self) -> None:  # noqa: N802
        self.send_error(405, "sitegen proxy serves plain http only")

    def log_message(self, format: str, *args) -> None:  # quiet by default
        pass


def make_server(
    out_dir: Path, *, port: int = 0, latency_ms: float = 0, host: str = "127.0.0.1"
) -> ThreadingHTTPServer:
    """A ready (not yet serving) threaded proxy server for the web in ``out_dir``."""
    handler = type(
        "BoundProxyHandler",
        (ProxyHandler,),
        {"web": TestWeb(out_dir), "latency": max(0.0, latency_ms) / 1000.0},
    )
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    return server


@contextlib.contextmanager
def serve_in_thread(out_dir: Path, latency_ms: float = 0) -> Iterator[str]:
    """Serve ``out_dir`` in a background thread; yields the proxy URL ``http://127.0.0.1:PORT``."""
    server = make_server(out_dir, latency_ms=latency_ms)
    thread = threading.Thread(target=server.serve_forever, name="sitegen-proxy", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def crawl_command(
    proxy_url: str,
    seeds: list[str],
    topic: Path | str,
    *,
    args: dict[str, object] | None = None,
    settings: dict[str, object] | None = None,
) -> tuple[list[str], dict[str, str]]:
    """``scrapy crawl topic`` through the test web's proxy: the command line (``-a`` spider
    arguments and ``-s`` settings) and its environment. Every host goes through the proxy,
    and ``TOPICRAWL_REDIS_URL`` / ``TOPICRAWL_DB_URL`` of the caller's environment are left
    out, so the settings given here decide where the crawl writes."""
    cmd = [sys.executable, "-m", "scrapy", "crawl", "topic",
           "-a", f"seeds={','.join(seeds)}", "-a", f"topic={topic}"]  # fmt: skip
    for key, value in (args or {}).items():
        cmd += ["-a", f"{key}={value}"]
    for key, value in (settings or {}).items():
        cmd += ["-s", f"{key}={value}"]
    env = {**os.environ, "http_proxy": proxy_url, "HTTP_PROXY": proxy_url, "no_proxy": ""}
    env.pop("TOPICRAWL_REDIS_URL", None)
    env.pop("TOPICRAWL_DB_URL", None)
    return cmd, env


class ServerProcess:
    """``python -m sitegen serve`` in a subprocess (Scrapy's mockserver pattern): the first
    line it prints is its proxy URL, in :attr:`url`. Use as a context manager or call
    :meth:`stop`."""

    def __init__(self, out_dir: Path, *, latency_ms: float = 0):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "sitegen", "serve", str(out_dir), "--port", "0",
             "--latency-ms", str(latency_ms)],
            stdout=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        if not self.url.startswith("http://"):
            self.stop()
            raise RuntimeError(f"sitegen server did not start (printed {self.url!r})")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_forever(
    out_dir: Path, *, port: int = 0, latency_ms: float = 0, host: str = "127.0.0.1"
) -> None:
    """Serve until interrupted; the first stdout line is the proxy URL (then flushed).
    ``host`` is the address bound: 127.0.0.1 by default; ``0.0.0.0`` serves other machines
    and containers too (the compose deployment's test web)."""
    server = make_server(out_dir, port=port, latency_ms=latency_ms, host=host)
    shown = "127.0.0.1" if host in ("", "0.0.0.0") else host
    print(f"http://{shown}:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sitegen")
    sub = parser.add_subparsers(dest="cmd", required=True)
    add_arguments(sub)
    args = parser.parse_args(argv)
    return args.func(args)


def add_arguments(sub) -> None:
    """Add ``build`` and ``serve`` subcommands to an argparse subparsers object."""
    from sitegen.build import SCALES

    b = sub.add_parser("build", help="generate the local test web into OUT")
    b.add_argument("out", type=Path, metavar="OUT", help="directory to build the web in")
    b.add_argument("--scale", choices=sorted(SCALES), default="small", help="size of the web (small)")
    b.add_argument("--seed", type=int, default=0, help="generator seed: another web (0)")
    b.add_argument(
        "--categories",
        nargs="+",
        default=None,
        metavar="CAT",
        help="only these categories (e.g. 时政 体育)",
    )
    b.add_argument(
        "--no-section-in-head",
        dest="section_in_head",
        action="store_false",
        help="leave section and category names out of the articles' <title> and keywords",
    )
    b.add_argument(
        "--family",
        choices=("a", "b"),
        default="a",
        help="template family: a (default) or b (other hosts, URLs, layouts; held out)",
    )
    b.add_argument(
        "--discovery",
        action="store_true",
        help="add sitemaps (robots.txt Sitemap: lines, sitemap indexes) and RSS/Atom feeds",
    )
    b.add_argument(
        "--orphans",
        type=float,
        default=0.0,
        metavar="SHARE",
        help="share of article pages no page links to (only sitemaps and feeds): e.g. 0.3",
    )
    b.add_argument(
        "--documents",
        action="store_true",
        help="real PDF attachments and articles published only as PDF or DOCX",
    )
    b.add_argument(
        "--path-calendar",
        action="store_true",
        help="the calendar trap in the path (/calendar/2019/05/12/), not the query string",
    )
    b.set_defaults(func=_cmd_build)
    s = sub.add_parser("serve", help="serve OUT as an HTTP forward proxy (on 127.0.0.1 unless --host)")
    s.add_argument("out", type=Path, metavar="OUT", help="a directory built by sitegen build")
    s.add_argument("--port", type=int, default=0, help="0 picks a free port (default)")
    s.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to bind (127.0.0.1); 0.0.0.0 lets containers and other machines in",
    )
    s.add_argument("--latency-ms", type=float, default=0.0, help="delay added to every request")
    s.set_defaults(func=_cmd_serve)


def _cmd_build(args) -> int:
    from sitegen.build import build_web

    truth = build_web(
        args.out,
        scale=args.scale,
        seed=args.seed,
        categories=args.categories,
        section_in_head=args.section_in_head,
        family=args.family,
        discovery=args.discovery,
        orphans=args.orphans,
        documents=args.documents,
        path_calendar=args.path_calendar,
    )
    kinds: dict[str, int] = {}
    for page in truth["pages"].values():
        kinds[page["kind"]] = kinds.get(page["kind"], 0) + 1
    summary = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))
    print(
        f"built {len(truth['pages'])} URLs on {len(truth['sites'])} sites into {args.out}: {summary}"
    )
    print(f"ground truth: {Path(args.out) / 'ground_truth.json'}", file=sys.stderr)
    return 0


def _cmd_serve(args) -> int:
    serve_forever(args.out, port=args.port, latency_ms=args.latency_ms, host=args.host)
    return 0
