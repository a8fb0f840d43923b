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

**The rows a rewrite read stand for the parent's.** MERGE and COMPACT (bin-pack) read each
file they rewrite through the scan task Iceberg planned for it on the planning snapshot,
with every delete Iceberg applies to it there, and fingerprint its rows as they read them,
before anything else is done with them (`fingerprint.ReadFingerprints`; the change carries
the sum as `RowsRead`). When the staged snapshot's parent is that planning snapshot, this
is exactly what verification would read for those files on the parent's side: the same
planner on the same snapshot, the same reader, the same hash. So the parent's side is
that sum plus a read of the scope's other parent files (a rewrite removes every file it
read, so all of them are in the scope; when they are not, the parent's side is read in
full). The staged side is always read: the data files the change wrote at once, while
Iceberg's diff of the staged snapshot (which reads every manifest the change rewrote) runs
in another thread, then whatever else the scope holds once the diff has told what it is.

A run that commits every few groups stages its later changes on its own earlier ones, not
on the planning snapshot. The sum still stands when every snapshot from the planning one
to the parent is a change this verifier verified (and that became current as verified)
whose scope holds none of the files read: by `table/change_scope.py`, a file outside a
change's scope has the same rows on both sides of it, so, change after change, the rows
read from the planning snapshot are the parent's. A writer's commit in between (or a
change applied again on a newer state) breaks that chain, and the parent's side is read.

A count that is off (a task that ran twice counts its rows twice: a recomputed stage)
makes the sides differ, and then the parent's side is read in full before anything is
concluded: this only ever makes verification read more.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

import structlog

from maintenance.catalogs import TableRef, load_table
from maintenance.config import Config
from maintenance.jobs.spec import Progress, no_progress
from maintenance.spark.fingerprint import Fingerprint, files_fingerprints
from maintenance.spark.jvm import JavaObject
from maintenance.spark.planned_tasks import removed_keys
from maintenance.table.change_scope import change_scope, entries_digest, entry_of
from maintenance.table.files import Content, TableFile, added_files, child_snapshot_files, snapshot_files

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = structlog.get_logger(__name__)
ROWS, ENTRIES = "rows", "entries"


@dataclass(frozen=True)
class RowsRead:
    """The rows a change's rewrite read, fingerprinted as it read them (module docstring)."""

    snapshot_id: int  # the snapshot its scan tasks were planned on
    paths: frozenset[str]  # the data files it read, each through its task (every delete applied)
    rows: int
    fingerprint: str


@dataclass(frozen=True)
class Evidence:
    """What one verification compared, and what it read to do so."""

    before: Fingerprint  # of the parent
    after: Fingerprint  # of the staged snapshot
    data_files: int = 0  # data files read, both sides
    bytes: int = 0  # their bytes
    table_bytes: int = 0  # the data bytes of both snapshots
    seen_in_rewrite: int = 0  # parent files whose rows were fingerprinted as the rewrite read them (`RowsRead`)

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
        self._verified: dict[int, tuple[int, frozenset[str]]] = {}  # staged snapshot -> (its parent, the paths in its scope)

    def verify(self, proof: str, parent_id: int, staged_id: int, read: RowsRead | None = None) -> Evidence:
        started = time.perf_counter()
        table = load_table(self.config, self.ref)
        before = snapshot_files(table, parent_id)  # the planning read's, from the cache
        if proof == ENTRIES:
            after = snapshot_files(table, staged_id, reuse=before)
            return Evidence(Fingerprint(str(self.ref), parent_id, len(before.files), entries_digest(before)),
                            Fingerprint(str(self.ref), staged_id, len(after.files), entries_digest(after)))
        spark, java, name = self.spark(), self.java_table(), str(self.ref)
        added = added_files(table, staged_id)
        written = [f for f in added if f.content == Content.DATA]  # always in the scope: read at once
        self.progress("verifying", data_files_to_read=len(written), mib_to_read=round(_bytes(written) / 2**20))
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="icemaint-snapshot-diff") as diff:
            # Iceberg's diff of the staged snapshot (it reads every manifest the change
            # rewrote) runs while the files the change wrote are read.
            removed = diff.submit(removed_keys, spark, java, staged_id)
            (fingerprint_written,) = files_fingerprints(spark, java, name, [(staged_id, written)], [*before.files, *added])
            derived = child_snapshot_files(table, before, staged_id, removed.result(), added)
        after = derived if derived is not None else snapshot_files(table, staged_id, reuse=before)
        read_first = time.perf_counter()
        scope = change_scope(before, after)
        scope_entries = {entry_of(f) for f in scope.after}
        if all(entry_of(f) in scope_entries for f in written):
            rest_after = [f for f in scope.after if entry_of(f) not in {entry_of(w) for w in written}]
        else:  # cannot be: every data file a change adds is in its scope; read the side in full rather than rely on it
            rest_after, fingerprint_written = scope.after, Fingerprint(name, staged_id, 0, "0")
        in_scope = {f.path for f in scope.before}
        seen = read if read is not None and read.paths <= in_scope and self._unchanged(read.paths, read.snapshot_id, parent_id) else None
        to_read = scope.before if seen is None else [f for f in scope.before if f.path not in seen.paths]
        if to_read or rest_after:
            self.progress("verifying", data_files_to_read=len(to_read) + len(rest_after), mib_to_read=round(_bytes(to_read, rest_after) / 2**20))
        readable = {f.key: f for f in (*before.files, *after.files)}.values()
        fingerprint_before, fingerprint_rest = files_fingerprints(spark, java, name, [(parent_id, to_read), (staged_id, rest_after)], readable)
        fingerprint_after = fingerprint_rest.plus(fingerprint_written.rows, fingerprint_written.fingerprint)
        if seen is not None:
            fingerprint_before = fingerprint_before.plus(seen.rows, seen.fingerprint)
            if not fingerprint_before.same_content(fingerprint_after):
                log.warning("the rows the rewrite read do not add up to the staged snapshot's; reading the parent's files",
                            seen_rows=seen.rows, staged_rows=fingerprint_after.rows)
                (fingerprint_before,) = files_fingerprints(spark, java, name, [(parent_id, scope.before)], readable)
                to_read, seen = [*scope.before], None
        evidence = Evidence(
            fingerprint_before,
            fingerprint_after,
            data_files=len(to_read) + len(scope.after),
            bytes=_bytes(to_read, scope.after),
            table_bytes=scope.table_bytes,
            seen_in_rewrite=len(seen.paths) if seen is not None else 0,
        )
        if evidence.same:
            self._verified[staged_id] = (parent_id, frozenset(f.path for f in (*scope.before, *scope.after)))
        log.info("verification read", data_files=evidence.data_files, bytes=evidence.bytes, seen_in_rewrite=evidence.seen_in_rewrite,
                 diff_and_written_s=round(read_first - started, 3), rest_s=round(time.perf_counter() - read_first, 3))
        return evidence

    def _unchanged(self, paths: frozenset[str], since: int, parent_id: int) -> bool:
        """Whether the rows of these files are the same in `parent_id` as in `since`: the
        same snapshot, or only changes verified here in between, none of whose scopes holds
        one of them (module docstring)."""
        snapshot = parent_id
        while snapshot != since:
            verified = self._verified.get(snapshot)
            if verified is None or not paths.isdisjoint(verified[1]):
                return False
            snapshot = verified[0]
        return True


def _bytes(*sides: list[TableFile]) -> int:
    return sum(f.size for side in sides for f in side)
