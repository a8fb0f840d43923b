"""Rewriting a spec's data manifests through Iceberg's core `RewriteManifests`: the one Python
door to `java/DataManifestsOfSpec.java` (MANIFESTS on format 3, and with `sort_by`).

The helper chooses the manifests (the spec's data manifests) and each entry's cluster (one,
or the run of sorted partitions its manifest path was planned into); Iceberg's core
operation reads and writes them on the driver, each entry with the first row id its old
manifest gave it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from maintenance.spark.java_helpers import new_helper
from maintenance.spark.jvm import JavaObject, java_map

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def rewrite_data_manifests(spark: SparkSession, table: JavaObject, spec_id: int, clusters: Mapping[str, int] | None, summary: Mapping[str, str]) -> None:
    """Rewrite the data manifests of spec `spec_id` of `table` (committing through it, with
    `summary` in the snapshot's summary); `clusters`: data file path -> the new manifest's
    cluster it goes into (None: one cluster)."""
    chooser = new_helper(spark, "DataManifestsOfSpec").of(spec_id)
    if clusters is not None:
        chooser = chooser.clustered(table.specs().get(spec_id), java_map(spark, clusters))
    update = table.rewriteManifests().rewriteIf(chooser).clusterBy(chooser)
    for key, value in summary.items():
        update = update.set(key, value)
    update.commit()
