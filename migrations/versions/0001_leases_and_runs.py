"""Leases with fencing epochs, and the run history.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "icemaint_leases",
        sa.Column("table_name", sa.String(512), primary_key=True),
        sa.Column("holder_id", sa.String(255), nullable=True),
        sa.Column("epoch", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("acquire_token", sa.String(64), nullable=True),
        sa.Column("acquired_at_ms", sa.BigInteger, nullable=True),
        sa.Column("expires_at_ms", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("heartbeat_at_ms", sa.BigInteger, nullable=True),
    )
    op.create_table(
        "icemaint_runs",
        sa.Column("run_id", sa.String(36), primary_key=True),
        sa.Column("table_name", sa.String(512), nullable=False),
        sa.Column("job", sa.String(32), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("holder_id", sa.String(255), nullable=True),
        sa.Column("lease_epoch", sa.BigInteger, nullable=True),
        sa.Column("started_at_ms", sa.BigInteger, nullable=False),
        sa.Column("ended_at_ms", sa.BigInteger, nullable=True),
        sa.Column("snapshot_id", sa.BigInteger, nullable=True),
        sa.Column("counters", sa.Text, nullable=True),
        sa.Column("error", sa.Text, nullable=True),
    )
    op.create_index("ix_icemaint_runs_table_started", "icemaint_runs", ["table_name", "started_at_ms"])


def downgrade() -> None:
    op.drop_index("ix_icemaint_runs_table_started", table_name="icemaint_runs")
    op.drop_table("icemaint_runs")
    op.drop_table("icemaint_leases")
