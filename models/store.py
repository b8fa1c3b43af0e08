"""Storage of crawls: SQLite embedded by default, PostgreSQL through ``TOPICRAWL_DB_URL``.

Every write is batched, idempotent (upsert by natural key: a page once per URL per run, a
document once per page) and retried with backoff when the database is unreachable, so a
short outage loses nothing; reads stream in keyset-paginated batches.
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import os
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import (
    Engine,
    create_engine,
    event,
    func,
    inspect,
    make_url,
    select,
    text,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from models.orm import CrawlRun, Document, Duplicate, Label, Page, RunSnapshot, UrlHistory
from topicrawl.errors import ConfigError, DiskFullError, StorageError
from topicrawl.outcome import is_disk_full

log = logging.getLogger(__name__)

DEFAULT_DB_URL = "sqlite:///topicrawl.db"
#: Seconds a database that does not answer is retried before the command gives up
#: (``TOPICRAWL_DB_RETRY_SECONDS``; the crawl's setting of the same name).
DEFAULT_RETRY_SECONDS = 30.0
MIGRATIONS = Path(__file__).resolve().parent / "migrations"
#: The newest Alembic revision under MIGRATIONS (a test holds it equal to Alembic's head): a
#: database already there is opened without importing Alembic (≈ 13 MB and 0.3 s of start-up)
SCHEMA_HEAD = "i15_recrawl"
#: A new SQLite database's schema at SCHEMA_HEAD: the statements Alembic's migrations leave in
#: ``sqlite_master``, in order (written by :func:`write_sqlite_schema`; a test holds the
#: schema they make equal to the migrations'). A new SQLite database is made from it without
#: importing Alembic (≈ 20 MB of the crawl process and 0.3 s of start-up).
SQLITE_SCHEMA = Path(__file__).resolve().parent / "schema_sqlite.sql"
T = TypeVar("T")

PAGE_FIELDS = (
    "final_url", "host", "status", "fetched_at", "depth", "parent_url", "anchor", "title",
    "description", "keywords", "language", "charset", "published", "text", "link_score",
    "relevance", "accepted", "relevance_parts", "warc_file", "warc_offset", "warc_length",
    "etag", "last_modified", "content_type",
)  # fmt: skip


def resolve_db_url(url: str | None = None) -> str:
    """The database URL: the argument, else ``$TOPICRAWL_DB_URL``, else ``./topicrawl.db``."""
    return url or os.environ.get("TOPICRAWL_DB_URL") or DEFAULT_DB_URL


def retry_budget(value: float | str | None = None) -> float:
    """The database retry budget in seconds: the argument, else
    ``$TOPICRAWL_DB_RETRY_SECONDS``, else :data:`DEFAULT_RETRY_SECONDS`."""
    if value is None or value == "":
        value = os.environ.get("TOPICRAWL_DB_RETRY_SECONDS") or DEFAULT_RETRY_SECONDS
    try:
        budget = float(value)
    except ValueError:
        raise ConfigError(
            f"TOPICRAWL_DB_RETRY_SECONDS={value!r} is not a number of seconds"
        ) from None
    return max(0.0, budget)


def display_url(url: str) -> str:
    """``url`` without its password, for messages."""
    return make_url(url).render_as_string(hide_password=True)


def absolute_db_url(url: str) -> str:
    """``url`` with a relative SQLite path made absolute (from the current directory), for a
    crawl that runs in another directory."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        path = Path(parsed.database)
        if not path.is_absolute():
            return parsed.set(database=str(path.resolve())).render_as_string(False)
    return url


def spill_line(run_id: int, row: dict[str, Any]) -> str:
    """One page row of a run as a JSON line (spill files and the JOBDIR journal of the store
    pipeline); :func:`spill_row` reads it back."""
    return json.dumps({"run_id": run_id, **jsonable(row)}, ensure_ascii=False) + "\n"


def spill_row(line: str) -> tuple[int, dict[str, Any]]:
    """``(run id, page row)`` of one JSON line written by :func:`spill_line`."""
    row = json.loads(line)
    if isinstance(row.get("fetched_at"), str):
        row["fetched_at"] = datetime.fromisoformat(row["fetched_at"])
    return int(row.pop("run_id")), row


#: the key of a spill file's run-end line (:func:`run_end_line`)
RUN_END_KEY = "_run_end"


def run_end_line(
    run_id: int, stats: dict[str, Any], finished_at: datetime, *, recrawl: bool = False
) -> str:
    """The end record of a run that the database refused at close (the last line of its
    spill file): what :meth:`Store.finish_run` would have written. ``recrawl``: ``stats``
    are one recrawl's, to append to the run's ``recrawls``."""
    end = {"finished_at": finished_at.isoformat(), "stats": jsonable(stats), "recrawl": recrawl}
    return json.dumps({"run_id": run_id, RUN_END_KEY: end}, ensure_ascii=False) + "\n"


def compress(html: str | None) -> bytes | None:
    return None if html is None else zlib.compress(html.encode("utf-8"), 6)


