"""Every expected failure of the command line, run as a user runs it: a subprocess, one line
naming the cause and the fix last, the documented exit status, no traceback.

Services are made unreachable without touching the shared ones: a closed local port for
PostgreSQL and Redis, a ``.invalid`` host name for DNS, a TCP proxy the test cuts for a
database that goes away during the crawl.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import ROOT, crawl_command

from crawler.settings import ITEM_PIPELINES
from models.store import Store
from topicrawl.outcome import (
    DATABASE_UNREACHABLE,
    EXIT_BUG,
    EXIT_DATABASE,
    EXIT_DISK_FULL,
    EXIT_NO_SEED,
    EXIT_OK,
    EXIT_REDIS,
    EXIT_SIGINT,
    EXIT_SIGTERM,
    EXIT_SPILLED,
    EXIT_USAGE,
    NO_SEED_REACHABLE,
    exit_status,
    finish_reason,
)

#: short retry budgets: the tests state them, the defaults are 30 s
FAST = {"TOPICRAWL_DB_RETRY_SECONDS": "1", "TOPICRAWL_REDIS_RETRY_SECONDS": "1"}


def closed_port() -> int:
    """A local TCP port with nothing listening on it."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k.lower() not in ("http_proxy", "https_proxy", "no_proxy")
           and not k.startswith("TOPICRAWL_") or k == "TOPICRAWL_DATA"}  # fmt: skip
    return {**env, **FAST, **extra}


def run(cmd: list[str], env: dict[str, str], cwd: Path = ROOT, timeout: float = 240):
    return subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def crawl(seeds: str, topic: Path, db_url: str, *extra: str, env: dict[str, str] | None = None):
    cmd = [sys.executable, "-m", "scrapy", "crawl", "topic", "-a", f"seeds={seeds}",
           "-a", f"topic={topic}", "-s", f"TOPICRAWL_DB_URL={db_url}", *extra]  # fmt: skip
    return run(cmd, env or clean_env())


def topicrawl(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None):
    return run([sys.executable, "-m", "topicrawl.cli", *args], env or clean_env(), cwd=cwd)


def last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def assert_outcome(result: subprocess.CompletedProcess[str], status: int, *words: str) -> str:
    """The exit status, the one line last (``topicrawl: ...``) with ``words`` in it, and no
    traceback nor warning banner on standard error."""
    line = last_line(result.stderr)
    assert result.returncode == status, (result.returncode, result.stderr[-3000:])
    assert line.startswith("topicrawl: "), result.stderr[-3000:]
    for word in words:
        assert word in line, line
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    assert "DeprecationWarning" not in result.stderr, result.stderr[-3000:]
    return line


def user_crawl_command(*args, **kwargs) -> tuple[list[str], dict[str, str]]:
    """The tests' crawl command (conftest) as a user types it: no log level given."""
    cmd, env = crawl_command(*args, **kwargs)
    at = cmd.index("LOG_LEVEL=INFO")
    return cmd[: at - 1] + cmd[at + 1 :], env


# -- bad usage and configuration: exit 2, before Scrapy prints anything ---------------------
@pytest.mark.parametrize(
    ("arg", "words"),
    [
        ("max_pages=abc", ("max_pages='abc'", "whole number")),
        ("run_id=abc", ("run_id='abc'", "whole number")),
        ("max_pages=-5", ("max_pages=-5", "at least 1")),
        ("max_depth=deep", ("max_depth='deep'",)),
        ("max_page=10", ("unknown spider argument 'max_page'", "max_pages")),
    ],
)
def test_bad_spider_arguments_end_with_one_line(arg, words, politics_topic, tmp_path):
    db = tmp_path / "x.db"
    result = crawl("http://a.cn/", politics_topic, f"sqlite:///{db}", "-a", arg)
    assert_outcome(result, EXIT_USAGE, *words)
    assert "Scrapy" not in result.stderr  # no version banner before our own line
    assert not db.exists()


def test_seed_without_scheme_gets_a_hint(politics_topic, tmp_path):
    result = crawl("news.example.com/politics", politics_topic, f"sqlite:///{tmp_path / 'x.db'}")
    assert_outcome(result, EXIT_USAGE, "did you mean 'http://news.example.com/politics'")


