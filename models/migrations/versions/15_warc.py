"""Corpus-grade outputs (issue 15a): where each page lies in the WARC capture, and the
page relevance per part (description/title vs main text) for the exports.

Revision ID: i15_warc
Revises: i14_console
Create Date: 2026-11-23
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "i15_warc"
down_revision: str | None = "i14_console"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("pages") as batch:
        batch.add_column(sa.Column("warc_file", sa.Text, nullable=True))
        batch.add_column(sa.Column("warc_offset", sa.BigInteger, nullable=True))
        batch.add_column(sa.Column("warc_length", sa.BigInteger, nullable=True))
        batch.add_column(sa.Column("relevance_parts", sa.JSON, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("pages") as batch:
        for name in ("relevance_parts", "warc_length", "warc_offset", "warc_file"):
            batch.drop_column(name)
