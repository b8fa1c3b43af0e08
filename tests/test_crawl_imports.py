"""What a crawl's process loads that it does not need (issue 16: peak memory): checked in a
fresh interpreter running a real ``scrapy crawl topic`` of the test web, its modules
listed at exit."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import ROOT, crawl_command

#: ``python -c PROBE scrapy-args…``: the crawl, then (at exit) what it imported and whether
#: trafilatura built jusText's stoplist of every language in this process
PROBE = (
    "import atexit, json, sys\n"
    "def report():\n"
    "    from topicrawl.extract import justext_stoplists_built\n"
    "    print('PROBE ' + json.dumps({'modules': sorted({m.split('.')[0] for m in sys.modules}),"
    " 'scrapy': sorted(m for m in sys.modules if m.startswith('scrapy.')),"
    " 'stoplists': justext_stoplists_built()}), flush=True)\n"
    "atexit.register(report)\n"
    "from scrapy.cmdline import execute\n"
    "sys.argv = ['scrapy'] + sys.argv[1:]\n"
    "execute()\n"
)


def probe_crawl(proxy, small_web, topic, db, workers: int, seeds: list[str] | None = None,
                args: dict | None = None) -> dict:  # fmt: skip
    """``scrapy crawl topic`` of the first portal (or ``seeds``), 2 pages, in a fresh
    interpreter: its stats' log, and what it had imported at exit."""
    if seeds is None:
        truth = json.loads((small_web / "ground_truth.json").read_text(encoding="utf-8"))
        seeds = truth["seeds"]["portal"][:1]
    cmd, env = crawl_command(proxy, seeds, topic, db, args=args or {"max_pages": 2},
                             settings={"TOPICRAWL_EXTRACT_WORKERS": workers})  # fmt: skip
    assert cmd[1:3] == ["-m", "scrapy"]
    result = subprocess.run([sys.executable, "-c", PROBE, *cmd[3:]], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    line = [x for x in result.stdout.splitlines() if x.startswith("PROBE ")][-1]
    return {**json.loads(line.removeprefix("PROBE ")), "log": result.stderr}


@pytest.mark.parametrize("workers", [0, 1])
def test_a_crawl_imports_no_alembic_nor_cookie_nor_document_modules(
    proxy, small_web, politics_topic, tmp_path, workers
):
    """A crawl into a new SQLite database makes its schema without Alembic
    (models/schema_sqlite.sql); with cookies off Scrapy's cookie middleware (tldextract,
    requests) is not imported; no PDF nor Office document came, so neither pypdf nor
    python-docx is."""
    got = probe_crawl(proxy, small_web, politics_topic, f"sqlite:///{tmp_path}/n.db", workers)
    assert "'finish_reason': 'max_pages'" in got["log"]
    loaded = set(got["modules"])
    assert {"scrapy", "sqlalchemy", "trafilatura"} <= loaded  # the probe sees the crawl's
    assert not loaded & {"alembic", "mako", "tldextract", "requests", "pypdf", "docx"}
    assert "scrapy.downloadermiddlewares.cookies" not in got["scrapy"]


def test_pages_of_the_first_second_go_to_the_pool(proxy, small_web, politics_topic, tmp_path):
    """With the extraction pool (started while the scorer is built), the first pages wait
    for its warm-up instead of being extracted in the crawl's process: every page of the
    crawl is the pool's; the crawl records whether its process built trafilatura's jusText
    stoplists anyway (the store's cleaner extracts a page again when its text is cleaned
    away: docs/scale.md)."""
    got = probe_crawl(proxy, small_web, politics_topic, f"sqlite:///{tmp_path}/p.db", 1)
    assert "'topicrawl/extract/pages': 2," in got["log"]
    assert "'topicrawl/pages/fetched': 2," in got["log"]
    assert "inline_busy" not in got["log"] and "warm_wait_expired" not in got["log"]
    flag = int(got["stoplists"])
    assert f"'topicrawl/memory/justext_stoplists': {flag}," in got["log"]
    assert "'topicrawl/memory/pss_mb'" in got["log"]


def test_a_calibrated_crawl_imports_no_scikit_learn(proxy, small_web, tmp_path):
    """A words-only topic (calibrated mode, the default for it) trains its page model with
    relevance.learning.logistic: scikit-learn (≈ 70 MB: it imports SciPy's statistics) is
    never imported in the crawl's process (it was, in the background, as the scorer was
    built)."""
    topic = tmp_path / "words.toml"
    topic.write_text('name = "时政"\n[words]\n"国务院" = 1.0\n"会议" = 0.8\n"改革" = 0.6\n',
                     encoding="utf-8")  # fmt: skip
    got = probe_crawl(proxy, small_web, topic, f"sqlite:///{tmp_path}/c.db", 1,
                      args={"max_pages": 4})  # fmt: skip
    assert "'finish_reason': 'max_pages'" in got["log"]
    assert "calibrated" in got["log"].lower()
    assert not set(got["modules"]) & {"sklearn", "pandas"}
