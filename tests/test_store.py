"""Storage: upserts, streaming, and no page lost when the database stays down."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from scrapy.exceptions import DropItem
from sqlalchemy import create_engine

from crawler.items import PageItem
from crawler.pipelines import StorePipeline
from models.store import Store
from topicrawl.cli import main
from topicrawl.errors import StorageError


def page(url: str, accepted: bool = True, **extra) -> PageItem:
    fields = dict(
        url=url, final_url=url, host="news.example.cn", status=200, depth=1,
        fetched_at=datetime.now(UTC), title="标题", html="<p>正文</p>", text=f"正文 {url}",
        relevance=0.9 if accepted else 0.0, accepted=accepted, duplicate=None,
    )  # fmt: skip
    return PageItem(**{**fields, **extra})


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 's.db'}"
    return request.getfixturevalue("pg_url")


def test_pages_upsert_once_per_url_per_run(db_url):
    store = Store.from_url(db_url)
    run = store.start_run("t", "", {})
    ids = store.save_pages(run, [dict(page("http://a/1")), dict(page("http://a/2"))])
    again = store.save_pages(run, [dict(page("http://a/1", title="新标题"))])
    assert again["http://a/1"] == ids["http://a/1"]
    assert store.count_pages(run) == 2
    assert [p.title for p in store.iter_pages(run, batch_size=1)] == ["新标题", "标题"]
    other = store.start_run("t", "", {})
    store.save_pages(other, [dict(page("http://a/1"))])
    assert store.count_pages(other) == 1 and store.count_pages(run) == 2


def test_a_batch_of_new_and_judged_again_pages_keeps_the_stored_html(db_url):
    """One upsert of new pages and of pages sent again without their HTML (judged again at
    the crawl's end): each row's fields as sent, the HTML kept where none was sent."""
    store = Store.from_url(db_url)
    run = store.start_run("t", "", {})
    ids = store.save_pages(run, [dict(page(f"http://a/{i}", html=f"<p>{i}</p>")) for i in (1, 2)])
    rows = [dict(page("http://a/1", html=None, title="again", relevance=0.9)),
            dict(page("http://a/3", html="<p>3</p>")),
            dict(page("http://a/2", html="<p>2b</p>", accepted=False))]  # fmt: skip
    again = store.save_pages(run, rows)
    assert again["http://a/1"] == ids["http://a/1"] and again["http://a/2"] == ids["http://a/2"]
    stored = {p.url: p for p in store.iter_pages(run, batch_size=2)}
    assert {u: p.html for u, p in stored.items()} == {
        "http://a/1": "<p>1</p>", "http://a/2": "<p>2b</p>", "http://a/3": "<p>3</p>"}
    assert stored["http://a/1"].title == "again" and stored["http://a/1"].relevance == 0.9
    assert stored["http://a/2"].accepted is False and stored["http://a/3"].accepted is True


def test_a_page_written_again_not_accepted_loses_its_document(db_url):
    """The last write of a page decides (a slow worker's copy written first, the reclaiming
    worker's duplicate of it after): no document is left for a page not accepted."""
    store = Store.from_url(db_url)
    run = store.start_run("t", "", {})
    store.save_crawl_batch(run, [dict(page("http://a/1")), dict(page("http://a/2"))])
    assert store.count_documents(run) == 2
    dup = {"of": "http://a/2", "method": "spotsigs", "score": 0.9}
    store.save_crawl_batch(run, [dict(page("http://a/1", accepted=False, duplicate=dup))])
    assert store.count_pages(run, accepted_only=True) == store.count_documents(run) == 1
    assert [d.url for d in store.iter_documents(run)] == ["http://a/2"]
    store.save_crawl_batch(run, [dict(page("http://a/1"))])  # and the other order
    assert store.count_pages(run, accepted_only=True) == store.count_documents(run) == 2


class FailingStore:
    """A store whose writes fail as when the database is down past the retries (its
    ``engine`` too, which the run's end is written through)."""

    def __init__(self, real: Store, dead_engine=None):
        self.real = real
        self.down = True
        self.dead_engine = dead_engine

    @property
    def engine(self):
        return self.dead_engine if self.down and self.dead_engine is not None else self.real.engine

    def __getattr__(self, name):
        attr = getattr(self.real, name)
        if name.startswith(("save_", "add_")) and self.down:

            def fail(*args, **kwargs):
                raise StorageError("database down")

            return fail
        return attr


class Stats:
    """The few calls of Scrapy's stats collector the store pipeline makes."""

    def __init__(self):
        self.values: dict = {}

    def get_value(self, key, default=None):
        return self.values.get(key, default)

    def set_value(self, key, value):
        self.values[key] = value

    def inc_value(self, key, count=1):
        self.values[key] = self.values.get(key, 0) + count

    def get_stats(self):
        return dict(self.values)


def test_outage_keeps_pages_then_spills_and_import_restores(tmp_path):
    db = f"sqlite:///{tmp_path / 'o.db'}"
    real = Store.from_url(db)
    pipe = StorePipeline(db, batch_size=2, spill_dir=str(tmp_path / "spill"), clean=False,
                         close_wait=0.5, stats=Stats())  # fmt: skip
    dead = create_engine(f"sqlite:///{tmp_path / 'no-such-dir' / 'x.db'}")  # cannot open
    pipe.store = FailingStore(real, dead)
    pipe.run_id = real.start_run("t", "", {})
    urls = [f"http://news.example.cn/{i}.html" for i in range(5)]
    for i, url in enumerate(urls):
        item = page(url, accepted=i != 4)
        if i == 4:
            with pytest.raises(DropItem):
                pipe.process_item(item)
        else:
            pipe.process_item(item)
    assert len(pipe.buffer) + pipe.writer.pending == 5, "refused batches wait in the writer"
    pipe.flush(final=True)
    pipe.spider_closed(object(), "finished")  # the run's end is refused too
    spilled = list((tmp_path / "spill").glob("*.jsonl"))
    lines = spilled[0].read_text().splitlines()
    assert len(spilled) == 1 and len(lines) == 6, "5 pages, then the run's end"
    assert real.count_pages(pipe.run_id) == 0
    assert real.get_run(pipe.run_id).finished_at is None
    for _ in range(2):  # importing twice stores nothing twice and keeps the marking
        assert main(["import-spill", str(spilled[0]), "--db", db]) == 0
        assert sorted(p.url for p in real.iter_pages(pipe.run_id)) == sorted(urls)
        assert real.count_documents(pipe.run_id) == 4
        run = real.get_run(pipe.run_id)
        assert run.finished_at is not None
        assert run.stats["finish_reason"] == "pages_spilled"
        assert run.stats["topicrawl/storage/spilled"] == 5
    ended = json.loads(lines[-1])["_run_end"]["finished_at"]
    assert run.finished_at.replace(tzinfo=UTC) == datetime.fromisoformat(ended)


def test_a_refused_end_alone_gets_a_file_of_its_own(tmp_path):
    db = f"sqlite:///{tmp_path / 'n.db'}"
    real = Store.from_url(db)
    failing = FailingStore(real, create_engine(f"sqlite:///{tmp_path / 'gone' / 'x.db'}"))
    failing.down = False
    pipe = StorePipeline(db, spill_dir=str(tmp_path / "spill"), clean=False, stats=Stats())
    pipe.store = failing
    pipe.run_id = real.start_run("t", "", {})
    pipe.process_item(page("http://news.example.cn/1.html"))
    pipe.flush(final=True)  # every page stored
    failing.down = True  # then the database goes away
    pipe.spider_closed(object(), "finished")
    (end,) = (tmp_path / "spill").glob("*-end.jsonl")
    assert main(["import-spill", str(end), "--db", db]) == 0
    run = real.get_run(pipe.run_id)
    assert run.finished_at is not None and run.stats["finish_reason"] == "finished"
    assert real.count_pages(pipe.run_id) == 1


def test_import_spill_keeps_a_later_end_and_appends_a_recrawl_once(tmp_path):
    from models.store import run_end_line

    db = f"sqlite:///{tmp_path / 'e.db'}"
    store = Store.from_url(db)
    run = store.start_run("t", "", {})
    early = datetime(2026, 1, 1, tzinfo=UTC)
    store.finish_run(run, {"finish_reason": "finished"}, finished_at=datetime(2026, 2, 1))
    old = tmp_path / "old.jsonl"
    old.write_text(run_end_line(run, {"finish_reason": "pages_spilled"}, early))
    assert main(["import-spill", str(old), "--db", db]) == 0
    assert store.get_run(run).stats == {"finish_reason": "finished"}  # the later end stays
    recrawl = tmp_path / "recrawl.jsonl"
    later = datetime(2026, 3, 1, tzinfo=UTC)
    recrawl.write_text(run_end_line(run, {"finish_reason": "pages_spilled"}, later, recrawl=True))
    for _ in range(2):
        assert main(["import-spill", str(recrawl), "--db", db]) == 0
    stats = store.get_run(run).stats
    assert stats["finish_reason"] == "finished"
    assert stats["recrawls"] == [{"finish_reason": "pages_spilled"}]


def test_outage_then_recovery_writes_everything_once(tmp_path):
    db = f"sqlite:///{tmp_path / 'r.db'}"
    real = Store.from_url(db)
    failing = FailingStore(real)
    pipe = StorePipeline(db, batch_size=2, spill_dir=str(tmp_path / "spill"), clean=False)
    pipe.store = failing
    pipe.run_id = real.start_run("t", "", {})
    for i in range(3):
        pipe.process_item(page(f"http://news.example.cn/{i}.html"))
    failing.down = False
    pipe.process_item(page("http://news.example.cn/3.html"))
    pipe.flush(final=True)
    assert real.count_pages(pipe.run_id) == 4
    assert not (tmp_path / "spill").exists()


def test_store_retries_until_the_database_answers(tmp_path, monkeypatch):
    from sqlalchemy.exc import OperationalError

    store = Store.from_url(f"sqlite:///{tmp_path / 'x.db'}", backoff=0.01)
    calls = {"n": 0}

    def flaky():
        calls["n"] += 1
        if calls["n"] < 3:
            raise OperationalError("select 1", {}, Exception("connection refused"))
        return "ok"

    assert store._retry(flaky) == "ok" and calls["n"] == 3
    store.retries = 1
    calls["n"] = -10
    with pytest.raises(StorageError, match="check that it is running"):
        store._retry(flaky)


def test_every_read_outlives_a_short_outage(tmp_path):
    """Reads are retried like writes: a connection lost at a crawl's start-up (the run just
    created, its labels read next) is a warning, not an error that ends the crawl."""
    from sqlalchemy import event
    from sqlalchemy.exc import OperationalError

    store = Store.from_url(f"sqlite:///{tmp_path / 'r.db'}", backoff=0.01)
    run = store.start_run("t", "", {})
    store.save_crawl_batch(
        run, [dict(page(f"http://a/{i}", parent_url="http://a/")) for i in range(3)]
    )
    down = {"queries": 0}

    @event.listens_for(store.engine, "before_cursor_execute")
    def cut(*_args):
        if down["queries"]:
            down["queries"] -= 1
            raise OperationalError("SELECT", {}, Exception("connection closed abnormally"))

    urls = ["http://a/0", "http://a/2"]
    reads = {
        "get_run": lambda: store.get_run(run).id,
        "list_runs": lambda: [r.id for r in store.list_runs()],
        "page_urls": lambda: store.page_urls(run),
        "page_ids": lambda: store.page_ids(run, urls),
        "complete_page_urls": lambda: store.complete_page_urls(run, urls),
        "count_pages": lambda: store.count_pages(run),
        "iter_pages": lambda: [p.url for p in store.iter_pages(run, batch_size=2)],
        "count_documents": lambda: store.count_documents(run),
        "iter_documents": lambda: [d.url for d in store.iter_documents(run, batch_size=2)],
        "count_duplicates": lambda: store.count_duplicates(run),
        "topic_labels": lambda: store.topic_labels("t"),
        "iter_history": lambda: list(store.iter_history(run)),
        "recrawl_targets": lambda: [t.url for t in store.recrawl_targets(run)],
    }
    for name, read in reads.items():
        expected = read()
        down["queries"] = 2
        assert read() == expected, name
        assert down["queries"] == 0, name
    assert len(reads["recrawl_targets"]()) == 3
    down["queries"] = 10**6  # a lasting outage: one clear error once the budget is spent
    store.retries = 2
    with pytest.raises(StorageError, match="unreachable"):
        store.topic_labels("t")


def test_relevant_duplicates_are_in_the_url_history(tmp_path):
    """The run's URL history (Algorithm 3's sample when the crawl resumes) takes accepted
    pages and relevant duplicates (a copy still shows where its host files the topic), not
    off-topic pages; only accepted pages are documents. (The running crawl's sample is fed
    by the spider: test_spider_units.)"""
    spider = type("Spider", (), {"name": "topic"})()
    db = f"sqlite:///{tmp_path / 'h.db'}"
    pipe = StorePipeline(db, batch_size=10, clean=False)
    pipe.open_spider(spider)
    dup = {"of": "http://news.example.cn/a.html", "method": "spotsigs", "score": 0.9}
    pipe.process_item(page("http://news.example.cn/a.html"), spider)
    for item in (
        page("http://news.example.cn/b.html", duplicate=dup),  # relevant copy
        page("http://news.example.cn/c.html", accepted=False, duplicate=dup),  # off-topic copy
        page("http://news.example.cn/d.html", accepted=False),
    ):
        with pytest.raises(DropItem):
            pipe.process_item(item, spider)
    pipe.close_spider(spider)
    store = Store.from_url(db, migrate=False)
    expected = ["http://news.example.cn/a.html", "http://news.example.cn/b.html"]
    assert list(store.iter_history(pipe.run_id)) == expected
    assert store.count_documents(pipe.run_id) == 1


def _one_page_batches(tmp_path) -> tuple[StorePipeline, Any, Store, Stats]:
    """An open store pipeline writing each page as its own batch, its spider, a second
    handle on its database (another worker's) and its stats."""
    db = f"sqlite:///{tmp_path / 'one.db'}"
    stats = Stats()
    pipe = StorePipeline(db, batch_size=1, clean=False, stats=stats)
    spider = type("Spider", (), {"name": "topic"})()
    pipe.open_spider(spider)
    return pipe, spider, Store.from_url(db, migrate=False), stats


def test_a_replaced_page_not_stored_yet_is_taken_out_once_stored(tmp_path, caplog):
    """Scale-out: a worker replaces a document whose page another worker has not written
    yet. The reject rides on the next batches until the page is there; one still missing at
    the close is counted and named in a warning."""
    pipe, spider, store, stats = _one_page_batches(tmp_path)
    pipe.document_replaced("http://a/old", "http://a/new", "containment", 0.9)
    pipe.document_replaced("http://a/never", "http://a/new", "containment", 0.9)
    pipe.process_item(page("http://a/new"), spider)
    pipe.writer.wait_drained(5)
    assert store.count_pages(pipe.run_id) == 1  # nothing to reject yet
    store.save_crawl_batch(pipe.run_id, [dict(page("http://a/old"))])  # the other worker
    assert store.count_documents(pipe.run_id) == 2
    pipe.process_item(page("http://a/next"), spider)
    pipe.writer.wait_drained(5)
    assert [d.url for d in store.iter_documents(pipe.run_id)] == ["http://a/new", "http://a/next"]
    assert store.count_duplicates(pipe.run_id) == {"containment": 1}
    pipe.close_spider(spider)
    assert stats.values["topicrawl/dedup/replaced_unstored"] == 1
    assert "1 replaced documents were not taken out of the corpus" in caplog.text


def test_a_record_moved_before_its_page_is_stored_moves_once_stored(tmp_path, caplog):
    """Scale-out: a worker finds a better original for a page another worker dropped and has
    not written yet. The move rides on the next batches until the page's row (written with
    its record) is there; one still waiting at the close is counted and named."""
    from sqlalchemy import select

    from models.orm import Duplicate, Page

    pipe, spider, store, stats = _one_page_batches(tmp_path)
    store.save_crawl_batch(pipe.run_id, [dict(page("http://a/spliced"))])
    pipe.duplicate_reattributed("http://a/comment", "http://a/source", "http://a/spliced",
                                "containment", 0.95)  # fmt: skip
    pipe.duplicate_reattributed("http://a/never", "http://a/source", "http://a/spliced",
                                "containment", 0.95)  # fmt: skip
    pipe.process_item(page("http://a/source"), spider)
    pipe.writer.wait_drained(5)
    assert len(pipe.replaced_later) == 2  # neither dropped page is written yet
    dup = {"of": "http://a/spliced", "method": "containment", "score": 0.9}
    store.save_crawl_batch(pipe.run_id, [dict(page("http://a/comment", accepted=False,
                                                   duplicate=dup))])  # the other worker  # fmt: skip
    pipe.process_item(page("http://a/next"), spider)
    pipe.writer.wait_drained(5)
    rows = store._read(lambda s: s.execute(
        select(Page.url, Duplicate.original_url).join(Page, Page.id == Duplicate.page_id)
    ).all())  # fmt: skip
    assert [tuple(r) for r in rows] == [("http://a/comment", "http://a/source")]
    pipe.close_spider(spider)
    assert stats.values["topicrawl/dedup/reattributed_unstored"] == 1
    assert "topicrawl/dedup/replaced_unstored" not in stats.values
    assert "1 duplicate records keep the original they were dropped for" in caplog.text


def test_relative_sqlite_urls_are_made_absolute(tmp_path, monkeypatch):
    from models.store import absolute_db_url

    monkeypatch.chdir(tmp_path)
    assert absolute_db_url("sqlite:///topicrawl.db") == f"sqlite:///{tmp_path / 'topicrawl.db'}"
    assert absolute_db_url(f"sqlite:///{tmp_path}/x.db") == f"sqlite:///{tmp_path}/x.db"
    assert absolute_db_url("sqlite://") == "sqlite://"
    pg = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
    assert absolute_db_url(pg) == pg


def test_schema_head_is_alembics_head():
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    from models.store import MIGRATIONS, SCHEMA_HEAD

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    assert ScriptDirectory.from_config(cfg).get_current_head() == SCHEMA_HEAD


def test_a_current_database_opens_without_alembic_and_an_older_one_is_upgraded(tmp_path):
    import subprocess
    import sys

    from alembic import command
    from alembic.config import Config
    from sqlalchemy import inspect

    from models.store import MIGRATIONS

    url = f"sqlite:///{tmp_path / 'm.db'}"
    Store.from_url(url).close()
    probe = ("import sys; from models.store import Store; s = Store.from_url(sys.argv[1]); "
             "print(s.schema_current(), 'alembic' in sys.modules)")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", probe, url], capture_output=True, text=True,
                         check=True).stdout.split()  # fmt: skip
    assert out == ["True", "False"]
    # one revision back: the recrawl validators' columns go, and opening brings them back
    store = Store.from_url(url, migrate=False)
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    with store.engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "i15_warc")
    assert "etag" not in {c["name"] for c in inspect(store.engine).get_columns("pages")}
    assert not store.schema_current()
    store.close()
    store = Store.from_url(url)
    assert store.schema_current()
    assert "etag" in {c["name"] for c in inspect(store.engine).get_columns("pages")}
    store.close()


