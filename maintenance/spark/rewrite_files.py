"""The two `RewriteFiles` operations jobs publish, built the same way every time.

Both validate from the planning snapshot (a data-file rewrite whose commit carries over the
position deletes committed meanwhile: from the snapshot that rebase read), so Iceberg's
conflict checks cover everything committed since. They are recipes for `publish.publisher.Change`: called once to
stage, and again if the change must be applied on newer metadata.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from maintenance.spark.jvm import JavaObject, java_long

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

Build = Callable[[JavaObject], JavaObject]
RemoveFiles = Callable[[JavaObject], JavaObject]  # an operation -> the same with files removed (in the JVM, in bulk)


def delete_file_rewrite(spark: SparkSession, planning_snapshot_id: int, removed: Sequence[JavaObject], added: Sequence[tuple[JavaObject, int]]) -> Build:
    """Delete files out, new delete files in, each with its own data sequence number
    (`addFile(file, seq)`: every manifest entry keeps its own)."""

    def build(table: JavaObject) -> JavaObject:
        operation = table.newRewrite().validateFromSnapshot(java_long(spark, planning_snapshot_id))
        for delete_file in removed:
            operation = operation.deleteFile(delete_file)
        for new_file, seq in added:
            operation = operation.addFile(new_file, java_long(spark, seq))
        return operation

    return build


def data_file_rewrite(spark: SparkSession, validate_from_snapshot_id: int, data_sequence_number: int, remove_data: RemoveFiles,
                      added_data: Sequence[JavaObject], remove_deletes: RemoveFiles, added_deletes: Sequence[JavaObject] = ()) -> Build:
    """Data files replaced (`remove_data`: `PlannedTasks.remove_data_files`) by new ones that
    keep the planning snapshot's data sequence number (so deletes committed meanwhile still
    apply to them), delete files dropped (`remove_deletes`: `DeleteRecords.remove`), and
    deletes carried over to the new files added (`jobs/file_groups/rebase.py`: they get the
    commit's own sequence number). Validated from the planning snapshot, or from the newer
    snapshot a rebase read (it has carried over every position delete committed up to it)."""

    def build(table: JavaObject) -> JavaObject:
        operation = table.newRewrite().validateFromSnapshot(java_long(spark, validate_from_snapshot_id))
        operation = remove_data(operation.dataSequenceNumber(java_long(spark, data_sequence_number)))
        for data_file in added_data:
            operation = operation.addFile(data_file)
        for delete_file in added_deletes:
            operation = operation.addFile(delete_file)
        return remove_deletes(operation)

    return build
