"""MERGE planning from metadata: the delete files to eliminate and every data file they touch.

A delete file can be dropped only when every live data file it applies to is rewritten
with it applied. The one applicability rule (`maintenance.table.delete_rule`, a superset of
Iceberg's own) names those files; small data files of the partitions being rewritten are
packed along. The plan then holds the run's file groups, ranked by reader benefit and within
the budget (`file_groups.plan`). The rewrite itself reads through Iceberg's scan tasks, so
it applies exactly what Iceberg applies.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pyiceberg.table import Table

from maintenance.jobs.file_groups.deferral import HotPartitions, hot_partitions
from maintenance.jobs.file_groups.deletes import applied_deletes
from maintenance.jobs.file_groups.options import output_spec
from maintenance.jobs.file_groups.plan import RewritePlan
from maintenance.jobs.merge.options import MergeOptions
from maintenance.jobs.spec import PlanInput
from maintenance.table.delete_rule import DeleteIndex, require_equality_columns
from maintenance.table.files import Content, SnapshotFiles, TableFile
from maintenance.table.row_filter import check_where, partition_matcher, scope_words
from maintenance.table.targets import DATA_TARGET_DEFAULT, PAGE_ROW_LIMIT_DEFAULT, data_file_target, parquet_page_row_limit


@dataclass
class MergePlan(RewritePlan):
    """Every delete file to eliminate (`deletes`) and every data file they touch (`targets`)."""

    options: MergeOptions = field(default_factory=MergeOptions)  # how the run's file groups are sized, run and committed

    @property
    def empty(self) -> bool:
        return not self.deletes

    def nothing_to_do(self) -> str:
        return f"no delete files{scope_words(self.options.partitions, self.options.where, 'in')}: nothing to merge{self.deferred_words()}"

    def job_counters(self, detail: bool) -> dict[str, Any]:
        return {"delete_files_planned": len(self.deletes), "data_files_planned": len(self.targets)}


def check_table(table: Table, options: MergeOptions) -> None:
    """Before a command-line run takes its lease: `where` and the output spec fit the table, or exit 2."""
    check_where(options.where, table.schema())
    output_spec(table, options)


def plan(inputs: PlanInput, options: MergeOptions) -> MergePlan:
    table = inputs.table
    return plan_merge(inputs.files, output_spec(table, options).spec_id, options, small_file_bytes=inputs.config.health.small_file_bytes,
                      target_size=data_file_target(table.properties), page_row_limit=parquet_page_row_limit(table.properties),
                      check=lambda deletes: require_equality_columns(table.schema(), deletes, str(inputs.ref)),
                      hot=lambda: hot_partitions(table, options, now_ms=inputs.now_ms))


def plan_merge(files: SnapshotFiles, output_spec_id: int, options: MergeOptions | None = None, *, small_file_bytes: int = 0,
               target_size: int = DATA_TARGET_DEFAULT, page_row_limit: int = PAGE_ROW_LIMIT_DEFAULT,
               check: Callable[[list[TableFile]], None] | None = None, hot: Callable[[], HotPartitions | None] | None = None) -> MergePlan:
    """The deletes in scope, the data files they touch (and the small ones of those
    partitions), and the groups a run rewrites (`RewritePlan.hold_groups`); `check` refuses
    deletes the run could not apply before any grouping."""
    options = options or MergeOptions()
    wanted = set(options.partitions)
    matches = partition_matcher(options.where, files.schema, files.specs)

    def in_scope(delete: TableFile) -> bool:
        if not wanted and not options.where:
            return True
        if delete.content == Content.EQUALITY_DELETES and files.is_global(delete.spec_id):
            return False  # a global delete can only be eliminated with the whole table
        return (not wanted or (bool(delete.partition) and delete.partition_path in wanted)) and matches(delete)

    deletes = [d for d in files.deletes if in_scope(d)]
    if check is not None:
        check(deletes)
    applied = applied_deletes(files, DeleteIndex(files, deletes))
    targets = {data.path: data for data in files.data if applied[data.path]}
    touched = {t.partition_key for t in targets.values()}
    for data in files.data:
        if data.partition_key in touched and data.size < small_file_bytes:
            targets.setdefault(data.path, data)
    merge_plan = MergePlan(
        snapshot_id=files.snapshot_id,
        sequence_number=files.sequence_number,
        output_spec_id=output_spec_id,
        deletes=deletes,
        targets=sorted(targets.values(), key=lambda f: (f.spec_id, str(f.partition), f.path)),
        target_size=target_size,
        page_row_limit=page_row_limit,
        options=options,
    )
    merge_plan.hold_groups(files, applied, hot)
    return merge_plan
