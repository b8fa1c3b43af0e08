"""Re-judgement of rejected pages after a retraining of the page model
(relevance.learning.rejudge, ``[learning] rejudge``)."""

from __future__ import annotations

import json

import pytest
from conftest import run_crawl
from scrapy import Request
from scrapy.exceptions import CloseSpider, DropItem
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from crawler.items import PageItem
from crawler.spiders.topic import TopicSpider
from models.store import Store
from relevance.calibrated import CalibratedLinkScorer
from relevance.learning.rejudge import RejudgeBuffer, load_held, save_held
from relevance.learning.selftrain import bag_counts
from relevance.linkscore import PageInfo
from relevance.topic import parse_topic

SPORT = ["比赛", "球队", "球员", "进球", "联赛"]
TOPIC = 'name = "体育"\n[words]\n' + "".join(f'"{w}" = 1.0\n' for w in SPORT)
# one topic word in the head, the rest words the page model learns from the crawl: P_lit
# between the pseudo-labels' thresholds (unlabelled) and below the page threshold
HELD = ("比赛 教练", "主场 客场 教练 球迷 训练 比赛")
ON = ("球队 比赛 联赛", "球队 在 联赛 比赛 中 进球 ， 球员 主场 教练 球迷 客场 训练 比赛 进球 联赛 球员")
HELD_HTML = ("比赛 教练", "主场 客场 教练 球迷 训练")  # the same as a page of 4 paragraphs
OFF = ("基金 市场", "银行 基金 利率 市场 投资 股票 银行 基金 利率 市场")


def scorer(rejudge: int = 10) -> CalibratedLinkScorer:
    topic = TOPIC + f"[learning]\nrejudge = {rejudge}\nrejudge_literal = 0.0\n"
    s = CalibratedLinkScorer.from_topic(parse_topic(topic))
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
    on = CalibratedLinkScorer.from_topic(parse_topic(TOPIC + "[learning]\nrejudge = 10\n"))
    assert on.rejudge is not None and on.rejudge.min_literal == 0.4
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
    assert bag_counts(held.words) == {"球迷": 2, "教练": 1, "主场": 1}  # the first 4 words
    small = RejudgeBuffer(10, max_bytes=2 * held.size)
    for i in range(5):
        small.hold({"url": f"http://a.cn/{i}", "text": "正文" * 50}, ["球迷"] * 6, 0.3, html="<p>x</p>")
    assert len(small) <= 2 and small.bytes <= small.max_bytes
    strict = RejudgeBuffer(10, min_literal=0.4)  # weak literal evidence: not kept
    assert not strict.hold({"url": "http://a.cn/w", "text": "x"}, ["球迷"], 0.39, html=None)
    assert strict.hold({"url": "http://a.cn/s", "text": "x"}, ["球迷"], 0.41, html=None)
    assert list(strict.pages) == ["http://a.cn/s"]
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
    spider_run(tmp_path)


def spider_run(tmp_path) -> list[PageItem]:
    """Pages through the spider's ``parse_page`` (asserting on its output along the way): a
    rejected page, then on- and off-topic pages until the page model's first training;
    returns the page items in order."""
    topic = tmp_path / "t.toml"
    topic.write_text(TOPIC + "[learning]\nrejudge = 100\nrejudge_literal = 0.1\n", encoding="utf-8")
    crawler = get_crawler(TopicSpider, {"TOPICRAWL_REQUEUE_MARGIN": 0.02})
    spider = crawler._create_spider(seeds="http://a.cn/", topic=str(topic), max_pages=8)  # noqa: SLF001
    crawler.spider = spider
    model = spider.scorer.page_model
    model.min_positives = model.min_negatives = 2
    model.retrain_every = 7
    stats = crawler.stats
    # the rejected page's link is queued with the page's low relevance in its priority
    held_url, target = "http://a.cn/s/0.html", "http://a.cn/s/next.html"
    out = list(spider.parse_page(response(held_url, html(HELD_HTML, f'<a href="{target}">主场 教练 球迷</a>'))))
    first = [x for x in out if isinstance(x, PageItem)]
    assert len(first) == 1 and not first[0]["accepted"]
    (queued,) = [x for x in out if isinstance(x, Request)]
    assert queued.url == target and not queued.dont_filter
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
    # its links scored again with its new relevance as the holding page's: re-queued higher
    (again_queued,) = [r for r in requests if r.meta.get("parent_url") == held_url]
    assert again_queued.url == target and again_queued.dont_filter
    assert again_queued.priority > queued.priority
    assert again_queued.meta["link_score"]["parent"] == pytest.approx(item["relevance"], abs=1e-3)
    # the budget counted the page when it was fetched, not again: 7 of 8 taken
    assert stats.get_value("topicrawl/pages/fetched") == 7
    with pytest.raises(CloseSpider):
        list(spider.parse_page(response("http://a.cn/s/9.html", html(ON))))
    assert stats.get_value("topicrawl/pages/fetched") == 8
    list(spider.parse_page(response("http://a.cn/s/10.html", html(ON))))
    assert stats.get_value("topicrawl/pages/over_budget") == 1
    return first + items


