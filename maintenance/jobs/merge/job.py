"""The MERGE job: rewrite every data file the chosen deletes touch, and drop those deletes.

Each partition's target files are read through Iceberg's own reader (so every delete that
applies is applied) from exactly the planned scan tasks, staged with Iceberg's
`ScanTaskSetManager`, and written back packed toward the target file size through
Iceberg's rewrite coordinator (nothing is committed by the write). One `RewriteFiles`
then replaces the data files and removes the delete files, with
`dataSequenceNumber(planning snapshot's)`: equality deletes committed meanwhile keep
applying to the new files, so neither side must retry, and Iceberg ignores them when it
validates. A position delete committed meanwhile on a replaced file makes the commit fail
cleanly; a rerun replans.

Iceberg's stock `rewrite_data_files` keeps the delete files (apache/iceberg #4127, #8743,
#6126) and gives new files a new sequence number unless told otherwise; here the delete
files are removed explicitly, which is safe because every data file they may apply to is
among those rewritten.
"""

from __future__ import annotations

import uuid

import structlog

from maintenance.catalogs import load_table
from maintenance.errors import UsageError
from maintenance.jobs.context import JobContext
from maintenance.jobs.merge.plan import MergePlan, plan_merge
from maintenance.jobs.result import COMMITTED, NOOP, JobOutcome
from maintenance.spark.errors import java_errors
from maintenance.spark.java_files import JavaFiles
from maintenance.spark.jvm import JavaObject, java_long, jvm, static_call

log = structlog.get_logger(__name__)
TARGET_SIZE_PROPERTY = "write.target-file-size-bytes"
DEFAULT_TARGET_SIZE = 512 * 1024 * 1024


def merge(ctx: JobContext) -> JobOutcome:
    table = load_table(ctx.config, ctx.ref)
    if table.metadata.format_version < 2 or table.metadata.current_snapshot_id is None:
        return JobOutcome(NOOP, counters={"data_files_rewritten": 0, "delete_files_removed": 0})
    if table.metadata.format_version > 2:
        raise UsageError(f"MERGE supports format v2 tables; {ctx.ref} is v{table.metadata.format_version}")
    plan = plan_merge(
        table, table.metadata.current_snapshot_id, partitions=ctx.options.get("partitions", ()), small_file_bytes=ctx.config.health.small_file_bytes
    )
    planned = {"delete_files_planned": len(plan.deletes), "data_files_planned": sum(len(v) for v in plan.targets.values())}
    if plan.empty or ctx.dry_run:
        return JobOutcome(NOOP, counters={**planned, "data_files_rewritten": 0, "delete_files_removed": 0})

    target_size = int(table.properties.get(TARGET_SIZE_PROPERTY, DEFAULT_TARGET_SIZE))
    spark, fenced = ctx.spark, ctx.table
    tasks = _scan_tasks(fenced.java, plan)
    rewritten, new_files = [], []
    with java_errors("MERGE rewrite"):
        for key, refs in plan.targets.items():
            group = [tasks[r.path] for r in refs]
            rewritten += [t.file() for t in group]
            new_files += _rewrite_group(ctx, fenced.java, group, target_size)
        deletes = JavaFiles(spark, fenced.java, plan.snapshot_id).delete_files({d.path for d in plan.deletes})
        operation = fenced.java.newRewrite().validateFromSnapshot(java_long(spark, plan.snapshot_id))
        operation = operation.dataSequenceNumber(java_long(spark, plan.sequence_number))
        for data_file in rewritten:
            operation = operation.deleteFile(data_file)
        for data_file in new_files:
            operation = operation.addFile(data_file)
        for delete_file in deletes.values():
            operation = operation.deleteFile(delete_file)
    progress = ctx.options.get("progress")
    if progress is not None:
        progress({"stage": "rewritten", "data_files_added": len(new_files)})
    snapshot_id = fenced.commit(operation, "MERGE")
    return JobOutcome(
        COMMITTED,
        snapshot_id=snapshot_id,
        counters={
            **planned,
            "data_files_rewritten": len(rewritten),
            "data_files_added": len(new_files),
            "delete_files_removed": len(deletes),
            "bytes_written": sum(int(f.fileSizeInBytes()) for f in new_files),
            "partitions_rewritten": len(plan.targets),
        },
    )


def _scan_tasks(table: JavaObject, plan: MergePlan) -> dict[str, JavaObject]:
    """Iceberg's own scan tasks (each with the deletes that apply to it) for the target files."""
    wanted = {r.path for refs in plan.targets.values() for r in refs}
    found: dict[str, JavaObject] = {}
    with java_errors("MERGE planning"):
        tasks = table.newScan().useSnapshot(plan.snapshot_id).planFiles()
        try:
            iterator = tasks.iterator()
            while iterator.hasNext() and len(found) < len(wanted):
                task = iterator.next()
                location = str(task.file().location())
                if location in wanted:
                    found[location] = task
        finally:
            tasks.close()
    missing = wanted - set(found)
    if missing:
        raise UsageError(f"MERGE could not plan {sorted(missing)[0]}: not in the snapshot's scan")
    return found


def _rewrite_group(ctx: JobContext, table: JavaObject, tasks: list[JavaObject], target_size: int) -> list[JavaObject]:
    """Read the tasks (deletes applied) and write them packed; returns the new data files, uncommitted."""
    spark = ctx.spark
    group_id = str(uuid.uuid4())
    staged = jvm(spark).java.util.ArrayList()
    for task in tasks:
        staged.add(task)
    cache, manager, coordinator = (static_call(spark, f"org.apache.iceberg.spark.{name}", "get") for name in ("SparkTableCache", "ScanTaskSetManager", "FileRewriteCoordinator"))
    try:
        cache.add(group_id, table)
        manager.stageTasks(table, group_id, staged)
        frame = (
            spark.read.format("iceberg")
            .option("scan-task-set-id", group_id)
            .option("split-size", str(target_size))
            .option("file-open-cost", "0")
            .load(group_id)
        )
        (
            frame.write.format("iceberg")
            .option("rewritten-file-scan-task-set-id", group_id)
            .option("target-file-size-bytes", str(target_size))
            .option("distribution-mode", "none")
            .mode("append")
            .save(group_id)
        )
        return list(coordinator.fetchNewFiles(table, group_id))
    finally:
        cache.remove(group_id)
        manager.removeTasks(table, group_id)
        coordinator.clearRewrite(table, group_id)
