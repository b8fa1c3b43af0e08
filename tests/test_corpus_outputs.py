"""Corpus-grade outputs (issue 15): the WARC capture read back with warcio, the exports read
back with pyarrow and datasets, all checked against the database, on a crawl of the local
test web; ``clean --from-warc`` and named dedup indexes across runs."""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
from pathlib import Path

import pytest
from conftest import delete_prefix, run_crawl
from sqlalchemy import text

from models.store import Store
from topicrawl.cli import main
from topicrawl.warc import WarcRef, captured_html, read_response

pytestmark = pytest.mark.slow
WARC_FILE_SIZE = 250_000


def ground_truth(web: Path) -> dict:
    return json.loads((web / "ground_truth.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def warc_crawl(proxy, small_web, politics_topic, tmp_path_factory):
    """A crawl of the small web with the default (calibrated) scorer and a WARC capture in
    small files (so that they rotate)."""
    root = tmp_path_factory.mktemp("warc_crawl")
    db = f"sqlite:///{root / 'crawl.db'}"
    warc = root / "warc"
    result = run_crawl(
        proxy, ground_truth(small_web)["seeds"]["portal"], politics_topic, db,
        settings={"TOPICRAWL_WARC_DIR": str(warc), "TOPICRAWL_WARC_MAX_SIZE": WARC_FILE_SIZE,
                  "TOPICRAWL_WARC_WORKER": "w7"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    store = Store.from_url(db)
    run = store.list_runs()[-1]
    return store, run, warc, db


def db_rows(store: Store, sql: str, **params) -> list:
    with store.engine.connect() as conn:
        return conn.execute(text(sql), params).all()


# -- WARC ----------------------------------------------------------------------------------
def test_every_fetch_is_in_the_warc_and_pages_point_at_their_record(warc_crawl):
    from warcio.archiveiterator import ArchiveIterator

    store, run, warc, _ = warc_crawl
    files = sorted(warc.glob("*.warc.gz"))
    assert len(files) >= 2, "small files rotate"
    for f in files:  # named PREFIX-TIMESTAMP-SERIAL-HOST-PID-WORKER.warc.gz
        assert f.name.startswith("topicrawl-") and f.name.endswith("-w7.warc.gz"), f.name
        assert f.stat().st_size < WARC_FILE_SIZE + 200_000
    responses: dict[str, list] = {}
    requests = {}
    for f in files:
        with f.open("rb") as fh:
            it = ArchiveIterator(fh)
            for record in it:
                assert record.rec_headers.protocol == "WARC/1.1"
                kind = record.rec_type
                if kind == "response":
                    rid = record.rec_headers.get_header("WARC-Record-ID")
                    uri = record.rec_headers.get_header("WARC-Target-URI")
                    responses.setdefault(uri, []).append((f.name, it.get_record_offset(), rid))
                elif kind == "request":
                    requests[record.rec_headers.get_header("WARC-Concurrent-To")] = (
                        record.http_headers.protocol
                    )
    # a request record for every response (its WARC-Concurrent-To)
    assert {rid for recs in responses.values() for _, _, rid in recs} == set(requests)
    assert any(u.endswith("/robots.txt") for u in responses), "robots.txt is captured too"
    stats = run.stats
    assert stats["topicrawl/warc/responses"] == sum(len(v) for v in responses.values())
    pages = list(store.iter_pages(run.id))
    assert len(pages) >= 50
    for page in pages:
        assert page.warc_file and page.warc_offset is not None and page.warc_length, page.url
        assert (page.warc_file, page.warc_offset) in {
            (f, o) for f, o, _ in responses[page.final_url]
        }, page.url
        raw = (warc / page.warc_file).open("rb")
        raw.seek(page.warc_offset)
        member = raw.read(page.warc_length)
        raw.close()
        assert member[:2] == b"\x1f\x8b"  # one gzip member per record
        assert gzip.decompress(member).startswith(b"WARC/1.1\r\n")
        captured = read_response(
            warc, WarcRef(page.warc_file, page.warc_offset, page.warc_length)
        )
        assert captured.url == page.final_url and captured.status == page.status
        html, codec = captured_html(captured)
        assert html == page.html and codec == page.charset, page.url


def test_redirected_pages_point_at_the_final_response(proxy, small_web, politics_topic, tmp_path):
    from warcio.archiveiterator import ArchiveIterator

    truth = ground_truth(small_web)
    redirects = {u: m for u, m in truth["pages"].items() if m["kind"] == "redirect"}
    seeds = sorted(redirects)[:3]
    db, warc = f"sqlite:///{tmp_path / 'r.db'}", tmp_path / "warc"
    result = run_crawl(proxy, seeds, politics_topic, db, args={"max_depth": 0},
                       settings={"TOPICRAWL_WARC_DIR": str(warc),
                                 "TOPICRAWL_LINK_SCORER": "relevance.linkscore.KeywordLinkScorer"})  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    store = Store.from_url(db)
    pages = list(store.iter_pages(store.list_runs()[-1].id))
    assert {p.url for p in pages} == set(seeds)
    captured = {}
    for f in warc.glob("*.warc.gz"):
        with f.open("rb") as fh:
            for record in ArchiveIterator(fh):
                if record.rec_type == "response":
                    uri = record.rec_headers.get_header("WARC-Target-URI")
                    captured[uri] = record.http_headers.get_statuscode()
    for page in pages:  # the redirect and its target are both captured
        assert captured[page.url] == str(redirects[page.url]["status"])
        assert captured[page.final_url] == "200"
        response = read_response(warc, WarcRef(page.warc_file, page.warc_offset, 0))
        assert response.url == page.final_url == redirects[page.url]["location"]
        assert response.status == 200


def test_clean_from_warc_rebuilds_the_documents_from_the_capture_alone(warc_crawl, tmp_path):
    store, run, warc, db = warc_crawl
    path = Path(db.removeprefix("sqlite:///"))
    copy = tmp_path / "copy.db"
    shutil.copy(path, copy)
    url = f"sqlite:///{copy}"
    assert main(["clean", "--run", str(run.id), "--db", url, "--no-progress"]) == 0
    other = Store.from_url(url)
    from_db = {d.page_id: d.text for d in other.iter_documents(run.id)}
    assert len(from_db) >= 20
    with other.engine.begin() as conn:  # the database loses every page source and text
        conn.execute(text("UPDATE pages SET html_z = NULL, text = NULL"))
        conn.execute(text("DELETE FROM documents"))
    assert other.count_documents(run.id) == 0
    args = ["clean", "--run", str(run.id), "--from-warc", str(warc), "--db", url, "--no-progress"]
    assert main(args) == 0
    from_warc = {d.page_id: d.text for d in other.iter_documents(run.id)}
    assert from_warc == from_db

    # no run: a new run of every HTML page of the capture
    assert main(["clean", "--from-warc", str(warc), "--db", url, "--no-progress"]) == 0
    new = other.list_runs()[-1]
    assert new.id != run.id and new.topic_name == f"warc:{warc.name}"
    imported = {p.url: p for p in other.iter_pages(new.id)}
    crawled = [p for p in store.iter_pages(run.id) if p.status == 200]
    assert {p.final_url for p in crawled} <= set(imported)
    docs = {d.url: d.text for d in other.iter_documents(new.id)}
    originals = {d.url: d.text for d in store.iter_documents(run.id)}
    final = {p.url: p.final_url for p in crawled}
    assert len(docs) >= len(originals)
    assert sum(docs.get(final[u]) == t for u, t in originals.items()) >= 0.9 * len(originals)
    other.close()


# -- exports -------------------------------------------------------------------------------
def expected(store: Store, run_id: int) -> dict[int, dict]:
    """The export fields of each document, straight from the database."""
    run = store.get_run(run_id)
    version = hashlib.sha256(run.topic_text.encode("utf-8")).hexdigest()[:16]
    rows = db_rows(
        store,
        "SELECT d.id, d.page_id, d.text, p.url, p.final_url, p.title, p.published, p.host, "
        "p.language, p.relevance, p.relevance_parts, p.link_score, p.warc_file, "
        "p.warc_offset, p.warc_length FROM documents d JOIN pages p ON p.id = d.page_id "
        "WHERE d.run_id = :run",
        run=run_id,
    )
    dups = db_rows(
        store,
        "SELECT d.original_page_id, p.url, d.original_url, d.method, d.score FROM duplicates d "
        "JOIN pages p ON p.id = d.page_id WHERE d.run_id = :run",
        run=run_id,
    )
    out = {}
    for r in rows:
        parts = r.relevance_parts if isinstance(r.relevance_parts, dict) else json.loads(
            r.relevance_parts or "null") or {}  # fmt: skip
        link = r.link_score if isinstance(r.link_score, dict) else json.loads(r.link_score)
        out[r.id] = {
            "url": r.url, "final_url": r.final_url, "title": r.title, "date": r.published,
            "host": r.host, "language": r.language, "text": r.text, "relevance": r.relevance,
            "relevance_parts": parts, "link_score": link.get("score"),
            "topic_name": run.topic_name, "topic_version": version,
            "warc_file": r.warc_file, "warc_offset": r.warc_offset, "warc_length": r.warc_length,
            "duplicates": sorted((u, of, m, round(s, 9)) for pid, u, of, m, s in dups
                                 if pid == r.page_id),
        }  # fmt: skip
    return out


def normalized(record: dict, arrow: bool) -> dict:
    out = {k: record[k] for k in (
        "url", "final_url", "title", "date", "host", "language", "text", "relevance",
        "link_score", "topic_name", "topic_version", "warc_file", "warc_offset", "warc_length")}  # fmt: skip
    parts = record["relevance_parts"]
    out["relevance_parts"] = {p["name"]: p["score"] for p in parts} if arrow else parts
    out["duplicates"] = sorted(
        (d["url"], d["of"], d["method"], round(d["score"], 9)) for d in record["duplicates"]
    )
    return out


def test_parquet_and_jsonl_exports_carry_every_field_of_the_database(warc_crawl, tmp_path):
    import pyarrow.parquet as pq

    store, run, _, db = warc_crawl
    want = expected(store, run.id)
    assert len(want) >= 20
    assert any(w["duplicates"] for w in want.values()), "the small web has reprints"
    assert all(w["relevance_parts"].get("head") is not None for w in want.values())
    assert all(w["warc_file"] for w in want.values())
    out = tmp_path / "corpus.parquet"
    assert main(["export", "--run", str(run.id), "--format", "parquet", "--out", str(out),
                 "--db", db, "--no-progress"]) == 0  # fmt: skip
    table = pq.read_table(out)
    assert table.num_rows == len(want)
    assert table.schema.field("relevance_parts").type.value_type.num_fields == 2
    got = {r["id"]: normalized(r, arrow=True) for r in table.to_pylist()}
    for doc_id, fields in want.items():
        assert got[doc_id] == fields, doc_id
    link = json.loads(table.to_pylist()[0]["link_score_detail"])
    assert "score" in link or "seed" in link

    jl = tmp_path / "corpus.jsonl"
    assert main(["export", "--run", str(run.id), "--out", str(jl), "--db", db,
                 "--no-progress"]) == 0  # fmt: skip
    records = [json.loads(line) for line in jl.read_text(encoding="utf-8").splitlines()]
    assert {r["id"]: normalized(r, arrow=False) for r in records} == got


def test_a_duplicate_cluster_lists_every_copy_that_was_dropped(warc_crawl, tmp_path):
    import pyarrow.parquet as pq

    store, run, _, db = warc_crawl
    out = tmp_path / "c.parquet"
    main(["export", "--run", str(run.id), "--format", "parquet", "--out", str(out), "--db", db,
          "--no-progress"])  # fmt: skip
    listed = {d["url"] for r in pq.read_table(out).to_pylist() for d in r["duplicates"]}
    of_documents = db_rows(
        store,
        "SELECT p.url FROM duplicates d JOIN pages p ON p.id = d.page_id "
        "JOIN documents doc ON doc.page_id = d.original_page_id WHERE d.run_id = :run",
        run=run.id,
    )
    assert listed == {u for (u,) in of_documents} and listed


def test_export_filters_match_the_database(warc_crawl, tmp_path):
    import pyarrow.parquet as pq

    store, run, _, db = warc_crawl
    want = expected(store, run.id)
    rel = sorted(w["relevance"] for w in want.values())[len(want) // 2]
    host = sorted({w["host"] for w in want.values()})[0]
    dates = sorted(w["date"] for w in want.values() if w["date"])
    since = dates[len(dates) // 2]

    def export(*extra: str) -> set[str]:
        out = tmp_path / "f.parquet"
        args = ["export", "--run", str(run.id), "--format", "parquet", "--out", str(out),
                "--db", db, "--no-progress", *extra]  # fmt: skip
        assert main(args) == 0
        return {r["url"] for r in pq.read_table(out).to_pylist()}

    assert export("--min-relevance", str(rel)) == {
        w["url"] for w in want.values() if w["relevance"] >= rel
    }
    assert export("--host", host) == {w["url"] for w in want.values() if w["host"] == host}
    assert export("--since", since) == {
        w["url"] for w in want.values() if w["date"] and w["date"] >= since
    }
    assert export("--since", since, "--host", host) == {
        w["url"] for w in want.values() if w["date"] and w["date"] >= since and w["host"] == host
    }


def test_hf_dataset_with_splits_and_card(warc_crawl, tmp_path):
    import datasets
    import pyarrow.parquet as pq

    store, run, _, db = warc_crawl
    want = expected(store, run.id)
    out = tmp_path / "hf"
    args = ["export", "--run", str(run.id), "--format", "hf", "--out", str(out), "--db", db,
            "--split", "0.3", "--split-by", "hash", "--no-progress"]  # fmt: skip
    assert main(args) == 0
    ds = datasets.load_from_disk(str(out))
    assert set(ds) == {"train", "validation"}
    assert ds["train"].num_rows and ds["validation"].num_rows
    rows = [r for split in ("train", "validation") for r in ds[split]]
    got = {r["id"]: normalized(r, arrow=True) for r in rows}
    assert got == want
    card = (out / "README.md").read_text(encoding="utf-8")
    assert card.startswith("---\n") and "num_examples: " in card and run.topic_name in card

    # by host: no host in both splits; parquet splits hold the same documents
    pq_dir = tmp_path / "splits"
    args = ["export", "--run", str(run.id), "--format", "parquet", "--out", str(pq_dir),
            "--db", db, "--split", "0.5", "--split-by", "host", "--no-progress"]  # fmt: skip
    assert main(args) == 0
    train = pq.read_table(pq_dir / "train.parquet").to_pylist()
    valid = pq.read_table(pq_dir / "validation.parquet").to_pylist()
    assert len(train) + len(valid) == len(want)
    assert not {r["host"] for r in train} & {r["host"] for r in valid}


def test_export_refuses_a_bad_date_and_writes_nothing(warc_crawl, tmp_path):
    _, run, _, db = warc_crawl
    out = tmp_path / "x.parquet"
    args = ["export", "--run", str(run.id), "--format", "parquet", "--out", str(out), "--db", db,
            "--since", "yesterday"]  # fmt: skip
    assert main(args) != 0
    assert not out.exists() and not list(tmp_path.iterdir())


# -- dedup against an existing corpus ------------------------------------------------------
def test_a_named_index_of_a_run_drops_what_the_corpus_holds(
    warc_crawl, proxy, small_web, politics_topic, tmp_path
):
    store, run, _, db = warc_crawl
    backend = json.dumps({"type": "sqlite", "path": str(tmp_path / "indexes.sqlite")})
    accepted = {p.url for p in store.iter_pages(run.id, accepted_only=True)}
    args = ["dedup", "index", "--name", "corpus", "--from-run", str(run.id), "--db", db,
            "--backend", backend, "--no-progress"]  # fmt: skip
    assert main(args) == 0
    assert main(args) == 0  # idempotent
    from dedup.corpusindex import CorpusIndex

    index = CorpusIndex.open("corpus", json.loads(backend))
    assert len(index) == len(accepted)
    index.close()

    db2 = f"sqlite:///{tmp_path / 'again.db'}"
    result = run_crawl(
        proxy, ground_truth(small_web)["seeds"]["portal"], politics_topic, db2,
        settings={"TOPICRAWL_DEDUP_INDEX": "corpus", "TOPICRAWL_DEDUP_INDEX_BACKEND": backend,
                  "TOPICRAWL_LINK_SCORER": "relevance.linkscore.KeywordLinkScorer"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    again = Store.from_url(db2)
    run2 = again.list_runs()[-1]
    assert again.count_documents(run2.id) == 0, "the corpus already holds every document"
    dups = db_rows(again, "SELECT p.url, d.original_url, d.method, d.original_page_id "
                   "FROM duplicates d JOIN pages p ON p.id = d.page_id")  # fmt: skip
    corpus = [d for d in dups if d.method.startswith("corpus:")]
    assert {d.url for d in corpus} >= accepted & {p.url for p in again.iter_pages(run2.id)}
    assert all(d.original_url in accepted for d in corpus)
    assert all(d.original_page_id is None for d in corpus if d.original_url == d.url)
    stats = run2.stats
    assert stats["topicrawl/dedup/dropped/corpus:exact"] >= 0.8 * len(accepted)


def test_a_named_index_from_an_exported_jsonl(warc_crawl, proxy, small_web, politics_topic, tmp_path):
    store, run, _, db = warc_crawl
    corpus = tmp_path / "corpus.jsonl"
    assert main(["export", "--run", str(run.id), "--out", str(corpus), "--db", db,
                 "--no-progress"]) == 0  # fmt: skip
    backend = json.dumps({"type": "sqlite", "path": str(tmp_path / "indexes.sqlite")})
    args = ["dedup", "index", "--name", "exported", "--from-jsonl", str(corpus),
            "--backend", backend, "--no-progress"]  # fmt: skip
    assert main(args) == 0
    db2 = f"sqlite:///{tmp_path / 'again.db'}"
    result = run_crawl(
        proxy, ground_truth(small_web)["seeds"]["portal"], politics_topic, db2,
        settings={"TOPICRAWL_DEDUP_INDEX": "exported", "TOPICRAWL_DEDUP_INDEX_BACKEND": backend,
                  "TOPICRAWL_LINK_SCORER": "relevance.linkscore.KeywordLinkScorer"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    again = Store.from_url(db2)
    run2 = again.list_runs()[-1]
    # the exported texts are the cleaned ones: near-duplicates of the crawled main texts
    n = store.count_documents(run.id)
    assert again.count_documents(run2.id) <= 0.05 * n
    assert run2.stats.get("topicrawl/dedup/dropped/corpus:spotsigs", 0) > 0


def test_an_unknown_index_name_fails_the_crawl_with_the_command_to_build_it(
    proxy, small_web, politics_topic, tmp_path
):
    backend = json.dumps({"type": "sqlite", "path": str(tmp_path / "none.sqlite")})
    result = run_crawl(
        proxy, ground_truth(small_web)["seeds"]["portal"], politics_topic,
        f"sqlite:///{tmp_path / 'x.db'}", args={"max_pages": 5},
        settings={"TOPICRAWL_DEDUP_INDEX": "missing", "TOPICRAWL_DEDUP_INDEX_BACKEND": backend},
    )  # fmt: skip
    assert "topicrawl dedup index --name missing" in result.stderr


@pytest.mark.redis
def test_each_worker_of_a_scaleout_crawl_writes_its_own_warc_files(
    small_web, politics_topic, redis_url, tmp_path
):
    import subprocess
    import time
    import uuid

    import redis
    from conftest import ROOT, crawl_command

    from sitegen.server import ServerProcess

    seeds = ground_truth(small_web)["seeds"]["portal"]
    prefix = f"topicrawl_test_{uuid.uuid4().hex[:8]}"
    db, warc = f"sqlite:///{tmp_path / 'shared.db'}", tmp_path / "warc"
    backend = json.dumps({"type": "redis", "url": redis_url, "namespace": f"{prefix}:dedup"})
    settings = {"TOPICRAWL_LINK_SCORER": "relevance.linkscore.KeywordLinkScorer",
                "TOPICRAWL_DEDUP_BACKEND": backend, "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
                "TOPICRAWL_WARC_DIR": str(warc)}  # fmt: skip
    slow = ServerProcess(small_web, latency_ms=100)
    try:
        procs = []
        for worker in range(2):
            cmd, env = crawl_command(slow.url, seeds, politics_topic, db, args={"run_id": 5},
                                     settings=settings)  # fmt: skip
            env.update(TOPICRAWL_REDIS_URL=redis_url, TOPICRAWL_REDIS_PREFIX=prefix,
                       TOPICRAWL_WORKER_ID=f"worker{worker}")  # fmt: skip
            procs.append(subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL))  # fmt: skip
            time.sleep(3 if worker == 0 else 0)  # the second joins a running crawl
        for proc in procs:
            assert proc.wait(timeout=300) == 0
    finally:
        slow.stop()
        client = redis.Redis.from_url(redis_url)
        delete_prefix(client, prefix)
    names = [p.name for p in warc.glob("*.warc.gz")]
    writers = {n.rsplit("-", 2)[-2] + "-" + n.rsplit("-", 1)[-1] for n in names}
    assert {w.split("-", 1)[1] for w in writers} == {"worker0.warc.gz", "worker1.warc.gz"}
    store = Store.from_url(db)
    pages = list(store.iter_pages(5))
    used = {p.warc_file for p in pages}
    assert any("worker0" in f for f in used) and any("worker1" in f for f in used)
    for page in pages:
        captured = read_response(warc, WarcRef(page.warc_file, page.warc_offset, 0))
        assert captured.url == page.final_url
