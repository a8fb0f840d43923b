"""Where rows a rewrite moved now are: old (file, position) to new (file, position).

A rewrite writes the rows its scan tasks read, so every row that was live at planning in a
replaced file is in one of the files its group wrote, at a position the writer chose. To
carry a delete committed meanwhile over to the new files (`jobs/file_groups/rebase.py`),
the deleted rows are looked up there by what they are: each row's canonical columns (the
content fingerprint's own, `fingerprint.canonical_columns`: every NULL, -0.0 and NaN told
apart), and on format 3 its `_row_id`, which a rewrite keeps. Rows equal in all of that
are paired in order (the n-th deleted copy with the n-th written copy), so each deleted
row is given a distinct new row.

Both sides are read by Iceberg's reader in the table's current columns: the old files
through their planning scan tasks (deletes of the planning snapshot applied, so a position
that was already deleted then finds no row and needs no carrying over), the new files as
they are on disk (`raw_rows`). Iceberg's reader gives a file with no first row id (as a
written, uncommitted file has none) no `_row_id` at all, not even the ones it stores, so on
format 3 the written files are read as if their first row id were `UNWRITTEN_FIRST_ROW_ID`:
a stored `_row_id` reads as itself, a missing one as a number no committed row has, which
is then matched as no id at all, like a row of a table upgraded to format 3 whose files
have no first row id yet (NULL at planning): such rows are told by their content alone.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from maintenance.spark.errors import java_errors
from maintenance.spark.fingerprint import canonical_columns, schema_json
from maintenance.spark.jvm import JavaObject, java_long, jvm
from maintenance.spark.planned_tasks import GroupTasks
from maintenance.spark.raw_rows import raw_rows, staged_rows

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


UNWRITTEN_FIRST_ROW_ID = 2**62  # what a written file's rows without a `_row_id` of their own read as (plus position): no committed row's


class UnmatchedRowsError(Exception):
    """Some deleted row that was live at planning is in none of the written files."""


def moved_positions(spark: SparkSession, table: JavaObject, old_tasks: GroupTasks, written: Sequence[JavaObject],
                    deleted: Mapping[str, Sequence[int]], *, row_lineage: bool) -> tuple[dict[str, list[int]], int]:
    """(new file location -> the positions there holding rows `deleted` deletes, the number
    of those rows). `old_tasks`: the planning scan tasks of the replaced files `deleted`
    names (location -> positions); `written`: the Java data files their group wrote.
    Positions of rows not live at planning are skipped; a live one found in no written file
    raises UnmatchedRowsError."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    schema = json.loads(schema_json(spark, table))
    # A row with no id of its own (a table upgraded to v3 whose files have no first row id
    # yet: NULL at planning, stored as NULL by the rewrite) is told by its content alone.
    row_id = F.when(F.col("_row_id") < F.lit(UNWRITTEN_FIRST_ROW_ID), F.col("_row_id"))
    identity = [*canonical_columns(schema, schema), *([row_id] if row_lineage else [])]
    wanted = spark.createDataFrame(
        [(path, position) for path, positions in deleted.items() for position in positions],
        T.StructType([T.StructField("d_file", T.StringType(), False), T.StructField("d_pos", T.LongType(), False)]),
    )

    def keyed(frame: DataFrame) -> DataFrame:
        return frame.select(F.struct(*identity).alias("row"), F.col("_file").alias("file"), F.col("_pos").alias("pos"))

    def ranked(frame: DataFrame) -> DataFrame:
        return frame.withColumn("k", F.row_number().over(Window.partitionBy("row").orderBy("file", "pos")))

    with java_errors(f"positions of {sum(len(p) for p in deleted.values())} concurrently deleted rows in {len(written)} written files"), \
            staged_rows(spark, table, old_tasks.java) as old_rows, \
            raw_rows(spark, table, [_with_first_row_id(spark, table, f) for f in written] if row_lineage else list(written)) as new_rows:
        old = ranked(keyed(old_rows).join(F.broadcast(wanted), (F.col("file") == F.col("d_file")) & (F.col("pos") == F.col("d_pos"))).drop("d_file", "d_pos"))
        new = ranked(keyed(new_rows).join(F.broadcast(old.select("row").distinct()), "row", "left_semi"))
        pairs = old.select("row", "k", F.col("file").alias("old_file")).join(
            new.select("row", "k", F.col("file").alias("new_file"), F.col("pos").alias("new_pos")), ["row", "k"], "left")
        found = pairs.select("old_file", "new_file", "new_pos").collect()
    unmatched = [row.old_file for row in found if row.new_file is None]
    if unmatched:
        raise UnmatchedRowsError(f"{len(unmatched)} rows deleted meanwhile in {unmatched[0]} are in none of the files written for it")
    moved: dict[str, list[int]] = defaultdict(list)
    for row in found:
        moved[row.new_file].append(int(row.new_pos))
    return {path: sorted(positions) for path, positions in moved.items()}, len(found)


def _with_first_row_id(spark: SparkSession, table: JavaObject, data_file: JavaObject) -> JavaObject:
    """`data_file` with first row id `UNWRITTEN_FIRST_ROW_ID` (module docstring), for reading only."""
    builder = jvm(spark).org.apache.iceberg.DataFiles.builder(table.specs().get(data_file.specId()))
    return builder.copy(data_file).withFirstRowId(java_long(spark, UNWRITTEN_FIRST_ROW_ID)).build()
