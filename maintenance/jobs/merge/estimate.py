"""MERGE's rough duration for `icemaint plan`, from the table's health alone.

Not in the job's runner module, which imports Spark's side of the job: every evaluation
estimates every enabled job of every table, and needs none of that (a cron `plan` imported
every runner for it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from maintenance.jobs.spec import partitions_estimate_s

if TYPE_CHECKING:
    from maintenance.table.health import TableHealth


def estimate(health: TableHealth) -> float:
    """Reads and writes the data of every partition with deletes, and reads its deletes."""
    return partitions_estimate_s((p for p in health.partitions if p.delete_files), passes=2, delete_files=lambda p: p.delete_files)
