"""Publishing a job's change: staged, verified, then made current, or nothing at all.

With verification on, a change never becomes current unverified:
1. **Stage.** The change's Iceberg operation is committed with `stageOnly()` through the
   fence: the new snapshot is added to the metadata, no branch moves, readers see nothing.
2. **Verify.** The staged snapshot's content fingerprint is compared with its parent's,
   both read by time travel. The parent is the table as it was when the change was staged,
   so a writer committing meanwhile changes neither side.
3. **Publish.** If the table's current snapshot is still the parent, main is fast-forwarded
   to the staged snapshot (`cherrypick`, which re-checks that on every commit attempt).
   Otherwise the same change is built again and committed on the newest state, with the
   same validations (planning snapshot, concurrent deletes, the job's own validator). That
   commit is not fingerprinted again (a steady writer would otherwise starve every job):
   what makes it safe is that a verified change keeps its effect on any newer state whose
   new commits its validations accept. Each job's validator states which commits those
   are (`spark.validators`); for example MERGE refuses new partition-scoped equality
   deletes when it moves rows between partition specs.

If the fingerprints differ, nothing is published: the run fails with "content changed",
the staged snapshot stays unreferenced until the next expiry and its files are left to
orphan cleanup. Without verification the change is committed directly, as one commit.

A change is a recipe (`build` returns a fresh, uncommitted operation each time it is
called), because Iceberg operations can be committed only once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import structlog

from maintenance import faults
from maintenance.errors import IcemaintError
from maintenance.jobs.spec import Progress, no_progress
from maintenance.spark.fenced_table import FencedTable, Staged
from maintenance.spark.fingerprint import Fingerprint
from maintenance.spark.jvm import JavaObject

log = structlog.get_logger(__name__)

Fingerprinter = Callable[[int], Fingerprint]


class ContentChangedError(IcemaintError):
    """A staged change does not keep the table's content: it was not published."""


@dataclass(frozen=True)
class Change:
    """One snapshot's worth of a job's work: an operation to commit (`build`), or something
    that commits by itself on the table it is given (`perform`: a Spark action)."""

    what: str  # for errors and logs: "MERGE", "CONVERT"
    build: Callable[[JavaObject], JavaObject] | None = None  # table -> a new, uncommitted snapshot-producing operation
    validate: Callable[[JavaObject], None] | None = None  # run on every commit attempt's base metadata
    perform: Callable[[JavaObject], None] | None = None  # table -> None, having committed one snapshot through it


def _commit(table: FencedTable, change: Change) -> int:
    if change.perform is not None:
        return table.perform(change.perform, change.what, validate=change.validate)
    assert change.build is not None
    return table.commit(change.build(table.java), change.what, validate=change.validate)


def _stage(table: FencedTable, change: Change) -> Staged:
    if change.perform is not None:
        return table.stage_performed(change.perform, change.what, validate=change.validate)
    assert change.build is not None
    return table.stage(change.build(table.java), change.what, validate=change.validate)


@dataclass
class Verification:
    """What the fingerprints said across every change a run published."""

    fingerprint_before: str | None = None  # of the first change's parent
    fingerprint_after: str | None = None  # of the last staged snapshot
    verified: bool | None = None
    staged: list[int] = field(default_factory=list)


class Publisher:
    """Publishes a run's changes through its fenced table; verifies them when asked."""

    def __init__(self, table: FencedTable, *, verify: bool, fingerprint: Fingerprinter, progress: Progress = no_progress) -> None:
        self.table = table
        self.verify = verify
        self.fingerprint = fingerprint
        self.progress = progress
        self.verification = Verification()
        self._fingerprints: dict[int, Fingerprint] = {}

    def publish(self, change: Change) -> int:
        """Make the change current; returns the snapshot id readers now see."""
        if not self.verify:
            return _commit(self.table, change)
        staged = _stage(self.table, change)
        faults.point("staged")
        self.verification.staged.append(staged.snapshot_id)
        self.progress("staged")
        before, after = self._fingerprint_of(staged.parent_id), self._fingerprint_of(staged.snapshot_id)
        if self.verification.fingerprint_before is None:
            self.verification.fingerprint_before = before.fingerprint
        self.verification.fingerprint_after = after.fingerprint
        if not before.same_content(after):
            self.verification.verified = False
            log.error("staged change does not keep the content; not published", staged=staged.snapshot_id, before=before.to_json(), after=after.to_json())
            raise ContentChangedError(
                f"content changed: {before.rows} rows/{before.fingerprint} before, {after.rows} rows/{after.fingerprint} in the staged "
                f"snapshot {staged.snapshot_id}; nothing was published"
            )
        self.verification.verified = self.verification.verified is not False
        self.progress("verified")
        return self._make_current(change, staged)

    def _fingerprint_of(self, snapshot_id: int) -> Fingerprint:
        if snapshot_id not in self._fingerprints:
            self._fingerprints[snapshot_id] = self.fingerprint(snapshot_id)
        return self._fingerprints[snapshot_id]

    def _make_current(self, change: Change, staged: Staged) -> int:
        if self.table.fast_forward(staged, change.what):
            return staged.snapshot_id
        log.info("the table moved while the change was verified; applying it again on the newest state", staged=staged.snapshot_id)
        return _commit(self.table, change)
