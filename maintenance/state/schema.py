"""The state database's tables. Alembic migrations (in `migrations/`) create and change them.

Times are epoch milliseconds taken from the database's own clock, never the caller's, so
hosts with skewed clocks still agree on when a lease expires.
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Index, LargeBinary, String, Text
from sqlalchemy.dialects import mysql
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


class LeaseRow(Base):
    """One row per table ever leased; a free lease has no holder."""

    __tablename__ = "icemaint_leases"

    table_name: Mapped[str] = mapped_column(String(512), primary_key=True)
    holder_id: Mapped[str | None] = mapped_column(String(255), nullable=True)
    # The fencing token: strictly increases on every change of holder (and forced release).
    epoch: Mapped[int] = mapped_column(BigInteger, nullable=False, default=0)
    # Unique per acquisition, so the winner can read back its epoch without RETURNING.
    acquire_token: Mapped[str | None] = mapped_column(String(64), nullable=True)
    acquired_at_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    expires_at_ms: Mapped[int] = mapped_column(BigInteger, nullable=False, default=0)
    heartbeat_at_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)


class RunRow(Base):
    """One maintenance job run on one table, from start to end."""

    __tablename__ = "icemaint_runs"

    run_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    table_name: Mapped[str] = mapped_column(String(512), nullable=False)
    job: Mapped[str] = mapped_column(String(32), nullable=False)
    status: Mapped[str] = mapped_column(String(16), nullable=False)
    holder_id: Mapped[str | None] = mapped_column(String(255), nullable=True)
    lease_epoch: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    started_at_ms: Mapped[int] = mapped_column(BigInteger, nullable=False)
    ended_at_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    snapshot_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    counters: Mapped[str | None] = mapped_column(Text, nullable=True)  # JSON object
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    # JSON object: the table's health counters when the run ended (migration 0002); NULL when
    # they could not be read, and for runs recorded before it.
    health: Mapped[str | None] = mapped_column(Text, nullable=True)
    # JSON object: the last progress step the run reported and its counts (migration 0003), kept after
    # it ends (where a failed run was); NULL for runs recorded before it.
    stage: Mapped[str | None] = mapped_column(Text, nullable=True)

    __table_args__ = (
        Index("ix_icemaint_runs_table_started", "table_name", "started_at_ms"),
        Index("ix_icemaint_runs_started", "started_at_ms"),  # migration 0004: which tables' runs moved since a moment
        Index("ix_icemaint_runs_ended", "ended_at_ms"),
    )


# zlib-compressed JSON; MariaDB/MySQL's BLOB stops at 64 KiB, a table of thousands of partitions needs more
COMPRESSED_JSON = LargeBinary().with_variant(mysql.LONGBLOB(), "mysql", "mariadb")


class EvaluationRow(Base):
    """What a daemon's evaluation saw of one table at one metadata location (migration 0005),
    for every daemon on the database: `schedule/stored.py`."""

    __tablename__ = "icemaint_evaluations"

    table_name: Mapped[str] = mapped_column(String(512), primary_key=True)
    catalog: Mapped[str] = mapped_column(String(255), nullable=False)
    metadata_location: Mapped[str] = mapped_column(Text, nullable=False)
    basis: Mapped[str] = mapped_column(String(64), nullable=False)  # what else the evaluation depended on (a digest)
    kept: Mapped[bytes] = mapped_column(COMPRESSED_JSON, nullable=False)
    written_at_ms: Mapped[int] = mapped_column(BigInteger, nullable=False)

    __table_args__ = (Index("ix_icemaint_evaluations_catalog", "catalog"),)


class ScanDayRow(Base):
    """What readers' scans of one table cost on one day (UTC), summed (migration 0006):
    `state/scan_days.py`. A few weeks of days are kept, so a table has a bounded number of rows."""

    __tablename__ = "icemaint_scan_days"

    table_name: Mapped[str] = mapped_column(String(512), primary_key=True)
    day: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)  # days since 1970-01-01
    scans: Mapped[int] = mapped_column(BigInteger, nullable=False)
    planning_us: Mapped[int] = mapped_column(BigInteger, nullable=False)
    data_files: Mapped[int] = mapped_column(BigInteger, nullable=False)
    delete_files: Mapped[int] = mapped_column(BigInteger, nullable=False)
    equality_delete_files: Mapped[int] = mapped_column(BigInteger, nullable=False)
    position_delete_files: Mapped[int] = mapped_column(BigInteger, nullable=False)
    data_bytes: Mapped[int] = mapped_column(BigInteger, nullable=False)
    delete_bytes: Mapped[int] = mapped_column(BigInteger, nullable=False)
    manifests_read: Mapped[int] = mapped_column(BigInteger, nullable=False)
    last_report_at_ms: Mapped[int] = mapped_column(BigInteger, nullable=False)

    __table_args__ = (Index("ix_icemaint_scan_days_day", "day"),)


class RunScanRow(Base):
    """Readers' scans of a table in the minutes after a run committed on it, summed
    (migration 0006): what the run measurably changed for them (`state/run_scans.py`)."""

    __tablename__ = "icemaint_run_scans"

    run_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    scans: Mapped[int] = mapped_column(BigInteger, nullable=False)
    data_files: Mapped[int] = mapped_column(BigInteger, nullable=False)
    data_bytes: Mapped[int] = mapped_column(BigInteger, nullable=False)
    equality_delete_files: Mapped[int] = mapped_column(BigInteger, nullable=False)
    position_delete_files: Mapped[int] = mapped_column(BigInteger, nullable=False)
    last_report_at_ms: Mapped[int] = mapped_column(BigInteger, nullable=False)
