"""The deleted-rows proof (CONVERT, and REWRITE where Iceberg can plan it).

A change that removes and adds only delete files keeps the content exactly when every data
file has the same rows deleted before and after. Premises: the data files and their entries
are the same on both sides (checked: a change that adds or removes one fails this proof); a
position names exactly one row of one data file; an equality delete matches a row by its
equality-field values alone. A data file's rows on a side are then its rows less those at
the positions its position deletes and DV name, less those whose equality-field values are
in one of its equality deletes; the rows are the same file's on both sides, so equal
deleted rows mean equal content. Outside the change's scope the deletes that apply are the
same entries (`publish/change_scope.py`'s argument); inside it each side's deletes are
those of Iceberg's scan tasks planned on that snapshot (never the job's read, never
icemaint's rule), and a data file is read only where an equality delete applies to it on a
side, and then only its equality-field columns (`spark/deleted_rows.py`). So a CONVERT
reads what CONVERT reads: keys and delete files.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import structlog
from pyiceberg.table import Table

from maintenance.progress import Progress
from maintenance.publish.change_scope import change_scope, entry_of
from maintenance.publish.proofs import Evidence
from maintenance.spark.deleted_rows import deleted_rows
from maintenance.spark.fenced_table import Staged
from maintenance.spark.fingerprint import Fingerprint
from maintenance.spark.snapshot_diff import removed_keys
from maintenance.table.files import SnapshotFiles, TableFile, child_snapshot_files, snapshot_files

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = structlog.get_logger(__name__)


def deleted_rows_evidence(spark: SparkSession, staged: Staged, name: str, parent_and_added: Callable[[], tuple[Table, SnapshotFiles, list[TableFile]]],
                          progress: Progress) -> Evidence:
    """The scope's data files, the same on both sides, have the same rows deleted before and
    after; `parent_and_added`: the table knowing the staged snapshot, the parent's files and
    the files the staged snapshot added (read while Iceberg's diff runs)."""
    java, parent_id, staged_id = staged.view, staged.parent_id, staged.snapshot_id
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="icemaint-verification") as pool:
        removed = pool.submit(removed_keys, spark, java, staged_id)
        table, before, added = parent_and_added()
        after = child_snapshot_files(table, before, staged_id, removed.result(), added)
    if after is None:
        after = snapshot_files(table, staged_id, reuse=before)
    data_before, data_after = ({entry_of(f) for f in side.data} for side in (before, after))
    if data_before != data_after:
        changed = len(data_before ^ data_after)
        log.error("a change proved by its deleted rows added or removed data files", data_file_entries_changed=changed)
        return Evidence(Fingerprint(name, parent_id, 0, "same data files"), Fingerprint(name, staged_id, changed, "data files changed"),
                        table_bytes=sum(f.size for f in before.data) * 2, difference=f"{changed} data file entries added or removed")
    scope = change_scope(before, after)
    if not scope.before:
        return Evidence(Fingerprint(name, parent_id, 0, "0"), Fingerprint(name, staged_id, 0, "0"), table_bytes=scope.table_bytes)
    progress("verifying", data_files_in_scope=len(scope.before))
    compared = deleted_rows(spark, java, parent_id, staged_id, scope.before, before.files, after.files)
    log.info("verification of deleted rows", data_files=len(scope.before), data_files_read=compared.files_read, rows_read=compared.rows_read,
             rows_deleted_before=compared.before.rows, rows_deleted_after=compared.after.rows, load_s=round(compared.load_s, 3),
             compare_s=round(compared.compare_s, 3))
    return Evidence(Fingerprint(name, parent_id, compared.before.rows, compared.before.digest),
                    Fingerprint(name, staged_id, compared.after.rows, compared.after.digest),
                    data_files=compared.files_read, bytes=compared.bytes_read, table_bytes=scope.table_bytes, difference=compared.difference)
