"""Running ORPHANS: delete the planned orphans, after one more look at the newest metadata.

Order matters for safety: the plan read the references, then listed the location, then
read the references of the newest metadata; here the metadata is read once more right
before deleting, so a commit that landed since cannot lose a file it references, and again
before every batch of deletions (`jobs/file_removal/fenced.py`). Then the empty folders a
killed run of ours left in its output folder go (`run/output_folder.py`,
`remove_empty_folders`; the counters keep their older name, `staging_folders_*`).
"""

from __future__ import annotations

import structlog

from maintenance.catalogs import load_table
from maintenance.jobs.orphans.plan import OrphanFinder, OrphanPlan
from maintenance.run.context import JobContext
from maintenance.run.outcome import COMMITTED, NOOP, JobOutcome
from maintenance.run.output_folder import remove_empty_folders
from maintenance.table.paths import normalise
from maintenance.table.references import NewestReferences

log = structlog.get_logger(__name__)


def run(ctx: JobContext, plan: OrphanPlan) -> JobOutcome:
    try:
        return _delete_orphans(ctx, plan)
    finally:
        plan.candidates.close()  # the spool, if the orphans took one
        plan.referenced.keys.close()  # and the references' database, if they spilled


def _delete_orphans(ctx: JobContext, plan: OrphanPlan) -> JobOutcome:
    references = NewestReferences(lambda: load_table(ctx.config, ctx.ref), plan.referenced, plan.metadata_location)
    newest = references.refresh()
    if normalise(newest.metadata_location) != normalise(plan.metadata_location):
        plan = OrphanFinder(plan.referenced, older_than_ms=plan.older_than_ms).without_referenced(plan)
        plan.snapshot_id, plan.metadata_location = newest.metadata.current_snapshot_id, newest.metadata_location
    counters = plan.counters()
    if plan.empty:
        return JobOutcome(NOOP, counters=counters)
    # verified also when only folders go; an orphan's `.crc` is a candidate of its own (plan.py), so none is looked for
    deleted = ctx.remove_files([plan.candidates], references, total=plan.candidates.count, checksums=False)
    log.info("orphan files deleted", count=deleted.files, bytes=plan.bytes, per_second=deleted.counters()["files_deleted_per_second"])
    folders = remove_empty_folders(newest.location(), plan.output_folders, ctx.fence)
    effect = f"deleted {deleted.files:,} unreferenced file(s); deleting orphans changes no table metadata, so no snapshot"
    return JobOutcome(COMMITTED, counters={**counters, "staging_folders_removed": folders}, effect=effect)
