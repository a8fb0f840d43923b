"""Fencing: a job whose lease was lost commits nothing and deletes nothing.

Two tokens guard every effect, and both must agree at the moment of the effect:
- the lease in the state database (holder + epoch, unexpired by the database clock);
- the table property `icemaint.lease-epoch`, which a job writes (through the fence) before
  its first effect on a table. A holder that took the lease over writes its higher epoch
  there before it does anything, so the table itself rejects the old holder: every commit
  attempt, including each compare-and-swap retry Iceberg makes, checks that the metadata it
  builds on carries no epoch above its own (see docs/ARCHITECTURE.md).
`keeper.LeaseKeeper` renews the lease while the job runs; when renewal fails the job's
Spark jobs are cancelled and the fence is shut.

Deleting a file cannot be made conditional the way a commit is (no store deletes "only if
the lease is still mine"), so a deletion is judged by time instead: `time_left` is how long
the lease is still proven by this host's monotonic clock (`LeaseKeeper.proven_until`), less
a margin, and a file may be deleted only while it is positive and less than a batch's
window after `assert_held` read the lease row (`jobs/file_removal/fenced.py`).
"""

from __future__ import annotations

import time

import structlog

from maintenance.errors import IcemaintError
from maintenance.lease.keeper import LeaseKeeper
from maintenance.state.database import StateUnavailableError
from maintenance.state.leases import LeaseStore
from maintenance.table.marks import SUMMARY_EPOCH, SUMMARY_JOB, SUMMARY_RUN_ID

log = structlog.get_logger(__name__)

MARGIN_SHARE = 0.25  # of the TTL: deletions stop this long before the proven end of the lease
MIN_MARGIN_S = 0.5


class FencedError(IcemaintError):
    """The lease is no longer ours: the effect was refused."""


class Fence:
    """The one gate every commit and every file-deletion batch of a job passes."""

    def __init__(self, store: LeaseStore, keeper: LeaseKeeper, *, job: str, run_id: str) -> None:
        self.store = store
        self.keeper = keeper
        self.job = job
        self.run_id = run_id

    @property
    def epoch(self) -> int:
        return self.keeper.lease.epoch

    def summary(self) -> dict[str, str]:
        """What each maintenance commit writes into its snapshot summary."""
        return {SUMMARY_JOB: self.job, SUMMARY_RUN_ID: self.run_id, SUMMARY_EPOCH: str(self.epoch)}

    def assert_held(self, action: str) -> None:
        """Prove, now, that the lease is held with our epoch: a read of the lease row in the
        database (this holder, this epoch, an expiry the database clock has not passed), not
        the keeper's last renewal. An operator's forced release clears the holder and bumps
        the epoch but keeps the expiry, so the keeper may not notice it before its next
        renewal and the lease stays proven by time (`time_left`) until then: this read is what
        fences the holder at its next commit attempt, deletion batch or discard."""
        if self.keeper.lost.is_set():
            raise FencedError(f"{action} refused: lease on {self.keeper.lease.table} lost ({self.keeper.lost_reason})")
        try:
            held = self.store.is_held(self.keeper.lease)
        except StateUnavailableError as exc:
            raise FencedError(f"{action} refused: cannot prove the lease ({exc})") from exc
        if not held:
            self.keeper.mark_lost("lease no longer held")
            raise FencedError(f"{action} refused: lease on {self.keeper.lease.table} (epoch {self.epoch}) is no longer held")

    @property
    def margin_s(self) -> float:
        """How long before the proven end of the lease deletions stop: room for one deletion
        call to finish and for clock rates to differ (NTP slews by at most 0.05%)."""
        return max(self.keeper.ttl_s * MARGIN_SHARE, MIN_MARGIN_S)

    def time_left(self) -> float:
        """Seconds during which an effect may still start: the lease is proven until
        `keeper.proven_until` (monotonic), less the margin; negative once it is not, and
        never positive once the lease is known lost."""
        if self.keeper.lost.is_set():
            return -1.0
        return self.keeper.proven_until - self.margin_s - time.monotonic()

    def advance_past(self, table_epoch: int | None) -> None:
        """If the table names an epoch above ours although we hold the lease, the state
        database was reset: move our epoch past it (only while we still hold the lease) or be
        fenced. Nothing to do when the table names none, or ours or an older one."""
        if not newer_epoch(table_epoch, self.epoch):
            return
        with self.keeper.lock:
            advanced = self.store.advance_epoch(self.keeper.lease, table_epoch + 1)
            if advanced is not None:
                self.keeper.lease = advanced
        if advanced is None:
            self.assert_table_token(table_epoch, "claim")
            return
        log.warning("lease epoch advanced past the table's", table=advanced.table, epoch=advanced.epoch, table_epoch=table_epoch)

    def assert_table_token(self, table_epoch: int | None, action: str) -> None:
        """The table names no holder newer than us (`newer_epoch_refusal`); if it does, the
        lease is lost."""
        refusal = newer_epoch_refusal(table_epoch, self.epoch, action)
        if refusal is not None:
            self.keeper.mark_lost(f"table carries epoch {table_epoch}")
            raise refusal

    def before_commit(self, base_epoch: int | None, new_epoch: int | None, summary: dict[str, str] | None) -> None:
        """Called for every commit attempt with the epochs of the base and new metadata."""
        self.assert_table_token(base_epoch, "commit")
        if new_epoch != self.epoch:
            raise FencedError(f"commit refused: the table is not claimed by this lease (epoch {new_epoch}, ours {self.epoch})")
        if summary is not None and summary.get(SUMMARY_RUN_ID) != self.run_id:
            raise FencedError("commit refused: a maintenance snapshot must carry this run's summary")
        self.assert_held("commit")


def newer_epoch(table_epoch: int | None, epoch: int) -> bool:
    """The one epoch rule: a table that names an epoch above ours was claimed by a newer
    lease (none, ours or an older one: it was not). `Fence` applies it before every effect,
    and a pyiceberg claim inside its commit (`publish/claim.py`)."""
    return table_epoch is not None and table_epoch > epoch


def newer_epoch_refusal(table_epoch: int | None, epoch: int, action: str) -> FencedError | None:
    """The error refusing `action` when the table names a newer epoch (`newer_epoch`), else None."""
    if newer_epoch(table_epoch, epoch):
        return FencedError(f"{action} refused: table was claimed by a newer lease (epoch {table_epoch} > {epoch})")
    return None
