"""An Iceberg table whose every commit attempt passes the fence, and whose changes can be
staged without reaching the catalog.

`FencedOperations` implements Iceberg's `TableOperations` in Python (a Py4J callback
proxy) around the catalog's own operations. Iceberg calls `commit(base, new)` once per
attempt, including every retry after a failed compare-and-swap, so the fence sees each
attempt with the exact metadata it builds on. A refused attempt raises a non-retryable
error: Iceberg gives up and nothing lands. Spark actions given this table commit through
it too.

**Staging never reaches the catalog.** A change to be verified is built and "committed"
as Iceberg would (its manifests and manifest list written, its validations run against
the base it refreshed), but the fence keeps the resulting metadata (the base plus the one
new snapshot, on no branch) in memory instead of sending it to the catalog: `Staged`.
Verification reads it through a view table over that metadata (`Staged.view`), and
publishing commits that very snapshot on the newest metadata, main moving to it, if main
is still at its parent (`FencedTable.publish_staged`); if the table moved meanwhile, the
change is built again on the newest state (`publish/publisher.py`).

Why not a `stageOnly()` commit to the catalog: a snapshot added to the catalog's metadata
without moving main still raises the table's last sequence number. A writer whose commit
was built on the metadata before it then adds a snapshot whose sequence number is not
above the last one, and a REST catalog refuses that with 400 Bad Request, which no client
retries: measured on SeaweedFS's REST catalog 4.48 (pyiceberg's append failed), and what
Iceberg's own server did before 1.11. Staged in memory, a change is invisible to writers
until it is published by an ordinary compare-and-swap commit, which a writer's commit can
only make fail with a retryable conflict, on either side.

An operation icemaint builds is staged through Iceberg's `stageOnly()`; a Spark action
(`rewriteManifests`) builds and commits its operation itself. Either way the commit the
fence receives adds one snapshot (the action's also moves main to it); the fence keeps
base plus that snapshot alone and refuses anything else. While the producer finishes
(its clean-up looks for the snapshot it committed) the fenced table shows the staged
metadata (`GatedOperations.show`).

The claim (this run's epoch in the table's properties, which every older holder's commit
and deletion is refused against) rides on the run's first commit: the fence adds it to the
metadata each attempt commits, so a run that commits writes the table's metadata once, not
twice. EXPIRE and ORPHANS, which delete files, claim with a commit of its own first
(`claim`), and delete outside this class: deletion is fenced in time (`jobs/file_removal/fenced.py`).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

import structlog

from maintenance import faults
from maintenance.errors import CatalogUnavailableError, ConflictError, IcemaintError
from maintenance.lease.fence import Fence, FencedError
from maintenance.spark.errors import connection_failure, is_java_exception, java_errors
from maintenance.spark.gated_operations import gated_table, staged_view
from maintenance.spark.jvm import JavaObject, jvm
from maintenance.table.marks import EPOCH_PROPERTY, SUMMARY_EPOCH, SUMMARY_JOB, SUMMARY_RUN_ID, parse_epoch

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = structlog.get_logger(__name__)
_MIN_JAVA_LONG_FROM_PY4J = 2**31  # smaller Python ints cross the gateway as Integer


class FencedOperations:
    """Python implementation of org.apache.iceberg.TableOperations; delegates but for commit."""

    class Java:
        implements = ["org.apache.iceberg.TableOperations"]

    def __init__(self, real: JavaObject, fence: Fence, build_from: Callable[[JavaObject], JavaObject], new_map: Callable[[], JavaObject]) -> None:
        self.real = real
        self.fence = fence
        self.build_from = build_from  # TableMetadata.buildFrom (a static method, reached through the gateway)
        self.new_map = new_map  # java.util.HashMap's constructor
        self.validator: Callable[[JavaObject], None] | None = None
        self.errors: list[IcemaintError] = []  # refusals and validation failures, newest last
        self.snapshot_ids: list[int] = []  # every id handed out, newest last
        self.stage_only = False  # keep the commit's metadata in memory (see the module docstring)
        self.staged: list[tuple[JavaObject, JavaObject]] = []  # (base, base + the one new snapshot), newest last
        self.gated: JavaObject | None = None  # the GatedOperations in front of this gate (shows the staged metadata)

    def commit(self, base: JavaObject, metadata: JavaObject) -> None:
        if self.stage_only:
            self._stage(base, metadata)
            return
        try:
            metadata = self._claiming(base, metadata)
            self.fence.before_commit(
                parse_epoch(base.properties().get(EPOCH_PROPERTY)) if base is not None else None,
                parse_epoch(metadata.properties().get(EPOCH_PROPERTY)),
                _new_snapshot_summary(base, metadata),
            )
            if self.validator is not None:
                self.validator(base)  # against exactly the metadata this attempt replaces
            self._proven_now("commit")
        except IcemaintError as exc:
            self.errors.append(exc)
            raise
        try:
            self.real.commit(base, metadata)
        except Exception as exc:
            if is_java_exception(exc, "CommitFailedException"):  # Iceberg retries it on fresh metadata
                log.info("a commit attempt lost a race with another commit; Iceberg tries again on the newest metadata")
            raise

    def _proven_now(self, action: str) -> None:
        """The lease is still proven by time when the attempt is sent, after the database
        read and the validator. Where the catalog swaps against the whole base metadata (SQL,
        Hive, Glue), a newer holder's claim changed it and refuses this attempt anyway; a
        REST catalog checks only what the commit's requirements name (main's snapshot), and
        a claim changes only a property, so an attempt held up past the lease could land
        after a newer holder's claim (and write our older epoch back). Started only while
        no other holder can have the lease, an attempt can land late only if it was
        already on its way."""
        if self.fence.time_left() <= 0:
            raise FencedError(f"{action} refused: the lease on {self.fence.keeper.lease.table} is not proven for long enough (renewals are late)")

    def _claiming(self, base: JavaObject, metadata: JavaObject) -> JavaObject:
        """`metadata` carrying our epoch. A base naming a newer epoch while we still hold the
        lease means the state database was reset: our epoch moves past it (else: fenced).
        The builder keeps the changes `metadata` already records (a REST catalog sends them
        as the commit's updates) and adds the property's."""
        self.fence.advance_past(parse_epoch(base.properties().get(EPOCH_PROPERTY)) if base is not None else None)
        epoch = str(self.fence.epoch)
        if metadata.properties().get(EPOCH_PROPERTY) == epoch:
            return metadata
        claim = self.new_map()
        claim.put(EPOCH_PROPERTY, epoch)
        return self.build_from(metadata).setProperties(claim).build()

    def _stage(self, base: JavaObject, metadata: JavaObject) -> None:
        """Keep `base` plus the one snapshot `metadata` adds, on no branch, instead of
        committing: checked by the fence and the change's validator as a commit would be
        (so a fenced holder does not even verify), and sent nowhere."""
        try:
            staged = self._staged(base, metadata)
            self.fence.assert_table_token(parse_epoch(base.properties().get(EPOCH_PROPERTY)), "stage")
            self.fence.assert_held("stage")
            if self.validator is not None:
                self.validator(base)
        except IcemaintError as exc:
            self.errors.append(exc)
            raise
        self.staged.append((base, staged))
        if self.gated is not None:
            self.gated.show(staged)

    def _staged(self, base: JavaObject, metadata: JavaObject) -> JavaObject:
        """`base` plus the one snapshot `metadata` adds (a `stageOnly()` commit adds it alone,
        an action's commit also moves main to it), on no branch."""
        if base is None:
            raise IcemaintError("cannot stage the creation of a table")
        changes = list(metadata.changes())
        kinds = {str(change.getClass().getSimpleName()) for change in changes}
        added = [change.snapshot() for change in changes if str(change.getClass().getSimpleName()) == "AddSnapshot"]
        if len(added) != 1 or not kinds <= {"AddSnapshot", "SetSnapshotRef"}:
            raise IcemaintError(f"cannot stage this commit: it changes {', '.join(sorted(kinds)) or 'nothing'}, not one new snapshot")
        return self.build_from(base).addSnapshot(added[0]).build()

    def current(self) -> JavaObject:
        return self.real.current()

    def refresh(self) -> JavaObject:
        return self.real.refresh()

    def io(self) -> JavaObject:
        return self.real.io()

    def encryption(self) -> JavaObject:
        return self.real.encryption()

    def metadataFileLocation(self, file_name: str) -> str:  # noqa: N802 (Java's name)
        return self.real.metadataFileLocation(file_name)

    def locationProvider(self) -> JavaObject:  # noqa: N802
        return self.real.locationProvider()

    def temp(self, uncommitted: JavaObject) -> JavaObject:
        return self.real.temp(uncommitted)

    def newSnapshotId(self) -> int:  # noqa: N802
        # Drawn here so the value crosses as a Java long (63 random bits, never below 2^31).
        while True:
            value = secrets.randbits(63)
            if value >= _MIN_JAVA_LONG_FROM_PY4J:
                self.snapshot_ids.append(value)
                return value

    def requireStrictCleanup(self) -> bool:  # noqa: N802
        return bool(self.real.requireStrictCleanup())

    def toString(self) -> str:  # noqa: N802
        return f"FencedOperations({self.real.toString()})"


def _sequence_refused(exc: BaseException) -> bool:
    """A REST catalog's 400 for a snapshot whose sequence number another commit took first
    (Iceberg's server before 1.11, SeaweedFS's): the table moved, as with a 409."""
    return is_java_exception(exc, "BadRequestException") and "sequence number" in str(exc)


def _new_snapshot_summary(base: JavaObject, metadata: JavaObject) -> dict[str, str] | None:
    """The icemaint keys of the snapshot this commit makes current, if it makes one."""
    new = metadata.currentSnapshot()
    if new is None:
        return None
    old = base.currentSnapshot() if base is not None else None
    if old is not None and old.snapshotId() == new.snapshotId():
        return None
    summary = new.summary()
    return {key: summary.get(key) for key in (SUMMARY_JOB, SUMMARY_RUN_ID, SUMMARY_EPOCH)}


@dataclass(frozen=True)
class Staged:
    """A change staged in memory (see the module docstring): its snapshot, the metadata it
    was built on (`base`), that metadata plus the snapshot (`metadata`), and a read-only
    table over the latter (`view`: Iceberg's planning and readers see the snapshot, the
    catalog does not)."""

    snapshot_id: int
    parent_id: int
    snapshot: JavaObject
    base: JavaObject
    metadata: JavaObject
    view: JavaObject

    def snapshot_json(self, spark: SparkSession) -> str:
        """The snapshot as Iceberg's table metadata writes it (for pyiceberg's view)."""
        return str(jvm(spark).org.apache.iceberg.SnapshotParser.toJson(self.snapshot))

    def written_metadata(self) -> list[str]:
        """The files staging wrote that nothing references unless it is published: the
        manifest list and the manifests the snapshot added (the others are its parent's)."""
        manifests = self.snapshot.allManifests(self.view.io())
        ours = []
        for index in range(manifests.size()):
            manifest = manifests.get(index)
            if manifest.snapshotId() is not None and int(manifest.snapshotId()) == self.snapshot_id:
                ours.append(str(manifest.path()))
        return [str(self.snapshot.manifestListLocation()), *ours]


class FencedTable:
    """A job's handle on one table: the Java table that commits through the fence."""

    def __init__(self, spark: SparkSession, real_table: JavaObject, fence: Fence) -> None:
        from pyspark.java_gateway import ensure_callback_server_started

        gateway = spark.sparkContext._gateway  # type: ignore[attr-defined]
        ensure_callback_server_started(gateway)
        # A Java exception raised by the real commit inside our callback must reach Iceberg
        # as itself: CommitFailedException is retried, CommitStateUnknownException is not
        # cleaned up. Our own refusals stay Python errors, which Iceberg never retries.
        gateway.python_parameters.propagate_java_exceptions = True
        self.spark = spark
        self.fence = fence
        # Reads and uncommitted writes (a rewrite's new files, collected by Iceberg's rewrite
        # coordinator) go through the catalog's own table: the fenced one answers every
        # `schema()`, `io()`, `spec()` through a Py4J callback (hundreds per rewrite).
        self.real = real_table
        self.ops = FencedOperations(real_table.operations(), fence, jvm(spark).org.apache.iceberg.TableMetadata.buildFrom, jvm(spark).java.util.HashMap)
        # Only commits and snapshot ids cross into Python; the rest is answered in the JVM.
        gated, self.java = gated_table(spark, real_table, self.ops)
        self.ops.gated = gated
        self.catalog = str(real_table.name()).split(".", 1)[0]
        self._claimed = False

    def claim(self) -> None:
        """Write our epoch into the table by a commit of its own, before a first effect that is
        not a commit (deleting files); a commit claims by itself (see the module docstring)."""
        if self._claimed:
            return
        self.fence.assert_held("claim")
        with self.commit_errors("claim table"):
            self.java.refresh()
            self._epoch_past_the_tables()
            if parse_epoch(self.java.properties().get(EPOCH_PROPERTY)) != self.fence.epoch:
                self.java.updateProperties().set(EPOCH_PROPERTY, str(self.fence.epoch)).commit()
        self._claimed_by_a_commit()

    def _epoch_past_the_tables(self) -> None:
        """Before the first commit stamps our epoch into a snapshot's summary: a table that
        carries a newer epoch while we still hold the lease (the state database was reset)
        moves our epoch past it; otherwise we are fenced. Read from the metadata as last
        loaded; the fence checks every commit attempt's base again."""
        if not self._claimed:
            self.fence.advance_past(parse_epoch(self.java.properties().get(EPOCH_PROPERTY)))

    def _claimed_by_a_commit(self) -> None:
        """A commit through the fence landed: the table carries our epoch."""
        if not self._claimed:
            self._claimed = True
            faults.point("claimed")

    def stamp(self, operation: JavaObject) -> JavaObject:
        """Put icemaint's keys into a snapshot-producing operation's summary."""
        for key, value in self.fence.summary().items():
            operation = operation.set(key, value)
        return operation

    def commit(self, operation: JavaObject, what: str, validate: Callable[[JavaObject], None] | None = None) -> int:
        """Stamp and commit an operation through the fence (claiming the table); returns the new snapshot id.

        `validate(base)` runs on every commit attempt, after the fence, with the metadata the
        attempt would replace; raising an IcemaintError there fails the commit (no retry).
        """
        self._epoch_past_the_tables()
        self.ops.validator = validate
        try:
            with self.commit_errors(what):
                self.stamp(operation).commit()
                self._claimed_by_a_commit()
                return int(self.java.currentSnapshot().snapshotId())
        finally:
            self.ops.validator = None

    def stage(self, operation: JavaObject, what: str, validate: Callable[[JavaObject], None] | None = None) -> Staged:
        """Stage an operation in memory (see the module docstring)."""
        return self._staging(lambda: self.stamp(operation).stageOnly().commit(), what, validate)

    def _staging(self, commit: Callable[[], None], what: str, validate: Callable[[JavaObject], None] | None) -> Staged:
        """Run `commit` with the fence keeping what it commits in memory; the one change it staged."""
        self._epoch_past_the_tables()
        self.ops.validator = validate
        self.ops.stage_only = True
        staged_before = len(self.ops.staged)
        try:
            with self.commit_errors(f"{what} (staged)"):
                commit()
        finally:
            self.ops.validator = None
            self.ops.stage_only = False
            if self.ops.gated is not None:
                self.ops.gated.show(None)
        if len(self.ops.staged) != staged_before + 1:
            raise IcemaintError(f"{what}: staging made {len(self.ops.staged) - staged_before} snapshots, not one")
        return self._staged_view(*self.ops.staged[-1])

    def _staged_view(self, base: JavaObject, metadata: JavaObject) -> Staged:
        """The `Staged` of metadata the fence kept: the snapshot `base` lacks, whose parent
        must be base's current one (what verification compares it with)."""
        snapshots = metadata.snapshots()
        new = [snapshots.get(i) for i in range(snapshots.size()) if base.snapshot(snapshots.get(i).snapshotId()) is None]
        current = base.currentSnapshot()
        if len(new) != 1 or current is None or new[0].parentId() is None or int(new[0].parentId()) != int(current.snapshotId()):
            raise IcemaintError("a staged change must add one snapshot on the table's current one")
        view = staged_view(self.spark, self.real, metadata)
        return Staged(int(new[0].snapshotId()), int(current.snapshotId()), new[0], base, metadata, view)

    def perform(self, action: Callable[[JavaObject], None], what: str, validate: Callable[[JavaObject], None] | None = None) -> int:
        """Run something that commits one snapshot by itself (a Spark action given this
        table), through the fence; returns the new current snapshot id."""
        self._perform(action, what, validate=validate)
        return int(self.java.currentSnapshot().snapshotId())

    def stage_performed(self, action: Callable[[JavaObject], None], what: str, validate: Callable[[JavaObject], None] | None = None) -> Staged:
        """`perform`, with the commit staged in memory by the fence (see the module docstring)."""
        return self._staging(lambda: action(self.java), what, validate)

    def _perform(self, action: Callable[[JavaObject], None], what: str, validate: Callable[[JavaObject], None] | None) -> None:
        self._epoch_past_the_tables()
        self.ops.validator = validate
        try:
            with self.commit_errors(what):
                action(self.java)
                self._claimed_by_a_commit()
                self.java.refresh()
        finally:
            self.ops.validator = None

    def publish_staged(self, staged: Staged, what: str, validate: Callable[[JavaObject], None] | None = None) -> bool:
        """Commit a staged snapshot as it was verified, main moving to it, if main is still
        at its parent: one compare-and-swap commit through the fence, built on the newest
        metadata (the catalog refuses it if main moves meanwhile). False when the table moved
        on: main is elsewhere, a commit landed first, or the newest metadata cannot take the
        snapshot as it is (its sequence number or first row id was taken by another commit)."""
        self._epoch_past_the_tables()
        self.java.refresh()
        newest = self.java.operations().current()
        current = newest.currentSnapshot()
        if current is None or int(current.snapshotId()) != staged.parent_id:
            return False
        self.ops.validator = validate
        try:
            with self.commit_errors(f"publish {what}"):
                try:
                    metadata = self.ops.build_from(newest).setBranchSnapshot(staged.snapshot, "main").build()
                except Exception as exc:
                    if is_java_exception(exc, "ValidationException"):
                        log.info("the newest metadata cannot take the staged snapshot as it is", reason=str(exc).splitlines()[0][:200])
                        return False
                    raise
                try:
                    self.java.operations().commit(newest, metadata)
                except Exception as exc:
                    if is_java_exception(exc, "CommitFailedException") or _sequence_refused(exc):
                        log.info("a commit landed before the staged change was published")
                        return False
                    raise
            self._claimed_by_a_commit()
        finally:
            self.ops.validator = None
        self.java.refresh()
        return True

    def commit_metadata(self, change: Callable[[JavaObject], JavaObject], what: str, attempts: int = 4) -> None:
        """Commit a metadata change that makes no snapshot (e.g. removing snapshots): `change(base)`
        builds the new `TableMetadata` from the current one; a lost compare-and-swap rebuilds it
        from the refreshed metadata. The fence sees every attempt."""
        self.claim()
        for attempt in range(1, attempts + 1):
            with self.commit_errors(what):
                base = self.ops.refresh()
                try:
                    self.ops.commit(base, change(base))
                    return
                except Exception as exc:
                    if attempt == attempts or not is_java_exception(exc, "CommitFailedException"):
                        raise
                    log.info("commit lost a race; retrying on fresh metadata", action=what, attempt=attempt)

    @contextmanager
    def commit_errors(self, action: str) -> Iterator[None]:
        """Java errors as one line; an error our callback raised (a fence refusal, a failed
        validation) surfaces as itself."""
        errors_before = len(self.ops.errors)
        try:
            with java_errors(action):
                yield
        except FencedError:
            raise
        except Exception as exc:
            raised_in_callback = self.ops.errors[errors_before:]
            if raised_in_callback and raised_in_callback[-1] is not exc:
                raise raised_in_callback[-1] from exc
            if self.fence.keeper.lost.is_set():
                raise FencedError(f"{action} refused: lease lost ({self.fence.keeper.lost_reason})") from exc
            java_cause = exc.__cause__ if exc.__cause__ is not None else exc
            broken = connection_failure(java_cause)
            if broken is not None:
                raise CatalogUnavailableError(f"{action}: the connection to catalog '{self.catalog}' (or its storage) failed: {broken}") from java_cause
            if is_java_exception(java_cause, "ValidationException"):
                # Iceberg's conflict checks (files gone, new deletes for replaced files): the
                # commit did not happen and a new plan on the newer state may well succeed.
                raise ConflictError(f"{exc}; nothing was committed, run it again") from java_cause
            raise

