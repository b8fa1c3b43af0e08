"""The compose deployment, built and run: PostgreSQL, Redis, 4 crawler workers and the
post-processor crawl a generated local web (served from a container as the crawl's proxy),
resume after ``down`` + ``up``, keep a binding page budget exact with one worker killed
(SIGKILL) while it holds requests in flight and counted pages awaiting their database write,
and finish the web under a larger budget.

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
from typing import NamedTuple

import pytest
from conftest import ROOT

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(1800)]

WORKERS = 4
# page budgets of the phases (one crawl run): first crawl, resumed after `down` + `up` with a
# larger budget
BUDGETS = (40, 80)
# phase 3: a budget the test web's portals exceed (they yield 136 pages and trap pages), one
# worker killed while it holds requests downloading and counted pages not written yet; the
# test web answers slower, so requests stay in flight longer
KILL_BUDGET = 120
KILL_LATENCY_MS = 1500
# the victim's database writes of pages take this long each (a trigger that sleeps for its
# address only): the pages it counts wait for their write, the others write at full speed
VICTIM_WRITE_SECONDS = 5
# the victim is killed once its lease hash holds this many counted pages and this many
# requests still downloading (one counted page may be committed already: a batch is 1 page)
KILL_COUNTED, KILL_DOWNLOADING = 3, 2
# phase 4: the rest of the test web (fewer pages than this budget)
REST_BUDGET = 1000
#: the kinds of the test web's pages that a crawl of the portals stores (the others are
#: robots-disallowed, binary, redirects or missing; trap pages are not in its truth)
STORED_KINDS = ("home", "list", "article", "real")
#: every leased request of every worker, one line each: worker, counted (1/0), URL, the URL
#: its page is stored under (the first of its redirects)
LEASES_LUA = """
local out = {}
for _, key in ipairs(redis.call('KEYS', ARGV[1] .. '*')) do
  local all = redis.call('HGETALL', key)
  local worker = string.sub(key, #ARGV[1] + 1)
  for i = 1, #all, 2 do
    local f = all[i]
    if string.sub(f, 1, 2) ~= 'c:' and string.sub(f, 1, 2) ~= 's:' then
      local counted = redis.call('HEXISTS', key, 'c:' .. f)
      local e = cjson.decode(all[i + 1])
      local stored = e['url']
      if type(e['meta']) == 'table' and type(e['meta']['redirect_urls']) == 'table'
          and e['meta']['redirect_urls'][1] then
        stored = e['meta']['redirect_urls'][1]
      end
      table.insert(out, worker .. ' ' .. counted .. ' ' .. e['url'] .. ' ' .. stored)
    end
  end
end
return out
"""
#: the URLs of the entries waiting in the frontier (a sorted set of JSON entries)
FRONTIER_LUA = """
local out = {}
for _, e in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  table.insert(out, cjson.decode(e)['url'])
end
return out
"""
#: the victim's writes of pages are slow: a trigger sleeps for the addresses in a table
SLOW_WRITES_SQL = f"""
CREATE TABLE test_slow_clients (addr inet PRIMARY KEY);
CREATE FUNCTION test_slow_write() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM test_slow_clients WHERE addr = inet_client_addr()) THEN
    PERFORM pg_sleep({VICTIM_WRITE_SECONDS});
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER test_slow_write BEFORE INSERT ON pages
  FOR EACH ROW EXECUTE FUNCTION test_slow_write();
"""
FAST_WRITES_SQL = """
DROP TRIGGER test_slow_write ON pages;
DROP FUNCTION test_slow_write();
DROP TABLE test_slow_clients;
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


class Lease(NamedTuple):
    """A leased request as the test reads it from Redis."""

    counted: bool  # its page is counted against the budget (awaiting its database write)
    url: str
    stored: str  # the URL its page is stored under


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

    def leases(self, prefix: str = "run1:topic:inflight:") -> dict[str, list[Lease]]:
        """Each worker's leased requests in the compose Redis: {worker: [(counted, URL, stored
        URL)]} (``docker exec``, faster than ``docker-compose exec``, to catch requests in
        flight)."""
        (redis,) = self.containers("redis")
        out = subprocess.run(
            ["docker", "exec", redis, "redis-cli", "--raw", "EVAL", LEASES_LUA, "0", prefix],
            capture_output=True, text=True, check=True, timeout=60,
        ).stdout  # fmt: skip
        held: dict[str, list[Lease]] = {}
        for line in out.splitlines():
            if line.strip():
                worker, counted, url, stored = line.split(" ")
                held.setdefault(worker, []).append(Lease(counted == "1", url, stored))
        return held

    def frontier(self, key: str = "run1:topic:requests") -> set[str]:
        """The URLs of the requests waiting in the compose Redis's frontier."""
        out = self("exec", "-T", "redis", "redis-cli", "--raw", "EVAL", FRONTIER_LUA, "1", key)
        return {line for line in out.splitlines() if line.strip()}


