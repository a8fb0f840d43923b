"""MERGE: apply deletes into data files and drop the delete files, sequence numbers kept."""

from maintenance.jobs.merge import plan, run
from maintenance.jobs.merge.counters import COUNTERS
from maintenance.jobs.merge.options import MergeOptions
from maintenance.jobs.spec import JobSpec

SPEC = JobSpec(
    name="merge",
    summary="MERGE deletes into data files and drop the delete files, sequence numbers kept (a Spark job).",
    options=MergeOptions,
    plan=plan.plan,
    check_table=plan.check_table,
    run=run.run,
    estimate=run.estimate,
    formats=(1, 2, 3),
    counters=COUNTERS,
)
