"""Writing position delete files from Spark: one folder per group, entries sorted by path
and position, and the files written returned by group."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING
from urllib.parse import unquote

from maintenance import faults
from maintenance.errors import SparkJobError
from maintenance.spark.file_rows import FIELD_ID
from maintenance.spark.files import list_files
from maintenance.table.paths import hadoop_path
from maintenance.table.position_deletes import DELETE_FILE_PATH_ID, DELETE_POS_ID

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def write_position_deletes(entries: DataFrame, group: str, output_dir: str, max_records_per_file: int | None = None,
                           deduplicate: bool = False) -> dict[str, list[str]]:
    """Write `entries` (group, file_path, pos) under output_dir, executors only; returns the
    files written by group value.

    Each group lands in one task, so it becomes one file (or several of at most
    `max_records_per_file` entries), with the reserved field ids readers expect. With
    `deduplicate`, repeated entries are dropped in the same shuffle (the group's hash
    partitioning already clusters them). Spark names a group's folder `<group>=<value>`:
    this is the one place that layout is read back.
    """
    from pyspark.sql import functions as F

    grouped = entries.repartition(group)
    if deduplicate:
        grouped = grouped.dropDuplicates([group, "file_path", "pos"])
    writer = (
        grouped
        .sortWithinPartitions(group, "file_path", "pos")
        .select(
            group,
            F.col("file_path").alias("file_path", metadata={FIELD_ID: DELETE_FILE_PATH_ID}),
            F.col("pos").alias("pos", metadata={FIELD_ID: DELETE_POS_ID}),
        )
        .write.option("mapreduce.fileoutputcommitter.marksuccessfuljobs", "false")  # no _SUCCESS in the table
    )
    if max_records_per_file:
        writer = writer.option("maxRecordsPerFile", max_records_per_file)
    faults.watch("spark-write", output_dir)
    writer.partitionBy(group).mode("errorifexists").parquet(hadoop_path(output_dir))
    written: dict[str, list[str]] = defaultdict(list)
    prefix = f"{group}="
    for location in list_files(entries.sparkSession, output_dir):
        folder = location.rsplit("/", 2)[-2]
        if not folder.startswith(prefix):
            raise SparkJobError(f"unexpected file in the position delete output: {location}; nothing was committed")
        written[unquote(folder[len(prefix):])].append(location)
    return dict(written)
