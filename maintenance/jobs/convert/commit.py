"""Committing CONVERT: each equality delete is replaced by the position deletes found for it.

One `RewriteFiles` per sequence number s (split further by partition when a commit must
stay small): it removes the equality deletes of s and adds the position deletes found for
them with data sequence number s (`addFile(deleteFile, s)`), so what they apply to is
unchanged. Rewriting only delete files runs no conflict check of its own, so concurrent
appends and equality deletes never make it fail; the validator below adds the one check
that matters: every data file the new position deletes may point at, and every equality
delete removed, is still live in the metadata the commit replaces.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from maintenance.errors import ConflictError
from maintenance.fencing import SUMMARY_RUN_ID
from maintenance.jobs.convert.plan import ConvertPlan, EqualityDelete
from maintenance.jobs.files import PartitionKey
from maintenance.jobs.convert.scan import ScanResult
from maintenance.paths import normalise
from maintenance.spark.content_files import ContentFiles
from maintenance.spark.fenced_table import FencedTable
from maintenance.spark.java_files import JavaFiles
from maintenance.spark.jvm import JavaObject, java_long

_GROUP = re.compile(r"/grp=(?P<seq>\d+)_(?P<part>\d+)/")


@dataclass
class CommitUnit:
    """Equality deletes committed together (one sequence number) and their outputs."""

    seq: int
    deletes: list[EqualityDelete] = field(default_factory=list)
    outputs: list[tuple[str, int]] = field(default_factory=list)  # (location, partition id)


@dataclass
class CommitStats:
    commits: int = 0
    snapshot_id: int | None = None
    equality_delete_files_removed: int = 0
    equality_delete_records_removed: int = 0
    position_delete_files_added: int = 0
    position_delete_records_added: int = 0
    bytes_written: int = 0


def commit_units(plan: ConvertPlan, scan: ScanResult, written: list[str], max_deletes_per_commit: int | None) -> list[CommitUnit]:
    """Group deletes by sequence number (and partition, to respect the per-commit bound)."""
    outputs: dict[tuple[int, int], list[str]] = defaultdict(list)
    for location in written:
        match = _GROUP.search(location)
        if match is None:
            raise ConflictError(f"unexpected file in CONVERT output: {location}")
        outputs[(int(match["seq"]), int(match["part"]))].append(location)
    part_ids = {key: i for i, key in enumerate(scan.partitions)}

    units: list[CommitUnit] = []
    by_seq: dict[int, list[EqualityDelete]] = defaultdict(list)
    for delete in plan.deletes:
        by_seq[delete.seq].append(delete)
    for seq in sorted(by_seq):
        deletes = by_seq[seq]
        if any(d.is_global for d in deletes) or not max_deletes_per_commit:
            pieces = [deletes]  # a global delete's positions span partitions: never split
        else:
            by_part: dict[PartitionKey, list[EqualityDelete]] = defaultdict(list)
            for d in deletes:
                by_part[d.partition_key].append(d)
            pieces = list(_pack(list(by_part.values()), max_deletes_per_commit))
        for piece in pieces:
            parts = {part_ids[d.partition_key] for d in piece}
            unit = CommitUnit(seq=seq, deletes=piece)
            for (out_seq, part), locations in outputs.items():
                if out_seq == seq and (part in parts or any(d.is_global for d in piece)):
                    unit.outputs += [(loc, part) for loc in locations]
            units.append(unit)
    return units


def _pack(groups: list[list[EqualityDelete]], limit: int) -> Iterator[list[EqualityDelete]]:
    piece: list[EqualityDelete] = []
    for group in groups:
        if piece and len(piece) + len(group) > limit:
            yield piece
            piece = []
        piece += group
    if piece:
        yield piece


def still_live(io: JavaObject, planning_snapshot_id: int, run_id: str, data_paths: set[str], delete_paths: set[str]) -> Callable[[JavaObject], None]:
    """A commit validator: no targeted data file and no removed delete file left the table since planning.

    This run's own earlier commits are skipped without reading them: they remove only other
    equality deletes of the plan, never a data file.
    """
    data_keys = {normalise(p) for p in data_paths}
    delete_keys = {normalise(p) for p in delete_paths}

    def validate(base: JavaObject) -> None:
        snapshot = base.currentSnapshot()
        while snapshot is not None and snapshot.snapshotId() != planning_snapshot_id:
            if snapshot.summary().get(SUMMARY_RUN_ID) == run_id:
                parent = snapshot.parentId()
                snapshot = base.snapshot(parent) if parent is not None else None
                continue
            for removed, keys, what in (
                (snapshot.removedDataFiles(io), data_keys, "data file"),
                (snapshot.removedDeleteFiles(io), delete_keys, "equality delete"),
            ):
                iterator = removed.iterator()
                while iterator.hasNext():
                    location = str(iterator.next().location())
                    if normalise(location) in keys:
                        raise ConflictError(
                            f"{what} {location} was removed by a concurrent commit (snapshot {snapshot.snapshotId()}); "
                            "nothing was committed, run CONVERT again"
                        )
            parent = snapshot.parentId()
            snapshot = base.snapshot(parent) if parent is not None else None
        if snapshot is None:
            raise ConflictError(f"the planning snapshot {planning_snapshot_id} is no longer an ancestor of the table's current state")

    return validate


def commit_all(table: FencedTable, plan: ConvertPlan, units: list[CommitUnit], scan: ScanResult, on_commit: Callable[[CommitStats], None] | None = None) -> CommitStats:
    """Commit unit by unit; progress made by earlier units stays if a later one fails."""
    spark = table.spark
    java_files = JavaFiles(spark, table.java, plan.snapshot_id)
    eq_files = java_files.delete_files({d.path for u in units for d in u.deletes})
    partition_of = _output_partitions(plan, scan, eq_files, java_files)
    builder = ContentFiles(spark, table.java)
    stats = CommitStats()
    for unit in units:
        rewrite = table.java.newRewrite().validateFromSnapshot(java_long(spark, plan.snapshot_id))
        for delete in unit.deletes:
            rewrite = rewrite.deleteFile(eq_files[delete.path])
        added = []
        for location, part in unit.outputs:
            spec_id, partition = partition_of[part]
            position_file = builder.position_delete_file(location, spec_id, partition)
            rewrite = rewrite.addFile(position_file, java_long(spark, unit.seq))
            added.append(position_file)
        targets = {t for d in unit.deletes for t in plan.candidates[d.path]}
        validate = still_live(table.java.io(), plan.snapshot_id, table.fence.run_id, targets, {d.path for d in unit.deletes})
        stats.snapshot_id = table.commit(rewrite, f"CONVERT sequence number {unit.seq}", validate=validate)
        stats.commits += 1
        stats.equality_delete_files_removed += len(unit.deletes)
        stats.equality_delete_records_removed += sum(d.records for d in unit.deletes)
        stats.position_delete_files_added += len(added)
        stats.position_delete_records_added += sum(int(f.recordCount()) for f in added)
        stats.bytes_written += sum(int(f.fileSizeInBytes()) for f in added)
        if on_commit is not None:
            on_commit(stats)
    return stats


def _output_partitions(plan: ConvertPlan, scan: ScanResult, eq_files: dict[str, JavaObject], java_files: JavaFiles) -> dict[int, tuple[int, Any]]:
    """Partition id -> (spec id, Java partition), taken from a file of that partition."""
    result: dict[int, tuple[int, Any]] = {}
    need_data: dict[int, str] = {}
    for part, (spec_id, values) in enumerate(scan.partitions):
        if not values:
            result[part] = (spec_id, None)
            continue
        same = next((d for d in plan.deletes if d.partition_key == (spec_id, values) and d.path in eq_files), None)
        if same is not None:
            result[part] = (spec_id, eq_files[same.path].partition())
        else:
            target = next(t for t in plan.targets if t.partition_key == (spec_id, values))
            need_data[part] = target.path
    if need_data:
        data_files = java_files.data_files(set(need_data.values()))
        for part, path in need_data.items():
            result[part] = (scan.partitions[part][0], data_files[path].partition())
    return result