def _sqlite_schema(url: str) -> tuple[list[tuple], list[tuple]]:
    import sqlite3

    conn = sqlite3.connect(url.removeprefix("sqlite:///"))
    try:
        master = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master "
                              "ORDER BY type, name").fetchall()  # fmt: skip
        versions = conn.execute("SELECT version_num FROM alembic_version").fetchall()
    finally:
        conn.close()
    return master, versions


def test_a_new_sqlite_database_gets_the_migrations_schema_without_alembic(tmp_path):
    """The fast path's schema (models/schema_sqlite.sql) is the one Alembic's migrations
    make, table for table and index for index, stamped with Alembic's head; a fresh
    interpreter making a new database does not import Alembic, and the file is current."""
    import subprocess
    import sys

    from alembic import command
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    from models.store import MIGRATIONS, SCHEMA_HEAD, sqlite_schema_statements
    from models.store import write_sqlite_schema as write

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    assert ScriptDirectory.from_config(cfg).get_current_head() == SCHEMA_HEAD
    by_alembic = f"sqlite:///{tmp_path / 'alembic.db'}"
    store = Store.from_url(by_alembic, migrate=False)
    with store.engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")
    store.close()
    fast = f"sqlite:///{tmp_path / 'fast.db'}"
    probe = ("import sys; from models.store import Store; s = Store.from_url(sys.argv[1]); "
             "print(s.schema_current(), 'alembic' in sys.modules)")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", probe, fast], capture_output=True, text=True,
                         check=True).stdout.split()  # fmt: skip
    assert out == ["True", "False"]
    master, versions = _sqlite_schema(fast)
    assert (master, versions) == _sqlite_schema(by_alembic)
    assert versions == [(SCHEMA_HEAD,)]
    assert {r[1] for r in master if r[0] == "index"} >= {"ix_pages_run_broken", "ix_pages_host"}
    # the shipped file is what the migrations give now
    shipped = sqlite_schema_statements()
    assert write(tmp_path / "schema.sql") == shipped
    # and the database works: a run and a page
    store = Store.from_url(fast)
    run = store.start_run("t", "", {})
    assert store.save_pages(run, [{"url": "http://a.test/", "host": "a.test"}])
    assert store.count_pages(run) == 1
    store.close()


