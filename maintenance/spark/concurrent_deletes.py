"""Positions writers deleted, since a rewrite planned, in the files it replaces: the one
Python door to `java/ConcurrentPositionDeletes.java` (the rebase's first step,
`jobs/file_groups/rebase.py`).

The helper walks the snapshots from the current one back to the planning one, reads every
position delete and DV they added for the replaced files with Iceberg's own delete loader,
and keeps, for the commit, the writers' delete files that name replaced files. What it
found crosses as typed values here: the (file, position) pairs deleted, and the record keys
of delete files writers removed since planning.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from maintenance.spark.errors import java_errors
from maintenance.spark.java_helpers import new_helper
from maintenance.spark.jvm import JavaObject

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass(frozen=True)
class DeletedSince:
    """What one reading found between the planning snapshot and `base`."""

    base: int  # the snapshot read
    positions: frozenset[tuple[str, int]]  # (replaced file, position) deleted since planning
    gone: frozenset[str]  # record keys of delete files writers removed since planning


class ConcurrentPositionDeletes:
    """Readings of what writers deleted in the replaced files since planning; the writers'
    delete files of the last reading, for the commit to remove or replace."""

    def __init__(self, spark: SparkSession, replaced: Iterable[str]) -> None:
        self._helper = new_helper(spark, "ConcurrentPositionDeletes")
        self._replaced = "\n".join(sorted(replaced))  # one string: a Python list crosses one element per call

    def read(self, table: JavaObject, planning: int, base: int) -> DeletedSince | None:
        """Read from `base` back to `planning` in the Java `table`; None when planning is no
        longer an ancestor of `base`."""
        with java_errors("positions deleted since planning"):
            answer = str(self._helper.positions(table, str(planning), str(base), self._replaced))
        if answer == "!":
            return None
        deleted: set[tuple[str, int]] = set()
        gone: set[str] = set()
        for line in answer.splitlines():  # "-\tKEY" for a removed delete file, else "N\tPATH\tP1,P2,..."
            files, path, *positions = line.split("\t")
            if files == "-":
                gone.add(path)
            else:
                deleted.update((path, int(p)) for p in positions[0].split(","))
        return DeletedSince(base, frozenset(deleted), frozenset(gone))

    def writer_deletes(self) -> int:
        """The writers' live delete files deleting in replaced files, as of the last reading."""
        return int(self._helper.fileScopedCount()) + int(self._helper.partitionScoped().size())

    def remove_file_scoped(self, operation: JavaObject) -> JavaObject:
        """`operation` (a RewriteFiles) removing the writers' delete files that name a single
        replaced file (as of the last reading)."""
        return self._helper.removeFileScoped(operation)

    def partition_scoped(self) -> list[JavaObject]:
        """The writers' partition-scoped delete files deleting in replaced files (last reading)."""
        return list(self._helper.partitionScoped())
