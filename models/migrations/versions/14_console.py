"""The crawl console: live snapshots of a run's stats, labels per topic, browse indexes.

Revision ID: i14_console
Revises: 0001
Create Date: 2026-11-23
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "i14_console"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "run_snapshots",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "run_id", sa.Integer, sa.ForeignKey("crawl_runs.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("worker", sa.String(100), nullable=False),
        sa.Column("at", TS, nullable=False),
        sa.Column("stats", sa.JSON, nullable=False),
    )
    op.create_index("ix_run_snapshots_run_id", "run_snapshots", ["run_id", "id"])
    op.create_table(
        "labels",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("topic_name", sa.String(200), nullable=False),
        sa.Column("scope", sa.String(16), nullable=False),
        sa.Column("target", sa.Text, nullable=False),
        sa.Column("label", sa.Boolean, nullable=False),
        sa.Column(
            "run_id", sa.Integer, sa.ForeignKey("crawl_runs.id", ondelete="SET NULL"), nullable=True
        ),
        sa.Column("created_at", TS, nullable=False),
        sa.UniqueConstraint("topic_name", "scope", "target", name="uq_labels_topic_scope_target"),
    )
    # the console's dashboard and page browser of a large run: filters by run + state/host/score
    op.create_index("ix_pages_run_accepted", "pages", ["run_id", "accepted"])
    op.create_index("ix_pages_run_host", "pages", ["run_id", "host", "accepted"])
    op.create_index("ix_pages_run_relevance", "pages", ["run_id", "relevance"])
    op.create_index("ix_duplicates_run_method", "duplicates", ["run_id", "method"])
    broken = sa.text("status >= 400 OR text IS NULL OR text = ''")
    op.create_index(
        "ix_pages_run_broken", "pages", ["run_id", "host"],
        sqlite_where=broken, postgresql_where=broken,
    )  # fmt: skip


def downgrade() -> None:
    for name, table in (
        ("ix_pages_run_broken", "pages"),
        ("ix_duplicates_run_method", "duplicates"),
        ("ix_pages_run_relevance", "pages"),
        ("ix_pages_run_host", "pages"),
        ("ix_pages_run_accepted", "pages"),
    ):
        op.drop_index(name, table_name=table)
    op.drop_table("labels")
    op.drop_table("run_snapshots")