def _address(container: str) -> str:
    """The container's address on the compose network (PostgreSQL's ``inet_client_addr()``)."""
    out = subprocess.run(
        ["docker", "inspect", "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}",
         container],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    assert len(out) == 1, out
    return out[0]


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


def _lost_count_report(lost: set[str], stats: list[dict[str, int]], compose: Compose) -> str:
    """What a failure of phase 3's "no counted page lost" needs to be understood (seen once
    in CI, 2026-11-28): the pages, whether they wait in the frontier, and the survivors'
    counters of retries, broken pages and counts handed on or given back."""
    keys = ("retry", "broken", "frontier/", "lease", "over_budget", "store_")
    counters = [{k: v for k, v in sorted(s.items()) if any(x in k for x in keys)} for s in stats]
    waiting = lost & compose.frontier()
    return (f"counted but not stored: {sorted(lost)}; waiting in the frontier: "
            f"{sorted(waiting)}; survivors' counters: {counters}")


def _crawl(compose: Compose, budget: int) -> dict[str, tuple[int, dict[str, int]]]:
    """Run the workers with ``budget`` until they end: {container: (exit code, final stats)}."""
    workers = _start_workers(compose, budget)
    codes = _wait_exited(workers)
    return {c: (codes[c], _final_stats(c)) for c in workers}


def _kill_holding(compose: Compose, workers: list[str], victim: str, expected: set[str],
                  timeout: float = 300) -> str:  # fmt: skip
    """SIGKILL ``victim`` once its lease hash holds :data:`KILL_COUNTED` counted pages (not
    written yet: its writes are slow) and :data:`KILL_DOWNLOADING` requests still downloading
    for pages of ``expected``, while another worker runs: its worker id."""
    host = victim[:12]  # a container's host name is its short id
    deadline = time.monotonic() + timeout
    seen: list[tuple[int, int]] = []
    while time.monotonic() < deadline:
        running = [c for c in workers if _state(c)[0] == "running"]
        assert victim in running, f"the victim ended before the kill (held {seen[-5:]})"
        if len(running) == 1:  # nobody left to finish its share
            raise AssertionError("every other worker ended before the kill")
        for worker, held in compose.leases().items():
            if worker.split(":")[0] != host:
                continue
            counted = sum(lease.counted for lease in held)
            downloading = sum(not lease.counted and lease.url in expected for lease in held)
            seen.append((counted, downloading))
            if counted >= KILL_COUNTED and downloading >= KILL_DOWNLOADING:
                subprocess.run(["docker", "kill", "-s", "KILL", victim], check=True,
                               capture_output=True)  # fmt: skip
                return worker
        time.sleep(0.2)
    raise AssertionError(f"the victim never held enough within {timeout}s: {seen[-20:]}")


def _kept(stats: dict) -> int:
    """Pages a worker fetched and kept: a broken page (the test web's stub PDF attachments,
    downloaded since documents are read) gives its budget back and is not stored."""
    return stats.get("topicrawl/pages/fetched", 0) - stats.get("topicrawl/pages/broken", 0)


@pytest.mark.docker
def test_compose_deployment_resumes_and_keeps_the_budget_through_a_killed_worker(tmp_path: Path):
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
        clock = time.monotonic()

        def lap(what: str) -> None:  # the phases' durations, for the README's figures
            nonlocal clock
            print(f"{what}: {time.monotonic() - clock:.0f} s")
            clock = time.monotonic()

        compose("build", "crawler")
        compose("up", "-d", "postgres", "redis", "testweb")

        lap("image and services")

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

        lap("phase 1 and the post-processor")

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

        lap("phase 2")

        # 3. a binding budget (the portals yield more pages than it) with one worker killed
        # (SIGKILL) while it holds requests still downloading and counted pages awaiting their
        # database write (its writes are slow): the others reclaim them; a counted page's count
        # goes on with the request queued again, and the others fetch and store that page
        # although the budget is spent; a request that was downloading is fetched by them while
        # the budget allows, else it waits in the frontier for a larger one (phase 4)
        hosts = {url.split("/")[2] for url in truth["seeds"]["portal"]}
        expected = {url for url, page in truth["pages"].items() if page["host"] in hosts
                    and page["status"] == 200 and page["kind"] in STORED_KINDS}  # fmt: skip
        assert KILL_BUDGET < len(expected)
        compose.env["TESTWEB_LATENCY_MS"] = str(KILL_LATENCY_MS)
        compose("up", "-d", "testweb")  # recreated with the slower answers
        compose.sql(SLOW_WRITES_SQL)
        started = time.monotonic()
        workers = _start_workers(compose, KILL_BUDGET)
        victim = workers[0]
        compose.sql(f"INSERT INTO test_slow_clients VALUES ('{_address(victim)}')")
        worker = _kill_holding(compose, workers, victim, expected - set(urls))
        killed_at = time.monotonic()
        time.sleep(0.5)  # a write it had sent to Redis lands
        held = compose.leases()[worker]  # frozen: its heartbeat expires, nothing refreshes it
        stored_at_kill = set(_stored(compose)[0])
        codes = _wait_exited(workers)
        print(f"phase 3: killed {victim[:12]} {killed_at - started:.0f} s after the start; the "
              f"others ended {time.monotonic() - killed_at:.0f} s later")  # fmt: skip
        assert codes.pop(victim) == 137
        assert all(code == 0 for code in codes.values()), codes
        texts = []
        for c in codes:
            proc = subprocess.run(["docker", "logs", c], capture_output=True, text=True)
            texts.append(proc.stdout + proc.stderr)
        stats = [_final_stats(c) for c in codes]
        # the budget is what ended the others
        assert all("'finish_reason': 'max_pages'" in t for t in texts)
        # reclaimed once, by one survivor: every request it held back in the frontier or
        # already stored, each counted page's count handed on; its lease hash is gone
        line = re.compile(rf"INFO: worker {re.escape(worker)} stopped answering: (\d+) "
                          r".*?\((\d+) pages .*?, (\d+) already")  # fmt: skip
        claims = [m.groups() for t in texts for m in line.finditer(t)]
        assert len(claims) == 1, claims
        recovered, handed_on, already = (int(n) for n in claims[0])
        counted = {lease.stored for lease in held if lease.counted}
        assert recovered + already == len(held) > 0
        assert handed_on + already == len(counted) >= KILL_COUNTED
        assert handed_on >= KILL_COUNTED - 1  # one write at most committed before the kill
        assert sum(s.get("topicrawl/frontier/recovered_from_dead_worker", 0)
                   for s in stats) >= recovered  # fmt: skip
        assert sum(s.get("topicrawl/frontier/recovered_count_handed_on", 0)
                   for s in stats) >= handed_on  # fmt: skip
        assert compose.redis("EXISTS", f"run1:topic:inflight:{worker}") == "0"
        assert compose.redis("HLEN", "run1:topic:precounted") == "0"  # every one consumed
        # the budget exact: as many pages stored as the budget, each once, the counter equal
        urls, _ = _stored(compose)
        assert len(urls) == len(set(urls)) == KILL_BUDGET
        assert int(compose.redis("GET", "run1:topic:pages")) == KILL_BUDGET
        assert expected - set(urls)  # binding: pages of the portals are left
        # no counted page lost: the victim's are stored (by the others, handed on, or by
        # itself before the kill), and each survivor wrote every page it kept; except a stub
        # PDF attachment (kind "binary"), counted when downloaded and broken when parsed: a
        # kill between the two hands its count on, and the survivor that parses it gives the
        # count back (seen once in CI at fa771b1)
        breaks = {url for url in counted if truth["pages"].get(url, {}).get("kind") == "binary"}
        assert not breaks & set(urls)
        assert counted - breaks <= set(urls), _lost_count_report(counted - breaks - set(urls),
                                                                 stats, compose)  # fmt: skip
        taken_over = counted - stored_at_kill
        assert len(taken_over) >= KILL_COUNTED - 1
        for s in stats:
            assert s.get("topicrawl/storage/pages") == _kept(s), s
            assert not s.get("topicrawl/storage/spilled"), s
        # the victim's requests that were downloading: fetched and stored by the others, or
        # waiting in the frontier (the budget was spent before they were reclaimed)
        downloading = {lease for lease in held if not lease.counted and lease.url in expected
                       and lease.stored not in stored_at_kill}  # fmt: skip
        assert len(downloading) >= KILL_DOWNLOADING
        fetched_by_others = {lease for lease in downloading if lease.stored in set(urls)}
        frontier = compose.frontier()
        waiting = downloading - fetched_by_others
        assert all(lease.url in frontier for lease in waiting), (waiting, frontier)
        print(
            f"phase 3: the killed worker held {len(held)} requests: {len(counted)} counted "
            f"({len(taken_over)} stored by the others, handed on), {len(downloading)} "
            f"downloading ({len(fetched_by_others)} fetched by the others, {len(waiting)} "
            f"waiting for a larger budget); recovered {recovered}, already stored {already}"
        )

        lap("phase 3")

        # 4. a larger budget: the rest of the web, the requests that waited included; every
        # page of the portals stored once, the counter exact
        compose.sql(FAST_WRITES_SQL)
        rest = _crawl(compose, REST_BUDGET)
        assert all(code == 0 for code, _ in rest.values()), rest
        urls, _ = _stored(compose)
        assert len(urls) == len(set(urls)) == int(compose.redis("GET", "run1:topic:pages"))
        trapped = {u for u in urls if any(u.startswith(t) for t in truth["traps"])}
        assert set(urls) - trapped == expected
        assert {lease.stored for lease in waiting} <= set(urls)
        print(f"phase 4: {len(urls)} pages ({len(trapped)} in traps)")
        lap("phase 4")
    finally:
        compose("down", "-v", "--remove-orphans", check=False)
