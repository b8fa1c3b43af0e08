"""The final re-judgement: the fetched pages judged again with the crawl's last models
(relevance.learning.final, ``[learning] final_judgement``)."""

from __future__ import annotations

import json
from contextlib import nullcontext

import pytest
from conftest import run_crawl
from scrapy import Request
from scrapy.exceptions import CloseSpider, DropItem
from scrapy.utils.test import get_crawler
from test_rejudge import HELD, HELD_HTML, OFF, ON, TOPIC, html, response

from crawler.items import PageItem
from crawler.pipelines import StorePipeline
from crawler.spiders.topic import TopicSpider
from models.store import Store
from relevance.calibrated import CalibratedLinkScorer
from relevance.learning.final import FinalJudgement
from relevance.linkscore import PageInfo
from relevance.topic import parse_topic
from topicrawl.errors import TopicFileError

FINAL_ON = "[learning]\nfinal_judgement = 20000\n"
FINANCE = "银行 基金 利率 市场 投资 股票 银行 基金 利率 市场"


def mixed_html() -> bytes:
    """A topic word in the title and once in each paragraph of a finance text: accepted on
    its literal evidence before the page model exists, rejected by the model trained on the
    crawl (with the model weighing 0.8 in P(page))."""
    paras = "".join(f"<p>{FINANCE}。{FINANCE}，比赛 {FINANCE}。</p>" for _ in range(4))
    return (f"<html><head><title>比赛 基金</title></head><body><article><h1>比赛 基金</h1>"
            f"{paras}</article></body></html>").encode()  # fmt: skip


def record(url: str, text: str = "正文") -> dict:
    return {"url": url, "text": text, "relevance": 0.3, "depth": 1}


def test_only_pages_in_the_corpus_leave_it_and_only_off_topic_pages_join_it():
    final = FinalJudgement(10)
    for url, relevant in (("in", True), ("dup", True), ("off", False), ("late", False),
                          ("unreported", False), ("kept", True)):  # fmt: skip
        assert final.hold(record(url), relevant, html="<p>x</p>" if not relevant else None)
    for url, in_corpus in (("in", True), ("dup", False), ("off", False), ("late", False),
                           ("kept", True)):  # fmt: skip
        final.outcome(url, in_corpus)
    # the last models: "in" and "dup" rejected now, "late" accepted, the rest as before
    now = {"in": False, "dup": False, "off": False, "late": True, "unreported": True, "kept": True}
    seen = []

    def rescore(page):
        seen.append(page.url)
        return (0.9 if now[page.url] else 0.1), {"literal": 0.5}, now[page.url]

    changes = final.judge(rescore)
    assert [(c.page.url, c.accepted) for c in changes] == [("in", False), ("late", True)]
    assert changes[1].page.html() == "<p>x</p>" and changes[0].page.text() == "正文"
    assert seen == ["in", "off", "late", "kept"]  # a duplicate and an unreported page: not
    assert (final.judged, final.revoked, final.accepted, final.unknown) == (4, 1, 1, 1)
    assert final.judge(rescore) == [] and len(final) == 0  # once; the pages are released
    assert not final.hold(record("after"), True, html=None)


def test_the_held_pages_are_bounded_and_the_earliest_kept():
    final = FinalJudgement(3)
    for i in range(5):
        final.hold(record(f"u{i}"), False, html="<p>x</p>")
    assert list(final.pages) == ["u0", "u1", "u2"] and final.unheld == 2
    assert final.hold(record("u1", "新的正文"), True, html=None)  # the same URL: replaced
    assert final.pages["u1"].relevant and final.pages["u1"].text() == "新的正文"
    one = final.pages["u0"].size
    small = FinalJudgement(100, max_bytes=2 * one)
    for i in range(5):
        small.hold(record(f"u{i}"), False, html="<p>x</p>")
    assert len(small) == 2 and small.bytes <= small.max_bytes and small.unheld == 3
    with pytest.raises(ValueError, match="at least 1"):
        FinalJudgement(0)


def test_it_is_off_by_default_and_on_with_a_number_of_pages():
    """Off by default: held out in real crawls it cost recall (docs/benchmarks/topics.md)."""
    assert CalibratedLinkScorer.from_topic(parse_topic(TOPIC)).final is None
    on = CalibratedLinkScorer.from_topic(parse_topic(TOPIC + FINAL_ON))
    assert on.final is not None and on.final.max_pages == 20_000
    with pytest.raises(TopicFileError, match="final_judgement = -1 is outside"):
        parse_topic(TOPIC + "[learning]\nfinal_judgement = -1\n")


