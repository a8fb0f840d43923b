"""REWRITE: combine position delete files, at most one per partition and target size; on
format 3, turn them into deletion vectors and drop dangling ones."""

from maintenance.jobs.rewrite.counters import COUNTERS
from maintenance.jobs.rewrite.options import RewriteOptions
from maintenance.jobs.spec import JobSpec, lazy
from maintenance.table.reader_cost import POSITION_DELETES

SPEC = JobSpec(
    name="rewrite",
    summary="REWRITE position deletes: at most one file per partition and target size, deletion vectors on format 3 (a Spark job).",
    options=RewriteOptions,
    plan=lazy("maintenance.jobs.rewrite.plan", "plan"),
    run=lazy("maintenance.jobs.rewrite.run", "run"),
    estimate=lazy("maintenance.jobs.rewrite.estimate", "estimate"),
    relieves=POSITION_DELETES,
    formats=(1, 2, 3),
    counters=COUNTERS,
)
