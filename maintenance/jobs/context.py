"""What a job's run gets, and the one owner of everything the run does to its table.

A job makes every effect through its context: `publish` a change (staged, verified, then
made current when the run verifies), `delete_files` (fenced in time, then the references
checked when the run verifies), `commit_metadata` (a change that makes no snapshot),
`discard_unpublished` (files it wrote and will not publish, fenced), `commit_by_action`
(one of Iceberg's actions that registers metadata itself, on the fenced table). The
context records what was done and how it was verified (`verification`, `deleted`); the
runner keeps only the lease, the run record and the outcome (`jobs/runner.py`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence, Sized
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import structlog

from maintenance import faults
from maintenance.catalogs import TableRef, load_table
from maintenance.config import Config
from maintenance.jobs.claim import claim_table, claims_without_jvm
from maintenance.jobs.deletion import Deleted, FencedDeleter, References, discard_unpublished
from maintenance.jobs.publish import Change, ContentChangedError, Publisher, Verification
from maintenance.jobs.spec import PlanInput, Progress, no_progress
from maintenance.jobs.staging import staging_folder
from maintenance.jobs.verification import Verifier
from maintenance.lease.fence import Fence
from maintenance.spark.fenced_table import FencedTable
from maintenance.spark.jvm import JavaObject, load_java_table
from maintenance.spark.live_entries import live_entries_digest
from maintenance.spark.session import get_spark, make_active_in_this_thread, spark_running
from maintenance.table.references import manifest_list_digest, missing_files

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = structlog.get_logger(__name__)


@dataclass
class JobContext:
    config: Config
    ref: TableRef
    job: str
    run_id: str
    fence: Fence
    verify: bool = False
    progress: Progress = no_progress
    deleted: Deleted | None = None  # what `delete_files` did, also when it was stopped

    @cached_property
    def metadata(self) -> PlanInput:
        """The table as the run first loaded it (pyiceberg): what it plans on."""
        return PlanInput(self.ref, load_table(self.config, self.ref), self.config, int(time.time() * 1000))

    @cached_property
    def spark(self) -> SparkSession:
        """Spark, with this run's job group, so a lost lease cancels exactly its Spark jobs."""
        if not spark_running():
            self.progress("starting Spark")
        session = get_spark(self.config)
        session.sparkContext.setJobGroup(self.run_id, f"icemaint {self.job} {self.ref}", interruptOnCancel=True)
        return session

    @cached_property
    def table(self) -> FencedTable:
        """The Iceberg table; every commit through it passes the fence."""
        return FencedTable(self.spark, load_java_table(self.spark, self.ref), self.fence)

    @cached_property
    def verification(self) -> Verification:
        """How the run's effects were verified, and what that read (the run's record)."""
        return Verification()

    def spark_in_this_thread(self, what: str) -> SparkSession:
        """Spark for a thread the run started (a file group's writer, a read ahead): the
        run's job group, so a lost lease cancels its Spark jobs too."""
        spark = self.spark
        make_active_in_this_thread(spark)
        spark.sparkContext.setJobGroup(self.run_id, f"icemaint {self.job} {self.ref} {what}", interruptOnCancel=True)
        return spark

    @cached_property
    def verifier(self) -> Verifier:
        """Compares each staged change with its parent (`jobs/verification.py`)."""
        return Verifier(self.config, self.ref, lambda: self.spark, self.progress, spark_in_thread=self.spark_in_this_thread,
                        planned_on=lambda: self.metadata.table)

    @cached_property
    def publisher(self) -> Publisher:
        return Publisher(self.table, verify=self.verify, verifier=self.verifier.verify, verification=self.verification, progress=self.progress,
                         discard=self.discard_unpublished)

    def _refreshed_table(self) -> JavaObject:
        self.table.java.refresh()  # the catalog's table shares the fenced one's operations
        return self.table.real

    @cached_property
    def staging_dir(self) -> str:
        """Where this run's own Spark output goes before it is published: under the table's
        data folder, named after the job and the run, so orphan cleanup knows whose it is."""
        return staging_folder(self.metadata.table.location(), self.job, self.run_id)

    def publish(self, change: Change) -> int:
        """Make a change current (staged and verified first when the run verifies)."""
        try:
            published = self.publisher.publish(change)
        except Exception:
            if "staging_dir" in self.__dict__:
                log.warning("published nothing; the run's written files stay for orphan cleanup", output=self.staging_dir)
            raise
        faults.point("published")
        return published

    def commit_metadata(self, change: Callable[[JavaObject], JavaObject], what: str) -> None:
        """Commit a change of the metadata that makes no snapshot (EXPIRE removing snapshots)."""
        self.table.commit_metadata(change, what)

    def claim(self) -> None:
        """Write this run's epoch into the table before a first effect that is not a commit.
        Through pyiceberg (`jobs/claim.py`), so a run that only deletes files never starts
        Spark; through the Java table when this run has built it already, or when pyiceberg
        cannot write the table's metadata (format 3)."""
        if "table" not in self.__dict__ and claims_without_jvm(self.metadata.table):
            claim_table(lambda: load_table(self.config, self.ref), self.fence)
        else:
            self.table.claim()

    def delete_files(self, phases: Sequence[Iterable[str]], references: References, total: int | None = None, *, checksums: bool = True) -> Deleted:
        """Delete files, phase after phase, under the fence (`jobs/deletion.py`): the table is
        claimed first, each file is deleted only while the lease is proven, each batch only
        after `references` (the newest metadata) has been read again. What was deleted stays
        in `deleted` whatever stops it, so every outcome reports it. A phase may be a stream
        (`total` then says how many, for progress); `checksums=False` when the phases name the
        local files' `.NAME.crc` themselves (`FencedDeleter`).

        When the run verifies, every file a retained snapshot needs must exist afterwards
        (one listing of the location and the retained snapshots' manifests; no data file is
        read), and the snapshot current before deleting must name the same manifests
        (`references.manifest_list_digest`: with the first check, the same live entries)."""
        self.claim()
        current = load_table(self.config, self.ref)
        snapshot_id = current.metadata.current_snapshot_id
        before = manifest_list_digest(current, snapshot_id) if self.verify and snapshot_id is not None else None
        if total is None:
            total = sum(len(phase) for phase in phases if isinstance(phase, Sized))
        deleter = FencedDeleter(self.fence, references, checksums=checksums,
                                progress=lambda deleted: self.progress("deleting", files_deleted=deleted, files_to_delete=total))
        self.deleted = deleter.done
        done = deleter.delete(phases, total)
        self.progress("files deleted", files_deleted=done.files)
        if before is not None:
            self._verify_references(snapshot_id, before)  # type: ignore[arg-type]
        return done

    def commit_by_action(self, action: Callable[[JavaObject], None], what: str) -> None:
        """Run one of Iceberg's actions that registers metadata by itself and makes no
        snapshot (statistics), on the fenced table: its commit passes the fence like any
        other. When the run verifies, the snapshot current before must read the same live
        entries afterwards (no data file is read; a writer's later snapshots are no damage)."""
        self.table.claim()
        current = self._refreshed_table().currentSnapshot()
        snapshot_id = int(current.snapshotId()) if current is not None else None
        before = self._live_entries(snapshot_id) if self.verify and snapshot_id is not None else None
        with self.table.commit_errors(what):
            action(self.table.java)
        if before is None:
            return
        self.verification.fingerprint_before = before
        self.verification.fingerprint_after = self._live_entries(snapshot_id)  # type: ignore[arg-type]
        same = self.verification.fingerprint_after == before
        self.verification.verified = same and self.verification.verified is not False
        if not same:
            raise ContentChangedError(f"content changed: after {what}, snapshot {snapshot_id} no longer reads the live entries it read before")

    def _live_entries(self, snapshot_id: int) -> str:
        count, digest = live_entries_digest(self.spark, self._refreshed_table(), snapshot_id)
        return f"{count}/{digest}"

    def discard_unpublished(self, paths: Sequence[str]) -> int:
        """Delete files this run wrote and will not publish (`deletion.discard_unpublished`:
        no snapshot can reference them; only while the lease is proven, and fenced like a
        deletion batch by a read of the lease row)."""
        return discard_unpublished(self.fence, self.metadata.table.io, paths)

    def _verify_references(self, snapshot_id: int, before: str) -> None:
        """Files first: a missing file is named, not met as a read error."""
        table = load_table(self.config, self.ref)
        missing = missing_files(table)
        self.verification.fingerprint_before = before
        if missing:
            self.verification.verified = False
            raise ContentChangedError(f"content changed: {len(missing)} referenced files missing, needed by a retained snapshot (first: {missing[0]})")
        self.verification.fingerprint_after = manifest_list_digest(table, snapshot_id)
        self.verification.verified = self.verification.fingerprint_after == before
        if not self.verification.verified:
            raise ContentChangedError(f"content changed: snapshot {snapshot_id} no longer names the manifests it named before deleting")