# -- no seed reachable: exit 3, run recorded with its finish reason --------------------------
@pytest.mark.parametrize("kind", ["dns", "refused"])
def test_unreachable_seeds_end_with_no_seed_reachable(kind, politics_topic, tmp_path):
    seed = "http://nowhere.invalid/" if kind == "dns" else f"http://127.0.0.1:{closed_port()}/"
    url = f"sqlite:///{tmp_path / 'x.db'}"
    result = crawl(seed, politics_topic, url, "-s", "RETRY_TIMES=0")
    line = assert_outcome(result, EXIT_NO_SEED, "no seed was reachable", seed)
    assert ("DNS" in line) if kind == "dns" else ("refused" in line)
    run_ = Store.from_url(url).list_runs()[-1]
    assert run_.stats["finish_reason"] == NO_SEED_REACHABLE and run_.finished_at is not None


# -- database unreachable: exit 4 after the stated retry budget ------------------------------
def test_database_unreachable_at_start(politics_topic):
    url = f"postgresql+psycopg://postgres@127.0.0.1:{closed_port()}/nothing"
    result = crawl("http://a.cn/", politics_topic, url)
    assert_outcome(result, EXIT_DATABASE, "unreachable", "127.0.0.1", "check that it is running")
    assert "retrying for up to 1s" in result.stderr  # the budget is stated


def test_runs_with_the_database_unreachable():
    url = f"postgresql+psycopg://postgres@127.0.0.1:{closed_port()}/nothing"
    result = topicrawl("runs", "--db", url)
    assert_outcome(result, EXIT_DATABASE, "unreachable", "attempts in")


# -- Redis unreachable: exit 5 --------------------------------------------------------------
def test_redis_unreachable_at_start(politics_topic, tmp_path):
    env = clean_env(TOPICRAWL_REDIS_URL=f"redis://127.0.0.1:{closed_port()}/0")
    result = crawl("http://a.cn/", politics_topic, f"sqlite:///{tmp_path / 'x.db'}", env=env)
    assert_outcome(result, EXIT_REDIS, "Redis", "unreachable", "TOPICRAWL_REDIS_URL")


def test_redis_lost_during_the_crawl_ends_it_with_exit_5(proxy, politics_topic, tmp_path):
    """Our own redis-server (never the shared one), stopped during the crawl."""
    import shutil

    if not shutil.which("redis-server"):
        pytest.skip("redis-server is not installed")
    port = closed_port()
    server = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                               "--save", "", "--appendonly", "no"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        import redis

        client = redis.Redis(port=port)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                client.ping()
                break
            except redis.RedisError:
                time.sleep(0.1)
        db = f"sqlite:///{tmp_path / 'x.db'}"
        cmd, env = user_crawl_command(
            proxy, ["http://news.huaxia-daily.com.cn/"], politics_topic, db,
            args={"max_pages": 200},
            settings={"DOWNLOAD_DELAY": 0.3, "CONCURRENT_REQUESTS": 1,
                      "TOPICRAWL_AFFINITY_REDIS": ""},  # the cache's outage is issue 11's
        )  # fmt: skip
        env = {**env, **FAST, "TOPICRAWL_REDIS_URL": f"redis://127.0.0.1:{port}/0",
               "TOPICRAWL_REDIS_PREFIX": "topicrawl"}  # fmt: skip
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)  # fmt: skip
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not client.get("topicrawl:topic:pages"):
            time.sleep(0.2)  # until the crawl has counted a page: it is under way
        server.terminate()
        server.wait(timeout=10)
        out, err = proc.communicate(timeout=120)
    finally:
        if server.poll() is None:
            server.kill()
    result = subprocess.CompletedProcess(cmd, proc.returncode, out, err)
    assert_outcome(result, EXIT_REDIS, "Redis at 127.0.0.1", "unreachable for 1s")
    assert Store.from_url(db).list_runs()[-1].stats["finish_reason"] == "redis_unreachable"


# -- pages spilled: exit 6 with the import-spill command -------------------------------------
class CuttableProxy:
    """A TCP proxy to ``target`` that the test cuts: every connection is closed and new ones
    are refused (the listening socket is closed)."""

    def __init__(self, target: tuple[str, int]):
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.socks: list[socket.socket] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            with self.lock:
                self.socks += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def cut(self) -> None:
        try:
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() and refuses
        except OSError:
            pass
        self.listener.close()
        with self.lock:
            for s in self.socks:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                    s.close()
                except OSError:
                    pass


@pytest.fixture
def full_disk(tmp_path: Path):
    """A directory on a tiny tmpfs that is full (skipped where mounting is not allowed)."""
    mnt = tmp_path / "full"
    mnt.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mnt)],
                          capture_output=True, check=False)  # fmt: skip
    if done.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (not root)")
    try:
        with (mnt / "fill").open("wb") as fh:
            fh.write(b"\0" * 300 * 1024)
    except OSError:
        pass
    yield mnt
    subprocess.run(["umount", str(mnt)], check=False)


