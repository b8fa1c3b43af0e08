"""Re-judgement of rejected pages after a retraining of the page model
(relevance.learning.rejudge, ``[learning] rejudge``)."""

from __future__ import annotations

import json

import pytest
from scrapy import Request
from scrapy.exceptions import CloseSpider
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from crawler.items import PageItem
from crawler.spiders.topic import TopicSpider
from relevance.calibrated import CalibratedLinkScorer
from relevance.learning.rejudge import RejudgeBuffer, load_held, save_held
from relevance.linkscore import PageInfo
from relevance.topic import parse_topic

SPORT = ["比赛", "球队", "球员", "进球", "联赛"]
TOPIC = 'name = "体育"\n[words]\n' + "".join(f'"{w}" = 1.0\n' for w in SPORT)
# one topic word in the head, the rest words the page model learns from the crawl: P_lit
# between the pseudo-labels' thresholds (unlabelled) and below the page threshold
HELD = ("比赛 教练", "主场 客场 教练 球迷 训练 比赛")
ON = ("球队 比赛 联赛", "球队 在 联赛 比赛 中 进球 ， 球员 主场 教练 球迷 客场 训练 比赛 进球 联赛 球员")
OFF = ("基金 市场", "银行 基金 利率 市场 投资 股票 银行 基金 利率 市场")


def scorer(rejudge: int = 10) -> CalibratedLinkScorer:
    s = CalibratedLinkScorer.from_topic(parse_topic(TOPIC + f"[learning]\nrejudge = {rejudge}\n"))
    s.page_model.min_positives = s.page_model.min_negatives = 2
    s.page_model.retrain_every = 1000  # trained by the test
    return s


def page(url: str, head_text: tuple[str, str]) -> PageInfo:
    return PageInfo(url, head_text[0], "", "", head_text[1])


def judge_and_hold(s: CalibratedLinkScorer, info: PageInfo) -> float:
    p = s.page_relevance(info)
    s.observe_page(info, p, None)
    s.hold_rejected({"url": info.url, "text": info.text, "relevance": p},
                    s.last_judged(info.url), "<html></html>", 0.5)  # fmt: skip
    return p


def test_a_rejected_page_is_accepted_after_a_retraining_makes_it_on_topic():
    s = scorer()
    held = page("http://a.cn/s/0.html", HELD)
    money = page("http://a.cn/f/0.html", OFF)
    assert judge_and_hold(s, held) < 0.5 and judge_and_hold(s, money) < 0.5
    assert len(s.rejudge) == 2
    assert s.rejudge_pages(0.5) == []  # no training yet: nothing to judge again
    for i in range(3):
        s.observe_page(page(f"http://a.cn/s/{i + 1}.html", ON), 0.99, None)
        s.observe_page(page(f"http://a.cn/f/{i + 1}.html", OFF), 0.01, None)
    assert s.page_model.retrain()
    got = s.rejudge_pages(0.5)
    assert [(h.url, h.text()) for h, _, _ in got] == [(held.url, held.text)]
    (_, p, model), = got
    assert p >= 0.5 and model is not None and model > 0.5
    assert p == pytest.approx(s.page_relevance(held))  # what a fresh judgement gives
    assert list(s.rejudge.pages) == [money.url]  # off-topic: still held, not accepted
    assert s.rejudge_pages(0.5) == []  # once per training
    assert s.rejudge.accepted == 1 and s.rejudge.rounds == 1


def test_rejudge_is_off_by_default_and_in_paper_mode():
    assert CalibratedLinkScorer.from_topic(parse_topic(TOPIC)).rejudge is None
    paper = parse_topic(TOPIC + '[priority]\nmode = "paper"\n[learning]\nrejudge = 10\n')
    assert paper.priority.mode == "paper"  # the paper's scorer has no page model to retrain


