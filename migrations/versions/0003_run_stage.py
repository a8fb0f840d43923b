"""Each running run records the stage it reports (the status page shows a running job's live stage).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A nullable column without a default: a plain ADD COLUMN on SQLite, PostgreSQL and MariaDB.
    op.add_column("icemaint_runs", sa.Column("stage", sa.Text, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("icemaint_runs") as batch:  # SQLite before 3.35 cannot DROP COLUMN
        batch.drop_column("stage")
