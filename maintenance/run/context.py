"""What a job's run gets, and the one owner of everything the run does to its table.

A job makes every effect through its context: `publish` a change (staged, verified, then
made current when the run verifies: `publish/`), `remove_files` (deleted from storage,
fenced in time, then the retained-files proof when the run verifies), `commit_metadata` (a
change that makes no snapshot), `discard_unpublished` (files it wrote and will not
publish, fenced), `commit_by_action` (one of Iceberg's actions that registers metadata
itself, on the fenced table; the entries-kept proof when the run verifies). Every proof is
in `publish/proofs/`. The context records what was done and how it was verified
(`verification`, `removed`); the runner keeps only the lease, the run record and the
outcome (`run/runner.py`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence, Sized
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import structlog

from maintenance import faults
from maintenance.catalogs import TableRef, load_table
from maintenance.config import Config
from maintenance.jobs.file_removal.fenced import FencedRemover, References, Removed, discard_unpublished
from maintenance.jobs.spec import PlanInput
from maintenance.lease.fence import Fence
from maintenance.progress import Progress, no_progress
from maintenance.publish.claim import claim_table, claims_without_jvm
from maintenance.publish.proofs import Evidence, Verification
from maintenance.publish.proofs.entries import live_entries, prove_entries_kept
from maintenance.publish.proofs.retained_files import manifests_named, prove_retained_files
from maintenance.publish.publisher import Change, Publisher
from maintenance.publish.verifier import Verifier
from maintenance.run.compute import ComputeClock
from maintenance.run.output_folder import output_folder
from maintenance.run.phases import PhaseClock
from maintenance.spark.fenced_table import FencedTable, Staged
from maintenance.spark.jvm import JavaObject, load_java_table
from maintenance.spark.session import get_spark, make_active_in_this_thread, spark_running

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
    removed: Removed | None = None  # what `remove_files` did, also when it was stopped
    phases: PhaseClock = field(default_factory=PhaseClock)  # where the run's time goes (`run/phases.py`)
    _early_start: threading.Thread | None = field(default=None, repr=False)  # `start_spark_early`'s
    spark_start_s: float = 0.0  # what this run waited for Spark to start (a daemon's first run; every command's)
    compute: ComputeClock = field(default_factory=ComputeClock)  # what the run costs in compute (`run/compute.py`); made on the run's thread

    @cached_property
    def metadata(self) -> PlanInput:
        """The table as the run first loaded it (pyiceberg): what it plans on."""
        return PlanInput(self.ref, load_table(self.config, self.ref), self.config, int(time.time() * 1000), progress=self.progress)

    @cached_property
    def spark(self) -> SparkSession:
        """Spark, with this run's job group, so a lost lease cancels exactly its Spark jobs."""
        if not spark_running():
            if self._early_start is None:
                self.progress("starting Spark")
            began = time.monotonic()
            with self.phases.within("start"):
                session = get_spark(self.config)
            self.spark_start_s = time.monotonic() - began
        else:
            session = get_spark(self.config)
        session.sparkContext.setJobGroup(self.run_id, f"icemaint {self.job} {self.ref}", interruptOnCancel=True)
        self.compute.spark_reached(session)
        return session

    def compute_s(self) -> float | None:
        """What the run cost in compute-seconds (`run/compute.py`), asked at its end."""
        return self.compute.seconds(self.__dict__.get("spark"), self.run_id)  # `spark` only if the run reached it

    def start_spark_early(self) -> None:
        """Start Spark in a thread of its own while the run does work that needs no JVM (a
        command's Spark takes seconds to start; CONVERT's driver scan is pyarrow's): the
        first use of `spark` then waits for it. A start that fails is met again, and
        reported, by that first use."""
        if spark_running() or self._early_start is not None:
            return
        self.progress("starting Spark")

        def start() -> None:
            try:
                get_spark(self.config)
            except Exception as exc:  # noqa: BLE001 (the run's own `spark` starts it again and says why)
                log.debug("Spark did not start early", error=type(exc).__name__)

        self._early_start = threading.Thread(target=start, name=f"icemaint-spark-start:{self.run_id}", daemon=True)
        self._early_start.start()

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
        """Compares each staged change with its parent (`publish/verifier.py`)."""
        return Verifier(self.config, self.ref, lambda: self.spark, self.progress, spark_in_thread=self.spark_in_this_thread,
                        planned_on=lambda: self.metadata.table)

    @cached_property
    def publisher(self) -> Publisher:
        def verify(proof: str, staged: Staged, removes: frozenset[str]) -> Evidence:
            with self.phases.within("verify"):
                return self.verifier.verify(proof, staged, removes)

        return Publisher(self.table, verify=self.verify, verifier=verify, verification=self.verification, progress=self.progress,
                         discard=self.discard_unpublished)

    def phase(self, phase: str) -> None:
        """The run's work enters `phase` (`run/phases.py`): a job marks where it starts writing."""
        self.phases.enter(phase)

    def _refreshed_table(self) -> JavaObject:
        self.table.java.refresh()  # the catalog's table shares the fenced one's operations
        return self.table.real

    @cached_property
    def output_dir(self) -> str:
        """Where this run's own Spark output goes before it is published: under the table's
        data folder, named after the job and the run, so orphan cleanup knows whose it is
        (`run/output_folder.py`)."""
        return output_folder(self.metadata.table.location(), self.job, self.run_id)

    def publish(self, change: Change) -> int:
        """Make a change current (staged and verified first when the run verifies)."""
        try:
            with self.phases.within("commit"):
                published = self.publisher.publish(change)
        except Exception:
            if "output_dir" in self.__dict__:
                log.warning("published nothing; the run's written files stay for orphan cleanup", output=self.output_dir)
            raise
        faults.point("published")
        return published

    def commit_metadata(self, change: Callable[[JavaObject], JavaObject], what: str) -> None:
        """Commit a change of the metadata that makes no snapshot (EXPIRE removing snapshots)."""
        with self.phases.within("commit"):
            self.table.commit_metadata(change, what)

    def claim(self) -> None:
        """Write this run's epoch into the table before a first effect that is not a commit.
        Through pyiceberg (`publish/claim.py`), so a run that only deletes files never starts
        Spark; through the Java table when this run has built it already, or when pyiceberg
        cannot write the table's metadata (format 3)."""
        if "table" not in self.__dict__ and claims_without_jvm(self.metadata.table):
            claim_table(lambda: load_table(self.config, self.ref), self.fence)
        else:
            self.table.claim()

    def remove_files(self, phases: Sequence[Iterable[str]], references: References, total: int | None = None, *, checksums: bool = True) -> Removed:
        """Delete files from storage, phase after phase, under the fence
        (`jobs/file_removal/fenced.py`): the table is claimed first, each file is deleted only
        while the lease is proven, each batch only after `references` (the newest metadata)
        has been read again. What was deleted stays in `removed` whatever stops it, so every
        outcome reports it. A phase may be a stream (`total` then says how many, for
        progress); `checksums=False` when the phases name the local files' `.NAME.crc`
        themselves (`FencedRemover`). When the run verifies, the retained-files proof follows
        (`publish/proofs/retained_files.py`)."""
        with self.phases.within("write"):
            return self._remove_files(phases, references, total, checksums=checksums)

    def _remove_files(self, phases: Sequence[Iterable[str]], references: References, total: int | None, *, checksums: bool) -> Removed:
        self.claim()
        current = load_table(self.config, self.ref)
        snapshot_id = current.metadata.current_snapshot_id
        before = manifests_named(current, snapshot_id) if self.verify and snapshot_id is not None else None
        if total is None:
            total = sum(len(phase) for phase in phases if isinstance(phase, Sized))
        remover = FencedRemover(self.fence, references, checksums=checksums,
                                progress=lambda deleted: self.progress("deleting", files_deleted=deleted, files_to_delete=total))
        self.removed = remover.done
        done = remover.remove(phases, total)
        self.progress("files deleted", files_deleted=done.files)
        if before is not None:
            with self.phases.within("verify"):
                prove_retained_files(load_table(self.config, self.ref), snapshot_id, before, self.verification)  # type: ignore[arg-type]
        return done

    def commit_by_action(self, action: Callable[[JavaObject], None], what: str) -> None:
        """Run one of Iceberg's actions that registers metadata by itself and makes no
        snapshot (statistics), on the fenced table: its commit passes the fence like any
        other. When the run verifies, the snapshot current before must read the same live
        entries afterwards (`publish/proofs/entries.py`, the entries-kept proof)."""
        self.table.claim()
        current = self._refreshed_table().currentSnapshot()
        snapshot_id = int(current.snapshotId()) if current is not None else None
        before = live_entries(self.spark, self._refreshed_table(), snapshot_id) if self.verify and snapshot_id is not None else None
        with self.table.commit_errors(what):
            action(self.table.java)
        if before is None:
            return
        prove_entries_kept(self.verification, before, lambda: live_entries(self.spark, self._refreshed_table(), snapshot_id), snapshot_id, what)  # type: ignore[arg-type]

    def discard_unpublished(self, paths: Sequence[str]) -> int:
        """Delete files this run wrote and will not publish (`jobs/file_removal/fenced.py`:
        no snapshot can reference them; only while the lease is proven, and fenced like a
        deletion batch by a read of the lease row)."""
        return discard_unpublished(self.fence, self.metadata.table.io, paths)
