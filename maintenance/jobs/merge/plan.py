"""MERGE planning from metadata: the delete files to eliminate and every data file they touch.

A delete file can be dropped only when every live data file it may apply to is rewritten
with it applied. Equality deletes reach the files CONVERT's planner finds (partition or
global, lower sequence numbers, key bounds). A position delete reaches the one data file
its `file_path` bounds name, or else every data file of its partition (of every partition
when its spec is unpartitioned) with a sequence number not above its own. Small data files
of the partitions being rewritten are packed along.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from pyiceberg.conversions import from_bytes
from pyiceberg.manifest import DataFile, DataFileContent
from pyiceberg.table import Table
from pyiceberg.types import StringType

from maintenance.jobs.convert.plan import plan_convert
from maintenance.jobs.files import FileRef, PartitionKey, live_file_refs
from maintenance.position_deletes import DELETE_FILE_PATH_ID


@dataclass
class MergePlan:
    snapshot_id: int
    sequence_number: int  # of the planning snapshot: the new data files' data sequence number
    deletes: list[FileRef]  # every delete file to eliminate
    targets: dict[PartitionKey, list[FileRef]]  # data files to rewrite, per partition

    @property
    def empty(self) -> bool:
        return not self.deletes


def _referenced_file(data_file: DataFile) -> str | None:
    lower, upper = (data_file.lower_bounds or {}).get(DELETE_FILE_PATH_ID), (data_file.upper_bounds or {}).get(DELETE_FILE_PATH_ID)
    return from_bytes(StringType(), lower) if lower is not None and lower == upper else None


def plan_merge(table: Table, snapshot_id: int, *, partitions: Sequence[str] = (), small_file_bytes: int = 0) -> MergePlan:
    snapshot = table.snapshot_by_id(snapshot_id)
    assert snapshot is not None
    wanted = set(partitions)
    data: dict[str, FileRef] = {}
    by_partition: dict[PartitionKey, list[FileRef]] = defaultdict(list)
    positions: list[tuple[FileRef, str | None]] = []
    for ref, f in live_file_refs(table, snapshot):
        if f.content == DataFileContent.DATA:
            data[ref.path] = ref
            by_partition[ref.partition_key].append(ref)
        elif f.content == DataFileContent.POSITION_DELETES:
            is_global = not ref.partition
            if not (wanted and (is_global or ref.partition_path not in wanted)):
                positions.append((ref, _referenced_file(f)))

    equality = plan_convert(table, snapshot_id, partitions=partitions)
    targets: dict[str, FileRef] = {t.path: t for t in equality.targets}
    for delete, referenced in positions:
        if referenced is not None:
            if referenced in data and data[referenced].seq <= delete.seq:
                targets[referenced] = data[referenced]
            continue
        scope = [r for refs in by_partition.values() for r in refs] if not delete.partition else by_partition[delete.partition_key]
        targets.update({r.path: r for r in scope if r.seq <= delete.seq})

    grouped: dict[PartitionKey, list[FileRef]] = defaultdict(list)
    for ref in targets.values():
        grouped[ref.partition_key].append(ref)
    for key, refs in grouped.items():
        chosen = {r.path for r in refs}
        refs += [r for r in by_partition[key] if r.size < small_file_bytes and r.path not in chosen]
    deletes = [*equality.deletes, *(d for d, _ in positions)]
    return MergePlan(snapshot_id=snapshot_id, sequence_number=snapshot.sequence_number or 0, deletes=deletes, targets=dict(grouped))
