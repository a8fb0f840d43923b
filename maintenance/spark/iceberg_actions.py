"""Iceberg's own Spark actions, run on the table they are given (the fenced table, so their
commits pass the fence like every other).

- `rewrite_manifests`: Iceberg's `rewriteManifests` action on one partition spec (MANIFESTS
  on format 1 and 2);
- `compute_table_stats`, `compute_partition_stats`: the statistics actions (STATS), which
  register a Puffin file or a partition statistics file and add no snapshot.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from maintenance.spark.jvm import JavaObject, java_long, jvm, string_array

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def _actions(spark: SparkSession) -> JavaObject:
    return jvm(spark).org.apache.iceberg.spark.actions.SparkActions.get(spark._jsparkSession)  # type: ignore[attr-defined]


def rewrite_manifests(spark: SparkSession, table: JavaObject, spec_id: int, summary: Mapping[str, str]) -> tuple[int, int]:
    """Rewrite the manifests of one spec of `table`, committing through it with `summary` in
    its snapshot's summary: (manifests rewritten, manifests added)."""
    action = _actions(spark).rewriteManifests(table).specId(spec_id)
    for key, value in summary.items():
        action = action.snapshotProperty(key, value)
    result = action.execute()
    return len(list(result.rewrittenManifests())), len(list(result.addedManifests()))


def compute_table_stats(spark: SparkSession, table: JavaObject, snapshot_id: int, columns: Sequence[str]) -> str:
    """Sketch the distinct values of `columns` in the snapshot (one Spark job) into a Puffin
    file, registered for the snapshot; its path."""
    result = _actions(spark).computeTableStats(table).snapshot(java_long(spark, snapshot_id)).columns(string_array(spark, columns)).execute()
    return str(result.statisticsFile().path())


def compute_partition_stats(spark: SparkSession, table: JavaObject, snapshot_id: int) -> str | None:
    """Write the snapshot's partition statistics file and register it; its path (None when
    the action wrote none)."""
    result = _actions(spark).computePartitionStats(table).snapshot(java_long(spark, snapshot_id)).execute()
    return str(result.statisticsFile().path()) if result.statisticsFile() is not None else None
