"""A crawl's corpus scored against a test web's ground truth: precision and recall.

The definitions of ``bench/harvest.py`` (docs/benchmarks/harvest.md): the on-topic targets of
a category are its article pages (``sitegen.build.topic_targets``) on the crawled hosts;
**precision** is the share of the corpus documents that are targets; **recall** is the share
of the target articles — an original and its reprints count once (one duplicate group) —
that have a document.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from sitegen.build import topic_targets


@dataclass(frozen=True)
class CorpusScore:
    """Precision and recall of a corpus (see the module docstring)."""

    category: str
    documents: int  # corpus documents (distinct final URLs)
    on_topic: int  # documents that are target articles
    articles: int  # target articles on the crawled hosts (duplicate groups)
    found: int  # of them with a document

    @property
    def precision(self) -> float:
        return self.on_topic / self.documents if self.documents else 0.0

    @property
    def recall(self) -> float:
        return self.found / self.articles if self.articles else 0.0


def corpus_score(
    truth: dict, category: str, document_urls: Iterable[str], hosts: Iterable[str] | None = None
) -> CorpusScore:
    """Score the corpus whose documents came from ``document_urls`` (final URLs, after
    redirects) for ``category``; ``hosts`` restricts the targets to the crawled hosts
    (default: every host of the web)."""
    targets = topic_targets(truth, category)
    if hosts is not None:
        allowed = set(hosts)
        targets = {u for u in targets if urlsplit(u).hostname in allowed}
    docs = set(document_urls)
    on_topic = docs & targets
    groups: dict[str, set[str]] = {}
    for url in targets:
        groups.setdefault(truth["pages"][url].get("dup_group") or url, set()).add(url)
    found = sum(1 for members in groups.values() if members & on_topic)
    return CorpusScore(category, len(docs), len(on_topic), len(groups), found)