def decompress(blob: bytes | None) -> str | None:
    return None if blob is None else zlib.decompress(blob).decode("utf-8")


@dataclass
class PageRecord:
    """A stored page as plain attributes (``html`` decompressed)."""

    id: int
    run_id: int
    url: str
    final_url: str | None
    host: str
    status: int | None
    depth: int
    parent_url: str | None
    anchor: str | None
    title: str | None
    description: str | None
    keywords: str | None
    language: str | None
    charset: str | None
    published: str | None
    html: str | None
    text: str | None
    link_score: dict[str, Any] | None
    relevance: float | None
    accepted: bool
    fetched_at: datetime | None = None
    relevance_parts: dict[str, Any] | None = None
    warc_file: str | None = None
    warc_offset: int | None = None
    warc_length: int | None = None
    etag: str | None = None
    last_modified: str | None = None
    content_type: str | None = None


def text_hash(text: str | None) -> str:
    """A short digest of a page's stored text: a recrawl compares it to tell a change."""
    import hashlib

    return hashlib.sha1((text or "").encode("utf-8")).hexdigest()[:20]


@dataclass
class RecrawlTarget:
    """A stored page to fetch again (:meth:`Store.recrawl_targets`)."""

    url: str
    final_url: str | None
    accepted: bool
    depth: int
    etag: str | None
    last_modified: str | None
    text_hash: str
    hub: bool  # a list page: it led to an accepted page
    parent_url: str | None = None  # how the crawl first came to it (kept on a change)
    anchor: str | None = None
    link_score: dict[str, Any] | None = None


@dataclass
class DocumentRecord:
    page_id: int
    url: str
    title: str | None
    text: str
    meta: dict[str, Any]


def _page_record(page: Page) -> PageRecord:
    return PageRecord(
        id=page.id, run_id=page.run_id, url=page.url, final_url=page.final_url, host=page.host,
        status=page.status, depth=page.depth, parent_url=page.parent_url, anchor=page.anchor,
        title=page.title, description=page.description, keywords=page.keywords,
        language=page.language, charset=page.charset, published=page.published,
        html=decompress(page.html_z), text=page.text, link_score=page.link_score,
        relevance=page.relevance, accepted=bool(page.accepted), fetched_at=page.fetched_at,
        relevance_parts=page.relevance_parts, warc_file=page.warc_file,
        warc_offset=page.warc_offset, warc_length=page.warc_length,
        etag=page.etag, last_modified=page.last_modified, content_type=page.content_type,
    )  # fmt: skip


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA busy_timeout=30000")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()


