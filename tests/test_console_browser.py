"""End to end in a real browser: Playwright drives Debian's Chromium (headless) through the
console while it crawls the local test web.

Skipped when /usr/bin/chromium is missing, except under CI=true (``.ci/run`` installs it).
Never ``playwright install``: the browser is the system's.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import CI, ROOT

from models.store import Store
from sitegen.server import ServerProcess

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(
        not Path(CHROMIUM).exists() and not CI,
        reason=f"{CHROMIUM} not installed (apt-get install -y chromium)",
    ),
]

TOPIC = """\
# 时政: the politics section of the local test web (browser test)
name = "时政浏览器"
language = "zh"

# topic words; the test changes 中央
[words]
"政治" = 1.0   # the main word
"中央" = 0.8   # central government
"会议" = 0.6
"政府" = 0.8

[page]
threshold = 0.1  # below: off-topic

[priority]
mode = "paper"  # formula 3 scores every page through the word weights (HowNet similarity)
"""


def text_of(page) -> str:
    return page.inner_text("body")


def shot(page, out: Path, name: str, *expected: str) -> Path:
    """Screenshot of the page, checked: the expected texts are on it and the image is not
    blank (many colours)."""
    from PIL import Image

    path = out / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    body = text_of(page)
    for want in expected:
        assert want in body, f"{name}: {want!r} not on the page"
    with Image.open(path) as img:
        assert img.size[0] >= 800
        colours = img.convert("RGB").getcolors(maxcolors=1 << 20)
        assert colours is None or len(colours) > 50, f"{name}: the screenshot looks blank"
    return path


@pytest.fixture
def console(tmp_path: Path, small_web: Path) -> Iterator[dict]:
    topics = tmp_path / "topics"
    topics.mkdir()
    (topics / "politics.toml").write_text(TOPIC, encoding="utf-8")
    db = f"sqlite:///{tmp_path / 'console.db'}"
    with ServerProcess(small_web, latency_ms=60) as web:
        env = {**os.environ, "http_proxy": web.url, "HTTP_PROXY": web.url, "no_proxy": ""}
        env.pop("TOPICRAWL_DB_URL", None)
        env.pop("TOPICRAWL_REDIS_URL", None)
        env.pop("TOPICRAWL_CONSOLE_TOKEN", None)
        cmd = [sys.executable, "-m", "topicrawl.cli", "serve", "--port", "0", "--db", db,
               "--topics", str(topics), "--work-dir", str(tmp_path / "work"),
               "--progress-interval", "1",
               "--crawl-setting", "AUTOTHROTTLE_ENABLED=False",
               "--crawl-setting", "DOWNLOAD_DELAY=0",
               "--crawl-setting", "CONCURRENT_REQUESTS_PER_DOMAIN=4"]  # fmt: skip
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        try:
            assert url.startswith("http://127.0.0.1:"), url
            yield {"url": url, "db": db, "topics": topics, "web": small_web}
        finally:
            proc.terminate()  # the console stops its crawls (SIGINT) before it exits
            proc.wait(timeout=90)


@pytest.fixture
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


def start_crawl(page, base: str, seeds: list[str], max_pages: int) -> int:
    page.goto(base + "/")
    page.fill("textarea[name=seeds]", "\n".join(seeds))
    page.select_option("select[name=topic]", "politics.toml")
    page.fill("input[name=max_pages]", str(max_pages))
    page.click("#start-form button[type=submit]")
    page.wait_for_url(re.compile(r"/runs/\d+$"), timeout=120_000)
    return int(page.url.rsplit("/", 1)[-1])


def number(page, selector: str) -> int:
    return int(page.inner_text(selector).strip() or 0)


def test_crawl_watch_audit_label_edit_and_crawl_again(console, browser, tmp_path):
    base = console["url"]
    out = Path(os.environ.get("TOPICRAWL_SCREENSHOT_DIR") or tmp_path / "shots")
    out.mkdir(parents=True, exist_ok=True)
    truth = json.loads((console["web"] / "ground_truth.json").read_text(encoding="utf-8"))
    seeds = truth["seeds"]["portal"]
    page = browser.new_page(viewport={"width": 1280, "height": 900})

    # runs page, start a crawl of the local test web from the form
    page.goto(base + "/")
    shot(page, out, "runs-empty", "Runs", "Start a crawl", "no runs yet")
    run1 = start_crawl(page, base, seeds, 100)

    # the live page: the figures grow while it runs
    first = number(page, "#fig-pages")
    page.wait_for_function(
        f"Number(document.getElementById('fig-pages').textContent) > {first} + 5",
        timeout=120_000,
    )
    page.wait_for_selector("#chart-harvest path.series", state="attached", timeout=30_000)
    shot(page, out, "live", f"Run {run1}", "Harvest rate", "Hosts", "Links per reason")
    page.wait_for_function(
        "document.getElementById('state').textContent.trim() == 'finished'", timeout=180_000
    )
    assert number(page, "#fig-pages") >= 40
    page.wait_for_selector("#chart-frontier path.series", state="attached", timeout=30_000)
    assert number(page, "#fig-accepted") > 0
    shot(page, out, "finished", "finished", "Duplicates per method", "Frontier size")

    # an accepted page and why
    page.goto(f"{base}/runs/{run1}/pages?kind=accepted")
    shot(page, out, "pages-accepted", "accepted")
    page.click("#pages tbody tr:first-child td:nth-child(5) a")
    page.wait_for_selector("#explain-table", timeout=60_000)
    why = page.inner_text("#why")
    assert why.startswith("accepted: relevance") and "≥ page threshold 0.100" in why
    assert "f_info" in page.inner_text("#link-score") or "seed" in page.inner_text("#link-score")
    shot(page, out, "page-accepted", "accepted: relevance", "main text", "formula 3", "Raw HTML")

    # a dropped (off-topic) page and why
    page.goto(f"{base}/runs/{run1}/pages?kind=off_topic")
    page.click("#pages tbody tr:first-child td:nth-child(5) a")
    page.wait_for_selector("#explain-table", timeout=60_000)
    why = page.inner_text("#why")
    assert why.startswith("dropped: off-topic, relevance") and "< page threshold 0.100" in why
    dropped_url = page.inner_text("h1 + p a[rel=noreferrer]")

    # label it irrelevant; the label is listed and exported
    page.click("#label-page-irrelevant")
    page.wait_for_selector("td.label-page:has-text('irrelevant')")
    shot(page, out, "page-dropped", "dropped: off-topic", "irrelevant", "Label for topic")
    page.goto(base + "/labels")
    shot(page, out, "labels", "时政浏览器", dropped_url, "irrelevant")
    tsv = page.request.get(f"{base}/api/labels.tsv?topic=时政浏览器").text()
    assert tsv == f"{dropped_url}\t0\n"

    # edit a word's weight: a bad value is shown at the field, then a good one is saved
    path = console["topics"] / "politics.toml"
    page.goto(base + "/topics/politics.toml")
    row = page.locator("#words-words tbody tr", has=page.locator("input.word[value='中央']"))
    row.locator("input.weight").fill("much")
    page.wait_for_function("document.getElementById('valid-state').textContent.includes('problem')")
    assert "must be a number" in row.inner_text()
    row.locator("input.weight").fill("0.3")
    page.wait_for_function("document.getElementById('valid-state').textContent == 'valid'")
    page.click("#show-diff")
    page.wait_for_function("document.getElementById('diff').textContent.includes('0.3')")
    diff = page.inner_text("#diff")
    assert '-"中央" = 0.8' in diff and '+"中央" = 0.3' in diff
    shot(page, out, "topic-diff", "Topic file politics.toml", '+"中央" = 0.3')
    assert path.read_text(encoding="utf-8") == TOPIC  # nothing written before saving
    page.click("#save")
    page.wait_for_function("document.getElementById('saved').textContent == 'saved'")
    saved = path.read_text(encoding="utf-8")
    assert '"中央" = 0.3   # central government' in saved
    assert saved == TOPIC.replace('"中央" = 0.8', '"中央" = 0.3')  # comments and layout kept

    # a second crawl uses the new weight; each run keeps the snapshot it ran with
    run2 = start_crawl(page, base, seeds, 15)
    page.wait_for_function(
        "document.getElementById('state').textContent.trim() == 'finished'", timeout=180_000
    )
    page.click("text=Topic snapshot this run crawled with")
    shot(page, out, "second-run", f"Run {run2}", '"中央" = 0.3')
    store = Store.from_url(console["db"])
    r1, r2 = store.get_run(run1), store.get_run(run2)
    assert '"中央" = 0.8' in r1.topic_text and '"中央" = 0.3' in r2.topic_text
    first_pages = {p.url: p.relevance for p in store.iter_pages(run1)}
    seed_scores = [(first_pages[p.url], p.relevance) for p in store.iter_pages(run2)
                   if p.url in seeds and p.url in first_pages]  # fmt: skip
    assert seed_scores and all(a != b for a, b in seed_scores)  # scored with the new weight
