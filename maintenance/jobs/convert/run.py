"""Running CONVERT: find the planned deletes' positions with Spark, publish one change."""

from __future__ import annotations

from collections.abc import Mapping

import structlog

from maintenance.jobs.convert.commit import convert_commit, dv_commit
from maintenance.jobs.convert.local_scan import NotLocal, find_positions_locally, local_bytes, local_refusal
from maintenance.jobs.convert.plan import ConvertPlan
from maintenance.jobs.convert.planned_pairs import equality_pairs
from maintenance.jobs.convert.scan import ScanResult, find_positions, key_column, needs_iceberg_pairs
from maintenance.run.context import JobContext
from maintenance.run.outcome import COMMITTED, JobOutcome
from maintenance.spark.errors import java_errors
from maintenance.spark.java_files import JavaFiles, LazyFiles, in_background
from maintenance.spark.jvm import JavaObject, java_long

log = structlog.get_logger(__name__)


def run(ctx: JobContext, plan: ConvertPlan) -> JobOutcome:
    table = ctx.metadata.table
    schema = table.schema()
    for field_ids in {d.equality_ids for d in plan.deletes}:
        for field_id in field_ids:
            key_column(schema, field_id)  # an unsupported key type fails before any Spark work

    log.info("converting equality deletes", deletes=len(plan.deletes), data_files=len(plan.targets), output=ctx.output_dir)
    v3 = ctx.metadata.files.format_version >= 3
    floating = needs_iceberg_pairs(schema, plan.deletes)
    # Spark (for the commit, the verification, and the Spark engine) starts while the driver
    # scans, which needs no JVM unless a key is floating-point (Iceberg's own pairs, below).
    ctx.start_spark_early()
    scan = None if floating else _scan_in_driver(ctx, plan, None, collect=v3)

    fenced = ctx.table
    java_files = JavaFiles(ctx.spark, fenced.real, plan.snapshot_id)
    removed_keys = {d.path for d in (*plan.deletes, *plan.position_deletes)}
    java_deletes = in_background(lambda: java_files.delete_files(removed_keys))  # while the driver scans, if it does
    java_targets = LazyFiles(lambda: java_files.data_files({t.path for t in plan.targets}))  # the driver's scan of a v2 table needs few or none
    removed = {
        **plan.counters(),
        "equality_delete_files_removed": len(plan.deletes),
        "equality_delete_records_removed": sum(d.records for d in plan.deletes),
    }
    if scan is None:
        pairs = None
        if floating:
            with java_errors("CONVERT planning"):
                pairs = equality_pairs(fenced.real, java_long(ctx.spark, plan.snapshot_id), {t.path for t in plan.targets})
        scan = _scan(ctx, plan, java_targets, java_deletes, pairs, collect=v3, driver_tried=not floating)
    ctx.phase("write")  # the positions are found (and, on format 2, written with them)
    if v3:
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
        counters={**removed, **counters, "data_rows_read": scan.data_rows_read, "snapshots_published": 1, "scan_engine": scan.engine},
    )


def _scan_in_driver(ctx: JobContext, plan: ConvertPlan, pairs: set[tuple[str, str]] | None, *, collect: bool) -> ScanResult | None:
    """The positions found in the driver (`local_scan`), or None when this conversion is not
    the driver's (too big, or a file or key it does not read: the reason is logged)."""
    table = ctx.metadata.table
    schema = table.schema()
    size = local_bytes(plan)
    refusal = local_refusal(plan, schema) or (f"{size} bytes to read, above local_max_bytes" if size > plan.local_max_bytes else None)
    if refusal is None:
        try:
            scan = find_positions_locally(table.io, schema, table.name_mapping(), plan, ctx.output_dir, plan.target_size, collect=collect,
                                          iceberg_pairs=pairs)
            scan.engine = "driver"
            return scan
        except NotLocal as exc:
            refusal = str(exc)
    log.info("finding positions with Spark", reason=refusal)
    return None


def _scan(ctx: JobContext, plan: ConvertPlan, java_targets: Mapping[str, JavaObject], java_deletes: Mapping[str, JavaObject],
          pairs: set[tuple[str, str]] | None, *, collect: bool, driver_tried: bool) -> ScanResult:
    """The positions, found in the driver when the conversion is small enough and the driver
    reads every file of it (`local_scan`; `driver_tried`: it was asked already), else by a
    Spark job (`scan`)."""
    scan = None if driver_tried else _scan_in_driver(ctx, plan, pairs, collect=collect)
    if scan is not None:
        return scan
    return find_positions(ctx.spark, ctx.table.real, plan, ctx.metadata.table.schema(), java_targets, java_deletes, ctx.output_dir, plan.target_size,
                          collect=collect, iceberg_pairs=pairs)

