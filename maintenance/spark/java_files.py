"""Java records of a snapshot's files, looked up by path (for commits that remove them)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from maintenance.errors import ConflictError
from maintenance.spark.jvm import JavaObject, java_long, jvm

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


class JavaFiles:
    """Java records of the planning snapshot's files, looked up by path (read once)."""

    def __init__(self, spark: SparkSession, table: JavaObject, snapshot_id: int) -> None:
        self.spark = spark
        self.table = table
        self.snapshot = table.snapshot(java_long(spark, snapshot_id))
        self._iceberg = jvm(spark).org.apache.iceberg

    def delete_files(self, paths: set[str]) -> dict[str, JavaObject]:
        found = self._scan(self.snapshot.deleteManifests(self.table.io()), paths, self._iceberg.ManifestFiles.readDeleteManifest)
        missing = paths - set(found)
        if missing:
            raise ConflictError(f"delete file {sorted(missing)[0]} is not in the planning snapshot")
        return found

    def data_files(self, paths: set[str]) -> dict[str, JavaObject]:
        return self._scan(self.snapshot.dataManifests(self.table.io()), paths, self._iceberg.ManifestFiles.read)

    def _scan(self, manifests: Any, paths: set[str], open_manifest: Callable[..., Any]) -> dict[str, JavaObject]:
        found: dict[str, JavaObject] = {}
        specs = self.table.specs()
        for manifest in manifests:
            if len(found) == len(paths):
                break
            reader = open_manifest(manifest, self.table.io(), specs)
            try:
                iterator = reader.iterator()
                while iterator.hasNext():
                    content_file = iterator.next()
                    location = str(content_file.location())
                    if location in paths:
                        found[location] = content_file
            finally:
                reader.close()
        return found
