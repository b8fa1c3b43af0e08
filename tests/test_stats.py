"""crawler.stats.QuickStatsCollector: Scrapy's memory stats collector, same results, plain
attribute access (issue 16)."""

from __future__ import annotations

from types import SimpleNamespace

from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.test import get_crawler

from crawler.stats import QuickStatsCollector


def _crawler():
    return SimpleNamespace(settings=get_crawler().settings, spider=SimpleNamespace(name="t"))


def _exercise(stats) -> dict:
    stats.open_spider()
    stats.set_value("a", 1)
    stats.inc_value("a")
    stats.inc_value("b", 3, start=10)
    stats.max_value("m", 4)
    stats.max_value("m", 2)
    stats.min_value("n", 4)
    stats.min_value("n", 2)
    out = {"get": stats.get_value("a"), "default": stats.get_value("zz", 7),
           "stats": dict(stats.get_stats())}  # fmt: skip
    stats.close_spider(reason="finished")
    out["kept"] = dict(stats.spider_stats["t"])
    return out


def test_quick_stats_give_the_same_stats_as_scrapys():
    assert _exercise(QuickStatsCollector(_crawler())) == _exercise(
        MemoryStatsCollector(_crawler()))


def test_quick_stats_skip_scrapys_attribute_hook():
    quick, scrapy_stats = QuickStatsCollector(_crawler()), MemoryStatsCollector(_crawler())
    quick.inc_value("a")
    assert not any(k.startswith("_cached_") for k in vars(quick))
    assert type(quick).__getattribute__ is object.__getattribute__
    scrapy_stats.inc_value("a")  # Scrapy's caches a wrapped method on the instance
    assert any(k.startswith("_cached_") for k in vars(scrapy_stats))


def test_the_project_uses_the_quick_stats():
    from scrapy.utils.project import get_project_settings

    assert get_project_settings()["STATS_CLASS"] == "crawler.stats.QuickStatsCollector"
