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

from maintenance.errors import ConflictError
from maintenance.jobs.deletion_vectors.build import NewDeletes, build_dvs
from maintenance.jobs.rewrite.plan import RewritePlan
from maintenance.publish.publisher import Change
from maintenance.publish.verifier import DELETED_ROWS, POSITIONS
from maintenance.run.context import JobContext
from maintenance.run.outcome import COMMITTED, JobOutcome
from maintenance.spark.content_files import ContentFiles
from maintenance.spark.errors import java_errors
from maintenance.spark.file_rows import observed
from maintenance.spark.java_files import JavaFiles
from maintenance.spark.jvm import JavaObject
from maintenance.spark.position_delete_writer import write_position_deletes
from maintenance.spark.position_entries import live_position_entries
from maintenance.spark.rewrite_files import delete_file_rewrite
from maintenance.spark.validators import all_of, no_new_dvs_for, still_live

log = structlog.get_logger(__name__)


def run(ctx: JobContext, plan: RewritePlan) -> JobOutcome:
    if plan.to_deletion_vectors:
        return to_deletion_vectors(ctx, plan)
    ctx.phase("write")  # the delete files are read and written in one pass
    records_read, records_live, records_kept, written = _combine(ctx, plan, ctx.output_dir)
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


def to_deletion_vectors(ctx: JobContext, plan: RewritePlan) -> JobOutcome:
    """Format 3: the planned v2 files' entries into one DV per data file they apply to
    (merged with nothing else: a file with a DV is not reached by v2 files), the DVs of a
    data file that has several into one holding the positions of them all (each applied to
    the file, so their union is what a reader that accepted them would delete; the new DV
    takes the highest of their sequence numbers: `jobs.deletion_vectors`), the v2 files and
    the dangling DVs out, in one commit. Entries are read on the driver, each file once
    (`jobs.deletion_vectors`): v2 files in a v3 table are what was left from before an
    upgrade, not a stream."""
    spark, table = ctx.spark, ctx.table.java
    java_files = JavaFiles(spark, table, plan.snapshot_id)
    removed = [*plan.deletes, *plan.dangling_dvs]
    java_removed = java_files.delete_files({d.key for d in removed})
    with_dv = {dv.referenced_data_file for dv in ctx.metadata.files.deletion_vectors}
    new = {d.path: NewDeletes() for d in plan.data if d.path not in with_dv}  # v2 files no longer reach a file with a DV
    new.update({path: NewDeletes() for path in plan.duplicated_dvs})  # their DVs, merged into one
    java_data = java_files.data_files(set(new))
    dvs = build_dvs(spark, table, ctx.metadata.table.io, ctx.metadata.files, new, java_data, ctx.run_id)
    merged = {dv.key for dvs_of_file in plan.duplicated_dvs.values() for dv in dvs_of_file}
    unexpected = {d.key for d in dvs.replaced} - merged
    if unexpected:  # a data file with a DV is not reached by v2 files: nothing else can be merged into it
        raise ConflictError(f"REWRITE found v2 position deletes applying to a data file that has a deletion vector ({sorted(unexpected)[0]}); nothing was committed")
    build = delete_file_rewrite(spark, plan.snapshot_id, [*(java_removed[d.key] for d in removed), *dvs.replaced_java], dvs.added)
    validate = all_of(
        still_live(table.io(), plan.snapshot_id, set(new), [*removed, *dvs.replaced], "REWRITE"),
        no_new_dvs_for(table.io(), plan.snapshot_id, dvs.data_paths, "REWRITE"),
    )
    ctx.progress("deletion vectors written", deletion_vectors_added=len(dvs.added))
    # Iceberg's planning refuses a data file with two DVs, so where the parent has one its
    # rows cannot be read: proved by the positions deleted instead (`publish/proofs/positions.py`).
    snapshot_id = ctx.publish(Change("REWRITE", build, validate, proof=POSITIONS if plan.duplicated_dvs else DELETED_ROWS))
    records_read = sum(d.records for d in plan.deletes)
    return JobOutcome(
        COMMITTED,
        snapshot_id=snapshot_id,
        counters={
            **plan.counters(),
            "delete_files_removed": len(removed),
            "deletion_vectors_added": len(dvs.added),
            "deletion_vectors_removed": len(plan.dangling_dvs) + len(dvs.replaced),
            "deletion_vector_records_added": dvs.positions,
            "deletion_vector_records_merged": dvs.merged_positions,
            "position_delete_records_read": records_read,
            "dangling_records_dropped": records_read - dvs.merged_positions,  # entries that applied to no live data file (or repeated one)
            "bytes_written": dvs.bytes_written,
            "snapshots_published": 1,
        },
    )


def _combine(ctx: JobContext, plan: RewritePlan, output_dir: str) -> tuple[int, int, int, dict[str, list[str]]]:
    """Spark: read the entries, keep those that apply, write them by their data file's partition."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    part_ids = {key: i for i, key in enumerate(plan.partitions)}
    with java_errors("REWRITE scan"), live_position_entries(ctx.spark, ctx.table.real, plan.snapshot_id, plan.deletes, plan.data, part_ids) as entries:
        matched_obs, kept_obs = Observation(), Observation()
        kept = entries.frame.observe(matched_obs, F.count(F.lit(1)).alias("rows")).distinct().observe(kept_obs, F.count(F.lit(1)).alias("rows"))
        bytes_per_record = max(1.0, sum(d.size for d in plan.deletes) / max(1, sum(d.records for d in plan.deletes)))
        written = write_position_deletes(kept, ctx.table.real.io(), "part", output_dir, max_records_per_file=max(1, int(plan.target_size / bytes_per_record)))
        records_read = entries.records_read()
        matched = observed(matched_obs, lambda: {"rows": entries.frame.count()})["rows"]
        kept_rows = observed(kept_obs, lambda: {"rows": entries.frame.distinct().count()})["rows"]
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
    return Change("REWRITE", build, proof=DELETED_ROWS), len(added), sum(int(f.fileSizeInBytes()) for f, _ in added)