def test_database_on_a_full_disk(politics_topic, full_disk):
    result = crawl("http://a.cn/", politics_topic, f"sqlite:///{full_disk / 'x.db'}")
    assert_outcome(result, EXIT_DISK_FULL, "no space left", "free some space")


@pytest.mark.postgres
@pytest.mark.parametrize("spill_to", ["disk", "full disk"])
def test_database_lost_during_the_crawl_spills_and_exits_6(
    spill_to, proxy, politics_topic, pg_url, tmp_path, request
):
    spill_dir = tmp_path / "spill"
    if spill_to == "full disk":
        spill_dir = request.getfixturevalue("full_disk") / "spill"
    from sqlalchemy import make_url

    real = make_url(pg_url)
    tcp = CuttableProxy((real.host or "127.0.0.1", real.port or 5432))
    through = real.set(host="127.0.0.1", port=tcp.port).render_as_string(False)
    cmd, env = user_crawl_command(
        proxy, ["http://news.huaxia-daily.com.cn/"], politics_topic, through,
        args={"max_pages": 15},
        settings={"TOPICRAWL_DB_BATCH": 1000, "TOPICRAWL_SPILL_DIR": spill_dir,
                  "DOWNLOAD_DELAY": 0.2, "CONCURRENT_REQUESTS": 1},
    )  # fmt: skip
    env = {**env, **FAST}
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    store = Store.from_url(pg_url)
    deadline = time.monotonic() + 120
    while not store.list_runs() and time.monotonic() < deadline:  # the run is created
        time.sleep(0.2)
    tcp.cut()
    out, err = proc.communicate(timeout=180)
    result = subprocess.CompletedProcess(cmd, proc.returncode, out, err)
    if spill_to == "full disk":  # nowhere to keep the pages: said so, exit 7
        assert_outcome(result, EXIT_DISK_FULL, "15 pages could be neither stored nor spilled")
        return
    line = assert_outcome(result, EXIT_SPILLED, "could not be stored", "import-spill")
    spilled = line.split("import-spill ", 1)[1].split()[0]
    assert Path(spilled).exists()
    run_ = store.list_runs()[-1]
    assert run_.finished_at is None  # the database was gone: the end waits in the spill file
    for _ in range(2):  # a second import stores nothing twice and keeps the marking
        imported = topicrawl("import-spill", spilled, "--db", pg_url)
        assert imported.returncode == EXIT_OK, imported.stderr
        assert f"run {run_.id} marked finished (pages_spilled)" in imported.stdout
        assert store.count_pages(run_.id) == 15
        run_ = store.get_run(run_.id)
        assert run_.finished_at is not None and run_.stats["finish_reason"] == "pages_spilled"
        assert run_.stats["topicrawl/storage/spilled"] == 15


# -- disk full: exit 7 -----------------------------------------------------------------------
@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
def test_export_to_a_full_disk(sqlite_run):
    result = topicrawl("export", "--run", "1", "--db", sqlite_run, "--out", "/dev/full")
    assert_outcome(result, EXIT_DISK_FULL, "disk full", "/dev/full")


# -- SIGTERM/SIGINT during start-up: 143/130 at once, one line, no run ----------------------
SLOW_SCORER = """
import os, time


class SlowScorer:
    \"\"\"A link scorer whose build takes five minutes (a cold model build, say).\"\"\"

    @classmethod
    def from_topic(cls, topic):
        open(os.environ["SLOW_SCORER_STARTED"], "w").close()
        time.sleep(300)
"""


def wait_for(found, what: str, proc: subprocess.Popen, timeout: float = 120) -> None:
    """Poll ``found()`` until it is true (the crawl reached a stage), or fail."""
    deadline = time.monotonic() + timeout
    while not found():
        assert proc.poll() is None, f"the crawl ended before {what}"
        assert time.monotonic() < deadline, f"no {what} within {timeout:g} s"
        time.sleep(0.1)


