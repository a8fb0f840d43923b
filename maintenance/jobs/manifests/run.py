"""The MANIFESTS job: rewrite a planned partition spec's manifests, through the fence.

Two ways, one commit per spec either way, on the table it is given (the fenced table, so
the fence sees every commit attempt; with verification on, the commit is staged,
`FencedTable.stage_performed`, and the live entries of the parent and of the staged
snapshot must be the same multiset before it becomes current: `jobs/verification.py`, no
data file read):
- Iceberg's `rewriteManifests` Spark action (format 1 and 2): it reads the spec's live
  entries with Spark, sorts them by partition and writes manifests of about the target
  size, data and delete manifests;
- Iceberg's core `RewriteManifests` (format 3, and any format with `sort_by`): the spec's
  data manifests, read and written on the driver, each entry into the cluster it is given
  (`DataManifestsOfSpec`: one, or for `sort_by` one run of the sorted partitions per new
  manifest, `clusters`), delete manifests left as they are. On format 3 the Spark action
  of Iceberg 1.10 cannot serve: it writes the moved entries without their first row id (its
  `SparkContentFile` drops it; apache/iceberg#16699 fixes it after 1.10.2), so every row
  would get a new `_row_id`, which the spec's row lineage forbids for rows that only move;
  the core API writes each entry with the id its old manifest gave it, and the
  verification's entries include every entry's first row id and sequence numbers, so a
  renumbering would not verify.

Iceberg checks that the new manifests hold exactly the live files the replaced ones held,
and fails the commit if a replaced manifest left the table meanwhile (e.g. a writer's
manifest merge): nothing lands, and a rerun plans again.
"""


from __future__ import annotations

from maintenance.errors import ConflictError
from maintenance.jobs.context import JobContext
from maintenance.jobs.manifests.plan import ManifestsPlan
from maintenance.jobs.outcome import COMMITTED, JobOutcome
from maintenance.jobs.publish import Change
from maintenance.jobs.verification import ENTRIES
from maintenance.spark.java_helpers import new_helper
from maintenance.spark.jvm import JavaObject, jvm
from maintenance.table.health import TableHealth

SECONDS_PER_MANIFEST = 0.05  # reading and writing small Avro files, with Spark's job overhead per run


def run(ctx: JobContext, plan: ManifestsPlan) -> JobOutcome:
    spark = ctx.spark
    actions = jvm(spark).org.apache.iceberg.spark.actions.SparkActions.get(spark._jsparkSession)  # type: ignore[attr-defined]
    done = {"manifests_rewritten": 0, "manifests_added": 0}
    snapshot_id = None
    for spec_id in plan.specs:

        def rewrite(table: JavaObject, spec_id: int = spec_id) -> None:
            action = actions.rewriteManifests(table).specId(spec_id)
            for key, value in ctx.table.fence.summary().items():
                action = action.snapshotProperty(key, value)
            result = action.execute()
            _count(done, spec_id, len(list(result.rewrittenManifests())), len(list(result.addedManifests())))

        def rewrite_keeping_row_ids(table: JavaObject, spec_id: int = spec_id) -> None:
            chooser = new_helper(spark, "DataManifestsOfSpec").of(spec_id)
            if spec_id in plan.clusters:
                clusters = jvm(spark).java.util.HashMap()
                for path, cluster in plan.clusters[spec_id].items():
                    clusters.put(path, cluster)
                chooser = chooser.clustered(table.specs().get(spec_id), clusters)
            update = table.rewriteManifests().rewriteIf(chooser).clusterBy(chooser)
            for key, value in ctx.table.fence.summary().items():
                update = update.set(key, value)
            update.commit()
            table.refresh()
            summary = _newest_snapshot(table).summary()
            _count(done, spec_id, int(summary.get("manifests-replaced") or 0), int(summary.get("manifests-created") or 0))

        perform = rewrite_keeping_row_ids if ctx.metadata.files.format_version >= 3 or spec_id in plan.clusters else rewrite
        snapshot_id = ctx.publish(Change("MANIFESTS", perform=perform, proof=ENTRIES))
    return JobOutcome(COMMITTED, snapshot_id=snapshot_id, counters={**plan.counters(), **done, "snapshots_published": len(plan.specs)})


def _count(done: dict[str, int], spec_id: int, rewritten: int, added: int) -> None:
    if rewritten == 0:
        raise ConflictError(f"MANIFESTS found nothing to rewrite in spec {spec_id} any more (the table moved); run it again")
    done["manifests_rewritten"] += rewritten
    done["manifests_added"] += added


def _newest_snapshot(table: JavaObject) -> JavaObject:
    """The snapshot committed (or staged) last: the highest sequence number."""
    newest = None
    iterator = table.snapshots().iterator()
    while iterator.hasNext():
        snapshot = iterator.next()
        if newest is None or snapshot.sequenceNumber() > newest.sequenceNumber():
            newest = snapshot
    assert newest is not None
    return newest


def estimate(health: TableHealth) -> float:
    return 5.0 + health.manifests * SECONDS_PER_MANIFEST
