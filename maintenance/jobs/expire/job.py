"""The EXPIRE job: remove the snapshots retention no longer keeps, then delete the files
only they referenced and metadata.json versions older than the table still lists.

The snapshots removed are exactly the planned ones: the new metadata is built from the
current one with `TableMetadata.Builder.removeSnapshots` (Iceberg's `ExpireSnapshots` would
add its own age-based choices, which could take a checkpoint snapshot) and committed
through the fence; a concurrent change of refs sends it back to planning. The files are
computed from the metadata before and after the commit, never from the plan alone, and
nothing outside the table location is deleted.
"""

from __future__ import annotations

import time

import structlog
from pyiceberg.table import Table

from maintenance.catalogs import load_table
from maintenance.errors import ConflictError
from maintenance.jobs.context import JobContext
from maintenance.jobs.expire.files import files_of_expired, old_metadata_files
from maintenance.jobs.expire.plan import ExpiryPlan, Retention, plan_expiry
from maintenance.jobs.result import COMMITTED, NOOP, JobOutcome
from maintenance.listing import list_location
from maintenance.paths import is_under
from maintenance.reachable import statistics_paths
from maintenance.spark.jvm import JavaObject, java_long, jvm

log = structlog.get_logger(__name__)
PLAN_ATTEMPTS = 3


def expire(ctx: JobContext) -> JobOutcome:
    retention: Retention = ctx.options.get("retention") or Retention()
    now_ms = int(time.time() * 1000)
    committed = False
    for attempt in range(1, PLAN_ATTEMPTS + 1):
        before = load_table(ctx.config, ctx.ref)
        plan = plan_expiry(before.metadata, retention, now_ms)
        if plan.empty or ctx.dry_run:
            break
        try:
            ctx.table.commit_metadata(lambda base, plan=plan: _without_expired(ctx, base, plan), "expire snapshots")
            committed = True
            break
        except ConflictError as exc:
            if attempt == PLAN_ATTEMPTS:
                raise
            log.info("refs changed while expiring; planning again", reason=str(exc))

    after = load_table(ctx.config, ctx.ref) if committed else before
    planned = set(plan.snapshot_ids)
    if committed:
        kept_ids = {s.snapshot_id for s in after.metadata.snapshots}
        expired = [s for s in before.metadata.snapshots if s.snapshot_id in planned and s.snapshot_id not in kept_ids]
        retained = list(after.metadata.snapshots)
    else:
        expired = [s for s in before.metadata.snapshots if s.snapshot_id in planned]
        retained = [s for s in before.metadata.snapshots if s.snapshot_id not in planned]
    retained_stats = statistics_paths(after.metadata, {s.snapshot_id for s in retained})
    files = files_of_expired(before.io, before.metadata, expired, retained, retained_stats)
    old_metadata = _old_metadata(after)
    if not ctx.dry_run and not committed and (files.all or old_metadata):
        ctx.table.claim()  # a metadata version of its own: claim first so the cleanup sees it
        after = load_table(ctx.config, ctx.ref)
        old_metadata = _old_metadata(after)

    location = after.location()
    to_delete = [p for p in [*files.all, *old_metadata] if is_under(p, location)]
    outside = len(files.all) + len(old_metadata) - len(to_delete)
    if outside:
        log.warning("files of expired snapshots outside the table location are left alone", count=outside)
    counters = {
        "snapshots_expired": len(expired) if committed else 0,
        "snapshots_to_expire": len(plan.snapshot_ids),
        "refs_removed": len(plan.refs_to_remove) if committed else 0,
        "snapshots_retained": len(retained),
        "checkpoint_snapshots_kept": plan.kept_for_checkpoints,
        "max_snapshot_age_ms": plan.max_snapshot_age_ms,
        "min_snapshots_to_keep": plan.min_snapshots_to_keep,
        "data_and_delete_files_unreferenced": len(files.content_files),
        "manifests_unreferenced": len(files.manifests),
        "manifest_lists_unreferenced": len(files.manifest_lists),
        "statistics_files_unreferenced": len(files.statistics_files),
        "old_metadata_files": len(old_metadata),
        "files_outside_location_kept": outside,
    }
    if ctx.dry_run:
        return JobOutcome(NOOP, counters={**counters, "files_deleted": 0, "snapshot_ids_to_expire": plan.snapshot_ids, "would_delete": to_delete})
    deleted = ctx.table.delete_files(to_delete) if to_delete else 0
    status = COMMITTED if committed or deleted else NOOP
    return JobOutcome(status, counters={**counters, "files_deleted": deleted})


def _old_metadata(table: Table) -> list[str]:
    folder = table.metadata_location.rsplit("/", 1)[0]
    return [f.location for f in old_metadata_files(list_location(table.io, folder), table.metadata, table.metadata_location)]


def _without_expired(ctx: JobContext, base: JavaObject, plan: ExpiryPlan) -> JavaObject:
    """The table metadata without the planned snapshots and refs, built on `base`."""
    refs = {str(name): int(base.ref(name).snapshotId()) for name in base.refs().keySet()}
    if refs != plan.refs:
        raise ConflictError("the table's branches or tags changed since planning")
    current = base.currentSnapshot()
    if current is not None and int(current.snapshotId()) in plan.snapshot_ids:
        raise ConflictError("the current snapshot was planned for expiry")
    spark = ctx.spark
    builder = jvm(spark).org.apache.iceberg.TableMetadata.buildFrom(base)
    for name in plan.refs_to_remove:
        builder = builder.removeRef(name)
    ids = jvm(spark).java.util.HashSet()
    for snapshot_id in plan.snapshot_ids:
        if base.snapshot(java_long(spark, snapshot_id)) is not None:
            ids.add(java_long(spark, snapshot_id))
    return builder.removeSnapshots(ids).build()
