"""Shared fixtures: the local test web behind a forward proxy, PostgreSQL and Redis.

Service fixtures skip when the service is down, except under ``CI=true`` where they fail.
"""

from __future__ import annotations

import os
import subprocess
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from sitegen.server import ServerProcess

CI = os.environ.get("CI") == "true"
PG_ADMIN_URL = os.environ.get("TOPICRAWL_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")
REDIS_TEST_URL = os.environ.get("TOPICRAWL_TEST_REDIS", "redis://127.0.0.1:6379/0")


def delete_prefix(client, prefix: str) -> None:
    """Remove every Redis key of a test's prefix (its crawl's frontier, sets and counters)."""
    keys = list(client.scan_iter(f"{prefix}*"))
    if keys:
        client.delete(*keys)


class CountingStats:
    """The part of Scrapy's stats collector the pipelines and middlewares call, counting into
    ``values`` (thread-safe: the store's writer thread counts too)."""

    def __init__(self) -> None:
        self.values: dict[str, int] = {}
        self._lock = threading.Lock()

    def inc_value(self, key: str, count: int = 1, start: int = 0) -> None:
        with self._lock:
            self.values[key] = self.values.get(key, start) + count


def service_missing(what: str, exc: BaseException) -> None:
    message = f"{what} is not reachable ({exc}); see ../shared/services.md to start it"
    if CI:
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def small_web(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small generated web (built once per test session)."""
    from sitegen.build import build_web

    out = tmp_path_factory.mktemp("web")
    build_web(out, scale="small", seed=7)
    return out


@pytest.fixture(scope="session")
def politics_topic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small 时政 topic file that every page passes (page threshold 0)."""
    path = tmp_path_factory.mktemp("topic") / "politics.toml"
    path.write_text(
        'name = "时政测试"\nlanguage = "zh"\n\n[words]\n"政治" = 1.0\n"中央" = 0.8\n'
        '"会议" = 0.6\n"政府" = 0.8\n\n[page]\nthreshold = 0.0\n',
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="session")
def proxy(small_web: Path) -> Iterator[str]:
    server = ServerProcess(small_web)
    yield server.url
    server.stop()


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A fresh PostgreSQL database for one test, dropped afterwards."""
    import psycopg

    name = f"topicrawl_test_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    admin = PG_ADMIN_URL
    try:
        with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
    except psycopg.OperationalError as exc:
        service_missing("PostgreSQL", exc)
    base = admin.rsplit("/", 1)[0]
    yield f"postgresql+psycopg://{base.removeprefix('postgresql://')}/{name}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def redis_url() -> Iterator[str]:
    import redis

    client = redis.Redis.from_url(REDIS_TEST_URL, socket_connect_timeout=3)
    try:
        client.ping()
    except redis.exceptions.ConnectionError as exc:
        service_missing("Redis", exc)
    yield REDIS_TEST_URL
    client.close()


@pytest.fixture
def redis_keys(redis_url):
    """A Redis client and a unique key prefix; every key under the prefix is removed after
    the test."""
    import redis

    client = redis.Redis.from_url(redis_url)
    prefix = f"topicrawl_test_{uuid.uuid4().hex[:8]}"
    yield client, prefix
    delete_prefix(client, prefix)


ROOT = Path(__file__).resolve().parent.parent


def crawl_command(
    proxy_url: str,
    seeds: list[str],
    topic: Path | str,
    db_url: str,
    *,
    args: dict[str, object] | None = None,
    settings: dict[str, object] | None = None,
) -> tuple[list[str], dict[str, str]]:
    """The ``scrapy crawl topic`` command line and environment for a crawl of the test web
    (sitegen's, with the tests' default settings)."""
    from sitegen.server import crawl_command as proxied_crawl

    base = {
        "TOPICRAWL_DB_URL": db_url,
        "AUTOTHROTTLE_ENABLED": False,
        "DOWNLOAD_DELAY": 0,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 8,
        "TOPICRAWL_PROGRESS_INTERVAL": 0,
        "LOG_LEVEL": "INFO",
    }
    return proxied_crawl(proxy_url, seeds, topic, args=args, settings={**base, **(settings or {})})


def run_crawl(
    proxy_url: str,
    seeds: list[str],
    topic: Path | str,
    db_url: str,
    *,
    args: dict[str, object] | None = None,
    settings: dict[str, object] | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    """Run ``scrapy crawl topic`` in a subprocess through the test web's proxy."""
    cmd, env = crawl_command(proxy_url, seeds, topic, db_url, args=args, settings=settings)
    return subprocess.run(
        cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.fixture
def fit_blas_threads(monkeypatch) -> list[int]:
    """The BLAS thread counts seen inside every ``LogisticRegression.fit`` of the test."""
    from sklearn.linear_model import LogisticRegression
    from threadpoolctl import threadpool_info

    seen: list[int] = []
    fit = LogisticRegression.fit

    def recording_fit(self, *args, **kwargs):
        seen.extend(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")
        return fit(self, *args, **kwargs)

    monkeypatch.setattr(LogisticRegression, "fit", recording_fit)
    return seen
