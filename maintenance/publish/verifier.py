"""Verifying a staged change at the cost of the change, not of the table.

The verifier compares a staged snapshot with its parent as the change's proof says (every
proof is a module of `publish/proofs/`, which lists them), both read through the staged
change's view; the parent is the table as it was when the change was staged, so a writer
committing meanwhile changes neither side. It also holds what is read ahead of a change
(`publish/read_ahead.py`): the parent's files a change is about to remove, read while the
change is written, and the files a rewrite has just written.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING

from pyiceberg.table import Table
from pyiceberg.table.snapshots import Snapshot

from maintenance.catalogs import TableRef, load_table
from maintenance.config import Config
from maintenance.progress import Progress, no_progress
from maintenance.publish.proofs import DELETED_ROWS, ENTRIES, POSITIONS, Evidence
from maintenance.publish.proofs.deleted_rows import deleted_rows_evidence
from maintenance.publish.proofs.entries import entries_evidence
from maintenance.publish.proofs.positions import positions_evidence
from maintenance.publish.proofs.rows import rows_evidence
from maintenance.publish.read_ahead import WRITTEN, ReadAhead, Reading
from maintenance.spark.fenced_table import Staged
from maintenance.spark.fingerprint import files_fingerprints, schema_json, written_fingerprint
from maintenance.spark.jvm import JavaObject, load_java_table
from maintenance.table.files import SnapshotFiles, TableFile, added_files, snapshot_files

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


class Verifier:
    """Compares a staged snapshot with its parent, as its change's proof says."""

    def __init__(self, config: Config, ref: TableRef, spark: Callable[[], SparkSession],
                 progress: Progress = no_progress, spark_in_thread: Callable[[str], SparkSession] | None = None,
                 planned_on: Callable[[], Table] | None = None) -> None:
        self.config = config
        self.progress = progress
        self.ref = ref
        self.spark = spark  # started only when rows must be read
        self.spark_in_thread = spark_in_thread  # Spark for another thread, in the run's job group (reads ahead)
        self.planned_on = planned_on  # the table as the run planned on it (pyiceberg), for the readings ahead
        self._read_ahead_tag = f"icemaint-read-ahead-{uuid.uuid4().hex}"
        self.ahead = ReadAhead(lambda: self.spark().sparkContext.cancelJobsWithTag(self._read_ahead_tag))
        self._ahead_table: Table | None = None  # the readings ahead's, loaded once (pyiceberg)
        self._ahead_java: JavaObject | None = None  # and the catalog's Java table
        self._ahead_lock = threading.Lock()  # readings ahead run two at a time

    def read_ahead(self, snapshot_id: int, removes: frozenset[str]) -> None:
        """Start reading, on the parent's side, the data files a change about to be staged
        on `snapshot_id` will remove (`publish/read_ahead.py`); a no-op without a thread's Spark."""
        if self.spark_in_thread is not None:
            self.ahead.start(snapshot_id, removes, lambda: self._read_ahead(snapshot_id, removes))

    def read_written(self, files: list[JavaObject]) -> None:
        """Start reading data files a rewrite has just written (Java data files), for the
        staged side of the change that will add them (`publish/read_ahead.py`); a no-op without
        a thread's Spark."""
        if self.spark_in_thread is not None and files:
            self.ahead.start(WRITTEN, frozenset(str(f.location()) for f in files), lambda: self._read_written(files))

    def stop_reading_ahead(self) -> None:
        """Cancel what was read ahead and not taken (the run's changes are published, or it failed)."""
        self.ahead.stop()

    def _knowing(self, spark: SparkSession, staged: Staged) -> Table:
        """The table as pyiceberg loads it now, knowing the staged snapshot too (which no
        catalog has): its metadata plus that snapshot, as Iceberg's JSON spells it."""
        table = load_table(self.config, self.ref)
        snapshot = Snapshot.model_validate_json(staged.snapshot_json(spark))
        metadata = table.metadata.model_copy(update={"snapshots": [*table.metadata.snapshots, snapshot]})
        return Table(table._identifier, metadata, table.metadata_location, table.io, table.catalog, table.config)  # noqa: SLF001 (no public copy)

    def _parent_and_added(self, spark: SparkSession, staged: Staged) -> tuple[Table, SnapshotFiles, list[TableFile]]:
        """The table knowing the staged snapshot, the parent's files (the planning read's,
        from the cache) and the files the staged snapshot added."""
        table = self._knowing(spark, staged)
        return table, snapshot_files(table, staged.parent_id), added_files(table, staged.snapshot_id)

    def _reading_java_table(self, spark: SparkSession) -> JavaObject:
        """The catalog's Java table for the readings ahead, loaded by the first (two run at a
        time: under a lock) and never refreshed: it knows the planning snapshot, and its
        schema is the one every reading hashes rows in and says it did (`Reading.schema`)."""
        with self._ahead_lock:
            if self._ahead_java is None:
                self._ahead_java = load_java_table(spark, self.ref)
            return self._ahead_java

    def _spark_reading_ahead(self, what: str) -> SparkSession:
        assert self.spark_in_thread is not None
        spark = self.spark_in_thread(what)
        spark.sparkContext.addJobTag(self._read_ahead_tag)
        return spark

    def _read_ahead(self, snapshot_id: int, paths: frozenset[str]) -> Reading:
        spark = self._spark_reading_ahead(f"verification read ahead of {len(paths)} files")
        with self._ahead_lock:
            if self._ahead_table is None or self._ahead_table.snapshot_by_id(snapshot_id) is None:
                # the run's own table when it knows the snapshot (it planned on it), else loaded once
                known = self.planned_on() if self.planned_on is not None else None
                self._ahead_table = known if known is not None and known.snapshot_by_id(snapshot_id) is not None else load_table(self.config, self.ref)
            table = self._ahead_table
        files = snapshot_files(table, snapshot_id)
        chosen = [f for f in files.data if f.path in paths]
        java = self._reading_java_table(spark)
        read = files_fingerprints(spark, java, str(self.ref), [(snapshot_id, chosen)], files.files)[0]
        return Reading(frozenset(f.path for f in chosen), read, schema_json(spark, java))

    def _read_written(self, files: list[JavaObject]) -> Reading:
        spark = self._spark_reading_ahead(f"verification read of {len(files)} files written")
        java = self._reading_java_table(spark)
        read = written_fingerprint(spark, java, str(self.ref), files)
        entries = tuple((str(f.location()), int(f.specId()), int(f.recordCount()), int(f.fileSizeInBytes())) for f in files)
        return Reading(frozenset(path for path, *_ in entries), read, schema_json(spark, java), entries)

    def verify(self, proof: str, staged: Staged, removes: frozenset[str] = frozenset()) -> Evidence:
        """Compare the staged snapshot with its parent as `proof` says (`publish/proofs/`),
        both read through the staged change's view; `removes`: the data files the change says
        it removes (read early: `proofs/rows.py`)."""
        spark, name = self.spark(), str(self.ref)
        if proof == ENTRIES:
            return entries_evidence(spark, staged.view, name, staged.parent_id, staged.snapshot_id)
        if proof == POSITIONS:
            return positions_evidence(spark, staged, self._knowing(spark, staged), name)
        if proof == DELETED_ROWS:
            return deleted_rows_evidence(spark, staged, name, lambda: self._parent_and_added(spark, staged), self.progress)
        return rows_evidence(spark, staged, name, removes, self.ahead, lambda: self._parent_and_added(spark, staged), self.progress)
