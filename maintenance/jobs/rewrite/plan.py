"""REWRITE planning from metadata: which partitions' position delete files to combine."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from pyiceberg.manifest import DataFileContent, FileFormat
from pyiceberg.table import Table

from maintenance.errors import UsageError
from maintenance.jobs.files import FileRef, PartitionKey, live_file_refs

TARGET_SIZE_PROPERTY = "write.delete.target-file-size-bytes"
DEFAULT_TARGET_SIZE = 64 * 1024 * 1024


@dataclass
class PartitionGroup:
    key: PartitionKey
    path: str
    deletes: list[FileRef] = field(default_factory=list)

    @property
    def seq(self) -> int:
        """The sequence number the combined files get: the highest of the files replaced."""
        return max(d.seq for d in self.deletes)


@dataclass
class RewritePlan:
    snapshot_id: int
    target_size: int
    groups: list[PartitionGroup]
    data: list[FileRef]  # live data files of the groups' partitions

    @property
    def empty(self) -> bool:
        return not self.groups


def plan_rewrite(table: Table, snapshot_id: int, *, partitions: Sequence[str] = (), target_size: int | None = None) -> RewritePlan:
    snapshot = table.snapshot_by_id(snapshot_id)
    if snapshot is None:
        raise UsageError(f"no snapshot {snapshot_id}")
    target = target_size or int(table.properties.get(TARGET_SIZE_PROPERTY, DEFAULT_TARGET_SIZE))
    wanted = set(partitions)
    groups: dict[PartitionKey, PartitionGroup] = {}
    data: dict[PartitionKey, list[FileRef]] = defaultdict(list)
    for ref, f in live_file_refs(table, snapshot):
        if wanted and ref.partition_path not in wanted:
            continue
        if f.content == DataFileContent.POSITION_DELETES:
            if f.file_format != FileFormat.PARQUET:
                raise UsageError(f"REWRITE reads Parquet delete files only; {ref.path} is {f.file_format.name}")
            groups.setdefault(ref.partition_key, PartitionGroup(ref.partition_key, ref.partition_path)).deletes.append(ref)
        elif f.content == DataFileContent.DATA:
            data[ref.partition_key].append(ref)
    # A partition is worth rewriting when it has more position delete files than its
    # entries need at the target size (so already-compact partitions are left alone).
    chosen = [g for g in groups.values() if len(g.deletes) > max(1, -(-sum(d.size for d in g.deletes) // target))]
    # Entries point at data files of their own partition, except those of an unpartitioned
    # spec, which may point anywhere (after partition spec evolution).
    if any(not g.key[1] for g in chosen):
        candidates = [ref for refs in data.values() for ref in refs]
    else:
        candidates = [ref for g in chosen for ref in data.get(g.key, [])]
    return RewritePlan(snapshot_id=snapshot_id, target_size=target, groups=sorted(chosen, key=lambda g: g.path), data=candidates)
