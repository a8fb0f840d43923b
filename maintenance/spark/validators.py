"""Commit validators: checks a change makes against what was committed since it was planned.

A validator runs on every commit attempt (staging, fast-forward excepted, and applying a
change again on a newer state), with the exact metadata the attempt replaces, and raises
`ConflictError` to stop the commit: nothing lands and a rerun plans afresh. They walk main
from that metadata back to the planning snapshot; a staged snapshot of this run is on no
branch, so it is never walked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from maintenance.errors import ConflictError
from maintenance.spark.jvm import JavaObject
from maintenance.table.files import TableFile, record_key
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


def still_live(io: JavaObject, planning_snapshot_id: int, data_paths: Iterable[str], deletes: Iterable[TableFile], job: str) -> Validator:
    """No given data file and no given delete file (a DV by its blob: many share one Puffin
    file) left the table since planning."""
    data_keys = {normalise(p) for p in data_paths}
    delete_keys = {_normalised_key(str(d.path), d.content_offset if d.is_dv else None) for d in deletes}

    def validate(base: JavaObject) -> None:
        for snapshot in snapshots_since(base, planning_snapshot_id):
            for removed, keys, what in ((snapshot.removedDataFiles(io), data_keys, "data file"), (snapshot.removedDeleteFiles(io), delete_keys, "delete file")):
                iterator = removed.iterator()
                while iterator.hasNext():
                    content_file = iterator.next()
                    location = str(content_file.location())
                    offset = content_file.contentOffset() if str(content_file.format().name()) == "PUFFIN" else None
                    if _normalised_key(location, None if offset is None else int(offset)) in keys:
                        raise ConflictError(
                            f"{what} {location} was removed by a concurrent commit (snapshot {snapshot.snapshotId()}); nothing was committed, run {job} again"
                        )

    return validate


def _normalised_key(path: str, content_offset: int | None) -> str:
    return record_key(normalise(path), content_offset)


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


def no_new_dvs_for(io: JavaObject, planning_snapshot_id: int, data_paths: Iterable[str], job: str) -> Validator:
    """No DV was committed since planning for a data file this change writes one for (two
    live DVs for one file would be an invalid table; RewriteFiles does not check it)."""
    keys = {normalise(p) for p in data_paths}

    def validate(base: JavaObject) -> None:
        for snapshot in snapshots_since(base, planning_snapshot_id):
            iterator = snapshot.addedDeleteFiles(io).iterator()
            while iterator.hasNext():
                delete = iterator.next()
                referenced: Any = delete.referencedDataFile()
                if str(delete.format().name()) == "PUFFIN" and referenced is not None and normalise(str(referenced)) in keys:
                    raise ConflictError(f"a concurrent commit (snapshot {snapshot.snapshotId()}) added a deletion vector for {referenced}; "
                                        f"nothing was committed, run {job} again")

    return validate


def all_of(*validators: Validator | None) -> Validator:
    """One validator running each given one in turn."""

    def validate(base: JavaObject) -> None:
        for validator in validators:
            if validator is not None:
                validator(base)

    return validate
