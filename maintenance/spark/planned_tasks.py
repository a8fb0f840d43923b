"""Iceberg's own scan tasks for the data files a rewrite takes, held in the JVM.

Each task carries every delete Iceberg applies to its file, so rows read through it are the
rows readers see. The tasks stay in the JVM (`java/PlannedTasks.java`): a group's tasks,
their sizes and the commit's removals are one Py4J call each, not one or more per file
(2,000 files took half a second of calls before their first Spark job); so are the delete
files the commit drops, named by record key.

The scan is filtered to the wanted files' partitions (`PlannedTasks.partitionFilter` in
Java says why its tasks, deletes and all, are those of the whole snapshot's scan): a
rewrite of one partition of many plans that partition, not the table. Measured on 256
partitions, 10,240 data files and 10,065 delete files (`benchmarks/scan_planning.py`):
0.21 s against 0.44 s as a streaming writer leaves the manifests (each lists every
partition), 0.03 s against 0.13 s in partition-clustered manifests; 0.09 s against 0.06 s
when one manifest holds every file (nothing to skip, every entry checked).
"""

from __future__ import annotations

import datetime
import decimal
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from maintenance.errors import UsageError
from maintenance.spark.errors import java_errors
from maintenance.spark.java_helpers import new_helper
from maintenance.spark.jvm import JavaObject
from maintenance.table.files import Content, TableFile

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass(frozen=True)
class GroupTasks:
    """One file group's scan tasks, as the writer stages them."""

    java: JavaObject  # a java.util.List of FileScanTask, in the group's file order
    sizes: list[int]  # each task's bytes as Iceberg packs read splits by: its data plus its deletes


class PlannedTasks:
    """The planning snapshot's scan tasks of the given data files (of that snapshot), by path."""

    def __init__(self, spark: SparkSession, table: JavaObject, snapshot_id: int, files: Sequence[TableFile], what: str,
                 known: Iterable[TableFile]) -> None:
        """`known`: files the snapshot holds, every delete file among them at least (more do
        no harm): checked by `partitions_to_scan`."""
        paths = [f.path for f in files]
        with java_errors(f"{what} planning"):
            self._helper = new_helper(spark, "PlannedTasks")
            missing = [path for path in str(self._helper.plan(table, str(snapshot_id), _joined(paths, what), partitions_to_scan(files, known))).split("\n") if path]
            self.filtered = bool(self._helper.filtered())  # the scan held only the files' partitions
        if missing:
            raise UsageError(f"{what} could not plan {sorted(missing)[0]}: not in the snapshot's scan")
        self.paths = frozenset(paths)

    def for_group(self, paths: Sequence[str]) -> GroupTasks:
        java = self._helper.tasks(_joined(paths, "a rewrite"))
        sizes = [int(size) for size in str(self._helper.sizes(java)).split(",") if size]
        return GroupTasks(java, sizes)

    def delete_keys(self) -> set[str]:
        """The record key (`TableFile.key`) of every delete file that applies to one of the tasks."""
        return {key for key in str(self._helper.deleteKeys()).split("\n") if key}

    def remove_delete_files(self, operation: JavaObject, keys: Sequence[str]) -> JavaObject:
        """`operation` (a RewriteFiles) with the delete files of these record keys removed
        (each must be one of `delete_keys()`)."""
        return self._helper.removeDeleteFiles(operation, _joined(keys, "a rewrite")) if keys else operation

    def remove_data_files(self, operation: JavaObject, paths: Sequence[str]) -> JavaObject:
        """`operation` (a RewriteFiles) with the data files of these paths removed."""
        return self._helper.removeDataFiles(operation, _joined(paths, "a rewrite"))


@dataclass(frozen=True)
class DeleteRecords:
    """The delete files a rewrite may drop, by record key (`TableFile.key`): those its scan
    tasks hold stay in the JVM (`held`); the others, dangling deletes looked up in the
    delete manifests, are Java records here (`looked_up`)."""

    tasks: PlannedTasks
    held: frozenset[str]
    looked_up: Mapping[str, JavaObject]

    def remove(self, operation: JavaObject, keys: Sequence[str]) -> JavaObject:
        """`operation` (a RewriteFiles) with the delete files of these keys removed."""
        operation = self.tasks.remove_delete_files(operation, [key for key in keys if key in self.held])
        for key in keys:
            if key not in self.held:
                operation = operation.deleteFile(self.looked_up[key])
        return operation


def partitions_to_scan(files: Sequence[TableFile], known: Iterable[TableFile]) -> str:
    """The partitions to filter the scan of `files` to (`encoded_partitions`), or "" for the
    whole snapshot when a file-scoped delete (a deletion vector, or a position delete file
    naming one data file) that names one of `files` lies in another spec or partition than
    that file. The spec forbids that, but Iceberg 1.10's planner matches such deletes by path
    alone, whatever their partition, while the filter's partition pruning would drop them:
    the rewrite would bring back the rows they delete, and its verification, planned the
    same way, would not see it (Iceberg's own source, read for this: `DeleteFileIndex`
    indexes deletion vectors and file-scoped deletes by path)."""
    partition_of = {f.path: f.partition_key for f in files}
    for delete in known:
        named = delete.referenced_data_file
        if delete.content != Content.DATA and named in partition_of and delete.partition_key != partition_of[named]:
            return ""
    return encoded_partitions(files)


def encoded_partitions(files: Iterable[TableFile]) -> str:
    """The files' partitions, each once, for the Java planner's filter: a line per partition,
    its spec id and then each value, tab-separated. A value is a letter for its kind and its
    text: `n` null, `b` boolean (1 or 0), `i` integer (days for dates, microseconds for times
    and timestamps: Iceberg's own form), `s` string (UTF-8 in hex), `d` decimal, `u` UUID,
    `x` bytes (hex); `?` for what has no exact text (a float), which then constrains nothing."""
    lines = {"\t".join([str(f.spec_id), *(_encoded(value) for value in f.partition)]) for f in files}
    return "\n".join(sorted(lines))


_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def _encoded(value: object) -> str:
    if value is None:
        return "n"
    if isinstance(value, bool):
        return "b1" if value else "b0"
    if isinstance(value, int):
        return f"i{value}"
    if isinstance(value, str):
        return "s" + value.encode().hex()
    if isinstance(value, decimal.Decimal):
        return f"d{value}"
    if isinstance(value, uuid.UUID):
        return f"u{value}"
    if isinstance(value, bytes):
        return "x" + value.hex()
    if isinstance(value, datetime.datetime):
        moment = value if value.tzinfo is not None else value.replace(tzinfo=datetime.timezone.utc)
        return f"i{(moment - _EPOCH) // datetime.timedelta(microseconds=1)}"
    if isinstance(value, datetime.date):
        return f"i{(value - _EPOCH.date()).days}"
    return "?"


def _joined(paths: Sequence[str], what: str) -> str:
    """Paths as one string for the JVM (a Python list would cross one element per call)."""
    for path in paths:
        if "\n" in path:
            raise UsageError(f"{what} cannot take {path!r}: its path holds a line break")
    return "\n".join(paths)
