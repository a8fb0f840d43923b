"""MANIFESTS's rough duration for `icemaint plan`, from the table's health alone.

Not in the job's runner module, which imports Spark's side of the job: every evaluation
estimates every enabled job of every table, and needs none of that (a cron `plan` imported
every runner for it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from maintenance.table.health import TableHealth

SECONDS_PER_MANIFEST = 0.05  # reading and writing small Avro files, with Spark's job overhead per run


def estimate(health: TableHealth) -> float:
    return 5.0 + health.manifests * SECONDS_PER_MANIFEST
