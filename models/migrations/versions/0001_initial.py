"""Initial schema: crawl_runs, pages, documents, duplicates, url_history.

Revision ID: 0001
Revises:
Create Date: 2026-11-21
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "crawl_runs",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("topic_name", sa.String(200), nullable=False),
        sa.Column("topic_text", sa.Text, nullable=False),
        sa.Column("settings", sa.JSON, nullable=False),
        sa.Column("started_at", TS, nullable=False),
        sa.Column("finished_at", TS, nullable=True),
        sa.Column("stats", sa.JSON, nullable=False),
    )
    op.create_table(
        "pages",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "run_id", sa.Integer, sa.ForeignKey("crawl_runs.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("final_url", sa.Text),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("status", sa.Integer),
        sa.Column("fetched_at", TS, nullable=False),
        sa.Column("depth", sa.Integer, nullable=False),
        sa.Column("parent_url", sa.Text),
        sa.Column("anchor", sa.Text),
        sa.Column("title", sa.Text),
        sa.Column("description", sa.Text),
        sa.Column("keywords", sa.Text),
        sa.Column("language", sa.String(16)),
        sa.Column("charset", sa.String(32)),
        sa.Column("published", sa.String(32)),
        sa.Column("html_z", sa.LargeBinary),
        sa.Column("text", sa.Text),
        sa.Column("link_score", sa.JSON),
        sa.Column("relevance", sa.Float),
        sa.Column("accepted", sa.Boolean, nullable=False),
        sa.UniqueConstraint("run_id", "url", name="uq_pages_run_url"),
    )
    op.create_index("ix_pages_run_id", "pages", ["run_id"])
    op.create_index("ix_pages_host", "pages", ["host"])
    op.create_table(
        "documents",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "run_id", sa.Integer, sa.ForeignKey("crawl_runs.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column(
            "page_id", sa.Integer, sa.ForeignKey("pages.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("meta", sa.JSON, nullable=False),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_index("ix_documents_run_id", "documents", ["run_id"])
    op.create_index("ix_documents_page_id", "documents", ["page_id"], unique=True)
    op.create_table(
        "duplicates",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "run_id", sa.Integer, sa.ForeignKey("crawl_runs.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column(
            "page_id", sa.Integer, sa.ForeignKey("pages.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("original_url", sa.Text, nullable=False),
        sa.Column("original_page_id", sa.Integer, sa.ForeignKey("pages.id", ondelete="SET NULL")),
        sa.Column("method", sa.String(32), nullable=False),
        sa.Column("score", sa.Float, nullable=False),
    )
    op.create_index("ix_duplicates_run_id", "duplicates", ["run_id"])
    op.create_index("ix_duplicates_page_id", "duplicates", ["page_id"], unique=True)
    op.create_table(
        "url_history",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "run_id", sa.Integer, sa.ForeignKey("crawl_runs.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("accepted_at", TS, nullable=False),
        sa.UniqueConstraint("run_id", "url", name="uq_url_history_run_url"),
    )
    op.create_index("ix_url_history_run_id", "url_history", ["run_id"])


def downgrade() -> None:
    for table in ("url_history", "duplicates", "documents", "pages", "crawl_runs"):
        op.drop_table(table)
