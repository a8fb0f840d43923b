"""CONVERT planning, from metadata alone: which equality deletes, which data files to read.

The equality deletes in scope (the whole table, or the given partitions; a global delete
only with the whole table), oldest sequence numbers first and at most `max_delete_files`
of them, and every live data file one of them may apply to by the one applicability rule
(`maintenance.table.delete_rule`).

On format 2, CONVERT writes one position delete file per partition it touches; the v2
position delete files already in those partitions (streaming writers add one per commit)
are folded into it, so a partition ends with one file and no REWRITE has to follow. Their
entries that still apply are carried over (`spark.position_entries`), together with the
live data files those entries may point at. (On format 3 the positions become deletion
vectors, which take the v2 files' positions themselves: `jobs.deletion_vectors`.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from maintenance.jobs.convert.options import DEFAULT_LOCAL_MAX_BYTES, ConvertOptions
from maintenance.jobs.spec import PlanInput
from maintenance.table.delete_rule import DeleteIndex, require_equality_columns
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
    local_max_bytes: int = DEFAULT_LOCAL_MAX_BYTES  # at most this much to read: the driver finds the positions (`local_scan`)
    position_deletes: list[TableFile] = field(default_factory=list)  # format 2: v2 position delete files folded into the output
    position_data: list[TableFile] = field(default_factory=list)  # live data files their entries may point at

    @property
    def empty(self) -> bool:
        return not self.deletes

    def nothing_to_do(self) -> str:
        return "no equality delete files in scope: nothing to convert"

    def counters(self, detail: bool = False) -> dict[str, Any]:
        key_ids = {fid for d in self.deletes for fid in d.equality_ids}
        return {
            "equality_delete_files_planned": len(self.deletes),
            "data_files_scanned": len(self.targets),
            "data_bytes_scanned": sum(t.size for t in self.targets),
            "key_bytes_scanned": sum(t.stats.sizes.get(fid, 0) for t in self.targets for fid in key_ids),
            "delete_bytes_scanned": sum(d.size for d in (*self.deletes, *self.position_deletes)),
            "position_delete_files_planned": len(self.position_deletes),
        }

    def partition_ids(self) -> dict[PartitionKey, int]:
        """A number for every partition a position may land in (the targets', then the deletes'),
        which both scan engines tag positions with."""
        ids: dict[PartitionKey, int] = {}
        for ref in (*self.targets, *self.deletes):
            ids.setdefault(ref.partition_key, len(ids))
        return ids

    def key_groups(self) -> list[tuple[tuple[int, ...], list[TableFile], list[TableFile]]]:
        """(equality field ids, the deletes on exactly those fields, the targets one of them
        may apply to): each group is one join of the scan, on its own key columns."""
        groups = []
        for field_ids in sorted({d.equality_ids for d in self.deletes}):
            deletes = [d for d in self.deletes if d.equality_ids == field_ids]
            paths = {d.path for d in deletes}
            targets = [t for t in self.targets if paths.intersection(self.applies_to.get(t.path, ()))]
            if targets:
                groups.append((field_ids, deletes, targets))
        return groups

    def sequence_number_for(self, partition: PartitionKey) -> int:
        """The number a position delete file of `partition` takes: the highest of the deletes
        whose positions can land in it (the equality deletes applying to its data files, and
        the position delete files folded into it)."""
        return self._sequence_numbers[partition]

    @cached_property
    def _sequence_numbers(self) -> dict[PartitionKey, int]:
        seqs = {d.path: d.seq for d in self.deletes}
        highest: dict[PartitionKey, int] = {}
        landing = [(t.partition_key, seqs[e]) for t in self.targets for e in self.applies_to[t.path]]
        landing += [(self.output_partition_of(d), d.seq) for d in self.position_deletes]
        for partition, seq in landing:
            highest[partition] = max(seq, highest.get(partition, seq))
        return highest

    def output_partition_of(self, delete: TableFile) -> PartitionKey:
        """Where a folded position delete file's entries land: its referenced data file's
        partition if it names a live one, else its own."""
        referenced = self._position_data_by_path.get(delete.referenced_data_file or "")
        return referenced.partition_key if referenced is not None else delete.partition_key

    @cached_property
    def _position_data_by_path(self) -> dict[str, TableFile]:
        return {f.path: f for f in self.position_data}


def plan(inputs: PlanInput, options: ConvertOptions) -> ConvertPlan:
    found = plan_convert(inputs.files, partitions=options.partitions, max_delete_files=options.max_delete_files)
    require_equality_columns(inputs.table.schema(), found.deletes, str(inputs.ref))
    found.target_size = delete_file_target(inputs.table.properties)
    found.local_max_bytes = options.local_max_bytes
    return found


def _position_deletes_to_fold(files: SnapshotFiles, partitions: set[PartitionKey]) -> tuple[list[TableFile], list[TableFile]]:
    """The v2 position delete files whose entries land in `partitions` (the ones CONVERT
    writes into), and the live data files those entries may point at (by the rule)."""
    if files.format_version >= 3 or not partitions:
        return [], []
    live = {f.path: f for f in files.data}
    folded = []
    for delete in files.position_deletes:
        if delete.file_format != "PARQUET":
            continue  # read by Spark's Parquet reader only; left for what reads it
        referenced = live.get(delete.referenced_data_file) if delete.referenced_data_file is not None else None
        if (referenced.partition_key if referenced is not None else delete.partition_key) in partitions:
            folded.append(delete)
    index = DeleteIndex(files, folded)
    data = [f for f in files.data if f.partition_key in partitions and index.position_deletes_for(f)]
    return sorted(folded, key=lambda d: (d.seq, d.path)), data


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
    position_deletes, position_data = _position_deletes_to_fold(files, {t.partition_key for t in targets})
    return ConvertPlan(
        snapshot_id=files.snapshot_id,
        deletes=chosen,
        targets=targets,
        applies_to=applies_to,
        global_deletes=frozenset(d.path for d in chosen if files.is_global(d.spec_id)),
        position_deletes=position_deletes,
        position_data=position_data,
    )
