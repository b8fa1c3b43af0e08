"""Hostile and broken pages: stray bytes, link farms; a spilled run is marked so."""

from __future__ import annotations

import pytest
from scrapy.exceptions import DropItem
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.test import get_crawler
from test_store import FailingStore, page

from crawler.pipelines import StorePipeline
from models.store import Store
from topicrawl.extract import decode_html
from topicrawl.outcome import REASON_KEY

TEXT = "<html><head><meta charset='{cs}'></head><body>国务院召开常务会议，部署经济工作。</body></html>"


@pytest.mark.parametrize("stray", [b"\xff", b"\x80", b"\xc3", b"\xe5\x9b"])
def test_utf8_with_a_stray_byte_stays_utf8(stray):
    body = (TEXT.format(cs="utf-8") * 20).encode("utf-8")
    body = body[:200] + stray + body[200:]
    text, codec = decode_html(body, "utf-8")
    assert codec == "utf-8" and "国务院召开常务会议" in text and "鍥" not in text


def test_gbk_with_a_stray_byte_stays_gbk():
    body = (TEXT.format(cs="gbk") * 20).encode("gbk")
    body = body[:201] + b"\xff" + body[201:]
    text, codec = decode_html(body, "gbk")
    assert codec == "gb18030" and text.count("国务院召开常务会议") >= 19


def test_gbk_is_not_taken_for_utf8():
    body = (TEXT.format(cs="gbk") * 20).encode("gbk")
    assert decode_html(body, None)[1] == "gb18030"


def test_a_spilled_run_is_marked_and_names_the_import_command(tmp_path, caplog):
    db = f"sqlite:///{tmp_path / 'o.db'}"
    real = Store.from_url(db)
    stats = MemoryStatsCollector(get_crawler())
    pipe = StorePipeline(db, batch_size=2, spill_dir=str(tmp_path / "spill"), clean=False,
                         stats=stats, close_wait=0.5)  # fmt: skip
    pipe.store = FailingStore(real)
    pipe.run_id = real.start_run("t", "", {})
    for i in range(3):
        try:
            pipe.process_item(page(f"http://news.example.cn/{i}.html", accepted=True))
        except DropItem:
            pass
    pipe.flush(final=True)
    assert stats.get_value(REASON_KEY) == "pages_spilled"
    assert stats.get_value("topicrawl/storage/spilled") == 3
    assert "topicrawl import-spill" in caplog.text
    pipe.store = real
    pipe.spider_closed(None, "finished")
    run = Store.from_url(db).get_run(pipe.run_id)
    assert run.stats["finish_reason"] == "pages_spilled"
