"""MANIFESTS: rewrite manifests so each holds one range of partitions at about the target size."""

from maintenance.jobs.manifests.counters import COUNTERS
from maintenance.jobs.manifests.options import ManifestsOptions
from maintenance.jobs.spec import JobSpec, lazy

SPEC = JobSpec(
    name="manifests",
    summary="MANIFESTS: rewrite manifests clustered by partition at about commit.manifest.target-size-bytes (a Spark job).",
    options=ManifestsOptions,
    plan=lazy("maintenance.jobs.manifests.plan", "plan"),
    check_table=lazy("maintenance.jobs.manifests.plan", "check_table"),
    run=lazy("maintenance.jobs.manifests.run", "run"),
    estimate=lazy("maintenance.jobs.manifests.estimate", "estimate"),
    formats=(1, 2, 3),  # format 3 through Iceberg's core API, which keeps row ids (`run`)
    counters=COUNTERS,
)
