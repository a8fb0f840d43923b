"""The snapshot diff: the files a snapshot removed, by Iceberg's own diff in the JVM
(`java/RemovedKeys.java`).

What verification's scope starts from (`publish/proofs/rows.py`, `deleted_rows.py`): the
record keys (`TableFile.key`) of every data and delete file the staged snapshot removed,
read in one call, from the manifests the snapshot wrote, with only the columns a key needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from maintenance.spark.errors import java_errors
from maintenance.spark.java_helpers import new_helper
from maintenance.spark.jvm import JavaObject

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def removed_keys(spark: SparkSession, table: JavaObject, snapshot_id: int) -> set[str]:
    """The record keys (`TableFile.key`) of every file the snapshot removed, by Iceberg's own
    diff of it against its parent, read in the JVM in one call (the keys cross as one
    newline-separated string: a Java collection crosses one element per call)."""
    with java_errors(f"files removed by snapshot {snapshot_id}"):
        return {key for key in str(new_helper(spark, "RemovedKeys").of(table, str(snapshot_id))).split("\n") if key}
