"""CONVERT's rough duration for `icemaint plan`, from the table's health alone.

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
    """Reads the key columns of the data files equality deletes may apply to, and the deletes."""
    return partitions_estimate_s((p for p in health.partitions if p.equality_delete_files), passes=1, delete_files=lambda p: p.equality_delete_files)
