"""What a job's run gets: its table behind the fence, Spark, the table's metadata, progress,
and the one way to make a change current (`publish`: staged and verified when the run
verifies)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import structlog

from maintenance import faults
from maintenance.catalogs import TableRef
from maintenance.config import Config
from maintenance.jobs.deletion import Deleted, FencedDeleter, References
from maintenance.jobs.publish import Change, Publisher
from maintenance.jobs.spec import PlanInput, Progress, no_progress
from maintenance.jobs.staging import staging_folder
from maintenance.lease.fence import Fence
from maintenance.spark.fenced_table import FencedTable
from maintenance.spark.fingerprint import Fingerprint, content_fingerprint
from maintenance.spark.jvm import load_java_table
from maintenance.spark.session import get_spark

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
    dry_run: bool = False
    verify: bool = False
    progress: Progress = no_progress
    metadata: PlanInput | None = None  # the table as the runner loaded and planned it
    deletion_baseline: Fingerprint | None = field(default=None, repr=False)  # EXPIRE/ORPHANS: before deleting
    deleted: Deleted | None = None  # what `delete_files` did, also when it was stopped

    @cached_property
    def spark(self) -> SparkSession:
        """Spark, with this run's job group, so a lost lease cancels exactly its Spark jobs."""
        session = get_spark(self.config)
        session.sparkContext.setJobGroup(self.run_id, f"icemaint {self.job} {self.ref}", interruptOnCancel=True)
        return session

    @cached_property
    def table(self) -> FencedTable:
        """The Iceberg table; every commit and deletion through it passes the fence."""
        return FencedTable(self.spark, load_java_table(self.spark, self.ref), self.fence)

    @cached_property
    def publisher(self) -> Publisher:
        return Publisher(self.table, verify=self.verify, fingerprint=self.fingerprint, progress=self.progress)

    def fingerprint(self, snapshot_id: int | None) -> Fingerprint:
        return content_fingerprint(self.spark, self.ref, snapshot_id)

    @cached_property
    def staging_dir(self) -> str:
        """Where this run's own Spark output goes before it is published: under the table's
        data folder, named after the job and the run, so orphan cleanup knows whose it is."""
        assert self.metadata is not None
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

    def delete_files(self, phases: Sequence[Sequence[str]], references: References) -> Deleted:
        """Delete files, phase after phase, under the fence (`jobs/deletion.py`): the table is
        claimed first, each file is deleted only while the lease is proven, each batch only
        after `references` (the newest metadata) has been read again. What was deleted stays
        in `deleted` whatever stops it, so every outcome reports it."""
        self.table.claim()
        total = sum(map(len, phases))
        deleter = FencedDeleter(self.fence, references,
                                progress=lambda deleted: self.progress("deleting", files_deleted=deleted, files_to_delete=total))
        self.deleted = deleter.done
        return deleter.delete(phases)

    def before_deleting(self, current_snapshot_id: int | None) -> None:
        """Jobs that delete files without making a snapshot (EXPIRE, ORPHANS) call this before
        their first deletion: with verification on, the current snapshot is fingerprinted, to
        be read again by the same id once they are done."""
        if self.verify and self.deletion_baseline is None and current_snapshot_id is not None:
            self.deletion_baseline = self.fingerprint(current_snapshot_id)
