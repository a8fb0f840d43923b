"""MANIFESTS: rewrite manifests so each holds one range of partitions at about the target size."""

from maintenance.jobs.manifests import plan, run
from maintenance.jobs.manifests.counters import COUNTERS
from maintenance.jobs.manifests.options import ManifestsOptions
from maintenance.jobs.spec import JobSpec

SPEC = JobSpec(
    name="manifests",
    summary="MANIFESTS: rewrite manifests clustered by partition at about commit.manifest.target-size-bytes (a Spark job).",
    options=ManifestsOptions,
    plan=plan.plan,
    check_table=plan.check_table,
    run=run.run,
    estimate=run.estimate,
    formats=(1, 2, 3),  # format 3 through Iceberg's core API, which keeps row ids (`run`)
    counters=COUNTERS,
)
