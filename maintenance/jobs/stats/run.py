"""Running STATS: Iceberg's own actions compute the statistics and register them.

`ComputeTableStatsSparkAction` sketches the columns' distinct values (theta sketches, one
Spark job reading the snapshot) into a Puffin file beside the metadata and registers it for
the snapshot; `ComputePartitionStatsSparkAction` writes the partition statistics file. Both
are given the fenced table, so their commits pass the fence like every other
(`JobContext.commit_by_action`): a holder that lost its lease registers nothing. Neither
adds a snapshot or touches a data or delete file, which is what verification checks.
"""

from __future__ import annotations

import structlog

from maintenance.catalogs import load_table
from maintenance.errors import IcemaintError, SparkJobError
from maintenance.jobs.stats.plan import StatsPlan
from maintenance.run.context import JobContext
from maintenance.run.outcome import COMMITTED, JobOutcome
from maintenance.spark.iceberg_actions import compute_partition_stats, compute_table_stats
from maintenance.spark.jvm import JavaObject
from maintenance.table.paths import normalise

log = structlog.get_logger(__name__)


def run(ctx: JobContext, plan: StatsPlan) -> JobOutcome:
    spark = ctx.spark
    assert plan.snapshot_id is not None  # an empty plan does not run
    snapshot_id = plan.snapshot_id
    written: list[str] = []
    data_files, data_bytes = _snapshot_data(ctx, plan.snapshot_id)
    if plan.columns:
        ctx.progress("sketching columns", columns=len(plan.columns), data_files_to_read=data_files, bytes_to_read=data_bytes)
        def sketch(table: JavaObject) -> None:
            written.append(compute_table_stats(spark, table, snapshot_id, plan.columns))

        ctx.commit_by_action(sketch, "STATS table statistics")
    if plan.partition_stats:
        ctx.progress("computing partition statistics", data_files=data_files)

        def partitions(table: JavaObject) -> None:
            path = compute_partition_stats(spark, table, snapshot_id)
            if path is not None:
                written.append(path)

        try:
            ctx.commit_by_action(partitions, "STATS partition statistics")
        except IcemaintError as exc:
            if "Status Code: 403" not in str(exc):
                raise
            written_first = f" (the sketches of snapshot {plan.snapshot_id} were registered)" if written else ""
            raise SparkJobError(f"STATS partition statistics: the object store refused to write the partition statistics file (403){written_first}; "
                                "a store that accepts only the object names it expects refuses it (SeaweedFS's table buckets accept no "
                                "metadata/partition-stats-*.parquet): write the sketches alone with --no-partition-stats "
                                "(policy: partition_stats: false)") from exc
    newest = load_table(ctx.config, ctx.ref).metadata
    registered = {normalise(f.statistics_path): f.file_size_in_bytes for f in [*newest.statistics, *newest.partition_statistics]}
    sizes = [registered.get(normalise(path), 0) for path in written]
    log.info("statistics registered", snapshot_id=plan.snapshot_id, files=written)
    what = [f"distinct counts of {len(plan.columns)} column(s) ({', '.join(plan.columns)})"] if plan.columns else []
    what += ["partition statistics"] if plan.partition_stats and len(written) > len(what) else []
    effect = f"statistics of snapshot {plan.snapshot_id}: {' and '.join(what)}; statistics add no snapshot"
    return JobOutcome(COMMITTED, counters={**plan.counters(), "statistics_files_written": sum(1 for s in sizes if s), "statistics_bytes_written": sum(sizes)},
                      effect=effect)


def _snapshot_data(ctx: JobContext, snapshot_id: int) -> tuple[int, int]:
    """The data files and bytes the sketches read: the planned snapshot's, as its summary
    counts them (no manifest read)."""
    snapshot = ctx.metadata.table.metadata.snapshot_by_id(snapshot_id)
    summary = snapshot.summary.additional_properties if snapshot is not None and snapshot.summary is not None else {}
    return int(summary.get("total-data-files") or 0), int(summary.get("total-files-size") or 0)