def test_the_buffer_is_bounded_and_round_trips(tmp_path):
    buf = RejudgeBuffer(3, max_words=4)
    for i in range(5):
        assert buf.hold({"url": f"http://a.cn/{i}", "text": "正文" * 50, "depth": i},
                        ["球迷", "教练", "球迷", "主场", "客场", "训练"], 0.3, html="<p>x</p>")
    assert list(buf.pages) == ["http://a.cn/2", "http://a.cn/3", "http://a.cn/4"]
    assert buf.evicted == 2
    held = buf.pages["http://a.cn/4"]
    assert sorted(held.word_list()) == sorted(["球迷", "教练", "球迷", "主场"])  # 4 words kept
    small = RejudgeBuffer(10, max_bytes=2 * held.size)
    for i in range(5):
        small.hold({"url": f"http://a.cn/{i}", "text": "正文" * 50}, ["球迷"] * 6, 0.3, html="<p>x</p>")
    assert len(small) <= 2 and small.bytes <= small.max_bytes
    save_held(tmp_path, buf)
    again = RejudgeBuffer(3)
    assert load_held(tmp_path, again) == 3
    h = again.pages["http://a.cn/4"]
    assert (h.text(), h.html(), h.literal, h.record["depth"]) == ("正文" * 50, "<p>x</p>", 0.3, 4)
    state = json.loads((tmp_path / "topicrawl-rejudge.json").read_text(encoding="utf-8"))
    state["pages"][0]["text"] = "bm90IHpsaWI="  # not zlib: refused whole
    (tmp_path / "topicrawl-rejudge.json").write_text(json.dumps(state), encoding="utf-8")
    assert load_held(tmp_path, RejudgeBuffer(3)) == 0


def html(head_text: tuple[str, str], links: str = "") -> bytes:
    body = "".join(f"<p>{head_text[1]}。{head_text[1]}，{head_text[1]}。</p>" for _ in range(4))
    return (f"<html><head><title>{head_text[0]}</title></head><body><article><h1>{head_text[0]}"
            f"</h1>{body}</article>{links}</body></html>").encode()  # fmt: skip


def response(url: str, body: bytes) -> HtmlResponse:
    return HtmlResponse(url, body=body, encoding="utf-8", request=Request(url))


def test_spider_accepts_a_rejected_page_after_a_retraining_within_the_budget(tmp_path):
    topic = tmp_path / "t.toml"
    topic.write_text(TOPIC + "[learning]\nrejudge = 100\n", encoding="utf-8")
    crawler = get_crawler(TopicSpider, {})
    spider = crawler._create_spider(seeds="http://a.cn/", topic=str(topic), max_pages=8)  # noqa: SLF001
    crawler.spider = spider
    model = spider.scorer.page_model
    model.min_positives = model.min_negatives = 2
    model.retrain_every = 7
    stats = crawler.stats
    # a link the rejected page holds, not followed at first (its anchor has no topic word)
    held_url, target = "http://a.cn/s/0.html", "http://a.cn/s/next.html"
    out = list(spider.parse_page(response(held_url, html(HELD, f'<a href="{target}">主场 教练 球迷</a>'))))
    first = [x for x in out if isinstance(x, PageItem)]
    assert len(first) == 1 and not first[0]["accepted"]
    assert not [x for x in out if isinstance(x, Request)]
    assert stats.get_value("topicrawl/links/dropped") == 1
    items: list[PageItem] = []
    requests: list[Request] = []
    for i in range(1, 7):
        url, ht = (f"http://a.cn/s/{i}.html", ON) if i % 2 else (f"http://a.cn/f/{i}.html", OFF)
        for x in spider.parse_page(response(url, html(ht))):
            (items if isinstance(x, PageItem) else requests).append(x)
    assert model.trainings == 1  # at the 7th page
    again = [x for x in items if x["url"] == held_url]
    assert len(again) == 1
    item = again[0]
    assert item["accepted"] and item["relevance"] >= 0.5
    assert item["relevance_parts"]["rejudged_from"] < 0.5 <= item["relevance_parts"]["model"]
    assert item["html"] and "主场" in item["text"] and item["depth"] == 0
    assert stats.get_value("topicrawl/pages/rejudged_accepted") == 1
    # its links scored again with its new relevance: the dropped one is followed now
    assert [r.url for r in requests if r.meta.get("parent_url") == held_url] == [target]
    # the budget counted the page when it was fetched, not again: 7 of 8 taken
    assert stats.get_value("topicrawl/pages/fetched") == 7
    with pytest.raises(CloseSpider):
        list(spider.parse_page(response("http://a.cn/s/9.html", html(ON))))
    assert stats.get_value("topicrawl/pages/fetched") == 8
    assert spider.parse_page(response("http://a.cn/s/10.html", html(ON))) is not None
    list(spider.parse_page(response("http://a.cn/s/10.html", html(ON))))
    assert stats.get_value("topicrawl/pages/over_budget") == 1
