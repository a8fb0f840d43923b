"""CONVERT: equality deletes into position deletes (see plan, scan and commit)."""

from maintenance.jobs.convert.counters import COUNTERS
from maintenance.jobs.convert.options import ConvertOptions
from maintenance.jobs.spec import JobSpec, lazy
from maintenance.table.reader_cost import EQUALITY_DELETES

SPEC = JobSpec(
    name="convert",
    summary="CONVERT equality deletes into position deletes, or deletion vectors on format 3 (a Spark job).",
    options=ConvertOptions,
    plan=lazy("maintenance.jobs.convert.plan", "plan"),
    run=lazy("maintenance.jobs.convert.run", "run"),
    estimate=lazy("maintenance.jobs.convert.estimate", "estimate"),
    relieves=EQUALITY_DELETES,
    formats=(1, 2, 3),
    counters=COUNTERS,
)
