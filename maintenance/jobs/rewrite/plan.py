"""REWRITE planning from metadata: which position delete files to combine, where their
entries may point, and the sequence number each combined file takes.

A partition's position delete files are rewritten when there are more of them than their
entries need at the target size (so compact partitions are left alone). Their entries are
regrouped by the partition of the data file they point at, because that is the partition
a combined file must live in for every entry to keep applying: a file-scoped delete
(`referenced_data_file`) applies to its data file wherever that lies, but a combined file
holding several paths is partition-scoped (see `maintenance.table.delete_rule`).

Each combined file takes the highest data sequence number among the delete files whose
entries can land in it. An entry is kept only where it applied (its data file is live,
with a sequence number not above its delete file's, in scope), so raising the number
makes no entry apply where it did not: an entry names exactly one data file, and every
data file it names has a number at or below the old file's, hence the new one's.

On format 3 the aim is no v2 file at all: every v2 position delete file in scope is planned
(whatever its size), its entries become deletion vectors (`run.to_deletion_vectors`), DVs
whose data file is no longer live (`dangling_dvs`) are dropped, and the DVs of a data file
that has more than one (`duplicated_dvs`) are merged into one holding all their positions.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from maintenance.jobs.rewrite.options import RewriteOptions
from maintenance.jobs.spec import PlanInput
from maintenance.table.delete_rule import DeleteIndex
from maintenance.table.files import PartitionKey, SnapshotFiles, TableFile
from maintenance.table.targets import delete_file_target


@dataclass
class RewritePlan:
    snapshot_id: int
    target_size: int
    deletes: list[TableFile]  # position delete files to replace
    data: list[TableFile]  # live data files their entries may point at
    partitions: list[PartitionKey]  # output groups, numbered by position: the data files' partitions
    sequence_numbers: list[int]  # per output group: the number its files take
    skipped: list[PartitionKey] = field(default_factory=list)  # partitions with delete files REWRITE cannot read
    format_version: int = 2
    dangling_dvs: list[TableFile] = field(default_factory=list)  # format 3: DVs of data files no longer live
    duplicated_dvs: dict[str, list[TableFile]] = field(default_factory=dict)  # format 3: live data file -> its DVs, more than one

    @property
    def empty(self) -> bool:
        return not self.deletes and not self.dangling_dvs and not self.duplicated_dvs

    def nothing_to_do(self) -> str:
        skipped = f" ({len(self.skipped)} partitions skipped: a delete file REWRITE cannot read)" if self.skipped else ""
        return f"no position delete files to combine and no deletion vector of a removed data file or duplicated{skipped}"

    @property
    def to_deletion_vectors(self) -> bool:
        return self.format_version >= 3

    def counters(self, detail: bool = False) -> dict[str, Any]:
        counters = {"partitions_planned": len(self.partitions), "position_delete_files_planned": len(self.deletes)}
        if self.dangling_dvs:
            counters["dangling_deletion_vectors_planned"] = len(self.dangling_dvs)
        if self.duplicated_dvs:
            counters["duplicated_deletion_vectors_planned"] = sum(len(dvs) for dvs in self.duplicated_dvs.values())
        return {**counters, "partitions_skipped": len(self.skipped)} if self.skipped else counters


def plan(inputs: PlanInput, options: RewriteOptions) -> RewritePlan:
    return plan_rewrite(inputs.files, dict(inputs.table.properties), partitions=options.partitions)


def plan_rewrite(files: SnapshotFiles, properties: dict[str, str], *, partitions: Sequence[str] = (), target_size: int | None = None) -> RewritePlan:
    target = target_size or delete_file_target(properties)
    wanted = set(partitions)
    by_partition: dict[PartitionKey, list[TableFile]] = defaultdict(list)
    for delete in files.position_deletes:
        if wanted and delete.partition_path not in wanted:
            continue
        by_partition[delete.partition_key].append(delete)
    # REWRITE reads Parquet delete files only: a partition with another format (Spark's
    # write.delete.format.default=avro) is left as it is, the rest of the table is not.
    skipped = [key for key, group in by_partition.items() if any(d.file_format != "PARQUET" for d in group)]
    if files.format_version >= 3:  # every v2 file goes, however few
        chosen = [d for key, group in by_partition.items() if key not in skipped for d in group]
    else:
        chosen = [
            d for key, group in by_partition.items() if key not in skipped and len(group) > max(1, -(-sum(d.size for d in group) // target)) for d in group
        ]
    # Where the chosen files' entries may point, by the one rule: the live data files they
    # apply to (a data file with a deletion vector takes no v2 file any more), each entry
    # landing in its data file's partition.
    index = DeleteIndex(files, chosen)
    candidates: dict[str, TableFile] = {}
    contributors: dict[PartitionKey, list[int]] = defaultdict(list)  # output partition -> sequence numbers landing there
    for data in files.data:
        applying = index.position_deletes_for(data)
        if applying:
            candidates[data.path] = data
            contributors[data.partition_key].extend(d.seq for d in applying)
    live = {f.path for f in files.data}  # a dangling DV's file is not: its duplicates are dangling too
    keys = sorted(contributors, key=lambda k: (k[0], str(k[1])))
    return RewritePlan(
        snapshot_id=files.snapshot_id,
        target_size=target,
        deletes=sorted(chosen, key=lambda d: d.path),
        data=list(candidates.values()),
        partitions=keys,
        sequence_numbers=[max(contributors[k]) for k in keys],
        skipped=skipped,
        format_version=files.format_version,
        dangling_dvs=[dv for dv in files.dangling_deletion_vectors if not wanted or dv.partition_path in wanted],
        duplicated_dvs={path: dvs for path, dvs in files.duplicated_deletion_vectors.items()
                        if path in live and (not wanted or dvs[0].partition_path in wanted)},
    )
