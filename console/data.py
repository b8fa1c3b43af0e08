"""The console's reads of a crawl database: run figures, timelines, hosts, page browsing.

Every query is bounded: aggregates run on the indexes of migration ``i14_console``
(``pages(run_id, accepted)``, ``pages(run_id, host, accepted)``, ``pages(run_id,
relevance)``), timelines are ``NTILE`` buckets computed in the database, and page lists are
keyset-paginated by id (``id > after ... LIMIT n``), so a 100,000-page run opens as fast as a
small one (``bench/dashboard.py``).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import and_, case, func, or_, select, text
from sqlalchemy.orm import Session, sessionmaker

from models.orm import CrawlRun, Document, Duplicate, Page, RunSnapshot
from models.store import Store, decompress
from relevance.learning.labels import section_of
from relevance.topic import parse_topic
from topicrawl.errors import TopicFileError

#: Page states of the browser's filter (a page has exactly one)
KINDS = ("accepted", "duplicate", "broken", "off_topic", "cleaned")
#: Buckets of the harvest / speed timeline of a run
TIMELINE_BUCKETS = 60
#: Hosts shown in a run's host table (busiest first)
HOST_ROWS = 100
#: Snapshots drawn in a run's live charts at most
SNAPSHOT_POINTS = 300
#: A broken page (HTTP error status, no main text), as SQL with literals so that the partial
#: index ix_pages_run_broken of migration i14_console (same predicate) serves it
BROKEN_SQL = text("(pages.status >= 400 OR pages.text IS NULL OR pages.text = '')")
#: Largest raw HTML and text shown on a page's detail (characters)
MAX_SHOWN = 200_000


def _dt(value: Any) -> datetime | None:
    """A timestamp read back from SQLite (a string) or PostgreSQL (a datetime), in UTC."""
    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value if value.tzinfo else value.replace(tzinfo=UTC)


@dataclass
class PageFilter:
    """The page browser's filters (all optional)."""

    kind: str | None = None
    host: str | None = None
    min_score: float | None = None
    max_score: float | None = None
    q: str | None = None


