"""REWRITE: combine position delete files, at most one per partition and target size."""

from maintenance.jobs.rewrite import plan, run
from maintenance.jobs.rewrite.options import RewriteOptions
from maintenance.jobs.spec import JobSpec

SPEC = JobSpec(
    name="rewrite",
    summary="REWRITE position deletes: at most one file per partition and target size (a Spark job).",
    options=RewriteOptions,
    plan=plan.plan,
    run=run.run,
    estimate=run.estimate,
)
