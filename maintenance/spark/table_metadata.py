"""Table metadata built in the JVM: EXPIRE's new metadata, exactly the planned snapshots and
refs removed (Iceberg's `ExpireSnapshots` would add its own age-based choices), and, when
asked, the specs and schemas only they used."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from maintenance.spark.jvm import JavaObject, java_long, jvm

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def metadata_without(spark: SparkSession, base: JavaObject, *, refs: Iterable[str], snapshot_ids: Iterable[int],
                     specs_and_schemas: tuple[Iterable[int], Iterable[int]] | None = None) -> JavaObject:
    """`base` (a Java `TableMetadata`) without these refs and snapshots (those it still has),
    and, with `specs_and_schemas`, without those specs and schemas (Iceberg's own
    `MetadataUpdate`s apply them)."""
    iceberg = jvm(spark).org.apache.iceberg
    builder = iceberg.TableMetadata.buildFrom(base)
    for name in refs:
        builder = builder.removeRef(name)
    ids = jvm(spark).java.util.HashSet()
    for snapshot_id in snapshot_ids:
        if base.snapshot(java_long(spark, snapshot_id)) is not None:
            ids.add(java_long(spark, snapshot_id))
    builder = builder.removeSnapshots(ids)
    if specs_and_schemas is not None:
        specs, schemas = (_int_set(spark, values) for values in specs_and_schemas)
        getattr(iceberg, "MetadataUpdate$RemovePartitionSpecs")(specs).applyTo(builder)
        getattr(iceberg, "MetadataUpdate$RemoveSchemas")(schemas).applyTo(builder)
    return builder.build()


def _int_set(spark: SparkSession, values: Iterable[int]) -> JavaObject:
    found = jvm(spark).java.util.HashSet()
    for value in values:
        found.add(value)
    return found
