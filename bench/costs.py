"""Costs per unit of the scale-out's stores, measured: bytes per URL of the seen sets in Redis
(scrapy-redis' fingerprint set vs the Bloom filter of crawler.seen, with its false-positive
rate), bytes per queued request in the Redis frontier, bytes per document in each dedup
index backend, and bytes per page and per document in PostgreSQL. The figures of
docs/scale.md.

    python bench/costs.py [--urls 1000000] [--docs 1500] [--web bench/out/web_large]

Seen sets: ``--urls`` SHA-1 fingerprints (40 hex characters, scrapy-redis' format) are added
to a Redis set and to a Bloom filter sized for 10 times as many (what a crawl would reserve),
measured with ``MEMORY USAGE`` at 1/10 and all of them; the set's growth between the two
extrapolates to 10 million. Then a filter sized for exactly ``--urls`` is filled and probed
with as many fingerprints never added: the measured false-positive rate.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import sys
import tempfile
import time
import tracemalloc
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.harvest import OUT, ensure_web  # noqa: E402

REDIS = os.environ.get("TOPICRAWL_TEST_REDIS", "redis://127.0.0.1:6379/0")
PG_ADMIN = os.environ.get("TOPICRAWL_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")


def fingerprints(start: int, n: int) -> list[str]:
    return [hashlib.sha1(f"https://site-{i % 997}.cn/a/{i}.html".encode()).hexdigest()
            for i in range(start, start + n)]  # fmt: skip


def usage(client, *keys: str) -> int:
    return sum(int(client.memory_usage(k, samples=0) or 0) for k in keys)


def seen_sets(client, prefix: str, n: int) -> dict:
    from crawler.seen import DEFAULT_ERROR_RATE, RedisBloomFilter

    out: dict = {}
    key = f"{prefix}:set"
    tenth = n // 10
    bloom10 = RedisBloomFilter(client, f"{prefix}:bloom10", capacity=10 * n,
                               error_rate=DEFAULT_ERROR_RATE)
    done = 0
    t_set = t_bloom = 0.0
    for upto in (tenth, n):
        for lo in range(done, upto, 20_000):
            chunk = fingerprints(lo, min(20_000, upto - lo))
            t0 = time.perf_counter()
            client.sadd(key, *chunk)
            t1 = time.perf_counter()
            bloom10.add_many(chunk)
            t2 = time.perf_counter()
            t_set, t_bloom = t_set + t1 - t0, t_bloom + t2 - t1
        done = upto
        out[f"set_bytes_{upto}"] = usage(client, key)
    out["bloom_10x_bytes"] = bloom10.memory_bytes()
    out["bloom_10x_k"] = bloom10.k
    a, b = out[f"set_bytes_{tenth}"], out[f"set_bytes_{n}"]
    slope = (b - a) / (n - tenth)
    out["set_bytes_per_url"] = b / n
    out["set_slope_bytes_per_url"] = slope
    out["set_bytes_10m_extrapolated"] = b + slope * (10_000_000 - n)
    out["set_us_per_add"] = 1e6 * t_set / n
    out["bloom_us_per_add"] = 1e6 * t_bloom / n
    client.delete(key)
    bloom10.clear()
    exact = RedisBloomFilter(client, f"{prefix}:bloom1x", capacity=n, error_rate=DEFAULT_ERROR_RATE)
    for lo in range(0, n, 20_000):
        exact.add_many(fingerprints(lo, min(20_000, n - lo)))
    false = 0
    for lo in range(0, n, 20_000):
        false += sum(exact.contains_many(fingerprints(50_000_000 + lo, min(20_000, n - lo))))
    out["bloom_full_bytes"] = exact.memory_bytes()
    out["bloom_full_fp_rate"] = false / n
    out["bloom_full_false_positives"] = false
    exact.clear()
    return out


def article_items(web: Path, truth: dict, limit: int) -> list[dict]:
    from sitegen.build import article_bodies
    from topicrawl.extract import decode_html, extract_page

    items = []
    for url, _page, body, header in article_bodies(web, truth):
        html, codec = decode_html(body, header)
        ex = extract_page(html, url)
        items.append({
            "url": url, "final_url": url, "host": url.split("/")[2], "status": 200,
            "fetched_at": dt.datetime.now(dt.UTC), "depth": 1, "parent_url": None,
            "anchor": None, "title": ex.title, "description": ex.description,
            "keywords": ex.keywords, "language": ex.language, "charset": codec,
            "published": ex.published, "html": html, "text": ex.text,
            "link_score": {"score": 0.5}, "relevance": 0.9, "accepted": True,
            "duplicate": None,
        })  # fmt: skip
        if len(items) >= limit:
            break
    return items


def dedup_backends(items: list[dict], client, prefix: str) -> dict:
    from dedup.pipeline import DedupPipeline

    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("memory", "sqlite", "redis"):
            backend = {"type": kind, "namespace": f"{prefix}:dedup"}
            if kind == "sqlite":
                backend["path"] = f"{tmp}/dedup.sqlite"
            if kind == "redis":
                backend["url"] = REDIS
            pipe = DedupPipeline(backend=backend)
            if kind == "memory":
                tracemalloc.start()
            pipe.open_spider(None)
            kept = 0
            for item in items:
                kept += pipe.process_item(dict(item)).get("duplicate") is None
            if kind == "memory":
                size, _ = tracemalloc.get_traced_memory()
                tracemalloc.stop()
            elif kind == "sqlite":
                pipe.close_spider(None)
                size = sum(p.stat().st_size for p in Path(tmp).glob("dedup.sqlite*"))
            else:
                keys = list(client.scan_iter(f"{prefix}:dedup*"))
                size = usage(client, *keys)
                client.delete(*keys)
            if kind != "sqlite":
                pipe.close_spider(None)
            out[kind] = {"bytes": size, "docs": kept, "bytes_per_doc": size / max(1, kept)}
    return out


def postgres(items: list[dict]) -> dict:
    import psycopg
    from scrapy.exceptions import DropItem

    from crawler.pipelines import StorePipeline

    name = f"topicrawl_costs_{os.getpid()}_{uuid.uuid4().hex[:4]}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = f"postgresql+psycopg://{PG_ADMIN.rsplit('/', 1)[0].removeprefix('postgresql://')}/{name}"
    sizes_sql = ("SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
                 "JOIN pg_namespace n ON n.oid = c.relnamespace "
                 "WHERE n.nspname = 'public' AND c.relkind = 'r'")  # fmt: skip
    try:
        from models.store import Store

        Store.from_url(url).close()
        with psycopg.connect(PG_ADMIN.rsplit("/", 1)[0] + f"/{name}", autocommit=True) as c:
            empty = c.execute(sizes_sql).fetchone()[0]

        class Spider:
            name = "topic"
            run_id = None
            topic = None
            crawler = None

        pipe = StorePipeline(url, batch_size=50, clean=True)
        pipe.open_spider(Spider())
        docs = 0
        for item in items:
            try:
                pipe.process_item(dict(item), Spider())
                docs += 1
            except DropItem:
                pass
        pipe.close_spider(Spider())
        with psycopg.connect(PG_ADMIN.rsplit("/", 1)[0] + f"/{name}", autocommit=True) as c:
            c.execute("VACUUM ANALYZE")
            full = c.execute(sizes_sql).fetchone()[0]
            pages = c.execute("SELECT count(*) FROM pages").fetchone()[0]
            ndocs = c.execute("SELECT count(*) FROM documents").fetchone()[0]
    finally:
        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    return {"pages": pages, "documents": ndocs, "bytes": int(full - empty),
            "bytes_per_page": int(full - empty) / max(1, pages)}


def main(argv: list[str] | None = None) -> int:
    import redis

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--urls", type=int, default=1_000_000)
    ap.add_argument("--docs", type=int, default=1500)
    ap.add_argument("--web", type=Path, default=OUT / "web_large")
    ap.add_argument("--skip", default="", help="comma list of seen,dedup,postgres to skip")
    args = ap.parse_args(argv)
    skip = set(filter(None, args.skip.split(",")))
    client = redis.Redis.from_url(REDIS)
    prefix = f"topicrawl_costs_{uuid.uuid4().hex[:8]}"
    result: dict = {"redis": client.info("server")["redis_version"]}
    try:
        if "seen" not in skip:
            result["seen"] = seen_sets(client, prefix, args.urls)
            print(json.dumps(result["seen"]), flush=True)
        if not {"dedup", "postgres"} <= skip:
            truth = ensure_web(args.web, 0, rebuild=False)
            items = article_items(args.web, truth, args.docs)
            if "dedup" not in skip:
                result["dedup"] = dedup_backends(items, client, prefix)
                print(json.dumps(result["dedup"]), flush=True)
            if "postgres" not in skip:
                result["postgres"] = postgres(items)
                print(json.dumps(result["postgres"]), flush=True)
    finally:
        keys = list(client.scan_iter(f"{prefix}*"))
        if keys:
            client.delete(*keys)
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
