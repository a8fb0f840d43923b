"""COMPACT: rewrite small (and oversized) data files toward the target size, bin-packed, sorted or z-ordered."""

from maintenance.jobs.compact import plan, run
from maintenance.jobs.compact.options import CompactOptions
from maintenance.jobs.file_groups.executor import COUNTERS as GROUP_COUNTERS
from maintenance.jobs.spec import JobSpec

SPEC = JobSpec(
    name="compact",
    summary="COMPACT small data files toward the target size: bin-pack, sort or z-order (a Spark job).",
    options=CompactOptions,
    plan=plan.plan,
    run=run.run,
    estimate=run.estimate,
    formats=(1, 2, 3),
    counters={**GROUP_COUNTERS, "strategy": "the row layout a dry run would write (binpack, sort, zorder)"},
    check_table=plan.check_table,
)
