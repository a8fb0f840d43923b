"""Readers' scans of each table, summed per day, and just after each run (issue 59):
`state/scan_days.py`, `state/run_scans.py`.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

_SUMS = ("scans", "planning_us", "data_files", "delete_files", "equality_delete_files", "position_delete_files",
         "data_bytes", "delete_bytes", "manifests_read", "last_report_at_ms")
_RUN_SUMS = ("scans", "data_files", "data_bytes", "equality_delete_files", "position_delete_files", "last_report_at_ms")


def upgrade() -> None:
    op.create_table(
        "icemaint_scan_days",
        sa.Column("table_name", sa.String(512), primary_key=True),
        sa.Column("day", sa.BigInteger(), primary_key=True, autoincrement=False),
        *(sa.Column(name, sa.BigInteger(), nullable=False) for name in _SUMS),
    )
    op.create_index("ix_icemaint_scan_days_day", "icemaint_scan_days", ["day"])
    op.create_table(
        "icemaint_run_scans",
        sa.Column("run_id", sa.String(36), primary_key=True),
        *(sa.Column(name, sa.BigInteger(), nullable=False) for name in _RUN_SUMS),
    )


def downgrade() -> None:
    op.drop_table("icemaint_run_scans")
    op.drop_index("ix_icemaint_scan_days_day", table_name="icemaint_scan_days")
    op.drop_table("icemaint_scan_days")
