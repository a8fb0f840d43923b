"""Java records of a snapshot's files, looked up by path (for commits that remove them)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from maintenance.errors import ConflictError
from maintenance.spark.jvm import JavaObject, java_long, jvm
from maintenance.table.files import record_key

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def java_record_key(content_file: JavaObject) -> str:
    """`TableFile.key` of a Java content file record (a DV's blob offset beside its path)."""
    offset = content_file.contentOffset() if str(content_file.format().name()) == "PUFFIN" else None
    return record_key(str(content_file.location()), None if offset is None else int(offset))


class JavaFiles:
    """Java records of the planning snapshot's files, looked up by path (read once)."""

    def __init__(self, spark: SparkSession, table: JavaObject, snapshot_id: int) -> None:
        self.spark = spark
        self.table = table
        self.snapshot = table.snapshot(java_long(spark, snapshot_id))
        self._iceberg = jvm(spark).org.apache.iceberg

    def delete_files(self, keys: set[str]) -> dict[str, JavaObject]:
        """Delete file records by record key (`TableFile.key`: the path, and a DV's blob offset)."""
        found = self._scan(self.snapshot.deleteManifests(self.table.io()), keys, self._iceberg.ManifestFiles.readDeleteManifest)
        missing = keys - set(found)
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
                    key = java_record_key(content_file)
                    if key in paths:
                        found[key] = content_file
            finally:
                reader.close()
        return found
