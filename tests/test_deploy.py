"""The compose deployment, built and run: PostgreSQL, Redis, 4 crawler workers and the
post-processor crawl a generated local web (served from a container as the crawl's proxy).

Marked ``docker``: it needs a container engine and ``docker-compose`` (``deploy/start-engine.sh``
starts one on a Debian machine); the base images are made without a registry by
``deploy/local-base-images.sh``. Without an engine it skips, with the reason; with
``TOPICRAWL_DOCKER_TEST=1`` (set by ``.ci/run`` when it started an engine) it fails instead.
It takes a few minutes (see README, "Deploy").
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
import uuid
from pathlib import Path

import pytest
from conftest import ROOT

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(1800)]

WORKERS = 4
# page budgets of the phases (one crawl run): first crawl, resumed after `down` + `up` with a
# larger budget
BUDGETS = (40, 80)
FILES = ("-f", str(ROOT / "docker-compose.yml"), "-f", str(ROOT / "tests/docker/testweb.yml"))


def _engine_or_skip() -> None:
    why = None
    if shutil.which("docker") is None or shutil.which("docker-compose") is None:
        why = "docker or docker-compose not installed (deploy/start-engine.sh installs them)"
    elif subprocess.run(["docker", "info"], capture_output=True).returncode != 0:
        why = "no container engine answers (start one: deploy/start-engine.sh)"
    if why is None:
        return
    if os.environ.get("TOPICRAWL_DOCKER_TEST") == "1":
        pytest.fail(why)
    pytest.skip(why)


class Compose:
    """``docker-compose`` on the project's file plus the test web, in a project of its own."""

    def __init__(self, project: str, env: dict[str, str]):
        self.project = project
        self.env = env

    def __call__(self, *args: str, timeout: float = 900, check: bool = True) -> str:
        proc = subprocess.run(
            ["docker-compose", "-p", self.project, *FILES, *args],
            cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=timeout,
        )  # fmt: skip
        if check and proc.returncode != 0:
            raise AssertionError(f"docker-compose {' '.join(args)}: {proc.stderr[-3000:]}")
        return proc.stdout

    def containers(self, service: str) -> list[str]:
        return self("ps", "-a", "-q", service).split()

    def sql(self, query: str) -> list[str]:
        out = self("exec", "-T", "postgres", "psql", "-U", "topicrawl", "-d", "topicrawl",
                   "-At", "-c", query)  # fmt: skip
        return out.splitlines()

    def redis(self, *command: str) -> str:
        return self("exec", "-T", "redis", "redis-cli", *command).strip()


