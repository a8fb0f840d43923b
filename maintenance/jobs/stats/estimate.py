"""STATS's rough duration for `icemaint plan`, from the table's health alone.

Not in the job's runner module, which imports Spark's side of the job: every evaluation
estimates every enabled job of every table, and needs none of that (a cron `plan` imported
every runner for it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from maintenance.jobs.spec import DATA_JOB_FIXED_S, data_job_estimate_s

if TYPE_CHECKING:
    from maintenance.table.health import TableHealth


def estimate(health: TableHealth) -> float:
    """Reads the snapshot's data once."""
    return data_job_estimate_s(DATA_JOB_FIXED_S, health.data_bytes, health.data_files)
