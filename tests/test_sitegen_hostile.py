"""The hostile web's texts: the soak's distinct articles, and the fallback said aloud."""

from __future__ import annotations

import subprocess
import sys

import pytest

from dedup.base import Doc
from dedup.spotsigs import SpotSigsDetector
from dedup.storage import make_storage
from sitegen.hostile import HostileWeb, _corpus_texts, _daily_paragraphs


@pytest.mark.skipif(not _corpus_texts(10) or not _daily_paragraphs(), reason="shared data absent")
def test_distinct_articles_are_new_text_and_every_third_a_news_text():
    web = HostileWeb(endless=True, distinct=True)
    news = _corpus_texts()
    assert news[7] in web.text(21) and news[7] in web.text(21 + 3 * len(news))
    bodies = {web.text(n).split("。", 1)[1] for n in range(1, 3000) if n % 3}
    assert len(bodies) == 2000  # no two of them alike
    det = SpotSigsDetector(make_storage({"type": "memory"}))
    docs = [(n, web.text(n)) for n in range(4000, 4060) if n % 3]
    for n, text in docs:
        assert det.check_and_add(str(n), Doc(text=text)) is None, f"article {n} taken for a duplicate"
    # without --distinct the endless web repeats the corpus: article 598 is article 0 again
    plain = HostileWeb(endless=True)
    assert news[0] in plain.text(598) and news[0] in plain.text(0)


def test_missing_corpus_is_said(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "sitegen.hostile", "--endless"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={"TOPICRAWL_DATA": str(tmp_path), "PATH": ""})  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stdout.readline().startswith("http://")
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert "not found" in err and "near-duplicates" in err
