"""The compose deployment, built and run: PostgreSQL, Redis, 4 crawler workers and the
post-processor crawl a generated local web (served from a container as the crawl's proxy),
resume after ``down`` + ``up``, and finish the web with one worker killed (SIGKILL) while it
holds leased requests in flight.

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
# phase 3: the rest of the test web (fewer pages than this budget), one worker killed while it
# holds leased requests; the test web answers slower, so requests stay in flight longer
KILL_BUDGET = 1000
KILL_LATENCY_MS = 1500
#: the kinds of the test web's pages that a crawl of the portals stores (the others are
#: robots-disallowed, binary, redirects or missing; trap pages are not in its truth)
STORED_KINDS = ("home", "list", "article", "real")
#: every leased request of every worker, one line each: worker, counted (1/0), URL
LEASES_LUA = """
local out = {}
for _, key in ipairs(redis.call('KEYS', ARGV[1] .. '*')) do
  local all = redis.call('HGETALL', key)
  local worker = string.sub(key, #ARGV[1] + 1)
  for i = 1, #all, 2 do
    local f = all[i]
    if string.sub(f, 1, 2) ~= 'c:' and string.sub(f, 1, 2) ~= 's:' then
      local counted = redis.call('HEXISTS', key, 'c:' .. f)
      table.insert(out, worker .. ' ' .. counted .. ' ' .. cjson.decode(all[i + 1])['url'])
    end
  end
end
return out
"""
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

    def leases(self, prefix: str = "run1:topic:inflight:") -> dict[str, list[tuple[bool, str]]]:
        """Each worker's leased requests in the compose Redis: {worker: [(counted, URL)]}
        (``docker exec``, faster than ``docker-compose exec``, to catch requests in flight)."""
        (redis,) = self.containers("redis")
        out = subprocess.run(
            ["docker", "exec", redis, "redis-cli", "--raw", "EVAL", LEASES_LUA, "0", prefix],
            capture_output=True, text=True, check=True, timeout=60,
        ).stdout  # fmt: skip
        held: dict[str, list[tuple[bool, str]]] = {}
        for line in out.splitlines():
            if line.strip():
                worker, counted, url = line.split(" ", 2)
                held.setdefault(worker, []).append((counted == "1", url))
        return held


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


def _start_workers(compose: Compose, budget: int) -> list[str]:
    """Start the workers with ``budget``; their containers. The previous workers' containers
    are removed first: `up` recreating them (a changed budget) removes the old ones after
    starting the new, which under vfs took longer than the crawl of the rest of the test web,
    so every worker had ended before `up` returned."""
    compose("rm", "-f", "-s", "crawler")
    compose.env["MAX_PAGES"] = str(budget)
    compose("up", "-d", "--scale", f"crawler={WORKERS}", "crawler")
    workers = compose.containers("crawler")
    assert len(workers) == WORKERS
    return workers


def _crawl(compose: Compose, budget: int) -> dict[str, tuple[int, dict[str, int]]]:
    """Run the workers with ``budget`` until they end: {container: (exit code, final stats)}."""
    workers = _start_workers(compose, budget)
    codes = _wait_exited(workers)
    return {c: (codes[c], _final_stats(c)) for c in workers}


def _kill_holding(compose: Compose, workers: list[str], expected: set[str],
                  timeout: float = 300) -> tuple[str, str]:  # fmt: skip
    """SIGKILL a running worker that holds leased requests still downloading (not counted)
    for pages of ``expected``, while another worker runs: (container, worker id)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        running = [c for c in workers if _state(c)[0] == "running"]
        assert running, "every worker ended before the kill"
        if len(running) == 1:  # nobody left to finish its share
            time.sleep(0.2)
            continue
        for worker, held in sorted(compose.leases().items(), key=lambda kv: -len(kv[1])):
            host = worker.split(":")[0]  # a container's host name is its short id
            victim = next((c for c in running if c.startswith(host)), None)
            downloading = [url for counted, url in held if not counted and url in expected]
            if victim is not None and len(downloading) >= 2:
                subprocess.run(["docker", "kill", "-s", "KILL", victim], check=True,
                               capture_output=True)  # fmt: skip
                return victim, worker
        time.sleep(0.2)
    raise AssertionError(f"no worker held requests in flight within {timeout}s")


def _kept(stats: dict) -> int:
    """Pages a worker fetched and kept: a broken page (the test web's stub PDF attachments,
    downloaded since documents are read) gives its budget back and is not stored."""
    return stats.get("topicrawl/pages/fetched", 0) - stats.get("topicrawl/pages/broken", 0)


@pytest.mark.docker
def test_compose_deployment_crawls_resumes_and_survives_a_killed_worker(tmp_path: Path):
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
        # under vfs, `down` removing the containers (a copy of the image each) took longer
        # than docker-compose's default 60 s for one engine call
        "COMPOSE_HTTP_TIMEOUT": "600",
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
        first = _crawl(compose, BUDGETS[0])
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
        second = _crawl(compose, BUDGETS[1])
        assert all(code == 0 for code, _ in second.values()), second
        urls, _ = _stored(compose)
        assert len(urls) == len(set(urls)) == BUDGETS[1]
        assert sum(_kept(s) for _, s in second.values()) == (
            BUDGETS[1] - BUDGETS[0]
        )
        assert not set(truth["seeds"]["portal"]) - set(urls)  # seeds stored once, in phase 1

        # 3. one worker killed (SIGKILL) while it holds leased requests in flight: the others
        # reclaim them, fetch them and finish the rest of the test web; every page stored once
        hosts = {url.split("/")[2] for url in truth["seeds"]["portal"]}
        expected = {url for url, page in truth["pages"].items() if page["host"] in hosts
                    and page["status"] == 200 and page["kind"] in STORED_KINDS}  # fmt: skip
        compose.env["TESTWEB_LATENCY_MS"] = str(KILL_LATENCY_MS)
        compose("up", "-d", "testweb")  # recreated with the slower answers
        workers = _start_workers(compose, KILL_BUDGET)
        victim, worker = _kill_holding(compose, workers, expected - set(urls))
        killed_at = time.monotonic()
        time.sleep(0.5)  # a write it had sent to Redis lands
        held = compose.leases()[worker]  # frozen: its heartbeat expires, nothing refreshes it
        stored_at_kill = set(_stored(compose)[0])
        codes = _wait_exited(workers)
        print(f"killed {victim[:12]}; the others ended {time.monotonic() - killed_at:.0f} s later")
        assert codes.pop(victim) == 137
        assert all(code == 0 for code in codes.values()), codes
        logs = {c: subprocess.run(["docker", "logs", c], capture_output=True, text=True)
                for c in codes}  # fmt: skip
        texts = [proc.stdout + proc.stderr for proc in logs.values()]
        # reclaimed once, by one survivor: every request it held back in the frontier or
        # already stored; its lease hash is gone
        line = re.compile(rf"INFO: worker {re.escape(worker)} stopped answering: (\d+) "
                          r".*?\((\d+) pages .*?, (\d+) already")  # fmt: skip
        claims = [m.groups() for t in texts for m in line.finditer(t)]
        assert len(claims) == 1, claims
        recovered, given_back, already = (int(n) for n in claims[0])
        assert recovered + already == len(held) > 0
        assert given_back + already == sum(counted for counted, _ in held)
        assert sum(_final_stats(c).get("topicrawl/frontier/recovered_from_dead_worker", 0)
                   for c in codes) >= recovered  # fmt: skip
        assert compose.redis("EXISTS", f"run1:topic:inflight:{worker}") == "0"
        # every page of the web stored once, the counter exact; what the victim held and had
        # not stored was fetched and stored by the others
        urls, _ = _stored(compose)
        assert len(urls) == len(set(urls)) == int(compose.redis("GET", "run1:topic:pages"))
        trapped = {u for u in urls if any(u.startswith(t) for t in truth["traps"])}
        assert set(urls) - trapped == expected
        taken_over = {url for _, url in held if url in expected} - stored_at_kill
        assert len(taken_over) >= 2 and taken_over <= set(urls)
        print(f"killed worker held {len(held)} requests ({len(taken_over)} pages stored by the "
              f"others), recovered {recovered}, already stored {already}; {len(urls)} pages")
    finally:
        compose("down", "-v", "--remove-orphans", check=False)