class ConsoleData:
    """Read-only queries of the console over one :class:`models.store.Store`."""

    def __init__(self, store: Store):
        self.store = store
        self._session = sessionmaker(store.engine, expire_on_commit=False)
        self._thresholds: dict[int, float] = {}

    def session(self) -> Session:
        return self._session()

    # -- runs ---------------------------------------------------------------------------------
    def get_run(self, run_id: int) -> CrawlRun | None:
        with self.session() as s:
            return s.get(CrawlRun, run_id)

    def page_threshold(self, run: CrawlRun) -> float:
        """The ``[page] threshold`` of the topic snapshot the run crawled with."""
        if run.id not in self._thresholds:
            try:
                thr = parse_topic(run.topic_text or "").page_threshold if run.topic_text else 0.25
            except TopicFileError:
                thr = 0.25
            self._thresholds[run.id] = thr
        return self._thresholds[run.id]

    def runs(self, *, limit: int = 200, run_id: int | None = None) -> list[dict[str, Any]]:
        """Every run (newest first, ``limit``; or only ``run_id``) with pages, accepted,
        harvest, duplicates."""
        with self.session() as s:
            query = select(CrawlRun).order_by(CrawlRun.id.desc()).limit(limit)
            if run_id is not None:
                query = query.where(CrawlRun.id == run_id)
            runs = list(s.scalars(query))
            ids = [r.id for r in runs]
            counts = {
                rid: (int(n), int(a or 0))
                for rid, n, a in s.execute(
                    select(Page.run_id, func.count(), func.sum(case((Page.accepted, 1), else_=0)))
                    .where(Page.run_id.in_(ids))
                    .group_by(Page.run_id)
                )
            }
            dups = dict(
                s.execute(
                    select(Duplicate.run_id, func.count())
                    .where(Duplicate.run_id.in_(ids))
                    .group_by(Duplicate.run_id)
                ).all()
            )
            last = dict(
                s.execute(
                    select(RunSnapshot.run_id, func.max(RunSnapshot.at))
                    .where(RunSnapshot.run_id.in_(ids))
                    .group_by(RunSnapshot.run_id)
                ).all()
            )
        out = []
        for r in runs:
            n, a = counts.get(r.id, (0, 0))
            out.append(
                {
                    "id": r.id,
                    "topic": r.topic_name,
                    "started_at": _dt(r.started_at),
                    "finished_at": _dt(r.finished_at),
                    "finish_reason": (r.stats or {}).get("finish_reason"),
                    "pages": n,
                    "accepted": a,
                    "harvest": round(a / n, 4) if n else 0.0,
                    "duplicates": int(dups.get(r.id, 0)),
                    "last_snapshot": _dt(last.get(r.id)),
                    "seeds": (r.settings or {}).get("seeds", []),
                }
            )
        return out

    # -- one run's figures --------------------------------------------------------------------
    def live_stats(self, run: CrawlRun) -> dict[str, Any]:
        """The crawl's counters: the final stats of a finished run, else the latest snapshot
        of each worker summed (a scale-out run has one per worker)."""
        if run.finished_at is not None and run.stats:
            return {"source": "final", "stats": dict(run.stats), "at": _dt(run.finished_at)}
        with self.session() as s:
            latest = select(func.max(RunSnapshot.id)).where(RunSnapshot.run_id == run.id)
            latest = latest.group_by(RunSnapshot.worker)
            snaps = list(s.scalars(select(RunSnapshot).where(RunSnapshot.id.in_(latest))))
        if not snaps:
            return {"source": "none", "stats": dict(run.stats or {}), "at": None}
        total: dict[str, Any] = {}
        for snap in snaps:
            for k, v in (snap.stats.get("stats") or {}).items():
                if isinstance(v, int | float) and not isinstance(v, bool):
                    total[k] = total.get(k, 0) + v
            total["topicrawl/progress/frontier"] = total.get(
                "topicrawl/progress/frontier", 0
            ) + int(snap.stats.get("frontier") or 0)
            total["topicrawl/progress/pages_per_min"] = total.get(
                "topicrawl/progress/pages_per_min", 0
            ) + float(snap.stats.get("pages_per_min") or 0)
        return {
            "source": "snapshot",
            "stats": total,
            "workers": len(snaps),
            "at": max(_dt(s.at) for s in snaps),
        }

    def figures(self, run: CrawlRun) -> dict[str, Any]:
        """Everything the live-run page draws: totals, harvest (window and overall),
        duplicates per method, links per reason, errors, the timeline and the host table."""
        rid = run.id
        with self.session() as s:
            n, a = s.execute(
                select(func.count(), func.sum(case((Page.accepted, 1), else_=0))).where(
                    Page.run_id == rid
                )
            ).one()
            n, a = int(n or 0), int(a or 0)
            dups = {
                m: int(c)
                for m, c in s.execute(
                    select(Duplicate.method, func.count())
                    .where(Duplicate.run_id == rid)
                    .group_by(Duplicate.method)
                )
            }
            last = list(
                s.scalars(
                    select(Page.accepted)
                    .where(Page.run_id == rid)
                    .order_by(Page.id.desc())
                    .limit(200)
                )
            )
            docs = int(
                s.scalar(select(func.count()).select_from(Document).where(Document.run_id == rid))
                or 0
            )
        live = self.live_stats(run)
        st = live["stats"]
        links = {
            k.removeprefix("topicrawl/links/"): v
            for k, v in st.items()
            if k.startswith("topicrawl/links/") and isinstance(v, int | float)
        }
        errors = {
            k.removeprefix("topicrawl/errors/"): v
            for k, v in st.items()
            if k.startswith("topicrawl/errors/")
        }
        for key in ("topicrawl/pages/broken", "topicrawl/pages/non_html"):
            if st.get(key):
                errors[key.rsplit("/", 1)[-1]] = st[key]
        for k, v in st.items():
            if k.startswith("downloader/response_status_count/") and int(k.rsplit("/", 1)[-1]) >= 400:
                errors[f"http {k.rsplit('/', 1)[-1]}"] = v
        return {
            "run": rid,
            "pages": n,
            "accepted": a,
            "documents": docs,
            "harvest": round(a / n, 4) if n else 0.0,
            "harvest_window": round(sum(map(bool, last)) / len(last), 4) if last else 0.0,
            "window": len(last),
            "duplicates": dups,
            "duplicates_total": sum(dups.values()),
            "links": links,
            "errors": errors,
            "frontier": st.get("topicrawl/progress/frontier"),
            "pages_per_min": st.get("topicrawl/progress/pages_per_min"),
            "stats_source": live["source"],
            "stats_at": live["at"].isoformat() if live["at"] else None,
            "timeline": self.timeline(rid),
            "snapshots": self.snapshots(rid),
            "hosts": self.hosts(rid),
        }

    def timeline(self, run_id: int, buckets: int = TIMELINE_BUCKETS) -> list[dict[str, Any]]:
        """The run's pages in fetch (id) order cut into ``buckets`` id ranges: per part the
        pages, the harvest of the part (a window) and overall up to its end, and pages per
        minute between the fetch times of its first and last page. The counts come from the
        covering index ``pages(run_id, accepted)``; the times from 2 rows per part."""
        with self.session() as s:
            lo, hi = s.execute(
                select(func.min(Page.id), func.max(Page.id)).where(Page.run_id == run_id)
            ).one()
            if lo is None:
                return []
            width = hi - lo + 1
            b = ((Page.id - lo) * buckets // width).label("b")
            rows = s.execute(
                select(b, func.count(), func.sum(case((Page.accepted, 1), else_=0)),
                       func.min(Page.id), func.max(Page.id))
                .where(Page.run_id == run_id)
                .group_by(b)
                .order_by(b)
            ).all()  # fmt: skip
            ends = {i for r in rows for i in (r[3], r[4])}
            times = dict(s.execute(select(Page.id, Page.fetched_at).where(Page.id.in_(ends))).all())
        out, seen, kept = [], 0, 0
        for _, count, acc, first, last in rows:
            count, acc = int(count), int(acc or 0)
            seen += count
            kept += acc
            t0, t1 = _dt(times.get(first)), _dt(times.get(last))
            minutes = (t1 - t0).total_seconds() / 60 if t0 and t1 else 0
            out.append(
                {
                    "pages": seen,
                    "harvest_window": round(acc / count, 4),
                    "harvest": round(kept / seen, 4),
                    "pages_per_min": round(count / minutes, 1) if minutes > 0 else None,
                    "at": t1.isoformat() if t1 else None,
                }
            )
        return out

    def snapshots(self, run_id: int, points: int = SNAPSHOT_POINTS) -> list[dict[str, Any]]:
        """The run's progress snapshots (at most ``points``, evenly thinned) as time series."""
        with self.session() as s:
            n = int(
                s.scalar(
                    select(func.count())
                    .select_from(RunSnapshot)
                    .where(RunSnapshot.run_id == run_id)
                )
                or 0
            )
            step = max(1, -(-n // points))
            query = select(RunSnapshot).where(RunSnapshot.run_id == run_id)
            if step > 1:
                query = query.where(RunSnapshot.id % step == 0)
            rows = list(s.scalars(query.order_by(RunSnapshot.id)))
        out = []
        for r in rows:
            st = r.stats or {}
            c = st.get("stats") or {}
            out.append(
                {
                    "at": _dt(r.at).isoformat(),
                    "worker": r.worker,
                    "fetched": st.get("fetched", 0),
                    "accepted": st.get("accepted", 0),
                    "pages_per_min": st.get("pages_per_min", 0),
                    "harvest": st.get("harvest", 0),
                    "harvest_window": st.get("harvest_window", 0),
                    "frontier": st.get("frontier", 0),
                    "links_followed": c.get("topicrawl/links/followed", 0),
                    "links_dropped": c.get("topicrawl/links/dropped", 0),
                    "duplicates": sum(
                        v for k, v in c.items() if k.startswith("topicrawl/dedup/dropped/")
                    ),
                }
            )
        return out

    def hosts(self, run_id: int, limit: int = HOST_ROWS) -> dict[str, Any]:
        """Per host: pages fetched, accepted, harvest, errors (stored pages with an HTTP
        error status or no main text: the partial index ``ix_pages_run_broken``), busiest
        hosts first."""
        with self.session() as s:
            total = int(
                s.scalar(
                    select(func.count(func.distinct(Page.host))).where(Page.run_id == run_id)
                )
                or 0
            )
            rows = s.execute(
                select(Page.host, func.count(), func.sum(case((Page.accepted, 1), else_=0)))
                .where(Page.run_id == run_id)
                .group_by(Page.host)
                .order_by(func.count().desc(), Page.host)
                .limit(limit)
            ).all()
            errors = dict(
                s.execute(
                    select(Page.host, func.count())
                    .where(Page.run_id == run_id, BROKEN_SQL)
                    .group_by(Page.host)
                ).all()
            )
        return {
            "total": total,
            "rows": [
                {"host": h, "fetched": int(n), "accepted": int(a or 0),
                 "harvest": round(int(a or 0) / int(n), 4), "errors": int(errors.get(h, 0))}
                for h, n, a in rows
            ],
        }  # fmt: skip

    # -- pages --------------------------------------------------------------------------------
    def _kind_expr(self, threshold: float):
        broken = or_(Page.status >= 400, Page.text.is_(None), Page.text == "")
        return case(
            (Page.accepted, "accepted"),
            (Duplicate.id.is_not(None), "duplicate"),
            (broken, "broken"),
            (or_(Page.relevance.is_(None), Page.relevance < threshold), "off_topic"),
            else_="cleaned",
        )

    def pages(
        self, run: CrawlRun, flt: PageFilter, *, after: int = 0, limit: int = 50
    ) -> dict[str, Any]:
        """One page of the run's pages in id order after ``after`` (keyset paging) that
        pass the filters; ``next`` is the ``after`` of the following page (None: last)."""
        thr = self.page_threshold(run)
        kind = self._kind_expr(thr).label("kind")
        query = (
            select(
                Page.id, Page.url, Page.host, Page.title, Page.status, Page.depth,
                Page.relevance, Page.accepted, kind, Duplicate.method, Duplicate.score,
            )  # fmt: skip
            .outerjoin(Duplicate, Duplicate.page_id == Page.id)
            .where(Page.run_id == run.id, Page.id > after)
        )
        if flt.kind:
            broken = or_(Page.status >= 400, Page.text.is_(None), Page.text == "")
            not_dup = Duplicate.id.is_(None)
            conds = {
                "accepted": Page.accepted.is_(True),
                "duplicate": and_(Page.accepted.is_(False), Duplicate.id.is_not(None)),
                "broken": and_(Page.accepted.is_(False), not_dup, broken),
                "off_topic": and_(
                    Page.accepted.is_(False), not_dup, ~broken,
                    or_(Page.relevance.is_(None), Page.relevance < thr),
                ),  # fmt: skip
                "cleaned": and_(Page.accepted.is_(False), not_dup, ~broken, Page.relevance >= thr),
            }
            query = query.where(conds[flt.kind])
        if flt.host:
            query = query.where(Page.host == flt.host)
        if flt.min_score is not None:
            query = query.where(Page.relevance >= flt.min_score)
        if flt.max_score is not None:
            query = query.where(Page.relevance <= flt.max_score)
        if flt.q:
            q = flt.q
            query = query.where(
                or_(
                    Page.url.contains(q, autoescape=True),
                    Page.title.contains(q, autoescape=True),
                    Page.text.contains(q, autoescape=True),
                )
            )
        query = query.order_by(Page.id).limit(limit + 1)
        with self.session() as s:
            rows = s.execute(query).all()
        more = len(rows) > limit
        rows = rows[:limit]
        items = [
            {"id": r.id, "url": r.url, "host": r.host, "title": r.title, "status": r.status,
             "depth": r.depth, "relevance": r.relevance, "accepted": bool(r.accepted),
             "kind": r.kind, "dup_method": r.method, "dup_score": r.score}
            for r in rows
        ]  # fmt: skip
        return {"items": items, "next": items[-1]["id"] if more and items else None}

    def page_detail(self, run: CrawlRun, page_id: int) -> dict[str, Any] | None:
        """A page with why it was accepted or dropped: its link score, its duplicate (and a
        side-by-side diff with the original), its cleaned text and its raw HTML."""
        with self.session() as s:
            page = s.scalar(select(Page).where(Page.id == page_id, Page.run_id == run.id))
            if page is None:
                return None
            dup = s.scalar(select(Duplicate).where(Duplicate.page_id == page_id))
            doc = s.scalar(select(Document).where(Document.page_id == page_id))
            original = None
            if dup is not None:
                oid = dup.original_page_id
                cond = Page.id == oid if oid else and_(
                    Page.run_id == run.id, Page.url == dup.original_url
                )
                original = s.scalar(select(Page).where(cond))
        thr = self.page_threshold(run)
        # the host-level prior ([page] host_prior) lowered this page's threshold
        host_thr = (page.relevance_parts or {}).get("host_threshold")
        if isinstance(host_thr, int | float) and host_thr < thr:
            thr = float(host_thr)
        rel = page.relevance
        text = page.text or ""
        if page.accepted:
            why = (
                f"accepted: relevance {rel or 0:.3f} ≥ page threshold {thr:.3f}, not a "
                f"duplicate, {len(doc.text) if doc else 0} characters after cleaning"
            )
            kind = "accepted"
        elif dup is not None:
            why = (
                f"dropped: duplicate of {dup.original_url} ({dup.method}, score "
                f"{dup.score:.3f})"
            )
            kind = "duplicate"
        elif (page.status or 0) >= 400 or not text:
            why = f"dropped: broken (HTTP {page.status}, {len(text)} characters of main text)"
            kind = "broken"
        elif rel is None or rel < thr:
            why = f"dropped: off-topic, relevance {rel or 0:.3f} < page threshold {thr:.3f}"
            kind = "off_topic"
        else:
            why = (
                f"dropped by the cleaner: relevance {rel:.3f} ≥ {thr:.3f} but too little "
                "text survived cleaning"
            )
            kind = "cleaned"
        html = decompress(page.html_z) or ""
        out: dict[str, Any] = {
            "id": page.id,
            "run": run.id,
            "url": page.url,
            "final_url": page.final_url,
            "host": page.host,
            "section": section_of(page.url),
            "status": page.status,
            "depth": page.depth,
            "parent_url": page.parent_url,
            "anchor": page.anchor,
            "title": page.title,
            "description": page.description,
            "keywords": page.keywords,
            "language": page.language,
            "charset": page.charset,
            "published": page.published,
            "fetched_at": _dt(page.fetched_at).isoformat() if page.fetched_at else None,
            "relevance": rel,
            "page_threshold": thr,
            "accepted": bool(page.accepted),
            "kind": kind,
            "why": why,
            "link_score": page.link_score or {},
            "text": text[:MAX_SHOWN],
            "cleaned_text": doc.text[:MAX_SHOWN] if doc else None,
            "html": html[:MAX_SHOWN],
            "html_truncated": len(html) > MAX_SHOWN,
            "duplicate": None,
        }
        if dup is not None:
            other = (original.text or "") if original else ""
            out["duplicate"] = {
                "of": dup.original_url,
                "of_page_id": original.id if original else None,
                "method": dup.method,
                "score": dup.score,
                "diff_html": side_by_side(other, text, "original", "this page"),
            }
        return out


_SENTENCE = re.compile(r"(?<=[。！？!?；;\n])")


def _lines(text: str, limit: int = 400) -> list[str]:
    return [x.strip() for x in _SENTENCE.split(text) if x.strip()][:limit]


def side_by_side(a: str, b: str, a_name: str, b_name: str) -> str:
    """An HTML table of the two texts side by side, sentence by sentence, changes marked
    (``difflib.HtmlDiff``; at most 400 sentences each)."""
    return difflib.HtmlDiff(wrapcolumn=48).make_table(
        _lines(a), _lines(b), a_name, b_name, context=True, numlines=2
    )
