"""The REWRITE job: combine position delete files into as few as the target size allows,
one group per partition of the data files their entries point at, dropping entries that
no longer apply (their data file is gone, newer than the delete file, or out of its scope).
See `plan` for the grouping and the sequence numbers the new files take.

Iceberg's `rewrite_position_delete_files` was not used: with its defaults it skips groups
below 5 files, and on our CDC tables it wrote as many files as it read (apache/iceberg
#9833), one per data file, where the aim is one per partition.
"""

from __future__ import annotations

import structlog

from maintenance.jobs.context import JobContext
from maintenance.jobs.outcome import COMMITTED, JobOutcome
from maintenance.jobs.publish import Change
from maintenance.jobs.rewrite.plan import RewritePlan
from maintenance.jobs.spec import SCAN_BYTES_PER_S
from maintenance.spark.content_files import ContentFiles
from maintenance.spark.errors import java_errors
from maintenance.spark.file_rows import (
    FIELD_ID,
    check_complete,
    observed,
    read_file_rows,
    row_counts,
)
from maintenance.spark.java_files import JavaFiles
from maintenance.spark.jvm import JavaObject
from maintenance.spark.position_delete_writer import write_position_deletes
from maintenance.spark.rewrites import delete_file_rewrite
from maintenance.table.health import TableHealth
from maintenance.table.position_deletes import DELETE_FILE_PATH_ID, DELETE_POS_ID

log = structlog.get_logger(__name__)
POSITION_BYTES = 48  # a (path, position) entry as Spark handles it


def run(ctx: JobContext, plan: RewritePlan) -> JobOutcome:
    assert ctx.metadata is not None
    records_read, records_live, records_kept, written = _combine(ctx, plan, ctx.staging_dir)
    change, added, bytes_written = _change(ctx, plan, written)
    snapshot_id = ctx.publish(change)
    return JobOutcome(
        COMMITTED,
        snapshot_id=snapshot_id,
        counters={
            **plan.counters(),
            "delete_files_removed": len(plan.deletes),
            "position_delete_files_added": added,
            "position_delete_records_read": records_read,
            "position_delete_records_written": records_kept,
            "dangling_records_dropped": records_read - records_live,  # they applied to nothing
            "duplicate_records_dropped": records_live - records_kept,
            "bytes_written": bytes_written,
            "snapshots_published": 1,
        },
    )


def estimate(health: TableHealth) -> float:
    """Reads and writes every position."""
    return 3.0 + 2 * health.position_delete_records * POSITION_BYTES / SCAN_BYTES_PER_S


def _combine(ctx: JobContext, plan: RewritePlan, output_dir: str) -> tuple[int, int, int, dict[str, list[str]]]:
    """Spark: read the entries, keep those that apply, write them by their data file's partition."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    spark = ctx.spark
    part_ids = {key: i for i, key in enumerate(plan.partitions)}
    schema = T.StructType([
        T.StructField("file_path", T.StringType(), True, {FIELD_ID: DELETE_FILE_PATH_ID}),
        T.StructField("pos", T.LongType(), True, {FIELD_ID: DELETE_POS_ID}),
    ])
    with java_errors("REWRITE scan"):
        entries = read_file_rows(
            spark, [d.path for d in plan.deletes], schema, index="s_idx",
            attributes=[(i, d.seq, -1 if d.referenced_data_file else part_ids.get(d.partition_key, -1), d.referenced_data_file) for i, d in enumerate(plan.deletes)],
            attribute_schema=T.StructType([
                T.StructField("s_idx", T.IntegerType()), T.StructField("s_seq", T.LongType()),
                T.StructField("s_part", T.IntegerType()), T.StructField("s_ref", T.StringType()),
            ]),
        )
        read_obs, matched_obs, kept_obs = Observation(), Observation(), Observation()
        unobserved = entries
        entries = entries.observe(read_obs, F.count(F.lit(1)).alias("rows"), F.count("s_idx").alias("mapped"))
        live = spark.createDataFrame(
            [(d.path, d.seq, part_ids[d.partition_key]) for d in plan.data],
            T.StructType([T.StructField("d_path", T.StringType()), T.StructField("d_seq", T.LongType()), T.StructField("d_part", T.IntegerType())]),
        )
        # The exact position-delete rule: readers match an entry to the data file with exactly
        # its path, with a sequence number not above the delete file's, and either the delete
        # file names that one data file or shares its partition.
        applies = (entries.file_path == live.d_path) & (live.d_seq <= entries.s_seq)
        applies = applies & ((entries.s_ref == live.d_path) | (entries.s_part == live.d_part))
        live_entries = entries.join(F.broadcast(live), applies, "inner").select(F.col("d_part").alias("part"), "file_path", "pos")
        kept = live_entries.observe(matched_obs, F.count(F.lit(1)).alias("rows")).distinct().observe(kept_obs, F.count(F.lit(1)).alias("rows"))
        bytes_per_record = max(1.0, sum(d.size for d in plan.deletes) / max(1, sum(d.records for d in plan.deletes)))
        written = write_position_deletes(kept, "part", output_dir, max_records_per_file=max(1, int(plan.target_size / bytes_per_record)))
        records_read = sum(d.records for d in plan.deletes)
        check_complete("position delete", observed(read_obs, lambda: row_counts(unobserved, "s_idx")), records_read)
        matched = observed(matched_obs, lambda: {"rows": live_entries.count()})["rows"]
        kept_rows = observed(kept_obs, lambda: {"rows": live_entries.distinct().count()})["rows"]
    return records_read, int(matched), int(kept_rows), written


def _change(ctx: JobContext, plan: RewritePlan, written: dict[str, list[str]]) -> tuple[Change, int, int]:
    """One RewriteFiles: every planned file out, the combined ones in with their group's sequence number."""
    spark, table = ctx.spark, ctx.table.java
    java_files = JavaFiles(spark, table, plan.snapshot_id)
    old = java_files.delete_files({d.path for d in plan.deletes})
    sample_paths = {}
    for d in plan.data:
        sample_paths.setdefault(d.partition_key, d.path)
    samples = java_files.data_files(set(sample_paths.values()))
    builder = ContentFiles(spark, table)
    added: list[tuple[JavaObject, int]] = []
    for part_text, locations in written.items():
        part = int(part_text)
        spec_id, values = plan.partitions[part]
        partition = samples[sample_paths[plan.partitions[part]]].partition() if values else None
        added += [(builder.position_delete_file(location, spec_id, partition), plan.sequence_numbers[part]) for location in locations]
    build = delete_file_rewrite(spark, plan.snapshot_id, [old[d.path] for d in plan.deletes], added)
    return Change("REWRITE", build), len(added), sum(int(f.fileSizeInBytes()) for f, _ in added)
