"""The cost of one hostile page (issue 11): a page of N links, parsed as the topic spider
parses it (decode, extract, link extraction), with and without TOPICRAWL_MAX_HTML_BYTES.

    python bench/hostile_page.py [--links 200000] [--max-bytes 1000000]

Each case runs in a fresh process, so its peak RSS is its own. Prints seconds and the peak
RSS growth in MB; no figure is asserted anywhere.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--links", type=int, default=200_000)
    ap.add_argument("--max-bytes", type=int, default=1_000_000)
    args = ap.parse_args()
    for label, cap in (("capped", args.max_bytes), ("uncapped", 0)):
        r = run(args.links, cap)
        print(f"{label:9} page {r['bytes'] / 1e6:.1f} MB: {r['seconds']} s, "
              f"+{r['rss_growth_mb']} MB peak RSS, {r['links']} links extracted")  # fmt: skip


if __name__ == "__main__":
    main()
