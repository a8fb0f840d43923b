"""Running ORPHANS: delete the planned orphans, after one more look at the newest metadata.

Order matters for safety: the plan read the references, then listed the location, then
read the references of the newest metadata; here the metadata is read once more right
before deleting, so a commit that landed since cannot lose a file it references. Deletion
goes in fenced batches.
"""

from __future__ import annotations

from dataclasses import replace

import structlog

from maintenance.catalogs import load_table
from maintenance.jobs.context import JobContext
from maintenance.jobs.orphans.plan import OrphanPlan, subtract
from maintenance.jobs.outcome import COMMITTED, NOOP, JobOutcome
from maintenance.table.health import TableHealth
from maintenance.table.paths import normalise

log = structlog.get_logger(__name__)


def run(ctx: JobContext, plan: OrphanPlan) -> JobOutcome:
    newest = load_table(ctx.config, ctx.ref)
    if normalise(newest.metadata_location) != normalise(plan.metadata_location):
        plan.referenced.add_table(newest)
        plan = replace(subtract(plan.listing, plan.referenced, newest, plan.older_than_ms), listing_seconds=plan.listing_seconds)
    counters = plan.counters()
    if plan.empty:
        return JobOutcome(NOOP, counters={**counters, "files_deleted": 0})
    ctx.before_deleting(newest.metadata.current_snapshot_id)
    deleted = ctx.table.delete_files(f.location for f in plan.candidates)
    log.info("orphan files deleted", count=deleted, bytes=plan.bytes)
    return JobOutcome(COMMITTED, counters={**counters, "files_deleted": deleted})


def estimate(health: TableHealth) -> float:
    return 1.0 + (health.data_files + health.delete_files) / 10_000