def test_the_fast_path_leaves_a_database_with_anything_in_it_to_alembic(tmp_path):
    """A SQLite file that holds a table of its own (not a topicrawl database) is left to
    Alembic, which adds the schema next to it; a stale schema file is refused."""
    import sqlite3

    import pytest

    from models.store import sqlite_schema_statements
    from topicrawl.errors import StorageError

    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE mine (x INTEGER)")
    conn.commit()
    conn.close()
    store = Store.from_url(f"sqlite:///{path}")
    assert store.schema_current()
    store.close()
    master, _ = _sqlite_schema(f"sqlite:///{path}")
    assert {"mine", "pages", "alembic_version"} <= {r[1] for r in master}
    stale = tmp_path / "stale.sql"
    stale.write_text("-- revision: 0001\nCREATE TABLE x (a INTEGER)\n;\n", encoding="utf-8")
    with pytest.raises(StorageError, match="another revision"):
        sqlite_schema_statements(stale)


def test_item_dict_is_itemadapters_asdict():
    """The store's row (crawler.pipelines.item_dict) equals ItemAdapter's asdict, nested
    values copied as it copies them (dicts, lists, tuples, sets, nested items), other
    values as they are."""
    from dataclasses import dataclass

    from itemadapter import ItemAdapter

    from crawler.pipelines import item_dict

    @dataclass
    class Inner:
        a: int
        b: list

    breakdown = {"score": 0.25, "follow": True, "reason": "above-threshold", "n": None}
    item = PageItem(url="http://a/1", status=200, fetched_at=datetime(2026, 1, 2, tzinfo=UTC),
                    html="<p>页</p>", link_score=breakdown, relevance=0.3, accepted=True,
                    relevance_parts={"info": 0.1, "nested": [1, (2, {"x": 3})], "s": {4}},
                    duplicate={"of": "u", "inner": Inner(1, [2, {"y": 3}]),
                               "item": PageItem(url="http://b/")}, warc_file=b"raw")  # fmt: skip
    expected = ItemAdapter(item).asdict()
    row = item_dict(item)
    assert row == expected
    assert [type(v) for v in row.values()] == [type(v) for v in expected.values()]
    assert row["duplicate"]["inner"] == {"a": 1, "b": [2, {"y": 3}]}
    assert row["duplicate"]["item"] == {"url": "http://b/"}
    assert isinstance(row["relevance_parts"]["nested"][1], tuple)
    # copies, as asdict's: the row does not change with the item
    assert row["link_score"] is not breakdown
    breakdown["score"] = 0.9
    assert row["link_score"]["score"] == 0.25


