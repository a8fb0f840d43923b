"""MERGE: apply deletes into data files and drop the delete files, sequence numbers kept."""

from maintenance.jobs.merge.counters import COUNTERS
from maintenance.jobs.merge.options import MergeOptions
from maintenance.jobs.spec import JobSpec, lazy
from maintenance.table.reader_cost import REWRITTEN

SPEC = JobSpec(
    name="merge",
    summary="MERGE deletes into data files and drop the delete files, sequence numbers kept (a Spark job).",
    options=MergeOptions,
    plan=lazy("maintenance.jobs.merge.plan", "plan"),
    check_table=lazy("maintenance.jobs.merge.plan", "check_table"),
    run=lazy("maintenance.jobs.merge.run", "run"),
    estimate=lazy("maintenance.jobs.merge.estimate", "estimate"),
    relieves=REWRITTEN,
    formats=(1, 2, 3),
    counters=COUNTERS,
)
