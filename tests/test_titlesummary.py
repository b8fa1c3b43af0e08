"""Title + summary (the meta-search duplicate test)."""

from __future__ import annotations

import pytest

from dedup import titlesummary as ts
from dedup.base import Doc, make_detector
from dedup.storage import make_storage


@pytest.mark.parametrize(
    ("title", "theme"),
    [
        ("习近平出席二十国集团领导人峰会_新闻_腾讯网", "习近平出席二十国集团领导人峰会"),
        ("习近平出席二十国集团领导人峰会 - 新浪新闻", "习近平出席二十国集团领导人峰会"),
        ("新浪网 | 习近平出席二十国集团领导人峰会", "习近平出席二十国集团领导人峰会"),
        ("央视网｜习近平出席二十国集团领导人峰会", "习近平出席二十国集团领导人峰会"),
        ("中国经济稳中向好-新华网", "中国经济稳中向好"),
        ("中国经济稳中向好——人民网", "中国经济稳中向好"),
        ("COVID-19 vaccine rollout begins - BBC News", "COVID-19 vaccine rollout begins"),
        ("No separator here", "No separator here"),
        ("", ""),
    ],
)
def test_title_theme_strips_site_names(title, theme):
    assert ts.title_theme(title) == theme


def test_bigram_dice_by_hand():
    # 习近平出席峰会 (6 bigrams) vs 习近平出席会议 (6 bigrams): 习近 近平 平出 出席 shared
    assert ts.dice("习近平出席峰会", "习近平出席会议") == pytest.approx(2 * 4 / 12)
    assert ts.dice("abc", "abc") == 1.0
    assert ts.dice("", "abc") == 0.0
    assert ts.normalize("Ａ股，大涨！ 3%") == "a股大涨3"


def test_similarity_rule_title_or_summary():
    a = ts.page_features("国家统计局发布十月份国民经济运行数据_财经_网易", "", "")
    b = ts.page_features("国家统计局发布十月国民经济运行数据 - 新浪财经", "", "")
    assert ts.dice(a.theme, b.theme) > 0.85
    assert ts.similarity(a, b) > 0.85
    other = ts.page_features("国家统计局发布九月份居民消费价格数据_财经_网易", "", "")
    assert ts.similarity(a, other) == 0.0
    lead = "国家统计局今天发布数据显示，十月份国民经济延续恢复态势，生产需求稳步改善，就业物价总体稳定。"
    c = ts.page_features("十月经济数据出炉", "", lead + "其余正文")
    d = ts.page_features("统计局：十月国民经济延续恢复", lead, "换了模板的正文" + lead)
    assert ts.dice(c.theme, d.theme) < 0.85
    assert ts.similarity(c, d) > 0.7  # the summaries agree
    short = ts.page_features("图片新闻", "", "")
    assert ts.similarity(short, short) == 0.0  # too short to be evidence


def test_length_guard_rejects_half_and_commented_copies():
    title = "国家统计局发布十月份国民经济运行数据_财经_网易"
    body = "国家统计局今天发布数据。" * 20
    full = ts.page_features(title, "", body)
    half = ts.page_features(title, "", body[: len(body) // 2])
    assert full.length == 220 and half.length == 110
    assert ts.similarity(full, half) == 0.0  # 2.0 > max_length_ratio 1.5
    assert ts.similarity(full, half, max_length_ratio=None) == 1.0  # the pure method
    assert ts.similarity(full, ts.page_features(title, "", body[:180])) == 1.0  # 220 / 165


def test_summary_prefers_description_then_lead():
    assert ts.summary_of("  ", "正文第一句。第二句。", lead_chars=4) == "正文第一"
    assert ts.summary_of("摘要在此", "正文") == "摘要在此"


def test_sketch_is_a_stable_subset():
    s = ts.sketch("国家统计局发布十月份国民经济运行数据", 6)
    assert len(s) == 6 and set(s) <= ts.bigrams("国家统计局发布十月份国民经济运行数据")
    assert s == ts.sketch("国家统计局发布十月份国民经济运行数据", 6)


@pytest.mark.parametrize("storage_type", ["memory", "sqlite"])
def test_detector(tmp_path, storage_type):
    config = {"type": storage_type, "path": str(tmp_path / "t.sqlite")}
    if storage_type == "memory":
        config.pop("path")
    det = make_detector("title", make_storage(config))
    first = Doc(text="正文一", title="国家统计局发布十月份国民经济运行数据_财经_网易")
    assert det.check_and_add("a", first) is None
    assert det.check_and_add("b", Doc(text="正文二", title="今日股市收盘点评 - 新浪财经")) is None
    copy = Doc(text="正文三", title="转载：国家统计局发布十月份国民经济运行数据 | 某某网")
    match = det.check_and_add("c", copy)
    assert match is not None and match.doc_id == "a" and match.method == "title"
    assert det.query(Doc(text="x", title="新浪财经")) == []
    det.remove("a")
    assert det.query(copy) == []
    assert not [k for k in det.storage.keys("title:") if det.storage.sismember(k, "a")]


@pytest.mark.redis
def test_detector_on_redis(redis_url):
    import uuid

    storage = make_storage({"type": "redis", "url": redis_url, "namespace": f"t-{uuid.uuid4()}"})
    try:
        det = make_detector("title", storage)
        title = "国家统计局发布十月份国民经济运行数据_财经_网易"
        assert det.check_and_add("a", Doc(text="正文", title=title)) is None
        assert det.check_and_add("b", Doc(text="正文", title="转载：" + title)).doc_id == "a"
        det.remove("a")
        assert storage.keys("title:") == []
    finally:
        storage.clear()
        storage.close()
