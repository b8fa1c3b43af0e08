"""The cost of one hostile page (issue 11): a page of N links, parsed as the topic spider
parses it (decode, extract, link extraction), with and without TOPICRAWL_MAX_HTML_BYTES.

    python bench/hostile_page.py [--links 200000] [--max-bytes 1000000]
    python bench/hostile_page.py --crawl [--links 200000] [--repeats 3]

Each case runs in a fresh process, so its peak RSS is its own. Prints seconds and the peak
RSS growth in MB; no figure is asserted anywhere.

``--crawl``: whole ``scrapy crawl topic`` processes (the defaults, SQLite) through the hostile
web (:mod:`sitegen.hostile`), side by side: seeded with its link farm page (``/farm/1.html``,
N links) against seeded with an article, each with ``max_pages`` 3 — wall time and peak
RSS of the process (``/usr/bin/time``), so the difference is what the farm page costs a
crawl (the issue's target: < 10 s and < 300 MB).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CHILD = r"""
import json, resource, sys, time
from scrapy.http import HtmlResponse
from scrapy.linkextractors import LinkExtractor
from topicrawl.extract import decode_html, extract_page
n, cap = int(sys.argv[1]), int(sys.argv[2])
html = ("<html><body><article><p>中央政府会议</p>"
        + "".join(f'<a href="/p/{i}.html">link {i}</a>' for i in range(n))
        + "</article></body></html>")
body = html.encode()
size = len(body)
r0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
if cap:
    body = body[:cap]
text, codec = decode_html(body, "utf-8")
page = HtmlResponse(url="http://a.example/", body=text.encode(), encoding="utf-8")
extract_page(page.text, page.url)
links = LinkExtractor(deny_extensions=[], unique=True, strip=True).extract_links(page)
secs = time.perf_counter() - t
r1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"bytes": size, "seconds": round(secs, 2), "links": len(links),
                  "rss_growth_mb": round((r1 - r0) / 1024)}))
"""


def run(links: int, cap: int) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(links), str(cap)],
                         capture_output=True, text=True, check=True)  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


TOPIC = 'name = "时政"\nlanguage = "zh"\n\n[words]\n"政府" = 1.0\n"会议" = 0.8\n"中央" = 0.8\n'


def crawl(web_url: str, seed: str, topic: Path, db: str) -> tuple[float, float, str]:
    """One crawl process from ``seed``: (wall seconds, peak RSS in MB, its finish reason)."""
    from sitegen.server import crawl_command

    cmd, env = crawl_command(web_url, [seed], topic, args={"max_pages": 3},
                             settings={"TOPICRAWL_DB_URL": db, "LOG_LEVEL": "INFO",
                                       "DOWNLOAD_TIMEOUT": 5})  # fmt: skip
    out = subprocess.run(["/usr/bin/time", "-f", "TIME %e %M", *cmd], env=env,
                         capture_output=True, text=True, cwd=ROOT)  # fmt: skip
    wall, rss = re.findall(r"TIME ([\d.]+) (\d+)", out.stderr)[-1]
    reason = re.findall(r"'finish_reason': '(\w+)'", out.stderr)
    return float(wall), int(rss) / 1024, reason[-1] if reason else f"exit {out.returncode}"


def crawls(links: int, repeats: int) -> None:
    from sitegen.hostile import HOST, HostileServerProcess

    with tempfile.TemporaryDirectory() as tmp:
        topic = Path(tmp) / "topic.toml"
        topic.write_text(TOPIC, encoding="utf-8")
        with HostileServerProcess("--farm-links", str(links), "--slow", "1") as web:
            rows = {"article": [], "farm": []}
            for r in range(repeats):  # interleaved
                for label, path in (("article", "/a/1.html"), ("farm", "/farm/1.html")):
                    db = f"sqlite:///{tmp}/{label}{r}.db"
                    rows[label].append(crawl(web.url, f"http://{HOST}{path}", topic, db))
    for label, got in rows.items():
        print(f"seeded with the {label:7}: " + ", ".join(
            f"{w:.1f} s {m:.0f} MB ({why})" for w, m, why in got))  # fmt: skip
    dw = [f[0] - a[0] for a, f in zip(rows["article"], rows["farm"], strict=True)]
    dm = [f[1] - a[1] for a, f in zip(rows["article"], rows["farm"], strict=True)]
    print(f"the farm page of {links:,} links costs the crawl +{max(dw):.1f} s and "
          f"+{max(dm):.0f} MB peak RSS at most (pairs: "
          + ", ".join(f"+{w:.1f} s/+{m:.0f} MB" for w, m in zip(dw, dm, strict=True)) + ")")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--links", type=int, default=200_000)
    ap.add_argument("--max-bytes", type=int, default=1_000_000)
    ap.add_argument("--crawl", action="store_true", help="whole crawls through the hostile web")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    if args.crawl:
        crawls(args.links, args.repeats)
        return
    for label, cap in (("capped", args.max_bytes), ("uncapped", 0)):
        r = run(args.links, cap)
        print(f"{label:9} page {r['bytes'] / 1e6:.1f} MB: {r['seconds']} s, "
              f"+{r['rss_growth_mb']} MB peak RSS, {r['links']} links extracted")  # fmt: skip


if __name__ == "__main__":
    main()
