"""The rows each data file has deleted in two snapshots with the same data files, as
Iceberg's readers of each snapshot delete them (`java/DeletedRows.java`).

What proves a change that rewrites only delete files (`publish/proofs/deleted_rows.py`, proof
"deleted rows"): for every data file it can affect, the same rows are deleted before and
after. Each side's deletes come with Iceberg's own scan tasks planned on that snapshot
(`PlannedTasks`), so which delete applies where is Iceberg's planner's; a data file is read
(its equality-field columns and `_pos` only, by Iceberg's generic reader, in the driver's
JVM on a thread per core) only where an equality delete applies to it on a side.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from maintenance.spark.errors import java_errors
from maintenance.spark.java_helpers import new_helper
from maintenance.spark.jvm import JavaObject
from maintenance.spark.planned_tasks import PlannedTasks
from maintenance.table.files import TableFile

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass(frozen=True)
class DeletedRowsSide:
    """One side's deleted rows over the compared data files: how many, and their digest."""

    rows: int
    digest: str


@dataclass(frozen=True)
class DeletedRows:
    before: DeletedRowsSide
    after: DeletedRowsSide
    files_read: int  # data files read (an equality delete applies to them on a side)
    rows_read: int
    bytes_read: int  # the columns read, as the data files' metadata sizes them
    difference: str | None  # the first data file whose deleted rows differ, and how
    load_s: float = 0.0  # reading the equality deletes
    compare_s: float = 0.0  # comparing the data files (reading those an equality delete applies to)

    @property
    def same(self) -> bool:
        return self.before == self.after and self.difference is None


def deleted_rows(spark: SparkSession, table: JavaObject, parent_id: int, staged_id: int, files: Sequence[TableFile],
                 known_before: Sequence[TableFile], known_after: Sequence[TableFile]) -> DeletedRows:
    """Compare the rows `files` (data files live with the same entry in both snapshots) have
    deleted in snapshot `parent_id` and in `staged_id` of `table` (a Java table that knows
    both: the staged change's view); `known_*`: each snapshot's files, for `PlannedTasks`."""
    paths = [f.path for f in files]
    with java_errors("verification of deleted rows"), ThreadPoolExecutor(max_workers=1, thread_name_prefix="icemaint-plan") as pool:
        # the two snapshots are planned at once: each reads its manifests in the JVM
        planning_after = pool.submit(lambda: PlannedTasks(spark, table, staged_id, files, "verification", known_after).for_group(paths))
        before = PlannedTasks(spark, table, parent_id, files, "verification", known_before).for_group(paths)
        after = planning_after.result()
        helper = new_helper(spark, "DeletedRows")
        helper.compare(table, before.java, after.java, 0)  # a thread per core of the driver's JVM
        sides = [DeletedRowsSide(int(helper.rows(side)), str(helper.digest(side))) for side in (0, 1)]
        difference = helper.difference()
        return DeletedRows(sides[0], sides[1], int(helper.filesRead()), int(helper.rowsRead()), int(helper.bytesRead()), None if difference is None else str(difference),
                           int(helper.loadNanos()) / 1e9, int(helper.compareNanos()) / 1e9)
