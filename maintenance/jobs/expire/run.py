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
from dataclasses import dataclass
from typing import TYPE_CHECKING

import structlog

from maintenance.catalogs import load_table
from maintenance.errors import ConflictError
from maintenance.jobs.expire.files import (
    Deletable,
    files_to_delete,
    old_metadata_versions,
    retained_references,
    statistics_of,
)
from maintenance.jobs.expire.plan import ExpiryPlan, plan_expiry
from maintenance.run.context import JobContext
from maintenance.run.outcome import COMMITTED, JobOutcome, attach_partial
from maintenance.spark.jvm import JavaObject
from maintenance.spark.table_metadata import metadata_without
from maintenance.table.references import NewestReferences, ReferencedFiles

if TYPE_CHECKING:
    from pyiceberg.table import Table
    from pyiceberg.table.snapshots import Snapshot

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
        unused = unused_metadata(before, plan) if plan.options.clean_expired_metadata else None
        try:
            ctx.commit_metadata(lambda base, plan=plan, unused=unused: _without_expired(ctx, base, plan, unused), "expire snapshots")
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
    budget = plan.options.memory_budget
    # reachability: what the retained snapshots use, then what only the expired ones did (their
    # manifests read one by one): the long phase on large tables, said with its counts
    ctx.progress("reading retained references", snapshots_retained=len(after.metadata.snapshots), snapshots_expired=len(expired) + len(earlier))
    retained = retained_references(after, after.metadata.snapshots, budget // 2)
    try:
        ctx.progress("finding expired files", files_retained=len(retained.keys), snapshots_expired=len(expired) + len(earlier))
        statistics = [*statistics_of(before.metadata, {s.snapshot_id for s in expired}), *left.statistics]
        deletable = files_to_delete(after, [*expired, *earlier], statistics, retained, old_metadata_versions(after), budget // 4)
        ctx.progress("expired files found", files_to_delete=deletable.count)
        try:
            return _delete(ctx, plan, before, after, expired, earlier, retained, deletable)
        finally:
            deletable.close()
    finally:
        retained.keys.close()


def _delete(ctx: JobContext, plan: ExpiryPlan, before: Table, after: Table, expired: list[Snapshot], earlier: list[Snapshot],
            retained: ReferencedFiles, deletable: Deletable) -> JobOutcome:
    """Delete what the committed expiry left unreferenced; the outcome, whatever stops it."""
    done = JobOutcome(
        COMMITTED,
        counters={
            **plan.counters(),
            "snapshots_expired": len(expired),
            "snapshots_left_behind": len(earlier),
            "refs_removed": len(plan.refs_to_remove),
            "snapshots_retained": len(after.metadata.snapshots),
            **({"specs_removed": len(before.metadata.partition_specs) - len(after.metadata.partition_specs),
                "schemas_removed": len(before.metadata.schemas) - len(after.metadata.schemas)} if plan.options.clean_expired_metadata else {}),
            **deletable.counters(),
        },
        effect=f"expired {len(expired) + len(earlier):,} snapshot(s) in metadata {after.metadata_location.rsplit('/', 1)[-1]}; "
               f"expiring adds no snapshot",
    )
    if deletable.count:
        try:
            ctx.remove_files(deletable.phases, NewestReferences(lambda: load_table(ctx.config, ctx.ref), retained, after.metadata_location))
        except BaseException as exc:
            attach_partial(exc, done)  # the expiry is committed, whatever stopped the deletions
            raise
    return done


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


@dataclass(frozen=True)
class UnusedMetadata:
    """What `clean_expired_metadata` may remove, from the planning metadata: the specs that no
    retained snapshot's manifests are written in, out of the specs known then."""

    known_specs: frozenset[int]
    used_specs: frozenset[int]


def unused_metadata(table: Table, plan: ExpiryPlan) -> UnusedMetadata:
    """Every retained snapshot's manifests (read from their manifest lists): the specs they
    use. A snapshot a writer adds later lists the manifests of the snapshot it builds on
    (retained, so counted) plus new ones in the default spec, which is never removed."""
    expired = set(plan.snapshot_ids)
    used = {manifest.partition_spec_id for snapshot in table.metadata.snapshots if snapshot.snapshot_id not in expired
            for manifest in snapshot.manifests(table.io)}
    return UnusedMetadata(frozenset(spec.spec_id for spec in table.metadata.partition_specs), frozenset(used))


def _unused_ids(base: JavaObject, unused: UnusedMetadata, expired: set[int]) -> tuple[set[int], set[int]]:
    """The specs `unused` found unused and the schemas no snapshot left in `base` was written
    with, never the default spec or the current schema."""
    default_spec, current_schema = int(base.defaultSpecId()), int(base.currentSchemaId())
    specs = set()
    for spec in base.specs():
        spec_id = int(spec.specId())
        if spec_id in unused.known_specs and spec_id not in unused.used_specs and spec_id != default_spec:
            specs.add(spec_id)
    used_schemas = {int(s.schemaId()) for s in base.snapshots() if int(s.snapshotId()) not in expired and s.schemaId() is not None}
    schemas = set()
    for schema in base.schemas():
        schema_id = int(schema.schemaId())
        if schema_id != current_schema and schema_id not in used_schemas:
            schemas.add(schema_id)
    return specs, schemas


def _without_expired(ctx: JobContext, base: JavaObject, plan: ExpiryPlan, unused: UnusedMetadata | None = None) -> JavaObject:
    """The table metadata without the planned snapshots and refs (and, when asked, the
    specs and schemas they alone used), built on `base`."""
    refs = {str(name): int(base.ref(name).snapshotId()) for name in base.refs().keySet()}
    if set(refs) != set(plan.refs) or not all(_moved_forward(base, refs[name], planned) for name, planned in plan.refs.items()):
        raise ConflictError("the table's branches or tags changed since planning")
    current = base.currentSnapshot()
    if current is not None and int(current.snapshotId()) in plan.snapshot_ids:
        raise ConflictError("the current snapshot was planned for expiry")
    return metadata_without(ctx.spark, base, refs=plan.refs_to_remove, snapshot_ids=plan.snapshot_ids,
                            specs_and_schemas=_unused_ids(base, unused, set(plan.snapshot_ids)) if unused is not None else None)
