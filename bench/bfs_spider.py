"""A plain Scrapy spider that only follows links, breadth-first: the baseline of
bench/throughput.py. Run with ``scrapy runspider`` outside the project (Scrapy's defaults).

    scrapy runspider bench/bfs_spider.py -a seeds=URL[,URL...] -s CLOSESPIDER_PAGECOUNT=N
"""

from __future__ import annotations

import sys
from pathlib import Path
from urllib.parse import urlsplit

import scrapy
from scrapy import signals
from scrapy.linkextractors import LinkExtractor

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from crawler.threadcpu import ThreadCpu  # noqa: E402 - the crawl thread's CPU, as the topic's


class BfsSpider(scrapy.Spider):
    """Follows every link of the seeds' hosts; parses nothing else."""

    name = "bfs"
    custom_settings = {
        # breadth-first (Scrapy's FAQ): FIFO queues, lower priority for deeper requests
        "DEPTH_PRIORITY": 1,
        "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleFifoDiskQueue",
        "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
    }

    def __init__(self, seeds: str = "", **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [s for s in seeds.split(",") if s]
        self.allowed_domains = sorted({urlsplit(s).hostname or "" for s in self.start_urls})
        self.links = LinkExtractor(unique=True)
        self.thread_cpu = ThreadCpu()

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.thread_cpu.start, signal=signals.spider_opened)
        return spider

    def closed(self, reason):
        self.thread_cpu.stop(self.crawler.stats)

    def parse(self, response, **kwargs):
        if not hasattr(response, "text"):
            return
        for link in self.links.extract_links(response):
            yield scrapy.Request(link.url, callback=self.parse)
