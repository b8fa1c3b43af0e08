"""Exact hashing, the cascade and the Scrapy pipeline (no crawler needed)."""

from __future__ import annotations

import pytest
from conftest import CountingStats
from scrapy.exceptions import NotConfigured

from crawler.items import PageItem
from dedup.base import REGISTRY, Detector, Doc, Match, detector_class, register
from dedup.cascade import Cascade
from dedup.exact import ExactDetector, text_fingerprint
from dedup.pipeline import DedupPipeline, document_replaced, visible_text
from dedup.storage import MemoryStorage
from topicrawl.errors import ConfigError

ARTICLE = (
    "国家统计局今天发布的数据显示，十月份的经济运行是平稳的。在消费领域，社会消费品零售总额"
    "同比增长了百分之五。专家表示，这是政策效应持续显现的结果。在投资方面，制造业投资的增速"
    "是加快的，高技术产业的投资增长了百分之十一。就业形势总体是稳定的，城镇调查失业率为百分之五。"
)
OTHER = (
    "本赛季的联赛进入了最后阶段，主队在主场的比赛中以三比一战胜了对手。球队的主教练是在赛后"
    "接受采访的，他说球员的表现是出色的。下一轮的比赛将在周六进行，球迷的热情是高涨的。"
)


def test_exact_fingerprint_ignores_layout():
    assert text_fingerprint("Ａ B\n\nc") == text_fingerprint("ab  C")
    assert text_fingerprint("abc") != text_fingerprint("abd")


def test_exact_detector():
    det = ExactDetector(MemoryStorage())
    assert det.check_and_add("a", Doc("第一段。\n第二段。")) is None
    assert det.check_and_add("b", Doc("第一段。 第二段。")) == Match("a", 1.0, "exact")
    assert det.check_and_add("c", Doc("   ")) is None  # empty text never matches
    assert det.check_and_add("d", Doc("   ")) is None
    det.add("a", Doc("改过的文字"))  # re-adding an id replaces its fingerprint
    assert det.query(Doc("第一段。第二段。")) == []
    assert det.query(Doc("改过的文字"))[0].doc_id == "a"
    det.remove("a")
    assert det.query(Doc("改过的文字")) == []


def test_registry_errors_and_unknown_options():
    with pytest.raises(ConfigError, match="unknown dedup method"):
        detector_class("nope")
    with pytest.raises(ConfigError, match="unknown option"):
        ExactDetector(MemoryStorage(), tau=0.3)


@register("_first_word")
class FirstWordDetector(Detector):
    """A toy method for cascade tests: documents with the same first character match."""

    def features(self, doc):
        return doc.text[:1]

    def query(self, doc):
        hit = self.storage.hget(self.key("h"), self.features(doc))
        return [Match(hit.decode(), 0.5, self.name)] if hit else []

    def add(self, doc_id, doc):
        self.storage.hset(self.key("h"), self.features(doc), doc_id)

    def remove(self, doc_id):
        for k, v in self.storage.hgetall(self.key("h")).items():
            if v.decode() == doc_id:
                self.storage.hdel(self.key("h"), k)


def test_cascade_first_match_decides_and_counts():
    c = Cascade(MemoryStorage(), ["exact", "spotsigs", "_first_word"])
    assert c.check_and_add("u1", Doc(ARTICLE)).duplicate is None
    assert c.check_and_add("u2", Doc(ARTICLE)).duplicate.method == "exact"
    d = c.check_and_add("u3", Doc("转载自新华网。" + ARTICLE + "（责任编辑：王五）"))
    assert d.duplicate.method == "spotsigs" and d.duplicate.doc_id == "u1"
    assert d.duplicate.score >= 0.5
    d = c.check_and_add("u4", Doc("国" + OTHER))
    assert d.duplicate == Match("u1", 0.5, "_first_word")
    assert c.check_and_add("u5", Doc(OTHER)).duplicate is None
    assert c.counts == {"exact": 1, "spotsigs": 1, "_first_word": 1}
    assert c.checked == 5
    # a duplicate is not indexed: its own copy matches the original, not it
    assert c.query(Doc("转载自新华网。" + ARTICLE + "（责任编辑：王五）")).doc_id == "u1"
    c.remove("u1")
    assert c.query(Doc(ARTICLE)) is None


