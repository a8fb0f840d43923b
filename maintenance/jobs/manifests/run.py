"""The MANIFESTS job: rewrite a planned partition spec's manifests, through the fence.

Two ways, one commit per spec either way, on the table it is given (the fenced table, so
the fence sees every commit attempt; with verification on, the commit is staged,
`FencedTable.stage_performed`, and the live entries of the parent and of the staged
snapshot must be the same multiset before it becomes current: `publish/proofs/entries.py`, no
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
from maintenance.jobs.manifests.plan import ManifestsPlan
from maintenance.publish.publisher import Change
from maintenance.publish.verifier import ENTRIES
from maintenance.run.context import JobContext
from maintenance.run.outcome import COMMITTED, JobOutcome
from maintenance.spark.data_manifests import rewrite_data_manifests
from maintenance.spark.iceberg_actions import rewrite_manifests
from maintenance.spark.jvm import JavaObject


def run(ctx: JobContext, plan: ManifestsPlan) -> JobOutcome:
    spark = ctx.spark
    done = {"manifests_rewritten": 0, "manifests_added": 0}
    snapshot_id = None
    for spec_id in plan.specs:

        def rewrite(table: JavaObject, spec_id: int = spec_id) -> None:
            _count(done, spec_id, *rewrite_manifests(spark, table, spec_id, ctx.table.fence.summary()))

        def rewrite_keeping_row_ids(table: JavaObject, spec_id: int = spec_id) -> None:
            rewrite_data_manifests(spark, table, spec_id, plan.clusters.get(spec_id), ctx.table.fence.summary())
            table.refresh()
            summary = _newest_snapshot(table).summary()
            _count(done, spec_id, int(summary.get("manifests-replaced") or 0), int(summary.get("manifests-created") or 0))

        perform = rewrite_keeping_row_ids if ctx.metadata.files.format_version >= 3 or spec_id in plan.clusters else rewrite
        planned = plan.specs[spec_id]
        ctx.progress("rewriting manifests", spec_id=spec_id, manifests_to_rewrite=len(planned), bytes_to_rewrite=sum(m.length for m in planned))
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
