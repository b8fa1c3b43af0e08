"""A plain Scrapy spider that only follows links, breadth-first: the baseline of
bench/throughput.py. Run with ``scrapy runspider`` outside the project (Scrapy's defaults).

    scrapy runspider bench/bfs_spider.py -a seeds=URL[,URL...] -s CLOSESPIDER_PAGECOUNT=N
"""

from __future__ import annotations

from urllib.parse import urlsplit

import scrapy
from scrapy.linkextractors import LinkExtractor


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

    def parse(self, response, **kwargs):
        if not hasattr(response, "text"):
            return
        for link in self.links.extract_links(response):
            yield scrapy.Request(link.url, callback=self.parse)
