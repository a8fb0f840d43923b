"""CONVERT planning, from metadata alone: which equality deletes, which data files to read.

The equality deletes in scope (the whole table, or the given partitions; a global delete
only with the whole table), oldest sequence numbers first and at most `max_delete_files`
of them, and every live data file one of them may apply to by the one applicability rule
(`maintenance.table.deletes`). The run checks that set against Iceberg's own planner
before it reads anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from maintenance.jobs.convert.options import ConvertOptions
from maintenance.jobs.spec import PlanInput
from maintenance.table.deletes import DeleteIndex
from maintenance.table.files import PartitionKey, SnapshotFiles, TableFile
from maintenance.table.targets import DELETE_TARGET_DEFAULT, delete_file_target


@dataclass
class ConvertPlan:
    snapshot_id: int
    deletes: list[TableFile]  # equality deletes to replace, oldest first
    targets: list[TableFile]  # data files some planned delete may apply to
    applies_to: dict[str, list[str]] = field(default_factory=dict)  # data path -> planned delete paths the rule applies
    global_deletes: frozenset[str] = frozenset()  # paths of planned deletes whose spec is unpartitioned
    target_size: int = DELETE_TARGET_DEFAULT  # bytes per position delete file (write.delete.target-file-size-bytes)

    @property
    def empty(self) -> bool:
        return not self.deletes

    def counters(self, detail: bool = False) -> dict[str, Any]:
        key_ids = {fid for d in self.deletes for fid in d.equality_ids}
        return {
            "equality_delete_files_planned": len(self.deletes),
            "data_files_scanned": len(self.targets),
            "data_bytes_scanned": sum(t.size for t in self.targets),
            "key_bytes_scanned": sum(t.stats.sizes.get(fid, 0) for t in self.targets for fid in key_ids),
            "delete_bytes_scanned": sum(d.size for d in self.deletes),
        }

    def sequence_number_for(self, partition: PartitionKey) -> int:
        """The number a position delete file of `partition` takes: the highest of the equality
        deletes whose positions can land in it (those applying to its data files)."""
        seqs = {d.path: d.seq for d in self.deletes}
        return max(seqs[e] for t in self.targets if t.partition_key == partition for e in self.applies_to[t.path])


def plan(inputs: PlanInput, options: ConvertOptions) -> ConvertPlan:
    found = plan_convert(inputs.files, partitions=options.partitions, max_delete_files=options.max_delete_files)
    found.target_size = delete_file_target(inputs.table.properties)
    return found


def plan_convert(files: SnapshotFiles, *, partitions: Sequence[str] = (), max_delete_files: int | None = None) -> ConvertPlan:
    """Plan CONVERT on a snapshot's files, for the whole table or the given partition paths."""
    wanted = set(partitions)
    chosen = []
    for delete in sorted(files.equality_deletes, key=lambda f: (f.seq, f.path)):
        if wanted and (files.is_global(delete.spec_id) or delete.partition_path not in wanted):
            continue  # a global delete can only be converted with the whole table
        chosen.append(delete)
    if max_delete_files is not None:
        chosen = chosen[:max_delete_files]
    index = DeleteIndex(files, chosen)
    applies_to: dict[str, list[str]] = {}
    targets = []
    for data in files.data:
        found = index.equality_deletes_for(data)
        if found:
            targets.append(data)
            applies_to[data.path] = [d.path for d in found]
    return ConvertPlan(
        snapshot_id=files.snapshot_id,
        deletes=chosen,
        targets=targets,
        applies_to=applies_to,
        global_deletes=frozenset(d.path for d in chosen if files.is_global(d.spec_id)),
    )
