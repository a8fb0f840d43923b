"""The CONVERT job body: plan from metadata, find positions with Spark, commit through the fence."""

from __future__ import annotations

import structlog

from maintenance.catalogs import load_table
from maintenance.errors import UsageError
from maintenance.jobs.context import JobContext
from maintenance.jobs.convert.commit import commit_all, commit_units
from maintenance.jobs.convert.plan import plan_convert
from maintenance.jobs.convert.scan import find_positions
from maintenance.jobs.result import COMMITTED, NOOP, JobOutcome
from maintenance.spark.files import list_files

log = structlog.get_logger(__name__)
NAME_MAPPING = "schema.name-mapping.default"


def convert(ctx: JobContext) -> JobOutcome:
    table = load_table(ctx.config, ctx.ref)
    if table.metadata.format_version < 2 or table.metadata.current_snapshot_id is None:
        return JobOutcome(NOOP, counters={"equality_delete_files_removed": 0})
    if table.metadata.format_version > 2:
        raise UsageError(f"CONVERT writes v2 position deletes; {ctx.ref} is format v{table.metadata.format_version} (deletion vectors are not supported yet)")
    if NAME_MAPPING in table.properties:
        raise UsageError(f"{ctx.ref} maps columns by name ({NAME_MAPPING}): its files may lack field ids, which CONVERT reads by")

    plan = plan_convert(table, table.metadata.current_snapshot_id, partitions=ctx.options.get("partitions", ()))
    planned = {
        "equality_delete_files_planned": len(plan.deletes),
        "data_files_scanned": len(plan.targets),
        "data_bytes_scanned": sum(t.size for t in plan.targets),
    }
    if plan.empty or ctx.dry_run:
        return JobOutcome(NOOP, counters={**planned, "equality_delete_files_removed": 0, "position_delete_files_added": 0})

    output_dir = f"{table.location().rstrip('/')}/data/icemaint-convert-{ctx.run_id}"
    log.info("converting equality deletes", deletes=len(plan.deletes), data_files=len(plan.targets), output=output_dir)
    scan = find_positions(ctx.spark, plan, table.schema(), output_dir)
    written = list_files(ctx.spark, output_dir)
    units = commit_units(plan, scan, written, ctx.options.get("max_files_per_commit"))
    try:
        stats = commit_all(ctx.table, plan, units, scan, on_commit=ctx.options.get("progress"))
    except Exception:
        log.warning("CONVERT did not commit everything; uncommitted position deletes stay for orphan cleanup", output=output_dir)
        raise
    return JobOutcome(
        COMMITTED,
        snapshot_id=stats.snapshot_id,
        counters={
            **planned,
            "equality_delete_files_removed": stats.equality_delete_files_removed,
            "equality_delete_records_removed": stats.equality_delete_records_removed,
            "position_delete_files_added": stats.position_delete_files_added,
            "position_delete_records_added": stats.position_delete_records_added,
            "data_rows_read": scan.data_rows_read,
            "bytes_written": stats.bytes_written,
            "commits": stats.commits,
        },
    )