def signalled(proc: subprocess.Popen, signum: int, err_path: Path, cmd: list[str]):
    """Send ``signum`` and wait (a generous bound: the shared machine may be loaded)."""
    proc.send_signal(signum)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError("the crawl did not end within 60 s of the signal") from None
    return subprocess.CompletedProcess(cmd, proc.returncode, "", err_path.read_text())


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_while_building_the_scorer_ends_the_crawl(signum, politics_topic, tmp_path):
    (tmp_path / "slowscorer.py").write_text(SLOW_SCORER)
    started = tmp_path / "started"
    db = tmp_path / "x.db"
    cmd = [sys.executable, "-m", "scrapy", "crawl", "topic", "-a", f"seeds=http://127.0.0.1:{closed_port()}/",
           "-a", f"topic={politics_topic}", "-s", f"TOPICRAWL_DB_URL=sqlite:///{db}",
           "-s", "TOPICRAWL_LINK_SCORER=slowscorer.SlowScorer"]  # fmt: skip
    env = clean_env(PYTHONPATH=str(tmp_path), SLOW_SCORER_STARTED=str(started))
    err_path = tmp_path / "stderr.txt"
    with err_path.open("w") as err:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=err)
        wait_for(started.exists, "scorer build", proc)
        result = signalled(proc, signum, err_path, cmd)
    name = signal.Signals(signum).name
    assert_outcome(result, 128 + signum, f"stopped by {name}", "building the scorer",
                   "no run was recorded")  # fmt: skip
    assert 128 + signum == (EXIT_SIGTERM if signum == signal.SIGTERM else EXIT_SIGINT)
    assert Store.from_url(f"sqlite:///{db}").list_runs() == []


def test_sigterm_during_the_checks_ends_the_crawl(politics_topic, tmp_path):
    """The database check retries for 10 minutes here: SIGTERM ends it at once."""
    url = f"postgresql+psycopg://postgres@127.0.0.1:{closed_port()}/nothing"
    cmd = [sys.executable, "-m", "scrapy", "crawl", "topic", "-a", "seeds=http://a.cn/",
           "-a", f"topic={politics_topic}", "-s", f"TOPICRAWL_DB_URL={url}"]  # fmt: skip
    env = clean_env(TOPICRAWL_DB_RETRY_SECONDS="600")
    err_path = tmp_path / "stderr.txt"
    with err_path.open("w") as err:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=err)
        wait_for(lambda: "retrying for up to 600s" in err_path.read_text(), "retry warning", proc)
        result = signalled(proc, signal.SIGTERM, err_path, cmd)
    assert_outcome(result, EXIT_SIGTERM, "stopped by SIGTERM", "checking the topic file")


BROKEN_PIPELINE = """
class BrokenPipeline:
    \"\"\"An item pipeline that fails to open (a bug in a component, say).\"\"\"

    def open_spider(self):
        raise RuntimeError("the component could not open")
"""


def test_an_unexpected_error_opening_the_crawl_exits_1(politics_topic, tmp_path):
    """Scrapy closes a crawl whose component fails to open as ``shutdown`` (exit 0 before):
    now exit 1, the traceback in the log and one line last."""
    (tmp_path / "brokenpipe.py").write_text(BROKEN_PIPELINE)
    pipes = json.dumps({"brokenpipe.BrokenPipeline": 100, **ITEM_PIPELINES})
    cmd = [sys.executable, "-m", "scrapy", "crawl", "topic", "-a", f"seeds=http://127.0.0.1:{closed_port()}/",
           "-a", f"topic={politics_topic}", "-s", f"TOPICRAWL_DB_URL=sqlite:///{tmp_path / 'x.db'}",
           "-s", f"ITEM_PIPELINES={pipes}"]  # fmt: skip
    result = subprocess.run(cmd, cwd=ROOT, env=clean_env(PYTHONPATH=str(tmp_path)),
                            capture_output=True, text=True, timeout=180, check=False)  # fmt: skip
    assert result.returncode == EXIT_BUG, result.stderr[-3000:]
    line = last_line(result.stderr)
    assert line.startswith("topicrawl: the crawl stopped on an unexpected error"), line
    assert "RuntimeError: the component could not open" in line
    assert "RuntimeError: the component could not open" in result.stderr.split(line)[0]


# -- read-only commands change nothing -------------------------------------------------------
def test_runs_creates_no_database(tmp_path):
    result = topicrawl("runs", cwd=tmp_path)
    assert result.returncode == 0 and "no runs yet" in result.stderr
    assert "Traceback" not in result.stderr and "alembic" not in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_export_of_a_missing_run_leaves_no_file(sqlite_run, tmp_path):
    out = tmp_path / "F.jsonl"
    result = topicrawl("export", "--run", "99", "--db", sqlite_run, "--out", str(out))
    assert_outcome(result, 1, "no crawl run 99")
    assert list(tmp_path.iterdir()) == []
    missing = topicrawl("export", "--run", "1", "--db", f"sqlite:///{tmp_path / 'no.db'}",
                        "--out", str(out))  # fmt: skip
    assert missing.returncode == 1 and "no topicrawl database" in missing.stderr
    assert list(tmp_path.iterdir()) == []


