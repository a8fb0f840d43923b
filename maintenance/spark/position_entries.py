"""The entries of v2 position delete files that still apply, read with Spark (shared by
REWRITE, which combines them, and CONVERT, which folds them into the files it writes).

An entry (path, pos) of a delete file D deletes a row only where the position rule of
`maintenance.table.delete_rule` holds for D and the live data file at exactly that path. The
entries kept are those, each tagged with the partition id of the data file it points at:
the partition a combined file must live in for the entry to keep applying (a file holding
several paths is partition-scoped). Entries pointing at no live data file, or at one the
rule does not reach, are dropped: they deleted nothing.

The files are read through Iceberg's own reader (`spark.raw_rows.position_delete_rows`),
and every entry must come back tagged with its delete file, or nothing is committed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from maintenance.spark.file_rows import check_complete, observed, row_counts
from maintenance.spark.jvm import JavaObject
from maintenance.spark.raw_rows import position_delete_rows
from maintenance.table.delete_rule import position_scope_column
from maintenance.table.files import PartitionKey, TableFile

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, Observation, SparkSession

NO_PARTITION = -1  # the partition id of a delete whose partition holds none of the data files


@dataclass
class PositionEntries:
    """Entries that apply (`frame`: part, file_path, pos), and the check that every entry of
    every file was read; call `records_read()` after the action that consumed `frame`."""

    frame: DataFrame
    deletes: Sequence[TableFile]
    _observation: Observation
    _unobserved: DataFrame

    def records_read(self) -> int:
        """Entries read (all of them, or nothing may be committed)."""
        expected = sum(d.records for d in self.deletes)
        check_complete("position delete", observed(self._observation, lambda: row_counts(self._unobserved, "s_idx")), expected)
        return expected


@contextmanager
def live_position_entries(spark: SparkSession, table: JavaObject, snapshot_id: int, deletes: Sequence[TableFile], data: Sequence[TableFile],
                          partition_ids: Mapping[PartitionKey, int]) -> Iterator[PositionEntries]:
    """The entries of `deletes` (live in `snapshot_id`) that apply to one of `data` (the live
    data files they may point at), with that file's partition id from `partition_ids` (every
    data file's partition must have one). Usable until the block ends."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    with position_delete_rows(spark, table, snapshot_id, [d.path for d in deletes]) as rows:
        attributes = spark.createDataFrame(
            [(d.path, i, d.seq, partition_ids.get(d.partition_key, NO_PARTITION), d.referenced_data_file) for i, d in enumerate(deletes)],
            T.StructType([
                T.StructField("delete_file_path", T.StringType()), T.StructField("s_idx", T.IntegerType()), T.StructField("s_seq", T.LongType()),
                T.StructField("s_part", T.IntegerType()), T.StructField("s_ref", T.StringType()),
            ]),
        )
        entries = rows.join(F.broadcast(attributes), "delete_file_path", "left")
        observation = Observation()
        counted = entries.observe(observation, F.count(F.lit(1)).alias("rows"), F.count("s_idx").alias("mapped"))
        live = spark.createDataFrame(
            [(d.path, d.seq, partition_ids[d.partition_key]) for d in data],
            T.StructType([T.StructField("d_path", T.StringType()), T.StructField("d_seq", T.LongType()), T.StructField("d_part", T.IntegerType())]),
        )
        applies = (counted.file_path == live.d_path) & position_scope_column(live.d_path, live.d_seq, live.d_part, counted.s_seq, counted.s_part, counted.s_ref)
        frame = counted.join(F.broadcast(live), applies, "inner").select(F.col("d_part").alias("part"), "file_path", "pos")
        yield PositionEntries(frame, deletes, observation, entries)
