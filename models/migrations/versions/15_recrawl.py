"""Incremental recrawl: a page's HTTP validators (ETag, Last-Modified) and Content-Type.

Revision ID: i15_recrawl
Revises: i15_warc
Create Date: 2026-11-23
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "i15_recrawl"
down_revision: str | None = "i15_warc"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("pages") as batch:
        batch.add_column(sa.Column("etag", sa.String(256), nullable=True))
        batch.add_column(sa.Column("last_modified", sa.String(64), nullable=True))
        batch.add_column(sa.Column("content_type", sa.String(128), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("pages") as batch:
        batch.drop_column("content_type")
        batch.drop_column("last_modified")
        batch.drop_column("etag")
