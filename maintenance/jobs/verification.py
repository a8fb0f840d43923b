"""Verifying a staged change at the cost of the change, not of the table.

Each change says how it is proved (`Change.proof`):
- **rows** (CONVERT, REWRITE, MERGE, COMPACT): the content fingerprint of the files the
  change can affect, in the parent and in the staged snapshot (`table/change_scope.py`
  says which, and proves that comparing them is comparing the whole table), each read
  through Iceberg's scan tasks with every delete applied (`spark.fingerprint`);
- **entries** (MANIFESTS): no row can move when only manifests are rewritten, so the
  multiset of live entries must be the same (`change_scope.entries_digest`); no data
  file is read.
EXPIRE and ORPHANS change no snapshot: after they delete, every file a retained snapshot
needs must still exist (`JobContext.delete_files`); no data file is read either.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import structlog

from maintenance.catalogs import TableRef, load_table
from maintenance.config import Config
from maintenance.jobs.spec import Progress, no_progress
from maintenance.spark.fingerprint import Fingerprint, files_fingerprints
from maintenance.spark.jvm import JavaObject
from maintenance.spark.planned_tasks import removed_keys
from maintenance.table.change_scope import change_scope, entries_digest
from maintenance.table.files import SnapshotFiles, child_snapshot_files, snapshot_files

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = structlog.get_logger(__name__)
ROWS, ENTRIES = "rows", "entries"


@dataclass(frozen=True)
class Evidence:
    """What one verification compared, and what it read to do so."""

    before: Fingerprint  # of the parent
    after: Fingerprint  # of the staged snapshot
    data_files: int = 0  # data files read, both sides
    bytes: int = 0  # their bytes
    table_bytes: int = 0  # the data bytes of both snapshots

    @property
    def same(self) -> bool:
        return self.before.same_content(self.after)


class Verifier:
    """Compares a staged snapshot with its parent, as its change's proof says."""

    def __init__(self, config: Config, ref: TableRef, spark: Callable[[], SparkSession], java_table: Callable[[], JavaObject],
                 progress: Progress = no_progress) -> None:
        self.config = config
        self.progress = progress
        self.ref = ref
        self.spark = spark  # started only when rows must be read
        self.java_table = java_table  # the catalog's table, refreshed to know the staged snapshot

    def verify(self, proof: str, parent_id: int, staged_id: int) -> Evidence:
        started = time.perf_counter()
        before, after = self._files(proof, parent_id, staged_id)
        read_metadata = time.perf_counter()
        if proof == ENTRIES:
            return Evidence(Fingerprint(str(self.ref), parent_id, len(before.files), entries_digest(before)),
                            Fingerprint(str(self.ref), staged_id, len(after.files), entries_digest(after)))
        scope = change_scope(before, after)
        scoped = time.perf_counter()
        self.progress("verifying", data_files_to_read=scope.data_files, mib_to_read=round(scope.bytes / 2**20))
        spark, table = self.spark(), self.java_table()
        name = str(self.ref)
        fingerprint_before, fingerprint_after = files_fingerprints(spark, table, name, [(parent_id, scope.before), (staged_id, scope.after)],
                                                                   {f.key: f for f in (*before.files, *after.files)}.values())
        evidence = Evidence(
            fingerprint_before,
            fingerprint_after,
            data_files=scope.data_files,
            bytes=scope.bytes,
            table_bytes=scope.table_bytes,
        )
        log.info("verification read", data_files=scope.data_files, bytes=scope.bytes, metadata_s=round(read_metadata - started, 3),
                 scope_s=round(scoped - read_metadata, 3), fingerprints_s=round(time.perf_counter() - scoped, 3))
        return evidence

    def _files(self, proof: str, parent_id: int, staged_id: int) -> tuple[SnapshotFiles, SnapshotFiles]:
        """Both snapshots' live files. The parent's come from the planning read. For rows, the
        staged snapshot's are the parent's less what Iceberg's diff says it removed, plus
        what it added (`files.child_snapshot_files`, checked against its manifest list's
        counts); for entries, and whenever that check fails, they are read from every
        manifest it does not share with its parent."""
        table = load_table(self.config, self.ref)
        before = snapshot_files(table, parent_id)
        if proof == ROWS:
            after = child_snapshot_files(table, before, staged_id, removed_keys(self.spark(), self.java_table(), staged_id))
            if after is not None:
                return before, after
        return before, snapshot_files(table, staged_id, reuse=before)
