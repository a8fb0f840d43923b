"""A rewrite's plan holds its work: the file groups MERGE and COMPACT rewrite, decided before anything runs.

The job planners (`merge.plan`, `compact.plan`) choose the target data files and the delete
files that may go; `RewritePlan.hold_groups` turns them into the run's work, from metadata:

1. **Groups** (`grouping.plan_groups`): bounded groups, each sized to write files near the
   target, its output estimated from the rows its partition's deletes leave.
2. **Ranking by reader benefit per byte rewritten**: a group's benefit is what its files
   cost readers today and will not after the rewrite (`table.reader_cost`): every delete
   file of the plan's index that applies to one of its data files (an open and its entries,
   once per data file: the new files carry the planning snapshot's data sequence number,
   so none of those deletes applies to them), plus an open for every file beyond the ones
   the group writes. Divided by the group's input bytes (what the rewrite reads and writes),
   this orders the groups; equal ones keep the grouping's order (largest first).
3. **Hot partitions** (`deferral`, when the options turn it on): the files of partitions
   writers are deleting from right now are left out before grouping, each such partition
   for at most `defer_hot_at_most`.
4. **The budget** (`max_bytes_per_run`) is spent in that order: each group is taken while
   it still fits (always at least one), so a daemon working through a huge table over
   several runs fixes first what readers suffer from most, not what is biggest.
5. **Reach**: for every delete of the plan, the live data files it applies to (the executor
   drops a delete once all of them are rewritten).

Both come from one pass of the plan's one `DeleteIndex` over the live data files
(`applied_deletes`), which the job planner made and used to choose its targets.

The executor runs exactly `groups`, in this order; a dry run lists them (`counters`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from maintenance.jobs.file_groups.deferral import HotPartitions, deferred_partition_names
from maintenance.jobs.file_groups.deletes import delete_reach
from maintenance.jobs.file_groups.grouping import FileGroup, live_fraction, plan_groups, within_budget
from maintenance.jobs.file_groups.options import GroupOptions
from maintenance.table.files import SnapshotFiles, TableFile
from maintenance.table.reader_cost import OPEN_COST_BYTES, deletes_read_cost
from maintenance.table.targets import DATA_TARGET_DEFAULT, PAGE_ROW_LIMIT_DEFAULT

GROUPS_LISTED_FILES = 1000  # a dry run names at most this many data files per group (the count is always there)


@dataclass
class RewritePlan(ABC):
    """What MERGE's and COMPACT's planners hand the engine (their plans extend it)."""

    snapshot_id: int  # the planning snapshot
    sequence_number: int  # its sequence number: the new files' data sequence number
    output_spec_id: int  # the spec every new file is written in
    targets: list[TableFile]  # data files to rewrite
    deletes: list[TableFile]  # delete files the rewrite may drop once it covers every data file they reach
    target_size: int = DATA_TARGET_DEFAULT  # bytes per written file
    page_row_limit: int = PAGE_ROW_LIMIT_DEFAULT  # the table's rows per Parquet page (`grouping.writer_measures`)
    options: GroupOptions = field(default_factory=GroupOptions)
    groups: list[FileGroup] = field(default_factory=list)  # the groups this run rewrites, in the order it runs them
    groups_deferred: int = 0  # groups past the budget, left for a later run
    hot_deferred: list[TableFile] = field(default_factory=list, repr=False)  # targets of hot partitions, left for a later run (`deferral`)
    reach: dict[str, set[str]] = field(default_factory=dict, repr=False)  # delete key -> live data files it applies to

    @property
    @abstractmethod
    def empty(self) -> bool:
        """Nothing to rewrite and no delete to drop."""

    @abstractmethod
    def job_counters(self, detail: bool) -> dict[str, Any]:
        """The job's own planning counters."""

    def counters(self, detail: bool = False) -> dict[str, Any]:
        """The job's counters and the groups'; with `detail` (a dry run) the groups themselves."""
        counters = {**self.job_counters(detail), "groups_planned": len(self.groups), "groups_deferred": self.groups_deferred,
                    "partitions_deferred_hot": self.partitions_deferred_hot}
        if self.hot_deferred:
            counters["hot_partitions_deferred"] = deferred_partition_names(self.hot_deferred)
        if detail:
            counters["groups"] = [self.describe(group) for group in self.groups]
        return counters

    @property
    def partitions_deferred_hot(self) -> int:
        return len({f.partition_key for f in self.hot_deferred})

    def deferred_words(self) -> str:
        """What a noop says of the hot partitions it left (empty when none)."""
        if not self.hot_deferred:
            return ""
        names = deferred_partition_names(self.hot_deferred)
        return f"; {self.partitions_deferred_hot} hot partition(s) deferred ({', '.join(names[:5])}{', ...' if len(names) > 5 else ''}): writers are deleting from them"

    def hold_groups(self, files: SnapshotFiles, applied: dict[str, list[TableFile]],
                    hot: Callable[[], HotPartitions | None] | None = None) -> None:
        """Plan the run's groups, hot partitions left out, ranked and within the budget, and each
        delete's reach, from `applied` (`applied_deletes` of the plan's index: the deletes it
        holds are the ones counted). `hot` reads the writers' activity (`deferral`), only when
        there are targets to defer."""
        self.reach = delete_reach(files, self.deletes, applied)
        deferral = hot() if hot is not None and self.targets else None
        if deferral is not None:
            self.targets, self.hot_deferred = deferral.split(self.targets)
            waiting = {f.path for f in self.hot_deferred}
            self.deletes = [d for d in self.deletes if not self.reach[d.key] & waiting]  # they reach a file left as it is
            self.reach = {d.key: self.reach[d.key] for d in self.deletes}
        if not self.targets:
            self.groups, self.groups_deferred = [], 0
            return
        groups = plan_groups(self.targets, self.output_spec_id, live_fraction(files, self.deletes, self.targets),
                             max_group_bytes=self.options.max_group_bytes, target_size=self.target_size, page_row_limit=self.page_row_limit,
                             max_concurrent_groups=self.options.max_concurrent_groups)
        for group in groups:
            group.reader_benefit = reader_benefit(group, applied, self.target_size)
        ranked = rank_groups(groups)
        self.groups = within_budget(ranked, self.options.max_bytes_per_run)
        self.groups_deferred = len(ranked) - len(self.groups)

    def describe(self, group: FileGroup) -> dict[str, Any]:
        """One group as a dry run lists it."""
        return {
            "partitions": sorted({f.partition_path for f in group.files}),
            "data_files": len(group.files),
            "input_bytes": group.input_bytes,
            "expected_output_files": group.output_files(self.target_size),
            "reader_benefit_mib": round(group.reader_benefit / 2**20, 1),
            "files": [f.path for f in group.files[:GROUPS_LISTED_FILES]],
        }


def reader_benefit(group: FileGroup, applied: dict[str, list[TableFile]], target_size: int) -> float:
    """Bytes per scan readers stop paying once the group is rewritten (module docstring)."""
    deletes = [d for f in group.files for d in applied.get(f.path, ())]
    fewer_files = max(0, len(group.files) - group.output_files(target_size))
    return deletes_read_cost(len(deletes), sum(d.records for d in deletes)) + fewer_files * OPEN_COST_BYTES


def rank_groups(groups: Sequence[FileGroup]) -> list[FileGroup]:
    """Most reader benefit per input byte first (stable: ties keep their order)."""
    return sorted(groups, key=lambda g: -g.reader_benefit / max(1, g.input_bytes))
