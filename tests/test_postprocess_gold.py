"""The cleaner on trafilatura's Chinese gold snippets: it keeps what trafilatura keeps and
drops the boilerplate snippets at least as well (computed side by side, not hard-coded)."""

from __future__ import annotations

import pytest
import trafilatura

from postprocess.clean import Cleaner, extract_text
from postprocess.evaluate import load_gold, score
from topicrawl.data import data_path
from topicrawl.errors import ResourceMissingError


@pytest.fixture(scope="module")
def gold():
    try:
        return load_gold(data_path("html", "trafilatura_zh"))
    except ResourceMissingError as exc:
        pytest.skip(str(exc))


def test_cleaner_keeps_every_with_snippet_and_drops_without_snippets(gold):
    alone = score(gold, lambda raw, url: extract_text(raw, url=url))
    cleaner = Cleaner()
    ours = score(gold, lambda raw, url: cleaner.clean(html=raw, url=url).text)
    assert ours.with_total == alone.with_total > 0
    # every "with" snippet in trafilatura's text survives our cleaning ...
    assert set(ours.missed) == set(alone.missed)
    # ... and the ones trafilatura's extraction itself misses are few (1 of 14 today: the
    # baike.baidu.com lead, in the page's title widget)
    assert ours.with_kept >= ours.with_total - 1
    # the boilerplate snippets go at least as well as with trafilatura alone
    assert ours.without_dropped >= alone.without_dropped
    assert ours.without_total == alone.without_total > 0


def test_cleaner_removes_leaks_of_a_noisier_extractor(gold):
    """On trafilatura's baseline() text (more recall, more boilerplate) cleaning drops strictly
    more "without" snippets and loses no "with" snippet."""
    base = score(gold, lambda raw, url: trafilatura.baseline(raw)[1])
    cleaner = Cleaner()
    ours = score(
        gold,
        lambda raw, url: cleaner.clean(html=raw, text=trafilatura.baseline(raw)[1], url=url).text,
    )
    assert ours.with_kept == base.with_kept
    assert ours.without_dropped > base.without_dropped
