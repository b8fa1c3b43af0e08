"""A hostile local web: articles mixed with the pages that hurt crawlers (issue 11).

Served as an HTTP forward proxy on 127.0.0.1 like :mod:`sitegen.server` (any host name, no
DNS), from one host, :data:`HOST`:

``/a/N.html``       an article (unique text; the ground truth); links to the next articles
``/stray/N.html``   an article declared UTF-8 with one invalid byte (ground truth as well)
``/calendar/N/``    a path calendar: every day the same text and a link to the next day
``/echo/N/…/``      endless path variants: each page links one more path segment deeper
``/bomb.html``      a gzip bomb: ``Content-Encoding: gzip``, 1 GB of zeros in ~1 MB
``/loop/N``         a redirect loop (``/loop/0`` -> ``/loop/1`` -> ``/loop/0``)
``/slow/N.html``    an answer that takes ``slow`` seconds (longer than the crawl's timeout)
``/bin/N.html``     random bytes served as ``text/html``
``/deep/N.html``    20,000 nested ``<div>`` around a short text
``/farm/N.html``    a link farm of ``farm_links`` links

With ``endless`` the articles never end (article N links ``3N+1 … 3N+3``), which is what the
soak (``bench/soak.py``) crawls. The articles repeat the 598 news texts of the shared corpus,
so an endless crawl has at most 598 distinct pages to accept; with ``distinct`` (the soak's
web) two articles in three (N not a multiple of 3) are new text instead: six paragraphs of
People's Daily (January 1998, mostly politics) drawn by N, so the accepted pages and the
dedup index keep growing, while article 3N repeats news text N (mod 598), from N = 598 on
near-duplicates. A finite web (``articles`` pages) is what the fault tests
crawl, and :meth:`HostileWeb.truth` lists the pages that must be stored, once each.

    python -m sitegen.hostile [--articles 60] [--endless [--distinct]] [--slow 5] [--port 0]
"""

from __future__ import annotations

import argparse
import gzip
import io
import random
import re
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

HOST = "hostile.example.cn"
#: the hostile entry points a page links to (N is filled in)
HOSTILE = ("/calendar/{n}/", "/echo/{n}/", "/bomb.html", "/loop/0", "/slow/{n}.html",
           "/bin/{n}.html", "/deep/{n}.html", "/farm/{n}.html")  # fmt: skip
SENTENCES = (
    "国务院召开常务会议，部署进一步做好经济工作。",
    "中央政府要求各地区各部门认真贯彻落实会议精神。",
    "全国人大常委会审议了多部法律草案和有关报告。",
    "政协委员围绕民生问题建言献策，提出多项建议。",
    "会议强调，要坚持稳中求进工作总基调，推动高质量发展。",
    "有关部门负责人介绍了政策措施的主要内容和实施安排。",
    "地方政府加快推进重大项目建设，保障和改善民生。",
    "外交部发言人就国际形势回答了记者提问。",
)


