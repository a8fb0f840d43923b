"""Writing position delete files from Spark: one folder per group, entries sorted by path
and position, and the files written returned by group.

The executors write through the table's own FileIO (`java/PositionDeleteFiles.java` says
why not through Spark's Hadoop writer: s3a cannot write to a store that answers a missing
key with 403)."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING
from urllib.parse import unquote_plus

from maintenance import faults
from maintenance.errors import SparkJobError
from maintenance.spark.java_helpers import new_helper
from maintenance.spark.jvm import JavaObject, java_items, jvm

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def write_position_deletes(entries: DataFrame, io: JavaObject, group: str, output_dir: str, max_records_per_file: int | None = None,
                           deduplicate: bool = False) -> dict[str, list[str]]:
    """Write `entries` (group, file_path, pos) under output_dir through the table's FileIO
    `io`, executors only; returns the files written by group value.

    Each group lands in one task, so it becomes one file (or several of at most
    `max_records_per_file` entries), with the reserved field ids readers expect. With
    `deduplicate`, repeated entries are dropped in the same shuffle (the group's hash
    partitioning already clusters them). A group's folder is `<group>=<value>`: this is the
    one place that layout is read back.
    """
    from pyspark.sql import functions as F

    spark = entries.sparkSession
    grouped = entries.repartition(group)
    if deduplicate:
        grouped = grouped.dropDuplicates([group, "file_path", "pos"])
    rows = grouped.sortWithinPartitions(group, "file_path", "pos").select(F.col(group).cast("string"), "file_path", F.col("pos").cast("long"))
    writer = new_helper(spark, "PositionDeleteFiles", on_executors=True).into(io, output_dir, group, int(max_records_per_file or 0))
    faults.watch("spark-write", output_dir)
    encoder = jvm(spark).org.apache.spark.sql.Encoders.STRING()
    locations = [str(location) for location in java_items(rows._jdf.mapPartitions(writer, encoder).collectAsList())]
    written: dict[str, list[str]] = defaultdict(list)
    prefix = f"{group}="
    for location in sorted(locations):
        folder = location.rsplit("/", 2)[-2]
        if not folder.startswith(prefix):
            raise SparkJobError(f"unexpected file in the position delete output: {location}; nothing was committed")
        written[unquote_plus(folder[len(prefix):])].append(location)
    return dict(written)
