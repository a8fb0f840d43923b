"""Writing position delete files from Spark: one folder per group, entries sorted by path and position."""

from __future__ import annotations

from typing import TYPE_CHECKING

from maintenance.paths import hadoop_path
from maintenance.position_deletes import DELETE_FILE_PATH_ID, DELETE_POS_ID
from maintenance.spark.file_rows import FIELD_ID

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def write_position_deletes(entries: DataFrame, group: str, output_dir: str, max_records_per_file: int | None = None) -> None:
    """Write `entries` (group, file_path, pos) under output_dir/<group>=<value>/, executors only.

    Each group lands in one task, so it becomes one file (or several of at most
    `max_records_per_file` entries), with the reserved field ids readers expect.
    """
    from pyspark.sql import functions as F

    writer = (
        entries.repartition(group)
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
    writer.partitionBy(group).mode("errorifexists").parquet(hadoop_path(output_dir))
