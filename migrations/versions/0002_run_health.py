"""Each run records the table's health counters at its end (the status page's time chart).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A nullable column without a default: a plain ADD COLUMN on SQLite, PostgreSQL and MariaDB.
    op.add_column("icemaint_runs", sa.Column("health", sa.Text, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("icemaint_runs") as batch:  # SQLite before 3.35 cannot DROP COLUMN
        batch.drop_column("health")