def test_the_store_keeps_one_accepted_row_with_its_html(tmp_path):
    """A rejected page's row, then its item accepted on re-judgement: the store pipeline
    upserts one row, accepted, with the HTML, and writes its document."""
    from crawler.pipelines import StorePipeline

    spider_items = spider_run(tmp_path)
    held = [x for x in spider_items if x["url"] == "http://a.cn/s/0.html"]
    assert [x["accepted"] for x in held] == [False, True]
    db = f"sqlite:///{tmp_path / 's.db'}"
    store = Store.from_url(db)
    pipe = StorePipeline(db, batch_size=1, clean=False)
    pipe.store, pipe.run_id = store, store.start_run("t", "", {})
    with pytest.raises(DropItem):
        pipe.process_item(held[0])
    pipe.flush()
    pipe.process_item(held[1])
    pipe.flush(final=True)
    (row,) = [p for p in store.iter_pages(pipe.run_id) if p.url == held[0]["url"]]
    assert row.accepted and row.relevance >= 0.5 and "主场" in (row.html or "")
    assert [d.url for d in store.iter_documents(pipe.run_id)] == [row.url]


def test_crawl_with_rejudge_keeps_its_budget_and_resumes_from_jobdir(proxy, small_web, tmp_path):
    """A real crawl of the local test web with ``rejudge``: the budget holds, every URL is
    stored once, a page accepted on re-judgement (if any on this small web) is stored
    accepted with its HTML; the rejected pages held are written to JOBDIR at close and a
    resumed crawl reads them back."""
    truth = json.loads((small_web / "ground_truth.json").read_text(encoding="utf-8"))
    topic = tmp_path / "tiyu.toml"
    # the benchmark's recipe (bench/topicfiles.py): the top 30 words by χ² on THUCNews headlines
    words = ("火箭 皇马 巴萨 米兰 曼联 科比 姚明 AC 阿森纳 球队 球迷 国米 主帅 连胜 阿联 湖人 球员 "
             "图文 夺冠 热火 尤文 转会 客场 足协 申花 男篮 切尔西 官方 队友 篮网").split()  # fmt: skip
    topic.write_text('name = "体育"\n[words]\n' + "".join(f'"{w}" = 1.0\n' for w in words)
                     + "[learning]\nrejudge = 500\nrejudge_literal = 0.0\n", encoding="utf-8")  # fmt: skip
    db = f"sqlite:///{tmp_path / 'crawl.db'}"
    job = tmp_path / "job"
    result = run_crawl(proxy, truth["seeds"]["portal"], topic, db, args={"max_pages": 60},
                       settings={"JOBDIR": str(job)})  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    store = Store.from_url(db)
    run = store.list_runs()[-1]
    stats = run.stats
    assert stats["topicrawl/pages/fetched"] - stats.get("topicrawl/pages/broken", 0) <= 60
    pages = list(store.iter_pages(run.id))
    assert len(pages) == len({p.url for p in pages}) <= 60
    rejudged = [p for p in pages if p.relevance_parts and "rejudged_from" in p.relevance_parts]
    assert len(rejudged) == stats.get("topicrawl/pages/rejudged_accepted", 0)
    documents = {d.url for d in store.iter_documents(run.id)}
    for p in rejudged:
        assert p.relevance >= 0.5 > p.relevance_parts["rejudged_from"]
        assert p.html and p.text and p.accepted == (p.url in documents)
    held = json.loads((job / "topicrawl-rejudge.json").read_text(encoding="utf-8"))
    assert len(held["pages"]) == stats["topicrawl/pages/rejudge_held"] > 0
    assert not {p["record"]["url"] for p in held["pages"]} & documents
    again = run_crawl(proxy, truth["seeds"]["portal"], topic, db, args={"max_pages": 90},
                      settings={"JOBDIR": str(job)})  # fmt: skip
    assert again.returncode == 0, again.stderr[-3000:]
    assert f"{len(held['pages'])} rejected pages to judge again restored from JOBDIR" in again.stderr


def test_warc_reference_marks_only_the_responses_own_page():
    """A page judged again is yielded by another page's callback: it keeps its own WARC place."""
    from crawler.warc import META_KEY, WarcReferenceMiddleware

    url = "http://a.cn/s/1.html"
    resp = HtmlResponse(url, body=b"<html></html>", encoding="utf-8",
                        request=Request(url, meta={META_KEY: {"file": "w.warc.gz", "offset": 9,
                                                              "length": 5}}))  # fmt: skip
    own = PageItem(url=url, final_url=url)
    other = PageItem(url="http://a.cn/s/0.html", final_url="http://a.cn/s/0.html",
                     warc_file="v.warc.gz", warc_offset=1, warc_length=2)  # fmt: skip
    out = list(WarcReferenceMiddleware().process_spider_output(resp, [own, other]))
    assert [(x["warc_file"], x["warc_offset"]) for x in out] == [("w.warc.gz", 9), ("v.warc.gz", 1)]


@pytest.mark.parametrize("calibrated", [False, True])
def test_rejudgement_accepts_on_the_calibrated_acceptance(calibrated):
    from relevance.acceptance import AcceptanceMap

    s = scorer()
    if calibrated:  # a calibration that puts every P(page) from 0.05 up at or above 0.9
        s.accept_map = AcceptanceMap((0.0, 0.05, 1.0), (0.0, 0.9, 1.0))
    held = page("http://a.cn/s/0.html", HELD)
    assert judge_and_hold(s, held) < 0.5
    for i in range(3):
        s.observe_page(page(f"http://a.cn/s/{i + 1}.html", ON), 0.99, None)
        s.observe_page(page(f"http://a.cn/f/{i + 1}.html", OFF), 0.01, None)
    assert s.page_model.retrain()
    assert 0.5 <= s.page_relevance(held) < 0.9  # on-topic now, but not at the plain 0.9
    got = [h.url for h, _, _ in s.rejudge_pages(0.9)]
    assert got == ([held.url] if calibrated else [])