def _bomb(size: int = 1 << 30) -> bytes:
    """``size`` zero bytes, gzip-compressed (1 GB -> about 1 MB)."""
    buf = io.BytesIO()
    chunk = bytes(1 << 20)
    with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=9) as fh:
        for _ in range(size // len(chunk)):
            fh.write(chunk)
    return buf.getvalue()


def _daily_paragraphs(min_chars: int = 40) -> list[str]:
    """Paragraphs of People's Daily (``corpus/peoples_daily_199801.txt``, word/tag tokens
    joined back into text) of at least ``min_chars`` characters; none when it is absent."""
    from topicrawl.data import data_dir

    path = data_dir() / "corpus" / "peoples_daily_199801.txt"
    if not path.exists():
        return []
    paras = (re.sub(r"/[A-Za-z]+\s*", "", line).replace(" ", "")
             for line in path.read_text(encoding="utf-8").splitlines())  # fmt: skip
    return [p for p in paras if len(p) >= min_chars]


def _corpus_texts(limit: int = 2000) -> list[str]:
    """News texts of the shared data (:mod:`topicrawl.data`), or none when it is absent."""
    from topicrawl.data import data_dir

    path = data_dir() / "corpus" / "cnews_train.txt"
    if not path.exists():
        return []
    texts = []
    for line in path.read_text(encoding="utf-8").splitlines():
        label, _, text = line.partition("\t")
        if text:
            texts.append(text.replace("\u3000", "")[:limit])
    return texts


class HostileWeb:
    """The pages of the hostile web; :meth:`respond` answers one URL."""

    def __init__(self, articles: int = 60, *, endless: bool = False, slow: float = 5.0,
                 farm_links: int = 200_000, bomb_bytes: int = 1 << 30, seed: int = 7,
                 plain: bool = False, distinct: bool = False):  # fmt: skip
        self.articles = articles
        self.endless = endless
        self.slow = slow
        self.farm_links = farm_links
        self.seed = seed
        self.plain = plain  # articles only: no hostile page is linked
        self.distinct = distinct  # new text past the corpus's texts (see the module)
        self._daily: list[str] | None = None
        self._bomb_bytes = bomb_bytes
        self._bomb: bytes | None = None
        self._corpus: list[str] | None = None

    def url(self, path: str) -> str:
        return f"http://{HOST}{path}"

    def truth(self) -> set[str]:
        """URLs of the pages that must be stored (the finite web): every article, and every
        stray-byte article (one per 10 articles)."""
        arts = {self.url(f"/a/{n}.html") for n in range(self.articles)}
        return arts | {self.url(f"/stray/{n}.html") for n in range(0, self.articles, 10)}

    # -- pages -------------------------------------------------------------------------------
    def text(self, n: int) -> str:
        """Article ``n``'s text: a news text of the shared corpus (``corpus/cnews_train.txt``,
        in turn; else a mix of a few sentences) and its number. With ``distinct``, article
        ``n`` not a multiple of 3 is six People's Daily paragraphs drawn by ``n``, and article
        ``3m`` has news text ``m``."""
        if self._corpus is None:
            self._corpus = _corpus_texts()
        n_text = n
        if self.distinct and n % 3:
            if self._daily is None:
                self._daily = _daily_paragraphs()
            if self._daily:
                rng = random.Random(self.seed * 1_000_003 + n)
                body = "".join(rng.sample(self._daily, 6))
                return f"第{n}号公告。{body}本文编号{n}，发布于政务公开栏目。"
        elif self.distinct:
            n_text = n // 3
        if self._corpus:
            body = self._corpus[n_text % len(self._corpus)]
        else:
            rng = random.Random(self.seed * 1_000_003 + n)
            body = "".join(rng.choice(SENTENCES) for _ in range(40))
        return f"第{n}号公告。{body}本文编号{n}，发布于政务公开栏目。"

    def _next(self, n: int) -> list[int]:
        nxt = [3 * n + k for k in (1, 2, 3)]
        return nxt if self.endless else [m for m in nxt if m < self.articles]

    def _links(self, n: int) -> str:
        links = [(f"/a/{m}.html", self.headline(m)) for m in self._next(n)]
        if n % 10 == 0 and (self.endless or n < self.articles):
            links.append((f"/stray/{n}.html", self.headline(n)))
        if n % 5 == 0 and not self.plain:  # one hostile entry point per five articles, in turn
            links.append((HOSTILE[(n // 5) % len(HOSTILE)].format(n=n), "政府工作会议日程"))
        return "".join(f'<li><a href="{href}">{anchor}</a></li>' for href, anchor in links)

    def headline(self, n: int) -> str:
        """The anchor text of article ``n``: the start of its text."""
        return self.text(n)[:30]

    @staticmethod
    def _page(title: str, text: str, links: str = "") -> str:
        paras = "".join(f"<p>{s}。</p>" for s in text.split("。") if s)
        return (
            f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{title}</title></head>"
            f"<body><div class='nav'><a href='/'>首页</a></div><article><h1>{title}</h1>"
            f"{paras}</article><ul class='links'>{links}</ul></body></html>"
        )

    def respond(self, url: str) -> tuple[int, dict[str, str], bytes]:
        """``(status, headers, body)`` of ``url``; the slow page sleeps before it answers."""
        parts = urlsplit(url)
        path = parts.path or "/"
        html = {"Content-Type": "text/html; charset=utf-8"}
        seg = [s for s in path.split("/") if s]
        num = int("".join(c for c in (seg[1] if len(seg) > 1 else "0") if c.isdigit()) or 0)
        if parts.hostname != HOST:
            return 502, {"Content-Type": "text/plain"}, b"unknown host"
        if path == "/robots.txt":
            return 404, {"Content-Type": "text/plain"}, b""
        if path == "/":
            links = "".join(f'<li><a href="/a/{m}.html">{self.headline(m)}</a></li>'
                            for m in range(3))  # fmt: skip
            body = self._page("政务公开", "首页。政务公开栏目发布政府信息。", links)
            return 200, html, body.encode()
        if seg[0] == "a" and (self.endless or num < self.articles):
            body = self._page(f"公告{num}", self.text(num), self._links(num))
            return 200, html, body.encode()
        if seg[0] == "stray" and (self.endless or num < self.articles):
            body = self._page(f"通报{num}", "通报。" + self.text(num)).encode()
            cut = body.index(b"<article>") + 40
            return 200, html, body[:cut] + b"\xff" + body[cut:]
        if seg[0] == "calendar":  # the same text on every day: a path trap
            body = self._page("活动日历", "活动日历。本日暂无活动安排，请关注后续通知。",
                              f'<li><a href="/calendar/{num + 1}/">下一天</a></li>')  # fmt: skip
            return 200, html, body.encode()
        if seg[0] == "echo":  # endless path variants
            deeper = path + f"{len(seg)}/"
            body = self._page("栏目", "栏目。本栏目内容正在建设中。",
                              f'<li><a href="{deeper}">更多</a></li>')  # fmt: skip
            return 200, html, body.encode()
        if path == "/bomb.html":
            if self._bomb is None:
                self._bomb = _bomb(self._bomb_bytes)
            return 200, {**html, "Content-Encoding": "gzip"}, self._bomb
        if seg[0] == "loop":
            return 302, {"Location": f"/loop/{1 - min(num, 1)}"}, b""
        if seg[0] == "slow":
            time.sleep(self.slow)
            return 200, html, self._page("慢", "慢页面。" + self.text(num)).encode()
        if seg[0] == "bin":
            return 200, html, random.Random(num).randbytes(200_000)
        if seg[0] == "deep":
            body = "<div>" * 20_000 + "深层页面。" + "</div>" * 20_000
            return 200, html, f"<html><body>{body}</body></html>".encode()
        if seg[0] == "farm":
            links = "".join(f'<a href="/farm/{num}/{i}.html">{i}</a>'
                            for i in range(self.farm_links))  # fmt: skip
            return 200, html, f"<html><body><p>链接农场</p>{links}</body></html>".encode()
        return 404, html, self._page("404", "页面不存在。").encode()


class HostileHandler(BaseHTTPRequestHandler):
    """Answers absolute-form (proxy) and origin-form requests from a :class:`HostileWeb`."""

    protocol_version = "HTTP/1.1"
    web: HostileWeb

    def do_GET(self) -> None:  # noqa: N802 (http.server naming)
        target = self.path if self.path.startswith("http") else (
            f"http://{self.headers.get('Host', HOST).split(':')[0]}{self.path}")  # fmt: skip
        status, headers, body = self.web.respond(target)
        try:
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):  # the crawler gave up (timeout, size)
            pass

    def log_message(self, format: str, *args) -> None:  # quiet
        pass


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:  # a crawler that hung up
        pass


def make_server(web: HostileWeb, port: int = 0) -> ThreadingHTTPServer:
    handler = type("BoundHostileHandler", (HostileHandler,), {"web": web})
    server = _QuietServer(("127.0.0.1", port), handler)
    server.daemon_threads = True
    return server


class HostileServerProcess:
    """``python -m sitegen.hostile`` in a subprocess; :attr:`url` is its proxy URL."""

    def __init__(self, *args: str):
        self.proc = subprocess.Popen([sys.executable, "-m", "sitegen.hostile", *args],
                                     stdout=subprocess.PIPE, text=True)  # fmt: skip
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        if not self.url.startswith("http://"):
            self.stop()
            raise RuntimeError(f"hostile web did not start (printed {self.url!r})")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)

    def __enter__(self) -> HostileServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sitegen.hostile", description=__doc__.split("\n")[0])
    ap.add_argument("--articles", type=int, default=60, help="articles of the finite web")
    ap.add_argument("--endless", action="store_true", help="articles never end (3 links each)")
    ap.add_argument("--distinct", action="store_true",
                    help="two articles in three are new text (People's Daily paragraphs), "
                         "one in three a news text: pages keep being accepted")  # fmt: skip
    ap.add_argument("--slow", type=float, default=5.0, help="seconds the slow page takes")
    ap.add_argument("--farm-links", type=int, default=200_000, help="links on a link farm page")
    ap.add_argument("--plain", action="store_true", help="articles only, nothing hostile")
    ap.add_argument("--port", type=int, default=0, help="port to listen on (0: any free)")
    args = ap.parse_args(argv)
    if not _corpus_texts(10):
        print("sitegen.hostile: corpus/cnews_train.txt not found under the shared data "
              "(set TOPICRAWL_DATA): every article is a reshuffle of 8 sentences, so all are "
              "near-duplicates of each other", file=sys.stderr, flush=True)  # fmt: skip
    web = HostileWeb(args.articles, endless=args.endless, slow=args.slow,
                     farm_links=args.farm_links, plain=args.plain,
                     distinct=args.distinct)  # fmt: skip
    server = make_server(web, args.port)
    print(f"http://127.0.0.1:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