def test_a_rejected_page_no_model_could_lift_is_not_held():
    """P(page) = (P_lit + P_model) / 2 by default: at a page threshold of 0.6 a page with
    P_lit under 0.2 cannot pass whatever the model says."""
    s = CalibratedLinkScorer.from_topic(parse_topic(TOPIC + FINAL_ON))
    money = PageInfo("http://a.cn/f/0.html", OFF[0], "", "", OFF[1])
    held = PageInfo("http://a.cn/s/0.html", HELD[0], "", "", HELD[1])
    assert s.page_scores(money)[1] < 0.2
    assert s.final_candidate(money.url, False, 0.6) is None
    assert 0.2 <= s.page_scores(held)[1] < 0.6
    assert s.final_candidate(held.url, False, 0.6) is True  # held with its HTML
    assert s.final_candidate(held.url, True, 0.6) is False  # accepted: without it
    assert s.final_candidate("http://a.cn/other", False, 0.6) is None  # not the page scored


def crawl_to_budget(
    tmp_path, topic_extra: str = "[learning]\nweight = 0.8\nfinal_judgement = 20000\n"
) -> tuple[TopicSpider, list[PageItem]]:
    """Pages through the spider's ``parse_page`` into a store pipeline, until the budget
    (8 pages) ends the crawl: a page rejected and a page accepted on literal evidence, then
    on- and off-topic pages that train the page model. Returns the spider and every item the
    spider yielded, in order."""
    topic = tmp_path / "t.toml"
    topic.write_text(TOPIC + topic_extra, encoding="utf-8")
    crawler = get_crawler(TopicSpider, {})
    spider = crawler._create_spider(seeds="http://a.cn/", topic=str(topic), max_pages=8)  # noqa: SLF001
    crawler.spider = spider
    model = spider.scorer.page_model
    model.min_positives = model.min_negatives = 2
    model.retrain_every = 7
    db = f"sqlite:///{tmp_path / 's.db'}"
    store = Store.from_url(db)
    pipe = StorePipeline(db, batch_size=1, clean=False)
    pipe.store, pipe.run_id, pipe.stats = store, store.start_run("t", "", {}), crawler.stats
    items: list[PageItem] = []
    pages = [("http://a.cn/s/0.html", html(HELD_HTML)), ("http://a.cn/x/0.html", mixed_html())]
    pages += [(f"http://a.cn/s/{i}.html", html(ON)) if i % 2 else
              (f"http://a.cn/f/{i}.html", html(OFF)) for i in range(1, 7)]  # fmt: skip
    for url, body in pages:
        out = spider.parse_page(response(url, body))
        try:
            for x in out:
                if isinstance(x, PageItem):
                    items.append(x)
                    with nullcontext() if x["accepted"] else pytest.raises(DropItem):
                        pipe.process_item(x, spider)
                else:
                    assert isinstance(x, Request)
        except CloseSpider as exc:
            assert exc.reason == "max_pages" and url == pages[-1][0]
            break
    else:
        pytest.fail("the budget did not end the crawl")
    pipe.flush(final=True)
    spider.store = store
    spider.run_id = pipe.run_id
    return spider, items