class Store:
    """Reads and writes crawl runs, pages, documents, duplicates and the URL history."""

    def __init__(
        self,
        engine: Engine,
        *,
        retries: int = 6,
        backoff: float = 0.5,
        retry_seconds: float | None = None,
    ):
        self.engine = engine
        self.retries = retries
        self.backoff = backoff
        #: stop retrying once this many seconds have passed (None: ``retries`` only)
        self.retry_seconds = retry_seconds
        self._session = sessionmaker(engine, expire_on_commit=False)
        #: the write transaction this thread is inside (:meth:`_write` nests into it)
        self._tx = threading.local()
        dialect = engine.dialect.name
        if dialect not in ("sqlite", "postgresql"):
            raise StorageError(f"unsupported database {dialect!r}: use SQLite or PostgreSQL")
        self._insert = sqlite.insert if dialect == "sqlite" else postgresql.insert

    @classmethod
    def from_url(cls, url: str | None = None, *, migrate: bool = True, **kwargs: Any) -> Store:
        """Open (and migrate to the newest schema) the database at ``url``.

        A database that does not answer is retried for ``retry_seconds`` (default
        :func:`retry_budget`), then :class:`StorageError` says which and what to do."""
        url = resolve_db_url(url)
        if url.startswith("postgresql://"):
            url = "postgresql+psycopg://" + url.removeprefix("postgresql://")
        kwargs.setdefault("retry_seconds", retry_budget())
        if kwargs["retry_seconds"] is not None:
            kwargs.setdefault("retries", 10_000)  # the time budget decides
        connect_args = {}
        if url.startswith("postgresql"):  # a host that drops packets fails within the budget
            timeout = max(1, min(10, int(kwargs["retry_seconds"] or 10)))
            connect_args["connect_timeout"] = timeout
        try:
            engine = create_engine(url, pool_pre_ping=True, connect_args=connect_args)
        except Exception as exc:  # a malformed URL or a missing driver
            raise StorageError(
                f"cannot use database URL {url!r}: {exc}; "
                "expected sqlite:///FILE or postgresql+psycopg://user@host/db"
            ) from exc
        if engine.dialect.name == "sqlite":
            event.listen(engine, "connect", _sqlite_pragmas)
        store = cls(engine, **kwargs)
        if migrate:
            store._retry(store.migrate)
        return store

    @classmethod
    def open_existing(cls, url: str | None = None, **kwargs: Any) -> Store | None:
        """Open a database for reading, creating nothing: None when there is no topicrawl
        database at ``url`` (no SQLite file, or no ``crawl_runs`` table). A database of an
        older schema is migrated (it could not be read otherwise)."""
        url = resolve_db_url(url)
        parsed = make_url(url)
        if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
            if not Path(parsed.database).is_file():
                return None
        store = cls.from_url(url, migrate=False, **kwargs)
        if not store._retry(lambda: inspect(store.engine).has_table("crawl_runs")):
            store.close()
            return None
        store._retry(store.migrate)
        return store

    def schema_current(self) -> bool:
        """Whether the database is at :data:`SCHEMA_HEAD` already (one read of Alembic's
        version table; False when it has none)."""
        with self.engine.connect() as conn:
            if not inspect(conn).has_table("alembic_version"):
                return False
            versions = conn.execute(text("SELECT version_num FROM alembic_version")).scalars()
            return list(versions) == [SCHEMA_HEAD]

    def migrate(self) -> None:
        """Bring the schema to the newest Alembic revision (serialised across workers); a
        database at the newest one is only read, and a new (empty) SQLite database is made
        from :data:`SQLITE_SCHEMA`: Alembic is not even imported for either."""
        if self.schema_current():
            return
        if self.engine.dialect.name == "sqlite" and self._create_sqlite_schema():
            return
        from alembic import command
        from alembic.config import Config

        cfg = Config()
        cfg.set_main_option("script_location", str(MIGRATIONS))
        cfg.set_main_option("sqlalchemy.url", self.engine.url.render_as_string(False))
        with self.engine.begin() as conn:
            if self.engine.dialect.name == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(7307110)"))
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "head")

    def _create_sqlite_schema(self) -> bool:
        """Make the schema at :data:`SCHEMA_HEAD` in an empty SQLite database (its
        ``alembic_version`` table stamped) in one write transaction, taken before the check,
        so that two processes opening the same new file do not both make it; False (nothing
        done) when the database holds anything already: Alembic decides then."""
        statements = sqlite_schema_statements()
        with self.engine.connect() as conn:
            raw = conn.connection.driver_connection
            assert raw is not None
            cur = raw.cursor()
            cur.execute("BEGIN IMMEDIATE")
            try:
                if cur.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                    raw.rollback()
                    return False
                for statement in statements:
                    cur.execute(statement)
                cur.execute("INSERT INTO alembic_version (version_num) VALUES (?)",
                            (SCHEMA_HEAD,))  # fmt: skip
                raw.commit()
            except BaseException:
                raw.rollback()
                raise
            finally:
                cur.close()
        return True

    def close(self) -> None:
        self.engine.dispose()

    # -- retries ---------------------------------------------------------------------------
    def _retry(self, fn: Callable[[], T]) -> T:
        """``fn()``, retried with exponential backoff while the database is unreachable: at
        most ``retries`` times and, when set, for at most ``retry_seconds`` seconds."""
        delay = self.backoff
        start = time.monotonic()
        for attempt in itertools.count():
            try:
                return fn()
            except (OperationalError, DBAPIError) as exc:
                transient = isinstance(exc, OperationalError) or exc.connection_invalidated
                if self.retry_seconds is not None:
                    left = self.retry_seconds - (time.monotonic() - start)
                    delay = min(delay, max(left, 0.0))
                    out_of_time = left <= 0.05
                else:
                    out_of_time = False
                last = attempt >= self.retries
                if not transient or last or out_of_time:
                    reason = str(exc.orig or exc).strip().splitlines()[0]
                    waited = time.monotonic() - start
                    if is_disk_full(exc):
                        raise DiskFullError(
                            f"database {self.engine.url.render_as_string(True)}: no space left "
                            f"({reason}): free some space on its disk, or choose another "
                            "database with TOPICRAWL_DB_URL / --db"
                        ) from exc
                    raise StorageError(
                        f"database {self.engine.url.render_as_string(True)} unreachable "
                        f"({reason}; {attempt + 1} attempts in {waited:.0f}s): check that it "
                        "is running and TOPICRAWL_DB_URL / --db names it"
                    ) from exc
                if attempt == 0:
                    budget = (f"for up to {self.retry_seconds:g}s"
                              if self.retry_seconds is not None else f"{self.retries} times")  # fmt: skip
                    log.warning(
                        "database %s unavailable (%s); retrying %s",
                        self.engine.url.render_as_string(True),
                        str(exc.orig or exc).strip().splitlines()[0],
                        budget,
                    )
                else:
                    log.debug("database unavailable; retry %d in %.1fs", attempt + 1, delay)
                time.sleep(delay)
                delay = min(delay * 2, 10.0)
        raise AssertionError("unreachable")

    def _write(self, fn: Callable[[Session], T]) -> T:
        """``fn(session)`` in a write transaction, retried (:meth:`_retry`); called inside
        another ``_write`` of the same thread, it runs in that one transaction."""
        outer = getattr(self._tx, "session", None)
        if outer is not None:
            return fn(outer)

        def attempt() -> T:
            with self._session.begin() as session:
                self._tx.session = session
                try:
                    return fn(session)
                finally:
                    self._tx.session = None

        return self._retry(attempt)

    def _read(self, fn: Callable[[Session], T]) -> T:
        """``fn(session)`` in a read-only session, retried like a write (:meth:`_retry`):
        a read at a crawl's start-up or resume outlives a short outage too."""

        def attempt() -> T:
            with self._session() as session:
                return fn(session)

        return self._retry(attempt)

    # -- runs ------------------------------------------------------------------------------
    def start_run(
        self,
        topic_name: str,
        topic_text: str = "",
        settings: dict | None = None,
        *,
        run_id: int | None = None,
    ) -> int:
        """Create a run; with ``run_id``, create that run unless it exists (several workers
        of one distributed crawl may race to create it)."""
        row = {"topic_name": topic_name, "topic_text": topic_text,
               "settings": jsonable(settings or {}), "stats": {}, "started_at": datetime.now(UTC)}  # fmt: skip

        def go(session: Session) -> int:
            if run_id is None:
                return int(
                    session.execute(
                        self._insert(CrawlRun).values(row).returning(CrawlRun.id)
                    ).scalar_one()
                )
            session.execute(
                self._insert(CrawlRun).values({**row, "id": run_id}).on_conflict_do_nothing()
            )
            return run_id

        created = self._write(go)
        if run_id is not None and self.engine.dialect.name == "postgresql":
            # keep the id sequence ahead of explicitly chosen ids
            self._write(lambda s: s.execute(text(
                "SELECT setval(pg_get_serial_sequence('crawl_runs', 'id'), "
                "GREATEST((SELECT MAX(id) FROM crawl_runs), 1))"
            )))  # fmt: skip
        return created

    def reopen_run(self, run_id: int) -> None:
        """Mark a resumed run as running again (``finished_at`` empty until it closes)."""
        self._write(
            lambda s: s.execute(
                update(CrawlRun).where(CrawlRun.id == run_id).values(finished_at=None)
            )
        )

    def finish_run(
        self, run_id: int, stats: dict[str, Any], finished_at: datetime | None = None
    ) -> None:
        values = {"finished_at": finished_at or datetime.now(UTC), "stats": jsonable(stats)}
        self._write(
            lambda s: s.execute(update(CrawlRun).where(CrawlRun.id == run_id).values(values))
        )

    def record_run_end(self, run_id: int, end: dict[str, Any]) -> str:
        """Write a run's end record from a spill file (:func:`run_end_line`); idempotent.

        Returns ``"marked"``, ``"missing"`` (no such run) or ``"later"`` (the run already has
        a later end, e.g. it was resumed and finished since: kept). A recrawl's stats are
        appended to the run's ``recrawls`` once."""
        finished = datetime.fromisoformat(end["finished_at"])
        if finished.tzinfo is None:
            finished = finished.replace(tzinfo=UTC)
        run = self._retry(lambda: self.get_run(run_id))
        if run is None:
            return "missing"
        if run.finished_at is not None:
            current = run.finished_at
            if current.tzinfo is None:  # SQLite keeps no time zone: stored in UTC
                current = current.replace(tzinfo=UTC)
            if current > finished:
                return "later"
        stats = end.get("stats") or {}
        if end.get("recrawl"):
            before = dict(run.stats or {})
            recrawls = list(before.get("recrawls", []))
            if stats not in recrawls:
                recrawls.append(stats)
            stats = {**before, "recrawls": recrawls}
        self.finish_run(run_id, stats, finished_at=finished)
        return "marked"

    def get_run(self, run_id: int) -> CrawlRun | None:
        return self._read(lambda s: s.get(CrawlRun, run_id))

    def list_runs(self) -> list[CrawlRun]:
        return self._read(lambda s: list(s.scalars(select(CrawlRun).order_by(CrawlRun.id))))

    # -- pages -----------------------------------------------------------------------------
    def save_pages(self, run_id: int, items: Iterable[dict[str, Any]]) -> dict[str, int]:
        """Upsert pages by (run, url); returns url -> page id. A row without HTML keeps the
        stored HTML (a page judged again at the crawl's end is sent without it)."""
        rows = []
        for item in items:
            row = {"run_id": run_id, "url": item["url"], "html_z": compress(item.get("html"))}
            for name in PAGE_FIELDS:
                row[name] = item.get(name)
            row["host"] = row["host"] or ""
            row["depth"] = row["depth"] or 0
            row["accepted"] = bool(row["accepted"])
            row["fetched_at"] = row["fetched_at"] or datetime.now(UTC)
            row["link_score"] = jsonable(row["link_score"])
            row["relevance_parts"] = jsonable(row["relevance_parts"])
            rows.append(row)
        if not rows:
            return {}
        rows = list({r["url"]: r for r in rows}.values())  # one upsert touches a row once

        def go(session: Session) -> dict[str, int]:
            # the rows as the parameters of one upsert statement (executemany): its SQL is
            # compiled once and cached, where a statement with the rows as VALUES was compiled
            # for every batch (≈ 1 ms of CPU a stored page, holding the GIL: docs/scale.md)
            stmt = self._insert(Page)
            stmt = stmt.on_conflict_do_update(
                index_elements=["run_id", "url"],
                set_={**{c: stmt.excluded[c] for c in PAGE_FIELDS},
                      "html_z": func.coalesce(stmt.excluded.html_z, Page.__table__.c.html_z)},
            )
            session.execute(stmt, rows)
            urls = [r["url"] for r in rows]
            return self._page_ids(session, run_id, urls)

        return self._write(go)

    @staticmethod
    def _page_ids(session: Session, run_id: int, urls: list[str]) -> dict[str, int]:
        found = session.execute(
            select(Page.url, Page.id).where(Page.run_id == run_id, Page.url.in_(urls))
        )
        return {url: pid for url, pid in found}

    def recrawl_targets(self, run_id: int) -> Iterator[RecrawlTarget]:
        """The pages ``topicrawl recrawl`` fetches again: the accepted pages, and the list
        pages (every page that led to an accepted page: its ``parent_url``), with their
        validators and a hash of their stored text."""
        cols = (Page.id, Page.url, Page.final_url, Page.parent_url, Page.accepted, Page.depth,
                Page.etag, Page.last_modified, Page.text, Page.anchor,
                Page.link_score)  # fmt: skip
        parents = self._read(lambda s: set(s.scalars(
            select(Page.parent_url).where(Page.run_id == run_id, Page.accepted.is_(True),
                                          Page.parent_url.is_not(None)).distinct()
        )))  # fmt: skip
        last = 0
        while True:  # id order, 500 rows a read (each read retried on its own)
            query = (select(*cols).where(Page.run_id == run_id, Page.id > last)
                     .order_by(Page.id).limit(500))  # fmt: skip
            rows = self._read(lambda s, q=query: s.execute(q).all())
            if not rows:
                return
            for row in rows:
                hub = row.url in parents or (row.final_url or "") in parents
                if row.accepted or hub:
                    yield RecrawlTarget(
                        row.url, row.final_url, bool(row.accepted), row.depth or 0, row.etag,
                        row.last_modified, text_hash(row.text), hub, row.parent_url,
                        row.anchor, row.link_score,
                    )  # fmt: skip
            last = rows[-1].id

    def page_urls(self, run_id: int) -> set[str]:
        """Every URL a page of the run was stored under (requested and final URLs)."""
        query = select(Page.url, Page.final_url).where(Page.run_id == run_id)
        return self._read(lambda s: {u for row in s.execute(query) for u in row if u})

    def page_ids(self, run_id: int, urls: list[str]) -> dict[str, int]:
        return self._read(lambda s: self._page_ids(s, run_id, urls))

    def complete_page_urls(self, run_id: int, urls: list[str]) -> set[str]:
        """Which of ``urls`` :meth:`save_crawl_batch` wrote whole: the page, and for an
        accepted page its document and history row too (the batch is several transactions;
        a worker killed between them leaves a page without its document)."""
        query = (
            select(Page.url, Page.accepted, Document.id, UrlHistory.id)
            .outerjoin(Document, Document.page_id == Page.id)
            .outerjoin(
                UrlHistory, (UrlHistory.run_id == Page.run_id) & (UrlHistory.url == Page.url)
            )
            .where(Page.run_id == run_id, Page.url.in_(urls))
        )

        def whole(s: Session) -> set[str]:
            return {url for url, accepted, doc, hist in s.execute(query)
                    if not accepted or (doc is not None and hist is not None)}  # fmt: skip

        return self._read(whole)

    def count_pages(self, run_id: int, accepted_only: bool = False) -> int:
        query = select(func.count()).select_from(Page).where(Page.run_id == run_id)
        if accepted_only:
            query = query.where(Page.accepted.is_(True))
        return self._read(lambda s: int(s.scalar(query) or 0))

    def iter_pages(
        self, run_id: int, *, accepted_only: bool = False, batch_size: int = 500
    ) -> Iterator[PageRecord]:
        """Stream the pages of a run in id order, ``batch_size`` rows at a time."""
        last = 0
        while True:
            query = select(Page).where(Page.run_id == run_id, Page.id > last)
            if accepted_only:
                query = query.where(Page.accepted.is_(True))
            query = query.order_by(Page.id).limit(batch_size)
            batch = self._read(lambda s, q=query: [_page_record(p) for p in s.scalars(q)])
            if not batch:
                return
            yield from batch
            last = batch[-1].id

    # -- documents, duplicates, history ----------------------------------------------------
    def save_documents(self, run_id: int, docs: Iterable[dict[str, Any]]) -> None:
        """Upsert corpus documents by page id: ``{"page_id", "text", "meta"}``."""
        now = datetime.now(UTC)
        rows = [
            {"run_id": run_id, "page_id": d["page_id"], "text": d["text"],
             "meta": jsonable(d.get("meta") or {}), "created_at": now}
            for d in docs
        ]  # fmt: skip
        if not rows:
            return

        def go(session: Session) -> None:
            stmt = self._insert(Document).values(rows)
            session.execute(
                stmt.on_conflict_do_update(
                    index_elements=["page_id"],
                    set_={"text": stmt.excluded.text, "meta": stmt.excluded.meta},
                )
            )

        self._write(go)

    def delete_documents(self, run_id: int, page_ids: Iterable[int]) -> None:
        ids = list(page_ids)
        if ids:
            self._write(
                lambda s: s.execute(
                    Document.__table__.delete().where(
                        Document.run_id == run_id, Document.page_id.in_(ids)
                    )
                )
            )

    def reject_pages(self, run_id: int, urls: Iterable[str]) -> set[str]:
        """Take pages out of the corpus: not accepted, no document (e.g. replaced by a
        better copy of the same text). Returns the URLs the run holds no page of (yet: in a
        scale-out, the worker that fetched one may not have written it)."""
        urls = list(urls)
        if not urls:
            return set()

        def go(session: Session) -> set[str]:
            found = self._page_ids(session, run_id, urls)
            ids = list(found.values())
            session.execute(update(Page).where(Page.id.in_(ids)).values(accepted=False))
            self.delete_documents(run_id, ids)  # in this transaction (_write nests)
            return set(urls) - found.keys()

        return self._write(go)

    def count_documents(self, run_id: int) -> int:
        query = select(func.count()).select_from(Document).where(Document.run_id == run_id)
        return self._read(lambda s: int(s.scalar(query) or 0))

    def iter_documents(self, run_id: int, *, batch_size: int = 500) -> Iterator[DocumentRecord]:
        """Stream the corpus documents of a run in page order."""
        last = 0
        while True:
            query = (
                select(Document, Page.url, Page.title)
                .join(Page, Page.id == Document.page_id)
                .where(Document.run_id == run_id, Document.id > last)
                .order_by(Document.id)
                .limit(batch_size)
            )
            rows = self._read(lambda s, q=query: s.execute(q).all())
            if not rows:
                return
            for doc, url, title in rows:
                yield DocumentRecord(doc.page_id, url, title, doc.text, doc.meta or {})
            last = rows[-1][0].id

    def add_duplicates(self, run_id: int, dups: Iterable[dict[str, Any]]) -> None:
        """Record duplicates: ``{"url", "of", "method", "score"}`` (pages must be saved)."""
        dups = list(dups)
        if not dups:
            return

        def go(session: Session) -> None:
            urls = [d["url"] for d in dups] + [d["of"] for d in dups]
            ids = self._page_ids(session, run_id, urls)
            rows = [
                {"run_id": run_id, "page_id": ids[d["url"]], "original_url": d["of"],
                 # a page of a corpus index may have this page's own URL: no self-reference
                 "original_page_id": ids.get(d["of"]) if d["of"] != d["url"] else None,
                 "method": d["method"],
                 "score": float(d["score"])}
                for d in dups if d["url"] in ids
            ]  # fmt: skip
            if rows:
                stmt = self._insert(Duplicate).values(rows)
                session.execute(
                    stmt.on_conflict_do_update(
                        index_elements=["page_id"],
                        set_={
                            c: stmt.excluded[c]
                            for c in ("original_url", "original_page_id", "method", "score")
                        },
                    )
                )

        self._write(go)

    def reattribute_duplicates(self, run_id: int, dups: Iterable[dict[str, Any]],
                               waiting: list[dict[str, Any]] | None = None) -> int:  # fmt: skip
        """Give dropped pages' duplicate records a better original: ``{"url", "of", "method",
        "score", "was"}`` (dedup's ``duplicate_reattributed``: a commentary page met before
        its source, recorded as the duplicate of an article it spliced). The record of page
        ``url`` names ``of`` from then on only while it still names ``was`` and the page is
        not in the corpus: a record changed since, a page accepted again (a recrawl) or one
        never recorded is left alone. In order (a page moved twice: each from the one
        before), in one transaction; returns the records changed. ``waiting`` receives the
        moves whose page has no row yet (a scale-out: the worker that dropped it has not
        written it; a dropped page's row and record are written together), to be tried
        again."""
        rows = []
        for d in dups:
            url, of, was = d.get("url"), d.get("of"), d.get("was")
            if not all(isinstance(x, str) and x for x in (url, of, was)) or url == of:
                continue
            try:
                score = float(d.get("score", 0.0))
            except (TypeError, ValueError):
                continue
            if not math.isfinite(score):
                continue
            method = str(d.get("method") or "")[:32]  # (the column's width)
            rows.append((d, url, of, was, method, min(1.0, max(0.0, score))))
        if not rows:
            return 0

        def go(session: Session) -> tuple[int, list[dict[str, Any]]]:
            ids = self._page_ids(session, run_id, sorted({u for r in rows for u in r[1:3]}))
            changed = 0
            absent: list[dict[str, Any]] = []
            for d, url, of, was, method, score in rows:
                page_id = ids.get(url)
                if page_id is None:
                    absent.append(d)
                    continue
                dropped = select(Page.id).where(Page.id == page_id, Page.accepted.is_(False))
                result = session.execute(
                    update(Duplicate)
                    .where(Duplicate.run_id == run_id, Duplicate.page_id == page_id,
                           Duplicate.original_url == was, Duplicate.page_id.in_(dropped))
                    .values(original_url=of, original_page_id=ids.get(of), method=method,
                            score=score)
                )  # fmt: skip
                changed += int(result.rowcount or 0)
            return changed, absent

        changed, absent = self._write(go)  # (handed over once the transaction committed)
        if waiting is not None:
            waiting.extend(absent)
        return changed

    def revive_pages(self, run_id: int, rows: Iterable[dict[str, Any]],
                     clean: Callable[[dict[str, Any]], tuple[str | None, dict[str, Any],
                                                             str | None]],
                     waiting: list[dict[str, Any]] | None = None) -> list[str]:  # fmt: skip
        """Take dropped pages back into the corpus: ``{"url", "of"}`` (dedup's
        ``document_revived``: a source dropped as the duplicate of its commentary page ``of``
        met before it, shown to be the original once the articles the page spliced in were
        indexed). A page is taken back only while it is not in the corpus and its duplicate
        record still names ``of``: its stored HTML and text go through ``clean`` (the store
        pipeline's cleaning: ``(text, meta, reason dropped)``), and a page the cleaner keeps
        is accepted, gets its document and URL-history row, and loses its duplicate record;
        then ``of`` leaves the corpus as its duplicate (:meth:`reject_pages`,
        :meth:`add_duplicates`; ``method``, ``score``). A page the cleaner drops is left
        dropped and ``of`` stays in the corpus (one copy kept either way). One transaction;
        returns the URLs taken back. ``waiting`` receives the rows whose page has no row yet
        (a scale-out), to be tried again, and the rejects of an ``of`` not written yet."""
        rows = [r for r in rows if isinstance(r.get("url"), str) and isinstance(r.get("of"), str)]
        if not rows:
            return []

        def go(session: Session) -> tuple[list[str], list[dict[str, Any]]]:
            ids = self._page_ids(session, run_id, sorted({r["url"] for r in rows}))
            revived: list[str] = []
            absent: list[dict[str, Any]] = []
            for r in rows:
                page_id = ids.get(r["url"])
                if page_id is None:
                    absent.append(r)
                    continue
                page = session.get(Page, page_id)
                dup = session.execute(select(Duplicate).where(
                    Duplicate.run_id == run_id, Duplicate.page_id == page_id)).scalar_one_or_none()
                if page is None or page.accepted or dup is None or dup.original_url != r["of"]:
                    continue
                text, meta, dropped = clean({
                    "url": page.url, "html": decompress(page.html_z), "text": page.text,
                    "host": page.host, "title": page.title, "published": page.published})
                if dropped or not text:
                    continue
                session.execute(update(Page).where(Page.id == page_id).values(accepted=True))
                session.delete(dup)
                session.flush()
                self.save_documents(run_id, [{"page_id": page_id, "text": text, "meta": meta}])
                self.add_history(run_id, [page.url])
                revived.append(page.url)
                # the page it was dropped for leaves the corpus as its duplicate
                out = {"url": r["of"], "of": page.url, "method": str(r.get("method") or ""),
                       "score": float(r.get("score") or 0.0)}  # fmt: skip
                if self.reject_pages(run_id, [r["of"]]):
                    absent.append(out)  # not written yet: a reject that waits
                else:
                    self.add_duplicates(run_id, [out])
            return revived, absent

        revived, absent = self._write(go)
        if waiting is not None:
            waiting.extend(absent)
        return revived

    def add_duplicate(
        self, run_id: int, page_url: str, original_url: str, method: str, score: float
    ) -> None:
        self.add_duplicates(
            run_id, [{"url": page_url, "of": original_url, "method": method, "score": score}]
        )

    def count_duplicates(self, run_id: int) -> dict[str, int]:
        query = (
            select(Duplicate.method, func.count())
            .where(Duplicate.run_id == run_id)
            .group_by(Duplicate.method)
        )
        return self._read(lambda s: {m: int(n) for m, n in s.execute(query)})

    def add_history(self, run_id: int, urls: Iterable[str]) -> None:
        now = datetime.now(UTC)
        rows = [{"run_id": run_id, "url": u, "accepted_at": now} for u in dict.fromkeys(urls)]
        if rows:
            stmt = self._insert(UrlHistory).values(rows).on_conflict_do_nothing()
            self._write(lambda s: s.execute(stmt))

    def save_crawl_batch(self, run_id: int, rows: list[dict[str, Any]]) -> int:
        """Store a batch of crawled pages as the store pipeline made them: the pages, their
        duplicate records, the documents of accepted pages (``_document``: the cleaned text
        and meta, else the page text) and the URL-structure history (accepted pages and
        relevant duplicates, ``_history``). Returns the number of documents written. A URL
        twice in one batch (downloaded again while the fetch-once set was unreachable) is
        stored once, as its last row: one upsert may not touch a row twice.

        One transaction: a page and its document are written together, so another worker's
        :meth:`reject_pages` of the page (a document it replaced) comes before both or after
        both (its UPDATE waits for the page row's lock; two writes in a row let it fall
        between them). A row not accepted deletes the page's document: a page written twice
        (a slow worker's copy and the copy of the worker that reclaimed it) keeps the last
        write's decision, never a document of a page not accepted."""
        return self._write(lambda _session: self._save_crawl_batch(run_id, rows))

    def _save_crawl_batch(self, run_id: int, rows: list[dict[str, Any]]) -> int:
        rows = list({r["url"]: r for r in rows}.values())
        ids = self.save_pages(run_id, rows)
        self.add_duplicates(
            run_id,
            [{"url": r["url"], **{k: r["duplicate"][k] for k in ("of", "method", "score")}}
             for r in rows if r.get("duplicate")],
        )  # fmt: skip
        docs = []
        for r in rows:
            if r.get("accepted"):
                text, meta = r.get("_document") or (r.get("text"), {})
                if text:
                    docs.append({"page_id": ids[r["url"]], "text": text, "meta": meta})
        self.save_documents(run_id, docs)
        # the last write of a page decides: a page written not accepted has no document, even
        # one an earlier write left (a page fetched again by `topicrawl recrawl` that left the
        # corpus; a slow worker's copy written before the reclaiming worker's duplicate)
        self.delete_documents(run_id, [ids[r["url"]] for r in rows if not r.get("accepted")])
        self.add_history(run_id, [r["url"] for r in rows if r.get("accepted") or r.get("_history")])
        return len(docs)

    def add_snapshot(self, run_id: int, worker: str, stats: dict[str, Any]) -> None:
        """Record a running crawl's stats (the console's live figures)."""
        row = {"run_id": run_id, "worker": worker, "at": datetime.now(UTC),
               "stats": jsonable(stats)}  # fmt: skip
        self._write(lambda s: s.execute(self._insert(RunSnapshot).values(row)))

    def topic_labels(self, topic_name: str) -> list[tuple[str, str, bool]]:
        """A topic's labels from the console, as ``(scope, target, label)`` rows."""
        query = select(Label.scope, Label.target, Label.label).where(Label.topic_name == topic_name)
        return self._read(lambda s: [(r.scope, r.target, bool(r.label)) for r in s.execute(query)])

    def iter_history(self, run_id: int) -> Iterator[str]:
        query = select(UrlHistory.url).where(UrlHistory.run_id == run_id).order_by(UrlHistory.id)
        yield from self._read(lambda s: s.scalars(query).all())


