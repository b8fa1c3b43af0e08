"""Identical cleaned text is always an exact duplicate (issue 11, item 4).

The cascade runs on the main text, before cleaning: a path calendar's days, whose main texts
differ only in the date heading that cleaning removes, used to pass its exact stage and
become documents with one and the same text."""

from __future__ import annotations

from conftest import CountingStats

from crawler.items import PageItem
from dedup.exact import CorpusTextIndex
from dedup.pipeline import DedupPipeline
from dedup.storage import make_storage
from postprocess.clean import Cleaner

INTRO = (
    "新闻回顾栏目按日期汇集本站发布的时政新闻、政府工作会议和中央政策解读等报道。"
    "读者可以通过前一天、后一天的链接浏览往日新闻，也可以返回首页查看最新报道。"
)


def test_corpus_text_index_ignores_whitespace_width_and_case():
    index = CorpusTextIndex(make_storage({"type": "memory"}))
    assert index.check_and_add("a", f"{INTRO}\nABC 2019") is None
    assert index.check_and_add("a", f"{INTRO}\nABC 2019") is None  # not a copy of itself
    # other line breaks and spaces, full-width letters and digits (NFKC), lower case
    copy = index.check_and_add("b", f"  {INTRO[:20]}\n\n{INTRO[20:]}  ａｂｃ　２０１９")
    assert copy is not None and (copy.doc_id, copy.method, copy.score) == ("a", "exact", 1.0)
    assert index.check_and_add("c", f"{INTRO}\nABC 2020") is None  # another text
    assert index.check_and_add("d", "   ") is None and index.check_and_add("e", "   ") is None
    index.remove("a")  # a recrawled page that changed: its old text is free again
    assert index.check_and_add("b", f"{INTRO}\nabc 2019") is None


def _day(d: int) -> PageItem:
    """A path calendar's day: the date heading, then the same paragraph every day."""
    head = f"2019年7月{d}日 新闻回顾"
    html = (f"<html><head><title>{head}_华夏日报网</title></head><body><h1>{head}</h1>"
            f"<p>{INTRO}</p></body></html>")  # fmt: skip
    url = f"http://a.cn/calendar/2019/07/{d}/"
    return PageItem(url=url, host="a.cn", title=head, text=f"{head}\n{INTRO}", html=html,
                    language="zh", accepted=True)  # fmt: skip


def test_days_of_a_path_calendar_are_exact_duplicates_after_cleaning():
    stats = CountingStats()
    dedup = DedupPipeline(["exact"], backend={"type": "memory"}, stats=stats)
    cleaner = Cleaner()
    days = [_day(d) for d in (24, 25, 26)]
    for item in days:  # the exact stage sees the main texts: the date makes them differ
        dedup.process_item(item)
        assert item.get("duplicate") is None
    cleaned = [cleaner.clean(html=i["html"], text=i["text"], url=i["url"]).text for i in days]
    assert cleaned[0] == cleaned[1] == cleaned[2] == INTRO
    assert dedup.check_document(days[0]["url"], cleaned[0]) is None
    for item, text in zip(days[1:], cleaned[1:], strict=True):
        copy = dedup.check_document(item["url"], text)
        assert copy is not None and copy.doc_id == days[0]["url"] and copy.method == "exact"
    assert stats.values["topicrawl/dedup/dropped/exact"] == 2
    assert stats.values["topicrawl/dedup/exact_after_cleaning"] == 2
    dedup.close_spider()
