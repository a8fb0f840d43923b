"""Runs are found by when they started or ended (a daemon's cycle asks which tables' runs moved since the last).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-28
"""

from __future__ import annotations

from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_icemaint_runs_started", "icemaint_runs", ["started_at_ms"])
    op.create_index("ix_icemaint_runs_ended", "icemaint_runs", ["ended_at_ms"])


def downgrade() -> None:
    op.drop_index("ix_icemaint_runs_ended", table_name="icemaint_runs")
    op.drop_index("ix_icemaint_runs_started", table_name="icemaint_runs")
