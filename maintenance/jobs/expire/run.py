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

from maintenance.catalogs import load_table
from maintenance.errors import ConflictError
from maintenance.jobs.context import JobContext
from maintenance.jobs.expire.files import (
    files_to_delete,
    old_metadata_versions,
    retained_references,
    statistics_of,
)
from maintenance.jobs.expire.plan import ExpiryPlan, plan_expiry
from maintenance.jobs.outcome import COMMITTED, JobOutcome, attach_partial
from maintenance.spark.jvm import JavaObject, java_long, jvm
from maintenance.table.health import TableHealth
from maintenance.table.references import NewestReferences

log = structlog.get_logger(__name__)
PLAN_ATTEMPTS = 3


def run(ctx: JobContext, plan: ExpiryPlan) -> JobOutcome:
    before = ctx.metadata.table
    left = plan.left_behind  # found from older metadata versions: replanning on newer ones keeps it
    for attempt in range(1, PLAN_ATTEMPTS + 1):
        if attempt > 1:
            before = load_table(ctx.config, ctx.ref)
            plan = plan_expiry(before.metadata, plan.options, int(time.time() * 1000))
        if not plan.snapshot_ids and not plan.refs_to_remove:
            ctx.table.claim()  # nothing to remove from the metadata: claim first, so the cleanup counts the claim's version
            break
        try:
            ctx.commit_metadata(lambda base, plan=plan: _without_expired(ctx, base, plan), "expire snapshots")
            break
        except ConflictError as exc:
            if attempt == PLAN_ATTEMPTS:
                raise
            log.info("refs changed while expiring; planning again", reason=str(exc))

    after = load_table(ctx.config, ctx.ref)
    planned = set(plan.snapshot_ids)
    kept_ids = {s.snapshot_id for s in after.metadata.snapshots}
    expired = [s for s in before.metadata.snapshots if s.snapshot_id in planned and s.snapshot_id not in kept_ids]
    earlier = [s for s in left.snapshots if s.snapshot_id not in kept_ids]
    retained = retained_references(after, after.metadata.snapshots)
    statistics = [*statistics_of(before.metadata, {s.snapshot_id for s in expired}), *left.statistics]
    deletable = files_to_delete(after, [*expired, *earlier], statistics, retained, old_metadata_versions(after))
    done = JobOutcome(
        COMMITTED,
        counters={
            **plan.counters(),
            "snapshots_expired": len(expired),
            "snapshots_left_behind": len(earlier),
            "refs_removed": len(plan.refs_to_remove),
            "snapshots_retained": len(after.metadata.snapshots),
            **deletable.counters(),
        },
        effect=f"expired {len(expired) + len(earlier):,} snapshot(s) in metadata {after.metadata_location.rsplit('/', 1)[-1]}; "
               f"expiring adds no snapshot",
    )
    if deletable.paths:
        try:
            ctx.delete_files(deletable.phases, NewestReferences(lambda: load_table(ctx.config, ctx.ref), retained, after.metadata_location))
        except BaseException as exc:
            attach_partial(exc, done)  # the expiry is committed, whatever stopped the deletions
            raise
    return done


def estimate(health: TableHealth) -> float:
    return 1.0 + health.snapshots / 200


def _moved_forward(base: JavaObject, now: int, planned: int) -> bool:
    """A ref that only moved forward (writers appending on it) leaves the plan valid: every
    snapshot the plan expires is still behind what the plan keeps."""
    snapshot = base.snapshot(now) if now != planned else None
    while snapshot is not None:
        parent = snapshot.parentId()
        if parent is None:
            return False
        if int(parent) == planned:
            return True
        snapshot = base.snapshot(parent)
    return now == planned


def _without_expired(ctx: JobContext, base: JavaObject, plan: ExpiryPlan) -> JavaObject:
    """The table metadata without the planned snapshots and refs, built on `base`."""
    refs = {str(name): int(base.ref(name).snapshotId()) for name in base.refs().keySet()}
    if set(refs) != set(plan.refs) or not all(_moved_forward(base, refs[name], planned) for name, planned in plan.refs.items()):
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
