"""Daemons share what their evaluations saw of each table (a daemon taking over a share, or
restarting, starts warm).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "icemaint_evaluations",
        sa.Column("table_name", sa.String(512), primary_key=True),
        sa.Column("catalog", sa.String(255), nullable=False),
        sa.Column("metadata_location", sa.Text(), nullable=False),
        sa.Column("basis", sa.String(64), nullable=False),
        sa.Column("kept", sa.LargeBinary().with_variant(mysql.LONGBLOB(), "mysql", "mariadb"), nullable=False),
        sa.Column("written_at_ms", sa.BigInteger(), nullable=False),
    )
    op.create_index("ix_icemaint_evaluations_catalog", "icemaint_evaluations", ["catalog"])


def downgrade() -> None:
    op.drop_index("ix_icemaint_evaluations_catalog", table_name="icemaint_evaluations")
    op.drop_table("icemaint_evaluations")
