"""MERGE planning from metadata: the delete files to eliminate and every data file they touch.

A delete file can be dropped only when every live data file it applies to is rewritten
with it applied. The one applicability rule (`maintenance.table.deletes`, a superset of
Iceberg's own) names those files; small data files of the partitions being rewritten are
packed along. The rewrite itself reads through Iceberg's scan tasks, so it applies exactly
what Iceberg applies.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from maintenance.jobs.file_groups.rewrite import RewritePlan
from maintenance.jobs.merge.options import MergeOptions
from maintenance.jobs.spec import PlanInput
from maintenance.table.deletes import DeleteIndex, require_equality_columns
from maintenance.table.files import Content, SnapshotFiles, TableFile
from maintenance.table.targets import data_file_target, parquet_page_row_limit


@dataclass
class MergePlan(RewritePlan):
    """Every delete file to eliminate (`deletes`) and every data file they touch (`targets`)."""

    options: MergeOptions = field(default_factory=MergeOptions)  # how the run's file groups are sized, run and committed

    @property
    def empty(self) -> bool:
        return not self.deletes

    def counters(self, detail: bool = False) -> dict[str, Any]:
        return {"delete_files_planned": len(self.deletes), "data_files_planned": len(self.targets)}


def plan(inputs: PlanInput, options: MergeOptions) -> MergePlan:
    table = inputs.table
    merge_plan = plan_merge(inputs.files, table.spec().spec_id, partitions=options.partitions, small_file_bytes=inputs.config.health.small_file_bytes)
    require_equality_columns(table.schema(), merge_plan.deletes, str(inputs.ref))
    merge_plan.target_size = data_file_target(table.properties)
    merge_plan.page_row_limit = parquet_page_row_limit(table.properties)
    merge_plan.options = options
    return merge_plan


def plan_merge(files: SnapshotFiles, current_spec_id: int, *, partitions: Sequence[str] = (), small_file_bytes: int = 0) -> MergePlan:
    wanted = set(partitions)

    def in_scope(delete: TableFile) -> bool:
        if not wanted:
            return True
        if delete.content == Content.EQUALITY_DELETES and files.is_global(delete.spec_id):
            return False  # a global delete can only be eliminated with the whole table
        return bool(delete.partition) and delete.partition_path in wanted

    deletes = [d for d in files.deletes if in_scope(d)]
    index = DeleteIndex(files, deletes)
    targets = {data.path: data for data in files.data if index.deletes_for(data)}
    touched = {t.partition_key for t in targets.values()}
    for data in files.data:
        if data.partition_key in touched and data.size < small_file_bytes:
            targets.setdefault(data.path, data)
    return MergePlan(
        snapshot_id=files.snapshot_id,
        sequence_number=files.sequence_number,
        current_spec_id=current_spec_id,
        deletes=deletes,
        targets=sorted(targets.values(), key=lambda f: (f.spec_id, str(f.partition), f.path)),
    )
