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
    run=run.run,
    estimate=run.estimate,
    # Not format 3: Iceberg 1.10's action writes the moved entries without their first_row_id
    # (its SparkContentFile drops it; apache/iceberg#16699 fixes that later), so the new
    # manifests get fresh row id ranges and every row's `_row_id` changes, which the spec's
    # row lineage forbids for rows that only move. tests/jobs/test_format_v3.py shows it.
    formats=(1, 2),
    counters=COUNTERS,
)
