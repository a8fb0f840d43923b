"""Running CONVERT: find the planned deletes' positions with Spark, publish one change."""

from __future__ import annotations

import structlog

from maintenance.jobs.context import JobContext
from maintenance.jobs.convert.commit import convert_commit, dv_commit
from maintenance.jobs.convert.plan import ConvertPlan
from maintenance.jobs.convert.scan import find_positions, key_column, needs_iceberg_pairs
from maintenance.jobs.outcome import COMMITTED, JobOutcome
from maintenance.jobs.spec import SCAN_BYTES_PER_S
from maintenance.spark.errors import java_errors
from maintenance.spark.java_files import JavaFiles
from maintenance.spark.jvm import java_long
from maintenance.spark.planned_pairs import equality_pairs
from maintenance.table.health import TableHealth

log = structlog.get_logger(__name__)


def run(ctx: JobContext, plan: ConvertPlan) -> JobOutcome:
    assert ctx.metadata is not None
    table = ctx.metadata.table
    schema = table.schema()
    for field_ids in {d.equality_ids for d in plan.deletes}:
        for field_id in field_ids:
            key_column(schema, field_id)  # an unsupported key type fails before any Spark work

    fenced = ctx.table
    java_files = JavaFiles(ctx.spark, fenced.java, plan.snapshot_id)
    java_deletes = java_files.delete_files({d.path for d in (*plan.deletes, *plan.position_deletes)})
    java_targets = java_files.data_files({t.path for t in plan.targets})
    log.info("converting equality deletes", deletes=len(plan.deletes), data_files=len(plan.targets), output=ctx.staging_dir)
    removed = {
        **plan.counters(),
        "equality_delete_files_removed": len(plan.deletes),
        "equality_delete_records_removed": sum(d.records for d in plan.deletes),
    }
    pairs = None
    if needs_iceberg_pairs(schema, plan.deletes):
        with java_errors("CONVERT planning"):
            pairs = equality_pairs(fenced.java, java_long(ctx.spark, plan.snapshot_id), java_targets)
    if ctx.metadata.files.format_version >= 3:
        scan = find_positions(ctx.spark, fenced.java, plan, schema, java_targets, java_deletes, ctx.staging_dir, plan.target_size, collect=True,
                              iceberg_pairs=pairs)
        change, dvs = dv_commit(fenced.java, ctx.spark, table.io, ctx.metadata.files, plan, scan, java_deletes, java_targets, ctx.run_id)
        ctx.progress("deletion vectors written", deletion_vectors_added=len(dvs.added))
        counters = {
            "delete_files_removed": len(plan.deletes) + len(dvs.replaced),
            "deletion_vectors_added": len(dvs.added),
            "deletion_vectors_removed": len(dvs.replaced),
            "deletion_vector_records_added": dvs.positions,
            "deletion_vector_records_merged": dvs.merged_positions,
            "bytes_written": dvs.bytes_written,
        }
    else:
        scan = find_positions(ctx.spark, fenced.java, plan, schema, java_targets, java_deletes, ctx.staging_dir, plan.target_size, iceberg_pairs=pairs)
        commit = convert_commit(fenced.java, ctx.spark, plan, scan, java_deletes, java_targets)
        ctx.progress("positions written", position_delete_files_added=commit.position_delete_files_added)
        change = commit.change
        counters = {
            "delete_files_removed": len(plan.deletes) + len(plan.position_deletes),
            "position_delete_files_removed": len(plan.position_deletes),
            "position_delete_records_read": scan.position_records_read,
            "position_delete_files_added": commit.position_delete_files_added,
            "position_delete_records_added": commit.position_delete_records_added,
            "bytes_written": commit.bytes_written,
        }
    snapshot_id = ctx.publish(change)
    return JobOutcome(
        COMMITTED,
        snapshot_id=snapshot_id,
        counters={**removed, **counters, "data_rows_read": scan.data_rows_read, "snapshots_published": 1},
    )


def estimate(health: TableHealth) -> float:
    """Reads the key columns of the data files equality deletes may apply to."""
    volume = sum(p.data_bytes for p in health.partitions if p.equality_delete_files)
    return 5.0 + volume / SCAN_BYTES_PER_S
