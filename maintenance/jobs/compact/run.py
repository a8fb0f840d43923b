"""The COMPACT job: rewrite the planned data files toward the target size, bin-packed, sorted or z-ordered.

The rewrite itself is the file-group engine MERGE also runs (`jobs.file_groups`): Iceberg's
own scan tasks of the targets (every delete applied), bounded groups written concurrently,
a commit every few groups keeping the planning snapshot's data sequence number (so a
streaming writer's equality deletes committed meanwhile still apply to the new files),
and every delete file whose data files are all rewritten dropped with them.
"""

from __future__ import annotations

from maintenance.jobs.compact.ordering import ordering_for
from maintenance.jobs.compact.plan import CompactPlan
from maintenance.jobs.file_groups.run import rewrite
from maintenance.run.context import JobContext
from maintenance.run.outcome import JobOutcome


def run(ctx: JobContext, plan: CompactPlan) -> JobOutcome:
    return rewrite(ctx, "COMPACT", plan, ordering_for(plan.layout, ctx.ref.catalog))
