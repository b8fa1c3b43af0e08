"""The crawl console's JSON API and HTML pages, on a database written through the Store (and,
for start/stop, a real crawl of the local test web)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from conftest import crawl_command
from fastapi.testclient import TestClient

from console.app import CSRF_COOKIE, ConsoleConfig, create_app
from models.store import Store
from sitegen.server import ServerProcess
from topicrawl.cli import main as topicrawl_main

TOPIC = """\
# 时政 topic for the console tests
name = "时政控制台"
language = "zh"

# topic words and weights
[words]
"政治" = 1.0   # the main word
"中央" = 0.8
"会议" = 0.6

[page]
threshold = 0.3  # pages below are off-topic
"""

SEMANTIC = {"method": "semantic", "alpha": 0.4, "beta": 0.4, "lambda": 0.2, "threshold": 0.2,
            "reason": "above-threshold", "follow": True, "from_seed": False}  # fmt: skip
POLITICS = "中央政治局召开会议，研究部署经济工作。会议强调，要坚持党中央集中统一领导。"
SPORT = "昨晚的足球比赛中，主队以三比一战胜客队，球迷在看台上欢呼。"


def page_row(i: int, host: str, accepted: bool, relevance: float, text: str, **kw) -> dict:
    score = {**SEMANTIC, "f_info": round(relevance, 3), "anchor": 0.5, "struct": float(i % 2),
             "p": 0.4}  # fmt: skip
    return {
        "url": f"http://{host}/news/{i}.html", "host": host, "status": 200, "depth": 1,
        "title": f"标题{i} 会议" if accepted else f"标题{i}", "text": text,
        "html": f"<html><body><p>{text}</p></body></html>", "relevance": relevance,
        "accepted": accepted, "link_score": score, "parent_url": f"http://{host}/",
        "anchor": f"锚文本{i}", **kw,
    }  # fmt: skip


def make_env(tmp_path: Path, db: str):
    topics = tmp_path / "topics"
    topics.mkdir()
    (topics / "politics.toml").write_text(TOPIC, encoding="utf-8")
    store = Store.from_url(db)
    run = store.start_run("时政控制台", TOPIC, {"seeds": ["http://a.example/"]})
    rows = []
    for i in range(40):
        host = "a.example" if i < 30 else "b.example"
        if i % 4 == 0:
            rows.append(page_row(i, host, True, 0.6, POLITICS + f"第{i}条。"))
        elif i % 4 == 1:
            rows.append(page_row(i, host, False, 0.05, SPORT + f"第{i}条。"))
        elif i % 4 == 2:  # a copy of the accepted page before it
            rows.append(page_row(i, host, False, 0.6, POLITICS + f"第{i - 2}条。新增一句。",
                                 duplicate={"of": f"http://{host}/news/{i - 2}.html",
                                            "method": "spotsigs", "score": 0.91}))  # fmt: skip
        else:
            rows.append(page_row(i, host, False, 0.2, "", status=200))
    store.save_crawl_batch(run, rows)
    store.add_snapshot(run, "w1:1", {"fetched": 20, "accepted": 5, "pages_per_min": 30.0,
                                     "frontier": 17, "harvest": 0.25, "harvest_window": 0.25,
                                     "stats": {"topicrawl/links/followed": 50,
                                               "topicrawl/links/dropped": 9,
                                               "topicrawl/errors/TimeoutError": 2}})  # fmt: skip
    config = ConsoleConfig(db, topics, tmp_path / "work")
    client = TestClient(create_app(config))
    return {"client": client, "run": run, "store": store, "topics": topics, "db": db,
            "tmp": tmp_path, "config": config}  # fmt: skip


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def env(request, tmp_path: Path):
    """The console over a run of 40 pages, in SQLite and in PostgreSQL."""
    if request.param == "sqlite":
        db = f"sqlite:///{tmp_path / 'console.db'}"
    else:
        db = request.getfixturevalue("pg_url")
    made = make_env(tmp_path, db)
    yield made
    made["client"].close()
    made["store"].close()


@pytest.fixture
def sqlite_env(tmp_path: Path):
    made = make_env(tmp_path, f"sqlite:///{tmp_path / 'console.db'}")
    yield made
    made["client"].close()


def test_runs_list_and_one_run(env):
    c, run = env["client"], env["run"]
    runs = c.get("/api/runs").json()
    assert [r["id"] for r in runs] == [run]
    r = runs[0]
    assert (r["pages"], r["accepted"], r["duplicates"]) == (40, 10, 10)
    assert r["harvest"] == 0.25 and r["state"] == "unfinished" and r["topic"] == "时政控制台"
    one = c.get(f"/api/runs/{run}").json()
    assert "threshold = 0.3" in one["topic_text"] and one["settings"]["seeds"]
    html = c.get("/").text
    assert "时政控制台" in html and "Start a crawl" in html and 'name="csrf"' in html


@pytest.mark.parametrize(
    "path",
    ["/api/runs/999", "/api/runs/999/figures", "/api/runs/999/pages", "/api/runs/999/pages/1",
     "/api/runs/999/pages/1/explain", "/runs/999", "/runs/999/pages", "/runs/999/pages/1"],
)  # fmt: skip
def test_unknown_run_is_404(env, path):
    r = env["client"].get(path)
    assert r.status_code == 404
    assert "999" in r.text


def test_unknown_page_is_404(env):
    r = env["client"].get(f"/api/runs/{env['run']}/pages/99999")
    assert r.status_code == 404 and "no page 99999" in r.text


def test_figures_of_a_running_run_come_from_its_snapshot(env):
    fig = env["client"].get(f"/api/runs/{env['run']}/figures").json()
    assert (fig["pages"], fig["accepted"], fig["documents"]) == (40, 10, 10)
    assert fig["duplicates"] == {"spotsigs": 10}
    assert fig["frontier"] == 17 and fig["pages_per_min"] == 30.0
    assert fig["links"] == {"followed": 50, "dropped": 9}
    assert fig["errors"] == {"TimeoutError": 2}
    assert fig["stats_source"] == "snapshot" and len(fig["snapshots"]) == 1
    hosts = {h["host"]: h for h in fig["hosts"]["rows"]}
    assert hosts["a.example"]["fetched"] == 30 and hosts["b.example"]["fetched"] == 10
    assert hosts["a.example"]["errors"] == 7  # the pages without text
    assert fig["timeline"][-1]["pages"] == 40 and fig["timeline"][-1]["harvest"] == 0.25
    html = env["client"].get(f"/runs/{env['run']}").text
    assert "spotsigs" in html and "a.example" in html and "Harvest rate" in html


def test_finished_run_uses_final_stats(env):
    store, run = env["store"], env["run"]
    store.finish_run(run, {"finish_reason": "max_pages", "topicrawl/links/followed": 99})
    fig = env["client"].get(f"/api/runs/{run}/figures").json()
    assert fig["stats_source"] == "final" and fig["links"] == {"followed": 99}
    runs = env["client"].get("/api/runs").json()
    assert runs[0]["state"] == "finished" and runs[0]["finish_reason"] == "max_pages"


def test_page_filters_partition_the_run_and_keyset_paging_sees_each_page_once(env):
    c, run = env["client"], env["run"]
    seen = {}
    for kind in ("accepted", "duplicate", "broken", "off_topic", "cleaned"):
        items = c.get(f"/api/runs/{run}/pages", params={"kind": kind, "limit": 500}).json()
        for it in items["items"]:
            assert it["kind"] == kind and it["id"] not in seen
            seen[it["id"]] = kind
    assert len(seen) == 40
    counts = {k: list(seen.values()).count(k) for k in set(seen.values())}
    assert counts == {"accepted": 10, "duplicate": 10, "broken": 10, "off_topic": 10}
    ids, after = [], 0
    while True:
        res = c.get(f"/api/runs/{run}/pages", params={"after": after, "limit": 7}).json()
        ids += [it["id"] for it in res["items"]]
        if res["next"] is None:
            break
        after = res["next"]
    assert ids == sorted(seen)
    only_b = c.get(f"/api/runs/{run}/pages", params={"host": "b.example"}).json()["items"]
    assert {it["host"] for it in only_b} == {"b.example"} and len(only_b) == 10
    band = c.get(f"/api/runs/{run}/pages", params={"min_score": 0.1, "max_score": 0.3})
    assert {it["relevance"] for it in band.json()["items"]} == {0.2}
    found = c.get(f"/api/runs/{run}/pages", params={"q": "足球"}).json()["items"]
    assert len(found) == 10 and all(it["kind"] == "off_topic" for it in found)
    html = c.get(f"/runs/{run}/pages", params={"kind": "off_topic", "q": "足球"}).text
    assert "off-topic" in html and "标题1" in html


@pytest.mark.parametrize(
    "params, field",
    [({"kind": "nonsense"}, "kind"), ({"min_score": "high"}, "min_score"),
     ({"limit": 0}, "limit"), ({"after": -1}, "after")],
)  # fmt: skip
def test_bad_page_filters_are_4xx_naming_the_parameter(env, params, field):
    r = env["client"].get(f"/api/runs/{env['run']}/pages", params=params)
    assert r.status_code == 422 and field in r.text


def test_page_detail_says_why(env):
    c, run = env["client"], env["run"]
    items = c.get(f"/api/runs/{run}/pages", params={"limit": 4}).json()["items"]
    accepted, off, dup, broken = (c.get(f"/api/runs/{run}/pages/{it['id']}").json()
                                  for it in items)  # fmt: skip
    assert accepted["why"].startswith("accepted: relevance 0.600 ≥ page threshold 0.300")
    assert accepted["cleaned_text"] and "<p>" in accepted["html"]
    assert accepted["link_score"]["f_info"] == 0.6 and accepted["link_score"]["struct"] == 0.0
    assert off["why"] == "dropped: off-topic, relevance 0.050 < page threshold 0.300"
    assert off["cleaned_text"] is None
    assert dup["why"].startswith("dropped: duplicate of http://a.example/news/0.html (spotsigs")
    assert dup["duplicate"]["of_page_id"] == accepted["id"]
    diff = dup["duplicate"]["diff_html"]
    assert "新增一句" in diff and "diff_add" in diff  # the sentence only the copy has
    assert broken["kind"] == "broken"
    html = c.get(f"/runs/{run}/pages/{dup['id']}").text
    assert "spotsigs" in html and "新增一句" in html and "Raw HTML" in html


def test_explain_gives_relevance_per_part(env):
    c, run = env["client"], env["run"]
    first = c.get(f"/api/runs/{run}/pages", params={"limit": 2}).json()["items"]
    on, off = (c.get(f"/api/runs/{run}/pages/{it['id']}/explain").json() for it in first)
    parts = {p["part"]: p for p in on["parts"]}
    assert set(parts) >= {"title", "description", "keywords", "main text"}
    assert parts["main text"]["formula3"] > 0.3 and parts["main text"]["classifier"] is None
    off_text = {p["part"]: p for p in off["parts"]}["main text"]
    assert off_text["formula3"] < parts["main text"]["formula3"]
    assert 0 <= on["page"] <= 1 and on["classifier"] is False


def test_labels_store_export_and_feed_topic_tune(env, tmp_path):
    c, run = env["client"], env["run"]
    items = c.get(f"/api/runs/{run}/pages", params={"limit": 2}).json()["items"]
    r = c.post("/api/labels", json={"run_id": run, "page_id": items[0]["id"], "label": True})
    assert r.status_code == 201 and r.json()["target"] == items[0]["url"]
    assert r.json()["topic"] == "时政控制台"
    r = c.post("/api/labels", json={"run_id": run, "page_id": items[1]["id"], "label": False,
                                    "scope": "host"})  # fmt: skip
    assert r.json()["target"] == "a.example"
    labels = c.get("/api/labels", params={"topic": "时政控制台"}).json()
    assert {(lb["scope"], lb["label"]) for lb in labels} == {("page", True), ("host", False)}
    page_only = c.get("/api/labels.tsv", params={"topic": "时政控制台"}).text
    assert page_only == f"{items[0]['url']}\t1\n"
    expanded = c.get("/api/labels.tsv", params={"topic": "时政控制台", "run": run}).text
    lines = dict(line.split("\t") for line in expanded.splitlines())
    assert len(lines) == 30 and lines[items[0]["url"]] == "1"  # page label beats host label
    assert sum(v == "0" for v in lines.values()) == 29
    tsv = tmp_path / "labels.tsv"
    tsv.write_text(expanded, encoding="utf-8")
    status = topicrawl_main(["topic", "tune", "--run", str(run), "--labels", str(tsv),
                             "--db", env["db"], "--recall", "1.0"])  # fmt: skip
    assert status == 0
    html = c.get(f"/runs/{run}/pages/{items[0]['id']}").text
    assert "relevant" in html
    assert c.delete(f"/api/labels/{labels[0]['id']}").status_code == 204
    assert c.delete(f"/api/labels/{labels[0]['id']}").status_code == 404


@pytest.mark.parametrize(
    "body, status, field",
    [({"run_id": 999, "page_id": 1, "label": True}, 404, None),
     ({"run_id": 1, "page_id": 1, "label": True, "scope": "planet"}, 422, "scope"),
     ({"topic": "x", "scope": "page", "target": "not a url", "label": True}, 422, "label"),
     ({"scope": "page", "target": "http://a/", "label": True}, 422, "topic"),
     ({"topic": "x", "target": "http://a/"}, 422, "label")],
)  # fmt: skip
def test_bad_labels_are_refused(env, body, status, field):
    r = env["client"].post("/api/labels", json=body)
    assert r.status_code == status, r.text
    if field:
        assert field in r.text
    assert env["client"].get("/api/labels").json() == []


def test_topic_read_validate_and_save_keep_comments(env):
    c, path = env["client"], env["topics"] / "politics.toml"
    assert [t["file"] for t in c.get("/api/topics").json()] == ["politics.toml"]
    got = c.get("/api/topics/politics.toml").json()
    assert got["values"]["words"] == {"政治": 1.0, "中央": 0.8, "会议": 0.6}
    assert got["values"]["page.threshold"] == 0.3
    edit = {"words": {"政治": 1.0, "中央": 0.5, "会议": 0.6, "国务院": 0.7},
            "fields": {"page.threshold": "0.35"}, "base_sha": got["sha"]}  # fmt: skip
    checked = c.post("/api/topics/politics.toml/validate", json=edit).json()
    assert checked["ok"] and '-"中央" = 0.8' in checked["diff"] and '+"中央" = 0.5' in checked["diff"]
    assert path.read_text(encoding="utf-8") == TOPIC  # validate writes nothing
    saved = c.put("/api/topics/politics.toml", json=edit)
    assert saved.status_code == 200 and saved.json()["ok"]
    text = path.read_text(encoding="utf-8")
    assert '"中央" = 0.5' in text and '"国务院" = 0.7' in text and "threshold = 0.35" in text
    for comment in ("# 时政 topic for the console tests", "# the main word",
                    "# pages below are off-topic", "# topic words and weights"):  # fmt: skip
        assert comment in text
    html = c.get("/topics/politics.toml").text
    assert "国务院" in html and "page.threshold" in html


@pytest.mark.parametrize(
    "edit, field, problem",
    [({"fields": {"page.threshold": "1.5"}}, "page.threshold", "outside [0.0, 1.0]"),
     ({"fields": {"page.threshold": "high"}}, "page.threshold", "must be a number"),
     ({"fields": {"priority.focus": "sideways"}}, "priority.focus", "is not one of"),
     ({"fields": {"name": ""}}, "name", "missing or empty 'name'"),
     ({"words": {"政治": "lots"}}, "words.政治", "must be a number"),
     ({"words": {"政治": -1}}, "words.政治", "must be a number >= 0"),
     ({"words": {"政治": 0}}, "words", "every topic word has weight 0"),
     ({"fields": {"crawl.allowed_hosts": "bad host!"}}, "crawl.allowed_hosts", "is not a host"),
     ({"fields": {"frobnicate": "1"}}, "frobnicate", "unknown field")],
)  # fmt: skip
def test_malformed_topic_edit_is_422_at_the_field_and_the_file_is_unchanged(
    env, edit, field, problem
):
    path = env["topics"] / "politics.toml"
    r = env["client"].put("/api/topics/politics.toml", json=edit)
    assert r.status_code == 422
    errors = r.json()["errors"]
    assert errors[0]["field"] == field, errors
    assert problem in errors[0]["message"], errors
    assert path.read_text(encoding="utf-8") == TOPIC


def test_stale_topic_edit_is_refused(env):
    path = env["topics"] / "politics.toml"
    r = env["client"].put("/api/topics/politics.toml",
                          json={"fields": {"page.threshold": 0.4}, "base_sha": "0" * 16})  # fmt: skip
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "file"
    assert path.read_text(encoding="utf-8") == TOPIC


@pytest.mark.parametrize("name", ["..%2Fsecret.toml", "%2Fetc%2Fpasswd", "politics.txt",
                                  "a%00.toml", "sub%2Fx.toml"])  # fmt: skip
def test_topic_paths_outside_the_directory_are_refused(env, name):
    secret = env["tmp"] / "secret.toml"
    secret.write_text(TOPIC, encoding="utf-8")
    r = env["client"].get(f"/api/topics/{name}")
    assert r.status_code in (400, 404)
    r = env["client"].put(f"/api/topics/{name}", json={"fields": {"page.threshold": 0.5}})
    assert r.status_code in (400, 404, 405)
    assert secret.read_text(encoding="utf-8") == TOPIC


def test_topic_symlink_out_of_the_directory_is_refused(env):
    secret = env["tmp"] / "secret.toml"
    secret.write_text(TOPIC, encoding="utf-8")
    (env["topics"] / "link.toml").symlink_to(secret)
    assert env["client"].get("/api/topics/link.toml").status_code == 400
    assert "link.toml" not in [t["file"] for t in env["client"].get("/api/topics").json()]


def test_unknown_topic_is_404(env):
    assert env["client"].get("/api/topics/nothing.toml").status_code == 404
    assert env["client"].get("/topics/nothing.toml").status_code == 404


def test_topic_suggest(env):
    r = env["client"].get("/api/topics/politics.toml/suggest", params={"topn": 5})
    assert r.status_code == 200
    words = r.json()
    assert len(words) == 5 and words[0]["score"] == 1.0
    assert not {w["word"] for w in words} & {"政治", "中央", "会议"}


def test_metrics(env):
    text = env["client"].get("/metrics").text
    run = env["run"]
    assert f'topicrawl_run_pages{{run="{run}",topic="时政控制台"}} 40.0' in text
    assert f'topicrawl_run_duplicates{{run="{run}",topic="时政控制台"}} 10.0' in text
    assert f'topicrawl_run_frontier{{run="{run}",topic="时政控制台"}} 17.0' in text
    assert f'topicrawl_run_errors{{run="{run}",topic="时政控制台"}} 2.0' in text


def test_openapi_page_lists_every_api_route(env):
    c = env["client"]
    spec = c.get("/openapi.json").json()
    paths = set(spec["paths"])
    assert {"/api/runs", "/api/runs/{run_id}", "/api/runs/{run_id}/pages",
            "/api/runs/{run_id}/stop", "/api/topics/{name}", "/api/labels.tsv",
            "/metrics"} <= paths  # fmt: skip
    html = c.get("/api/docs").text
    for path in paths:
        assert path in html


# -- safety ---------------------------------------------------------------------------------


def test_forms_need_the_csrf_token(env):
    c = env["client"]
    c.get("/")  # sets the cookie
    r = c.post("/runs/start", data={"seeds": "http://a.example/", "topic": "politics.toml"})
    assert r.status_code == 403 and "CSRF" in r.text
    token = c.cookies[CSRF_COOKIE]
    r = c.post("/runs/start", data={"csrf": token, "seeds": "not a url", "topic": "politics.toml"})
    assert r.status_code == 422 and "seeds" in r.text and "not an http(s) URL" in r.text


def test_api_writes_take_json_only_and_refuse_other_origins(env):
    c = env["client"]
    r = c.post("/api/labels", content="topic=x", headers={"content-type": "text/plain"})
    assert r.status_code == 415
    r = c.post("/api/labels", json={"topic": "x", "target": "http://a/", "label": True},
               headers={"origin": "http://evil.example"})  # fmt: skip
    assert r.status_code == 403
    assert c.get("/api/labels").json() == []


def test_loopback_console_refuses_foreign_host_header(env):
    r = env["client"].get("/api/runs", headers={"host": "evil.example"})
    assert r.status_code == 421


def test_token_is_required_when_set(env):
    cfg = env["config"]
    cfg.token, cfg.loopback = "s3cret-token", False
    c = TestClient(create_app(cfg))
    assert c.get("/api/runs").status_code == 401
    page = c.get("/", follow_redirects=False)
    assert page.status_code == 303 and page.headers["location"].startswith("/login")
    assert c.get("/api/runs", headers={"authorization": "Bearer s3cret-token"}).status_code == 200
    c.get("/login")
    bad = c.post("/login", data={"csrf": c.cookies[CSRF_COOKIE], "token": "wrong"})
    assert bad.status_code == 401
    ok = c.post("/login", data={"csrf": c.cookies[CSRF_COOKIE], "token": "s3cret-token",
                                "next": "/"}, follow_redirects=False)  # fmt: skip
    assert ok.status_code == 303
    assert c.get("/api/runs").status_code == 200  # the cookie


def test_serve_refuses_a_public_bind_without_token(monkeypatch, capsys, tmp_path):
    monkeypatch.delenv("TOPICRAWL_CONSOLE_TOKEN", raising=False)
    status = topicrawl_main(["serve", "--host", "0.0.0.0", "--topics", str(tmp_path)])
    assert status == 1
    assert "TOPICRAWL_CONSOLE_TOKEN" in capsys.readouterr().err


# -- start and stop a real crawl ------------------------------------------------------------


@pytest.mark.slow
def test_start_and_stop_a_crawl_through_the_api(sqlite_env, small_web, tmp_path):
    env = sqlite_env
    truth = json.loads((small_web / "ground_truth.json").read_text(encoding="utf-8"))
    seeds = truth["seeds"]["portal"]
    with ServerProcess(small_web, latency_ms=150) as server:
        _, crawl_env = crawl_command(server.url, seeds, "x", env["db"])
        cfg = env["config"]
        cfg.crawl_env = {k: crawl_env[k] for k in ("http_proxy", "HTTP_PROXY", "no_proxy")}
        cfg.crawl_settings = {"AUTOTHROTTLE_ENABLED": "False", "DOWNLOAD_DELAY": "0",
                              "CONCURRENT_REQUESTS_PER_DOMAIN": "2"}  # fmt: skip
        cfg.progress_interval = 1
        with TestClient(create_app(cfg)) as c:
            bad = c.post("/api/runs", json={"seeds": "ftp://x/", "topic": "politics.toml"})
            assert bad.status_code == 422 and bad.json()["detail"]["field"] == "seeds"
            missing = c.post("/api/runs", json={"seeds": seeds[0], "topic": "nope.toml"})
            assert missing.status_code == 404
            r = c.post("/api/runs", json={"seeds": "\n".join(seeds), "topic": "politics.toml",
                                          "max_pages": 2000})  # fmt: skip
            assert r.status_code == 201, r.text
            run_id = r.json()["run_id"]
            assert run_id is not None and r.json()["running"]
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                fig = c.get(f"/api/runs/{run_id}/figures").json()
                if fig["pages"] >= 5 and fig["snapshots"]:
                    break
                time.sleep(0.5)
            assert fig["pages"] >= 5 and fig["stats_source"] == "snapshot"
            assert c.get("/api/runs").json()[0]["state"] == "running"
            stopped = c.post(f"/api/runs/{run_id}/stop", json={})
            assert stopped.status_code == 202
            c.app.state.crawls.by_run(run_id).proc.wait(timeout=120)
            again = c.post(f"/api/runs/{run_id}/stop", json={})
            assert again.status_code == 409
            assert c.post("/api/runs/999/stop", json={}).status_code == 404
    run = env["store"].get_run(run_id)
    assert run.finished_at is not None and run.stats["finish_reason"] == "shutdown"
    assert "[page]\nthreshold = 0.3" in run.topic_text


def test_page_detail_names_the_threshold_the_host_prior_set(sqlite_env):
    """A page admitted by the host-level prior ([page] host_prior) under the topic's page
    threshold: the console names the threshold it passed (relevance_parts host_threshold)."""
    c, run, store = sqlite_env["client"], sqlite_env["run"], sqlite_env["store"]
    row = page_row(99, "a.example", True, 0.1, POLITICS + "第99条。",
                   relevance_parts={"info": 0.1, "host_threshold": 0.05})  # fmt: skip
    store.save_crawl_batch(run, [row])
    items = c.get(f"/api/runs/{run}/pages", params={"after": 40, "limit": 5}).json()["items"]
    page = c.get(f"/api/runs/{run}/pages/{items[0]['id']}").json()
    assert page["why"].startswith("accepted: relevance 0.100 ≥ page threshold 0.050")
