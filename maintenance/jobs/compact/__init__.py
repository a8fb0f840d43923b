"""COMPACT: rewrite small (and oversized) data files toward the target size, bin-packed, sorted or z-ordered."""

from maintenance.jobs.compact.counters import COUNTERS
from maintenance.jobs.compact.options import CompactOptions
from maintenance.jobs.spec import JobSpec, lazy
from maintenance.table.reader_cost import SMALL_FILES

SPEC = JobSpec(
    name="compact",
    summary="COMPACT small data files toward the target size: bin-pack, sort or z-order (a Spark job).",
    options=CompactOptions,
    plan=lazy("maintenance.jobs.compact.plan", "plan"),
    run=lazy("maintenance.jobs.compact.run", "run"),
    estimate=lazy("maintenance.jobs.compact.estimate", "estimate"),
    relieves=SMALL_FILES,
    formats=(1, 2, 3),
    counters=COUNTERS,
    check_table=lazy("maintenance.jobs.compact.plan", "check_table"),
)
