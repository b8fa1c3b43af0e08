"""SQLAlchemy 2 models of a crawl: runs, pages (every fetched page), documents, duplicates.

The schema is owned by the Alembic migrations in ``models/migrations``; these classes are
the mapping used by :mod:`models.store`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


def utcnow() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    type_annotation_map = {dict[str, Any]: JSON}


class CrawlRun(Base):
    """One crawl: the topic file snapshot, the settings, start and end, final stats."""

    __tablename__ = "crawl_runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    topic_name: Mapped[str] = mapped_column(String(200))
    topic_text: Mapped[str] = mapped_column(Text, default="")
    settings: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    stats: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


class Page(Base):
    """A fetched page, on-topic or not, so that a crawl can be audited."""

    __tablename__ = "pages"
    __table_args__ = (UniqueConstraint("run_id", "url", name="uq_pages_run_url"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("crawl_runs.id", ondelete="CASCADE"), index=True)
    url: Mapped[str] = mapped_column(Text)
    final_url: Mapped[str | None] = mapped_column(Text, nullable=True)
    host: Mapped[str] = mapped_column(String(255), index=True, default="")
    status: Mapped[int | None] = mapped_column(Integer, nullable=True)
    fetched_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    depth: Mapped[int] = mapped_column(Integer, default=0)
    parent_url: Mapped[str | None] = mapped_column(Text, nullable=True)
    anchor: Mapped[str | None] = mapped_column(Text, nullable=True)
    title: Mapped[str | None] = mapped_column(Text, nullable=True)
    description: Mapped[str | None] = mapped_column(Text, nullable=True)
    keywords: Mapped[str | None] = mapped_column(Text, nullable=True)
    language: Mapped[str | None] = mapped_column(String(16), nullable=True)
    charset: Mapped[str | None] = mapped_column(String(32), nullable=True)
    published: Mapped[str | None] = mapped_column(String(32), nullable=True)
    html_z: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    text: Mapped[str | None] = mapped_column(Text, nullable=True)
    link_score: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    relevance: Mapped[float | None] = mapped_column(Float, nullable=True)
    accepted: Mapped[bool] = mapped_column(Boolean, default=False)
    #: the page relevance per part ({"info": r, "text": r}, formula 3 per part), when known
    relevance_parts: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    #: the WARC capture of the response (TOPICRAWL_WARC_DIR): file name in the capture
    #: directory, offset of its gzip member and its length in bytes
    warc_file: Mapped[str | None] = mapped_column(Text, nullable=True)
    warc_offset: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    warc_length: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    #: the response's validators, sent back by ``topicrawl recrawl`` (conditional request)
    etag: Mapped[str | None] = mapped_column(String(256), nullable=True)
    last_modified: Mapped[str | None] = mapped_column(String(64), nullable=True)
    #: the response's Content-Type (media type only): text/html, application/pdf …
    content_type: Mapped[str | None] = mapped_column(String(128), nullable=True)


class Document(Base):
    """The cleaned corpus text of an accepted page (written by the post-processor)."""

    __tablename__ = "documents"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("crawl_runs.id", ondelete="CASCADE"), index=True)
    page_id: Mapped[int] = mapped_column(
        ForeignKey("pages.id", ondelete="CASCADE"), unique=True, index=True
    )
    text: Mapped[str] = mapped_column(Text)
    meta: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Duplicate(Base):
    """A page dropped as a (near-)duplicate of an earlier page."""

    __tablename__ = "duplicates"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("crawl_runs.id", ondelete="CASCADE"), index=True)
    page_id: Mapped[int] = mapped_column(
        ForeignKey("pages.id", ondelete="CASCADE"), unique=True, index=True
    )
    original_url: Mapped[str] = mapped_column(Text)
    original_page_id: Mapped[int | None] = mapped_column(
        ForeignKey("pages.id", ondelete="SET NULL"), nullable=True
    )
    method: Mapped[str] = mapped_column(String(32))
    score: Mapped[float] = mapped_column(Float)


class UrlHistory(Base):
    """URLs accepted into the corpus: the population that URL-structure sampling draws from."""

    __tablename__ = "url_history"
    __table_args__ = (UniqueConstraint("run_id", "url", name="uq_url_history_run_url"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("crawl_runs.id", ondelete="CASCADE"), index=True)
    url: Mapped[str] = mapped_column(Text)
    accepted_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class RunSnapshot(Base):
    """The stats of a running crawl, written every TOPICRAWL_PROGRESS_INTERVAL seconds by
    :class:`crawler.extensions.CrawlProgress` (one row per worker and interval): the
    console's live figures."""

    __tablename__ = "run_snapshots"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("crawl_runs.id", ondelete="CASCADE"))
    worker: Mapped[str] = mapped_column(String(100))
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    stats: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


class Label(Base):
    """A user's judgement for a topic: a page (``scope`` "page", ``target`` its URL), a
    section (a URL prefix) or a whole host is relevant (``label`` true) or not."""

    __tablename__ = "labels"
    __table_args__ = (
        UniqueConstraint("topic_name", "scope", "target", name="uq_labels_topic_scope_target"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    topic_name: Mapped[str] = mapped_column(String(200))
    scope: Mapped[str] = mapped_column(String(16))
    target: Mapped[str] = mapped_column(Text)
    label: Mapped[bool] = mapped_column(Boolean)
    run_id: Mapped[int | None] = mapped_column(
        ForeignKey("crawl_runs.id", ondelete="SET NULL"), nullable=True
    )
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
