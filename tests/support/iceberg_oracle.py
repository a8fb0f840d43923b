"""Oracles that do not go through icemaint's own code: Iceberg's Java planner for which
delete applies to which data file, and a frozen parquet copy of a table's rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from maintenance.catalogs import TableRef


def iceberg_deletes_by_data_file(java_table: Any, snapshot_id: int | None = None) -> dict[str, set[str]]:
    """Iceberg's own answer (`planFiles()`): data file path -> paths of the deletes it applies."""
    scan = java_table.newScan()
    if snapshot_id is not None:
        scan = scan.useSnapshot(snapshot_id)
    tasks = scan.planFiles()
    found: dict[str, set[str]] = {}
    try:
        iterator = tasks.iterator()
        while iterator.hasNext():
            task = iterator.next()
            found[str(task.file().location())] = {str(d.location()) for d in task.deletes()}
    finally:
        tasks.close()
    return found


def iceberg_removed_keys(java_table: Any, snapshot_id: int) -> set[str]:
    """The record keys (`TableFile.key`: a deletion vector's location and offset) of every
    data and delete file the snapshot removed, by Iceberg's public diff of it against its
    parent (`Snapshot.removedDataFiles` and `removedDeleteFiles`)."""
    snapshot = java_table.snapshot(snapshot_id)
    io = java_table.io()
    keys = {str(f.location()) for f in snapshot.removedDataFiles(io)}
    for f in snapshot.removedDeleteFiles(io):
        offset = f.contentOffset()
        keys.add(f"{f.location()}#{offset}" if str(f.format()) == "PUFFIN" and offset is not None else str(f.location()))
    return keys


def planned_tasks(java_table: Any) -> list[Any]:
    """Iceberg's own planner's file scan tasks (`planFiles()`) for the current snapshot."""
    tasks = java_table.newScan().planFiles()
    found = []
    try:
        iterator = tasks.iterator()
        while iterator.hasNext():
            found.append(iterator.next())
        return found
    finally:
        tasks.close()


class FrozenRows:
    """A table's rows as a parquet copy, taken through Spark with every delete applied, and
    compared later with EXCEPT ALL both ways (duplicates count). The one frozen-rows oracle:
    columns Spark cannot compare exactly are compared canonically (maps as sorted entries,
    floats as their text); `metadata_columns` (format 3's `_row_id`,
    `_last_updated_sequence_number`) are frozen beside the content, so a rewrite must keep
    them too (the spec's row lineage)."""

    def __init__(self, spark: Any, ref: TableRef, folder: Path, snapshot_id: int | None = None, *, metadata_columns: tuple[str, ...] = ()) -> None:
        self.spark, self.ref, self.folder, self.metadata_columns = spark, ref, str(folder), metadata_columns
        self._read(snapshot_id).write.mode("overwrite").parquet(self.folder)
        self.rows = spark.read.parquet(self.folder).count()

    def _read(self, snapshot_id: int | None = None) -> Any:
        self.spark.sql(f"REFRESH TABLE {self.ref.spark_name}")
        version = f" VERSION AS OF {int(snapshot_id)}" if snapshot_id is not None else ""
        extra = "".join(f", {column}" for column in self.metadata_columns)
        return canonical(self.spark.sql(f"SELECT *{extra} FROM {self.ref.spark_name}{version}"))

    def differences(self, snapshot_id: int | None = None) -> tuple[int, int]:
        """(rows only in the copy, rows only in the table), counting duplicates."""
        table = self._read(snapshot_id)
        frozen = self.spark.read.parquet(self.folder).select(*(quoted(c) for c in table.columns))
        return frozen.exceptAll(table).count(), table.exceptAll(frozen).count()

    def assert_same(self, snapshot_id: int | None = None) -> None:
        missing, extra = self.differences(snapshot_id)
        assert (missing, extra) == (0, 0), f"{self.ref}: {missing} rows lost, {extra} rows appeared (frozen copy had {self.rows})"


def quoted(name: str) -> Any:
    """A column by its exact name, whatever characters it holds (a backtick included)."""
    from pyspark.sql import functions as F

    return F.col("`" + name.replace("`", "``") + "`")


def canonical(frame: Any) -> Any:
    """Columns Spark can compare exactly: maps as sorted entries, floats as their text."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    columns = []
    for field in frame.schema.fields:
        column = quoted(field.name)
        if isinstance(field.dataType, T.MapType):
            column = F.array_sort(F.map_entries(column))
        elif isinstance(field.dataType, (T.FloatType, T.DoubleType)):
            column = column.cast("string")
        columns.append(column.alias(field.name))
    return frame.select(*columns)