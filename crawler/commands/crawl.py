"""``scrapy crawl``, checking the topic file and seeds before the first request.

A bad topic file or seed list ends the command with one clear line naming the file, the
line and the problem, and exit status 2, instead of a traceback from inside the engine.
"""

from __future__ import annotations

import argparse
import sys

from scrapy.commands.crawl import Command as ScrapyCrawl

from topicrawl.errors import TopicFileError, TopicrawlError


class Command(ScrapyCrawl):
    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if args and args[0] == "topic":
            try:
                self.check_topic_args(opts.spargs)
            except TopicrawlError as exc:
                print(f"topicrawl: {exc}", file=sys.stderr)
                self.exitcode = 2 if isinstance(exc, TopicFileError) else 1
                return
        super().run(args, opts)

    @staticmethod
    def check_topic_args(spargs: dict[str, str]) -> None:
        from crawler.spiders.topic import parse_seeds
        from relevance.topic import load_topic

        if not spargs.get("topic"):
            raise TopicFileError("no topic file: pass -a topic=FILE (see topics/ for examples)")
        load_topic(spargs["topic"])
        parse_seeds(spargs.get("seeds"))
