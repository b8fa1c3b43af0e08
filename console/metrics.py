"""Prometheus metrics of the crawls (``/metrics``), read from the database at each scrape:
pages, accepted, duplicates, errors and frontier per run (the 20 newest runs)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from console.data import ConsoleData

RUNS = 20


class CrawlCollector(Collector):
    """One gauge family per figure, labelled by run id and topic."""

    def __init__(self, data: ConsoleData, running: Callable[[], set[int]]):
        self.data = data
        self.running = running

    def collect(self) -> Iterator[GaugeMetricFamily]:
        labels = ["run", "topic"]
        fam = {
            name: GaugeMetricFamily(f"topicrawl_run_{name}", doc, labels=labels)
            for name, doc in (
                ("pages", "pages fetched and stored"),
                ("accepted", "pages accepted into the corpus"),
                ("duplicates", "pages dropped as duplicates"),
                ("errors", "failed requests and broken pages (crawl stats)"),
                ("frontier", "requests waiting in the frontier (last snapshot)"),
                ("running", "1 while the console's crawl process runs"),
                ("harvest", "accepted / fetched"),
            )
        }
        running = self.running()
        for r in self.data.runs(limit=RUNS):
            key = [str(r["id"]), r["topic"]]
            fam["pages"].add_metric(key, r["pages"])
            fam["accepted"].add_metric(key, r["accepted"])
            fam["duplicates"].add_metric(key, r["duplicates"])
            fam["harvest"].add_metric(key, r["harvest"])
            fam["running"].add_metric(key, 1 if r["id"] in running else 0)
            run = self.data.get_run(r["id"])
            stats = self.data.live_stats(run)["stats"] if run else {}
            errors = sum(
                v for k, v in stats.items()
                if (k.startswith("topicrawl/errors/") or k == "topicrawl/pages/broken")
                and isinstance(v, int | float)
            )  # fmt: skip
            fam["errors"].add_metric(key, errors)
            frontier = stats.get("topicrawl/progress/frontier")
            if frontier is not None:
                fam["frontier"].add_metric(key, frontier)
        yield from fam.values()


def metrics_text(data: ConsoleData, running: Callable[[], set[int]]) -> bytes:
    registry = CollectorRegistry()
    registry.register(CrawlCollector(data, running))
    return generate_latest(registry)