def test_at_the_budget_s_end_the_last_models_move_pages_in_and_out_of_the_corpus(tmp_path):
    spider, items = crawl_to_budget(tmp_path)
    stats = spider.crawler.stats
    held_url, mixed_url = "http://a.cn/s/0.html", "http://a.cn/x/0.html"
    by_url = {}
    for x in items:
        by_url.setdefault(x["url"], []).append(x)
    assert [x["accepted"] for x in by_url[held_url]] == [False, True]  # joined at the end
    assert [x["accepted"] for x in by_url[mixed_url]] == [True, False]  # left at the end
    late, revoked = by_url[held_url][1], by_url[mixed_url][1]
    assert late["rejudged"] == revoked["rejudged"] == "final"
    assert late["relevance"] >= 0.5 > late["relevance_parts"]["final_from"]
    assert revoked["relevance"] < 0.5 <= revoked["relevance_parts"]["final_from"]
    assert late["html"] and revoked["html"] is None  # the stored row keeps its HTML
    # only the two changed pages came again; the budget counted every page once
    assert sum(len(v) for v in by_url.values()) == 8 + 2
    assert stats.get_value("topicrawl/pages/fetched") == 8
    assert (
        stats.get_value("topicrawl/final/revoked")
        == stats.get_value("topicrawl/final/accepted")
        == 1
    )
    assert stats.get_value("topicrawl/final/judged") >= 2
    assert stats.get_value("topicrawl/dropped/final_revoked") == 1
    store = spider.store
    rows = {p.url: p for p in store.iter_pages(spider.run_id)}
    assert len(rows) == 8
    assert rows[held_url].accepted and not rows[mixed_url].accepted
    assert rows[mixed_url].html and "基金" in rows[mixed_url].html  # kept, not erased
    documents = {d.url for d in store.iter_documents(spider.run_id)}
    assert held_url in documents and mixed_url not in documents
    accepted = [u for u, p in rows.items() if p.accepted]
    assert sorted(documents) == sorted(accepted)
    # the counts follow the pages that moved
    assert stats.get_value("topicrawl/pages/accepted") == len(accepted)
    assert stats.get_value("topicrawl/pages/not_accepted") == 8 - len(accepted)


def test_with_the_final_judgement_off_nothing_comes_again(tmp_path):
    spider, items = crawl_to_budget(tmp_path, "[learning]\nweight = 0.8\n")
    assert len(items) == 8 and not any(x.get("rejudged") for x in items)
    assert spider.crawler.stats.get_value("topicrawl/final/judged") is None


SPORT_WORDS = ("火箭 皇马 巴萨 米兰 曼联 科比 姚明 AC 阿森纳 球队 球迷 国米 主帅 连胜 阿联 湖人 球员 "
               "图文 夺冠 热火 尤文 转会 客场 足协 申花 男篮 切尔西 官方 队友 篮网").split()  # fmt: skip


@pytest.mark.parametrize("budget, reason", [(5000, "finished"), (60, "max_pages")])
def test_a_real_crawl_judges_its_pages_again_when_it_ends(proxy, small_web, tmp_path, budget,
                                                          reason):  # fmt: skip
    """Real crawls of the local test web with a words-only topic (the benchmark's recipe: the
    top 30 words by χ² on THUCNews headlines), ended by a dry frontier (the re-judgement's
    items go to the pipelines at the idle check) and by the budget (yielded before Scrapy's
    CloseSpider): the changes reach the store, documents = accepted pages, the counts add
    up, and the pages that moved say so."""
    truth = json.loads((small_web / "ground_truth.json").read_text(encoding="utf-8"))
    topic = tmp_path / "tiyu.toml"
    words = "".join(f'"{w}" = 1.0\n' for w in SPORT_WORDS)
    topic.write_text(f'name = "体育"\n[words]\n{words}{FINAL_ON}', encoding="utf-8")
    db = f"sqlite:///{tmp_path / 'crawl.db'}"
    result = run_crawl(proxy, truth["seeds"]["portal"], topic, db, args={"max_pages": budget})
    assert result.returncode == 0, result.stderr[-3000:]
    assert "final re-judgement:" in result.stderr
    store = Store.from_url(db)
    run = store.list_runs()[-1]
    stats = run.stats
    assert stats["finish_reason"] == reason
    pages = list(store.iter_pages(run.id))
    assert stats["topicrawl/final/judged"] > 0
    assert len(pages) == len({p.url for p in pages})
    assert len(pages) == stats["topicrawl/pages/fetched"] - stats.get("topicrawl/pages/broken", 0)
    moved = [p for p in pages if p.relevance_parts and "final_from" in p.relevance_parts]
    assert len(moved) <= stats["topicrawl/final/revoked"] + stats["topicrawl/final/accepted"]
    documents = {d.url for d in store.iter_documents(run.id)}
    assert documents == {p.url for p in pages if p.accepted}
    assert stats["topicrawl/pages/accepted"] == len(documents)
    assert stats["topicrawl/pages/accepted"] + stats["topicrawl/pages/not_accepted"] == len(pages)
    for p in moved:
        assert p.html  # a page judged again keeps its HTML
        if p.url in documents:
            assert p.relevance >= 0.5 > p.relevance_parts["final_from"]
        elif p.relevance_parts["final_from"] >= 0.5:
            assert p.relevance < 0.5
