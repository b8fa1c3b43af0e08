"""``topicrawl recrawl --run ID`` against the local test web: conditional requests (304),
only changed pages stored, new links followed (issue 15)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from urllib.parse import urlsplit

import pytest
from conftest import ROOT, run_crawl

from models.store import Store
from sitegen.build import build_web
from sitegen.server import ServerProcess, not_modified

KEYWORD = "relevance.linkscore.KeywordLinkScorer"


def recrawl(proxy: str, db: str, run_id: int, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "http_proxy": proxy, "HTTP_PROXY": proxy, "no_proxy": ""}
    env.pop("TOPICRAWL_DB_URL", None)
    cmd = [sys.executable, "-m", "topicrawl.cli", "recrawl", "--run", str(run_id), "--db", db,
           "-s", "AUTOTHROTTLE_ENABLED=False", "-s", "DOWNLOAD_DELAY=0",
           "-s", f"TOPICRAWL_LINK_SCORER={KEYWORD}", "-s", "TOPICRAWL_PROGRESS_INTERVAL=0",
           *extra]  # fmt: skip
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def crawled(tmp_path_factory, politics_topic):
    """A web of its own (the test changes it) and a crawl of its single-topic site."""
    web = tmp_path_factory.mktemp("recrawl-web")
    truth = build_web(web, scale="small", seed=7, orphans=0.3)
    db = f"sqlite:///{tmp_path_factory.mktemp('recrawl-db') / 'crawl.db'}"
    home = truth["seeds"]["domain"][0]
    with ServerProcess(web) as server:
        result = run_crawl(server.url, [home], politics_topic, db,
                           settings={"TOPICRAWL_LINK_SCORER": KEYWORD})  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    store = Store.from_url(db)
    return web, truth, db, store, store.list_runs()[-1].id


def test_pages_keep_their_validators(crawled):
    _, _, _, store, run_id = crawled
    pages = [p for p in store.iter_pages(run_id) if "/calendar/" not in p.url]  # static
    assert pages and all(p.etag and p.etag.startswith('"') for p in pages)
    assert all(p.last_modified and p.last_modified.endswith("GMT") for p in pages)
    assert {p.content_type for p in pages} == {"text/html"}


def test_unchanged_web_stores_nothing(crawled):
    web, _, db, store, run_id = crawled
    before = {p.url: (p.fetched_at, p.text) for p in store.iter_pages(run_id)}
    targets = list(store.recrawl_targets(run_id))
    assert any(t.hub for t in targets) and any(t.accepted for t in targets)
    with ServerProcess(web) as server:
        result = recrawl(server.url, db, run_id)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "not modified (304)" in result.stderr
    after = {p.url: (p.fetched_at, p.text) for p in store.iter_pages(run_id)}
    assert after == before
    run = store.get_run(run_id)
    latest = run.stats["recrawls"][-1]
    assert latest["topicrawl/recrawl/targets"] == len(targets)
    assert latest["topicrawl/recrawl/not_modified"] == len(targets)
    assert "topicrawl/pages/fetched" in run.stats  # the crawl's own figures are kept


def test_changed_page_replaced_and_new_link_followed(crawled):
    web, truth, db, store, run_id = crawled
    responses = json.loads((web / "responses.json").read_text(encoding="utf-8"))
    pages = {p.url: p for p in store.iter_pages(run_id)}
    documents = {d.url: d.text for d in store.iter_documents(run_id)}
    targets = {t.url: t for t in store.recrawl_targets(run_id)}
    # an accepted article gets a new paragraph ...
    article = sorted(u for u in documents if truth["pages"][u]["kind"] == "article")[0]
    path = web / responses[article]["file"]
    enc = truth["pages"][article]["encoding"]
    html = path.read_bytes().decode(enc)
    marker = "更正：本文数据已于今日更新，国务院常务会议决定进一步加大对地方政府的政策支持力度。"
    last = pages[article].text.strip().splitlines()[-1][:12]  # the body's last paragraph
    cut = html.index("</p>", html.index(last))
    path.write_bytes((html[:cut] + "</p><p>" + marker + html[cut:]).encode(enc))
    # ... and a list page links to an orphan (a page the crawl had not found)
    hub = next(u for u, t in sorted(targets.items()) if t.hub and u != article)
    host = urlsplit(hub).hostname
    orphan = next(u for u in truth["orphans"]
                  if urlsplit(u).hostname == host and u not in pages
                  and not truth["pages"][u]["dup_group"])  # fmt: skip
    hub_file = web / responses[hub]["file"]
    hub_file.write_bytes(hub_file.read_bytes().replace(
        b"</body>", f'<a href="{orphan}">{truth["pages"][orphan]["title"]}</a></body>'.encode()
    ))  # fmt: skip
    with ServerProcess(web) as server:  # a new server: it caches bodies
        result = recrawl(server.url, db, run_id)
    assert result.returncode == 0, result.stderr[-3000:]
    latest = store.get_run(run_id).stats["recrawls"][-1]
    assert latest["topicrawl/recrawl/changed"] >= 1
    assert latest["topicrawl/recrawl/not_modified"] == len(targets) - 2  # all but the two
    assert latest["topicrawl/recrawl/new_pages"] >= 1
    after = {p.url: p for p in store.iter_pages(run_id)}
    assert orphan in after and after[orphan].parent_url == hub
    assert marker in after[article].text
    assert after[article].parent_url == pages[article].parent_url  # provenance kept
    assert after[article].etag != pages[article].etag
    docs_after = {d.url: d.text for d in store.iter_documents(run_id)}
    assert marker in docs_after[article] and orphan in docs_after
    unchanged = [u for u in pages if u not in (article, hub)]
    assert all(after[u].fetched_at == pages[u].fetched_at for u in unchanged)
    # the trap guard keeps the run's calendar variants: no new calendar pages
    assert not [u for u in set(after) - set(pages) if "/calendar/" in u]


def test_recrawl_of_an_unknown_run(crawled):
    web, _, db, _, _ = crawled
    with ServerProcess(web) as server:
        result = recrawl(server.url, db, 999)
    assert result.returncode == 1 and "no crawl run 999" in result.stderr


def test_conditional_request_rules():
    headers = {"ETag": '"abc"', "Last-Modified": "Mon, 01 Jul 2019 08:00:00 GMT"}
    assert not_modified({"If-None-Match": '"abc"'}, headers)
    assert not_modified({"If-None-Match": '"x", W/"abc"'}, headers)
    assert not_modified({"If-None-Match": "*"}, headers)
    assert not not_modified({"If-None-Match": '"x"'}, headers)
    # If-None-Match decides when present (RFC 9110 13.1.3)
    assert not not_modified({"If-None-Match": '"x"',
                             "If-Modified-Since": "Tue, 02 Jul 2019 08:00:00 GMT"}, headers)  # fmt: skip
    assert not_modified({"If-Modified-Since": "Mon, 01 Jul 2019 08:00:00 GMT"}, headers)
    assert not not_modified({"If-Modified-Since": "Sun, 30 Jun 2019 08:00:00 GMT"}, headers)
    assert not not_modified({"If-Modified-Since": "garbage"}, headers)
    assert not not_modified({}, headers)


def test_migration_adds_the_validator_columns(tmp_path):
    from sqlalchemy import inspect

    store = Store.from_url(f"sqlite:///{tmp_path / 'm.db'}")
    columns = {c["name"] for c in inspect(store.engine).get_columns("pages")}
    assert {"etag", "last_modified", "content_type"} <= columns