def test_reattribute_duplicates_moves_only_a_dropped_pages_current_record(db_url):
    """A dropped page's duplicate record names a better original (dedup's
    ``duplicate_reattributed``) only while it still names the one dedup had recorded and the
    page is out of the corpus; in order (moved twice, each from the one before), in one
    transaction; hostile values (a URL with quotes, a long method name, a score that is no
    number) neither break the write nor reach another row."""
    from sqlalchemy import select

    from models.orm import Duplicate, Page

    store = Store.from_url(db_url)
    run = store.start_run("t", "", {})
    urls = ["http://a/x", "http://a/y'); DROP TABLE pages;--", "http://a/s", "http://a/s2",
            "http://a/acc"]  # fmt: skip
    store.save_crawl_batch(run, [dict(page(u)) for u in urls])
    dup = {"of": "http://a/x", "method": "containment", "score": 0.9}
    store.save_crawl_batch(run, [dict(page("http://a/p", accepted=False, duplicate=dup)),
                                 dict(page("http://a/q", accepted=False, duplicate=dup))])  # fmt: skip
    store.add_duplicates(run, [{"url": "http://a/acc", "of": "http://a/x", "method": "spotsigs",
                                "score": 0.7}])  # a page in the corpus with a record  # fmt: skip
    moves = [
        {"url": "http://a/p", "of": "http://a/s", "was": "http://a/x", "method": "containment",
         "score": 0.97},
        {"url": "http://a/p", "of": urls[1], "was": "http://a/s", "method": "m" * 100,
         "score": 1.5},  # moved again, from the one before
        {"url": "http://a/q", "of": "http://a/s", "was": "http://a/other", "method": "x",
         "score": 0.9},  # the record names another original now: left alone
        {"url": "http://a/acc", "of": "http://a/s", "was": "http://a/x", "method": "x",
         "score": 0.9},  # back in the corpus: left alone
        {"url": "http://a/new", "of": "http://a/s", "was": "http://a/x", "method": "x",
         "score": 0.9},  # never recorded
        {"url": "http://a/q", "of": "http://a/s", "was": "http://a/x", "method": "x",
         "score": "nan?"},  # not a number
        {"url": "http://a/q", "of": "http://a/q", "was": "http://a/x", "method": "x",
         "score": 0.9},  # itself
    ]  # fmt: skip
    waiting: list[dict] = []
    assert store.reattribute_duplicates(run, moves, waiting=waiting) == 2
    assert waiting == [moves[4]]  # no row for its page yet: tried again later
    assert store.reattribute_duplicates(run, []) == 0
    rows = store._read(lambda s: {r[0]: tuple(r[1:]) for r in s.execute(
        select(Page.url, Duplicate.original_url, Duplicate.original_page_id, Duplicate.method,
               Duplicate.score).join(Page, Page.id == Duplicate.page_id))})  # fmt: skip
    ids = store._read(lambda s: {u: i for u, i in s.execute(select(Page.url, Page.id))})
    assert rows["http://a/p"] == (urls[1], ids[urls[1]], "m" * 32, 1.0)
    assert rows["http://a/q"][:3] == ("http://a/x", ids["http://a/x"], "containment")
    assert rows["http://a/acc"][0] == "http://a/x"
    assert store.count_pages(run) == 7 and store.count_documents(run) == 5