def test_cascade_keep_longer_and_earlier():
    c = Cascade(MemoryStorage(), ["exact", "spotsigs"], keep="longer")
    assert c.check_and_add("short", Doc(ARTICLE)).duplicate is None
    d = c.check_and_add("long", Doc(ARTICLE + "这是一段补充的说明文字。"))
    assert d.duplicate is None and d.replaced.doc_id == "short"
    assert c.query(Doc(ARTICLE)).doc_id == "long"

    c = Cascade(MemoryStorage(), ["exact"], keep="earlier")
    c.check_and_add("late", Doc(ARTICLE, published="2024-05-02"))
    assert c.check_and_add("undated", Doc(ARTICLE)).duplicate.doc_id == "late"
    d = c.check_and_add("early", Doc(ARTICLE, published="2024-05-01"))
    assert d.replaced.doc_id == "late"


def test_cascade_config():
    c = Cascade.from_config(
        {"methods": "exact, spotsigs", "spotsigs": {"tau": 0.7}, "backend": {"type": "memory"}}
    )
    assert c.names == ["exact", "spotsigs"] and c.detectors[1].tau == 0.7
    c = Cascade.from_config({"methods": [{"name": "spotsigs", "tau": 0.6}]})
    assert c.detectors[0].tau == 0.6
    with pytest.raises(ConfigError, match="not in 'methods'"):
        Cascade.from_config({"methods": ["exact"], "spotsigs": {"tau": 0.6}})
    with pytest.raises(ConfigError, match="twice"):
        Cascade(MemoryStorage(), ["exact", "exact"])
    with pytest.raises(ConfigError, match="keep"):
        Cascade(MemoryStorage(), ["exact"], keep="newest")
    with pytest.raises(ConfigError, match="unknown dedup method"):
        Cascade(MemoryStorage(), ["exact", "bogus"])


def _item(url, text, **kw):
    return PageItem(url=url, text=text, title=kw.pop("title", "标题"), **kw)


def test_pipeline_marks_duplicates_and_counts_drops():
    stats = CountingStats()
    pipe = DedupPipeline(["exact", "spotsigs"], stats=stats)
    first = pipe.process_item(_item("http://a/1", ARTICLE))
    assert first.get("duplicate") is None
    dup = pipe.process_item(_item("http://b/9", "来源：人民网\n" + ARTICLE))
    assert dup["duplicate"]["of"] == "http://a/1" and dup["duplicate"]["method"] == "spotsigs"
    assert 0.5 <= dup["duplicate"]["score"] <= 1.0
    same = pipe.process_item(_item("http://c/2", ARTICLE))
    assert same["duplicate"] == {"of": "http://a/1", "method": "exact", "score": 1.0}
    empty = pipe.process_item(_item("http://d/3", "  "))
    assert empty.get("duplicate") is None
    off = pipe.process_item(_item("http://e/4", ARTICLE, accepted=False))
    assert off.get("duplicate") is None  # not checked
    assert stats.values == {
        "topicrawl/dedup/checked": 3,
        "topicrawl/dedup/dropped/spotsigs": 1,
        "topicrawl/dedup/dropped/exact": 1,
    }
    pipe.close_spider(None)


def test_pipeline_visible_text_mode_and_replaced_signal():
    sent = []

    class Signals:
        def send_catch_log(self, signal, **kw):
            sent.append((signal, kw))

    html = (
        f"<html><body><script>var x=1;</script><div>{ARTICLE}</div><p>导航 首页</p></body></html>"
    )
    assert ARTICLE in visible_text(html) and "var x" not in visible_text(html)
    pipe = DedupPipeline(["exact", "spotsigs"], text="visible", keep="longer", signals=Signals())
    pipe.process_item(_item("http://a/1", "", html=html))
    item = pipe.process_item(
        _item("http://b/2", "", html=html.replace("首页", "首页 新闻 体育 财经"))
    )
    assert item.get("duplicate") is None
    assert sent[0][0] is document_replaced
    assert sent[0][1]["old_url"] == "http://a/1" and sent[0][1]["new_url"] == "http://b/2"


