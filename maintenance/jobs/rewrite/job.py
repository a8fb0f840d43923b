"""The REWRITE job: combine each partition's position deletes into as few files as the target
size allows, dropping entries whose data file is gone, with the highest sequence number of
the files replaced (so every kept entry still applies to its data file).

Iceberg's `rewrite_position_delete_files` was not used: with its defaults it skips groups
below 5 files, and on our CDC tables it wrote as many files as it read (apache/iceberg
#9833), one per data file, where the aim is one per partition.
"""

from __future__ import annotations

import re
from collections import defaultdict

import structlog

from maintenance.catalogs import load_table
from maintenance.jobs.context import JobContext
from maintenance.jobs.result import COMMITTED, NOOP, JobOutcome
from maintenance.jobs.rewrite.plan import RewritePlan, plan_rewrite
from maintenance.spark.content_files import ContentFiles
from maintenance.spark.errors import java_errors
from maintenance.spark.file_rows import FIELD_ID, check_complete, observed, read_file_rows, row_counts
from maintenance.spark.files import list_files
from maintenance.spark.java_files import JavaFiles
from maintenance.spark.jvm import java_long
from maintenance.position_deletes import DELETE_FILE_PATH_ID, DELETE_POS_ID
from maintenance.spark.position_delete_writer import write_position_deletes

log = structlog.get_logger(__name__)
_PART = re.compile(r"/part=(?P<part>\d+)/")


def rewrite(ctx: JobContext) -> JobOutcome:
    table = load_table(ctx.config, ctx.ref)
    if table.metadata.format_version != 2 or table.metadata.current_snapshot_id is None:
        return JobOutcome(NOOP, counters={"delete_files_removed": 0, "position_delete_files_added": 0})
    plan = plan_rewrite(table, table.metadata.current_snapshot_id, partitions=ctx.options.get("partitions", ()))
    planned = {"partitions_planned": len(plan.groups), "position_delete_files_planned": sum(len(g.deletes) for g in plan.groups)}
    if plan.empty or ctx.dry_run:
        return JobOutcome(NOOP, counters={**planned, "delete_files_removed": 0, "position_delete_files_added": 0})

    output_dir = f"{table.location().rstrip('/')}/data/icemaint-rewrite-{ctx.run_id}"
    records_read, records_live, records_kept = _combine(ctx, plan, output_dir)
    written = list_files(ctx.spark, output_dir)
    snapshot_id, added, bytes_written = _commit(ctx, plan, written)
    return JobOutcome(
        COMMITTED,
        snapshot_id=snapshot_id,
        counters={
            **planned,
            "delete_files_removed": planned["position_delete_files_planned"],
            "position_delete_files_added": added,
            "position_delete_records_read": records_read,
            "position_delete_records_written": records_kept,
            "dangling_records_dropped": records_read - records_live,  # their data file is gone
            "duplicate_records_dropped": records_live - records_kept,
            "bytes_written": bytes_written,
        },
    )


def _combine(ctx: JobContext, plan: RewritePlan, output_dir: str) -> tuple[int, int, int]:
    """Spark: read the entries, keep those whose data file is live and older, write per partition."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    spark = ctx.spark
    sources = [(d, part) for part, group in enumerate(plan.groups) for d in group.deletes]
    schema = T.StructType([
        T.StructField("file_path", T.StringType(), True, {FIELD_ID: DELETE_FILE_PATH_ID}),
        T.StructField("pos", T.LongType(), True, {FIELD_ID: DELETE_POS_ID}),
    ])
    with java_errors("REWRITE scan"):
        entries = read_file_rows(
            spark, [d.path for d, _ in sources], schema, index="s_idx",
            attributes=[(i, d.seq, part) for i, (d, part) in enumerate(sources)],
            attribute_schema=T.StructType([T.StructField("s_idx", T.IntegerType()), T.StructField("s_seq", T.LongType()), T.StructField("part", T.IntegerType())]),
        )
        read_obs, matched_obs, kept_obs = Observation(), Observation(), Observation()
        unobserved = entries
        entries = entries.observe(read_obs, F.count(F.lit(1)).alias("rows"), F.count("s_idx").alias("mapped"))
        live = spark.createDataFrame(
            [(d.path, d.seq) for d in plan.data],
            T.StructType([T.StructField("d_path", T.StringType()), T.StructField("d_seq", T.LongType())]),
        )
        # Readers match entries to data files by the exact path string; an entry applies to
        # a data file with a lower or equal sequence number than its delete file's.
        live_entries = entries.join(live, (entries.file_path == live.d_path) & (live.d_seq <= entries.s_seq), "inner").select("part", "file_path", "pos")
        kept = live_entries.observe(matched_obs, F.count(F.lit(1)).alias("rows")).distinct().observe(kept_obs, F.count(F.lit(1)).alias("rows"))
        bytes_per_record = max(1.0, sum(d.size for d, _ in sources) / max(1, sum(d.records for d, _ in sources)))
        write_position_deletes(kept, "part", output_dir, max_records_per_file=max(1, int(plan.target_size / bytes_per_record)))
        records_read = sum(d.records for d, _ in sources)
        check_complete("position delete", observed(read_obs, lambda: row_counts(unobserved, "s_idx")), records_read)
        matched = observed(matched_obs, lambda: {"rows": live_entries.count()})["rows"]
        written = observed(kept_obs, lambda: {"rows": live_entries.distinct().count()})["rows"]
    return records_read, int(matched), int(written)


def _commit(ctx: JobContext, plan: RewritePlan, written: list[str]) -> tuple[int, int, int]:
    """One RewriteFiles: every planned file out, the combined ones in with their group's sequence number."""
    spark, table = ctx.spark, ctx.table
    by_part: dict[int, list[str]] = defaultdict(list)
    for location in written:
        match = _PART.search(location)
        if match is None:
            raise ValueError(f"unexpected file in REWRITE output: {location}")
        by_part[int(match["part"])].append(location)
    old = JavaFiles(spark, table.java, plan.snapshot_id).delete_files({d.path for g in plan.groups for d in g.deletes})
    builder = ContentFiles(spark, table.java)
    operation = table.java.newRewrite().validateFromSnapshot(java_long(spark, plan.snapshot_id))
    added, bytes_written = 0, 0
    for part, group in enumerate(plan.groups):
        sample = old[group.deletes[0].path]
        for delete in group.deletes:
            operation = operation.deleteFile(old[delete.path])
        for location in by_part.get(part, []):
            new_file = builder.position_delete_file(location, group.key[0], sample.partition())
            operation = operation.addFile(new_file, java_long(spark, group.seq))
            added += 1
            bytes_written += int(new_file.fileSizeInBytes())
    try:
        snapshot_id = table.commit(operation, "REWRITE position deletes")
    except Exception:
        log.warning("REWRITE did not commit; its files stay for orphan cleanup", output=written[:1])
        raise
    return snapshot_id, added, bytes_written
