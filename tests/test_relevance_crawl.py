"""A real focused crawl of the local test web with the semantic link scorer (formula 5)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from conftest import run_crawl

from models.store import Store

TOPIC = Path(__file__).resolve().parent.parent / "topics" / "shizheng.toml"


def test_semantic_crawl_prefers_the_topic(proxy, small_web, tmp_path):
    truth = json.loads((small_web / "ground_truth.json").read_text(encoding="utf-8"))
    kind = {u: e["kind"] for u, e in truth["pages"].items()}
    on = {u for u, e in truth["pages"].items() if e["category"] == "时政"}

    db = f"sqlite:///{tmp_path / 'crawl.db'}"
    result = run_crawl(
        proxy,
        truth["seeds"]["portal"],
        TOPIC,
        db,
        args={"max_pages": 400},
        settings={"TOPICRAWL_LINK_SCORER": "relevance"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    store = Store.from_url(db)
    run = store.list_runs()[-1]
    pages = sorted(store.iter_pages(run.id), key=lambda p: p.fetched_at)
    scored = [p for p in pages if p.link_score and p.link_score.get("method") == "semantic"]
    assert scored, "no page carries a semantic link-score breakdown"
    for key in ("f_info", "anchor", "struct", "p", "threshold", "follow"):
        assert key in scored[0].link_score

    articles = [p for p in pages if kind.get(p.url) == "article"]
    order_on = [i for i, p in enumerate(articles) if p.url in on]
    order_off = [i for i, p in enumerate(articles) if p.url not in on]
    assert order_on and order_off
    # best-first on formula 5: 时政 articles are fetched earlier than the others
    assert statistics.mean(order_on) < statistics.mean(order_off)
    # formula 3 page relevance: accepted articles are mostly 时政
    base = len(order_on) / len(articles)
    accepted = [p for p in articles if p.accepted]
    assert accepted
    precision = sum(p.url in on for p in accepted) / len(accepted)
    assert precision > 2 * base, (precision, base)


def test_words_only_topic_crawls_in_calibrated_mode(proxy, small_web, tmp_path):
    """A topic file with only words: calibrated mode, the models learn during the crawl and
    are stored with the run; accepted pages are mostly on-topic."""
    truth = json.loads((small_web / "ground_truth.json").read_text(encoding="utf-8"))
    on = {u for u, e in truth["pages"].items() if e["category"] == "体育" and e["kind"] == "article"}
    topic = tmp_path / "tiyu.toml"
    words = "比赛 球队 球员 球迷 主帅 联赛 冠军 篮球 足球 火箭 湖人 姚明 科比 体育".split()
    topic.write_text('name = "体育"\n[words]\n' + "".join(f'"{w}" = 1.0\n' for w in words),
                     encoding="utf-8")  # fmt: skip
    db = f"sqlite:///{tmp_path / 'crawl.db'}"
    result = run_crawl(proxy, truth["seeds"]["portal"], topic, db, args={"max_pages": 150})
    assert result.returncode == 0, result.stderr[-3000:]
    store = Store.from_url(db)
    run = store.list_runs()[-1]
    pages = list(store.iter_pages(run.id))
    scored = [p for p in pages if p.link_score and p.link_score.get("method") == "calibrated"]
    assert scored and scored[0].link_score["features"]
    learned = run.stats["learned"]
    assert learned["link_model"]["observed"] > 0
    assert learned["page_model"]["trainings"] >= 1
    accepted = [p for p in pages if p.accepted]
    assert accepted
    precision = sum(p.url in on for p in accepted) / len(accepted)
    assert precision >= 0.8, precision
