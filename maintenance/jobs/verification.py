"""Verifying a staged change at the cost of the change, not of the table.

Each change says how it is proved (`Change.proof`):
- **rows** (CONVERT, REWRITE, MERGE, COMPACT): the content fingerprint of the files the
  change can affect, in the parent and in the staged snapshot (`table/change_scope.py`
  says which, and proves that comparing them is comparing the whole table), each read
  through Iceberg's scan tasks with every delete applied (`spark.fingerprint`);
- **entries** (MANIFESTS): no row can move when only manifests are rewritten, so the
  multiset of live entries must be the same (`spark.live_entries`, by Iceberg's own
  manifest readers); no data file is read;
- **positions** (REWRITE merging the DVs of a data file that has two, which Iceberg's
  planning refuses to read): every live entry but position deletes and DVs is the same
  (data files, equality deletes: `spark.live_entries`), and each data file of the change's
  scope (`table/change_scope.py`) has the same positions deleted by the position deletes
  and DVs that apply to it (`spark.deleted_positions`, by Iceberg's own delete loader, each
  delete file on its own). A data file's rows are its rows less the positions deleted less
  the rows its equality deletes match: the first and the last are the same on both sides,
  the positions are compared, and outside the scope the deletes that apply are the same
  entries (`change_scope`'s argument). So equal digests mean equal content, where a data
  file with two DVs has for content its rows less the union of both (what a reader merging
  them deletes); no data file is read.
EXPIRE and ORPHANS change no snapshot: after they delete, every file a retained snapshot
needs must still exist (`JobContext.delete_files`); no data file is read either.

**What is read first.** Most of the time goes to two things that do not depend on each
other: Iceberg's diff of the staged snapshot against its parent (it reads every manifest
the change rewrote: all of a streaming table's manifests when one partition is compacted)
and reading the scope's files. So, while the diff runs in another thread, the files the
scope is sure or likely to hold are read in one Spark job: the data files the staged
snapshot added (always in the scope) and, on the parent's side, the data files the change
says it removes (`Change.removes`, a hint: a file counts only if the diff puts it in the
scope, else that side is read again in full). The rest of the scope is read once the diff
has told what it is. When a rewrite commits its groups in one change, both sides are read
sooner still (`jobs/read_ahead.py`): the parent's files it removes while the groups are
written, and the files each group wrote while the change is staged (used only where the
staged snapshot holds them as read and no delete may apply to them there). Every file is read by the verification itself, through scan tasks
it planned, never taken from the job: a fault in how the job read its files (a task
missing, a row dropped on the way) shows as a difference.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

import structlog
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Snapshot

from maintenance.catalogs import TableRef, load_table
from maintenance.config import Config
from maintenance.jobs.read_ahead import WRITTEN, ReadAhead, Reading
from maintenance.jobs.spec import Progress, no_progress
from maintenance.spark.deleted_positions import deleted_positions_digest
from maintenance.spark.fenced_table import Staged
from maintenance.spark.fingerprint import Fingerprint, files_fingerprints, schema_json, written_fingerprint
from maintenance.spark.jvm import JavaObject, load_java_table
from maintenance.spark.live_entries import live_entries_digest, live_entries_digest_without_position_deletes
from maintenance.spark.planned_tasks import removed_keys
from maintenance.table.change_scope import change_scope, entry_of
from maintenance.table.deletes import DeleteIndex
from maintenance.table.files import Content, SnapshotFiles, TableFile, added_files, child_snapshot_files, snapshot_files

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = structlog.get_logger(__name__)
ROWS, ENTRIES, POSITIONS = "rows", "entries", "positions"


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
        on `snapshot_id` will remove (`jobs/read_ahead.py`); a no-op without a thread's Spark."""
        if self.spark_in_thread is not None:
            self.ahead.start(snapshot_id, removes, lambda: self._read_ahead(snapshot_id, removes))

    def read_written(self, files: list[JavaObject]) -> None:
        """Start reading data files a rewrite has just written (Java data files), for the
        staged side of the change that will add them (`jobs/read_ahead.py`); a no-op without
        a thread's Spark."""
        if self.spark_in_thread is not None and files:
            self.ahead.start(WRITTEN, frozenset(str(f.location()) for f in files), lambda: self._read_written(files))

    def stop_reading_ahead(self) -> None:
        """Cancel what was read ahead and not taken (the run's changes are published, or it failed)."""
        self.ahead.stop()

    def _positions(self, spark: SparkSession, staged: Staged) -> Evidence:
        """The "positions" proof (module docstring): per side, the digest of every other
        entry and of the positions each scope file has deleted."""
        java, parent_id, staged_id = staged.view, staged.parent_id, staged.snapshot_id
        table = self._knowing(spark, staged)
        before, after = snapshot_files(table, parent_id), snapshot_files(table, staged_id)
        scope = change_scope(before, after)
        sides = []
        for snapshot_id, files, in_scope in ((parent_id, before, scope.before), (staged_id, after, scope.after)):
            entries, entries_digest = live_entries_digest_without_position_deletes(spark, java, snapshot_id)
            index = DeleteIndex(files)
            positions, digest = deleted_positions_digest(spark, java, snapshot_id, {f.path: index.position_deletes_for(f) for f in in_scope})
            sides.append(Fingerprint(str(self.ref), snapshot_id, entries + positions, f"positions:{entries_digest}:{digest}"))
        return Evidence(sides[0], sides[1], table_bytes=scope.table_bytes)

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
        """Compare the staged snapshot with its parent as `proof` says, both read through the
        staged change's view; `removes`: the data files the change says it removes (read
        early; see the module docstring)."""
        started = time.perf_counter()
        spark, java, name = self.spark(), staged.view, str(self.ref)
        parent_id, staged_id = staged.parent_id, staged.snapshot_id
        if proof == ENTRIES:
            return Evidence(*(Fingerprint(name, snapshot_id, *live_entries_digest(spark, java, snapshot_id)) for snapshot_id in (parent_id, staged_id)))
        if proof == POSITIONS:
            return self._positions(spark, staged)
        with ThreadPoolExecutor(max_workers=2, thread_name_prefix="icemaint-verification") as pool:
            # Iceberg's diff and pyiceberg's read of the staged snapshot run while what was read
            # ahead is awaited: none of the three waits for another.
            removed = pool.submit(removed_keys, spark, java, staged_id)
            loaded = pool.submit(self._parent_and_added, spark, staged)
            schema = schema_json(spark, java)
            read_ahead, ahead = self.ahead.take(parent_id, removes, schema)
            table, before, added = loaded.result()
            added_data = [f for f in added if f.content == Content.DATA]
            written = self.ahead.take_each(WRITTEN, frozenset(f.path for f in added_data), schema)
            written_paths = {path for reading in written for path in reading.paths}
            now = ([f for f in before.data if f.path in removes and f.path not in read_ahead], [f for f in added_data if f.path not in written_paths])
            self.progress("verifying", data_files_to_read=len(now[0]) + len(now[1]), mib_to_read=round(_bytes(*now) / 2**20))
            read_first = files_fingerprints(spark, java, name, [(parent_id, now[0]), (staged_id, now[1])], [*before.files, *added])
            derived = child_snapshot_files(table, before, staged_id, removed.result(), added)
        after = derived if derived is not None else snapshot_files(table, staged_id, reuse=before)
        first = ([f for f in before.data if f.path in removes], now[1])
        if ahead is not None:
            read_first[0] = read_first[0].plus(ahead)
        for reading in _written_as_staged(written, after, added_data):
            first = (first[0], [*first[1], *(f for f in added_data if f.path in reading.paths)])
            read_first[1] = read_first[1].plus(reading.fingerprint)
        first_done = time.perf_counter()
        scope = change_scope(before, after)
        sides = [(parent_id, scope.before), (staged_id, scope.after)]
        rest, partial = [], []
        for (snapshot_id, files), early, fingerprint in zip(sides, first, read_first):
            in_scope = {entry_of(f) for f in files}
            if all(entry_of(f) in in_scope for f in early):
                read = {entry_of(f) for f in early}
                rest.append((snapshot_id, [f for f in files if entry_of(f) not in read]))
                partial.append(fingerprint)
            else:  # the hint named a file outside the scope: this side is read in full
                rest.append((snapshot_id, files))
                partial.append(Fingerprint(name, snapshot_id, 0, "0"))
        if any(files for _, files in rest):
            self.progress("verifying", data_files_to_read=sum(len(f) for _, f in rest), mib_to_read=round(_bytes(*(f for _, f in rest)) / 2**20))
        readable = {f.key: f for f in (*before.files, *after.files)}.values()
        fingerprints = files_fingerprints(spark, java, name, rest, readable)
        fingerprint_before, fingerprint_after = (done.plus(more) for done, more in zip(partial, fingerprints))
        evidence = Evidence(fingerprint_before, fingerprint_after, data_files=scope.data_files, bytes=scope.bytes, table_bytes=scope.table_bytes)
        log.info("verification read", data_files=scope.data_files, bytes=scope.bytes, first_s=round(first_done - started, 3),
                 rest_s=round(time.perf_counter() - first_done, 3))
        return evidence


def _written_as_staged(readings: list[Reading], staged: SnapshotFiles, added_data: list[TableFile]) -> list[Reading]:
    """The readings of written files that stand for reading them in the staged snapshot:
    each file read exactly once over all the readings (a file its writer listed twice, or
    two groups listed, was summed twice but is added once), added there as it was read, and
    no delete of the staged snapshot may apply to it (`jobs/read_ahead.py`); the files of the
    others are read in the staged snapshot."""
    if not readings:
        return []
    as_added = {(f.path, f.spec_id, f.records, f.size): f for f in added_data}
    times_read = Counter(path for reading in readings for path, *_ in reading.written)
    index = DeleteIndex(staged)
    standing = []
    for reading in readings:
        files = [as_added.get(entry) for entry in reading.written]
        once = all(times_read[path] == 1 for path, *_ in reading.written)
        if once and all(f is not None and not index.deletes_for(f) for f in files):
            standing.append(reading)
        else:
            log.info("files written were read early but not as the staged snapshot reads them; they are read again", files=len(reading.paths))
    return standing


def _bytes(*sides: list[TableFile]) -> int:
    return sum(f.size for side in sides for f in side)
