"""CONVERT: equality deletes into position deletes (see plan, scan and commit)."""

from maintenance.jobs.convert import plan, run
from maintenance.jobs.convert.counters import COUNTERS
from maintenance.jobs.convert.options import ConvertOptions
from maintenance.jobs.spec import JobSpec

SPEC = JobSpec(
    name="convert",
    summary="CONVERT equality deletes into position deletes, or deletion vectors on format 3 (a Spark job).",
    options=ConvertOptions,
    plan=plan.plan,
    run=run.run,
    estimate=run.estimate,
    formats=(1, 2, 3),
    counters=COUNTERS,
)
