"""COMPACT: rewrite small (and oversized) data files toward the target size, bin-packed, sorted or z-ordered."""

from maintenance.jobs.compact import plan, run
from maintenance.jobs.compact.counters import COUNTERS
from maintenance.jobs.compact.options import CompactOptions
from maintenance.jobs.spec import JobSpec

SPEC = JobSpec(
    name="compact",
    summary="COMPACT small data files toward the target size: bin-pack, sort or z-order (a Spark job).",
    options=CompactOptions,
    plan=plan.plan,
    run=run.run,
    estimate=run.estimate,
    formats=(1, 2, 3),
    counters=COUNTERS,
    check_table=plan.check_table,
)
