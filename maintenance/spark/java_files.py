"""Java records of a snapshot's files, looked up by path (for commits that remove them)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future
from threading import Thread
from typing import TYPE_CHECKING, Any

from maintenance.errors import ConflictError
from maintenance.spark.jvm import JavaObject, java_long, jvm
from maintenance.table.files import record_key

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def java_record_key(content_file: JavaObject) -> str:
    """`TableFile.key` of a Java content file record (a DV's blob offset beside its path).
    Only a Puffin file's record is asked for its format and offset (Py4J round trips add up
    over thousands of files)."""
    location = str(content_file.location())
    offset = None
    if location.lower().endswith(".puffin") and str(content_file.format().name()) == "PUFFIN":
        offset = content_file.contentOffset()
    return record_key(location, None if offset is None else int(offset))


class LazyFiles(Mapping[str, JavaObject]):
    """Java records by path, looked up only when first asked for (a job's path may need
    none of them)."""

    def __init__(self, load: Callable[[], dict[str, JavaObject]]) -> None:
        self._load = load
        self._files: dict[str, JavaObject] | None = None

    def _loaded(self) -> dict[str, JavaObject]:
        if self._files is None:
            self._files = self._load()
        return self._files

    def __getitem__(self, path: str) -> JavaObject:
        return self._loaded()[path]

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaded())

    def __len__(self) -> int:
        return len(self._loaded())


def in_background(load: Callable[[], dict[str, JavaObject]]) -> LazyFiles:
    """Java records looked up by a thread of their own, from now on, and waited for when
    first asked for: the lookups are Py4J round trips that wait on the JVM, so the work a job
    does meanwhile in Python (CONVERT's driver scan) hides them. A failed lookup raises where
    the records are first asked for."""
    future: Future[dict[str, JavaObject]] = Future()

    def run() -> None:
        try:
            future.set_result(load())
        except BaseException as exc:  # handed to whoever asks for the records
            future.set_exception(exc)

    Thread(target=run, name="icemaint-java-files", daemon=True).start()
    return LazyFiles(future.result)


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