def test_revive_pages_takes_a_dropped_page_back_only_when_its_record_and_cleaning_allow(db_url):
    """A page dropped as the duplicate of a commentary page (dedup's ``document_revived``) is
    cleaned from its stored HTML and text and becomes a document, and the commentary page
    leaves the corpus as its duplicate; a page whose record names another page, or that the
    cleaner drops, is left as it is and the page it was dropped for stays in the corpus; a
    page not written yet waits."""
    from sqlalchemy import select

    from models.orm import Duplicate, Page

    store = Store.from_url(db_url)
    run = store.start_run("t", "", {})
    store.save_crawl_batch(run, [dict(page(u)) for u in ("http://a/c", "http://a/c2")])
    for url, of in (("http://a/s", "http://a/c"), ("http://a/t", "http://a/other"),
                    ("http://a/u", "http://a/c2")):  # fmt: skip
        dup = {"of": of, "method": "spotsigs", "score": 0.6}
        store.save_crawl_batch(run, [dict(page(url, accepted=False, duplicate=dup),
                                          html="<p>源文</p>", text=f"源文 {url}")])  # fmt: skip
    seen = []

    def clean(row):
        seen.append(row["url"])
        assert row["html"] == "<p>源文</p>"
        if row["url"] == "http://a/u":
            return None, {}, "too_short"
        return row["text"].upper(), {"title": row["title"]}, None

    waiting: list = []
    rows = [{"url": u, "of": of, "method": "containment", "score": 0.99, "revive": True}
            for u, of in (("http://a/s", "http://a/c"), ("http://a/t", "http://a/c"),
                          ("http://a/u", "http://a/c2"), ("http://a/new", "http://a/c"))]
    assert store.revive_pages(run, rows, clean, waiting=waiting) == ["http://a/s"]
    assert seen == ["http://a/s", "http://a/u"]  # t's record names another page
    assert [w["url"] for w in waiting] == ["http://a/new"]
    accepted = store._read(lambda s: dict(s.execute(select(Page.url, Page.accepted)).all()))
    assert accepted == {"http://a/c": False, "http://a/c2": True, "http://a/s": True,
                        "http://a/t": False, "http://a/u": False}  # fmt: skip
    records = store._read(lambda s: dict(s.execute(
        select(Page.url, Duplicate.original_url).join(Page, Page.id == Duplicate.page_id)).all()))
    assert records == {"http://a/c": "http://a/s", "http://a/t": "http://a/other",
                       "http://a/u": "http://a/c2"}  # fmt: skip
    docs = {d.url: d.text for d in store.iter_documents(run)}
    assert docs == {"http://a/c2": docs["http://a/c2"], "http://a/s": "源文 HTTP://A/S"}
    assert "http://a/s" in set(store.iter_history(run))
    # taken back once: a second write of the same record changes nothing
    assert store.revive_pages(run, rows[:1], clean) == []
