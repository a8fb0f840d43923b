"""The digest of a snapshot's live entries, by Iceberg's own manifest readers in the JVM.

What proves a change that must leave every entry alone (a rewrite of manifests, a
statistics file): the multiset of live entries (content, path, sequence numbers, spec,
partition, counts, size, equality ids, referenced data file, row ids, and the column
statistics by which Iceberg's planning decides where a delete applies) is the same before
and after (`java/LiveEntries.java` says how an entry is hashed). Iceberg's readers apply
the inheritance rules (sequence numbers, first row ids) its planning applies, so the two
sides are read exactly as a reader of the table would read them; no data file is read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from maintenance.spark.errors import java_errors
from maintenance.spark.java_helpers import new_helper
from maintenance.spark.jvm import JavaObject

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def live_entries_digest(spark: SparkSession, table: JavaObject, snapshot_id: int) -> tuple[int, str]:
    """(how many live entries, their digest) of a snapshot of the Java table."""
    return _read(spark, table, snapshot_id, position_deletes=True)


def live_entries_digest_without_position_deletes(spark: SparkSession, table: JavaObject, snapshot_id: int) -> tuple[int, str]:
    """The same, of every live entry but position delete files and DVs."""
    return _read(spark, table, snapshot_id, position_deletes=False)


def _read(spark: SparkSession, table: JavaObject, snapshot_id: int, *, position_deletes: bool) -> tuple[int, str]:
    with java_errors(f"live entries of snapshot {snapshot_id}"):
        helper = new_helper(spark, "LiveEntries")
        helper.read(table, str(snapshot_id), position_deletes)
        return int(helper.count()), f"entries:{helper.digest()}"