def sqlite_schema_statements(path: Path = SQLITE_SCHEMA) -> list[str]:
    """The statements of :data:`SQLITE_SCHEMA` (each ends with a line holding ``;``), after
    its ``-- revision:`` line, which must be :data:`SCHEMA_HEAD`."""
    text_ = path.read_text(encoding="utf-8")
    head, _, body = text_.partition("\n")
    if head != f"-- revision: {SCHEMA_HEAD}":
        raise StorageError(f"{path} is of another revision ({head!r}, not {SCHEMA_HEAD}): "
                           "write it again with models.store.write_sqlite_schema()")  # fmt: skip
    return [s.strip() for s in body.split("\n;\n") if s.strip()]


def write_sqlite_schema(path: Path = SQLITE_SCHEMA) -> list[str]:
    """Write :data:`SQLITE_SCHEMA`: Alembic's migrations run on a new in-memory SQLite
    database to the head, then its ``sqlite_master`` statements in the order they were made
    (SQLite's implicit indexes of UNIQUE constraints have none: the tables make them). Run
    after adding a migration (``python -c 'import models.store as s;
    s.write_sqlite_schema()'``); returns the statements."""
    from alembic import command
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    head = ScriptDirectory.from_config(cfg).get_current_head()
    if head != SCHEMA_HEAD:
        raise StorageError(f"SCHEMA_HEAD is {SCHEMA_HEAD}, Alembic's head {head}: set it first")
    engine = create_engine("sqlite://")
    try:
        with engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "head")
            rows = conn.execute(text("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL "
                                     "ORDER BY rowid")).scalars().all()  # fmt: skip
    finally:
        engine.dispose()
    path.write_text(f"-- revision: {SCHEMA_HEAD}\n" + "".join(f"{s}\n;\n" for s in rows),
                    encoding="utf-8")  # fmt: skip
    return list(rows)


def jsonable(value: Any) -> Any:
    """Make stats and score breakdowns JSON-safe (datetimes and other objects as strings)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [jsonable(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)
