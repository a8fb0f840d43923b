"""The positions delete files delete in data files, by Iceberg's own delete loader in the JVM.

What proves a change that rewrites only position deletes and DVs (`publish/proofs/positions.py`,
proof "positions"): each data file the change may touch has the same positions deleted
before and after. `java/DeletedPositions.java` reads each delete file on its own (so a data
file with two DVs, which Iceberg's planning refuses, is read too: the union of both) and
digests each data file's positions; no data file is read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from maintenance.spark.errors import java_errors
from maintenance.spark.java_files import JavaFiles
from maintenance.spark.java_helpers import new_helper
from maintenance.spark.jvm import JavaObject, jvm
from maintenance.table.files import TableFile

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def deleted_positions_digest(spark: SparkSession, table: JavaObject, snapshot_id: int, deletes: dict[str, list[TableFile]]) -> tuple[int, str]:
    """(positions deleted, their digest) over the data files of `deletes` (data file path ->
    the position delete files and DVs of the snapshot that apply to it)."""
    keys = {d.key for applying in deletes.values() for d in applying}
    with java_errors(f"deleted positions of snapshot {snapshot_id}"):
        java = JavaFiles(spark, table, snapshot_id).delete_files(keys) if keys else {}
        util = jvm(spark).java.util
        by_file = util.HashMap()
        for path, applying in deletes.items():
            listed = util.ArrayList()
            for delete in applying:
                listed.add(java[delete.key])
            by_file.put(path, listed)
        helper = new_helper(spark, "DeletedPositions")
        helper.read(table, by_file)
        return int(helper.count()), str(helper.digest())