def test_pipeline_from_crawler_reads_settings(tmp_path):
    from scrapy.utils.test import get_crawler

    crawler = get_crawler(settings_dict={"TOPICRAWL_DEDUP_ENABLED": False})
    with pytest.raises(NotConfigured):
        DedupPipeline.from_crawler(crawler)
    crawler = get_crawler(
        settings_dict={
            "TOPICRAWL_DEDUP_METHODS": ["exact"],
            "TOPICRAWL_DEDUP_KEEP": "earlier",
            "JOBDIR": str(tmp_path / "job"),
        }
    )
    pipe = DedupPipeline.from_crawler(crawler)
    assert pipe.methods == ["exact"] and pipe.keep == "earlier" and pipe.stats is crawler.stats

    class Spider:
        name = "t"

    pipe.open_spider(Spider())
    assert pipe.cascade.storage.type == "sqlite"
    assert (tmp_path / "job" / "dedup.sqlite").exists()
    pipe.process_item(_item("http://a/1", ARTICLE))
    pipe.close_spider(None)
    # a resumed crawl reopens the same index
    pipe = DedupPipeline.from_crawler(crawler)
    assert pipe.process_item(_item("http://a/2", ARTICLE))["duplicate"]["of"] == "http://a/1"
    pipe.close_spider(None)
    with pytest.raises(ConfigError):
        DedupPipeline(text="html")


def test_registry_holds_builtin_methods():
    assert detector_class("exact") is ExactDetector
    assert "spotsigs" in REGISTRY or detector_class("spotsigs")


def test_pipeline_reads_the_topic_dedup_section():
    class Topic:
        dedup = {"methods": ["exact"], "keep": "longer", "spotsigs": {"tau": 0.9}}

    class Spider:
        name = "s"
        topic = Topic()

    pipe = DedupPipeline(["exact", "spotsigs"], options={"spotsigs": {"tau": 0.6}})
    pipe.open_spider(Spider())
    assert pipe.cascade.names == ["exact"] and pipe.cascade.keep == "longer"
    Topic.dedup = {"spotsigs": {"tau": 0.9}}
    pipe = DedupPipeline(["exact", "spotsigs"], options={"spotsigs": {"chain": 1}})
    pipe.open_spider(Spider())
    assert pipe.cascade.detectors[1].tau == 0.9 and pipe.cascade.detectors[1].chain == 1
    Topic.dedup = {"keep": "newest"}
    with pytest.raises(ConfigError):
        DedupPipeline().open_spider(Spider())


def test_pipeline_keeps_pages_when_the_index_is_down(tmp_path):
    stats = CountingStats()
    backend = {"type": "redis", "url": "redis://127.0.0.1:1/0", "lock_wait": 0.1}
    pipe = DedupPipeline(["exact"], backend=backend, stats=stats, local_fallback=False)
    item = pipe.process_item(_item("http://a/1", ARTICLE))
    assert item.get("duplicate") is None
    assert stats.values == {"topicrawl/dedup/errors": 1}


def test_pipeline_checks_locally_when_the_index_is_down_from_the_start():
    stats = CountingStats()
    backend = {"type": "redis", "url": "redis://127.0.0.1:1/0", "lock_wait": 0.1}
    pipe = DedupPipeline(["exact", "spotsigs"], backend=backend, stats=stats, fallback_retry=60)
    assert pipe.process_item(_item("http://a/1", ARTICLE)).get("duplicate") is None
    dup = pipe.process_item(_item("http://b/2", "来源：人民网\n" + ARTICLE))
    assert dup["duplicate"]["of"] == "http://a/1"
    assert stats.values == {"topicrawl/dedup/checked": 2, "topicrawl/dedup/local_fallback": 2,
                            "topicrawl/dedup/dropped/spotsigs": 1}  # fmt: skip
    pipe.close_spider(None)  # still down: said, and counted
    assert stats.values["topicrawl/dedup/local_fallback_unwritten"] == 1
