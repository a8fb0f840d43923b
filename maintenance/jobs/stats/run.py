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
from maintenance.jobs.context import JobContext
from maintenance.jobs.outcome import COMMITTED, JobOutcome
from maintenance.jobs.spec import SCAN_BYTES_PER_S
from maintenance.jobs.stats.plan import StatsPlan
from maintenance.spark.jvm import JavaObject, java_long, jvm
from maintenance.table.health import TableHealth
from maintenance.table.paths import normalise

log = structlog.get_logger(__name__)


def run(ctx: JobContext, plan: StatsPlan) -> JobOutcome:
    spark = ctx.spark
    actions = jvm(spark).org.apache.iceberg.spark.actions.SparkActions.get(spark._jsparkSession)  # type: ignore[attr-defined]
    assert plan.snapshot_id is not None  # an empty plan does not run
    snapshot = java_long(spark, plan.snapshot_id)
    written: list[str] = []
    if plan.columns:
        def sketch(table: JavaObject) -> None:
            columns = spark.sparkContext._gateway.new_array(jvm(spark).java.lang.String, len(plan.columns))  # type: ignore[attr-defined]
            for index, name in enumerate(plan.columns):
                columns[index] = name
            result = actions.computeTableStats(table).snapshot(snapshot).columns(columns).execute()
            written.append(str(result.statisticsFile().path()))

        ctx.commit_by_action(sketch, "STATS table statistics")
    if plan.partition_stats:
        def partitions(table: JavaObject) -> None:
            result = actions.computePartitionStats(table).snapshot(snapshot).execute()
            if result.statisticsFile() is not None:
                written.append(str(result.statisticsFile().path()))

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


def estimate(health: TableHealth) -> float:
    """Reads the snapshot's data once."""
    return 5.0 + health.data_bytes / SCAN_BYTES_PER_S