def _state(container: str) -> tuple[str, int]:
    out = subprocess.run(
        ["docker", "inspect", "-f", "{{.State.Status}} {{.State.ExitCode}}", container],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    return out[0], int(out[1])


def _wait_exited(containers: list[str], timeout: float = 600) -> dict[str, int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        states = {c: _state(c) for c in containers}
        if all(s == "exited" for s, _ in states.values()):
            return {c: code for c, (_, code) in states.items()}
        time.sleep(2)
    raise AssertionError(f"containers still running after {timeout}s: {states}")


def _final_stats(container: str) -> dict[str, int]:
    proc = subprocess.run(["docker", "logs", container], capture_output=True, text=True)
    log = proc.stdout + proc.stderr
    return {k: int(v) for k, v in re.findall(r"'(topicrawl/[\w/]+)': (\d+)", log)}


def _stored(compose: Compose) -> tuple[list[str], int]:
    urls = compose.sql("SELECT url FROM pages WHERE run_id = 1")
    accepted = int(compose.sql("SELECT count(*) FROM pages WHERE run_id = 1 AND accepted")[0])
    return urls, accepted


def _crawl(compose: Compose, budget: int, kill_after: int | None = None):
    """Run the workers with ``budget``; with ``kill_after``, kill -9 one worker once that many
    pages are stored. Returns {container: (exit code, final stats)} and the killed one."""
    compose.env["MAX_PAGES"] = str(budget)
    compose("up", "-d", "--scale", f"crawler={WORKERS}", "crawler")
    workers = compose.containers("crawler")
    assert len(workers) == WORKERS
    killed = None
    if kill_after is not None:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and len(_stored(compose)[0]) < kill_after:
            time.sleep(0.5)
        running = [c for c in workers if _state(c)[0] == "running"]
        assert running, "every worker ended before the kill"
        killed = running[0]
        subprocess.run(["docker", "kill", "-s", "KILL", killed], check=True, capture_output=True)
    codes = _wait_exited(workers)
    return {c: (codes[c], _final_stats(c)) for c in workers}, killed


def _kept(stats: dict) -> int:
    """Pages a worker fetched and kept: a broken page (the test web's stub PDF attachments,
    downloaded since documents are read) gives its budget back and is not stored."""
    return stats.get("topicrawl/pages/fetched", 0) - stats.get("topicrawl/pages/broken", 0)


@pytest.mark.docker
def test_compose_deployment_crawls_and_resumes(tmp_path: Path):
    _engine_or_skip()
    subprocess.run(["bash", str(ROOT / "deploy/local-base-images.sh")], check=True, timeout=1500)
    from sitegen.build import build_web
    from topicrawl.data import data_dir

    web = tmp_path / "web"
    truth = build_web(web, scale="small", seed=7)
    topics = tmp_path / "topics"
    topics.mkdir()
    (topics / "t.toml").write_text(
        'name = "t"\n[words]\n"政治" = 1.0\n"新闻" = 1.0\n[page]\nthreshold = 0.0\n',
        encoding="utf-8",
    )
    for path in (web, topics):  # the containers' non-root users read them
        os.system(f"chmod -R a+rX {path} {tmp_path}")
    project = f"topicrawltest{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ,
        "POSTGRES_PASSWORD": uuid.uuid4().hex,
        "REDIS_PASSWORD": uuid.uuid4().hex,
        "SEEDS": ",".join(truth["seeds"]["portal"]),
        "TOPIC": "topics/t.toml",
        "TOPICS_DIR": str(topics),
        "TOPICRAWL_DATA_HOST": str(data_dir()),
        "TESTWEB_DIR": str(web),
        "TESTWEB_LATENCY_MS": "300",
        "CRAWL_PROXY": "http://testweb:8000",
        "IDLE_CLOSE_SECONDS": "10",
        "CRAWL_ARGS": "-L INFO -s TOPICRAWL_LINK_SCORER=relevance.linkscore.KeywordLinkScorer"
        " -s TOPICRAWL_PROGRESS_INTERVAL=5",
    }
    compose = Compose(project, env)
    try:
        compose("build", "crawler")
        compose("up", "-d", "postgres", "redis", "testweb")

        # 1. four workers share the frontier, the budget and the database
        first, _ = _crawl(compose, BUDGETS[0])
        assert all(code == 0 for code, _ in first.values()), first
        fetched = [_kept(stats) for _, stats in first.values()]
        assert all(n > 0 for n in fetched), f"a worker fetched nothing: {fetched}"
        urls, accepted = _stored(compose)
        assert len(urls) == len(set(urls)) == BUDGETS[0] == sum(fetched)
        assert accepted == sum(s.get("topicrawl/pages/accepted", 0) for _, s in first.values())
        assert accepted > 0

        # the post-processor cleans the run once every worker has ended
        compose("up", "--no-deps", "postprocess", timeout=600)
        (post,) = compose.containers("postprocess")
        assert _state(post) == ("exited", 0)
        assert int(compose.sql("SELECT count(*) FROM documents")[0]) > 0

        # 2. `down` + `up` resumes: Redis (frontier, dupefilter, counter) and PostgreSQL keep
        # their named volumes; no page is downloaded or stored again
        compose("down")
        compose("up", "-d", "postgres", "redis", "testweb")
        assert compose.redis("GET", "run1:topic:pages") == str(BUDGETS[0])
        second, _ = _crawl(compose, BUDGETS[1])
        assert all(code == 0 for code, _ in second.values()), second
        urls, _ = _stored(compose)
        assert len(urls) == len(set(urls)) == BUDGETS[1]
        assert sum(_kept(s) for _, s in second.values()) == (
            BUDGETS[1] - BUDGETS[0]
        )
        assert not set(truth["seeds"]["portal"]) - set(urls)  # seeds stored once, in phase 1

        # 3. (not yet passing, README "Not yet done"): one worker killed mid-crawl, the
        # others finishing the budget; kept as _crawl(..., kill_after=N) for that check
    finally:
        compose("down", "-v", "--remove-orphans", check=False)