def test_runs_lists_a_run_without_alembic_lines(sqlite_run):
    result = topicrawl("runs", "--db", sqlite_run)
    assert result.returncode == 0 and "reason=max_pages" in result.stdout
    assert result.stderr.strip() == ""


# -- a successful crawl: no warnings, a summary with the next command ------------------------
@pytest.fixture(scope="module")
def sqlite_run(tmp_path_factory, proxy, politics_topic) -> str:
    """A short crawl of the test web, run as a user runs it (no log level given)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('run') / 'c.db'}"
    cmd, env = user_crawl_command(proxy, ["http://news.huaxia-daily.com.cn/"], politics_topic,
                                  url, args={"max_pages": 12})  # fmt: skip
    result = run(cmd, env)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Traceback" not in result.stderr and "Deprecat" not in result.stderr
    assert "Dropped" not in result.stderr  # dropped pages are counted, not dumped
    lines = result.stderr.strip().splitlines()
    assert len(lines) < 10, result.stderr
    assert lines[-3].startswith("run 1 ended (max_pages): 12 pages fetched")
    assert lines[-1].startswith("next: ") and "export --run 1" in lines[-1]
    return url


# -- the demo --------------------------------------------------------------------------------
def test_demo_prints_a_short_console_and_removes_its_web(tmp_path):
    env = clean_env(TMPDIR=str(tmp_path), CI="true")
    db = tmp_path / "demo.db"
    result = topicrawl("demo", "--max-pages", "60", "--db", f"sqlite:///{db}", env=env,
                       cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    output = result.stdout + result.stderr
    assert len(output.splitlines()) < 40, output
    assert "Traceback" not in output and "Deprecat" not in output
    # no switched-off component ("Disabled crawler.warc..."), no per-page library warning
    assert "Disabled " not in output and "discarding data" not in output, output
    assert not any(p.name.startswith("topicrawl-web-") for p in tmp_path.iterdir())
    # the suggested command works as printed (with the virtual environment's path)
    suggested = last_line(result.stdout)
    assert suggested.startswith("next: ") and "export --run 1" in suggested
    done = run(shlex.split(suggested.removeprefix("next: ")), env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "corpus.jsonl").stat().st_size > 0


# -- the mapping itself ----------------------------------------------------------------------
def test_finish_reasons_map_to_the_documented_exit_statuses():
    assert exit_status("finished") == EXIT_OK and exit_status("max_pages") == EXIT_OK
    assert exit_status(NO_SEED_REACHABLE) == 3 and exit_status(DATABASE_UNREACHABLE) == 4
    assert exit_status("redis_unreachable") == 5 and exit_status("pages_spilled") == 6
    stats = {"topicrawl/finish_reason": "pages_spilled", "finish_reason": "finished"}
    assert finish_reason(stats, "finished") == "pages_spilled"
    assert finish_reason({}, "max_pages") == "max_pages"


# -- help everywhere, hints for common mistakes ----------------------------------------------
def test_every_command_and_option_has_help_text():
    import argparse

    from topicrawl.cli import build_parser

    missing = []

    def walk(parser: argparse.ArgumentParser, path: list[str]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                helps = {a.dest: a.help for a in action._choices_actions}
                for name, sub in action.choices.items():
                    if not helps.get(name) or not sub.description:
                        missing.append(" ".join([*path, name]))
                    walk(sub, [*path, name])
            elif not action.help and not isinstance(action, argparse._HelpAction):
                missing.append(" ".join([*path, *(action.option_strings or [action.dest])]))

    walk(build_parser(), [])
    assert missing == []


def test_seed_hints():
    from crawler.spiders.topic import seed_hint

    assert seed_hint("example.com") == ": did you mean 'http://example.com'?"
    assert seed_hint("example.com:8080/a") == ": did you mean 'http://example.com:8080/a'?"
    assert seed_hint("htp://example.com/") == ": did you mean 'http://example.com/'?"
    assert seed_hint("https:/example.com/") == ": did you mean 'https://example.com/'?"
    assert seed_hint("ftp://example.com/") == "" and seed_hint("mailto:a@b.cn") == ""


def test_dropped_pages_are_one_debug_line():
    import logging

    from crawler.logformatter import QuietLogFormatter

    entry = QuietLogFormatter().dropped(
        {"url": "http://a.cn/x", "html": "<html>" + "很长" * 10000}, Exception("off-topic"), None, None
    )
    assert entry["level"] == logging.DEBUG
    assert entry["msg"] % entry["args"] == "Dropped http://a.cn/x: off-topic"
