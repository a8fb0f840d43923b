"""MERGE's rough duration for `icemaint plan`, from the table's health alone.

Not in the job's runner module, which imports Spark's side of the job: every evaluation
estimates every enabled job of every table, and needs none of that (a cron `plan` imported
every runner for it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from maintenance.jobs.spec import data_job_estimate_s

if TYPE_CHECKING:
    from maintenance.table.health import TableHealth


def estimate(health: TableHealth) -> float:
    """Reads and writes the data of every partition with deletes, and reads its deletes."""
    merged = [p for p in health.partitions if p.delete_files]
    return data_job_estimate_s(5.0, 2 * sum(p.data_bytes for p in merged), sum(p.data_files + p.delete_files for p in merged))
