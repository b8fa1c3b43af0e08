"""Real crawls of the small generated web through the local proxy, into SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_crawl

from crawler.journal import journal_segments
from models.store import Store
from sitegen.server import ServerProcess

KEYWORD = {"TOPICRAWL_LINK_SCORER": "relevance.linkscore.KeywordLinkScorer"}


def ground_truth(web: Path) -> dict:
    return json.loads((web / "ground_truth.json").read_text(encoding="utf-8"))


def crawl(proxy, web, politics_topic, db_url, **kw):
    truth = ground_truth(web)
    seeds = truth["seeds"]["portal"]
    result = run_crawl(
        proxy, seeds, politics_topic, db_url, settings={**KEYWORD, **kw.pop("settings", {})}, **kw
    )
    assert result.returncode == 0, result.stderr[-3000:]
    store = Store.from_url(db_url)
    run = store.list_runs()[-1]
    return truth, store, run, result


@pytest.fixture(scope="module")
def sqlite_crawl(proxy, small_web, politics_topic, tmp_path_factory):
    db = f"sqlite:///{tmp_path_factory.mktemp('db') / 'crawl.db'}"
    return crawl(proxy, small_web, politics_topic, db)


def test_pages_reach_sqlite_with_text_title_and_charset(sqlite_crawl):
    truth, store, run, _ = sqlite_crawl
    pages = {p.url: p for p in store.iter_pages(run.id)}
    articles = [u for u, meta in truth["pages"].items() if meta["kind"] == "article" and u in pages]
    assert len(articles) >= 20
    for url in articles:
        page, meta = pages[url], truth["pages"][url]
        assert page.text and len(page.text) > 50, url
        assert page.title and meta["title"] and meta["title"][:8] in page.title, url
        assert "\ufffd" not in page.text, url
    gbk = [
        u for u in articles if truth["pages"][u]["encoding"].lower() in ("gbk", "gb2312", "gb18030")
    ]
    assert gbk, "the small web has GBK article pages and the crawl reached them"
    for url in gbk:
        assert pages[url].charset == "gb18030"
        assert truth["pages"][url]["title"][:8] in pages[url].text + pages[url].title


def test_wrongly_declared_pages_decode(sqlite_crawl):
    truth, store, run, _ = sqlite_crawl
    pages = {p.url: p for p in store.iter_pages(run.id)}
    lying = [u for u, m in truth["pages"].items()
             if u in pages and m.get("declared") and m["kind"] == "article"
             and m["declared"].lower().replace("gb2312", "gbk") != m["encoding"].lower().replace("gb2312", "gbk")]  # fmt: skip
    assert lying, "the small web has pages with a wrong charset declaration"
    for url in lying:
        assert "\ufffd" not in (pages[url].text or ""), url
        assert truth["pages"][url]["title"][:6] in (pages[url].title or ""), url


def test_robots_trap_and_non_html(sqlite_crawl):
    truth, store, run, _ = sqlite_crawl
    urls = {p.url for p in store.iter_pages(run.id)}
    assert truth["disallowed"]
    assert not urls & set(truth["disallowed"])
    for trap in truth["traps"]:
        trap_pages = [u for u in urls if u.startswith(trap)]
        assert len(trap_pages) <= 30, f"the trap guard bounds the calendar {trap}"
    assert run.stats.get("topicrawl/links/trap/query_variants", 0) > 0
    binaries = {u for u, m in truth["pages"].items() if m["kind"] == "binary"}
    assert binaries and not urls & binaries
    stats = run.stats
    assert stats["finish_reason"] == "finished"
    assert stats.get("robotstxt/forbidden", 0) >= 1
    assert stats.get("topicrawl/links/non_html", 0) + stats.get("topicrawl/non_html", 0) >= 1
    # the default web's PDF attachments are stubs without an xref table: downloaded (PDFs
    # are read), counted as broken, not stored
    assert stats.get("topicrawl/documents/pdf_broken", 0) >= 1
    broken = stats.get("topicrawl/pages/broken", 0)
    assert stats["topicrawl/pages/fetched"] - broken == store.count_pages(run.id)


def test_redirects_are_stored_under_the_requested_url(proxy, small_web, politics_topic, tmp_path):
    truth = ground_truth(small_web)
    redirects = {u: m["location"] for u, m in truth["pages"].items() if m["kind"] == "redirect"}
    seeds = sorted(redirects)[:3]
    db = f"sqlite:///{tmp_path / 'redirects.db'}"
    result = run_crawl(proxy, seeds, politics_topic, db, args={"max_depth": 0}, settings=KEYWORD)
    assert result.returncode == 0, result.stderr[-3000:]
    store = Store.from_url(db)
    pages = {p.url: p for p in store.iter_pages(store.list_runs()[-1].id)}
    assert set(pages) == set(seeds)
    for url in seeds:
        assert pages[url].final_url == redirects[url]
        assert pages[url].status == 200 and pages[url].text


def test_depth_and_page_limits(proxy, small_web, politics_topic, tmp_path):
    db = f"sqlite:///{tmp_path / 'limits.db'}"
    _, store, run, _ = crawl(proxy, small_web, politics_topic, db, args={"max_pages": 15})
    assert store.count_pages(run.id) == 15
    assert run.stats["finish_reason"] == "max_pages"
    db2 = f"sqlite:///{tmp_path / 'depth.db'}"
    _, store2, run2, _ = crawl(proxy, small_web, politics_topic, db2, args={"max_depth": 1})
    depths = {p.depth for p in store2.iter_pages(run2.id)}
    assert depths <= {0, 1} and 1 in depths


def test_export_round_trips(sqlite_crawl, tmp_path):
    from topicrawl.cli import main

    _, store, run, _ = sqlite_crawl
    db = store.engine.url.render_as_string(False)
    out = tmp_path / "corpus.jsonl"
    assert (
        main(["export", "--run", str(run.id), "--format", "jsonl", "--out", str(out), "--db", db])
        == 0
    )
    exported = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    stored = list(store.iter_documents(run.id))
    assert len(exported) == len(stored) > 0
    assert [(d["url"], d["text"]) for d in exported] == [(d.url, d.text) for d in stored]
    txt = tmp_path / "corpus.txt"
    assert (
        main(["export", "--run", str(run.id), "--format", "txt", "--out", str(txt), "--db", db])
        == 0
    )
    assert txt.read_text(encoding="utf-8").count("\n\n") == len(stored)


def test_bad_topic_file_fails_before_the_first_request(proxy, small_web, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\n[words\n"政治" = 1\n', encoding="utf-8")
    result = run_crawl(proxy, ["http://example.invalid/"], bad, f"sqlite:///{tmp_path / 'x.db'}")
    assert result.returncode == 2
    assert "bad.toml:2:" in result.stderr
    assert "Crawled" not in result.stderr


@pytest.mark.postgres
def test_crawl_into_postgresql(proxy, small_web, politics_topic, pg_url):
    truth, store, run, _ = crawl(proxy, small_web, politics_topic, pg_url, args={"max_pages": 40})
    assert store.count_pages(run.id) == 40
    pages = list(store.iter_pages(run.id))
    assert all(p.html for p in pages)
    assert store.count_documents(run.id) > 0
    assert run.stats["finish_reason"] == "max_pages"


@pytest.mark.parametrize("how", ["SIGINT", "SIGKILL"])
def test_interrupted_crawl_resumes_without_storing_a_page_twice(
    proxy, small_web, politics_topic, sqlite_crawl, tmp_path, how
):
    """Ctrl-C (SIGINT) or kill -9 (SIGKILL) a JOBDIR crawl midway, resume it: the same pages
    as an uninterrupted crawl, none stored twice. After SIGKILL nothing was written at exit:
    the frontier is in SQLite queues, the unwritten batch in a journal, and the requests that
    were in flight are requested again."""
    import signal
    import subprocess
    import time

    from conftest import ROOT, crawl_command

    truth, full_store, full_run, _ = sqlite_crawl
    expected = {p.url for p in full_store.iter_pages(full_run.id)}
    db = f"sqlite:///{tmp_path / 'resume.db'}"
    settings = {**KEYWORD, "JOBDIR": str(tmp_path / "job"), "TOPICRAWL_DB_BATCH": 5}
    slow = ServerProcess(small_web, latency_ms=150)
    try:
        cmd, env = crawl_command(
            slow.url, truth["seeds"]["portal"], politics_topic, db, settings=settings
        )
        log = (tmp_path / "first.log").open("w")
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=log)
        store = Store.from_url(db)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            runs = store.list_runs()
            if runs and store.count_pages(runs[0].id) >= 30:
                break
            time.sleep(0.2)
        proc.send_signal(getattr(signal, how))
        proc.wait(timeout=120)
        log.close()
        err = (tmp_path / "first.log").read_text()
        run = store.list_runs()[0]
        first = store.count_pages(run.id)
        assert 30 <= first < len(expected), err[-2000:]
        if how == "SIGINT":
            assert store.get_run(run.id).stats["finish_reason"] == "shutdown"
            assert journal_segments(tmp_path / "job") == [], "a clean close empties it"
        else:  # killed: no clean close, no frontier index written
            assert not store.get_run(run.id).stats
            assert not (tmp_path / "job" / "requests.queue" / "active.json").exists()
            # the pages the kill left unwritten are in the journal, and only those
            journaled = sum(
                1
                for path in journal_segments(tmp_path / "job")
                for line in path.read_text(encoding="utf-8").splitlines()
                if line.strip()
            )
            assert journaled < first, "segments of committed batches are deleted"
    finally:
        slow.stop()
    result = run_crawl(proxy, truth["seeds"]["portal"], politics_topic, db, settings=settings)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "resumed" in result.stderr
    assert len(store.list_runs()) == 1
    resumed = [p.url for p in store.iter_pages(run.id)]
    assert len(resumed) == len(set(resumed))

    # which 30 calendar pages pass the trap guard depends on the order of discovery, and so
    # does the URL a redirected page is stored under (the redirect's or the target's)
    def untrapped(urls):
        pages = truth["pages"]
        return {
            pages[u]["location"] if pages.get(u, {}).get("kind") == "redirect" else u
            for u in urls
            if not any(u.startswith(t) for t in truth["traps"])
        }

    assert untrapped(resumed) == untrapped(expected)
    for trap in truth["traps"]:
        assert len([u for u in resumed if u.startswith(trap)]) <= 30
    assert store.get_run(run.id).stats["finish_reason"] == "finished"
    assert journal_segments(tmp_path / "job") == [], "the journal is stored and gone"


def test_robots_holds_for_many_first_requests_to_one_host(
    proxy, small_web, politics_topic, tmp_path
):
    """Several requests waiting on one robots.txt are all checked (resumed crawls start so)."""
    truth = ground_truth(small_web)
    host = truth["sites"][0]["host"]
    disallowed = sorted(u for u in truth["disallowed"] if f"//{host}/" in u)[:6]
    allowed = sorted(
        u for u, m in truth["pages"].items() if m["kind"] == "article" and m["host"] == host
    )[:3]
    db = f"sqlite:///{tmp_path / 'robots.db'}"
    result = run_crawl(
        proxy, allowed + disallowed, politics_topic, db, args={"max_depth": 0}, settings=KEYWORD
    )
    assert result.returncode == 0, result.stderr[-3000:]
    store = Store.from_url(db)
    run = store.list_runs()[-1]
    assert {p.url for p in store.iter_pages(run.id)} == set(allowed)
    assert run.stats["robotstxt/forbidden"] == len(disallowed)


def test_harvest_window_rule_ends_an_exhausted_crawl_and_progress_is_logged(
    proxy, small_web, politics_topic, tmp_path
):
    """A topic nothing matches: the share of accepted pages in the window falls below the
    floor, and the crawl stops by itself."""
    nothing = tmp_path / "nothing.toml"
    nothing.write_text(
        'name = "无"\nlanguage = "zh"\n\n[words]\n"量子色动力学" = 1.0\n\n[page]\nthreshold = 0.5\n',
        encoding="utf-8",
    )
    settings = {
        "TOPICRAWL_HARVEST_WINDOW": 20,
        "TOPICRAWL_HARVEST_FLOOR": 0.1,
        "TOPICRAWL_PROGRESS_INTERVAL": 0.5,
        "CONCURRENT_REQUESTS": 2,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
    }
    _, store, run, result = crawl(
        proxy, small_web, nothing, f"sqlite:///{tmp_path / 'h.db'}", settings=settings
    )
    assert run.stats["finish_reason"] == "harvest_exhausted"
    assert 20 <= store.count_pages(run.id) < 40
    assert store.count_pages(run.id, accepted_only=True) == 0
    assert "progress pages_per_min=" in result.stderr and "harvest_window=" in result.stderr
    assert "topicrawl/progress/harvest" in run.stats


def test_duplicates_recorded_and_keep_longer_keeps_the_longer_copy(
    proxy, small_web, politics_topic, tmp_path
):
    db = f"sqlite:///{tmp_path / 'keep.db'}"
    _, store, run, _ = crawl(
        proxy, small_web, politics_topic, db, settings={"TOPICRAWL_DEDUP_KEEP": "longer"}
    )
    pages = {p.url: p for p in store.iter_pages(run.id)}
    docs = {d.url for d in store.iter_documents(run.id)}
    from sqlalchemy import text

    with store.engine.connect() as conn:
        rows = conn.execute(
            text(
                "select p.url, d.original_url, d.method from duplicates d join pages p on p.id = d.page_id"
            )
        ).all()
    assert rows, "the small web has reprints and the cascade finds some"
    dropped = {k: v for k, v in run.stats.items() if k.startswith("topicrawl/dedup/dropped/")}
    replaced = {k: v for k, v in run.stats.items() if k.startswith("topicrawl/dedup/replaced/")}
    assert replaced, "reprints with editor notes are longer than the first copy"
    assert sum(dropped.values()) + sum(replaced.values()) == len(rows)
    for url, original, method in rows:
        assert url not in docs and not pages[url].accepted, url
        assert original in pages and method
        assert len(pages[original].text or "") >= len(pages[url].text or "") or method == "exact"
