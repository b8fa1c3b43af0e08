"""A real crawl of a web with a path calendar (issue 11, item 4): the trap guard bounds the
calendar's paths, every article of the web is still fetched, and the calendar's days (the
same text under another date heading) are exact duplicates after cleaning."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from conftest import run_crawl

from crawler import settings as defaults
from crawler.middlewares import path_shape
from dedup.exact import text_fingerprint
from models.store import Store
from sitegen.build import build_web
from sitegen.server import ServerProcess

KEYWORD = {"TOPICRAWL_LINK_SCORER": "relevance.linkscore.KeywordLinkScorer"}


@pytest.fixture(scope="module")
def path_calendar_web(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("web_path_calendar")
    build_web(out, scale="small", seed=7, path_calendar=True)
    return out


def test_path_calendar_is_bounded_without_losing_articles(path_calendar_web, politics_topic,
                                                          tmp_path):  # fmt: skip
    web = path_calendar_web
    truth = json.loads((web / "ground_truth.json").read_text(encoding="utf-8"))
    seeds = truth["seeds"]["portal"] + truth["seeds"]["domain"]
    db = f"sqlite:///{tmp_path / 'crawl.db'}"
    # exact only: the days must be caught by the exact stage, not by SpotSigs
    settings = {**KEYWORD, "TOPICRAWL_DEDUP_METHODS": "exact"}
    with ServerProcess(web) as server:
        result = run_crawl(server.url, seeds, politics_topic, db, args={"max_pages": 2000},
                           settings=settings)  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    store = Store.from_url(db)
    run = store.list_runs()[-1]
    pages = list(store.iter_pages(run.id))
    fetched = {p.url for p in pages} | {p.final_url for p in pages}
    stats = run.stats

    # the calendar (endless) did not take the budget: the crawl ran out of links
    assert stats["finish_reason"] == "finished"
    days = Counter(urlsplit(p.url).hostname for p in pages if "/calendar/" in p.url)
    assert days, "the crawl reached the path calendars"
    assert max(days.values()) <= defaults.TOPICRAWL_MAX_PATH_VARIANTS, days
    assert stats["topicrawl/links/trap/path_variants"] > 0

    # no article lost: every article page of the web was fetched (dated paths included)
    articles = {u for u, m in truth["pages"].items() if m["kind"] == "article"}
    assert articles and not articles - fetched, sorted(articles - fetched)

    # no two documents with the same cleaned text; one calendar document per site at most
    documents = list(store.iter_documents(run.id))
    texts = Counter(text_fingerprint(d.text) for d in documents)
    assert max(texts.values()) == 1
    calendar_docs = Counter(urlsplit(d.url).hostname for d in documents if "/calendar/" in d.url)
    assert max(calendar_docs.values(), default=0) <= 1
    assert stats["topicrawl/dedup/exact_after_cleaning"] > 0
    print(f"calendar pages per site {dict(days)}; {len(articles)} articles fetched; "
          f"{stats['topicrawl/dedup/exact_after_cleaning']} exact duplicates after cleaning")  # fmt: skip
    store.close()


def test_hostile_path_traps_are_bounded(politics_topic, tmp_path):
    """The hostile web's path traps (``sitegen.hostile``): a path calendar ``/calendar/N/``,
    ever deeper ``/echo/N/1/2/…/`` and a link farm's 404s ``/farm/N/I.html`` stay within
    their shape's budget, the crawl ends by itself and stores every page of the truth."""
    from sitegen.hostile import HOST, HostileServerProcess, HostileWeb

    db = f"sqlite:///{tmp_path / 'crawl.db'}"
    with HostileServerProcess("--farm-links", "500", "--slow", "1") as web:
        result = run_crawl(web.url, [f"http://{HOST}/"], politics_topic, db,
                           args={"max_pages": 1000}, settings={"DOWNLOAD_TIMEOUT": 5})  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    store = Store.from_url(db)
    run = store.list_runs()[-1]
    urls = {p.url for p in store.iter_pages(run.id)}
    assert run.stats["finish_reason"] == "finished"
    traps = Counter(path_shape(u) for u in urls
                    if urlsplit(u).path.split("/")[1] in ("calendar", "echo", "farm"))  # fmt: skip
    assert len(traps) >= 3 and max(traps.values()) <= defaults.TOPICRAWL_MAX_PATH_VARIANTS, traps
    assert run.stats["topicrawl/links/trap/path_variants"] > 0
    assert HostileWeb().truth() <= urls
    store.close()
