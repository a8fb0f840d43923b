"""Commit validators: checks a change makes against what was committed since it was planned.

A validator runs on every commit attempt (staging, fast-forward excepted, and applying a
change again on a newer state), with the exact metadata the attempt replaces, and raises
`ConflictError` to stop the commit: nothing lands and a rerun plans afresh. They walk main
from that metadata back to the planning snapshot; a staged snapshot of this run is on no
branch, so it is never walked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from maintenance.errors import ConflictError
from maintenance.spark.jvm import JavaObject
from maintenance.table.paths import normalise

Validator = Callable[[JavaObject], None]


def snapshots_since(base: JavaObject, planning_snapshot_id: int) -> Iterator[JavaObject]:
    """The snapshots main gained after the planning snapshot, newest first; a conflict when
    the planning snapshot is no longer an ancestor (main was rolled back or replaced)."""
    snapshot = base.currentSnapshot()
    while snapshot is not None and snapshot.snapshotId() != planning_snapshot_id:
        yield snapshot
        parent = snapshot.parentId()
        snapshot = base.snapshot(parent) if parent is not None else None
    if snapshot is None:
        raise ConflictError(f"the planning snapshot {planning_snapshot_id} is no longer an ancestor of the table's current state")


def still_live(io: JavaObject, planning_snapshot_id: int, data_paths: set[str], delete_paths: set[str], job: str) -> Validator:
    """No given data file and no given delete file left the table since planning."""
    data_keys = {normalise(p) for p in data_paths}
    delete_keys = {normalise(p) for p in delete_paths}

    def validate(base: JavaObject) -> None:
        for snapshot in snapshots_since(base, planning_snapshot_id):
            for removed, keys, what in ((snapshot.removedDataFiles(io), data_keys, "data file"), (snapshot.removedDeleteFiles(io), delete_keys, "delete file")):
                iterator = removed.iterator()
                while iterator.hasNext():
                    location = str(iterator.next().location())
                    if normalise(location) in keys:
                        raise ConflictError(
                            f"{what} {location} was removed by a concurrent commit (snapshot {snapshot.snapshotId()}); nothing was committed, run {job} again"
                        )

    return validate


def no_new_partition_equality_deletes(io: JavaObject, planning_snapshot_id: int, job: str) -> Validator:
    """No equality delete of a partitioned spec was committed since planning.

    A change that moves rows into other partitions (MERGE writing files of an older spec
    into the current one) keeps their old data sequence number, so a partition-scoped
    equality delete committed meanwhile would reach rows it did not reach before (in the
    new partition) or stop reaching them (in the old). Global equality deletes (of an
    unpartitioned spec) reach rows wherever they are, and are allowed."""

    def validate(base: JavaObject) -> None:
        specs = base.specsById()
        for snapshot in snapshots_since(base, planning_snapshot_id):
            iterator = snapshot.addedDeleteFiles(io).iterator()
            while iterator.hasNext():
                delete = iterator.next()
                if str(delete.content().name()) == "EQUALITY_DELETES" and specs.get(delete.specId()).isPartitioned():
                    raise ConflictError(
                        f"a concurrent commit (snapshot {snapshot.snapshotId()}) added equality deletes to a partition while {job} "
                        f"was moving rows between partition specs; nothing was committed, run {job} again"
                    )

    return validate

